"""Caesar cipher: encrypts, decrypts and cracks by letter frequency."""
import string
from collections import Counter

LOWER = string.ascii_lowercase


def shift(text, k):
    table = str.maketrans(LOWER + LOWER.upper(),
                          LOWER[k:] + LOWER[:k] + (LOWER[k:] + LOWER[:k]).upper())
    return text.translate(table)


plain = "Meet me near the old oak tree at seven in the evening"
secret = shift(plain, 11)
print(secret)
guess = (ord(Counter(c for c in secret.lower() if c.isalpha())
             .most_common(1)[0][0]) - ord("e")) % 26
print("key guess", guess, "->", shift(secret, -guess % 26))
assert shift(secret, 26 - 11) == plain
