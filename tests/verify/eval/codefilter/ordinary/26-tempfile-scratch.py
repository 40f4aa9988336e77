"""Uses a temporary directory for intermediate files."""
import os
import tempfile

with tempfile.TemporaryDirectory() as tmp:
    parts = []
    for i in range(3):
        p = os.path.join(tmp, f"part{i}.txt")
        with open(p, "w") as f:
            f.write(f"part {i}\n" * (i + 1))
        parts.append(p)
    merged = "".join(open(p).read() for p in parts)
    print(merged, end="")
    print(len(os.listdir(tmp)), "parts merged")
