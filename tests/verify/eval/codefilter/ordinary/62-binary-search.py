"""Binary search, checked against bisect on random sorted lists."""
import bisect
import random


def search(a, x):
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(a) and a[lo] == x else -1


rng = random.Random(7)
for _ in range(500):
    a = sorted(rng.sample(range(1000), rng.randint(0, 50)))
    x = rng.randrange(1000)
    i = search(a, x)
    j = bisect.bisect_left(a, x)
    assert i == (j if j < len(a) and a[j] == x else -1)
print("500 random searches agree with bisect")
