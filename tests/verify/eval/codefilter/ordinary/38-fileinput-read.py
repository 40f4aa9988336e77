"""Reads several files as one stream with fileinput and numbers the lines."""
import fileinput
from pathlib import Path

Path("a.txt").write_text("alpha\nbeta\n")
Path("b.txt").write_text("gamma\n")
for line in fileinput.input(["a.txt", "b.txt"]):
    print(f"{fileinput.filename()}:{fileinput.filelineno()}: {line}", end="")
