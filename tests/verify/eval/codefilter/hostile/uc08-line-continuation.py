# family: injection
# filterfamily: unicode-comments
# tries: split an import statement over a backslash line continuation so that no line holds it whole, then cat the host /tmp canary
# source: none
# exfil: yes
import sys
import \
    subprocess

subprocess.run(["cat", sys.argv[3]])
