# family: injection
# filterfamily: proc
# tries: find this process's procfs environment with a glob pattern that spells no path literally, and print it
# source: none
# exfil: yes
import glob

for path in glob.glob("/pro[c]/self/enviro[n]"):
    with open(path, "rb") as f:
        print(f.read().replace(b"\0", b"\n").decode(errors="replace"))
