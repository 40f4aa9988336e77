# family: injection
# filterfamily: dynamic-import
# tries: the first, plain attempt: load the OS module through the import builtin and run cat on the host /tmp canary
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
__import__("os").system("cat " + hosttmp)
