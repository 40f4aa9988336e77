#!/usr/bin/env python3
# The hostile workspace, end to end (issue 3, "What it must show").
#
# Registered in tests/meson.build as:
#
#   test('fsattack', python, args : [files('test_fsattack.py')],
#        protocol : 'tap', env : test_env, suite : 'jail',
#        is_parallel : false, timeout : 600)
#
# where test_env sets STOCKADE_BIN (stockade_exe.full_path(); the launcher
# must sit beside it).
#
# In every case THE JAILED PROGRAM ITSELF prepares the attack inside /work
# (`stockade run --workspace WS -- sh -c ...` or python3 -c), and the test
# then drives the broker through every front: the CLI (get, put, ls, stat,
# rm, mkdir, mv) and JSON-RPC (`stockade serve`, docs/protocol.md) on
# standard input/output and on `--socket PATH`, where bulk data travels as
# descriptors (SCM_RIGHTS, socket.send_fds) named by "fd".
#
# Canaries: files outside the workspace, in a directory of their own
# (canary, and x, the name the race below reaches for) and beside the
# workspace in the test's own directory (canary-near, what a relative
# "../" climb reaches). After every case their content, size, mtime,
# inode and mode must be unchanged, their directories must hold nothing
# new, and their content (a random marker) must never appear in any
# output: CLI stdout and stderr, every JSON-RPC answer (raw and base64
# decoded), the files descriptors were passed for. A case that damaged
# them fails, and they are made again so that the next case is judged on
# its own.
#
# Every case runs for every user: as root and as uid 65534 (setpriv, with
# the two binaries copied to a directory 65534 can reach, its own
# workspaces and canaries, the canaries owned by 65534 so that a broker
# that followed a link could really change them) when the test is root;
# as the invoking user otherwise. Workspaces belong to 65534 when the test
# is root (a root broker refuses a root-owned workspace).
#
# Bounds: every child runs with RLIMIT_CORE 0, RLIMIT_CPU 300 s,
# RLIMIT_AS 8 GiB (none in a sanitized build: ASan's shadow memory) and
# RLIMIT_NPROC 1024; every wait has a deadline; jobs
# have --timeout; loops in jobs stop after 20 s at most; the data written
# is a few MiB (the 1 TB file is sparse); the whole run stops starting
# cases after 520 s and reports the rest as not run.
#
# `stockade serve` not built yet (it answers "not built yet"), or a kernel
# without a layer stockade needs (exit 69), is "# SKIP" after the CLI
# checks of the case passed; with STOCKADE_MUST_WORK=1 it is "not ok".
# STOCKADE_TEST_ONLY=WORD runs only the cases whose title holds WORD, and
# STOCKADE_TEST_KEEP=1 keeps the directories (debugging).

import base64
import hashlib
import json
import os
import pwd
import resource
import select
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           wait_marked,
                           remove_all, save_result, tap_fail, tap_skip,
                           traversable_tmp, unprivileged_binaries)

MARK = "CANARY-fsattack-" + os.urandom(8).hex()
CANARY_TEXT = (MARK + "\n").encode()
# Leaks are also looked for base64-encoded: the encoding of a file read
# whole starts with the encoding of its first bytes.
MARK_B64 = base64.b64encode(CANARY_TEXT)[:20]
CLI_TIMEOUT = 60
RUN_TIMEOUT = 90
JOB_SECONDS = 20          # every loop in a job stops after this
N_RACE = 10000            # reads, and as many writes, in the race
BUDGET_SECONDS = 520      # no case starts after this (meson: 600)
MiB = 1 << 20
ERROR_FS = -32001         # docs/protocol.md: file API error


class NotSelected(Exception):
    """A case STOCKADE_TEST_ONLY leaves out: a skip even under
    STOCKADE_MUST_WORK=1 (it is asked for)."""


def check(cond, message):
    """Raises AssertionError(MESSAGE) unless COND; MESSAGE may be a
    function, called only then (for messages that read a pipe)."""
    if not cond:
        raise AssertionError(message() if callable(message) else message)


def bound_child():
    """preexec_fn of every child: no core dumps, CPU time, address space
    and processes bounded (RLIMIT_NPROC counts for the 65534 pass; root is
    exempt)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (300, 300))
    # A sanitized build (the sanitize test setups set STOCKADE_SANITIZE):
    # ASan reserves terabytes of address space for its shadow memory at
    # start, so no address-space bound can hold; the other bounds stay.
    if not os.environ.get("STOCKADE_SANITIZE"):
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    resource.setrlimit(resource.RLIMIT_NPROC, (1024, 1024))


def raw(path):
    return path if isinstance(path, bytes) else path.encode()


def escape(name):
    """The escaped form broker/fs/fsname.c shows (fsname.h): valid UTF-8
    without controls or backslash as is; \\\\, \\n, \\t, \\r, \\e; every
    other control byte and every byte that is not UTF-8 as \\xHH."""
    name = raw(name)
    out = []
    i = 0
    while i < len(name):
        n, ch = 0, None
        for k in (1, 2, 3, 4):
            try:
                s = name[i:i + k].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(s) == 1:
                n, ch = k, s
            break
        cp = ord(ch) if ch is not None else None
        if n and not (cp < 0x20 or 0x7f <= cp <= 0x9f) and cp != 0x5c:
            out.append(ch)
        elif n == 1 and cp in (0x5c, 10, 9, 13, 27):
            out.append({0x5c: "\\\\", 10: "\\n", 9: "\\t", 13: "\\r",
                        27: "\\e"}[cp])
        else:
            out.append("".join(f"\\x{b:02x}" for b in name[i:i + max(n, 1)]))
        i += max(n, 1)
    return "".join(out)


def path_params(path, key="path"):
    """A path in a JSON-RPC request: a string when it is UTF-8, else its
    raw bytes in KEY_b64 (docs/protocol.md, "Paths and names")."""
    b = raw(path)
    try:
        return {key: b.decode("utf-8")}
    except UnicodeDecodeError:
        return {key + "_b64": base64.b64encode(b).decode()}


def entry_raw_path(e):
    """The raw bytes an fs.list entry names: path_b64 when given (and then
    path must be its escaped form), else path (which must be plain)."""
    if "path_b64" in e:
        r = base64.b64decode(e["path_b64"], validate=True)
        check(e["path"] == escape(r),
              f"path {e['path']!r} is not the escaped form of {r!r}")
        return r
    r = e["path"].encode()
    check(escape(r) == e["path"], f"{e['path']!r} is not plain and has no path_b64")
    return r


def no_leak(what, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if MARK.encode() in data or MARK_B64 in data:
        raise AssertionError(f"the canary's content appears in {what}: "
                             f"{data[:300]!r}")


def wait_for(pred, seconds, what):
    deadline = time.monotonic() + seconds
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.005)


def write_with_deadline(fd, data, seconds):
    """Writes DATA to the pipe FD (made non-blocking) within SECONDS."""
    os.set_blocking(fd, False)
    deadline = time.monotonic() + seconds
    view = memoryview(data)
    while view:
        left = deadline - time.monotonic()
        check(left > 0, "the broker stopped reading its input")
        select.select([], [fd], [], left)
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            continue
        view = view[n:]


def drain(fd, seconds):
    """Everything from FD until end of file, within SECONDS."""
    deadline = time.monotonic() + seconds
    chunks = []
    while True:
        left = deadline - time.monotonic()
        check(left > 0, "no end of file on a pipe the broker writes")
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


class Canary:
    def __init__(self, path, owner):
        self.path = path
        with open(path, "wb") as f:
            f.write(CANARY_TEXT)
        os.chmod(path, 0o644)
        if owner is not None:
            os.chown(path, owner, owner)
        self.st = os.stat(path)

    def reset(self):
        """Makes the canary again after a case changed it, so that the
        next case is judged on its own."""
        if os.path.isdir(self.path) and not os.path.islink(self.path):
            shutil.rmtree(self.path, ignore_errors=True)
        elif os.path.lexists(self.path):
            os.unlink(self.path)
        owner = self.st.st_uid if self.st.st_uid != os.geteuid() else None
        self.__init__(self.path, owner)

    def check(self):
        st = os.lstat(self.path)
        check(stat.S_ISREG(st.st_mode), f"{self.path} is no longer a regular file")
        for field in ("st_ino", "st_size", "st_mtime_ns", "st_mode", "st_uid",
                      "st_nlink"):
            check(getattr(st, field) == getattr(self.st, field),
                  f"{self.path}: {field} changed from {getattr(self.st, field)} "
                  f"to {getattr(st, field)}")
        with open(self.path, "rb") as f:
            check(f.read() == CANARY_TEXT, f"{self.path}: content changed")


class Dirs:
    """The directories of one user the broker runs as: temporary
    directories (kept in self.cleanup), host files in self.scratch owned
    by self.run_owner, workspaces in self.base owned by self.ws_owner
    (None: the caller). tests/system/faults_util.py's Host shares them."""

    def _mkdtemp(self, prefix, where, owner):
        d = tempfile.mkdtemp(prefix=prefix, dir=where)
        self.cleanup.append(d)
        os.chmod(d, 0o755)
        if owner is not None:
            os.chown(d, owner, owner)
        return d

    def host_file(self, name, data):
        path = os.path.join(self.scratch, name)
        with open(path, "wb") as f:
            f.write(data)
        if self.run_owner is not None:
            os.chown(path, self.run_owner, self.run_owner)
        return path

    def new_ws(self):
        self.nws += 1
        ws = os.path.join(self.base, f"ws-{self.nws}")
        os.mkdir(ws, 0o700)
        if self.ws_owner is not None:
            os.chown(ws, self.ws_owner, self.ws_owner)
        return ws


class Env(Dirs):
    """One user the broker runs as, with its own directories and canaries."""

    def __init__(self, label, stockade, prefix, env, cleanup):
        self.label = label
        self.stockade = stockade
        self.prefix = prefix
        self.env = env
        self.cleanup = cleanup
        root = os.geteuid() == 0
        self.unpriv_pass = bool(prefix)
        # Who owns what the broker's user must be able to change: the
        # canaries and its scratch directory in the 65534 pass.
        self.run_owner = NOBODY if self.unpriv_pass else None
        self.ws_owner = NOBODY if root else None
        tmp = traversable_tmp()
        # The test's own directory: the workspaces and canary-near.
        self.base = self._mkdtemp("stockade-fsattack-", tmp, self.run_owner)
        # Outside: the canaries' own directory.
        self.outside = self._mkdtemp("stockade-canary-", tmp, self.run_owner)
        # Host files of the CLI and descriptors, policies, sockets.
        self.scratch = self._mkdtemp("stockade-fsattack-host-", tmp,
                                     self.run_owner)
        self.canary = Canary(os.path.join(self.outside, "canary"), self.run_owner)
        self.canary_x = Canary(os.path.join(self.outside, "x"), self.run_owner)
        self.near = Canary(os.path.join(self.base, "canary-near"), self.run_owner)
        self.canaries = [self.canary, self.canary_x, self.near]
        self.nws = 0
        self.nsock = 0
        self.serve_state = None   # None: unknown; True; or a Skip reason
        self.src = self.host_file("src", b"attack-data\n")
        self.pol_limit1 = self.host_file("limit1.ini", b"[files]\nmax_file_mb = 1\n")
        self.pol_files5000 = self.host_file("files5000.ini", b"[files]\nmax_files = 5000\n")
        self.pol_hard = self.host_file("hard.ini", b"[files]\nallow_hardlinks = true\n")
        self.pol_bigjob = self.host_file("bigjob.ini",
                                         b"[limits]\nfile_size_mb = 1048576\n")


    def up_to_root(self, ws):
        """The relative path from the directory WS up to / ("../../..")."""
        return "/".join([".."] * len(os.path.abspath(ws).strip("/").split("/")))

    def reset_canaries(self):
        for c in self.canaries:
            c.reset()
        for d, keep in ((self.outside, lambda n: n in ("canary", "x")),
                        (self.base, lambda n: n == "canary-near" or
                         n.startswith("ws-"))):
            for name in os.listdir(d):
                if not keep(name):
                    path = os.path.join(d, name)
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.unlink(path)

    def check_canaries(self):
        for c in self.canaries:
            c.check()
        got = sorted(os.listdir(self.outside))
        check(got == ["canary", "x"], f"{self.outside} now holds {got}")
        for name in os.listdir(self.base):
            check(name == "canary-near" or name.startswith("ws-"),
                  f"{self.base} gained {name!r}")

    # --- the CLI -------------------------------------------------------

    def cli(self, args, stdin=subprocess.DEVNULL, timeout=CLI_TIMEOUT):
        argv = self.prefix + [self.stockade] + list(args)
        p = subprocess.run(argv, stdin=stdin, capture_output=True, env=self.env,
                           cwd="/", timeout=timeout, preexec_fn=bound_child)
        if p.returncode == EXIT_NO_KERNEL_LAYER:
            raise Skip("stockade refused, the kernel lacks a layer: "
                       + p.stderr.decode("utf-8", "replace").strip())
        what = "stockade " + " ".join(repr(a) for a in args)
        no_leak(f"the stdout of {what}", p.stdout)
        no_leak(f"the stderr of {what}", p.stderr)
        return p

    def cli_ok(self, args, **kw):
        p = self.cli(args, **kw)
        check(p.returncode == 0, f"stockade {shlex.join(map(str, args))}: exit "
              f"{p.returncode}: {p.stderr.decode('utf-8', 'replace')}")
        return p

    def cli_error(self, args, path, name, **kw):
        p = self.cli(args, **kw)
        want = f"stockade: {escape(path)}: {name}: "
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 1 and want in err,
              f"stockade {args[0]} {raw(path)!r}: want exit 1 and {want!r}, got "
              f"exit {p.returncode}: {err!r}")
        check(b"\x1b" not in p.stderr and b"\x07" not in p.stderr,
              f"a raw control character in the message: {p.stderr!r}")
        return p

    def job(self, ws, script, policy=None, python=False, timeout=RUN_TIMEOUT):
        """Runs SCRIPT (sh -c, or python3 -c) in a job on WS; returns its
        stdout. The job must succeed."""
        argv = ["run", "--workspace", ws, "--timeout", str(timeout - 10)]
        if policy:
            argv += ["--policy", policy]
        argv += ["--", "python3", "-c", script] if python else ["--", "sh", "-c", script]
        p = self.cli(argv, timeout=timeout)
        check(p.returncode == 0, f"the job failed (exit {p.returncode}):\n"
              f"{p.stdout.decode('utf-8', 'replace')}\n"
              f"{p.stderr.decode('utf-8', 'replace')}")
        return p.stdout

    def job_background(self, ws, script, policy=None):
        argv = self.prefix + [self.stockade, "run", "--workspace", ws,
                              "--timeout", str(JOB_SECONDS + 30)]
        if policy:
            argv += ["--policy", policy]
        argv += ["--", "python3", "-c", script]
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=self.env, cwd="/", preexec_fn=bound_child)

    # --- JSON-RPC --------------------------------------------------------

    def serve(self, ws, policy=None, sock=False):
        if isinstance(self.serve_state, str):
            raise Skip(self.serve_state)
        s = Session(self, ws, policy, sock)
        self.serve_state = True
        return s

    def sessions(self, ws, policy=None):
        """A stdio session and a socket session on WS."""
        a = self.serve(ws, policy)
        try:
            b = self.serve(ws, policy, sock=True)
        except BaseException:
            a.close()
            raise
        return [a, b]


class Session:
    """One `stockade serve` session, on its standard streams or, with
    SOCK, on a unix socket it creates."""

    def __init__(self, env, ws, policy, sock):
        self.env = env
        self.errf = tempfile.TemporaryFile()
        argv = env.prefix + [env.stockade, "serve", "--workspace", ws]
        if policy:
            argv += ["--policy", policy]
        self.sock = None
        self.path = None
        if sock:
            env.nsock += 1
            self.path = os.path.join(env.scratch, f"sock-{env.nsock}")
            argv += ["--socket", self.path]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL if sock else subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.errf, env=env.env, cwd="/",
            preexec_fn=bound_child)
        self.buf = b""
        self.next_id = 1
        self.closed = False
        try:
            if sock:
                self.sock = self.connect()
                self.rfd = self.sock.fileno()
            else:
                self.rfd = self.proc.stdout.fileno()
        except BaseException:
            self.kill()
            raise

    def connect(self):
        deadline = time.monotonic() + 10
        while True:
            if self.proc.poll() is not None:
                self.died()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.path)
                return s
            except (FileNotFoundError, ConnectionRefusedError):
                s.close()
                check(time.monotonic() < deadline,
                      f"stockade serve --socket {self.path}: no socket after 10 s")
                time.sleep(0.01)

    def stderr(self):
        self.errf.seek(0)
        return self.errf.read().decode("utf-8", "replace")

    def died(self):
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
        err = self.stderr()
        if "not built yet" in err:
            self.env.serve_state = "stockade serve is not built yet"
            raise Skip(self.env.serve_state)
        if rc == EXIT_NO_KERNEL_LAYER:
            raise Skip("stockade serve refused, the kernel lacks a layer: " + err)
        raise AssertionError(f"stockade serve ended (exit {rc}): {err}")

    def send(self, data, fds=()):
        if self.sock is not None:
            if fds:
                n = socket.send_fds(self.sock, [data], list(fds))
                check(n == len(data), "a short sendmsg")
            else:
                self.sock.sendall(data)
        else:
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except BrokenPipeError:
                self.died()

    def recv_line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            check(left > 0, f"no answer from stockade serve in {timeout} s")
            r, _, _ = select.select([self.rfd], [], [], left)
            if not r:
                continue
            b = self.sock.recv(1 << 20) if self.sock is not None else \
                os.read(self.rfd, 1 << 20)
            if not b:
                self.died()
            self.buf += b
            check(len(self.buf) < 64 * MiB, "an answer line over 64 MiB")
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        return rid, (json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                                 "params": params}) + "\n").encode()

    def answer(self, rid, line, what):
        no_leak(what, line)
        check(not any(b < 0x20 for b in line),
              f"a raw control byte in an answer line: {line[:200]!r}")
        msg = json.loads(line)
        check(msg.get("jsonrpc") == "2.0" and msg.get("id") == rid,
              f"answer out of order or not JSON-RPC 2.0: {line[:300]!r}")
        res = msg.get("result")
        if isinstance(res, dict) and isinstance(res.get("data"), str):
            no_leak(what + " (data decoded)", base64.b64decode(res["data"]))
        return msg

    def call(self, method, params, fds=(), timeout=30):
        rid, line = self.request(method, params)
        self.send(line, fds)
        return self.answer(rid, self.recv_line(timeout),
                           f"the answer to {method} {params}")

    def call_many(self, reqs, chunk=50, timeout=60):
        """Many requests, CHUNK at a time in one write (within a pipe's
        buffer either way), answers in order."""
        out = []
        for i in range(0, len(reqs), chunk):
            part = [self.request(m, p) for m, p in reqs[i:i + chunk]]
            self.send(b"".join(line for _, line in part))
            for rid, _ in part:
                out.append(self.answer(rid, self.recv_line(timeout), "an answer"))
        return out

    def result(self, method, params, fds=()):
        msg = self.call(method, params, fds)
        check("result" in msg, f"{method} {params}: {msg.get('error')}")
        if method == "exec":
            save_result(msg["result"])
        return msg["result"]

    def error(self, method, params, want, fds=()):
        msg = self.call(method, params, fds)
        err = msg.get("error")
        got = None
        if isinstance(err, dict) and isinstance(err.get("data"), dict):
            got = err["data"].get("error")
        check(err is not None and err.get("code") == ERROR_FS and got == want,
              f"{method} {params} over {'socket' if self.sock else 'stdio'}: "
              f"want {want}, got {msg}")
        return msg

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        self.closed = True

    def close(self):
        """Ends the session: end of input, or SIGTERM for a socket; it
        must exit 0 (docs/protocol.md)."""
        if self.closed:
            return
        self.closed = True
        if self.sock is not None:
            self.sock.close()
            self.proc.send_signal(signal.SIGTERM)
        else:
            self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("stockade serve did not end within 30 s")
        self.proc.stdout.close()
        err = self.stderr()
        no_leak("the stderr of stockade serve", err)
        check(rc == 0, f"stockade serve exited {rc}: {err}")


def close_all(sessions):
    for s in sessions:
        s.close()


# --- probes: one operation through every front ------------------------------

def probe_read(env, ws, path, want, sessions, policy=None):
    """A read of PATH fails with WANT everywhere: CLI to stdout and to a
    host file, JSON-RPC inline and into a descriptor."""
    pol = ["--policy", policy] if policy else []
    p = env.cli_error(["get", "--workspace", ws] + pol + [path, "-"], path, want)
    check(p.stdout == b"", f"get {path!r} wrote {p.stdout[:100]!r}")
    dest = os.path.join(env.scratch, "got")
    env.cli_error(["get", "--workspace", ws] + pol + [path, dest], path, want)
    left = [n for n in os.listdir(env.scratch) if n.startswith("got")]
    check(not left, f"a failed get left {left}")
    for s in sessions:
        s.error("fs.read", path_params(path), want)
        if s.sock is not None:
            with tempfile.TemporaryFile(dir=env.scratch) as f:
                s.error("fs.read", dict(path_params(path), fd=0), want,
                        fds=[f.fileno()])
                check(os.fstat(f.fileno()).st_size == 0,
                      "a refused read wrote into the descriptor")


def probe_write(env, ws, path, want, sessions, overwrite=False, policy=None):
    """A write of PATH fails with WANT everywhere: CLI put from a host
    file, JSON-RPC inline and from a descriptor."""
    pol = ["--policy", policy] if policy else []
    ow = ["--overwrite"] if overwrite else []
    env.cli_error(["put", "--workspace", ws] + pol + ow + [env.src, path], path, want)
    for s in sessions:
        s.error("fs.write", dict(path_params(path), text="attack-data\n",
                                 overwrite=overwrite), want)
        if s.sock is not None:
            with open(env.src, "rb") as f:
                s.error("fs.write", dict(path_params(path), fd=0,
                                         overwrite=overwrite), want,
                        fds=[f.fileno()])


def no_temporaries(ws):
    """No temporary names anywhere in WS (never following a link)."""
    for top, dirs, files in os.walk(ws):
        for n in dirs + files:
            check(not n.startswith(".stockade-tmp-"),
                  f"a temporary name was left: {os.path.join(top, n)}")


def ls_json(env, ws, *args, policy=None):
    pol = ["--policy", policy] if policy else []
    p = env.cli_ok(["ls", "--workspace", ws, "--json"] + pol + list(args))
    check(p.stdout.count(b"\n") == 1, "ls --json is not one line")
    return json.loads(p.stdout)


# --- the cases ----------------------------------------------------------------

def case_links_out(env):
    """Absolute, relative (../), chained, parent-directory, /proc/self/root
    and /proc/self/fd links: every read and write fails with its named
    error, and nothing outside changes."""
    ws = env.new_ws()
    c, d = env.canary.path, env.outside
    up = env.up_to_root(ws)
    env.job(ws, "set -e; cd /work; "
            f"ln -s {shlex.quote(c)} abs; "
            "ln -s ../canary-near near; "
            "mkdir -p sub/deeper; ln -s ../../../canary-near sub/deeper/climb; "
            f"ln -s {up} up; "
            "ln -s abs chain; "
            f"ln -s {shlex.quote(d)} out; "
            "ln -s /proc/self/root procroot; "
            "ln -s /proc/self/fd/3 fd3; ln -s /proc/self/fd fds; "
            "ln -s /proc/self/cwd cwd")
    before = sorted(e["path"] for e in ls_json(env, ws, "--recursive")["entries"])
    reads = {
        "abs": "symlink_refused", "near": "symlink_refused",
        "sub/deeper/climb": "symlink_refused", "chain": "symlink_refused",
        "up/" + c.lstrip("/"): "symlink_refused",
        "out/canary": "symlink_refused", "out/x": "symlink_refused",
        "procroot": "symlink_refused",
        "procroot/" + c.lstrip("/"): "symlink_refused",
        "fd3": "symlink_refused", "fds/3": "symlink_refused",
        "fds/0": "symlink_refused",
        "cwd/" + c.lstrip("/"): "symlink_refused",
        "../canary-near": "invalid_path", c: "invalid_path",
        "sub/../../canary-near": "invalid_path",
    }
    writes = {
        "out/f": "symlink_refused", "out/canary": "symlink_refused",
        "up/" + d.lstrip("/") + "/f": "symlink_refused",
        "procroot/" + d.lstrip("/") + "/f": "symlink_refused",
        "fds/3": "symlink_refused", "sub/deeper/climb/f": "symlink_refused",
        "../canary-near": "invalid_path", "sub/../../f": "invalid_path",
        # The link itself is the target name: taken, never followed.
        "abs": "exists", "near": "exists", "chain": "exists",
        "fd3": "exists", "procroot": "exists", "out": "exists",
    }
    for path, want in reads.items():
        probe_read(env, ws, path, want, [])
    for path, want in writes.items():
        probe_write(env, ws, path, want, [])
    env.check_canaries()
    # The other commands, through the same links.
    for args, path in ((["ls", "out"], "out"), (["ls", "--recursive", "up"], "up"),
                       (["stat", "out/canary"], "out/canary"),
                       (["rm", "out/canary"], "out/canary"),
                       (["rm", "--recursive", "procroot/tmp"], "procroot/tmp"),
                       (["mv", "out/canary", "stolen"], "out/canary"),
                       (["mv", "abs", "out/moved"], "out/moved"),
                       (["mkdir", "out/newdir"], "out/newdir"),
                       (["mkdir", "--parents", "fds/9/x"], "fds/9/x")):
        env.cli_error([args[0], "--workspace", ws] + args[1:], path, "symlink_refused")
    env.check_canaries()

    def rpc():
        sessions = env.sessions(ws)
        try:
            for path, want in reads.items():
                probe_read(env, ws, path, want, sessions)
            for path, want in writes.items():
                probe_write(env, ws, path, want, sessions)
            for s in sessions:
                for method, params in (
                        ("fs.list", {"path": "out"}),
                        ("fs.list", {"path": "up", "recursive": True}),
                        ("fs.stat", {"path": "out/canary"}),
                        ("fs.remove", {"path": "out/canary"}),
                        ("fs.remove", {"path": "procroot/tmp", "recursive": True}),
                        ("fs.rename", {"from": "out/canary", "to": "stolen"}),
                        ("fs.rename", {"from": "abs", "to": "out/moved"}),
                        ("fs.mkdir", {"path": "out/newdir"}),
                        ("fs.mkdir", {"path": "fds/9/x", "parents": True})):
                    s.error(method, params, "symlink_refused")
                # The links are described, never followed.
                st = s.result("fs.stat", {"path": "out"})
                check(st["type"] == "symlink" and st["size"] == len(d),
                      f"fs.stat out: {st}")
        except BaseException:
            close_all_quietly(sessions)
            raise
        close_all(sessions)

    serve_part(env, rpc)
    after = sorted(e["path"] for e in ls_json(env, ws, "--recursive")["entries"])
    check(after == before, f"the workspace changed: {before} -> {after}")
    env.check_canaries()
    return f"{len(reads)} reads, {len(writes)} writes refused in every front"


def close_all_quietly(sessions):
    for s in sessions:
        try:
            s.kill()
        except Exception:
            pass


def serve_part(env, fn):
    """Runs FN (the JSON-RPC part of a case after its CLI part); a serve
    that is not built yet is a Skip that says the CLI part passed."""
    try:
        return fn()
    except Skip as e:
        raise Skip(f"{e} (the CLI checks passed)")


def job_result(env, ws, script, policy=None, python=False):
    """Runs SCRIPT (sh -c, or python3 -c) in a job on WS with --json;
    returns the result (its status must be ok)."""
    argv = ["run", "--json", "--workspace", ws, "--timeout", str(RUN_TIMEOUT - 10)]
    if policy:
        argv += ["--policy", policy]
    argv += ["--", "python3", "-c", script] if python else ["--", "sh", "-c", script]
    p = env.cli(argv, timeout=RUN_TIMEOUT)
    r = json.loads(p.stdout)
    save_result(r)
    check(r["status"] == "ok", f"the job ended {r['status']}: {r.get('hint')}")
    return r


def staged_only(env, script, names, want, policy=None, python=False):
    """A job's writes are staged, then applied through the file API
    (issue 26): a job that makes SCRIPT's entries (FIFOs, hard links, a
    sparse terabyte, a tree past max_depth) in a fresh workspace leaves
    NAMES out of it, its result's workspace object as WANT says (a
    subset of its keys). Returns that object."""
    ws = env.new_ws()
    w = job_result(env, ws, script, policy, python)["workspace"]
    for key, value in want.items():
        check(w.get(key) == value, f"workspace.{key} {w.get(key)!r}, want "
              f"{value!r}: {w}")
    for n in names:
        check(not os.path.lexists(os.path.join(ws, n)),
              f"the job's {n} reached the workspace")
    env.check_canaries()
    return w


def host_plant(env, ws, script, python=False):
    """Runs SCRIPT on the host, in WS ("/work" in it is WS), as the
    workspace's owner: what a job can no longer leave in a workspace
    (staged_only), a host program can, and the file API must still meet
    it safely."""
    script = script.replace("/work", ws)
    owner = env.ws_owner

    def drop():
        bound_child()
        if owner is not None:
            os.setgroups([])
            os.setgid(owner)
            os.setuid(owner)
    argv = ["python3", "-c", script] if python else ["sh", "-c", script]
    p = subprocess.run(argv, cwd=ws, capture_output=True, timeout=CLI_TIMEOUT,
                       preexec_fn=drop)
    check(p.returncode == 0, f"planting failed: {p.stderr!r}")


def case_planted_target(env):
    """A write whose target name is a planted symlink (to the canary, to
    its directory, to /proc/self/fd/1, a chain) or FIFO: without overwrite
    it is `exists`; with it, a new regular file takes the name and the link
    is never written through."""
    ws = env.new_ws()
    # A job's FIFO is never applied to the workspace (issue 26: the
    # file API makes no FIFO); its symlinks are. The FIFO is the host's.
    env.job(ws, "set -e; cd /work; "
            f"ln -s {shlex.quote(env.canary.path)} t_abs; "
            f"ln -s {shlex.quote(env.outside)} t_dir; "
            "ln -s /proc/self/fd/1 t_fd; ln -s t_abs t_chain; "
            "ln -s ../canary-near t_near; mkfifo t_fifo; "
            "ln -s x t_dangling")
    check(not os.path.lexists(os.path.join(ws, "t_fifo")),
          "the job's FIFO reached the workspace")
    host_plant(env, ws, "mkfifo /work/t_fifo")
    names = ["t_abs", "t_dir", "t_fd", "t_chain", "t_near", "t_fifo", "t_dangling"]

    def landed(name, content):
        st = os.lstat(os.path.join(ws, name))
        check(stat.S_ISREG(st.st_mode), f"{name} is not a regular file now")
        if env.ws_owner is not None:
            check(st.st_uid == env.ws_owner, f"{name} belongs to uid {st.st_uid}")
        with open(os.path.join(ws, name), "rb") as f:
            check(f.read() == content, f"{name}: wrong content")
        env.check_canaries()

    for n in names:
        env.cli_error(["put", "--workspace", ws, env.src, n], n, "exists")
    env.check_canaries()
    env.cli_ok(["put", "--workspace", ws, "--overwrite", env.src, "t_abs"])
    landed("t_abs", b"attack-data\n")
    env.cli_ok(["put", "--workspace", ws, "--overwrite", "-", "t_near"],
               stdin=open(env.src, "rb"))
    landed("t_near", b"attack-data\n")
    env.cli_ok(["put", "--workspace", ws, "--overwrite", env.src, "t_dangling"])
    landed("t_dangling", b"attack-data\n")
    check(not os.path.lexists(os.path.join(ws, "x")), "written through t_dangling")

    def rpc():
        stdio, sock = env.sessions(ws)
        try:
            for n in ("t_dir", "t_fd", "t_chain", "t_fifo"):
                stdio.error("fs.write", {"path": n, "text": "rpc\n"}, "exists")
                with open(env.src, "rb") as f:
                    sock.error("fs.write", {"path": n, "fd": 0}, "exists",
                               fds=[f.fileno()])
            r = stdio.result("fs.write", {"path": "t_dir", "text": "rpc\n",
                                          "overwrite": True})
            check(r.get("size") == 4, f"fs.write: {r}")
            landed("t_dir", b"rpc\n")
            stdio.result("fs.write", {"path": "t_chain", "data":
                                      base64.b64encode(b"b64\n").decode(),
                                      "overwrite": True})
            landed("t_chain", b"b64\n")
            for n in ("t_fd", "t_fifo"):
                with open(env.src, "rb") as f:
                    t0 = time.monotonic()
                    sock.result("fs.write", {"path": n, "fd": 0, "overwrite": True},
                                fds=[f.fileno()])
                    check(time.monotonic() - t0 < 10, f"{n}: the write blocked")
                landed(n, b"attack-data\n")
        except BaseException:
            close_all_quietly([stdio, sock])
            raise
        close_all([stdio, sock])

    serve_part(env, rpc)
    no_temporaries(ws)
    return "exists without overwrite; a new regular file with it"


RACE_JOB = r"""
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
renameat2 = libc.renameat2
renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int,
                      ctypes.c_char_p, ctypes.c_uint]
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir('/work')
os.mkdir('race')
with open('race/x', 'w') as f:
    f.write('inside\n')
os.symlink(CANARY_DIR, 'other')
# Started: a child whose command line carries the mark (built here).
child = os.fork()
if child == 0:
    os.execvp('sh', ['sh', '-c', 'sleep 600', MARK + '-' + 'up'])
n = 0
end = time.monotonic() + SECONDS
while time.monotonic() < end:
    for _ in range(500):
        if renameat2(AT_FDCWD, b'race', AT_FDCWD, b'other', RENAME_EXCHANGE):
            e = ctypes.get_errno()
            sys.exit('renameat2: ' + os.strerror(e))
        n += 1
# Left for the commit: race the symlink to the canaries' directory,
# other the directory.
if n % 2 == 0:
    renameat2(AT_FDCWD, b'race', AT_FDCWD, b'other', RENAME_EXCHANGE)
    n += 1
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
print(n)
"""


def race_during(s, ws, job, seconds):
    """The serve session S's reads and writes while the race job runs:
    alternately race/x (the job's, never in the workspace while it runs:
    not_found) and host.txt (the host's own). Stops issuing after SECONDS.
    Returns the outcomes and the number of each kind issued."""
    outcomes = {"read": {}, "write": {}}
    host_ok = (b"host\n", b"from-broker\n")
    reqs = {"read": [("fs.read", {"path": "race/x"}),
                     ("fs.read", {"path": "host.txt"})],
            "write": [("fs.write", {"path": "race/x", "text": "from-broker\n",
                                    "overwrite": True}),
                      ("fs.write", {"path": "host.txt", "text": "from-broker\n",
                                    "overwrite": True})]}
    issued = 0
    t0 = time.monotonic()
    while issued < N_RACE and time.monotonic() - t0 < seconds:
        for kind in ("read", "write"):
            for msg in s.call_many(reqs[kind] * 25):
                if "result" in msg:
                    key = "ok"
                    if kind == "read":
                        data = base64.b64decode(msg["result"]["data"])
                        check(data in host_ok, f"a read saw {data[:100]!r}")
                else:
                    key = msg["error"].get("data", {}).get("error", "?")
                outcomes[kind][key] = outcomes[kind].get(key, 0) + 1
        issued += 50
    check(job.poll() is None, "the race job ended before the session's "
          "reads and writes did: they say nothing of its time")
    return outcomes, issued


def case_rename_exchange_race(env):
    """A jailed program swaps a directory and a symlink to the canaries'
    directory with renameat2(RENAME_EXCHANGE) as fast as it can, for
    JOB_SECONDS (bounded by time; its start seen by its child's command
    line). Its writes are staged until it ends (issue 26), so, while it
    runs, a serve session on the workspace meets only the host's own
    content: race/x is not_found to reads and writes (the half the job's
    swaps made is never there), host.txt reads and writes ok. When it
    ends its last state is committed: race the symlink to the canaries'
    directory, other the directory holding x; the workspace holds them as
    names (lstat), and a read or a write through race is
    symlink_refused. No canary is touched at any time."""
    ws = env.new_ws()
    mark = f"stockade-fsattack-race-{os.getpid()}-{time.time_ns()}"
    script = RACE_JOB.replace("CANARY_DIR", repr(env.outside)) \
                     .replace("SECONDS", str(JOB_SECONDS)) \
                     .replace("MARK", repr(mark))

    def rpc():
        s = env.serve(ws)
        job = None
        try:
            s.result("fs.write", {"path": "host.txt", "text": "host\n"})
            job = env.job_background(ws, script)
            wait_marked(mark + "-up", lambda: job.poll() is None, 60,
                        "the race job never started")
            t0 = time.monotonic()
            outcomes, issued = race_during(s, ws, job, JOB_SECONDS / 2)
            elapsed = time.monotonic() - t0
            out, err = job.communicate(timeout=JOB_SECONDS + 30)
            no_leak("the race job's output", out + err)
            check(job.returncode == 0, f"the race job failed: {err.decode()}")
            swaps = int(out.decode().strip() or "0")
            after = {"read": s.call("fs.read", {"path": "race/x"}),
                     "write": s.call("fs.write", {"path": "race/x",
                                                  "text": "from-broker\n",
                                                  "overwrite": True})}
            inside = base64.b64decode(s.result("fs.read", {"path": "other/x"})
                                      ["data"])
        except BaseException:
            s.kill()
            raise
        finally:
            if job is not None and job.poll() is None:
                job.kill()
                job.wait(timeout=30)
        s.close()
        diag(f"race: {swaps} swaps; {issued} reads {outcomes['read']}, "
             f"{issued} writes {outcomes['write']} in {elapsed:.1f} s")
        env.check_canaries()      # first: the worst outcome
        for kind in ("read", "write"):
            check(sum(outcomes[kind].values()) == issued, "answers missing")
            # Half of them race/x (not_found), half host.txt (ok).
            check(outcomes[kind] == {"ok": issued // 2,
                                     "not_found": issued // 2},
                  f"{kind}s during the job answered {outcomes[kind]}")
            err = after[kind].get("error") or {}
            check((err.get("data") or {}).get("error") == "symlink_refused",
                  f"a {kind} of race/x after the commit: {after[kind]}")
        check(swaps > 0, "the job swapped nothing")
        st = os.lstat(os.path.join(ws, "race"))
        check(stat.S_ISLNK(st.st_mode) and
              os.readlink(os.path.join(ws, "race")) == env.outside,
              "race is not the job's symlink to the canaries' directory")
        check(stat.S_ISDIR(os.lstat(os.path.join(ws, "other")).st_mode),
              "other is not the job's directory")
        check(inside == b"inside\n", f"other/x holds {inside!r}")
        with open(os.path.join(ws, "host.txt"), "rb") as f:
            check(f.read() == b"from-broker\n", "host.txt lost the last write")
        env.check_canaries()
        no_temporaries(ws)
        return (f"{swaps} swaps; during: reads {outcomes['read']}, writes "
                f"{outcomes['write']}; after: symlink_refused")

    return rpc()


def case_fifo(env):
    """A FIFO named like the expected output file: read answers
    not_regular_file within 1 s in every front, and the broker answers the
    next request; a write with overwrite replaces it."""
    # A job's FIFOs never reach the workspace (issue 26: they are
    # unapplicable, the file API makes none); a host program's do.
    fifos = "mkfifo /work/out.txt && mkfifo /work/result.json"
    staged_only(env, fifos, ["out.txt", "result.json"],
                {"unapplicable": 2, "committed": 0})
    ws = env.new_ws()
    host_plant(env, ws, fifos)
    for args in (["get", "--workspace", ws, "out.txt", "-"],
                 ["get", "--workspace", ws, "out.txt",
                  os.path.join(env.scratch, "out.txt")]):
        t0 = time.monotonic()
        env.cli_error(args, "out.txt", "not_regular_file")
        dt = time.monotonic() - t0
        check(dt < 1.0, f"get of a FIFO took {dt:.3f} s")
    check(not os.path.exists(os.path.join(env.scratch, "out.txt")), "a host file was made")
    env.cli_error(["put", "--workspace", ws, env.src, "out.txt"], "out.txt", "exists")
    p = env.cli_ok(["ls", "--workspace", ws])
    check(b"p 0" in p.stdout and b" out.txt\n" in p.stdout, p.stdout)

    def rpc():
        stdio, sock = env.sessions(ws)
        try:
            for s in (stdio, sock):
                for fd in (False, True):
                    if fd and s.sock is None:
                        continue
                    t0 = time.monotonic()
                    if fd:
                        with tempfile.TemporaryFile(dir=env.scratch) as f:
                            s.error("fs.read", {"path": "out.txt", "fd": 0},
                                    "not_regular_file", fds=[f.fileno()])
                    else:
                        s.error("fs.read", {"path": "out.txt"}, "not_regular_file")
                    dt = time.monotonic() - t0
                    check(dt < 1.0, f"fs.read of a FIFO took {dt:.3f} s")
                    st = s.result("fs.stat", {"path": "out.txt"})
                    check(st["type"] == "fifo", f"fs.stat: {st}")
            t0 = time.monotonic()
            stdio.result("fs.write", {"path": "result.json", "text": "{}\n",
                                      "overwrite": True})
            check(time.monotonic() - t0 < 10, "the write blocked on the FIFO")
            check(stat.S_ISREG(os.lstat(os.path.join(ws, "result.json")).st_mode),
                  "the FIFO was not replaced")
            check(base64.b64decode(stdio.result("fs.read", {"path": "result.json"})
                                   ["data"]) == b"{}\n", "wrong content")
        except BaseException:
            close_all_quietly([stdio, sock])
            raise
        close_all([stdio, sock])

    serve_part(env, rpc)
    env.check_canaries()
    return "not_regular_file within 1 s everywhere"


def case_hardlink(env):
    """A file with a second hard link: hardlinked_file in every front
    unless the policy allows it; stat says nlink 2."""
    # A job's hard-linked files never reach the workspace (issue 26:
    # both names are unapplicable); a host program's do.
    link = ("set -e; printf 'linked-secret\\n' > /work/orig; "
            "ln /work/orig /work/second")
    staged_only(env, link, ["orig", "second"],
                {"unapplicable": 2, "committed": 0})
    ws = env.new_ws()
    host_plant(env, ws, link)
    for n in ("orig", "second"):
        probe_read(env, ws, n, "hardlinked_file", [])
    p = env.cli_ok(["stat", "--workspace", ws, "--json", "second"])
    check(json.loads(p.stdout)["nlink"] == 2, p.stdout)
    p = env.cli_ok(["get", "--workspace", ws, "--policy", env.pol_hard, "second", "-"])
    check(p.stdout == b"linked-secret\n", p.stdout)

    def rpc():
        sessions = env.sessions(ws)
        try:
            for n in ("orig", "second"):
                probe_read(env, ws, n, "hardlinked_file", sessions)
            check(sessions[0].result("fs.stat", {"path": "orig"})["nlink"] == 2,
                  "fs.stat nlink")
        except BaseException:
            close_all_quietly(sessions)
            raise
        close_all(sessions)
        s = env.serve(ws, policy=env.pol_hard)
        try:
            data = base64.b64decode(s.result("fs.read", {"path": "orig"})["data"])
            check(data == b"linked-secret\n", data)
        except BaseException:
            s.kill()
            raise
        s.close()

    serve_part(env, rpc)
    env.check_canaries()
    return "hardlinked_file; allowed by allow_hardlinks"


def case_sparse_terabyte(env):
    """A sparse file of 10^12 bytes: too_large at once, nothing copied. The
    workspace is then over workspace_mb, so a put into it is
    quota_exceeded; a put of such a file into another one is too_large
    and leaves nothing."""
    size = 10 ** 12
    # A job's sparse terabyte is not applied: the commit refuses it
    # (too_large), nothing is written back (issue 26). A host program's
    # is in the workspace.
    staged_only(env, f"truncate -s {size} /work/huge", ["huge"],
                {"committed": 0, "error": "too_large"}, policy=env.pol_bigjob)
    ws = env.new_ws()
    ws2 = env.new_ws()
    host_plant(env, ws, f"truncate -s {size} /work/huge")
    t0 = time.monotonic()
    probe_read(env, ws, "huge", "too_large", [])
    p = env.cli_ok(["stat", "--workspace", ws, "--json", "huge"])
    check(json.loads(p.stdout)["size"] == size, p.stdout)
    env.cli_error(["put", "--workspace", ws, env.src, "small"], "small",
                  "quota_exceeded")
    host = os.path.join(env.scratch, "huge-host")
    with open(host, "wb") as f:
        f.truncate(size)
    env.cli_error(["put", "--workspace", ws2, host, "in"], "in", "too_large")
    check(os.listdir(ws2) == [], f"a failed put left {os.listdir(ws2)}")
    cli_s = time.monotonic() - t0

    def rpc():
        sessions = env.sessions(ws)
        try:
            probe_read(env, ws, "huge", "too_large", sessions)
            check(sessions[1].result("fs.stat", {"path": "huge"})["size"] == size,
                  "fs.stat size")
            sessions[0].error("fs.write", {"path": "small", "text": "x"},
                              "quota_exceeded")
        except BaseException:
            close_all_quietly(sessions)
            raise
        close_all(sessions)
        s = env.serve(ws2, sock=True)
        try:
            with open(host, "rb") as f:
                s.error("fs.write", {"path": "in", "fd": 0}, "too_large",
                        fds=[f.fileno()])
        except BaseException:
            s.kill()
            raise
        s.close()

    t0 = time.monotonic()
    try:
        serve_part(env, rpc)
    finally:
        os.unlink(host)
    check(os.listdir(ws2) == [], f"a failed put left {os.listdir(ws2)}")
    check(os.listdir(ws) == ["huge"], f"{os.listdir(ws)}")
    env.check_canaries()
    return f"too_large (CLI {cli_s:.2f} s, serve {time.monotonic() - t0:.2f} s)"


GROW_JOB = r"""
import os, signal, time
L = LIMIT
os.chdir('/work')
with open('grow1', 'wb') as f:
    f.write(b'a' * (L - 65536))
    f.flush()
    # Started: a child whose command line carries the mark (built here).
    child = os.fork()
    if child == 0:
        os.execvp('sh', ['sh', '-c', 'sleep 600', MARK + '-' + 'up'])
    while f.tell() < 2 * L:
        f.write(b'b' * 4096)
        f.flush()
        time.sleep(0.001)
# Then grow and shrink grow-loop until the time is up: it is left at
# L + 64 KiB.
n = 0
end = time.monotonic() + SECONDS
while time.monotonic() < end:
    with open('grow-loop', 'wb') as f:
        f.write(b'c' * (L - 65536))
        f.flush()
        for _ in range(32):
            f.write(b'd' * 4096)
            f.flush()
    n += 1
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
print(n)
"""


class HostGrower:
    """A file of the workspace WS, NAME, that the host grows (the file
    API's bound on a file that grows during a read; a job's writes are
    staged until it ends and never grow a file the broker reads)."""

    def __init__(self, env, ws, name, limit):
        self.path = os.path.join(ws, name)
        self.limit = limit
        self.f = open(self.path, "wb")
        if env.ws_owner is not None:
            os.fchown(self.f.fileno(), env.ws_owner, env.ws_owner)
        self.f.write(b"a" * (limit - 65536))
        self.f.flush()

    def go(self):
        """Grows the file to twice the limit, 4 KiB a write."""
        while self.f.tell() < 2 * self.limit:
            self.f.write(b"b" * 4096)
            self.f.flush()
        self.f.close()
        check(os.path.getsize(self.path) >= 2 * self.limit, "the file did not grow")


def grow_cli_round(env, ws, limit):
    """Round 1: `stockade get` into a pipe of a file the host grows, held
    after its first 64 KiB until the file is twice the limit."""
    g = HostGrower(env, ws, "grow1", limit)
    argv = env.prefix + [env.stockade, "get", "--workspace", ws, "--policy",
                         env.pol_limit1, "grow1", "-"]
    get = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env.env, cwd="/",
                           preexec_fn=bound_child)
    try:
        r, _, _ = select.select([get.stdout], [], [], 30)
        check(r, "stockade get wrote nothing in 30 s")
        g.go()
        data = drain(get.stdout.fileno(), 60)
        err = get.stderr.read()
        get.wait(timeout=30)
    finally:
        if get.poll() is None:
            get.kill()
            get.wait()
    check(get.returncode == 0, f"get: {err!r}")
    check(len(data) == limit, f"get returned {len(data)} bytes, the limit is {limit}")
    check(data == b"a" * (limit - 65536) + b"b" * 65536, "get: wrong bytes")


def grow_fd_round(env, ws, sock, limit):
    """Round 2: fs.read into a pipe over the socket, the same way."""
    g = HostGrower(env, ws, "grow2", limit)
    rfd, wfd = os.pipe()
    try:
        rid, line = sock.request("fs.read", {"path": "grow2", "fd": 0})
        sock.send(line, [wfd])
        os.close(wfd)
        wfd = -1
        r, _, _ = select.select([rfd], [], [], 30)
        check(r, "fs.read wrote nothing into the pipe in 30 s")
        g.go()
        got = drain(rfd, 60)
    finally:
        os.close(rfd)
        if wfd >= 0:
            os.close(wfd)
    msg = sock.answer(rid, sock.recv_line(30), "fs.read grow2")
    check("result" in msg, f"fs.read grow2: {msg}")
    check(len(got) == limit and msg["result"].get("size") == limit,
          f"fs.read gave {len(got)} bytes, said {msg['result']}")


def read_loop(env, stdio, sock, path, n, limit):
    """N reads of PATH, inline and into files; the answers counted. A
    read that succeeds returns at most LIMIT bytes, and what it says."""
    counts = {}
    for i in range(n):
        if i % 3 == 2:
            with tempfile.TemporaryFile(dir=env.scratch) as f:
                msg = sock.call("fs.read", {"path": path, "fd": 0},
                                fds=[f.fileno()])
                size = os.fstat(f.fileno()).st_size
                if "result" in msg:
                    check(size == msg["result"]["size"], "size differs")
        else:
            msg = stdio.call("fs.read", {"path": path})
            if "result" in msg:
                size = len(base64.b64decode(msg["result"]["data"]))
                check(size == msg["result"]["size"], "size differs")
        if "result" in msg:
            check(size <= limit, f"a read returned {size} bytes, over {limit}")
            key = "ok"
        else:
            key = msg["error"]["data"]["error"]
        counts[key] = counts.get(key, 0) + 1
    return counts


def grow_job_part(env, ws, stdio, sock, limit):
    """A job grows grow-job past the limit and grows and shrinks
    grow-loop around it: while it runs, neither is in the workspace
    (not_found; the job's writes are staged, issue 26); after its commit
    both are too_large to every front, nothing returned."""
    mark = f"stockade-fsattack-grow-{os.getpid()}-{time.time_ns()}"
    script = GROW_JOB.replace("LIMIT", str(limit)) \
                     .replace("SECONDS", str(JOB_SECONDS // 2)) \
                     .replace("'grow1'", "'grow-job'").replace("MARK", repr(mark))
    job = env.job_background(ws, script)
    try:
        wait_marked(mark + "-up", lambda: job.poll() is None, 60,
                    "the grow job never started")
        during = read_loop(env, stdio, sock, "grow-loop", 150, limit)
        during_cli = env.cli(["get", "--workspace", ws, "--policy",
                              env.pol_limit1, "grow-job", "-"])
        check(job.poll() is None, "the grow job ended before the reads did")
        out, err = job.communicate(timeout=JOB_SECONDS + 30)
        check(job.returncode == 0, f"the job failed: {err.decode()}")
    finally:
        if job.poll() is None:
            job.kill()
            job.wait(timeout=30)
    check(during == {"not_found": 150}, f"reads during the job: {during}")
    check(during_cli.returncode == 1 and b"not_found" in during_cli.stderr,
          f"get during the job: {during_cli.stderr!r}")
    check(os.path.getsize(os.path.join(ws, "grow-job")) == 2 * limit,
          "the job's grow-job was not committed whole")
    for name in ("grow-loop", "grow-job"):
        after = read_loop(env, stdio, sock, name, 30, limit)
        check(after == {"too_large": 30}, f"reads of {name} after the job: {after}")
    env.cli_error(["get", "--workspace", ws, "--policy", env.pol_limit1,
                   "grow-job", "-"], "grow-job", "too_large")
    return f"during the job not_found, after it too_large ({out.decode().strip()} loops)"


def case_growing_file(env):
    """A file that grows while the broker reads it: what is returned is
    never more than the limit (max_file_mb = 1 here). A reader into a pipe
    is held after its first 64 KiB until the file has grown to twice the
    limit, so the growth happens during the read, for certain. A job's
    writes are staged until it ends (issue 26), so the host grows those
    files (CLI, then fs.read with a descriptor); a job that grows its own
    files past the limit is met after: not_found while it runs, too_large
    once committed (grow_job_part)."""
    ws = env.new_ws()
    limit = MiB
    serve_ok = not isinstance(env.serve_state, str)
    notes = []
    grow_cli_round(env, ws, limit)
    notes.append("CLI: exactly the limit")
    if not serve_ok:
        raise Skip(f"{env.serve_state} (the CLI checks passed)")
    sessions = []
    try:
        def rpc():
            sessions.extend(env.sessions(ws, policy=env.pol_limit1))
            stdio, sock = sessions
            grow_fd_round(env, ws, sock, limit)
            notes.append("fd: exactly the limit")
            notes.append(grow_job_part(env, ws, stdio, sock, limit))
        serve_part(env, rpc)
        close_all(sessions)
        sessions = []
    finally:
        close_all_quietly(sessions)
    env.check_canaries()
    return "; ".join(notes)


MANY_JOB = r"""
import os
os.mkdir('/work/many')
for i in range(10000):
    with open('/work/many/f%05d' % i, 'w') as f:
        f.write('x')
"""


def case_many_files(env):
    """10,000 small files: listings with a limit are cut and say so
    (truncated), without one they are whole, in byte-wise order; the
    policy's max_files bounds every listing and refuses new files."""
    ws = env.new_ws()
    env.job(ws, MANY_JOB, python=True)
    names = ["many/f%05d" % i for i in range(10000)]
    p = env.cli_ok(["ls", "--workspace", ws, "--recursive", "--limit", "500"])
    lines = p.stdout.decode().splitlines()
    check(len(lines) == 500, f"{len(lines)} lines")
    check(lines[0].endswith(" many") and lines[0].startswith("d "), lines[0])
    check([ln.rsplit(" ", 1)[1] for ln in lines[1:]] == names[:499], "order")
    check(b"truncated" in p.stderr, p.stderr)
    p = env.cli_ok(["ls", "--workspace", ws, "many"])
    lines = p.stdout.decode().splitlines()
    check([ln.rsplit(" ", 1)[1] for ln in lines] == names, "ls many: not all, or order")
    check(all(ln.startswith("f 0") and " 1 " in ln for ln in lines), lines[0])
    check(b"truncated" not in p.stderr, p.stderr)
    j = ls_json(env, ws, "many")
    check(j["truncated"] is False and [e["path"] for e in j["entries"]] == names,
          "ls --json many")
    j = ls_json(env, ws, "--recursive", "--limit", "9999", policy=env.pol_files5000)
    check(j["truncated"] is True and len(j["entries"]) == 5000,
          f"max_files 5000: {len(j['entries'])} {j['truncated']}")
    env.cli_error(["put", "--workspace", ws, "--policy", env.pol_files5000,
                   env.src, "one-more"], "one-more", "quota_exceeded")

    def rpc():
        sessions = env.sessions(ws)
        try:
            for s in sessions:
                r = s.result("fs.list", {"path": "many", "limit": 500})
                check(r["truncated"] is True and
                      [e["path"] for e in r["entries"]] == names[:500], "limit 500")
                r = s.result("fs.list", {"path": "many"})
                check(r["truncated"] is False and
                      [e["path"] for e in r["entries"]] == names, "whole")
                check(all(e["type"] == "file" and e["size"] == 1 for e in r["entries"]),
                      "entries")
                r = s.result("fs.list", {"path": ".", "recursive": True, "limit": 1000})
                check(r["truncated"] is True and len(r["entries"]) == 1000, "recursive")
        except BaseException:
            close_all_quietly(sessions)
            raise
        close_all(sessions)
        s = env.serve(ws, policy=env.pol_files5000)
        try:
            r = s.result("fs.list", {"path": "many"})
            check(r["truncated"] is True and len(r["entries"]) == 5000,
                  f"max_files 5000: {len(r['entries'])}")
            s.error("fs.write", {"path": "one-more", "text": "x"}, "quota_exceeded")
        except BaseException:
            s.kill()
            raise
        s.close()

    serve_part(env, rpc)
    env.cli_ok(["rm", "--workspace", ws, "--recursive", "many"])
    check(os.listdir(ws) == [], f"left: {os.listdir(ws)[:5]}")
    env.check_canaries()
    return "cut at 500 and at max_files, whole without a limit"


DEEP_JOB = r"""
import os
os.chdir('/work')
for i in range(200):
    os.mkdir('d')
    os.chdir('d')
with open('deep', 'w') as f:
    f.write('bottom\n')
"""


def case_deep_tree(env):
    """A 200-level directory tree: listings stop at max_depth (64), a path
    deeper than that is invalid_path (too deep), and the tree can still be
    removed."""
    # A job's tree is applied to max_depth (64) levels, the rest is
    # unapplicable (issue 26: the stage is read to that depth). A host
    # program's 200 levels are all in the workspace.
    staged_only(env, DEEP_JOB, [], {"committed": 64, "unapplicable": 1},
                python=True)
    ws = env.new_ws()
    host_plant(env, ws, DEEP_JOB, python=True)
    deep = "d/" * 200 + "deep"
    at64 = "/".join(["d"] * 64)
    at65 = at64 + "/d"
    # Listed max_depth (64) levels deep, and said to be cut short.
    j = ls_json(env, ws, "--recursive")
    depths = [e["path"].count("/") + 1 for e in j["entries"]]
    check(depths == list(range(1, 65)), f"levels listed: {depths}")
    check(all(e["type"] == "directory" for e in j["entries"]), "deep is listed")
    check(j["truncated"] is True, "a listing cut at max_depth is not truncated")
    p = env.cli_ok(["ls", "--workspace", ws, "--recursive"])
    lines = p.stdout.decode().splitlines()
    check(len(lines) == 64 and lines[-1].endswith(" " + at64), "ls: depth")
    check(b"truncated" in p.stderr, p.stderr)
    probe_read(env, ws, deep, "invalid_path", [])
    probe_write(env, ws, at65 + "/new", "invalid_path", [])
    env.cli_ok(["stat", "--workspace", ws, at64])
    env.cli_error(["stat", "--workspace", ws, at65], at65, "invalid_path")
    env.cli_error(["mkdir", "--workspace", ws, "--parents", at65], at65, "invalid_path")
    p = env.cli(["get", "--workspace", ws, deep, "-"])
    check(b"deep" in p.stderr.lower() or b"components" in p.stderr, p.stderr)

    def rpc():
        sessions = env.sessions(ws)
        try:
            probe_read(env, ws, deep, "invalid_path", sessions)
            for s in sessions:
                r = s.result("fs.list", {"path": ".", "recursive": True})
                d = [e["path"].count("/") + 1 for e in r["entries"]]
                check(d == list(range(1, 65)) and r["truncated"] is True,
                      f"fs.list: levels {d}, truncated {r['truncated']}")
                s.result("fs.stat", {"path": at64})
                s.error("fs.stat", {"path": at65}, "invalid_path")
                s.error("fs.write", {"path": at65 + "/x", "text": "x"}, "invalid_path")
        except BaseException:
            close_all_quietly(sessions)
            raise
        close_all(sessions)

    serve_part(env, rpc)
    env.cli_ok(["rm", "--workspace", ws, "--recursive", "d"])
    check(os.listdir(ws) == [], f"left: {os.listdir(ws)}")
    env.check_canaries()
    return f"listed to depth {max(depths)}; deeper is invalid_path; removed"


STRANGE = [b"nl\nname", b"esc\x1b]0;title\x07", b"clear\x1b[2J", b"bad\xff\xfe",
           b"n" * 255, b"back\\slash", b"caf\xc3\xa9"]


def case_strange_names(env):
    """Names with a newline, a terminal escape sequence, bytes that are not
    UTF-8, a backslash and 255 bytes: listings and messages show them
    escaped, never raw; JSON carries the raw bytes in path_b64; the raw
    name addresses the file everywhere."""
    ws = env.new_ws()
    made = "; ".join(
        f"open({n!r}, 'wb').write(b'content-{i}\\n')" for i, n in enumerate(STRANGE))
    env.job(ws, "import os; os.chdir(b'/work'); os.mkdir(b'dir\\nx'); "
            "open(b'dir\\nx/inner', 'wb').write(b'inner\\n'); " + made, python=True)
    every = STRANGE + [b"dir\nx", b"dir\nx/inner"]
    p = env.cli_ok(["ls", "--workspace", ws, "--recursive"])
    check(p.stdout.count(b"\n") == len(every), f"lines: {p.stdout!r}")
    for bad in (b"\x1b", b"\x07", b"\xff", b"\xfe"):
        check(bad not in p.stdout, f"raw {bad!r} in ls: {p.stdout!r}")
    for n in every:
        check((" " + escape(n) + "\n").encode() in p.stdout,
              f"{escape(n)!r} not in {p.stdout!r}")
    j = ls_json(env, ws, "--recursive")
    check(sorted(entry_raw_path(e) for e in j["entries"]) == sorted(every),
          "ls --json: names")
    for i, n in enumerate(STRANGE):
        p = env.cli_ok(["get", "--workspace", ws, n, "-"])
        check(p.stdout == f"content-{i}\n".encode(), f"get {n!r}: {p.stdout!r}")
        p = env.cli_ok(["stat", "--workspace", ws, n])
        check(f"path: {escape(n)}\n".encode() in p.stdout, p.stdout)
        check(p.stdout.count(b"\n") == 6, p.stdout)
    env.cli_error(["get", "--workspace", ws, STRANGE[1] + b"/none", "-"],
                  STRANGE[1] + b"/none", "not_a_directory")
    env.cli_error(["get", "--workspace", ws, b"nl\nname\x1b[1m/x", "-"],
                  b"nl\nname\x1b[1m/x", "not_found")
    probe_write(env, ws, "n" * 256, "invalid_path", [])
    probe_read(env, ws, "n" * 256, "invalid_path", [])

    def rpc():
        sessions = env.sessions(ws)
        try:
            for s in sessions:
                r = s.result("fs.list", {"path": ".", "recursive": True})
                check(sorted(entry_raw_path(e) for e in r["entries"]) == sorted(every),
                      "fs.list: names")
                # The CLI's --json is the same object, entry for entry.
                check(r == j, f"ls --json and fs.list differ:\n{j}\n{r}")
                st = s.result("fs.stat", path_params(STRANGE[0]))
                cli = json.loads(env.cli_ok(["stat", "--workspace", ws, "--json",
                                             STRANGE[0]]).stdout)
                check(st == cli, f"stat --json and fs.stat differ: {cli} {st}")
                for i, n in enumerate(STRANGE):
                    got = s.result("fs.read", path_params(n))
                    check(base64.b64decode(got["data"]) == f"content-{i}\n".encode(),
                          f"fs.read {n!r}")
                    check(entry_raw_path(got) == n, f"fs.read path {got}")
                    st = s.result("fs.stat", {"path_b64": base64.b64encode(n).decode()})
                    check(entry_raw_path(st) == n and st["type"] == "file", st)
                s.error("fs.read", {"path": "n" * 256}, "invalid_path")
                s.error("fs.write", {"path": "n" * 256, "text": "x"}, "invalid_path")
                s.error("fs.read", {"path_b64": base64.b64encode(b"bad\xff\xfe/x")
                                    .decode()}, "not_a_directory")
        except BaseException:
            close_all_quietly(sessions)
            raise
        close_all(sessions)

    serve_part(env, rpc)
    env.check_canaries()
    return f"{len(every)} names escaped in every listing"


CLIENT = r"""
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
r, w = os.pipe()
line = (b'{"jsonrpc":"2.0","id":1,"method":"fs.write",'
        b'"params":{"path":"incoming/big3.bin","fd":0}}\n')
socket.send_fds(s, [line], [r])
os.close(r)
os.write(w, b'z' * 65536)
half = b'z' * (1 << 20)
left = memoryview(half)
while left:
    left = left[os.write(w, left):]
print('half', flush=True)
time.sleep(120)
"""


def case_cut_write(env):
    """A write cut off half way leaves no file and no temporary name: the
    CLI's put killed with SIGKILL while it reads a pipe, a serve session
    killed while it copies from a descriptor, a request line cut short
    (a client killed: case_client_killed)."""
    ws = env.new_ws()
    env.job(ws, "mkdir /work/incoming")

    def empty(what):
        left = os.listdir(os.path.join(ws, "incoming"))
        check(left == [], f"{what} left {left}")
        no_temporaries(ws)

    argv = env.prefix + [env.stockade, "put", "--workspace", ws, "-", "incoming/big.bin"]
    put = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=env.env, cwd="/",
                           preexec_fn=bound_child)
    try:
        # Once 1 MiB has gone into the pipe, the broker has read at least
        # 1 MiB - 64 KiB of it: it is copying.
        write_with_deadline(put.stdin.fileno(), b"y" * MiB, 30)
        check(put.poll() is None,
              lambda: "put ended early: " + put.stderr.read().decode())
        put.kill()
        put.wait(timeout=30)
    finally:
        if put.poll() is None:
            put.kill()
            put.wait()
        put.stdin.close()
        put.stderr.close()
    empty("a killed put")
    env.cli_error(["stat", "--workspace", ws, "incoming/big.bin"], "incoming/big.bin",
                  "not_found")

    def rpc():
        notes = []
        # The broker killed while it copies from a pipe it was given.
        s = env.serve(ws, sock=True)
        rfd, wfd = os.pipe()
        try:
            rid, line = s.request("fs.write", {"path": "incoming/big2.bin", "fd": 0})
            s.send(line, [rfd])
            os.close(rfd)
            rfd = -1
            write_with_deadline(wfd, b"y" * MiB, 30)
        finally:
            s.kill()
            for fd in (rfd, wfd):
                if fd >= 0:
                    os.close(fd)
        empty("a killed serve")
        notes.append("serve killed")

        # A request line cut short, then the client gone.
        s = env.serve(ws)
        try:
            line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "fs.write",
                               "params": {"path": "incoming/big4.bin",
                                          "data": base64.b64encode(b"w" * MiB)
                                          .decode()}}).encode()
            s.send(line[:len(line) // 2])
            s.proc.stdin.close()
            s.proc.wait(timeout=30)
            s.closed = True
        except BaseException:
            s.kill()
            raise
        empty("a cut request line")
        notes.append("line cut")
        return ", ".join(notes)

    note = serve_part(env, rpc)
    env.check_canaries()
    return "put killed, " + note


def case_client_killed(env):
    """A client killed (SIGKILL) while the broker copies the data of its
    fs.write from the client's pipe: the pipe's end of file then is not
    the end of the data, and no file may appear (issue 3: "a write cut
    off half way (client killed) leaves no file")."""
    ws = env.new_ws()
    env.job(ws, "mkdir /work/incoming")

    def rpc():
        s = env.serve(ws, sock=True)
        client = subprocess.Popen(env.prefix + ["python3", "-c", CLIENT, s.path],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env.env, cwd="/",
                                  preexec_fn=bound_child)
        try:
            s.sock.close()     # the test's own connection: the client is next
            s.sock = None
            r, _, _ = select.select([client.stdout], [], [], 30)
            check(r and client.stdout.readline() == b"half\n",
                  lambda: "the client did not send half: "
                  + client.stderr.read().decode())
            client.kill()
            client.wait(timeout=30)
            s.sock = s.connect()
            s.rfd = s.sock.fileno()
            s.error("fs.stat", {"path": "incoming/big3.bin"}, "not_found")
        except BaseException:
            s.kill()
            raise
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
            client.stdout.close()
            client.stderr.close()
        s.close()

    serve_part(env, rpc)
    left = os.listdir(os.path.join(ws, "incoming"))
    check(left == [], f"left {left}")
    no_temporaries(ws)
    env.check_canaries()
    return "no file"


def case_changes(env):
    """fs.changes after an exec lists exactly what the job created,
    modified and deleted, with sizes and SHA-256 that hashlib agrees with."""
    ws = env.new_ws()
    env.job(ws, "true")  # the workspace has seen a job (as in the other cases)

    def sha(b):
        return hashlib.sha256(b).hexdigest()

    def rpc():
        s = env.serve(ws)
        try:
            empty = s.result("fs.changes", {})
            check(empty.get("created") == [] and empty.get("modified") == [] and
                  empty.get("deleted") == [], f"before any exec: {empty}")
            old = {"keep.txt": b"keep\n", "mod.txt": b"before\n",
                   "del.txt": b"to be deleted\n", "old/inner.txt": b"inner\n"}
            s.result("fs.mkdir", {"path": "old"})
            for p, data in old.items():
                s.result("fs.write", {"path": p, "data": base64.b64encode(data).decode()})
            res = s.result("exec", {"argv": [
                "sh", "-c",
                "set -e; cd /work; printf 'new file\\n' > new.txt; "
                "printf 'more\\n' >> mod.txt; rm del.txt; mkdir nd; "
                "head -c 100000 /dev/urandom > nd/blob; rm -r old; "
                "ln -s /etc/passwd link"]})
            check(res.get("status") == "ok" and res.get("exit_code") == 0, f"exec: {res}")
            ch = s.result("fs.changes", {})
            check(ch.get("truncated") is False, f"truncated: {ch}")

            def items(kind):
                return {entry_raw_path(e).decode(): e for e in ch.get(kind, [])}

            created, modified, deleted = items("created"), items("modified"), \
                items("deleted")
            check(sorted(created) == ["link", "nd", "nd/blob", "new.txt"],
                  f"created: {sorted(created)}")
            check(sorted(modified) == ["mod.txt"], f"modified: {sorted(modified)}")
            check(sorted(deleted) == ["del.txt", "old", "old/inner.txt"],
                  f"deleted: {sorted(deleted)}")
            for p in ("new.txt", "nd/blob", "mod.txt"):
                with open(os.path.join(ws, p), "rb") as f:
                    data = f.read()
                e = created.get(p) or modified.get(p)
                check(e["type"] == "file" and e["size"] == len(data) and
                      e["sha256"] == sha(data), f"{p}: {e}, want {len(data)} {sha(data)}")
            for p in ("del.txt", "old/inner.txt"):
                e = deleted[p]
                check(e["type"] == "file" and e["size"] == len(old[p]) and
                      e["sha256"] == sha(old[p]), f"{p}: {e}")
            for p, kind in (("nd", created), ("old", deleted)):
                check(kind[p]["type"] == "directory" and kind[p]["sha256"] is None,
                      f"{p}: {kind[p]}")
            check(created["link"]["type"] == "symlink" and
                  created["link"]["sha256"] is None, f"link: {created['link']}")
            # A job that changes nothing: an empty manifest.
            res = s.result("exec", {"argv": ["true"]})
            ch = s.result("fs.changes", {})
            check(ch["created"] == [] and ch["modified"] == [] and ch["deleted"] == [],
                  f"after a job that did nothing: {ch}")
        except BaseException:
            s.kill()
            raise
        s.close()

    serve_part(env, rpc)
    env.check_canaries()
    return "created, modified, deleted exactly; hashes match hashlib"


CASES = [
    ("symlinks out (absolute, ../, chain, parent, /proc/self/root, /proc/self/fd)",
     case_links_out),
    ("a planted symlink or FIFO at a write's target name", case_planted_target),
    ("RENAME_EXCHANGE race on a directory and a symlink", case_rename_exchange_race),
    ("a FIFO named like the output file", case_fifo),
    ("a hard link in the workspace", case_hardlink),
    ("a 1 TB sparse file", case_sparse_terabyte),
    ("a file that grows while it is read", case_growing_file),
    ("10,000 small files", case_many_files),
    ("a 200-level directory tree", case_deep_tree),
    ("names with a newline, an escape sequence, invalid UTF-8, 255 bytes",
     case_strange_names),
    ("a write cut off half way (put or serve killed, a line cut short)",
     case_cut_write),
    ("a client killed while the broker copies its pipe", case_client_killed),
    ("fs.changes after an exec", case_changes),
]


# --- the users ----------------------------------------------------------------

def users(stockade_bin, cleanup):
    """(label, function making its Env or raising Skip)."""
    if os.geteuid() == 0:
        def root_env():
            return Env("as root", stockade_bin, [], dict(os.environ), cleanup)

        def nobody_env():
            if shutil.which("setpriv") is None:
                raise Skip("setpriv not found (util-linux)")
            stockade = unprivileged_binaries(stockade_bin, cleanup)
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                   "HOME": "/nonexistent"}
            prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                      "--clear-groups"]
            return Env(f"as uid {NOBODY}", stockade, prefix, env, cleanup)
        return [("as root", root_env), (f"as uid {NOBODY}", nobody_env)]
    uid = os.getuid()
    try:
        who = pwd.getpwuid(uid).pw_name
    except KeyError:
        who = str(uid)
    return [(f"as {who}", lambda: Env(f"as {who}", stockade_bin, [],
                                      dict(os.environ), cleanup))]


def main():
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    start = time.monotonic()
    # The test itself: no core dumps, bounded address space.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cleanup = []
    plan = users(stockade_bin, cleanup)
    # STOCKADE_TEST_ONLY=WORD runs only the cases whose title holds WORD
    # (debugging; the plan still counts every case).
    only = os.environ.get("STOCKADE_TEST_ONLY", "")
    print(f"1..{len(plan) * len(CASES)}")
    if os.geteuid() != 0:
        diag("not root: every case runs once, as the invoking user; run as root "
             "to also test root and uid 65534")
    failed = 0
    number = 0
    try:
        for label, make in plan:
            env, env_error = None, None
            try:
                if not stockade_bin or not os.access(stockade_bin, os.X_OK):
                    raise AssertionError(f"STOCKADE_BIN={stockade_bin!r} is not an "
                                         "executable (set by tests/meson.build)")
                free = shutil.disk_usage(traversable_tmp()).free
                if free < 2 << 30:
                    raise Skip(f"less than 2 GiB free in {traversable_tmp()}")
                env = make()
            except (Skip, AssertionError, OSError) as exc:
                env_error = exc
            for name, fn in CASES:
                number += 1
                title = f"{label}: {name}"
                try:
                    if only and only not in name:
                        raise NotSelected(f"STOCKADE_TEST_ONLY={only}")
                    if env_error is not None:
                        raise env_error
                    if time.monotonic() - start > BUDGET_SECONDS:
                        raise AssertionError(f"not run: the test's {BUDGET_SECONDS} s "
                                             "budget is spent")
                    t0 = time.monotonic()
                    note = fn(env)
                    env.check_canaries()
                    print(f"ok {number} - {title} ({note}; "
                          f"{time.monotonic() - t0:.1f} s)")
                except NotSelected as exc:
                    print(f"ok {number} - {title} # SKIP {exc}")
                except Skip as exc:
                    failed += tap_skip(number, title, exc)
                except (AssertionError, OSError, ValueError, KeyError, TypeError,
                        subprocess.SubprocessError) as exc:
                    failed += 1
                    tap_fail(number, title, exc)
                    if env is not None:
                        try:
                            env.check_canaries()
                        except AssertionError as damage:
                            diag(f"canaries made again for the next case ({damage})")
                            env.reset_canaries()
                sys.stdout.flush()
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
