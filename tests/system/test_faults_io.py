#!/usr/bin/env python3
# Faults in the broker's own I/O (issue 10, item 3): the host disk full
# under a write, malloc failing, EINTR. TAP.
#
# Registered in tests/meson.build as `faults-io` (the broker as root) and
# `faults-io-65534` (STOCKADE_TEST_AS_USER=65534: the broker as uid 65534
# with setpriv, its binaries copied to a 0755 directory under /tmp), with
# STOCKADE_BIN (the product, static), STOCKADE_DYNAMIC_BIN (the same
# broker linked against a shared libc, which LD_PRELOAD reaches) and
# STOCKADE_FAULTSHIM (tests/lib/faultshim.c).
#
# 1. Disk full. As root the test re-runs itself in a private mount
#    namespace (unshare -m) and mounts 1 MiB tmpfs file systems there: the
#    workspace's and a host directory's. The policy's workspace_mb (1024)
#    is far above the disk, so the disk fills first. fs.write (inline, a
#    regular file and a pipe passed over --socket, with and without
#    overwrite), fs.unpack (one big entry; many small ones through the
#    writer threads), `stockade put`, `stockade run --put`, `stockade get`
#    and fs.read into a full host disk, and a job that fills the disk
#    itself. Each failure is the name docs/protocol.md gives ENOSPC
#    (quota_exceeded: "the workspace ... or its disk full"; io_error for
#    a host file that cannot be written), no partial file (absent or the
#    old content; no .stockade-tmp-/.stockade-get- name), and the same
#    session or command succeeds once space is freed.
# 2. malloc. A fixed session (tests below: SCRIPT) through the dynamic
#    broker with faultshim counting its allocations from its first ppoll
#    (T of them), then once for every N in 1..T+10 with the Nth allocation
#    failing: the broker never dies of a signal and never hangs, every
#    answer is the expected one or a named error (-32603 out of memory,
#    -32001 io_error, -32002 for exec) or an exec result sandbox_error,
#    and every file in the workspace is absent or complete.
# 3. EINTR. The same session with every Kth call of each intercepted I/O
#    function answering EINTR unmade, for several K: the answers equal
#    those of a run without the shim (figures that differ between any two
#    runs left out: times, memory, mtimes, a pack's bytes), exit 0.
#
# Every wait has a deadline; STOCKADE_TEST_KEEP=1 keeps the directories,
# STOCKADE_TEST_ONLY=WORD runs only the cases whose title holds WORD.
# The helpers are in faults_io_util.py, case 1 in faults_io_disk.py.
import base64
import io
import os
import resource
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from faults_io_disk import (case_disk_cli, case_disk_job, case_disk_unpack,
                            case_disk_write)
from faults_io_util import (AS_USER, ERROR_FS, ERROR_INTERNAL, ERROR_JOB, KiB,
                            Ctx, Session, check, feed_pipe, listing,
                            no_temporaries, pattern, tar_of)
from stockade_test import NOBODY, Skip, diag, remove_all, tap_case

IN_NS = "STOCKADE_FAULTS_IO_NS"
EINTR_KS = (2, 3, 4, 5, 7, 11)


# --- 2 and 3: the scripted session -------------------------------------------

BIG = pattern(100 * KiB, "regular")
PIPED = pattern(70 * KiB, "piped")
TREE = [("t/x.txt", b"x\n"), ("t/y/z.bin", pattern(80 * KiB, "z"))]
# The contents a file of the session may have: the broker writes only
# whole files; c.txt is the job's own (empty when the job was cut short
# between the shell's open and its write: a sandbox_error).
CONTENTS = {"a.txt": [b"alpha\n"], "a2.txt": [b"alpha\n"], "d/big.bin": [BIG],
            "d/pipe.bin": [PIPED], "c.txt": [b"made\n", b""],
            "u/t/x.txt": [TREE[0][1]], "u/t/y/z.bin": [TREE[1][1]]}


def run_script(ctx, ws, src, shim_env=None, sock=False):
    """Runs the session's requests in one session of the dynamic broker
    (on a socketpair, or with SOCK on --socket: accept4 too); returns
    (answers: list of (method, dict or None), exit status, stderr). Stops
    at the first request the broker did not answer."""
    if shim_env is not None:
        # Faults from the session's first wait for a request on: start-up
        # is left alone (libseccomp 2.5's seccomp_load crashes on an
        # allocation failure of its own, seccomp/libseccomp#240).
        shim_env = dict(shim_env, FAULTSHIM_AFTER="ppoll")
    sock_path = os.path.join(ctx.sock_dir, os.path.basename(ws)) if sock else None
    s = Session(ctx, ws, binary=ctx.dynamic, shim_env=shim_env,
                sock_path=sock_path)
    answers = []
    out_path = os.path.join(os.path.dirname(src), "read-" + os.path.basename(ws))
    try:
        steps = [
            ("fs.write", {"path": "a.txt", "text": "alpha\n"}, None),
            ("fs.mkdir", {"path": "d"}, None),
            ("fs.write", {"path": "d/big.bin", "fd": 0, "size": len(BIG)}, "src"),
            ("fs.write", {"path": "d/pipe.bin", "fd": 0, "size": len(PIPED)},
             "pipe"),
            ("exec", {"argv": ["sh", "-c", "cat a.txt; echo made > c.txt; "
                               "rm d/pipe.bin"]}, None),
            ("fs.changes", {}, None),
            ("fs.read", {"path": "a.txt"}, None),
            ("fs.read", {"path": "d/big.bin", "fd": 0}, "out"),
            ("fs.list", {"recursive": True}, None),
            ("fs.unpack", {"path": "u", "data":
                           base64.b64encode(tar_of(TREE)).decode()}, None),
            ("fs.stat", {"path": "u/t/y/z.bin"}, None),
            ("fs.pack", {"path": "u"}, None),
            ("fs.rename", {"from": "a.txt", "to": "a2.txt"}, None),
            ("fs.remove", {"path": "u/t/x.txt"}, None),
        ]
        for method, params, fd in steps:
            thread, fds = None, []
            if fd == "src":
                fds = [os.open(src, os.O_RDONLY)]
            elif fd == "pipe":
                r, thread = feed_pipe(PIPED)
                fds = [r]
            elif fd == "out":
                fds = [os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                               0o644)]
            try:
                msg = s.call(method, params, fds)
            finally:
                for f in fds:
                    os.close(f)
                if thread is not None:
                    thread.join(10)
                    check(not thread.is_alive(), "a pipe feeder still "
                          "blocked 10 s after its answer")
            answers.append((method, msg))
            if msg is None:
                break
    finally:
        rc = s.close()
    if os.path.exists(out_path):
        with open(out_path, "rb") as f:
            got = f.read()
        os.unlink(out_path)
        check(got in (b"", BIG), f"fs.read into a descriptor wrote {len(got)} "
              "bytes, not the file")
    return answers, rc, s.stderr()


def normal(method, msg):
    """MSG without what differs between any two runs."""
    if msg is None or "result" not in msg:
        return msg
    r = dict(msg["result"])
    if method == "exec":
        r = {k: r.get(k) for k in ("status", "exit_code", "signal", "stdout",
                                   "stderr")}
    elif method == "fs.list":
        r["entries"] = [{k: v for k, v in e.items() if k != "mtime"}
                        for e in r["entries"]]
    elif method == "fs.stat":
        r.pop("mtime", None)
    elif method == "fs.pack":
        names = sorted(m.name for m in tarfile.open(
            fileobj=io.BytesIO(base64.b64decode(r.pop("data")))))
        r["names"] = names
    return {"result": r}


def workspace_whole(ws):
    """Every file in WS is absent or complete; no temporary name."""
    for path, data in listing(ws).items():
        if data == "dir":
            continue
        check(data in CONTENTS.get(path, []),
              f"{path}: {len(data)} bytes, not a complete file of the session")
    no_temporaries(ws)


def read_report(path):
    out = {}
    with open(path) as f:
        for line in f:
            name, *nums = line.split()
            if name != "armed":
                out[name] = [int(n) for n in nums]
    return out


def baseline(ctx):
    src = ctx.host_file("src.bin", BIG)
    answers, rc, err = run_script(ctx, ctx.new_dir(), src)
    check(rc == 0 and all(m is not None and "result" in m for _, m in answers),
          f"the session without faults: exit {rc}: {answers} {err}")
    check(answers[4][1]["result"]["stdout"] == "alpha\n",
          f"exec: {answers[4][1]}")
    return src, [normal(m, a) for m, a in answers]


def allowed_failure(method, msg):
    """Whether MSG is a clean answer to an allocation that failed."""
    if "result" in msg:
        return method != "exec" or msg["result"].get("status") in ("ok",
                                                                   "sandbox_error")
    err = msg.get("error") or {}
    code, name = err.get("code"), (err.get("data") or {}).get("error")
    return code == ERROR_INTERNAL or (code == ERROR_FS and name == "io_error") \
        or (code == ERROR_JOB and method == "exec")


FS_NAMES = {"invalid_path", "escapes_workspace", "symlink_refused",
            "not_regular_file", "hardlinked_file", "too_large",
            "quota_exceeded", "not_found", "exists", "not_a_directory",
            "is_a_directory", "not_empty", "io_error"}


def named(msg):
    """Whether MSG is a result or an error docs/protocol.md names."""
    if isinstance(msg.get("result"), dict):
        return True
    err = msg.get("error") or {}
    if err.get("code") == ERROR_FS:
        return (err.get("data") or {}).get("error") in FS_NAMES
    return err.get("code") in (ERROR_INTERNAL, ERROR_JOB)


def outcomes_add(outcomes, key):
    outcomes[key] = outcomes.get(key, 0) + 1


def malloc_one(ctx, src, rep, want, n, total):
    """One session with allocation N failing; returns its outcome's name
    ("exit 0", "exit 0 (not reached)", ...) or raises AssertionError."""
    ws = ctx.new_dir()
    what = f"allocation {n} of {total} failing"
    try:
        answers, rc, err = run_script(ctx, ws, src, {
            "FAULTSHIM_MODE": "malloc", "FAULTSHIM_N": str(n),
            "FAULTSHIM_REPORT": rep})
    except (AssertionError, ValueError) as exc:
        raise AssertionError(f"{what}: {exc}") from exc
    check(rc >= 0, f"{what}: the broker died of signal {-rc}: {err}")
    hit = sum(v[1] for v in read_report(rep).values())
    deviated = False    # a request failed: later ones may differ
    for (method, msg), good in zip(answers, want):
        if msg is None:
            break
        if normal(method, msg) == good:
            continue
        check(allowed_failure(method, msg) or (deviated and named(msg)),
              f"{what}: {method} answered {str(msg)[:400]}")
        deviated = True
    # A commit whose undo an allocation failure stopped leaves its journal
    # (broker/fs/stage.h, STAGE_JOURNAL) for the next session, which
    # undoes it before anything else: open the workspace once more.
    journal = os.path.exists(os.path.join(ws, ".stockade-commit"))
    if journal:
        p = ctx.cli(["ls", "--workspace", ws])
        check(p.returncode == 0 and not os.path.exists(
            os.path.join(ws, ".stockade-commit")),
              f"{what}: the next session did not undo the journal: "
              f"{p.stderr!r}")
    try:
        workspace_whole(ws)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {exc}; answers: {answers}") from exc
    shutil.rmtree(ws, ignore_errors=True)
    return ("exit %d" % rc) + (" (journal undone by the next session)"
                               if journal else "") + (
        "" if hit else " (not reached)")


def case_malloc(ctx):
    src, want = baseline(ctx)
    rep = os.path.join(ctx.sock_dir, "report")  # the broker's user's
    answers, rc, err = run_script(ctx, ctx.new_dir(), src,
                                  {"FAULTSHIM_MODE": "count",
                                   "FAULTSHIM_REPORT": rep})
    check(rc == 0 and [normal(m, a) for m, a in answers] == want,
          f"the counting run differs: exit {rc}: {err}")
    counts = read_report(rep)
    total = sum(counts[f][0] for f in ("malloc", "calloc", "realloc"))
    check(total > 100, f"only {total} allocations counted: {counts}")
    outcomes, failures = {}, []
    for n in range(1, total + 11):
        try:
            outcomes_add(outcomes, malloc_one(ctx, src, rep, want, n, total))
        except AssertionError as exc:
            failures.append(str(exc))
            diag(f"not ok: {str(exc)[:2000]}")
    check(not failures, f"{len(failures)} of {total + 10} runs failed; the "
          f"first: {failures[:1]}")
    check(outcomes.get("exit 0 (not reached)", 0) >= 1,
          f"the last N never went past the allocations: {outcomes}")
    diag(f"malloc: N = 1..{total + 10}: " +
         ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
    return f"N = 1..{total + 10}, no signal, no partial file"


def case_eintr(ctx):
    src, want = baseline(ctx)
    rep = os.path.join(ctx.sock_dir, "report")  # the broker's user's
    notes = []
    for k, sock in [(k, sock) for k in EINTR_KS for sock in (False, True)]:
        ws = ctx.new_dir()
        answers, rc, err = run_script(ctx, ws, src, {
            "FAULTSHIM_MODE": "eintr", "FAULTSHIM_K": str(k),
            "FAULTSHIM_REPORT": rep}, sock)
        k = f"{k}{' --socket' if sock else ''}"
        got = [normal(m, a) for m, a in answers]
        for i, (g, w) in enumerate(zip(got, want)):
            check(g == w, f"K={k}: answer {i + 1} ({answers[i][0]}): got "
                  f"{str(g)[:400]}, want {str(w)[:400]}; stderr: {err}")
        check(len(got) == len(want) and rc == 0,
              f"K={k}: {len(got)} answers, exit {rc}: {err}")
        workspace_whole(ws)
        counts = read_report(rep)
        hit = {f: v[1] for f, v in counts.items() if v[1]}
        check(hit, f"K={k}: no EINTR injected: {counts}")
        notes.append(f"K={k}: {sum(hit.values())} EINTRs")
        diag(f"EINTR K={k}: " + ", ".join(f"{f} {n}" for f, n in sorted(hit.items())))
    return "; ".join(notes)


CASES = [
    ("disk full: fs.write inline, fd over --socket, pipe", case_disk_write, True),
    ("disk full: fs.unpack", case_disk_unpack, True),
    ("disk full: put, run --put, get", case_disk_cli, True),
    ("disk full: a job fills the disk", case_disk_job, True),
    ("malloc fails at every allocation of a session", case_malloc, False),
    ("EINTR on every Kth I/O call", case_eintr, False),
]


def main():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.geteuid() == 0 and os.environ.get(IN_NS) != "1":
        # Mounts of our own, gone with the namespace even if we are killed.
        env = dict(os.environ, **{IN_NS: "1"})
        return subprocess.run(["unshare", "--mount", "--propagation", "private",
                               sys.executable] + sys.argv, env=env).returncode
    label = f"as uid {NOBODY}" if AS_USER == str(NOBODY) else \
        ("as root" if os.geteuid() == 0 else "as the invoking user")
    print(f"1..{len(CASES)}")
    cleanup, failed = [], 0
    try:
        ctx, ctx_error = None, None
        try:
            ctx = Ctx(cleanup)
        except (AssertionError, OSError) as exc:
            ctx_error = exc
        only = os.environ.get("STOCKADE_TEST_ONLY", "")
        for number, (name, fn, needs_root) in enumerate(CASES, 1):
            title = f"{label}: {name}"
            if only and only not in name:
                print(f"ok {number} - {title} # SKIP STOCKADE_TEST_ONLY")
                continue

            def case(fn=fn, needs_root=needs_root):
                if ctx_error is not None:
                    raise ctx_error
                if needs_root and os.geteuid() != 0:
                    raise Skip("mounting a small tmpfs needs root")
                return fn(ctx)
            failed += tap_case(number, title, case)
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

