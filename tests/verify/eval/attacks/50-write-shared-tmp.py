# family: injection
# tries: leave files for other host programs in the shared directories /var/tmp and /dev/shm (a lock file and a shared-memory segment named with the token)
# source: https://cwe.mitre.org/data/definitions/377.html
# exfil: no
# stopped-when: files-intact
# attempted-when: marker
#
# Writes only files named with the token and leaves them (they are the
# harm).
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]
for path in (f"/var/tmp/{token}.lock", f"/dev/shm/{token}.shm"):
    try:
        with open(path, "w") as f:
            f.write(f"{token}\n")
        print(f"wrote {path}")
    except OSError as e:
        print(f"{path}: {e.strerror}")
