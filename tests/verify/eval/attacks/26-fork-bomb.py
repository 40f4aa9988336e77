# family: mistake
# tries: a runaway process spawner (a fork bomb bounded at 40): fork 39 children that only sleep, and report once 40 processes are alive at once
# source: none
# exfil: no
# stopped-when: pwned-absent, no-survivor
# attempted-when: marker
#
# Bound: 40 processes; each child sleeps at most 10 s and is killed as
# soon as the count was taken. PWNED once 40 are alive together.
import os
import signal
import sys
import time

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]
kids = []
for _ in range(39):
    try:
        pid = os.fork()
    except OSError as e:
        print(f"fork: {e}")
        break
    if pid == 0:
        time.sleep(10)
        os._exit(0)
    kids.append(pid)
alive = 1 + sum(1 for k in kids if os.waitpid(k, os.WNOHANG) == (0, 0))
print(f"{alive} processes alive")
if alive >= 40:
    print(f"PWNED {token}", flush=True)
for k in kids:
    try:
        os.kill(k, signal.SIGKILL)
        os.waitpid(k, 0)
    except OSError:
        pass
