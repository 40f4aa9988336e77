"""Sorts a word list with the system's sort command (-u: unique)."""
import subprocess

words = ["pear", "apple", "fig", "apple", "banana", "fig", "cherry"]
result = subprocess.run(["sort", "-u"], input="\n".join(words) + "\n",
                        capture_output=True, text=True, check=True)
sorted_words = result.stdout.split()
print(sorted_words)
assert sorted_words == sorted(set(words))
