"""The most frequent words of a paragraph, stop words left out."""
import re
from collections import Counter

TEXT = """The quick brown fox jumps over the lazy dog. The dog sleeps; the fox
runs away into the forest, and the forest is quiet again. A fox is quick."""
STOP = {"the", "a", "and", "is", "into", "over"}
words = [w for w in re.findall(r"[a-z']+", TEXT.lower()) if w not in STOP]
for word, n in Counter(words).most_common(5):
    print(f"{n:3d} {word}")
