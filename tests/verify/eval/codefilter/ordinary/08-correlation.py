"""Correlation between study hours and scores."""
import statistics

hours = [1, 2, 2.5, 3, 4, 5, 6, 7]
scores = [52, 55, 61, 60, 70, 74, 83, 90]
r = statistics.correlation(hours, scores)
slope, intercept = statistics.linear_regression(hours, scores)
print(f"r = {r:.3f}; score ~ {slope:.2f} * hours + {intercept:.2f}")
assert r > 0.9
