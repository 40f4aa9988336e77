#!/usr/bin/python3
"""bench/ttfr.py: time to first result, a drained pool's recovery, and the
memory of idle sessions (issue 27, point 4; docs/benchmarks.md).

    bench/ttfr.py [--build DIR] [--dir TMP] [--sessions N] [--stagger-ms X]
                  [--burst B] [--reps R] [--delays D,D...] [--idle K]
                  [--json FILE]

Every session is `BUILD/stockade serve --workspace WS` on pipes, WS a fresh
directory (owned by uid 65534 when run as root), the default policy,
standard error appended to TMP/ttfr-serve.log.

- Time to first result: from just before the session's process is
  started to the first job's result read (one `exec` of ["true"], written
  at once, as a hosted sandbox is timed from create to its first
  successful command). N sessions (default 100) three ways: sequential
  (each ended, end of input and reaped, before the next starts),
  staggered (one started every X ms, default 50, overlapping) and at once
  (all N started together: one event loop, no threads, each started as
  soon as the one before is, each timed from its own start). Staggered and
  at-once sessions stay open until every one has its result, then all are
  ended. p50, p95, p99 and max over the N; failures are an error, a status
  other than "ok", a non-zero exit, no answer in 120 s.
- A drained pool: one session, warm, rested (500 ms); its rested latency
  is the median of 10 single jobs 300 ms apart. A burst: B `exec`s
  (default 10) written in one go (answered in order, one after another),
  each timed to its answer from the burst's start. Recovery: after a
  burst, a pause of D ms (--delays, default 0,10,20,50,100,200,500,1000),
  then one job; its latency, the median over R bursts per D (default 3),
  against the rested figure; recovered at the first D from which every
  probe is within 1.25x of it. Then once more a burst and the
  pool jails (`stockade-init` processes of the session) counted every 5 ms
  from its end until back to the rested count: the pool full again by
  /proc.
- Memory: K idle sessions (default 10), each after one job and 1 s idle
  (its pool full): every process of each (broker, spawner, reaper,
  launcher, zygote, pool jails with anything below them), Pss from
  /proc/PID/smaps_rollup and VmRSS from /proc/PID/status, summed by role
  over the K and divided by K (shared pages split among the K, so PSS per
  session is what one more session costs). Per waiting jail: the pool
  jails' PSS over their count. Sessions in 1 GiB: 1 GiB / PSS per session
  (RSS where PSS is unreadable, as for a jail's processes when not root).

Prints Markdown (tables and a few "name: value" lines); --json FILE also
writes the figures as JSON (bench/run reads it). Exit 0 when everything
ran without failure, 1 otherwise. Standard library only.
"""

import argparse
import ctypes
import json
import os
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NOBODY = 65534
EXEC = (b'{"jsonrpc":"2.0","id":%d,"method":"exec",'
        b'"params":{"argv":["true"]}}\n')


def now():
    return time.perf_counter() * 1000.0


class Session:
    """One `stockade serve` on pipes, spoken to with raw descriptors."""

    def __init__(self, a, ws):
        self.t0 = now()
        self.p = subprocess.Popen([a.stockade, "serve", "--workspace", ws],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=a.log)
        self.buf, self.id, self.t1, self.ok = b"", 0, None, None

    def send(self, n=1):
        reqs = b""
        for _ in range(n):
            self.id += 1
            reqs += EXEC % self.id
        os.write(self.p.stdin.fileno(), reqs)

    def feed(self):
        """Reads what is there; the complete answer lines, or None at EOF."""
        data = os.read(self.p.stdout.fileno(), 65536)
        if not data:
            return None
        self.buf += data
        *lines, self.buf = self.buf.split(b"\n")
        return lines

    def answer(self):
        """Blocks for one answer line; whether it was a result "ok", 0."""
        while b"\n" not in self.buf:
            data = os.read(self.p.stdout.fileno(), 65536)
            if not data:
                return False
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return ok(line)

    def job(self):
        t = now()
        self.send()
        good = self.answer()
        return now() - t, good

    def end(self, timeout=10):
        """End of input; True when it exits 0 within TIMEOUT s (else killed)."""
        self.p.stdin.close()
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.p.stdout.close()
        return rc == 0


def ok(line):
    try:
        r = json.loads(line).get("result") or {}
    except ValueError:
        return False
    return r.get("status") == "ok" and r.get("exit_code") == 0


def workspace(a):
    a.nws += 1
    ws = os.path.join(a.dir, f"ws-{a.nws:04d}")
    os.mkdir(ws, 0o700)
    if os.geteuid() == 0:  # root's workspaces belong to the jobs' user
        os.chown(ws, NOBODY, NOBODY)
    return ws


def quantiles(v):
    """{p50, p95, p99, max} of V (inclusive ranks), ms."""
    if not v:
        return {"p50": -1, "p95": -1, "p99": -1, "max": -1}
    if len(v) == 1:
        return {"p50": v[0], "p95": v[0], "p99": v[0], "max": v[0]}
    q = statistics.quantiles(v, n=100, method="inclusive")
    return {"p50": q[49], "p95": q[94], "p99": q[98], "max": max(v)}


def sequential(a, n):
    times, fails = [], 0
    for _ in range(n):
        s = Session(a, workspace(a))
        s.send()
        good = s.answer()
        t = now() - s.t0
        good = s.end() and good
        if good:
            times.append(t)
        fails += not good
    return times, fails


def overlapping(a, n, every_ms):
    """N sessions, the Ith started at I * EVERY_MS; (times, failures)."""
    sel = selectors.DefaultSelector()
    live, done, times, fails = [], 0, [], 0
    t_start, deadline = now(), now() + 120000
    while (len(live) < n or done < n) and now() < deadline:
        due = t_start + len(live) * every_ms
        spawn = len(live) < n and now() >= due
        wait = 0 if spawn else (due - now()) / 1000 if len(live) < n else 1.0
        for key, _ in sel.select(max(wait, 0)):  # answers first, then starts
            s = key.data
            lines = s.feed()
            if lines is None or lines:
                s.t1, s.ok = now(), bool(lines) and ok(lines[0])
                sel.unregister(key.fileobj)
                done += 1
        if spawn:
            s = Session(a, workspace(a))
            s.send()
            live.append(s)
            sel.register(s.p.stdout, selectors.EVENT_READ, s)
    for s in live:
        ended = s.end()
        good = bool(s.ok) and ended
        if good:
            times.append(s.t1 - s.t0)
        fails += not good
    fails += n - len(live)
    return times, fails


def ttfr(a):
    rows = {}
    for mode, fn in (("sequential", lambda: sequential(a, a.sessions)),
                     (f"staggered, one every {a.stagger_ms} ms",
                      lambda: overlapping(a, a.sessions, a.stagger_ms)),
                     ("all at once", lambda: overlapping(a, a.sessions, 0))):
        times, fails = fn()
        rows[mode] = dict(quantiles(times), sessions=a.sessions, failures=fails)
        a.failures += fails
    return rows


def children(pid):
    """PIDs whose parent is PID (/proc/PID/task/*/children, proc(5))."""
    out = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def tree(root):
    """[(pid, parent, comm)] of ROOT and everything below it."""
    out, pending = [], [(root, 0)]
    while pending:
        pid, parent = pending.pop()
        out.append((pid, parent, comm(pid)))
        pending += [(c, pid) for c in children(pid)]
    return out


def pool_jails(root):
    return sum(1 for _, _, c in tree(root) if c == "stockade-init")


def burst(s, b):
    """B jobs written at once; each one's answer time from the start, ms."""
    t0, out = now(), []
    s.send(b)
    for _ in range(b):
        good = s.answer()
        out.append(now() - t0)
        if not good:
            raise RuntimeError("a job of the burst failed")
    return out


def drain(a):
    s = Session(a, workspace(a))
    try:
        for _ in range(3):
            s.job()
        time.sleep(0.5)
        full = pool_jails(s.p.pid)
        rested = []
        for _ in range(10):
            time.sleep(0.3)
            rested.append(s.job()[0])
        rest = statistics.median(rested)
        time.sleep(0.5)
        bursts, probes = [], {d: [] for d in a.delays}
        for _ in range(a.reps):
            for d in a.delays:
                bursts.append(burst(s, a.burst))
                time.sleep(d / 1000)
                t, good = s.job()
                if not good:
                    raise RuntimeError("a probe job failed")
                probes[d].append(t)
                time.sleep(0.5)
        burst(s, a.burst)
        t0, back = now(), None
        while now() - t0 < 5000:
            if pool_jails(s.p.pid) >= full:
                back = now() - t0
                break
            time.sleep(0.005)
    finally:
        if not s.end():
            a.failures += 1
    med = {d: statistics.median(v) for d, v in probes.items()}
    rec = next((d for d in a.delays
                if all(med[e] <= 1.25 * rest for e in a.delays if e >= d)), None)
    last = [b[-1] for b in bursts]
    return {"pool_jails": full, "rested_ms": rest, "burst": a.burst,
            "burst_first_ms": statistics.median(b[0] for b in bursts),
            "burst_total_ms": statistics.median(last),
            "burst_per_job_ms": statistics.median(last) / a.burst,
            "probe_ms": {str(d): m for d, m in med.items()},
            "recovered_after_ms": rec, "pool_back_proc_ms": back}


def proc_kb(pid, name, key):
    try:
        with open(f"/proc/{pid}/{name}") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return -1


def roles(root):
    """[(role, pid)] of one session's processes."""
    t = tree(root)
    jails = {p for p, _, c in t if c == "stockade-init"}
    out = []
    for pid, parent, c in t:  # parents come before their children
        if parent in jails:
            jails.add(pid)
        role = ("broker" if pid == root else "pool jails" if pid in jails
                else "spawner" if c == "stockade"
                else "reaper" if c == "stockade-reaper"
                else "launcher" if c.startswith("stockade-launch")
                else "zygote" if c == "stockade-zygote" else "other")
        out.append((role, pid))
    return out


def memory(a):
    ss = [Session(a, workspace(a)) for _ in range(a.idle)]
    try:
        for s in ss:
            s.send()
        for s in ss:
            if not s.answer():
                a.failures += 1
        time.sleep(1.0)
        by, jails = {}, 0
        for s in ss:
            rs = roles(s.p.pid)
            jails += sum(1 for r, p in rs if r == "pool jails" and
                         comm(p) == "stockade-init")
            for role, pid in rs:
                e = by.setdefault(role, {"processes": 0, "rss_kb": 0,
                                         "pss_kb": 0, "pss_unreadable": 0})
                e["processes"] += 1
                e["rss_kb"] += max(proc_kb(pid, "status", "VmRSS:"), 0)
                pss = proc_kb(pid, "smaps_rollup", "Pss:")
                e["pss_kb"] += max(pss, 0)
                e["pss_unreadable"] += pss < 0
    finally:
        for s in ss:
            if not s.end():
                a.failures += 1
    return per_session(by, jails, a.idle)


def per_session(by, jails, k):
    for e in by.values():
        for f in ("processes", "rss_kb", "pss_kb"):
            e[f] /= k
    tot = {f: sum(e[f] for e in by.values()) for f in ("rss_kb", "pss_kb")}
    exact = not any(e["pss_unreadable"] for e in by.values())
    per = tot["pss_kb"] if exact else tot["rss_kb"]
    j = by.get("pool jails", {"pss_kb": 0, "rss_kb": 0})
    return {"sessions": k, "roles": by, "jails_per_session": jails / k,
            "session_rss_kb": tot["rss_kb"], "session_pss_kb": tot["pss_kb"],
            "judged_on": "PSS" if exact else "RSS (PSS unreadable)",
            "per_jail_pss_kb": j["pss_kb"] / (jails / k) if jails else -1,
            "per_jail_rss_kb": j["rss_kb"] / (jails / k) if jails else -1,
            "sessions_per_gib": int((1 << 20) // per) if per > 0 else -1,
            "sessions_per_gib_rss": int((1 << 20) // tot["rss_kb"])
            if tot["rss_kb"] > 0 else -1}


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    print()


def f2(x):
    return "n/a" if x is None or x < 0 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def markdown(out):
    print("Time to first result (`serve` started to the first `exec` "
          "result, ms):\n")
    table(["sessions", "n", "p50 ms", "p95 ms", "p99 ms", "max ms",
           "p99 / p50", "failures"],
          [[m, r["sessions"], f2(r["p50"]), f2(r["p95"]), f2(r["p99"]),
            f2(r["max"]), f2(r["p99"] / r["p50"]) if r["p50"] > 0 else "n/a",
            r["failures"]] for m, r in out["ttfr"].items()])
    d = out["drain"]
    print(f"A drained pool ({d['pool_jails']} pool jails rested; a burst of "
          f"{d['burst']} jobs written at once):\n")
    table(["figure", "ms"], [
        ["rested single job, median", f2(d["rested_ms"])],
        ["burst: first answer", f2(d["burst_first_ms"])],
        ["burst: last answer", f2(d["burst_total_ms"])],
        ["burst: per job", f2(d["burst_per_job_ms"])],
        *[[f"one job {k} ms after a burst", f2(v)]
          for k, v in d["probe_ms"].items()],
        ["recovered (probes within 1.25x rested) after",
         f2(d["recovered_after_ms"])],
        ["pool jails back to the rested count (/proc) after",
         f2(d["pool_back_proc_ms"])]])
    m = out["memory"]
    print(f"Memory of {m['sessions']} idle sessions with a full pool, per "
          "session (KiB):\n")
    table(["process", "processes", "RSS KiB", "PSS KiB"],
          [[r, f2(e["processes"]), round(e["rss_kb"]),
            round(e["pss_kb"]) if not e["pss_unreadable"] else "n/a"]
           for r, e in sorted(m["roles"].items())] +
          [["**session**", "", round(m["session_rss_kb"]),
            round(m["session_pss_kb"])]])
    print(f"- memory per waiting jail: {f2(m['per_jail_pss_kb'])} KiB PSS, "
          f"{f2(m['per_jail_rss_kb'])} KiB RSS")
    print(f"- idle sessions with a full pool in 1 GiB: "
          f"{m['sessions_per_gib']} (judged on {m['judged_on']}; "
          f"{m['sessions_per_gib_rss']} on RSS, every shared page counted "
          "in full; neither counts the kernel's memory: page tables, "
          "namespaces, mounts)\n")


def reap_orphans():
    """We are a child subreaper: what a session left is our child; ended."""
    for pid in children(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--dir")
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--stagger-ms", type=int, default=50)
    ap.add_argument("--burst", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--idle", type=int, default=10)
    ap.add_argument("--delays", default="0,10,20,50,100,200,500,1000")
    ap.add_argument("--json")
    a = ap.parse_args()
    a.delays = sorted(int(d) for d in a.delays.split(","))
    a.stockade = os.path.join(os.path.abspath(a.build), "stockade")
    ctypes.CDLL(None).prctl(36, 1)  # PR_SET_CHILD_SUBREAPER, prctl(2)
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    top = tempfile.mkdtemp(prefix="ttfr-", dir=a.dir)
    os.chmod(top, 0o755)
    a.dir, a.nws, a.failures = top, 0, 0
    a.log = open(os.path.join(top, "ttfr-serve.log"), "ab")
    try:
        out = {"ttfr": ttfr(a), "drain": drain(a), "memory": memory(a)}
        out["failures"] = a.failures
        markdown(out)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f)
    finally:
        reap_orphans()
        a.log.close()
        shutil.rmtree(top, ignore_errors=True)
    return 1 if a.failures else 0


if __name__ == "__main__":
    sys.exit(main())
