# family: injection
# filterfamily: unicode-comments
# tries: split a procfs path into two adjacent literals with a comment between them (the compiler joins them) and print the environment
# source: none
# exfil: yes
path = ("/pr"  # the directory
        "oc/self/environ")
with open(path, "rb") as f:
    print(f.read().replace(b"\0", b"\n").decode(errors="replace"))
