# family: injection
# filterfamily: alt-apis
# tries: overwrite a user file through Path.open with the mode held in a variable, out of the write-mode rule's sight
# source: none
# exfil: no
import sys
from pathlib import Path

mode = "w"
with Path(sys.argv[8], "notes.txt").open(mode) as f:
    f.write("overwritten\n")
