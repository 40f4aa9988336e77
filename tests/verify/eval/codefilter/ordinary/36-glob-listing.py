"""Creates empty marker files and lists them with glob patterns."""
import glob
from pathlib import Path

for name in ["img_001.png", "img_002.png", "img_010.jpg", "doc.txt"]:
    Path(name).touch()
print("png:", sorted(glob.glob("img_*.png")))
print("img 00x:", sorted(glob.glob("img_00?.*")))
print("all:", sorted(p.name for p in Path(".").glob("*.*")
                     if not p.name.endswith(".py")))
