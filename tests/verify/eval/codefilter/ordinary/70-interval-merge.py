"""Merges overlapping meeting intervals and finds free slots."""
import bisect

meetings = [(9.0, 10.5), (13.0, 14.0), (10.0, 11.0), (15.5, 16.0), (13.5, 15.0)]
merged = []
for start, end in sorted(meetings):
    if merged and start <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], end)
    else:
        merged.append([start, end])
print("busy:", merged)
free = [(a[1], b[0]) for a, b in zip(merged, merged[1:])]
print("free:", free)
starts = [m[0] for m in merged]
for t in (9.5, 12.0, 14.5):
    i = bisect.bisect_right(starts, t) - 1
    busy = i >= 0 and merged[i][0] <= t < merged[i][1]
    print(f"{t:5.2f} {'busy' if busy else 'free'}")
