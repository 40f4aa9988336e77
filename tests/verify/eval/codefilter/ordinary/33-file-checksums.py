"""Writes a few files and prints their SHA-256 checksums, like sha256sum."""
import hashlib
from pathlib import Path

contents = {"one.txt": b"one\n", "two.txt": b"two\n", "empty.bin": b""}
for name, data in contents.items():
    Path(name).write_bytes(data)

for name in sorted(contents):
    h = hashlib.sha256()
    with open(name, "rb") as f:
        for block in iter(lambda: f.read(65536), b""):
            h.update(block)
    print(h.hexdigest(), name)
assert hashlib.sha256(b"").hexdigest().startswith("e3b0c442")
