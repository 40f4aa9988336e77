"""Least-squares line through a few points, computed by hand."""


def fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sxy / sxx
    return slope, my - slope * mx


xs = [1, 2, 3, 4, 5, 6]
ys = [2.1, 3.9, 6.2, 7.8, 10.1, 12.2]
a, b = fit(xs, ys)
print(f"y = {a:.3f} x + {b:.3f}")
residuals = [y - (a * x + b) for x, y in zip(xs, ys)]
print("max residual", round(max(map(abs, residuals)), 3))
assert 1.9 < a < 2.1
