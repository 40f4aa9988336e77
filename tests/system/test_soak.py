#!/usr/bin/env python3
# Soak and load (issue 10, item 4): `stockade serve` under sustained mixed
# work must lose nothing and leak nothing.
#
# Registered in tests/meson.build as 'soak' and 'soak-65534' (suite
# 'soak', which a plain `meson test` leaves out: `meson test -C build
# --setup soak --suite soak`), with STOCKADE_BIN, STOCKADE_SOURCE_ROOT,
# STOCKADE_RESULTS_DIR and, for the second, STOCKADE_TEST_AS_USER=65534.
#
# What runs (docs/protocol.md): one session over --socket runs 2,000 jobs
# one after another, then 50 sessions (25 on pipes, 25 over --socket), each
# on its own workspace, run 40 jobs each, all at once. Every job is one
# `exec` of a 20-step cycle (STEPS): ordinary programs (true, sh with
# output, python3), a nonzero exit, two crashes, the limits (a 0.1 s wall
# timeout of `sleep`, a memory bomb of at most 600 MiB against 64 MiB,
# 1 MiB of output against 64 KiB, 40 processes against 16), a job leaving
# a setsid'd sleeper, and file transfers around the jobs: fs.write and
# fs.read inline and (over the socket) by descriptor (memfd, pipe),
# fs.unpack and fs.pack inline and by descriptor, fs.changes, fs.remove.
# The concurrent sessions run the same cycle lighter (smaller files, a
# 32 MiB memory limit against at most 200 MiB). Every answer is checked:
# the status the job was meant to end with (and its exit code, signal or
# output), the bytes of every file round-tripped, the changes listed;
# every result is kept in STOCKADE_RESULTS_DIR (stockade_test.save_result)
# and validated here against docs/result.schema.json.
#
# Then, all sessions ended (they must exit 0): no process left (the worker
# is a child subreaper, PR_SET_CHILD_SUBREAPER in prctl(2), so an orphan
# of a session is its descendant; and none of the session processes seen
# during the run, by pid and start time, may be alive); the broker's,
# launcher's and zygote's descriptors after the first 100 jobs equal to
# after the 2,000 (each reading taken once the session is idle and its
# pool refilled: three equal readings in a row), and each concurrent
# session's after its first job equal to after its 40th; the mounts of
# /proc/self/mountinfo, and the cgroup directories in and below the
# test's own cgroups (own_cgroups(): not the machine's others), before
# and after; the brokers' TMPDIR and XDG_RUNTIME_DIR (private directories,
# where a broker makes anything temporary: its doctor cache) empty or as
# after the first job, and every workspace empty after its last cycle (no
# .stockade-tmp-* file, nothing else);
# broker, launcher and zygote VmRSS after the 2,000 jobs within 10 % of
# after the first 100. Figures (jobs, failures, leaks, RSS, descriptors,
# wall time, load average) are TAP diagnostics. Nothing is timed as an
# assertion; every wait has a deadline (WATCHDOG_S ends the sessions).
#
# Structure: the test process makes a private directory and runs itself
# with --worker, as root or, for STOCKADE_TEST_AS_USER=65534 when root,
# through setpriv as 65534 with the binaries, these scripts, the client
# (examples/python/stockade_client.py) and the schema copied into a 0755
# directory that user can read. The worker prints the TAP; the test
# process then moves the worker's results into STOCKADE_RESULTS_DIR.
# stockade exiting 69 (the kernel lacks a layer) is a skip, a failure
# under STOCKADE_MUST_WORK=1.

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from soak_steps import POLICY, STEPS, Runner
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, tap_fail, tap_skip, traversable_tmp,
                           unprivileged_binaries)

SERIAL_JOBS = 2000
CHECKPOINT = 100            # jobs after which descriptors and RSS are read
SESSIONS, SESSION_JOBS = 50, 40
WATCHDOG_S = 1500           # every broker is killed past this (meson: 1800)
RSS_SLACK = 0.10
HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
    else sys.executable
COPIED = ("test_soak.py", "soak_steps.py", "../lib/stockade_test.py",
          "validate_results.py")


# --- /proc readings ------------------------------------------------------

def proc_table():
    """{pid: (comm, ppid, starttime)} of every live, non-zombie process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        rest = text[text.rindex(")") + 2:].split()
        if rest[0] != "Z":
            table[int(name)] = (text[text.index("(") + 1:text.rindex(")")],
                                int(rest[1]), int(rest[19]))
    return table


def descendants(root, table):
    found, queue = [], [root]
    while queue:
        p = queue.pop()
        kids = [c for c, v in table.items() if v[1] == p]
        found += kids
        queue += kids
    return found


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def own_cgroups():
    """The directories of this process's own cgroups, one per hierarchy
    (/proc/self/cgroup, each mapped to its mount in /proc/self/mountinfo):
    where stockade would make a leaf (its launcher's own cgroup or one
    below it; README.md, "Limits"). The machine's other cgroups come and
    go with unrelated work, so only these subtrees are counted."""
    mounts = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            fstype, _src, opts = right.split()[:3]
            if fstype in ("cgroup", "cgroup2"):
                mounts.append((fstype, left.split()[4], left.split()[3],
                               set(opts.split(","))))
    dirs = set()
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            for fstype, point, root, opts in mounts:
                if (fstype == "cgroup2" and not ctrls) or (
                        fstype == "cgroup" and ctrls and set(ctrls.split(",")) <= opts):
                    rel = os.path.relpath(path, root)
                    if not rel.startswith(".."):
                        dirs.add(os.path.normpath(os.path.join(point, rel)))
    return sorted(dirs)


def count_cgroups():
    """Directories in and below this process's own cgroups."""
    return sum(1 for d in own_cgroups() for _ in os.walk(d))


def mount_lines():
    """/proc/self/mountinfo without the mount ids (fields 1 and 2)."""
    with open("/proc/self/mountinfo") as f:
        return [line.split(" ", 2)[2].rstrip("\n") for line in f]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


SEEN = set()                # (pid, starttime) of every session process seen


def session_state(broker, table):
    """The broker's process tree in TABLE (proc_table()) by role (broker,
    spawner, launcher, zygote; pool: the waiting jails, a count) with
    descriptors and VmRSS; remembers every process in SEEN for the leak
    check."""
    roles = {"broker": broker}
    pool = 0
    for p in descendants(broker, table):
        comm = table[p][0]
        SEEN.add((p, table[p][2]))
        if comm == "stockade":
            roles["spawner"] = p
        elif comm.startswith("stockade-launch"):
            roles["launcher"] = p
        elif comm == "stockade-zygote":
            roles["zygote"] = p
        elif comm == "stockade-init":
            pool += 1
    if broker in table:
        SEEN.add((broker, table[broker][2]))
    return {"fds": {r: fd_count(p) for r, p in roles.items()},
            "rss": {r: rss_kb(p) for r, p in roles.items()}, "pool": pool}


def settled(brokers, deadline_s=20.0):
    """session_state of each of BROKERS once three readings 100 ms apart
    agree on its descriptors and pool (a session idle, its pool
    refilled), or at DEADLINE_S ("settled": False)."""
    end = time.monotonic() + deadline_s
    last, same = [None] * len(brokers), [0] * len(brokers)
    while True:
        table = proc_table()
        states = [session_state(b, table) for b in brokers]
        for i, st in enumerate(states):
            key = (st["fds"], st["pool"])
            same[i] = same[i] + 1 if key == last[i] else 0
            last[i] = key
        if min(same) >= 2 or time.monotonic() > end:
            for i, st in enumerate(states):
                st["settled"] = same[i] >= 2
            return states
        time.sleep(0.1)


# --- the worker: sessions, phases, checks --------------------------------

class Worker:
    def __init__(self, base, stockade, client, validator, surrogates):
        self.base, self.stockade, self.client = base, stockade, client
        self.validator, self.surrogates = validator, surrogates
        self.tmpdir = os.path.join(base, "tmp")
        self.xdg = os.path.join(base, "run")
        for d in (self.tmpdir, self.xdg, os.path.join(base, "sock")):
            os.mkdir(d, 0o700)
        self.policy = os.path.join(base, "policy.ini")
        with open(self.policy, "w") as f:
            f.write(POLICY)
        self.env = dict(os.environ, TMPDIR=self.tmpdir, XDG_RUNTIME_DIR=self.xdg)
        self.brokers, self.workspaces = [], []
        self.xdg_after_first = None
        self.lock = threading.Lock()

    def start(self, name, over_socket):
        ws = os.path.join(self.base, "ws-" + name)
        os.mkdir(ws, 0o755)
        if os.geteuid() == 0:
            os.chown(ws, NOBODY, NOBODY)    # a root broker refuses root's
        sock = os.path.join(self.base, "sock", name) if over_socket else None
        s = self.client.Session.start(ws, stockade=self.stockade,
                                      policy=self.policy, socket_path=sock,
                                      env=self.env)
        with self.lock:
            self.brokers.append(s._proc.pid)
            self.workspaces.append(ws)
        return s, Runner(s, name, name != "serial", self.validator,
                         self.surrogates, self.client.SessionClosed)

    def kill_all(self, why):
        """SIGKILL to every broker (their launchers and jails die with
        them): the watchdog's end, or the worker's on SIGTERM."""
        diag(f"{why}: killing every broker")
        for pid in list(self.brokers):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def close(self, s, r):
        rc = s.close(timeout=30)
        if rc != 0:
            r.failures.append(f"{r.name}: stockade serve exited {rc}: "
                              f"{s.stderr_tail(3)}")

    def serial(self, jobs):
        """JOBS jobs in one --socket session; returns its Runner and the
        session's state after CHECKPOINT jobs and at the end."""
        try:
            s, r = self.start("serial", True)
        except self.client.SessionClosed as exc:
            if exc.returncode == EXIT_NO_KERNEL_LAYER:
                raise Skip(f"stockade refused, the kernel lacks a layer: {exc}")
            raise
        broker = s._proc.pid
        first = last = None
        try:
            for n in range(jobs):
                cycle, step = divmod(n, len(STEPS))
                r.run(cycle, step)
                if n == 0:
                    self.xdg_after_first = sorted(os.listdir(self.xdg))
                if n + 1 == CHECKPOINT:
                    first = settled([broker])[0]
            last = settled([broker])[0]
        except self.client.SessionClosed as exc:
            if exc.returncode == EXIT_NO_KERNEL_LAYER:
                raise Skip(f"stockade refused, the kernel lacks a layer: {exc}")
            r.failures.append(f"serial: the session ended after {r.jobs} jobs: {exc}")
        finally:
            self.close(s, r)
        return r, first, last

    def concurrent(self, sessions, jobs):
        """SESSIONS sessions at once (even: pipe, odd: socket), JOBS jobs
        each; descriptors read once all ran their first job and again once
        all are done. Returns the Runners and the two readings."""
        b1, b2 = threading.Barrier(sessions + 1), threading.Barrier(sessions + 1)
        runs = [None] * sessions

        def body(i):
            s = r = None
            try:
                s, r = self.start(f"{i:03d}", i % 2 == 1)
                runs[i] = (s, r)
                r.run(i * 10, 0)
            except Exception as exc:
                diag(f"session {i}: {type(exc).__name__}: {exc}")
            meet(b1)
            meet(b2)
            if r is None:
                return
            try:
                for n in range(1, jobs):
                    cycle, step = divmod(n, len(STEPS))
                    r.run(i * 10 + cycle, step)
            except self.client.SessionClosed as exc:
                r.failures.append(f"{r.name}: the session ended after {r.jobs} jobs: {exc}")

        threads = [threading.Thread(target=body, args=(i,)) for i in range(sessions)]
        for t in threads:
            t.start()
        meet(b1)
        first = self.readings(runs)
        meet(b2)
        for t in threads:
            t.join()
        last = self.readings(runs)
        for x in runs:
            if x:
                self.close(*x)
        return [x[1] for x in runs if x], first, last, sessions - sum(1 for x in runs if x)


    @staticmethod
    def readings(runs):
        """The settled descriptor counts of the sessions RUNS (None for one
        that never started)."""
        started = [x[0]._proc.pid for x in runs if x]
        states = iter(settled(started))
        return [next(states)["fds"] if x else None for x in runs]


def meet(barrier):
    """Waits at BARRIER; a broken one (a session that never came, the
    watchdog) lets everyone on."""
    try:
        barrier.wait(timeout=WATCHDOG_S)
    except threading.BrokenBarrierError:
        pass


def leftovers(worker_pid, deadline_s=10.0):
    """Processes still alive DEADLINE_S after the sessions ended: below
    the worker (a subreaper) or seen in a session's tree, as text; they
    are then killed (SIGKILL)."""
    end = time.monotonic() + deadline_s
    while True:
        table = proc_table()
        left = set(descendants(worker_pid, table))
        left |= {p for p, st in SEEN if p in table and table[p][2] == st}
        if not left or time.monotonic() > end:
            found = [f"{p} {table[p][0]} (parent {table[p][1]})"
                     for p in sorted(left) if p in table]
            for p in left:      # reported; not left behind by the test
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            return found
        time.sleep(0.2)


def fmt_state(st):
    return (", ".join(f"{k} {v}" for k, v in st["fds"].items()) +
            f"; pool {st['pool']}" + ("" if st["settled"] else " (not settled)"))


def worker():
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.environ["STOCKADE_SOAK_CLIENT"])
    import stockade_client
    from validate_results import lone_surrogates
    from jsonschema import Draft202012Validator
    with open(os.environ["STOCKADE_SOAK_SCHEMA"], encoding="utf-8") as f:
        validator = Draft202012Validator(json.load(f))
    quick = os.environ.get("STOCKADE_SOAK_QUICK") == "1"
    serial_jobs, sessions = (200, 6) if quick else (SERIAL_JOBS, SESSIONS)
    # Orphans of the sessions become our children (prctl(2)).
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    base = tempfile.mkdtemp(prefix="stockade-soak-", dir=traversable_tmp())
    os.chmod(base, 0o755)
    w = Worker(base, os.environ["STOCKADE_BIN"], stockade_client, validator,
               lone_surrogates)
    diag(f"uid {os.geteuid()}, {w.stockade}; quick: {quick}; load {loadavg()}")
    mounts0, cgroups0 = mount_lines(), count_cgroups()
    diag(f"cgroups counted below: {', '.join(own_cgroups())}")
    dog = threading.Timer(WATCHDOG_S, w.kill_all, [f"watchdog: {WATCHDOG_S} s passed"])

    def on_term(signum, _frame):
        w.kill_all(f"signal {signum}")
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)
    dog.daemon = True
    dog.start()
    lines = []
    try:
        t0 = time.monotonic()
        r, first, last = w.serial(serial_jobs)
        t1 = time.monotonic()
        runs, cfirst, clast, unstarted = w.concurrent(sessions, SESSION_JOBS)
        t2 = time.monotonic()
        dog.cancel()
        left = leftovers(os.getpid())
        mounts1, cgroups1 = mount_lines(), count_cgroups()
        diag(f"one session: {r.jobs} jobs in {t1 - t0:.1f} s; statuses "
             f"{json.dumps(r.statuses, sort_keys=True)}; seconds per step: " +
             ", ".join(f"{k} {v:.1f}" for k, v in r.seconds.items()))
        lines.append((r.jobs == serial_jobs and not r.failures,
                      f"{serial_jobs} jobs in one session, each as meant "
                      f"({r.jobs} jobs, {len(r.failures)} failures)", r.failures[:20]))
        lines.append((not r.invalid, f"every result of the one session valid against "
                      f"the schema ({len(r.invalid)} invalid)", r.invalid[:10]))
        if first and last:
            diag(f"descriptors after {CHECKPOINT} jobs: {fmt_state(first)}")
            diag(f"descriptors after {r.jobs} jobs: {fmt_state(last)}")
            diag("VmRSS KiB after %d / after %d jobs: %s" % (CHECKPOINT, r.jobs, ", ".join(
                f"{k} {first['rss'][k]} / {last['rss'].get(k)}" for k in first["rss"])))
        roles = ("broker", "launcher", "zygote")
        # Readings that never settled (three equal ones 100 ms apart
        # within 20 s) are a failure of their own: something kept moving.
        fds_ok = bool(first and last) and first.get("settled", True) and \
            last.get("settled", True) and all(
            first["fds"].get(k, -1) == last["fds"].get(k, -2) >= 0 for k in roles)
        lines.append((fds_ok, f"broker, launcher and zygote descriptors after "
                      f"{CHECKPOINT} jobs equal to after the last"))
        rss_ok = bool(first and last) and all(
            0 < first["rss"].get(k, -1) and abs(last["rss"].get(k, -1) - first["rss"][k])
            <= RSS_SLACK * first["rss"][k] for k in roles)
        lines.append((rss_ok, f"broker, launcher and zygote VmRSS after the last "
                      f"job within {RSS_SLACK:.0%} of after {CHECKPOINT} jobs"))
        cjobs = sum(x.jobs for x in runs)
        cfail = [f for x in runs for f in x.failures]
        cinvalid = [f for x in runs for f in x.invalid]
        statuses = {}
        for x in runs:
            for k, v in x.statuses.items():
                statuses[k] = statuses.get(k, 0) + v
        diag(f"{sessions} sessions at once: {cjobs} jobs in {t2 - t1:.1f} s; "
             f"statuses {json.dumps(statuses, sort_keys=True)}; load {loadavg()}")
        lines.append((cjobs == sessions * SESSION_JOBS and not cfail and not unstarted,
                      f"{sessions} concurrent sessions x {SESSION_JOBS} jobs, each as "
                      f"meant, each session exit 0 ({cjobs} jobs, {len(cfail)} "
                      f"failures, {unstarted} sessions not started)", cfail[:20]))
        lines.append((not cinvalid, f"every result of the concurrent sessions valid "
                      f"({len(cinvalid)} invalid)", cinvalid[:10]))
        changed = [f"session {i}: {a} then {b}" for i, (a, b) in enumerate(zip(cfirst, clast))
                   if a is None or a != b]
        diag("concurrent sessions' descriptors (broker+launcher+zygote summed) after "
             "the first job / at the end: %d / %d" % tuple(
                 sum(sum(v for k, v in x.items() if k in roles) for x in xs if x)
                 for xs in (cfirst, clast)))
        lines.append((not changed, "each concurrent session's descriptors after its "
                      "first job equal to at the end", changed[:10]))
        lines.append((not left, f"no process left ({len(left)}; {len(SEEN)} session "
                      "processes seen)", left[:20]))
        lines.append((sorted(mounts0) == sorted(mounts1), f"mounts before / after: "
                      f"{len(mounts0)} / {len(mounts1)}",
                      [f"- {m}" for m in mounts0 if m not in mounts1] +
                      [f"+ {m}" for m in mounts1 if m not in mounts0]))
        lines.append((cgroups0 == cgroups1, f"cgroup directories before / after: "
                      f"{cgroups0} / {cgroups1}"))
        stray = [os.path.join(ws, n) for ws in w.workspaces for n in os.listdir(ws)]
        tmp_left = os.listdir(w.tmpdir)
        xdg_now = sorted(os.listdir(w.xdg))
        lines.append((not stray and not tmp_left and xdg_now == w.xdg_after_first,
                      f"no temporary file: TMPDIR {tmp_left}, XDG_RUNTIME_DIR "
                      f"{xdg_now} (after the first job: {w.xdg_after_first}), "
                      f"{len(stray)} entries left in the emptied workspaces",
                      stray[:10]))
        leaks = sum(not line[0] for line in lines[6:]) + (not fds_ok)
        diag(f"summary: {r.jobs + cjobs} jobs, {len(r.failures) + len(cfail)} "
             f"failures, {len(r.invalid) + len(cinvalid)} invalid results, "
             f"{len(left)} processes left, {leaks} leak checks failed; wall time: "
             f"one session {t1 - t0:.1f} s, concurrent {t2 - t1:.1f} s; load {loadavg()}")
    except Skip as exc:
        dog.cancel()
        print("1..1")
        return tap_skip(1, "soak", exc)
    finally:
        remove_all([base])
    print(f"1..{len(lines)}")
    for i, line in enumerate(lines, 1):
        print(f"{'ok' if line[0] else 'not ok'} {i} - {line[1]}")
        if not line[0] and len(line) > 2 and line[2]:
            diag("\n".join(line[2]))
    return 0 if all(line[0] for line in lines) else 1


# --- the test process ----------------------------------------------------

def main():
    if sys.argv[1:] == ["--worker"]:
        return worker()
    stockade = os.environ.get("STOCKADE_BIN", "")
    root = os.environ.get("STOCKADE_SOURCE_ROOT") or os.path.dirname(os.path.dirname(HERE))
    cleanup = []
    results = tempfile.mkdtemp(prefix="stockade-soak-results-", dir=traversable_tmp())
    cleanup.append(results)
    env = dict(os.environ, STOCKADE_RESULTS_DIR=results,
               STOCKADE_SOAK_SCHEMA=os.path.join(root, "docs", "result.schema.json"),
               STOCKADE_SOAK_CLIENT=os.path.join(root, "examples", "python"))
    cmd = [PYTHON, "-B", os.path.abspath(__file__), "--worker"]
    try:
        if not os.access(stockade, os.X_OK):
            raise AssertionError(f"STOCKADE_BIN={stockade!r} is not an executable")
        if os.environ.get("STOCKADE_TEST_AS_USER") == str(NOBODY) and os.geteuid() == 0:
            copy = unprivileged_binaries(stockade, cleanup)
            d = os.path.dirname(copy)
            for src in [os.path.join(HERE, n) for n in COPIED] + [
                    env["STOCKADE_SOAK_SCHEMA"],
                    os.path.join(env["STOCKADE_SOAK_CLIENT"], "stockade_client.py")]:
                shutil.copyfile(src, os.path.join(d, os.path.basename(src)))
                os.chmod(os.path.join(d, os.path.basename(src)), 0o644)
            os.chown(results, NOBODY, NOBODY)
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                   "HOME": "/nonexistent", "STOCKADE_BIN": copy,
                   "STOCKADE_RESULTS_DIR": results, "STOCKADE_SOAK_CLIENT": d,
                   "STOCKADE_SOAK_SCHEMA": os.path.join(d, "result.schema.json"),
                   **{k: v for k, v in os.environ.items() if k in (
                       "STOCKADE_MUST_WORK", "STOCKADE_TEST_KEEP", "STOCKADE_SOAK_QUICK")}}
            cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                   "--clear-groups", PYTHON, "-B", os.path.join(d, "test_soak.py"),
                   "--worker"]
        diag("$ " + " ".join(cmd))
        sys.stdout.flush()
        signal.signal(signal.SIGTERM, lambda signum, _f: sys.exit(128 + signum))
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL)
        try:
            rc = proc.wait(timeout=WATCHDOG_S + 240)
        finally:
            if proc.poll() is None:     # a timeout, or SIGTERM (meson's)
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        keep_results(results)
        return rc
    except (AssertionError, OSError, subprocess.SubprocessError) as exc:
        print("1..1")
        tap_fail(1, "soak", exc)
        return 1
    finally:
        remove_all(cleanup)


def keep_results(results):
    """Moves the worker's result files into STOCKADE_RESULTS_DIR (made
    mode 01777 when missing, as save_result makes it)."""
    dest = os.environ.get("STOCKADE_RESULTS_DIR")
    if not dest:
        return
    if not os.path.isdir(dest):
        os.makedirs(dest, exist_ok=True)
        os.chmod(dest, 0o1777)
    for name in os.listdir(results):
        if name.endswith(".json"):
            shutil.move(os.path.join(results, name), os.path.join(dest, name))


if __name__ == "__main__":
    sys.exit(main())
