# family: injection
# filterfamily: proc
# tries: the first, plain attempt: read this process's environment file in procfs by its usual path and print it
# source: none
# exfil: yes
with open("/proc/self/environ", "rb") as f:
    print(f.read().replace(b"\0", b"\n").decode(errors="replace"))
