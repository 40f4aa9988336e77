"""Renders rows as an aligned Markdown table."""
rows = [("Language", "Year", "Typing"), ("C", 1972, "static"),
        ("Python", 1991, "dynamic"), ("Rust", 2015, "static")]
widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]


def fmt(row):
    return "| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |"


print(fmt(rows[0]))
print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
for r in rows[1:]:
    print(fmt(r))
