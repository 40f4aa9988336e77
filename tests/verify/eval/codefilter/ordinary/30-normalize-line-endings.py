"""Converts a CRLF text file to LF and strips trailing whitespace."""
with open("windows.txt", "wb") as f:
    f.write(b"first line  \r\nsecond line\t\r\n\r\nlast line\r\n")

with open("windows.txt", "rb") as f:
    data = f.read()
lines = [ln.rstrip() for ln in data.decode().splitlines()]
with open("unix.txt", "w", newline="\n") as f:
    f.write("\n".join(lines) + "\n")

with open("unix.txt", "rb") as f:
    out = f.read()
assert b"\r" not in out
print(len(data), "->", len(out), "bytes")
