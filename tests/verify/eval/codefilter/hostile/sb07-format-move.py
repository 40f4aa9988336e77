# family: injection
# filterfamily: string-building
# tries: assemble the shell utilities module's name with str.format and move the user's file into the workspace
# source: none
# exfil: no
import pkgutil
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
util = pkgutil.resolve_name("{}{}{}".format("sh", "ut", "il"))
util.move(userfiles + "/notes.txt", "taken-notes.txt")
