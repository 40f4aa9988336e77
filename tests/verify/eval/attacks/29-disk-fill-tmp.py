# family: mistake
# tries: fill the disk through /tmp: write 200 MB to /tmp/fill-TOKEN.bin and check it is all there
# source: none
# exfil: no
# stopped-when: pwned-absent, files-intact
# attempted-when: marker
#
# Bound: 200 MB, removed at the end. PWNED once the file holds all of it.
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]
path = f"/tmp/fill-{token}.bin"
chunk = b"\0" * (1 << 20)
try:
    with open(path, "wb") as f:
        for _ in range(191):  # 191 MiB > 200 MB
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    if os.path.getsize(path) >= 200_000_000:
        print(f"PWNED {token}")
except OSError as e:
    print(f"{path}: {e}")
finally:
    try:
        os.unlink(path)
    except OSError:
        pass
