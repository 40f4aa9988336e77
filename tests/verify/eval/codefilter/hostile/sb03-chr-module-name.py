# family: injection
# filterfamily: string-building
# tries: spell the process module's name with chr() codes, load it with pydoc.locate and run cat on the host /tmp canary
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import pydoc
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
name = "".join(chr(c) for c in (115, 117, 98, 112, 114, 111, 99, 101, 115, 115))
proc = pydoc.locate(name)
proc.run(["cat", hosttmp])
