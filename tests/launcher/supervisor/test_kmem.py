#!/usr/bin/env python3
# Kernel memory no process maps, per form, under the /proc monitor (issue
# 23, point 1; docs/layers.md, "Memory the monitor cannot see").
#
# Registered in tests/meson.build as the test 'kmem' (TAP), with
# STOCKADE_BIN (the launcher beside it) and STOCKADE_LIMIT_PROGRAMS (the
# build directory of tests/system/limits/, which holds kmem-pin).
#
# For each form of tests/system/limits/kmem_pin.c (SysV semaphores, POSIX message
# queues, pipe buffers, unix socket queues, inotify watches, epoll
# watches, page tables) one job runs
#     stockade run --json --memory 32 --workspace WS -- /work/kmem-pin FORM /work PROCS MARK:....
# kmem-pin pins what it can and writes its ready line ("FORM OBJECTS
# BYTES WHY") over its last argument, after MARK: (the host reads it in
# /proc/PID/cmdline: a job's files in /work are staged until it ends,
# issue 26, so /work/kmem-ready would not show); while the job holds it,
# the test reads the host's MemAvailable (a diagnostic only: other
# programs on the machine move it by more than the bounds asserted) and
# then lets the job end by SIGUSR1 to that process. Asserted: the job ends ok, under the monitor, and the
# kernel memory kmem-pin holds by its own count of objects times their
# size is within the form's bound for one process (docs/layers.md):
#   sem      0: semget refused (EPERM) under the monitor;
#   mq       64 KiB: RLIMIT_MSGQUEUE, counted per user namespace;
#   pipe     16 processes of open_files (256) pipes each, 64 KiB a pipe
#            (F_SETPIPE_SZ refused): the monitor charges each descriptor
#            past the jail's first 512 64 KiB, so the job ends
#            memory_limit (its detail naming the descriptors), or ok
#            with at most --memory 32 plus the 32 MiB of the 512;
#   socket   --memory 32: SO_SNDBUF refused, and the monitor charges each
#            socket of the jail's network namespace 1.5 x (wmem_default +
#            rmem_default), so the job ends memory_limit (its detail
#            naming the sockets) before its queues pass the limit;
#   inotify  8192 watches (JAIL_INOTIFY_WATCHES) of 1080 bytes;
#   epoll    --memory 32: a watch outlives its descriptor, so no rlimit
#            bounds them (461,280 watches, 88 MiB, on main); the monitor
#            counts the jail's watches (the zygote reads fdinfo) every
#            250 ms at least and charges 200 bytes each, so the job ends
#            memory_limit (its detail naming the epoll watches) or holds
#            at most 32 MiB of them. The test leaves the job 1.5 s past
#            its ready line for that count;
#   pte      --memory 32: the monitor adds each process's VmPTE, so 128 MiB
#            of page tables over no resident page end memory_limit;
#   maps     --memory 32: 6 processes of 60,000 maps (vm.max_map_count is
#            65,530), 360,000 vm_area_structs, 75 MiB by Slab, no
#            resident page; the zygote counts the lines of each
#            /proc/PID/maps with the epoll watches and the monitor
#            charges 220 bytes a map, so the job MUST end memory_limit
#            (its detail naming the memory maps);
#   locks    --memory 32: 3 processes of 80,000 POSIX locks (no rlimit
#            bounds them), 240,000 struct file_lock, 46 MiB by Slab; the
#            zygote counts the "lock:" lines of fdinfo and the monitor
#            charges 200 bytes a lock: the job MUST end memory_limit (its
#            detail naming the file locks).
# Before the maps and locks charge both ended ok: maps 359,994 maps (79
# MiB by count), locks 240,000 locks (46 MiB) (/work/notes/kobj.md).
# One more case: under the monitor fcntl F_OFD_SETLK fails with EPERM (an
# open file description lock stays with its file in flight in a unix
# socket, where no count sees it) while F_SETLK and F_OFD_GETLK work.
# Before the epoll charge the epoll case failed: 465,124 watches, 88.7
# MiB, ok (/work/notes/epoll.md).
# Before the descriptor charge the pipe case failed (87 MiB of pipes held
# and ok under --memory 32; /work/notes/fdcharge.md).
#
# Every case runs as root and as uid 65534 (setpriv; stockade copied
# where 65534 can reach) when the test is root, else as the invoking
# user. Bounds: kmem-pin holds at most 600 MiB even bare, and 8 s; each
# stockade gets --timeout 20 and is killed 60 s after it started.

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, save_result, tap_case,
                           traversable_tmp, unprivileged_binaries)

KiB = 1 << 10
MiB = 1 << 20
OPEN_FILES = 256          # policy/default.ini open_files
FD_FREE = 512             # launcher/supervisor/fdcharge.h FDCHARGE_FREE
SETPRIV = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
           "--clear-groups", "--"]


def wmem_default():
    with open("/proc/sys/net/core/wmem_default", encoding="ascii") as f:
        return int(f.read())


# form -> (bound in bytes for one process, what sets it)
BOUNDS = {
    "sem": (0, "semget refused under the monitor"),
    "mq": (64 * KiB, "RLIMIT_MSGQUEUE 64 KiB"),
    "pipe": (32 * MiB + FD_FREE * 64 * KiB,
             "each descriptor past the jail's first 512 charged 64 KiB to "
             "--memory 32"),
    "socket": (32 * MiB, "each socket charged to --memory 32"),
    "inotify": (8192 * 1080, "user/max_inotify_watches 8192"),
    "epoll": (32 * MiB, "each watch charged 200 B to --memory 32"),
    "pte": (32 * MiB, "VmPTE charged to --memory 32"),
    "maps": (32 * MiB, "each map charged 220 B to --memory 32"),
    "locks": (32 * MiB, "each lock charged 200 B to --memory 32"),
}
# Forms whose bound is the memory limit itself: the monitor charges them,
# and the job ends memory_limit, its detail naming what was charged.
CHARGED = {"socket": "sockets", "pte": "page tables",
           "pipe": "descriptors", "epoll": "epoll watches",
           "maps": "memory maps", "locks": "file locks"}
# Forms whose job must end memory_limit: what kmem-pin holds is past the
# limit by their count.
MUST_STOP = {"maps", "locks"}
# Forms the monitor counts at a low rate: seconds the job is held past
# its ready line before it may end (ENFORCE_KOBJ_MS is 250 ms, longer
# when a count is slow: a fifth of the monitor's time at most).
HOLD = {"epoll": 1.5, "maps": 3, "locks": 3}
# Processes of kmem-pin per form (its PROCS argument): pipes are bounded
# per jail, so many processes try; 16 x 252 pipes is 87 MiB or more
# (past the user's pipe-user-pages-soft a pipe gets 8 KiB).
PROCS = {"pipe": 16, "maps": 6, "locks": 3}


def mem_available():
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * KiB
    raise AssertionError("no MemAvailable in /proc/meminfo")


def ready_line(mark):
    """(pid, ready line split) of the kmem-pin whose argument MARK:... has
    been overwritten with "ready FORM OBJECTS BYTES WHY", or (None, None)."""
    want = (mark + ":ready ").encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        for a in args:
            if a.startswith(want):
                return int(name), a[len(want):].decode("ascii").split()
    return None, None


def one_form(stockade, prefix, env, owner, form, cleanup):
    programs = os.environ.get("STOCKADE_LIMIT_PROGRAMS", "")
    src = os.path.join(programs, "kmem-pin")
    assert os.path.isfile(src), f"{src} is missing (is tests/system/limits built?)"
    ws = tempfile.mkdtemp(prefix="stockade-kmem-ws-", dir=traversable_tmp())
    cleanup.append(ws)
    shutil.copyfile(src, os.path.join(ws, "kmem-pin"))
    os.chmod(os.path.join(ws, "kmem-pin"), 0o755)
    if owner is not None:
        for p in (ws, os.path.join(ws, "kmem-pin")):
            os.chown(p, owner, owner)
    before = mem_available()
    mark = f"stockade-kmem-{os.getpid()}-{time.time_ns()}"
    argv = prefix + [stockade, "run", "--json", "--memory", "32",
                     "--timeout", "20", "--workspace", ws, "--",
                     "/work/kmem-pin", form, "/work",
                     str(PROCS.get(form, 1)), mark + ":" + "." * 120]
    diag("$ " + " ".join(argv))
    proc = subprocess.Popen(argv, cwd="/", env=env,
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    line = None
    during = None
    while time.monotonic() < deadline and proc.poll() is None:
        pid, said = ready_line(mark)
        if pid is not None:
            line = said
            during = mem_available()
            time.sleep(HOLD.get(form, 0))
            try:
                os.kill(pid, signal.SIGUSR1)
            except ProcessLookupError:
                pass
            break
        time.sleep(0.02)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"stockade still running after 60 s: {argv}")
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip(f"a kernel layer stockade needs is missing: "
                   f"{err.decode(errors='replace').strip()}")
    save_result(out, "kmem")
    result = json.loads(out)
    assert result.get("enforcement") == "monitor", \
        f"enforcement {result.get('enforcement')!r}, this machine has no " \
        f"delegated cgroup v2: monitor expected"
    status = result.get("status")
    if form in MUST_STOP:
        assert status == "memory_limit", \
            f"{form}: status {status!r}, memory_limit expected " \
            f"(kmem-pin: {line!r}): {result.get('detail', '')!r}"
    if form in CHARGED and status == "memory_limit":
        assert CHARGED[form] in result.get("detail", ""), \
            f"memory_limit without {CHARGED[form]} in its detail: {result!r}"
    else:
        assert status == "ok", \
            f"status {status!r}: {result.get('stderr', '')!r}"
    if line is None and status == "memory_limit":
        note = (f"{form}: memory_limit before kmem-pin was ready: "
                f"{result.get('detail', '')}")
        diag(note)
        return note
    assert line is not None and len(line) == 4 and line[0] == form, \
        f"kmem-pin wrote no ready line: {line!r}; stdout " \
        f"{result.get('stdout', '')!r}, stderr {result.get('stderr', '')!r}"
    objects, pinned, why = int(line[1]), int(line[2]), line[3]
    bound, source = BOUNDS[form]
    drop = (before - during) / MiB if during is not None else 0.0
    note = (f"{form}: {status}, {objects} objects, {pinned / MiB:.1f} MiB "
            f"by count (stopped: {why}), MemAvailable -{drop:.0f} MiB "
            f"while held; bound {bound / MiB:.1f} MiB ({source})")
    if status == "memory_limit":
        note += f"; {result.get('detail', '')}"
    diag(note)
    if status == "ok":
        assert pinned <= bound, f"{note}: over the bound"
    if form == "sem":
        assert why == "EPERM", f"{note}: semget not refused"
    return note


# An honest job with epoll: three asyncio event loops, each watching the
# same 60 pipes (180 watches, 36 KiB charged) for a second.
ASYNCIO_JOB = """
import asyncio, os, time
pipes = [os.pipe() for _ in range(60)]
loops = [asyncio.new_event_loop() for _ in range(3)]
for loop in loops:
    for r, _ in pipes:
        loop.add_reader(r, lambda: None)
for loop in loops:
    loop.run_until_complete(asyncio.sleep(1.0))
print("watched", 3 * len(pipes))
"""


def honest_asyncio(stockade, prefix, env, owner, cleanup):
    ws = tempfile.mkdtemp(prefix="stockade-kmem-ws-", dir=traversable_tmp())
    cleanup.append(ws)
    if owner is not None:
        os.chown(ws, owner, owner)
    argv = prefix + [stockade, "run", "--json", "--memory", "64",
                     "--timeout", "20", "--workspace", ws, "--",
                     "python3", "-c", ASYNCIO_JOB]
    proc = subprocess.run(argv, cwd="/", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60)
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip(f"a kernel layer stockade needs is missing: "
                   f"{proc.stderr.decode(errors='replace').strip()}")
    result = json.loads(proc.stdout)
    note = (f"asyncio: {result.get('status')}, peak "
            f"{result.get('peak_memory_kb')} KiB, "
            f"{result.get('stdout', '').strip()!r}")
    diag(note)
    assert result.get("status") == "ok", f"{note}: {result!r}"
    assert result.get("stdout", "").strip() == "watched 180", note
    return note


# Under the monitor: an OFD lock refused (EPERM), a POSIX lock and an OFD
# query not (launcher/zygote/seccomp.c).
OFD_JOB = """
import errno, fcntl, os, struct
F_OFD_GETLK = getattr(fcntl, "F_OFD_GETLK", 36)
F_OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", 37)
F_OFD_SETLKW = getattr(fcntl, "F_OFD_SETLKW", 38)
fd = os.open("/tmp/ofd-lock", os.O_RDWR | os.O_CREAT, 0o600)
def lock(cmd, start):
    arg = struct.pack("hhqqi", fcntl.F_WRLCK, 0, start, 1, 0)
    try:
        fcntl.fcntl(fd, cmd, arg)
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print(lock(F_OFD_SETLK, 0), lock(F_OFD_SETLKW, 2), lock(F_OFD_GETLK, 0),
      lock(fcntl.F_SETLK, 4))
"""


def ofd_refused(stockade, prefix, env, owner, cleanup):
    ws = tempfile.mkdtemp(prefix="stockade-kmem-ws-", dir=traversable_tmp())
    cleanup.append(ws)
    if owner is not None:
        os.chown(ws, owner, owner)
    argv = prefix + [stockade, "run", "--json", "--timeout", "20",
                     "--workspace", ws, "--", "python3", "-c", OFD_JOB]
    proc = subprocess.run(argv, cwd="/", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60)
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip(f"a kernel layer stockade needs is missing: "
                   f"{proc.stderr.decode(errors='replace').strip()}")
    result = json.loads(proc.stdout)
    got = result.get("stdout", "").split()
    note = (f"ofd: {result.get('status')}, F_OFD_SETLK F_OFD_SETLKW "
            f"F_OFD_GETLK F_SETLK: {' '.join(got)}")
    diag(note)
    assert result.get("enforcement") == "monitor", note
    assert result.get("status") == "ok", f"{note}: {result!r}"
    assert got == ["EPERM", "EPERM", "ok", "ok"], note
    return note


def main():
    stockade = os.environ.get("STOCKADE_BIN")
    if not stockade:
        print("1..0 # SKIP STOCKADE_BIN not set")
        return 0
    cleanup = []
    users = [("", [], dict(os.environ), None, stockade)]
    if os.geteuid() == 0:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
               "HOME": "/nonexistent"}
        users[0] = ("root", [], dict(os.environ), NOBODY, stockade)
        users.append(("uid 65534", SETPRIV, env, NOBODY,
                      unprivileged_binaries(stockade, cleanup)))
    forms = list(BOUNDS)
    print(f"1..{(len(forms) + 2) * len(users)}")
    failed = 0
    n = 0
    try:
        for label, prefix, env, owner, binary in users:
            for form in forms:
                n += 1
                title = f"{form} under --memory 32 ({label or 'this user'})"
                failed += tap_case(n, title, one_form, binary, prefix, env,
                                   owner, form, cleanup)
            n += 1
            failed += tap_case(n, f"asyncio with 180 epoll watches runs "
                               f"ok ({label or 'this user'})",
                               honest_asyncio, binary, prefix, env, owner,
                               cleanup)
            n += 1
            failed += tap_case(n, f"F_OFD_SETLK refused, F_SETLK works "
                               f"under the monitor ({label or 'this user'})",
                               ofd_refused, binary, prefix, env, owner,
                               cleanup)
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
