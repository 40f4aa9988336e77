"""Shows a unified diff of two versions of a text and a similarity ratio."""
import difflib

old = ["def add(a, b):", "    return a + b", "", "print(add(1, 2))"]
new = ["def add(a, b, c=0):", "    return a + b + c", "", "print(add(1, 2, 3))"]
for line in difflib.unified_diff(old, new, "v1.py", "v2.py", lineterm=""):
    print(line)
ratio = difflib.SequenceMatcher(None, "\n".join(old), "\n".join(new)).ratio()
print(f"similarity {ratio:.2f}")
print(difflib.get_close_matches("appel", ["apple", "ape", "peach"]))
