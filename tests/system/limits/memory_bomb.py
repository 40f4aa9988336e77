# memory_bomb.py: loads "everything into memory": allocates 10 MiB
# chunks and touches every byte of each (b"x" * n fills the buffer, unlike
# bytearray(n), which calloc leaves untouched), keeping them all, then
# sleeps holding them.
#
# Expected status: memory_limit under --memory (test_limits.py: 128 MiB),
# with a peak near the limit.
#
# Bound when run bare: stops allocating at 600 MiB, then sleeps until
# 10 s after it started and exits 0.
import time

CHUNK = 10 << 20
MAX_BYTES = 600 << 20
end = time.monotonic() + 10
kept = []
while len(kept) * CHUNK < MAX_BYTES and time.monotonic() < end:
    kept.append(b"x" * CHUNK)
print(f"memory_bomb.py: holding {len(kept) * CHUNK >> 20} MiB", flush=True)
while time.monotonic() < end:
    time.sleep(0.1)
