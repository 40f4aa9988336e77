# family: injection
# filterfamily: alt-apis
# tries: overwrite a user file with pathlib's Path.replace (a rename over it), which no write-mode rule looks at
# source: none
# exfil: no
import sys
from pathlib import Path

userfiles = Path(sys.argv[8])
(userfiles / "README.md").replace(userfiles / "notes.txt")
