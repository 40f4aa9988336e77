#!/usr/bin/python3
"""bench/workspace.py: what the workspace costs a job (issue 26's bench
targets; docs/benchmarks.md, "The workspace as a layer").

    bench/workspace.py [--build DIR] [--files N,N,...] [--jobs N]
                       [--commits N,N,...] [--big-mib N] [--markdown]

- warm `exec` of `true` in one `stockade serve` session per workspace
  size (default 0, 10000 and 100000 small files, 100 to a directory),
  timed at the client by build/bench/jobbench (JOBS jobs after 3 warm-up
  ones, medians); the target is the largest at most 1.1x the empty one;
- commit time for 1, 100 and 10000 changed files: a job writes them with
  `commit: "keep"`, then the client's `fs.commit` is timed from the
  request written to the answer read (median of 3);
- the copy-up of an append to a file of BIG MiB (default 100): the job's
  own wall_ms for `echo x >> big` against the same append to a small
  file, and the commit of each (median of 3).

Every workspace is made in a fresh directory of the build's scratch space
and removed at the end. Prints a Markdown section with --markdown, else
the same text. Exit status 0, 1 when a step failed, 2 for usage.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
NOBODY = 65534
POLICY = """[limits]
memory_mb = 1024
file_size_mb = 1024
[files]
workspace_mb = 2048
max_files = 300000
max_file_mb = 1024
"""


def fill(ws, n):
    """N files of 64 bytes, 100 to a directory."""
    for i in range(n):
        d = os.path.join(ws, f"d{i // 100:04d}")
        if i % 100 == 0:
            os.mkdir(d)
        with open(os.path.join(d, f"f{i % 100:02d}"), "wb") as f:
            f.write(b"x" * 64)


def workspace(tmp, name):
    ws = os.path.join(tmp, name)
    os.mkdir(ws)
    return ws


def give(ws):
    """A root broker refuses a workspace root owns: give it to 65534."""
    if os.geteuid() != 0:
        return
    for root, dirs, files in os.walk(ws):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), NOBODY, NOBODY)
    os.chown(ws, NOBODY, NOBODY)


def warm_exec(a, ws, policy):
    cmd = [os.path.join(a.build, "bench", "jobbench"), "--stockade",
           os.path.join(a.build, "stockade"), "--workspace", ws, "--policy",
           policy, "--warmup", "3", "--jobs", str(a.jobs), "--", "true"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        raise RuntimeError(f"jobbench: {r.stderr[-500:]}")
    return json.loads(r.stdout)["latency_ms"]["median"]


class Serve:
    def __init__(self, a, ws, policy):
        self.p = subprocess.Popen([os.path.join(a.build, "stockade"), "serve",
                                   "--workspace", ws, "--policy", policy],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.n = 0

    def call(self, method, **params):
        """(result, seconds from the request written to the answer)."""
        self.n += 1
        t0 = time.perf_counter()
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n,
                                       "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        dt = time.perf_counter() - t0
        r = json.loads(line)
        if "result" not in r:
            raise RuntimeError(f"{method}: {r}")
        return r["result"], dt

    def end(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def commit_time(a, tmp, policy, n):
    """Median seconds of fs.commit of N files a job created."""
    times = []
    for k in range(3):
        ws = workspace(tmp, f"commit-{n}-{k}")
        give(ws)
        s = Serve(a, ws, policy)
        try:
            res, _ = s.call("exec", argv=[
                "sh", "-c", f"mkdir /work/out && cd /work/out && "
                f"seq 1 {n} | xargs -n 1000 touch"], commit="keep")
            if res["status"] != "ok" or res["workspace"]["staged"] < n:
                raise RuntimeError(f"exec: {res['status']} "
                                   f"{res.get('workspace')}")
            _, dt = s.call("fs.commit", stage=res["workspace"]["stage"])
            times.append(dt)
        finally:
            s.end()
        shutil.rmtree(ws)
    return statistics.median(times)


def copy_up(a, tmp, policy, big_mib):
    """(job ms small, job ms big, commit s small, commit s big)."""
    ws = workspace(tmp, "copyup")
    with open(os.path.join(ws, "big"), "wb") as f:
        f.truncate(0)
        chunk = b"b" * (1 << 20)
        for _ in range(big_mib):
            f.write(chunk)
    with open(os.path.join(ws, "small"), "wb") as f:
        f.write(b"s" * 64)
    give(ws)
    out = {"small": ([], []), "big": ([], [])}
    s = Serve(a, ws, policy)
    try:
        s.call("exec", argv=["true"])
        for _ in range(3):
            for name in ("small", "big"):
                res, _ = s.call("exec", argv=["sh", "-c",
                                              f"echo x >> /work/{name}"],
                                commit="keep")
                if res["status"] != "ok":
                    raise RuntimeError(f"append: {res}")
                out[name][0].append(res["wall_ms"])
                _, dt = s.call("fs.commit", stage=res["workspace"]["stage"])
                out[name][1].append(dt)
    finally:
        s.end()
    shutil.rmtree(ws)
    med = statistics.median
    return (med(out["small"][0]), med(out["big"][0]), med(out["small"][1]),
            med(out["big"][1]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--files", default="0,10000,100000")
    ap.add_argument("--jobs", type=int, default=30)
    ap.add_argument("--commits", default="1,100,10000")
    ap.add_argument("--big-mib", type=int, default=100)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    lines = []
    with tempfile.TemporaryDirectory(prefix="stockade-bench-ws-",
                                     dir="/var/tmp") as tmp:
        os.chmod(tmp, 0o755)
        policy = os.path.join(tmp, "policy.ini")
        with open(policy, "w") as f:
            f.write(POLICY)
        os.chmod(policy, 0o644)
        sizes = [int(x) for x in a.files.split(",")]
        warm = {}
        for n in sizes:
            ws = workspace(tmp, f"files-{n}")
            fill(ws, n)
            give(ws)
            warm[n] = warm_exec(a, ws, policy)
            shutil.rmtree(ws)
        lines += ["| files in the workspace | warm `exec` of `true`, "
                  "median ms | / empty |", "|---|---|---|"]
        for n in sizes:
            lines.append(f"| {n} | {warm[n]:.2f} | "
                         f"{warm[n] / warm[sizes[0]]:.2f}x |")
        ratio = warm[sizes[-1]] / warm[sizes[0]]
        lines += ["", f"- warm exec, {sizes[-1]} files / {sizes[0]}: "
                  f"{ratio:.2f}x (target at most 1.1x: "
                  f"{'PASS' if ratio <= 1.1 else 'MISS'})", ""]
        lines += ["| changed files | `fs.commit`, median ms |", "|---|---|"]
        for n in [int(x) for x in a.commits.split(",")]:
            lines.append(f"| {n} | {commit_time(a, tmp, policy, n) * 1000:.1f}"
                         " |")
        js, jb, cs, cb = copy_up(a, tmp, policy, a.big_mib)
        lines += ["", f"| append one line to | job wall_ms | `fs.commit` ms |",
                  "|---|---|---|", f"| a 64-byte file | {js:.0f} | "
                  f"{cs * 1000:.1f} |",
                  f"| a {a.big_mib} MiB file | {jb:.0f} | {cb * 1000:.1f} |",
                  "", f"- copy-up of {a.big_mib} MiB: {jb - js:.0f} ms in "
                  f"the job, {(cb - cs) * 1000:.0f} ms more at commit"]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        print(f"workspace.py: {e}", file=sys.stderr)
        sys.exit(1)
