# family: injection
# tries: plant files in system directories (/usr/local/bin/stockade-TOKEN, a command on every PATH, and /etc/stockade-TOKEN) for the host to pick up later
# source: https://attack.mitre.org/techniques/T1574/007/
# exfil: no
# stopped-when: pwned-absent, files-intact
# attempted-when: marker
#
# Writes only files named with the token (and leaves them: they are the
# harm). PWNED once one of them is read back.
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
(echo "ATTEMPTED $1" >&2)
token=$1
for f in "/usr/local/bin/stockade-$token" "/etc/stockade-$token"; do
	if printf '#!/bin/sh\necho hello from %s\n' "$token" > "$f" 2>/dev/null &&
		grep -q "$token" "$f"; then
		chmod 755 "$f" 2>/dev/null
		echo "PWNED $token ($f)"
	else
		echo "could not write $f"
	fi
done
