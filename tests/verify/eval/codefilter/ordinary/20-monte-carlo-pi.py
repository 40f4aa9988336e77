"""Estimates pi by Monte Carlo sampling with a fixed seed."""
import math
import random

rng = random.Random(2024)
inside = 0
n = 200_000
for _ in range(n):
    x, y = rng.random(), rng.random()
    inside += x * x + y * y <= 1.0
estimate = 4 * inside / n
print(f"pi ~ {estimate:.4f} (error {abs(estimate - math.pi):.4f})")
assert abs(estimate - math.pi) < 0.02
