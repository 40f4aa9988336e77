# family: injection
# filterfamily: dynamic-import
# tries: resolve module:attribute with pkgutil.resolve_name to reach the environment mapping and print it
# source: none
# exfil: yes
import pkgutil
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
env = pkgutil.resolve_name("o" + "s:envi" + "ron")
print(dict(env))
