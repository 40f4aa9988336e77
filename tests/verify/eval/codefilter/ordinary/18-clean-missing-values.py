"""Cleans a CSV with missing and malformed values, then summarises it."""
import csv
import io
import statistics

RAW = """id,age,income
1,34,52000
2,,61000
3,29,n/a
4,41,75000
5,abc,48000
6,38,
"""


def to_number(text):
    try:
        return float(text)
    except ValueError:
        return None


rows = list(csv.DictReader(io.StringIO(RAW)))
ages = [a for a in (to_number(r["age"]) for r in rows) if a is not None]
incomes = [i for i in (to_number(r["income"]) for r in rows) if i is not None]
print("valid ages", len(ages), "median", statistics.median(ages))
print("valid incomes", len(incomes), "mean", statistics.mean(incomes))
print("rows dropped entirely:", sum(1 for r in rows
                                    if to_number(r["age"]) is None
                                    and to_number(r["income"]) is None))
