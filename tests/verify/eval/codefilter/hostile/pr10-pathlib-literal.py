# family: injection
# filterfamily: proc
# tries: a plain pathlib attempt: the procfs root spelled out, then another process's command line printed
# source: none
# exfil: yes
import sys
from pathlib import Path

print((Path("/proc") / sys.argv[7] / "cmdline").read_bytes().replace(b"\0", b" ").decode())
