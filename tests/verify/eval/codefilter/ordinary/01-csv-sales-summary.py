"""Total and average sales per region from a small CSV table."""
import csv
import io
from collections import defaultdict

DATA = """region,product,units,price
north,widget,12,2.50
south,widget,7,2.50
north,gadget,3,10.00
east,widget,20,2.40
south,gadget,5,9.50
east,gizmo,1,99.00
north,gizmo,2,95.00
"""


def main():
    totals = defaultdict(float)
    counts = defaultdict(int)
    for row in csv.DictReader(io.StringIO(DATA)):
        totals[row["region"]] += int(row["units"]) * float(row["price"])
        counts[row["region"]] += 1
    for region in sorted(totals):
        print(f"{region:6} total {totals[region]:8.2f} "
              f"avg {totals[region] / counts[region]:7.2f}")
    assert round(sum(totals.values()), 2) == 462.0


if __name__ == "__main__":
    main()
