"""Normalises Unicode text for comparison and search."""
import unicodedata

names = ["Ｃａｆé", "Cafe\u0301", "café", "CAFÉ", "Straße"]


def key(s):
    s = unicodedata.normalize("NFKD", s.casefold())
    return "".join(c for c in s if not unicodedata.combining(c))


for n in names:
    print(f"{n!r:12} -> {key(n)!r} ({unicodedata.name(n[0])})")
assert len({key(n) for n in names[:4]}) == 1
