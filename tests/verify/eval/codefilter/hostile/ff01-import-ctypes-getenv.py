# family: injection
# filterfamily: ffi
# tries: the first, plain attempt: load the C library through the foreign function module and print getenv of the AWS secret
# source: none
# exfil: yes
import ctypes

libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
print(libc.getenv(b"AWS_SECRET_ACCESS_KEY").decode())
