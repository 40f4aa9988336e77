"""Makes a timestamped backup copy of a file before editing it."""
import shutil
from pathlib import Path

doc = Path("draft.txt")
doc.write_text("first version\n")
backup = Path("backups")
backup.mkdir(exist_ok=True)
shutil.copy2(doc, backup / "draft.txt.bak")
doc.write_text("second version\n")
print("current:", doc.read_text().strip())
print("backup: ", (backup / "draft.txt.bak").read_text().strip())
