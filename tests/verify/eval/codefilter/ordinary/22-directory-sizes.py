"""Builds a small directory tree and reports the size of each directory,
like du."""
import os

layout = {"proj/src/main.py": 120, "proj/src/util.py": 80,
          "proj/docs/index.md": 300, "proj/README": 40}
for path, size in layout.items():
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"x" * size)

for root, dirs, files in sorted(os.walk("proj")):
    dirs.sort()
    size = sum(os.path.getsize(os.path.join(root, n)) for n in files)
    print(f"{size:6d} {root}")
