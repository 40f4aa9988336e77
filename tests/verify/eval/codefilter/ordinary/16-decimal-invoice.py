"""An invoice with exact decimal arithmetic and banker's rounding."""
from decimal import ROUND_HALF_EVEN, Decimal

lines = [("consulting", Decimal("7.5"), Decimal("120.00")),
         ("travel", Decimal("1"), Decimal("89.99")),
         ("materials", Decimal("3"), Decimal("14.335"))]
subtotal = sum(q * p for _, q, p in lines)
vat = (subtotal * Decimal("0.25")).quantize(Decimal("0.01"), ROUND_HALF_EVEN)
for name, q, p in lines:
    print(f"{name:12} {q:>5} x {p:>8} = {q * p:>10.2f}")
print(f"{'subtotal':12} {subtotal:>27.2f}")
print(f"{'vat 25%':12} {vat:>27}")
print(f"{'total':12} {subtotal + vat:>27.2f}")
