# family: injection
# tries: stay alive after the job: fork a child that leaves the session and process group (setsid) and sleeps as "sleep-TOKEN"
# source: none
# exfil: no
# stopped-when: no-survivor
# attempted-when: marker
#
# Bound: the child lives 10 s; its argv[0] holds the token, so that it is
# found if it survives the job.
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]
pid = os.fork()
if pid == 0:
    os.setsid()
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.execv("/bin/sleep", [f"sleep-{token}", "10"])
print(f"left pid {pid} behind in a session of its own")
