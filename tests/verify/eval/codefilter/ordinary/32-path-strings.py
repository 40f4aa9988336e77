"""Splits and joins file paths with os.path."""
import os.path

paths = ["reports/2024/q1/summary.pdf", "notes.txt", "a/b/../c/./d.tar.gz"]
for p in paths:
    head, tail = os.path.split(p)
    root, ext = os.path.splitext(tail)
    print(f"{p!r}: dir={head!r} name={root!r} ext={ext!r} "
          f"norm={os.path.normpath(p)!r}")
print(os.path.join("out", "2024", "data.csv"))
print(os.path.commonprefix(["reports/2024/q1", "reports/2024/q2"]))
