#!/usr/bin/env python3
# What a job may take of the invoking user's kernel quotas, and what a run
# or a session leaves to its caller (issue 23, points 2 and 5).
#
# 1. A hostile job takes every inotify instance it can, queues real-time
#    signals to itself until refused and makes POSIX timers until
#    refused (each bounded), then holds them. Meanwhile a host process of
#    the uid the job is charged to must still
#    get an inotify instance (inotify_init1) and a timer (timer_create).
#    (A POSIX timer preallocates its signal: timers and queued signals
#    share RLIMIT_SIGPENDING and the user's pending-signal quota.)
#    That uid is the caller's, root's for root too: the jail's user
#    namespace is owned by the launcher's uid, and kernel/ucount.c
#    charges up the chain to the owner, though a root caller's job runs
#    as host uid 65534 (launcher/supervisor/main.c).
#    The job's counts must stay within the jail's quotas
#    (launcher/common/jail.h: JAIL_INOTIFY_INSTANCES, JAIL_SIGPENDING).
# 2. POSIX message queues: RLIMIT_MSGQUEUE is 64 KiB, so a queue of
#    10 x 8192-byte messages (80 KiB) is refused (EMFILE, mq_open(3)),
#    or mq_open refused altogether; the 4 x 1024 queue's answer is
#    recorded (EACCES on this machine: no mqueue directory the job may
#    create in).
# 3. The test makes itself a child subreaper (PR_SET_CHILD_SUBREAPER,
#    prctl(2)), then runs `stockade run` three times and one `stockade
#    serve` session whose warm pool holds jails (the default pool_size)
#    to its end (each of its jobs, warm ones included, sees the jail's
#    /proc/sys/user quotas); afterwards no process of theirs, zombie or
#    not, is left
#    among its children: the launcher reaps its zygote and every jail
#    init before it exits, and the broker its launcher.
#
# Each case runs as the invoking user and, when that is root, again as
# uid 65534 (setpriv, the binaries copied by unprivileged_binaries).
# Registered in tests/meson.build as test 'quota' (TAP) with STOCKADE_BIN
# and STOCKADE_RESULTS_DIR.
import ctypes
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (NOBODY, alive_with, diag, remove_all, save_result,
                           tap_case, traversable_tmp, unprivileged_binaries)

STOCKADE = os.environ["STOCKADE_BIN"]
SETPRIV = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
           "--clear-groups"]
PR_SET_CHILD_SUBREAPER = 36
# The jail's quotas (launcher/common/jail.h).
JAIL_INOTIFY_INSTANCES = 32
JAIL_SIGPENDING = 256
# Bounds on a failure only: the job's start, and a leftover's exit.
START_S = 30
SETTLE_S = 3
QUOTA_ARGV = ["cat", "/proc/sys/user/max_inotify_instances",
              "/proc/sys/user/max_user_namespaces"]

# Takes up to 1000 inotify instances, 128 timers, then queues real-time
# signals to itself (blocked) until refused, at most 200000 (a few MiB of
# kernel memory), and holds them 8 s. The host sees it holds them by a process (a
# job's writes to /work are staged until it ends, issue 26: a file it
# made would not show on the host while it runs).
HOSTILE = r"""
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
ino = 0
while ino < 1000 and libc.inotify_init1(0) >= 0:
    ino += 1
ino_errno = ctypes.get_errno()
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
tid = ctypes.c_void_p()
timers = 0
while timers < 128 and libc.timer_create(1, None, ctypes.byref(tid)) == 0:
    timers += 1
sig = 0
me = os.getpid()
while sig < 200000 and libc.sigqueue(me, int(signal.SIGRTMIN), None) == 0:
    sig += 1
sig_errno = ctypes.get_errno()
print(f"inotify={ino} {ino_errno} signals={sig} {sig_errno} "
      f"timers={timers}", flush=True)
# Says it holds them by a child whose command line carries the mark
# (built here, absent from this command line); the parent keeps holding.
if os.fork() == 0:
    os.execvp("sh", ["sh", "-c", "sleep 8", "{MARK}" + "-" + "held"])
time.sleep(8)
"""

# Run on the host as the uid the job is charged to: one inotify instance
# and one timer, or the errno that refused each.
HOST_PROBE = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
ino = "ok" if fd >= 0 else f"errno {ctypes.get_errno()}"
tid = ctypes.c_void_p()
t = libc.timer_create(1, None, ctypes.byref(tid))
tim = "ok" if t == 0 else f"errno {ctypes.get_errno()}"
print(f"inotify={ino} timer={tim}")
"""

MQUEUE = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("pad", ctypes.c_long * 4)]
libc.mq_open.restype = ctypes.c_int
def try_open(name, n, size):
    a = Attr(0, n, size, 0)
    fd = libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(a))
    return "ok" if fd >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
print(f"big={try_open(b'/stockade-big', 10, 8192)} "
      f"small={try_open(b'/stockade-small', 4, 1024)}")
"""


class User:
    """Who runs stockade: PREFIX before its argv, BIN the binary; HOST
    the prefix that runs a host process as the uid its jobs are charged
    to: the caller's own, root's for a root caller too (the jail's user
    namespace is the launcher's, and its ucounts are charged up the
    chain to its owner's: kernel/ucount.c), though the job runs as host
    uid 65534 there."""

    def __init__(self, label, prefix, binary):
        self.label = label
        self.prefix = prefix
        self.bin = binary
        self.host = prefix


def workspace(cleanup):
    d = tempfile.mkdtemp(prefix="stockade-quota-", dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    ws = os.path.join(d, "ws")
    os.mkdir(ws)
    if os.geteuid() == 0:
        os.chown(d, NOBODY, NOBODY)
        os.chown(ws, NOBODY, NOBODY)
    return ws


def host_probe(user):
    out = subprocess.run(user.host + [sys.executable, "-c", HOST_PROBE],
                         capture_output=True, text=True, timeout=30,
                         check=True).stdout.strip()
    return out


def hostile_job(user, cleanup):
    """The hostile job holds what it took while the host probe runs."""
    ws = workspace(cleanup)
    before = host_probe(user)
    mark = f"stockade-quota-{os.getpid()}-{time.time_ns()}"
    code = HOSTILE.replace("{MARK}", mark)
    p = subprocess.Popen(user.prefix + [user.bin, "run", "--json",
                                        "--workspace", ws, "--timeout", "30",
                                        "--", "python3", "-c", code],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, cwd="/")
    try:
        deadline = time.monotonic() + START_S
        while not alive_with(mark + "-held"):
            if p.poll() is not None or time.monotonic() > deadline:
                out, err = p.communicate(timeout=30)
                raise AssertionError("the job never held its quotas: "
                                     + (out + err).decode()[-1500:])
            time.sleep(0.05)
        during = host_probe(user)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    after = host_probe(user)
    save_result(out)
    res = json.loads(out)
    m = re.search(r"inotify=(\d+) (\d+) signals=(\d+) (\d+) timers=(\d+)",
                  res.get("stdout", ""))
    if m is None:
        raise AssertionError(f"the job printed no counts: {out[-1500:]!r}")
    ino, sig, timers = int(m.group(1)), int(m.group(3)), int(m.group(5))
    figures = (f"job took {ino} inotify instances, {sig} queued signals, "
               f"{timers} timers; host before: {before}; during: "
               f"{during}; after: {after}")
    diag(f"{user.label}: {figures}")
    if during != "inotify=ok timer=ok":
        raise AssertionError(f"the host user lost a quota to the job: "
                             f"{figures}")
    if ino > JAIL_INOTIFY_INSTANCES:
        raise AssertionError(f"more inotify instances than the jail's "
                             f"{JAIL_INOTIFY_INSTANCES}: {figures}")
    if sig + timers > JAIL_SIGPENDING:
        raise AssertionError(f"more pending signals and timers than "
                             f"RLIMIT_SIGPENDING {JAIL_SIGPENDING}: "
                             f"{figures}")
    return figures


def mqueue(user, cleanup):
    ws = workspace(cleanup)
    r = subprocess.run(user.prefix + [user.bin, "run", "--json",
                                      "--workspace", ws, "--", "python3",
                                      "-c", MQUEUE],
                       capture_output=True, timeout=120, cwd="/",
                       stdin=subprocess.DEVNULL)
    save_result(r.stdout)
    res = json.loads(r.stdout)
    got = res.get("stdout", "").strip()
    m = re.fullmatch(r"big=(\w+) small=(\w+)", got)
    if m is None or m.group(1) not in ("EMFILE", "EPERM", "ENOSYS",
                                       "EACCES"):
        raise AssertionError(f"RLIMIT_MSGQUEUE 64 KiB: want the 80 KiB "
                             f"queue refused, got {got!r}: "
                             f"{res.get('stderr', '')[-800:]}")
    return got


def descendants_left():
    """Our children, as "comm (state)" strings."""
    me = os.getpid()
    left = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        if int(fields[1]) == me:
            left.append((int(d), f"{comm} ({fields[0]})"))
    return left


def reap_all():
    """Kills and reaps what was left to us, so the next case starts
    clean."""
    for pid, _ in descendants_left():
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


def nothing_left(what):
    # A process still exiting may take a moment; a zombie never goes.
    deadline = time.monotonic() + SETTLE_S
    left = descendants_left()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = descendants_left()
    if left:
        reap_all()
        raise AssertionError(f"{what} left {len(left)} processes to the "
                             f"subreaper: "
                             + ", ".join(s for _, s in left))


def runs_leave_nothing(user, cleanup):
    ws = workspace(cleanup)
    reap_all()
    for _ in range(3):
        r = subprocess.run(user.prefix + [user.bin, "run", "--json",
                                          "--workspace", ws, "--", "true"],
                           capture_output=True, timeout=120, cwd="/",
                           stdin=subprocess.DEVNULL)
        save_result(r.stdout)
        if r.returncode != 0:
            raise AssertionError(f"stockade run ended {r.returncode}: "
                                 f"{r.stderr.decode()[-800:]}")
    nothing_left("3 runs")
    return "3 runs: no zombie, no process left"


def session_leaves_nothing(user, cleanup):
    ws = workspace(cleanup)
    bad = []
    reap_all()
    p = subprocess.Popen(user.prefix + [user.bin, "serve", "--workspace",
                                        ws],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd="/")
    try:
        for i in range(1, 4):
            # The last one in a warm jail: its quotas were set too.
            p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i,
                                       "method": "exec",
                                       "params": {"argv": QUOTA_ARGV}})
                           + "\n").encode())
            p.stdin.flush()
            line = p.stdout.readline()
            if not line:
                raise AssertionError("serve ended without an answer: "
                                     + p.stderr.read().decode()[-800:])
            res = json.loads(line).get("result", {})
            save_result(res)
            got = res.get("stdout", "").split()
            if got != [str(JAIL_INOTIFY_INSTANCES), "0"]:
                bad.append(f"exec {i}: the jail's max_inotify_instances "
                           f"and max_user_namespaces are {got} "
                           f"({res.get('status')}: "
                           f"{res.get('stderr', '')[-300:]!r})")
        # Time for the pool to fill again: warm jails wait at the end.
        time.sleep(1.0)
        waiting = [s for _, s in descendants_left()]
        p.stdin.close()
        rc = p.wait(timeout=60)
        err = p.stderr.read().decode()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if rc != 0:
        raise AssertionError(f"serve ended {rc}: {err[-800:]}")
    try:
        nothing_left("a session with warm jails")
    except AssertionError as e:
        bad.append(str(e))
    if bad:
        raise AssertionError("; ".join(bad))
    return (f"a session of 3 jobs ({len(waiting)} child of ours while it "
            f"ran): no zombie, no process left")


def main():
    cleanup = []
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_CHILD_SUBREAPER")
    users = [User(f"uid {os.geteuid()}", [], STOCKADE)]
    if os.geteuid() == 0:
        users.append(User("uid 65534", SETPRIV,
                          unprivileged_binaries(STOCKADE, cleanup)))
    cases = []
    for u in users:
        cases += [(f"{u.label}: a hostile job leaves the host user an "
                   f"inotify instance and a timer", hostile_job, u),
                  (f"{u.label}: RLIMIT_MSGQUEUE bounds POSIX message "
                   f"queues", mqueue, u),
                  (f"{u.label}: stockade run leaves no zombie",
                   runs_leave_nothing, u),
                  (f"{u.label}: a session with warm jails leaves no "
                   f"zombie", session_leaves_nothing, u)]
    print(f"1..{len(cases)}")
    failed = 0
    try:
        for n, (title, fn, u) in enumerate(cases, 1):
            failed += tap_case(n, title, fn, u, cleanup)
    finally:
        reap_all()
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
