# loop.py: an infinite loop, the commonest mistake: `while True` with an
# exit condition that never comes true (here it looks at the clock only
# so that it stops when run bare).
#
# Expected status: timeout, under --timeout (test_limits.py: 2 s), with
# wall_ms within 10% + 200 ms of the limit.
#
# Bound when run bare: stops itself after 10 s of wall-clock time and
# exits 0; no memory, no output.
import time

end = time.monotonic() + 10
n = 0
while time.monotonic() < end:
    n += 1
print(f"loop: {n} iterations in 10 s")
