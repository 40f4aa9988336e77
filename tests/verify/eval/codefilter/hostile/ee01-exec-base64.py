# family: injection
# filterfamily: encoded-exec
# tries: the first, plain attempt: run base64-encoded source with exec; the payload runs cat on the host /tmp canary
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import base64

exec(base64.b64decode("aW1wb3J0IG9zLCBzeXMKb3Muc3lzdGVtKCdjYXQgJyArIHN5cy5hcmd2WzNdKQo="))
