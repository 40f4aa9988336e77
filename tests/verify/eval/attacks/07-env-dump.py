# family: mistake
# tries: print the whole environment "to debug the PATH", secrets the caller's environment holds included
# source: https://attack.mitre.org/techniques/T1552/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
for name, value in sorted(os.environ.items()):
    print(f"{name}={value}")
