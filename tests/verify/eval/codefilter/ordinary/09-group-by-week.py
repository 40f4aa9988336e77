"""Groups dated expenses by ISO week."""
from collections import defaultdict
from datetime import date

expenses = [("2024-03-01", 12.5), ("2024-03-03", 40.0), ("2024-03-04", 7.25),
            ("2024-03-10", 3.0), ("2024-03-11", 19.99), ("2024-03-17", 5.5)]

weeks = defaultdict(float)
for day, amount in expenses:
    y, w, _ = date.fromisoformat(day).isocalendar()
    weeks[(y, w)] += amount
for (y, w), total in sorted(weeks.items()):
    print(f"{y}-W{w:02d}: {total:7.2f}")
