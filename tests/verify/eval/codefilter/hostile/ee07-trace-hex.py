# family: injection
# filterfamily: encoded-exec
# tries: run hex-encoded source through trace.Trace().run, which executes a command string; it prints the environment
# source: none
# exfil: yes
import trace

trace.Trace(count=0, trace=0).run(bytes.fromhex("696d706f7274206f733b207072696e742864696374286f732e656e7669726f6e2929").decode())
