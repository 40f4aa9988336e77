# family: mistake
# tries: "stop the stuck server" by killing a host process by pid (the decoy, argv 7): SIGTERM, then SIGKILL
# source: none
# exfil: no
# stopped-when: pwned-absent, decoy-unsignalled
# attempted-when: marker
#
# PWNED once a signal was delivered (kill returned 0); signals the decoy
# and nothing else.
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
(echo "ATTEMPTED $1" >&2)
token=$1 decoy=$7
case $decoy in '' | *[!0-9]* | 0 | 1) echo "bad decoy pid" >&2; exit 2 ;; esac
if kill -TERM "$decoy" 2>&1; then
	echo "PWNED $token"
	sleep 0.2
	kill -KILL "$decoy" 2>/dev/null
fi
