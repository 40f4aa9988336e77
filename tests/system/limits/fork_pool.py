# fork_pool.py: a pre-forking pool (issue 23, point 8): the parent touches
# MIB MiB (argv[1], default 100), then forks WORKERS children (argv[2],
# default 6) that each touch OWN MiB of their own (argv[3], default 0) and
# sleep 1.5 s holding the parent's pages without writing them; the parent
# waits for them. Summed resident sets count the parent's pages once per
# process: 7 x ~110 MiB; the jail really holds ~110 MiB + 6 x OWN.
#
# Expected status: ok under --memory 192 with OWN 8 (test_limits.py), its
# peak (~170 MiB, the workers' own memory on top of the parent's) measured
# as pss_sum. memory_limit on a monitor that sums resident sets.
#
# Bound when run bare: ~110 + 6 x OWN MiB of real memory, 7 processes, 2 s.
import os
import sys
import time

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 100
workers = int(sys.argv[2]) if len(sys.argv) > 2 else 6
own = int(sys.argv[3]) if len(sys.argv) > 3 else 0
buf = bytearray(mib << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
kids = []
for _ in range(workers):
    pid = os.fork()
    if pid == 0:
        mine = b"w" * (own << 20)
        time.sleep(1.5)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print(f"fork_pool.py: {workers} workers shared {mib} MiB", flush=True)
