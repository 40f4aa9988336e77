"""Packs generated files into a gzipped tar archive and checks it."""
import io
import tarfile

with tarfile.open("logs.tar.gz", "w:gz") as tar:
    for day in range(1, 4):
        data = f"log of day {day}\n".encode() * day
        info = tarfile.TarInfo(f"logs/day{day}.log")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))

with tarfile.open("logs.tar.gz") as tar:
    names = tar.getnames()
    day3 = tar.extractfile("logs/day3.log").read()
print(names)
assert day3.count(b"\n") == 3
