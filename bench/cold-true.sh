#!/usr/bin/env bash
# cold-true.sh: wall time of `stockade run -- /bin/true` against bubblewrap
# with comparable isolation, side by side in one hyperfine run; prints the
# medians and their ratio. Run by hand (not a test):
#     bench/cold-true.sh [BUILD_DIR] [RUNS]
# Needs hyperfine and bubblewrap (Debian packages of the same names).
set -euo pipefail
build=${1:-"$(dirname "$0")/../build"}
runs=${2:-200}
stockade=$(cd "$build" && pwd)/stockade
for tool in hyperfine bwrap python3; do
  command -v "$tool" >/dev/null || { echo "cold-true.sh: needs $tool (apt-get install hyperfine bubblewrap)" >&2; exit 1; }
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# bwrap: every namespace, a tmpfs root with /usr read-only, merged-/usr
# symlinks, fresh /proc, minimal /dev, private /tmp, dies with its parent.
bwrap_cmd="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --symlink usr/lib64 /lib64 --symlink usr/lib /lib --symlink usr/bin /bin --proc /proc --dev /dev --tmpfs /tmp --chdir /tmp /bin/true"
hyperfine -N --warmup 10 --runs "$runs" --export-json "$out" \
  -n stockade "$stockade run -- /bin/true" \
  -n bwrap "$bwrap_cmd" >&2
python3 - "$out" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
s, b = r["stockade"]["median"] * 1000, r["bwrap"]["median"] * 1000
print(f"| command | median ms |\n| --- | --- |\n| stockade run -- /bin/true | {s:.2f} |\n| bwrap (all namespaces) /bin/true | {b:.2f} |")
print(f"median ratio stockade/bwrap: {s / b:.2f}")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
