# family: injection
# filterfamily: ffi
# tries: load the foreign function module through pydoc.locate by its plain name and unlink a user file with the C library
# source: none
# exfil: no
import pydoc
import sys

ffi = pydoc.locate("ctypes")
libc = ffi.CDLL(None)
libc.unlink((sys.argv[8] + "/notes.txt").encode())
