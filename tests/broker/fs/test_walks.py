#!/usr/bin/env python3
# How often a job walks its workspace (issue 24, item 4).
#
# Every walk of the workspace (broker/fs/wswalk.c) enters each directory
# by an openat2(2) of its name beneath its parent's descriptor, so the
# walks of a workspace holding one directory "walkprobe" are counted by
# the openat2 calls that name it in the broker's own system calls
# (strace(1) without -f: the launcher and the jail are not traced; the
# job itself, `true`, opens nothing of /work).
#
# A job's writes go to a stage (issue 26): the change set is read from
# the stage's upper layer (broker/fs/stage.c walks the stage, never the
# workspace), so no snapshot of the workspace is taken before or after a
# job, and the launcher no longer counts the disk a job left. What is
# left, measured (issue 26's commit, broker/fs/stage_commit.c):
#
# 1. `stockade run --workspace WS -- true`: no walk at all (a job that
#    changed nothing makes no commit, broker/jobs/staged.c).
# 2. the same with a job that writes a file at the top of /work: one
#    walk, the file API's usage figures (fsapi_usage) made valid by the
#    commit's prepare() before it applies anything against the quota.
# 3. `stockade serve --workspace WS`, three `exec`s of `true` with an
#    fs.changes after each: no walk; fs.changes walks nothing.
# 4. the same with three `exec`s that each write a file at the top of
#    /work: one walk in all, at the first commit.
#
# (A job that writes below walkprobe makes the broker open walkprobe by
# name to apply it, which is no walk: the cases write at the top.)
#
# Registered in tests/meson.build as test 'walks' (TAP) with STOCKADE_BIN.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
from stockade_test import NOBODY

STOCKADE = os.environ.get("STOCKADE_BIN", "")
DEADLINE = 120
PROBE = re.compile(r'openat2\(\d+, "walkprobe"')


def workspace(tmp):
    ws = os.path.join(tmp, "ws")
    os.makedirs(os.path.join(ws, "walkprobe", "below"))
    with open(os.path.join(ws, "walkprobe", "file"), "w") as f:
        f.write("x" * 100)
    with open(os.path.join(ws, "top"), "w") as f:
        f.write("y")
    # A traversable tree; run as root, the workspace must be an ordinary
    # user's (stockade refuses root's).
    os.chmod(tmp, 0o755)
    if os.geteuid() == 0:
        for d, subdirs, files in os.walk(ws):
            for name in [d] + [os.path.join(d, x) for x in subdirs + files]:
                os.chown(name, NOBODY, NOBODY)
    return ws


def walks(log):
    with open(log, encoding="utf-8", errors="replace") as f:
        return sum(1 for ln in f if PROBE.search(ln))


def strace(log):
    return ["strace", "-qq", "-e", "trace=openat2", "-o", log, "--"]


def case_run(tmp, argv, want):
    ws = workspace(tmp)
    log = os.path.join(tmp, "run.strace")
    p = subprocess.run(strace(log) + [STOCKADE, "run", "--json",
                                      "--workspace", ws, "--"] + argv,
                       cwd="/", capture_output=True, timeout=DEADLINE)
    out = p.stdout.decode("utf-8", "replace").strip()
    if p.returncode != 0 or json.loads(out)["status"] != "ok":
        raise AssertionError(f"run: rc {p.returncode}: {out[:300]} "
                             f"{p.stderr.decode('utf-8', 'replace')[-300:]}")
    n = walks(log)
    if n != want:
        raise AssertionError(f"run walked the workspace {n} times, want {want}")
    return f"{n} walks"


def case_serve(tmp, argvs, want):
    ws = workspace(tmp)
    log = os.path.join(tmp, "serve.strace")
    p = subprocess.Popen(strace(log) + [STOCKADE, "serve", "--workspace",
                                        ws],
                         cwd="/", stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    committed = 0
    try:
        for i, argv in enumerate(argvs):
            for n, method, params in (
                    (2 * i + 1, "exec", {"argv": argv}),
                    (2 * i + 2, "fs.changes", {})):
                p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n,
                                           "method": method,
                                           "params": params})
                               + "\n").encode())
                p.stdin.flush()
                ln = p.stdout.readline()
                r = json.loads(ln) if ln else {}
                if "result" not in r:
                    raise AssertionError(f"{method}: {ln[:300]!r}")
                if method == "exec":
                    if r["result"]["status"] != "ok":
                        raise AssertionError(f"exec: {ln[:300]!r}")
                    committed += r["result"]["workspace"]["committed"]
        p.stdin.close()
        p.wait(timeout=DEADLINE)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    n = walks(log)
    if n != want:
        raise AssertionError(f"{len(argvs)} execs walked the workspace {n} "
                             f"times, want {want}")
    return f"{n} walks for {len(argvs)} execs, {committed} files committed"


WRITE = ["sh", "-c", "echo x > /work/out"]
CASES = [
    ("run of true: no walk (nothing to commit)",
     lambda tmp: case_run(tmp, ["true"], 0)),
    ("run of a job that writes a file: one walk (the usage at its commit)",
     lambda tmp: case_run(tmp, WRITE, 1)),
    ("serve: three execs of true walk nothing",
     lambda tmp: case_serve(tmp, [["true"]] * 3, 0)),
    ("serve: three execs that write walk once in all (the first commit)",
     lambda tmp: case_serve(tmp, [["sh", "-c", f"echo {i} > /work/out{i}"]
                                  for i in range(3)], 1)),
]


def main():
    print(f"1..{len(CASES)}")
    if not os.path.isabs(STOCKADE) or not os.access(STOCKADE, os.X_OK):
        for i, _ in enumerate(CASES, 1):
            print(f"not ok {i} - STOCKADE_BIN must be set")
        return 1
    if shutil.which("strace") is None:
        for i, (title, _) in enumerate(CASES, 1):
            print(f"ok {i} - {title} # SKIP strace(1) not installed")
        return 0
    failed = 0
    for i, (title, fn) in enumerate(CASES, 1):
        tmp = tempfile.mkdtemp(prefix="stockade-walks-")
        try:
            print(f"ok {i} - {title}: {fn(tmp)}")
        except Exception as e:  # reported, then the next case
            failed += 1
            print(f"not ok {i} - {title}")
            for ln in str(e).splitlines():
                print(f"# {ln}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
