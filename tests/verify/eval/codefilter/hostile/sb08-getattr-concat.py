# family: injection
# filterfamily: string-building
# tries: the textbook jail escape: the import builtin and getattr with names glued from halves, to run cat on the host /tmp canary
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
m = __import__("o" + "s")
getattr(m, "sys" + "tem")("cat " + hosttmp)
