# printer.py: prints numbered lines to stdout as fast as it can, forever
# (a debug print left in a hot loop). The first line is "line 0", so a
# result can be checked for its head; later lines show the tail.
#
# Expected status: output_limit under --output (test_limits.py: 64 KiB)
# with [limits] on_output_limit = kill, stdout_truncated true, head and
# tail kept around the marker (by default it would be drained until its
# wall-clock limit: timeout).
#
# Bound when run bare: stops after 10 s of wall-clock time and exits 0
# (up to about 1 GB, to wherever stdout goes: run it bare only
# into /dev/null or a pipe that is read).
import sys
import time

end = time.monotonic() + 10
n = 0
out = sys.stdout
while time.monotonic() < end:
    out.write("".join(f"line {i}\n" for i in range(n, n + 1000)))
    n += 1000
