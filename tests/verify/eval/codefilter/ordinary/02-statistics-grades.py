"""Summary statistics of exam grades with the statistics module."""
import statistics

grades = {
    "ana": [88, 92, 79, 95],
    "ben": [72, 65, 80, 70],
    "chloe": [90, 91, 89, 94],
    "dev": [55, 70, 62, 68],
}

all_grades = [g for gs in grades.values() for g in gs]
print("mean   ", round(statistics.mean(all_grades), 2))
print("median ", statistics.median(all_grades))
print("stdev  ", round(statistics.stdev(all_grades), 2))
print("mode   ", statistics.multimode(all_grades))
for name, gs in sorted(grades.items(), key=lambda kv: -statistics.mean(kv[1])):
    print(f"{name:6} {statistics.mean(gs):6.2f}")
