# The helpers of test_faults_io.py (issue 10, item 3): who runs the
# broker and where its binaries are (Ctx: as root, or as uid 65534 with
# setpriv and the binaries copied to a 0755 directory), one `stockade
# serve` session on a socketpair or --socket (Session), and the checks of
# a workspace (listing, no_temporaries). Imported from beside the test
# script: python puts a script's own directory first on sys.path.

import hashlib
import io
import json
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
import threading
import time

from stockade_test import NOBODY, save_result, traversable_tmp

AS_USER = os.environ.get("STOCKADE_TEST_AS_USER", "")
KiB, MiB = 1 << 10, 1 << 20
ANSWER_TIMEOUT = 30
ERROR_FS, ERROR_JOB, ERROR_INTERNAL = -32001, -32002, -32603


def check(cond, message):
    if not cond:
        raise AssertionError(message() if callable(message) else message)


def bound_child():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (120, 120))


def pattern(n, seed):
    """N bytes that differ from any other SEED's."""
    block = hashlib.sha256(seed.encode()).digest()
    return (block * (n // len(block) + 1))[:n]


def tar_of(members):
    """An uncompressed pax archive of MEMBERS [(name, bytes)]."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 1700000000
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


class Ctx:
    """Who runs the broker and where its files are."""

    def __init__(self, cleanup):
        self.cleanup = cleanup
        self.root = os.geteuid() == 0
        self.nobody = AS_USER == str(NOBODY)
        check(not self.nobody or self.root,
              "STOCKADE_TEST_AS_USER=65534 needs the test to run as root")
        self.base = self.mkdtemp("stockade-faults-io-")
        self.owner = NOBODY if self.root else None
        self.prefix = (["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                        "--clear-groups"] if self.nobody else [])
        self.env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                    "HOME": "/nonexistent"}
        static = os.environ.get("STOCKADE_BIN", "")
        dynamic = os.environ.get("STOCKADE_DYNAMIC_BIN", "")
        shim = os.environ.get("STOCKADE_FAULTSHIM", "")
        for what, path in (("STOCKADE_BIN", static),
                           ("STOCKADE_DYNAMIC_BIN", dynamic),
                           ("STOCKADE_FAULTSHIM", shim)):
            check(path and os.path.isfile(path),
                  f"{what}={path!r} is not a file (tests/meson.build sets it)")
        launcher = os.path.join(os.path.dirname(static), "stockade-launcher")
        # Each broker beside a launcher, in a 0755 directory every user
        # reaches: the product, and the dynamic one with the shim.
        self.static = self.install("bin-static", [(static, "stockade"),
                                                  (launcher, "stockade-launcher")])
        self.dynamic = self.install("bin-dynamic", [(dynamic, "stockade"),
                                                    (launcher, "stockade-launcher"),
                                                    (shim, "libfaultshim.so")])
        self.shim = os.path.join(os.path.dirname(self.dynamic), "libfaultshim.so")
        # The broker's user's directory: --socket sockets, shim reports.
        self.sock_dir = self.own(self.mkdtemp("sock-", self.base))
        self.n = 0

    def mkdtemp(self, prefix, where=None):
        d = tempfile.mkdtemp(prefix=prefix, dir=where or traversable_tmp())
        if where is None:
            self.cleanup.append(d)
        os.chmod(d, 0o755)
        return d

    def install(self, name, files):
        d = os.path.join(self.base, name)
        os.mkdir(d, 0o755)
        for src, dst in files:
            shutil.copyfile(src, os.path.join(d, dst))
            os.chmod(os.path.join(d, dst), 0o755)
        return os.path.join(d, "stockade")

    def own(self, path):
        """Gives PATH to the broker's user (65534 when the test is root: a
        root broker refuses a root-owned workspace)."""
        if self.owner is not None:
            os.chown(path, self.owner, self.owner)
        return path

    def new_dir(self, where=None, name="ws"):
        self.n += 1
        d = os.path.join(where or self.base, f"{name}-{self.n}")
        os.mkdir(d, 0o755)
        return self.own(d)

    def host_file(self, name, data, where=None):
        path = os.path.join(where or self.base, name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o644)
        return self.own(path)

    def cli(self, args, timeout=60):
        p = subprocess.run(self.prefix + [self.static] + args,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           env=self.env, cwd="/", timeout=timeout,
                           preexec_fn=bound_child)
        check(p.returncode >= 0, f"stockade {args[0]} died of signal "
              f"{-p.returncode}: {p.stderr!r}")
        return p


class Session:
    """`stockade serve` on a socketpair as its standard input and output
    (descriptors pass on it), or on --socket PATH."""

    def __init__(self, ctx, ws, binary=None, shim_env=None, sock_path=None):
        env = dict(ctx.env)
        argv = ctx.prefix
        if shim_env is not None:
            # Through env(1), so that the shim is in the broker only,
            # never in setpriv (which it does not work with).
            argv = argv + ["env", f"LD_PRELOAD={ctx.shim}"] + \
                [f"{k}={v}" for k, v in sorted(shim_env.items())]
        argv = argv + [binary or ctx.static, "serve", "--workspace", ws]
        self.errf = tempfile.TemporaryFile()
        self.buf = b""
        self.next_id = 1
        self.sock_path = sock_path
        if sock_path:
            self.proc = subprocess.Popen(
                argv + ["--socket", sock_path], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=self.errf, env=env, cwd="/",
                preexec_fn=bound_child)
            self.sock = self._connect()
        else:
            self.sock, child = socket.socketpair()
            self.sock.settimeout(ANSWER_TIMEOUT)
            self.proc = subprocess.Popen(argv, stdin=child, stdout=child,
                                         stderr=self.errf, env=env, cwd="/",
                                         preexec_fn=bound_child)
            child.close()

    def _connect(self):
        deadline = time.monotonic() + 10
        while True:
            check(self.proc.poll() is None,
                  lambda: f"stockade serve ended: {self.stderr()}")
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(ANSWER_TIMEOUT)  # sends have a deadline too
            try:
                s.connect(self.sock_path)
                return s
            except (FileNotFoundError, ConnectionRefusedError):
                s.close()
                check(time.monotonic() < deadline, "no socket after 10 s")
                time.sleep(0.01)

    def stderr(self):
        self.errf.seek(0)
        return self.errf.read().decode("utf-8", "replace")

    def call(self, method, params, fds=()):
        """The answer (a dict), or None when the broker ended the
        connection first."""
        rid = self.next_id
        self.next_id += 1
        line = (json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                            "params": params}) + "\n").encode()
        try:
            if fds:
                socket.send_fds(self.sock, [line], list(fds))
            else:
                self.sock.sendall(line)
        except (BrokenPipeError, ConnectionResetError):
            return None
        deadline = time.monotonic() + ANSWER_TIMEOUT
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            check(left > 0, lambda: f"{method}: no answer in {ANSWER_TIMEOUT} s "
                  f"(a hang); stderr: {self.stderr()}")
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                try:
                    b = self.sock.recv(1 << 20)
                except ConnectionResetError:
                    b = b""
                if not b:
                    return None
                self.buf += b
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            msg = json.loads(line)
        except ValueError as exc:
            raise AssertionError(f"{method}: not JSON ({exc}): {line[:300]!r}")
        # A line the broker had no memory to parse has no id to answer
        # with (docs/protocol.md: -32603).
        oom = msg.get("id") is None and \
            (msg.get("error") or {}).get("code") == ERROR_INTERNAL
        check(msg.get("jsonrpc") == "2.0" and (msg.get("id") == rid or oom),
              f"{method}: answer out of order: {line[:300]!r}")
        if method == "exec" and isinstance(msg.get("result"), dict):
            save_result(msg["result"])
        return msg

    def result(self, method, params, fds=()):
        msg = self.call(method, params, fds)
        check(msg is not None and "result" in msg,
              lambda: f"{method} {str(params)[:200]}: {msg} {self.stderr()}")
        return msg["result"]

    def error(self, method, params, name, fds=()):
        msg = self.call(method, params, fds)
        err = (msg or {}).get("error") or {}
        got = (err.get("data") or {}).get("error")
        check(err.get("code") == ERROR_FS and got == name,
              f"{method} {str(params)[:200]}: want {name}, got {msg}")
        return err

    def close(self):
        """Ends the session; returns its exit status (negative: signal)."""
        if self.sock_path:
            self.sock.close()
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
        else:
            try:
                self.sock.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        try:
            rc = self.proc.wait(timeout=ANSWER_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"stockade serve did not end in "
                                 f"{ANSWER_TIMEOUT} s: {self.stderr()}")
        self.sock.close()
        return rc


def feed_pipe(data):
    """The read end of a pipe a thread fills with DATA (and then closes;
    a reader that stops early only ends the thread)."""
    r, w = os.pipe()

    def writer():
        try:
            os.write(w, data) if len(data) < 4096 else \
                [os.write(w, data[i:i + 65536]) for i in range(0, len(data), 65536)]
        except OSError:
            pass
        finally:
            os.close(w)
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    return r, t


def listing(ws):
    """{relative path: bytes or "dir"} of the tree WS."""
    out = {}
    for d, dirs, files in os.walk(ws):
        for name in dirs:
            out[os.path.relpath(os.path.join(d, name), ws)] = "dir"
        for name in files:
            with open(os.path.join(d, name), "rb") as f:
                out[os.path.relpath(os.path.join(d, name), ws)] = f.read()
    return out


def no_temporaries(where):
    left = [p for p in listing(where)
            if os.path.basename(p).startswith((".stockade-tmp-", ".stockade-get-"))]
    check(not left, f"temporary files left in {where}: {left}")
