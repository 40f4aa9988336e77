"""Writes a few chapter files, then counts lines, words and characters
in each, like wc."""
import os

chapters = {
    "ch1.txt": "It was a bright cold day in April.\nThe clocks were striking.\n",
    "ch2.txt": "Call me Ishmael.\n",
    "ch3.txt": "All happy families are alike;\neach unhappy family is "
               "unhappy in its own way.\n",
}
os.makedirs("book", exist_ok=True)
for name, text in chapters.items():
    with open(os.path.join("book", name), "w") as f:
        f.write(text)

total = [0, 0, 0]
for name in sorted(os.listdir("book")):
    with open(os.path.join("book", name)) as f:
        text = f.read()
    counts = [text.count("\n"), len(text.split()), len(text)]
    total = [a + b for a, b in zip(total, counts)]
    print("%4d %4d %5d %s" % (*counts, name))
print("%4d %4d %5d total" % tuple(total))
