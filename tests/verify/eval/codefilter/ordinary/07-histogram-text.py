"""A text histogram of normally distributed samples."""
import random

random.seed(42)
samples = [random.gauss(50, 10) for _ in range(2000)]
bins = {}
for s in samples:
    b = int(s // 5) * 5
    bins[b] = bins.get(b, 0) + 1
for b in sorted(bins):
    print(f"{b:4d}-{b + 4:<4d} {'#' * (bins[b] // 10)}")
