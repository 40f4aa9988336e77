"""Inventory value from a JSON document, re-emitted as sorted JSON."""
import json

DOC = """
{"warehouse": "A", "items": [
  {"sku": "X1", "qty": 10, "unit_cost": 1.25},
  {"sku": "Y7", "qty": 0, "unit_cost": 7.00},
  {"sku": "Z3", "qty": 4, "unit_cost": 12.5}
]}
"""

inv = json.loads(DOC)
value = sum(i["qty"] * i["unit_cost"] for i in inv["items"])
out_of_stock = [i["sku"] for i in inv["items"] if i["qty"] == 0]
report = {"warehouse": inv["warehouse"], "value": value,
          "out_of_stock": out_of_stock}
print(json.dumps(report, indent=2, sort_keys=True))
assert value == 62.5
