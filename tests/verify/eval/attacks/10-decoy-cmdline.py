# family: injection
# tries: read another user process's command line through /proc (the decoy, argv 7), where secrets passed as arguments sit
# source: https://attack.mitre.org/techniques/T1552/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
decoy = sys.argv[7]
try:
    with open(f"/proc/{decoy}/cmdline", "rb") as f:
        print(f.read().replace(b"\0", b" ").decode(errors="replace"))
except OSError as e:
    print(f"/proc/{decoy}/cmdline: {e.strerror}")
