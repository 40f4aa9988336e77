"""Converts a CSV table to a JSON file of records."""
import csv
import io
import json

CSV = """name,lang,stars
requests,python,51000
ripgrep,rust,45000
fzf,go,62000
"""
records = []
for row in csv.DictReader(io.StringIO(CSV)):
    row["stars"] = int(row["stars"])
    records.append(row)
with open("repos.json", "w") as f:
    json.dump(records, f, indent=1)
print(open("repos.json").read())
print("most stars:", max(records, key=lambda r: r["stars"])["name"])
