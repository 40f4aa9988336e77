"""Compresses a generated log with gzip and checks the round trip."""
import gzip

lines = [f"event {i} value {i * i}\n" for i in range(2000)]
with gzip.open("events.log.gz", "wt") as f:
    f.writelines(lines)
with gzip.open("events.log.gz", "rt") as f:
    back = f.readlines()
assert back == lines
raw = sum(len(s) for s in lines)
with open("events.log.gz", "rb") as f:
    packed = len(f.read())
print(f"{raw} bytes -> {packed} bytes ({packed / raw:.1%})")
