"""A pivot table of orders: rows are customers, columns are months."""
orders = [("acme", "jan", 120), ("acme", "feb", 80), ("bolt", "jan", 45),
          ("bolt", "mar", 60), ("core", "feb", 300), ("acme", "mar", 10)]
months = ["jan", "feb", "mar"]
pivot = {}
for customer, month, amount in orders:
    pivot.setdefault(customer, dict.fromkeys(months, 0))[month] += amount

print("customer " + " ".join(f"{m:>6}" for m in months) + "  total")
for customer in sorted(pivot):
    row = pivot[customer]
    print(f"{customer:8} " + " ".join(f"{row[m]:6d}" for m in months)
          + f" {sum(row.values()):6d}")
