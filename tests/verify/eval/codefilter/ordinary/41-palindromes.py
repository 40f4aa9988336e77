"""Finds palindromic sentences, ignoring case and punctuation."""
import string

sentences = ["A man, a plan, a canal: Panama", "Hello, world",
             "Was it a car or a cat I saw?", "No lemon, no melon", "Python"]
keep = set(string.ascii_lowercase + string.digits)


def is_palindrome(s):
    t = [c for c in s.lower() if c in keep]
    return t == t[::-1]


for s in sentences:
    print(f"{is_palindrome(s)!s:5} {s}")
assert sum(map(is_palindrome, sentences)) == 3
