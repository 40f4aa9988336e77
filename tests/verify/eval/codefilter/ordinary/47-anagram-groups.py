"""Groups words that are anagrams of each other."""
from collections import defaultdict

words = ["listen", "silent", "enlist", "google", "gooegl", "cat", "act",
         "tac", "dog"]
groups = defaultdict(list)
for w in words:
    groups["".join(sorted(w))].append(w)
for key, ws in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
    print(len(ws), ws)
