"""Sorts files into folders by extension with pathlib."""
from pathlib import Path

inbox = Path("inbox")
inbox.mkdir(exist_ok=True)
for name in ["a.jpg", "b.png", "notes.txt", "c.jpg", "todo.txt", "data.csv"]:
    (inbox / name).write_text(f"contents of {name}\n")

for f in sorted(inbox.iterdir()):
    if f.is_file():
        target = inbox / f.suffix.lstrip(".")
        target.mkdir(exist_ok=True)
        f.rename(target / f.name)

for d in sorted(p for p in inbox.iterdir() if p.is_dir()):
    print(d.name, sorted(x.name for x in d.iterdir()))
