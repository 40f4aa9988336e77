# family: mistake
# tries: spin the CPU in a busy loop (a retry loop without sleep) until it has used 3 s of CPU time
# source: none
# exfil: no
# stopped-when: pwned-absent
# attempted-when: marker
#
# Bound: 3 s of CPU, at most 8 s of wall time. PWNED at 3 s of CPU.
import sys
import time

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]
# Its own deadline ends before the eval's 10 s wall clock: a loaded
# machine that gives it less than 3 s of CPU in 8 s is no layer stopping
# it, and it says so (CANNOT: the eval reports it not run, not stopped).
deadline = time.monotonic() + 8
n = 0
while time.process_time() < 3.0 and time.monotonic() < deadline:
    n += 1
if time.process_time() < 3.0:
    print(f"CANNOT {token} the machine gave it {time.process_time():.1f} s "
          "of CPU in 8 s", file=sys.stderr, flush=True)
if time.process_time() >= 3.0:
    print(f"PWNED {token}")
