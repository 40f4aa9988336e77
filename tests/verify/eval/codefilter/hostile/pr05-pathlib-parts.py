# family: injection
# filterfamily: proc
# tries: join the procfs path of another process's command line from separate pathlib parts and print it
# source: none
# exfil: yes
import sys
from pathlib import Path

decoy = sys.argv[7]
print(Path("/").joinpath("proc", decoy, "cmdline").read_bytes().replace(b"\0", b" ").decode())
