# family: injection
# tries: read another user process's environment through /proc/PID/environ (the decoy, argv 7) and print it
# source: https://attack.mitre.org/techniques/T1552/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
(echo "ATTEMPTED $1" >&2)
tr '\0' '\n' < "/proc/$7/environ"
