"""Converts between integers and Roman numerals."""
VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),
          (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
          (4, "IV"), (1, "I")]


def to_roman(n):
    out = []
    for v, s in VALUES:
        q, n = divmod(n, v)
        out.append(s * q)
    return "".join(out)


def from_roman(s):
    total, i = 0, 0
    for v, sym in VALUES:
        while s.startswith(sym, i):
            total += v
            i += len(sym)
    return total


for n in (1, 4, 9, 14, 40, 90, 400, 1994, 2024, 3999):
    r = to_roman(n)
    assert from_roman(r) == n
    print(n, r)
