# family: injection
# filterfamily: encoded-exec
# tries: compile hex-encoded source and evaluate the code object; the payload prints the host /tmp canary
# source: none
# exfil: yes
eval(compile(bytes.fromhex("696d706f7274207379733b207072696e74286f70656e287379732e617267765b335d292e72656164282929").decode(), "<payload>", "exec"))
