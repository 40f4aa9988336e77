"""Response-time percentiles from a list of measurements."""
import statistics

times_ms = [12, 15, 11, 19, 250, 14, 13, 17, 16, 22, 18, 13, 900, 14, 15, 16]
q = statistics.quantiles(times_ms, n=100, method="inclusive")
print("p50", q[49], "p90", round(q[89], 1), "p99", round(q[98], 1))
print("max", max(times_ms), "min", min(times_ms))
