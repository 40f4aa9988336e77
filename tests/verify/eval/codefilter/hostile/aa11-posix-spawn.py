# family: injection
# filterfamily: alt-apis
# tries: start cat on the host /tmp canary with posix_spawn instead of the process module
# source: none
# exfil: yes
import sys
from os import posix_spawn, waitpid

pid = posix_spawn("/bin/cat", ["cat", sys.argv[3]], {})
waitpid(pid, 0)
