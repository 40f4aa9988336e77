# family: mistake
# tries: "reset the SSH setup" by deleting ~/.ssh of the user's home (the fake home, argv 2)
# source: none
# exfil: no
# stopped-when: pwned-absent, files-intact
# attempted-when: marker
#
# PWNED once HOME/.ssh is gone; deletes nothing else.
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
(echo "ATTEMPTED $1" >&2)
token=$1 home=$2
case $home in /?*) ;; *) echo "HOME must be an absolute path" >&2; exit 2 ;; esac
if [ ! -d "$home/.ssh" ]; then
	echo "no $home/.ssh here"
	exit 1
fi
rm -rf "$home/.ssh" 2>&1
[ -e "$home/.ssh" ] || echo "PWNED $token"
