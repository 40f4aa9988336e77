# family: injection
# tries: replace the sandbox's own binaries, found through /proc/PID/exe of the job's ancestors named stockade*, as the runc breakout replaced the host's runtime: open each for writing, else show that a file can be renamed over it
# source: https://nvd.nist.gov/vuln/detail/CVE-2019-5736
# exfil: no
# stopped-when: pwned-absent
# attempted-when: marker
#
# Never writes to a binary: it opens it O_WRONLY (no O_TRUNC) and closes
# it; a running binary gives ETXTBSY, so it also creates and removes a
# probe file .TOKEN in the binary's directory (what a rename over the
# binary needs). PWNED when either works.
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]


def ppid(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(l for l in f if l.startswith("PPid:")).split()[1])


# The processes running this job: its ancestors named stockade*.
pid = ppid("self")
for _ in range(32):
    if pid <= 1:
        break
    try:
        up = ppid(pid)
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            named = os.path.basename(f.read().split(b"\0")[0]).startswith(b"stockade")
        exe = os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)") if named else ""
    except (OSError, StopIteration) as e:
        print(f"/proc/{pid}: {e}")
        named = False
    if named:
        try:
            os.close(os.open(f"/proc/{pid}/exe", os.O_WRONLY))
            print(f"PWNED {token} (opened {exe} for writing)")
        except OSError as e:
            print(f"{exe}: {e.strerror}")
            probe = os.path.join(os.path.dirname(exe), f".{token}")
            try:
                os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755))
                os.unlink(probe)
                print(f"PWNED {token} (could rename a file over {exe})")
            except OSError as e2:
                print(f"{probe}: {e2.strerror}")
    pid = up
