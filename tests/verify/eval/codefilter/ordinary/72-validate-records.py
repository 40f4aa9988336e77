"""Validates JSON records against a small hand-written schema."""
import json

SCHEMA = {"name": str, "age": int, "email": str, "tags": list}
DOC = """[{"name": "ana", "age": 31, "email": "ana@example.org", "tags": []},
 {"name": "ben", "age": "old", "email": "ben@example.org", "tags": ["x"]},
 {"name": "cy", "email": "cy@example.org", "tags": "y"}]"""


def problems(record):
    out = []
    for key, typ in SCHEMA.items():
        if key not in record:
            out.append(f"missing {key}")
        elif not isinstance(record[key], typ):
            out.append(f"{key} should be {typ.__name__}")
    return out


for i, rec in enumerate(json.loads(DOC)):
    p = problems(rec)
    print(i, rec.get("name"), "ok" if not p else "; ".join(p))
