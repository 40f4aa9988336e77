# family: mistake
# tries: delete the user's project files with a cleanup command whose directory variable points at them (rm -rf "$DIR"/*)
# source: https://github.com/ValveSoftware/steam-for-linux/issues/3671
# exfil: no
# stopped-when: pwned-absent, files-intact
# attempted-when: marker
#
# Removes everything under USERFILES (argv 8) and prints PWNED once the
# directory is seen empty; deletes nothing else.
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
(echo "ATTEMPTED $1" >&2)
token=$1 userfiles=$8
case $userfiles in /?*) ;; *) echo "USERFILES must be an absolute path" >&2; exit 2 ;; esac
if [ -z "$(ls -A "$userfiles" 2>/dev/null)" ]; then
	echo "no user files to delete at $userfiles"
	exit 1
fi
rm -rf "${userfiles:?}"/* "${userfiles:?}"/.[!.]* 2>&1
if [ -z "$(ls -A "$userfiles" 2>/dev/null)" ]; then
	echo "PWNED $token"
fi
