# family: injection
# filterfamily: dynamic-import
# tries: make unittest.mock.patch import the OS module for its target and use it to delete a user file
# source: none
# exfil: no
import sys
from unittest import mock

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
m = mock.patch("o" + "s.anything").getter()
m.remove(userfiles + "/README.md")
