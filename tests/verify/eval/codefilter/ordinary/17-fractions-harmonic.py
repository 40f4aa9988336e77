"""Exact harmonic numbers with fractions."""
from fractions import Fraction

h = Fraction(0)
for n in range(1, 21):
    h += Fraction(1, n)
    if n in (1, 2, 5, 10, 20):
        print(f"H({n}) = {h} ~ {float(h):.6f}")
assert h.denominator == 15519504
