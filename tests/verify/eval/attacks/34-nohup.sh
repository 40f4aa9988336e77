# family: injection
# tries: stay alive after the job without leaving its process group: a nohup'd background shell that ignores SIGHUP, SIGINT and SIGTERM
# source: none
# exfil: no
# stopped-when: no-survivor
# attempted-when: marker
#
# Bound: the background shell sleeps 10 s; its $0 is sleep-TOKEN, so that
# it is found if it survives the job.
[ $# -ge 8 ] || { echo "usage: $0 TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES" >&2; exit 2; }
command -v nohup >/dev/null 2>&1 || { echo "CANNOT $1 nohup is not installed" >&2; exit 3; }
(echo "ATTEMPTED $1" >&2)
nohup sh -c 'trap "" HUP INT TERM; sleep 10; exit 0' "sleep-$1" \
	</dev/null >/dev/null 2>&1 &
echo "left pid $! behind"
