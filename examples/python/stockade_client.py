#!/usr/bin/env python3
"""A small client for `stockade serve`, Python 3.9+ standard library only.

One Session is one `stockade serve` broker on one workspace
(docs/protocol.md): JSON-RPC 2.0, one message a line, answered in order.

    from stockade_client import Session, FileError

    with Session.start("ws") as s:                  # stockade serve on a pipe
        s.write("hello.py", "print(6 * 7)\\n")
        r = s.exec(["python3", "hello.py"], timeout_seconds=5, memory_mb=256)
        print(r["status"], r["stdout"])             # ok 42
        print(s.changes())
        try:
            s.read("../etc/passwd")
        except FileError as e:
            print(e.name, e.path)                   # invalid_path ../etc/passwd

Three ways to get a Session:

- Session.start(workspace): spawns `stockade serve --workspace WS` with
  its standard input and output as the protocol stream (pipes; no
  descriptor passing). close() ends its input: the broker exits 0.
- Session.start(workspace, socket_path=P): spawns `stockade serve
  --socket P` and connects to it; bulk data then travels as descriptors
  (SCM_RIGHTS, socket.send_fds) and is copied in the kernel. close()
  disconnects and sends the broker SIGTERM (it removes its socket).
- Session.connect(P): connects to a broker someone else started (a
  sidecar in a pod, docs/deploy.md). close() only disconnects: the
  session, and its workspace, outlive the connection.

Errors: a JSON-RPC error answer raises RPCError (FileError for the file
API's -32001, with the stable name in .name and the path in .path;
JobNotRun for -32002); a broker that went away raises SessionClosed with
its exit status and the end of its standard error.
"""

import base64
import json
import os
import signal
import socket
import subprocess
import tempfile
import time

__all__ = ["Session", "RPCError", "FileError", "JobNotRun", "SessionClosed",
           "render_text", "EXIT_REFUSED", "EXIT_USAGE", "EXIT_NO_LAUNCHER"]

# `stockade serve`'s exit status (docs/protocol.md, "Exit status").
EXIT_USAGE = 2          # usage, bad policy or workspace, socket path exists
EXIT_REFUSED = 69       # the kernel lacks a layer (user namespaces, openat2)
EXIT_NO_LAUNCHER = 70   # the launcher was not found, or no socket

# A payload at most this large travels inline even over a socket
# (base64 costs a third more, but no descriptor set-up); above it, over a
# socket, a write goes through an anonymous file (memfd). The broker's own
# ceiling for inline payloads is the policy's [files] inline_kb.
INLINE_MAX = 64 * 1024

# The longest line the broker accepts (docs/protocol.md); a reply is
# never longer either.
MAX_LINE = 16 << 20


class RPCError(Exception):
    """A JSON-RPC error answer. .code (int), .message (str), .data (dict
    or None), and for convenience .name (data.error: the file API's
    stable error name, or None), .path (data.path), .param (data.param,
    the offending parameter of a -32602)."""

    def __init__(self, code, message, data=None, method=None):
        self.code = code
        self.message = message
        self.data = data if isinstance(data, dict) else None
        self.method = method
        d = self.data or {}
        self.name = d.get("error")
        self.path = d.get("path")
        self.param = d.get("param")
        where = f"{method}: " if method else ""
        super().__init__(f"{where}{message} (code {code})")


class FileError(RPCError):
    """-32001: the file API refused (.name is invalid_path,
    escapes_workspace, symlink_refused, not_found, exists, too_large,
    quota_exceeded, ... as in docs/protocol.md)."""


class JobNotRun(RPCError):
    """-32002: the job could not be run at all (the launcher failed to
    start, or the workspace could not be read for the snapshot). A job
    that ran, whatever its status, is a result, never this."""


class SessionClosed(Exception):
    """The broker's end of the stream closed: it exited (.returncode,
    when known: 69 refused, 2 usage, 70 no launcher) or the connection
    was lost. .stderr holds the end of what it wrote there (pipe mode)."""

    def __init__(self, message, returncode=None, stderr=""):
        self.returncode = returncode
        self.stderr = stderr
        text = message
        if returncode is not None:
            text += f" (stockade exited with status {returncode})"
        if stderr:
            text += ": " + stderr.strip().splitlines()[-1]
        super().__init__(text)


_ERRORS = {-32001: FileError, -32002: JobNotRun}


def _figure(result, name):
    v = result.get(name)
    if isinstance(v, bool) or v is None:
        return f" {name}=none"
    return f" {name}={v}"


def render_text(result):
    """The compact text form of an exec result, line for line as
    `stockade run --format text` prints it (broker/result_json.c,
    docs/tool.md "The reply"): what a model is shown."""
    out = [f"status: {result.get('status')}", f"hint: {result.get('hint')}",
           "figures:" + "".join(_figure(result, n) for n in (
               "exit_code", "signal", "wall_ms", "cpu_ms", "peak_memory_kb",
               "peak_processes", "enforcement"))]
    if result.get("detail"):
        out.append(f"detail: {result['detail']}")
    if result.get("layers_off"):
        out.append("layers off: " + ", ".join(result["layers_off"]))
    if result.get("denials"):
        out.append("denied: " + ", ".join(
            f"{d['syscall']} x{d['count']} (first at {d['first_ms']} ms)"
            for d in result["denials"]))
    for name in ("stdout", "stderr"):
        cut = ", truncated: head and tail kept" if result.get(name + "_truncated") else ""
        out.append(f"--- {name} ({result.get(name + '_bytes', 0)} bytes{cut}) ---")
        text = result.get(name) or ""
        if text:
            out.append(text[:-1] if text.endswith("\n") else text)
    return "\n".join(out) + "\n"


class Session:
    """One `stockade serve` session. Use Session.start() or
    Session.connect(); every method sends one request and returns its
    result (a dict) or raises RPCError / SessionClosed. Not thread-safe:
    requests are answered in order, one at a time."""

    def __init__(self, *, proc=None, sock=None, reader=None, writer=None,
                 stderr_file=None, terminate_on_close=False, timeout=None):
        self._proc = proc
        self._sock = sock
        self._reader = reader
        self._writer = writer
        self._stderr_file = stderr_file
        self._terminate = terminate_on_close
        self._next_id = 1
        self._closed = False
        self.timeout = timeout

    # --- starting and ending -------------------------------------------

    @classmethod
    def start(cls, workspace, *, stockade="stockade", policy=None,
              socket_path=None, env=None, connect_timeout=10.0):
        """Spawns `STOCKADE serve --workspace WORKSPACE [--policy POLICY]`.
        Without SOCKET_PATH the protocol runs over the child's standard
        input and output; with it, the child makes a unix socket there
        (which must not exist; its directory should be private) and this
        session connects to it, waiting at most CONNECT_TIMEOUT seconds.
        The child's standard error goes to an unnamed temporary file
        (its end is quoted by SessionClosed). ENV: the child's
        environment (default: this process's)."""
        argv = [stockade, "serve", "--workspace", os.fspath(workspace)]
        if policy is not None:
            argv += ["--policy", os.fspath(policy)]
        errf = tempfile.TemporaryFile()
        if socket_path is None:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=errf,
                                    env=env, close_fds=True)
            return cls(proc=proc, reader=proc.stdout, writer=proc.stdin,
                       stderr_file=errf)
        socket_path = os.fspath(socket_path)
        argv += ["--socket", socket_path]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=errf,
                                env=env, close_fds=True)
        deadline = time.monotonic() + connect_timeout
        while True:
            if proc.poll() is not None:
                raise SessionClosed("stockade serve --socket ended before "
                                    "it listened", proc.returncode,
                                    _tail(errf))
            try:
                sock = _connect(socket_path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    proc.terminate()
                    proc.wait()
                    raise SessionClosed(f"no socket at {socket_path} after "
                                        f"{connect_timeout} s", None,
                                        _tail(errf))
                time.sleep(0.02)
        return cls(proc=proc, sock=sock, reader=sock.makefile("rb"),
                   stderr_file=errf, terminate_on_close=True)

    @classmethod
    def connect(cls, socket_path):
        """Connects to a `stockade serve --socket SOCKET_PATH` that is
        already running (as this user, or this process is root:
        SO_PEERCRED is checked). close() leaves the broker running."""
        sock = _connect(os.fspath(socket_path))
        return cls(sock=sock, reader=sock.makefile("rb"))

    @property
    def over_socket(self):
        """True when descriptors can be passed (a unix socket)."""
        return self._sock is not None

    def close(self, timeout=10.0):
        """Ends the session cleanly. Pipe mode: closes the broker's input
        (it finishes and exits 0) and waits; socket mode: disconnects, and
        if this session spawned the broker sends it SIGTERM and waits.
        A broker still running after TIMEOUT seconds gets SIGKILL. Returns
        the broker's exit status when this session started it, else None.
        Idempotent."""
        if self._closed:
            return self._proc.returncode if self._proc else None
        self._closed = True
        if self._sock is not None:
            try:
                self._reader.close()
                self._sock.close()
            except OSError:
                pass
        elif self._writer is not None:
            try:
                self._writer.close()
            except OSError:
                pass
        rc = None
        if self._proc is not None:
            if self._terminate and self._proc.poll() is None:
                self._proc.send_signal(signal.SIGTERM)
            try:
                rc = self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                rc = self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
        if self._stderr_file is not None:
            self._stderr_file.close()
        return rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def stderr_tail(self, lines=20):
        """The last LINES lines the spawned broker wrote to stderr."""
        return _tail(self._stderr_file, lines) if self._stderr_file else ""

    # --- the transport -------------------------------------------------

    def call(self, method, params=None, fds=()):
        """Sends one request (with FDS, open descriptors, passed along in
        the same sendmsg: socket mode only) and returns its "result", or
        raises RPCError / SessionClosed. The caller keeps its own copies
        of FDS and closes them."""
        if self._closed:
            raise SessionClosed("the session is closed")
        req = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        self._next_id += 1
        if params:
            req["params"] = params
        line = (json.dumps(req, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            if self._sock is not None:
                if fds:
                    sent = socket.send_fds(self._sock, [line], list(fds))
                    if sent < len(line):
                        self._sock.sendall(line[sent:])
                else:
                    self._sock.sendall(line)
            else:
                if fds:
                    raise ValueError("descriptors need a socket session "
                                     "(Session.start(..., socket_path=...))")
                self._writer.write(line)
                self._writer.flush()
            answer = self._reader.readline(MAX_LINE + 1)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise self._gone(f"{method}: {exc}") from None
        if not answer.endswith(b"\n"):
            raise self._gone(f"{method}: the broker closed the stream")
        msg = json.loads(answer)
        if msg.get("id") != req["id"]:
            raise RPCError(-32603, f"answer id {msg.get('id')!r} for request "
                           f"{req['id']}", method=method)
        if "error" in msg:
            e = msg["error"]
            cls = _ERRORS.get(e.get("code"), RPCError)
            raise cls(e.get("code"), e.get("message", ""), e.get("data"), method)
        return msg["result"]

    def _gone(self, message):
        rc = None
        if self._proc is not None:
            try:
                rc = self._proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        return SessionClosed(message, rc, self.stderr_tail())

    # --- the methods (docs/protocol.md, "Methods") ---------------------

    def exec(self, argv, timeout_seconds=None, memory_mb=None):
        """Runs ARGV (a list of strings) in the jail, /work its working
        directory; returns the result object (README.md, "Result fields").
        TIMEOUT_SECONDS and MEMORY_MB may only lower the policy's limits
        (above them: RPCError -32602)."""
        params = {"argv": list(argv)}
        if timeout_seconds is not None:
            params["timeout_seconds"] = timeout_seconds
        if memory_mb is not None:
            params["memory_mb"] = memory_mb
        return self.call("exec", params)

    def write(self, path, data, overwrite=False, mode=None):
        """Writes DATA (str: UTF-8 text; bytes) to PATH in the workspace,
        atomically. Over a socket, bytes above INLINE_MAX go through an
        anonymous file passed as a descriptor. Returns {"path", "size"}."""
        params = _path("path", path)
        if overwrite:
            params["overwrite"] = True
        if mode is not None:
            params["mode"] = mode
        if isinstance(data, str):
            params["text"] = data
            return self.call("fs.write", params)
        data = bytes(data)
        if self.over_socket and len(data) > INLINE_MAX:
            fd = os.memfd_create("stockade-put", os.MFD_CLOEXEC)
            try:
                with os.fdopen(os.dup(fd), "wb") as f:
                    f.write(data)
                os.lseek(fd, 0, os.SEEK_SET)
                params.update(fd=0, size=len(data))
                return self.call("fs.write", params, [fd])
            finally:
                os.close(fd)
        params["data"] = _b64(data)
        return self.call("fs.write", params)

    def write_from(self, path, fd, size=None, overwrite=False, mode=None):
        """Writes PATH from the open readable descriptor FD (a regular
        file from its offset to its end, a pipe or socket until end of
        file; blocking), copied by the broker in the kernel. SIZE: the
        bytes FD gives (makes the check exact). Socket mode only."""
        params = _path("path", path)
        params["fd"] = 0
        if size is not None:
            params["size"] = size
        if overwrite:
            params["overwrite"] = True
        if mode is not None:
            params["mode"] = mode
        return self.call("fs.write", params, [fd])

    def read(self, path, offset=None, length=None):
        """Returns the bytes of PATH (inline: at most the policy's
        inline_kb; read larger files with read_into, or in ranges)."""
        params = _path("path", path)
        if offset is not None:
            params["offset"] = offset
        if length is not None:
            params["length"] = length
        return base64.b64decode(self.call("fs.read", params)["data"])

    def read_into(self, path, fd, offset=None, length=None):
        """Copies PATH into the open writable descriptor FD (from its
        current offset); returns the bytes copied. Socket mode only."""
        params = _path("path", path)
        params["fd"] = 0
        if offset is not None:
            params["offset"] = offset
        if length is not None:
            params["length"] = length
        return self.call("fs.read", params, [fd])["size"]

    def upload(self, host_path, path, overwrite=False):
        """Copies the host file HOST_PATH to PATH: by descriptor over a
        socket, inline otherwise. Returns {"path", "size"}."""
        if self.over_socket:
            fd = os.open(host_path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                return self.write_from(path, fd, size=os.fstat(fd).st_size,
                                       overwrite=overwrite)
            finally:
                os.close(fd)
        with open(host_path, "rb") as f:
            return self.write(path, f.read(), overwrite=overwrite)

    def download(self, path, host_path):
        """Copies PATH to the host file HOST_PATH (created or truncated,
        mode 0644): by descriptor over a socket, inline otherwise.
        Returns the bytes copied."""
        fd = os.open(host_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                     | os.O_CLOEXEC, 0o644)
        try:
            if self.over_socket:
                return self.read_into(path, fd)
            data = self.read(path)
            os.write(fd, data)
            return len(data)
        finally:
            os.close(fd)

    def list(self, path=".", recursive=False, limit=None):
        """Returns {"entries": [{"path", "type", "size", "mode",
        "mtime"}, ...], "truncated": bool}."""
        params = _path("path", path)
        if recursive:
            params["recursive"] = True
        if limit is not None:
            params["limit"] = limit
        return self.call("fs.list", params)

    def stat(self, path):
        """Returns one entry as in list(), plus "nlink"; a symlink is
        described, never followed."""
        return self.call("fs.stat", _path("path", path))

    def mkdir(self, path, parents=False, mode=None):
        params = _path("path", path)
        if parents:
            params["parents"] = True
        if mode is not None:
            params["mode"] = mode
        return self.call("fs.mkdir", params)

    def remove(self, path, recursive=False):
        params = _path("path", path)
        if recursive:
            params["recursive"] = True
        return self.call("fs.remove", params)

    def rename(self, src, dst, overwrite=False):
        params = _path("from", src)
        params.update(_path("to", dst))
        if overwrite:
            params["overwrite"] = True
        return self.call("fs.rename", params)

    def changes(self):
        """What the last exec created, modified and deleted:
        {"created", "modified", "deleted": [{"path", "type", "size",
        "sha256"}], "truncated", "unhashed"}."""
        return self.call("fs.changes")


# --- helpers -------------------------------------------------------------

def _b64(data):
    return base64.b64encode(data).decode("ascii")


def _path(key, path):
    """{KEY: path} for a str, {KEY_b64: ...} for bytes (a name that is not
    UTF-8, or one taken back from an answer's path_b64)."""
    if isinstance(path, (bytes, bytearray)):
        return {key + "_b64": _b64(bytes(path))}
    return {key: os.fspath(path)}


def _connect(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return sock


def _tail(f, lines=20):
    try:
        f.flush()
        f.seek(0)
        text = f.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    return "\n".join(text.splitlines()[-lines:])
