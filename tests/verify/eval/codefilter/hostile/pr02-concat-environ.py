# family: injection
# filterfamily: proc
# tries: read this process's environment file in procfs by a path glued from two halves and print it
# source: none
# exfil: yes
with open("/pr" + "oc/self/environ", "rb") as f:
    print(f.read().replace(b"\0", b"\n").decode(errors="replace"))
