#!/bin/bash
# fuzz/campaign.sh BUILD SECONDS NAME...: runs each fuzzer NAME of the
# -Dfuzzing=true build directory BUILD for SECONDS, one after another
# (fuzz/README.md), from its committed corpus fuzz/corpus/NAME/ and
# dictionary, with new inputs in $WORK/NAME (default /tmp/fuzz-work),
# the log in $LOGDIR/fuzz-NAME.log (default $WORK) and a crash in
# $WORK/NAME-crash-* (an input running over 30 s is one too); then
# merges the committed corpus and the new inputs into $WORK/NAME-min
# (-merge=1: the smallest set with the same coverage), which may replace
# fuzz/corpus/NAME. The workspaces of rpc and mcp go to /dev/shm (tmpfs).
set -euo pipefail
build=$1 seconds=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/fuzz-work}
logs=${LOGDIR:-$work}
mkdir -p "$work" "$logs"
for name in "$@"; do
	exe=$build/fuzz/fuzz-$name
	dict=()
	[ -f "$src/$name.dict" ] && dict=(-dict="$src/$name.dict")
	mkdir -p "$work/$name"
	rc=0
	TMPDIR=/dev/shm "$exe" -max_total_time="$seconds" -timeout=30 -close_fd_mask=2 \
		-print_final_stats=1 "${dict[@]}" \
		-artifact_prefix="$work/$name-crash-" \
		"$work/$name" "$src/corpus/$name" >"$logs/fuzz-$name.log" 2>&1 ||
		rc=$?
	echo "$name: exit $rc, $(grep -a 'DONE\|cov:' "$logs/fuzz-$name.log" | tail -1)"
	rm -rf "$work/$name-min"
	mkdir -p "$work/$name-min"
	TMPDIR=/dev/shm "$exe" -merge=1 -close_fd_mask=2 "$work/$name-min" \
		"$src/corpus/$name" "$work/$name" >"$work/merge-$name.log" 2>&1 ||
		echo "$name: merge failed, see $work/merge-$name.log"
	echo "$name: merged corpus $(ls "$work/$name-min" | wc -l) files"
done
