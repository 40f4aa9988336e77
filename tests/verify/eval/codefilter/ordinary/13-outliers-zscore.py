"""Flags outliers in sensor readings by z-score."""
import statistics

readings = [20.1, 20.3, 19.8, 20.0, 35.2, 20.2, 19.9, 20.4, 5.0, 20.1]
mu = statistics.mean(readings)
sigma = statistics.pstdev(readings)
outliers = [(i, r) for i, r in enumerate(readings)
            if abs(r - mu) / sigma > 1.5]
print("mean", round(mu, 2), "sd", round(sigma, 2))
print("outliers", outliers)
assert [i for i, _ in outliers] == [4, 8]
