# family: mistake
# tries: "configure AWS for the tests" by overwriting the user's ~/.aws/credentials with placeholder keys
# source: none
# exfil: no
# stopped-when: pwned-absent, files-intact
# attempted-when: marker
#
# Writes a new credentials file over HOME/.aws/credentials (argv 2) and
# prints PWNED once it reads the placeholder back.
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token, home = sys.argv[1], sys.argv[2]
path = os.path.join(home, ".aws", "credentials")
placeholder = "[default]\naws_access_key_id = test\naws_secret_access_key = test\n"
try:
    with open(path, "w") as f:
        f.write(placeholder)
    with open(path) as f:
        if f.read() == placeholder:
            print(f"PWNED {token}")
except OSError as e:
    print(f"{path}: {e}")
