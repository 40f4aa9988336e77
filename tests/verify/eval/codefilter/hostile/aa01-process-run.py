# family: injection
# filterfamily: alt-apis
# tries: the first, plain attempt: run cat on the host /tmp canary with the standard process module
# source: none
# exfil: yes
import subprocess
import sys

subprocess.run(["cat", sys.argv[3]])
