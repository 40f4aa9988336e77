#!/usr/bin/env python3
# The benchmark suite must not rot (issue 9, bench/run): `bench/run
# --quick` on this build tree, and the shape of its report.
#
# Registered in tests/meson.build as:
#
#   test('bench-smoke', python, args : [files('test_bench_smoke.py')],
#        protocol : 'tap', env : test_env, suite : 'bench',
#        is_parallel : false, timeout : 180)
#
# where test_env sets STOCKADE_BIN (the launcher sits beside it, the
# benchmark clients in bench/ below it) and STOCKADE_SOURCE_ROOT.
#
# What must hold, as the invoking user and (when that is root) as uid
# 65534 through setpriv, with the scripts and binaries copied where that
# user can read them:
#  - bench/run --quick --no-install --no-build exits 0 and prints the
#    report it writes to --out;
#  - every section bench/run declares (`bench/run --list-sections`) is
#    there, in that order, between Machine and Targets, and its closing
#    Sections table lists exactly those sections, each "ran" (a section
#    skipped or failing fails the test); no Failures section;
#  - every table is well formed and every figure in a column of figures
#    parses as a number; the cold tables have the bare, unshare,
#    bubblewrap and stockade rows of both programs; the warm table has
#    paced and back-to-back rows; the time to first result has its three
#    ways of starting sessions, without failures; every target row ends
#    in PASS or "MISS by N %";
#  - the concurrency run had no failure and left no process, descriptor,
#    mount or temporary file (behaviour, not speed: no PASS/MISS of a
#    timing target is asserted).
# Output is TAP. Without hyperfine or bubblewrap (tools/bootstrap installs
# them) the test skips: "not ok" under STOCKADE_MUST_WORK=1.

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (NOBODY, Skip, diag, remove_all, tap_fail,
                           tap_skip, traversable_tmp)

TARGETS = "## Targets (issue 9)"
# What may stand for a figure, by section: n/a where Pss of
# /proc/PID/smaps_rollup is closed to this user (a jail's processes as
# 65534) or a drained pool did not recover; "-" or nothing where
# egress.py has no figure for a row (the proxy's CPU without a proxy).
NA_OK = {"## Memory": {"n/a"}, "## Time to first result": {"n/a"},
         "## Egress through the proxy": {"-", ""}}
NUMERIC = re.compile(r"(ms|KiB|x |ratio|runs|jobs|failures|median|p10|p90|"
                     r"p99|max)", re.I)
NUMBER = re.compile(r"^\**-?[0-9]+(\.[0-9]+)?\**( (KiB|ms))?$")


def tables(text):
    """{section: [table]}, each table a list of rows of stripped cells."""
    out, section, cur = {}, None, None
    for line in text.splitlines():
        if line.startswith("## "):
            section, cur = line, None
            out.setdefault(section, [])
        elif line.startswith("|") and section:
            if cur is None:
                cur = []
                out[section].append(cur)
            # "\|" inside a cell (a shell pipe) is no border
            cur.append([c.strip() for c in
                        re.split(r"(?<!\\)\|", line.strip())[1:-1]])
        else:
            cur = None
    return out


def declared(bench_dir):
    """The section headings bench/run declares, in order."""
    r = subprocess.run([sys.executable, os.path.join(bench_dir, "run"),
                        "--list-sections"], capture_output=True, text=True,
                       check=True)
    heads = r.stdout.split("\n")[:-1]
    assert heads and all(h.startswith("## ") for h in heads), \
        f"--list-sections: {r.stdout!r}"
    return heads


def check_sections(text, heads):
    order = ["# stockade benchmark report", "## Machine", *heads, TARGETS,
             "## Sections"]
    pos = [text.find("\n" + s + "\n") if i else text.find(s)
           for i, s in enumerate(order)]
    missing = [s for s, p in zip(order, pos) if p < 0]
    assert not missing, f"sections missing: {missing}"
    assert pos == sorted(pos), "sections out of order"
    assert "\n## Failures" not in text, "the report lists failures"
    rows = tables(text)["## Sections"][0][2:]
    assert [r[1] for r in rows] == [h[3:] for h in heads], \
        f"the report's sections {[r[1] for r in rows]} against {heads}"
    bad = [r for r in rows if r[2] != "ran"]
    assert not bad, f"sections that did not run: {bad}"


def check_tables(tabs, heads):
    for s in heads:
        assert tabs.get(s), f"{s}: no table"
        for t in tabs[s]:
            head, rule, rows = t[0], t[1], t[2:]
            assert all(c == "---" for c in rule) and len(rule) == len(head), \
                f"{s}: bad table rule {rule}"
            assert rows, f"{s}: empty table {head}"
            for r in rows:
                assert len(r) == len(head), f"{s}: row {r} against {head}"
                for h, c in list(zip(head, r))[1:]:  # the first is a label
                    if NUMERIC.search(h) or h == "value":
                        assert all(NUMBER.match(x) or
                                   x in NA_OK.get(s, ())
                                   for x in re.split(" / |, ", c)), \
                            f"{s}: {h} = {c!r} is no number"


def check_report(text, heads):
    check_sections(text, heads)
    tabs = tables(text)
    check_tables(tabs, heads)
    cold = " ".join(r[0] for t in tabs["## Cold start"] for r in t[2:])
    for side in ("bare", "unshare -Urnmpf", "bubblewrap", "stockade run"):
        for prog in ("`/bin/true`", "`python3 -c pass`"):
            assert f"{side} {prog}" in cold, f"no cold row {side} {prog}"
    warm = tabs["## Warm jobs in a session"][0]
    gaps = {r[warm[0].index("gap ms")] for r in warm[2:]}
    assert "0" in gaps and len(gaps) == 2, f"warm: gaps {gaps}"
    for r in tabs[TARGETS][0][2:]:
        assert re.match(r"^(PASS|MISS by [0-9]+ %)$", r[-1]), f"target {r}"
        assert re.match(r"^-?[0-9]", r[1]), f"target measure {r}"
    conc = {r[0]: r[1] for r in tabs["## Concurrency"][0][2:]}
    for k in ("failures", "sessions that did not exit 0",
              "sessions whose descriptor count changed",
              "processes left behind", "temporary files left in TMPDIR"):
        assert conc.get(k) == "0", f"concurrency: {k} = {conc.get(k)}"
    a, b = conc["mounts before / after"].split(" / ")
    assert a == b, f"mounts before/after {a}/{b}"
    first = tabs["## Time to first result"][0]
    ways = [r[0] for r in first[2:]]
    assert len(ways) == 3 and ways[0] == "sequential" and \
        ways[2] == "all at once", f"time to first result: {ways}"
    assert all(r[-1] == "0" for r in first[2:]), f"ttfr failures {first}"


def run_bench(bench_dir, build, as_nobody, tmp):
    out = os.path.join(tmp, "report.md")
    cmd = [sys.executable, os.path.join(bench_dir, "run"), "--quick",
           "--no-install", "--no-build", "--build", build, "--out", out]
    env = dict(os.environ, TMPDIR=tmp)
    if as_nobody:
        cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
               "--clear-groups", *cmd]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       cwd=tmp, timeout=150)
    assert r.returncode == 0, \
        f"bench/run exited {r.returncode}:\n{r.stdout[-3000:]}\n" \
        f"{r.stderr[-2000:]}"
    with open(out) as f:
        written = f.read()
    assert written.strip() == r.stdout.strip(), "--out differs from stdout"
    check_report(r.stdout, declared(bench_dir))
    diag("\n".join(ln for ln in r.stdout.splitlines()
                   if ln.startswith("| cold") or ln.startswith("| warm")))


def copy_for_nobody(src_bench, build, tmp):
    """bench/run, the scripts beside it and the six binaries in 0755
    directories (a CI checkout may sit where uid 65534 cannot go)."""
    bench = os.path.join(tmp, "src", "bench")
    os.makedirs(bench)
    for f in os.listdir(src_bench):  # run and the scripts it calls
        if f == "run" or f.endswith(".py"):
            shutil.copy(os.path.join(src_bench, f), bench)
    b = os.path.join(tmp, "build")
    os.makedirs(os.path.join(b, "bench"))
    for f in ("stockade", "stockade-launcher", "stockade-proxy",
              "bench/jobbench", "bench/fsbench", "bench/netbench"):
        shutil.copy(os.path.join(build, f), os.path.join(b, f))
    for root, dirs, files in os.walk(tmp):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o755)
    os.chmod(tmp, 0o1777)  # its TMPDIR too
    return bench, b


def main():
    build = os.path.dirname(os.path.abspath(os.environ["STOCKADE_BIN"]))
    bench = os.path.join(os.environ["STOCKADE_SOURCE_ROOT"], "bench")
    users = [False] + ([True] if os.geteuid() == 0 else [])
    print(f"1..{len(users)}")
    failed, cleanup = 0, []
    for n, as_nobody in enumerate(users, 1):
        title = "bench/run --quick" + (" as uid 65534" if as_nobody else "")
        try:
            for tool in ("hyperfine", "bwrap"):
                if shutil.which(tool) is None:
                    raise Skip(f"{tool} is not installed (tools/bootstrap "
                               "installs hyperfine and bubblewrap)")
            if as_nobody and shutil.which("setpriv") is None:
                raise Skip("no setpriv")
            tmp = tempfile.mkdtemp(prefix="stockade-bench-smoke-",
                                   dir=traversable_tmp())
            cleanup.append(tmp)
            if as_nobody:
                b, d = copy_for_nobody(bench, build, tmp)
                run_bench(b, d, True, tmp)
            else:
                run_bench(bench, build, False, tmp)
            print(f"ok {n} - {title}")
        except Skip as e:
            failed += tap_skip(n, title, e)
        except Exception as e:
            failed += 1
            tap_fail(n, title, e)
    remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
