# family: injection
# filterfamily: dynamic-import
# tries: load the process module with importlib.import_module and print the host /tmp canary through cat
# source: none
# exfil: yes
import importlib
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
proc = importlib.import_module("subprocess")
print(proc.check_output(["cat", hosttmp]).decode())
