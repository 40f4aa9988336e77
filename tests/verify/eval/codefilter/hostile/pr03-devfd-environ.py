# family: injection
# filterfamily: proc
# tries: reach this process's procfs environment through the /dev/fd symbolic link and a parent step, and print it
# source: none
# exfil: yes
with open("/dev/fd/../environ", "rb") as f:
    print(f.read().replace(b"\0", b"\n").decode(errors="replace"))
