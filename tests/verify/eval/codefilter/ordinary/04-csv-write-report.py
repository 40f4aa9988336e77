"""Writes a per-employee hours report to report.csv and reads it back."""
import csv

hours = [("ana", "mon", 8), ("ana", "tue", 7), ("ben", "mon", 6),
         ("ben", "wed", 9), ("ana", "wed", 8)]

totals = {}
for name, _day, h in hours:
    totals[name] = totals.get(name, 0) + h

with open("report.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["name", "hours"])
    for name in sorted(totals):
        w.writerow([name, totals[name]])

with open("report.csv", newline="") as f:
    rows = list(csv.reader(f))
print(rows)
assert rows[1] == ["ana", "23"]
