#!/usr/bin/env python3
# Cancellation is its own status (issue 22, point 5): a job the user or
# the client stops ends `cancelled`, with the figures and the output up to
# then and a hint not to run it again unasked; never `sandbox_error`.
#
# - `stockade run` sent SIGINT, then SIGTERM, mid-job: status cancelled,
#   exit status 130 and 143, the line printed before kept, the detail
#   naming the signal; in the default (streaming) form, the summary on
#   stderr says cancelled and the exit status is the same.
# - `stockade serve` on standard input: `$/cancelRequest` naming the
#   running exec answers it `cancelled` (the detail names the request);
#   an exec sent after it is still answered, in order.
# - `stockade serve --socket`: a client that goes away mid-job gets its
#   job killed (no process of it left, its later file never written), and
#   the server serves the next client.
# - `stockade serve` on standard input whose reader of standard output
#   goes away mid-job: the job is killed and the session ends.
#
# Each case runs as the invoking user and, when that is root, again as uid
# 65534 (setpriv, the binaries copied by unprivileged_binaries). Workspaces
# belong to 65534 when the test is root (a root broker refuses a root-owned
# workspace). Registered in tests/meson.build as test 'cancel' (TAP), with
# STOCKADE_BIN and STOCKADE_RESULTS_DIR; every result is kept for
# result-schema. MCP's notifications/cancelled is in test_mcp_protocol.py.
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (alive_with, EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, save_result, tap_case,
                           traversable_tmp, unprivileged_binaries)

STOCKADE = os.environ["STOCKADE_BIN"]
SETPRIV = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
           "--clear-groups"]
HINT = "do not run it again on your own"
# Bounds on a failure, never on success: how long the job may take to
# start, and to be gone once cancelled (it is killed at once).
START_S = 20
GONE_S = 10


class User:
    """Who runs stockade: PREFIX before its argv, BIN the binary."""

    def __init__(self, label, prefix, binary):
        self.label = label
        self.prefix = prefix
        self.bin = binary


def workspace(cleanup):
    """A fresh directory D (0755) holding the workspace D/ws, owned by
    65534 when the test is root; returns (D, ws)."""
    d = tempfile.mkdtemp(prefix="stockade-cancel-", dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    ws = os.path.join(d, "ws")
    os.mkdir(ws)
    if os.geteuid() == 0:
        os.chown(d, NOBODY, NOBODY)
        os.chown(ws, NOBODY, NOBODY)
    return d, ws


def job(mark):
    """A job that prints a line, then sleeps in a process whose command
    line holds MARK, and would write late.txt if it ever woke. (Its
    writes are staged until it ends, issue 26: the host sees that it
    started by its sleeping process, never by a file.)"""
    return ["sh", "-c", "echo first; "
            f"exec sh -c 'sleep 30; echo late > /work/late.txt' '{mark}'"]


def sleeping(mark):
    """Whether a `sleep 30` runs whose parent's command line holds MARK."""
    for pid in alive_with(mark):
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    for child in f.read().split():
                        with open(f"/proc/{child}/cmdline", "rb") as c:
                            if c.read().startswith(b"sleep\0"):
                                return True
        except OSError:
            continue
    return False


def wait_started(mark, p):
    """Waits until the job of MARK has printed its line and sleeps."""
    deadline = time.monotonic() + START_S
    while not sleeping(mark):
        if p.poll() is not None:
            out, err = p.communicate()
            if p.returncode == EXIT_NO_KERNEL_LAYER:
                raise Skip("stockade refused, the kernel lacks a layer")
            raise AssertionError(f"stockade ended (status {p.returncode}) "
                                 f"before the job started: {err!r}")
        if time.monotonic() > deadline:
            raise AssertionError("the job never started")
        time.sleep(0.02)


def gone(mark, ws):
    """Asserts that no process of the job (MARK) is left within GONE_S,
    and that it never wrote late.txt."""
    deadline = time.monotonic() + GONE_S
    while alive_with(mark):
        if time.monotonic() > deadline:
            raise AssertionError(f"the cancelled job still runs: "
                                 f"{alive_with(mark)}")
        time.sleep(0.05)
    if os.path.exists(os.path.join(ws, "late.txt")):
        raise AssertionError("the cancelled job ran on to its end")


def check_cancelled(r, why, label):
    """Asserts that R (a result object) is a cancelled job with its
    figures, the first line of output, and a detail naming WHY."""
    save_result(r)
    problems = []
    if r.get("status") != "cancelled":
        problems.append(f"status {r.get('status')!r}")
    if r.get("stdout") != "first\n":
        problems.append(f"stdout {r.get('stdout')!r}")
    if r.get("exit_code") is not None or r.get("signal") != "SIGKILL":
        problems.append(f"exit_code {r.get('exit_code')!r}, signal "
                        f"{r.get('signal')!r}")
    for key in ("wall_ms", "cpu_ms", "peak_memory_kb", "peak_processes"):
        if not isinstance(r.get(key), int) or r[key] < 0:
            problems.append(f"{key} {r.get(key)!r}")
    if not r.get("peak_memory_kb"):
        problems.append("no peak memory measured")
    if why not in r.get("detail", ""):
        problems.append(f"detail {r.get('detail')!r} does not name {why!r}")
    if HINT not in r.get("hint", ""):
        problems.append(f"hint {r.get('hint')!r}")
    if problems:
        raise AssertionError(f"{label}: " + "; ".join(problems) + "\n"
                             + json.dumps(r)[:1500])


def run_signal(user, sig, cleanup):
    """`stockade run --format json` sent SIG once the job has started."""
    _, ws = workspace(cleanup)
    mark = f"stockade-cancel-run-{os.getpid()}-{sig}-{user.label}"
    p = subprocess.Popen(user.prefix + [user.bin, "run", "--format", "json",
                                        "--workspace", ws, "--"] + job(mark),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd="/")
    try:
        wait_started(mark, p)
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    if p.returncode != 128 + sig:
        raise AssertionError(f"stockade exited {p.returncode}, expected "
                             f"{128 + sig}: {err.decode()[-500:]}")
    check_cancelled(json.loads(out), signal.Signals(sig).name,
                    signal.Signals(sig).name)
    gone(mark, ws)
    return f"cancelled, exit {p.returncode}, output so far kept"


def run_stream(user, cleanup):
    """`stockade run` in its default form: the output passes through,
    the summary on stderr says cancelled."""
    _, ws = workspace(cleanup)
    mark = f"stockade-cancel-stream-{os.getpid()}-{user.label}"
    p = subprocess.Popen(user.prefix + [user.bin, "run", "--workspace", ws,
                                        "--"] + job(mark),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd="/")
    try:
        wait_started(mark, p)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    err = err.decode("utf-8", "replace")
    if p.returncode != 130 or out != b"first\n" or \
            "stockade: cancelled" not in err or HINT not in err:
        raise AssertionError(f"exit {p.returncode}, stdout {out!r}, "
                             f"stderr {err[-800:]!r}")
    gone(mark, ws)
    return "exit 130, summary says cancelled"


class Serve:
    """`stockade serve` on standard input and output, line by line."""

    def __init__(self, user, ws):
        self.p = subprocess.Popen(user.prefix + [user.bin, "serve",
                                                 "--workspace", ws],
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd="/")

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def recv(self):
        line = self.p.stdout.readline()
        if not line:
            raise AssertionError("serve ended without an answer: "
                                 + self.p.stderr.read().decode()[-800:])
        return json.loads(line)

    def end(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            if not f.closed:
                f.close()


def exec_req(rid, argv):
    return {"jsonrpc": "2.0", "id": rid, "method": "exec",
            "params": {"argv": argv}}


def serve_cancel_request(user, cleanup):
    """$/cancelRequest for the running exec: answered cancelled; the exec
    queued behind it still runs, after it."""
    _, ws = workspace(cleanup)
    mark = f"stockade-cancel-serve-{os.getpid()}-{user.label}"
    s = Serve(user, ws)
    try:
        s.send(exec_req(7, job(mark)))
        s.send(exec_req(8, ["echo", "after"]))
        wait_started(mark, s.p)
        s.send({"jsonrpc": "2.0", "method": "$/cancelRequest",
                "params": {"id": 7}})
        first, second = s.recv(), s.recv()
        if first.get("id") != 7 or second.get("id") != 8:
            raise AssertionError(f"answers out of order: {first} {second}")
        check_cancelled(first.get("result", {}), "cancel request",
                        "exec 7")
        gone(mark, ws)
        r = second.get("result", {})
        save_result(r)
        if r.get("status") != "ok" or r.get("stdout") != "after\n":
            raise AssertionError(f"the exec after it: {second}")
        s.p.stdin.close()
        rc = s.p.wait(timeout=30)
        rest = s.p.stdout.read()
        if rc != 0 or rest:
            raise AssertionError(f"serve ended {rc}, then wrote {rest!r}")
    finally:
        s.end()
    return "cancelled, the next exec answered after it"


def serve_socket_client_gone(user, cleanup):
    """A socket client that closes its connection mid-job: the job is
    killed, and the next client is served."""
    d, ws = workspace(cleanup)
    path = os.path.join(d, "serve.sock")
    mark = f"stockade-cancel-gone-{os.getpid()}-{user.label}"
    p = subprocess.Popen(user.prefix + [user.bin, "serve", "--workspace", ws,
                                        "--socket", path],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd="/")
    try:
        deadline = time.monotonic() + START_S
        while not os.path.exists(path):
            if p.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("serve never listened: " + (
                    p.stderr.read().decode()[-500:] if p.poll() is not None
                    else "timed out"))
            time.sleep(0.02)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(path)
        c.sendall((json.dumps(exec_req(1, job(mark))) + "\n").encode())
        wait_started(mark, p)
        c.close()
        gone(mark, ws)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.settimeout(60)
        c.connect(path)
        c.sendall((json.dumps(exec_req(2, ["echo", "two"])) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = c.recv(65536)
            if not chunk:
                break
            buf += chunk
        c.close()
        r = json.loads(buf).get("result", {})
        save_result(r)
        if r.get("status") != "ok" or r.get("stdout") != "two\n":
            raise AssertionError(f"the next client got {buf[:800]!r}")
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        err = err.decode("utf-8", "replace")
        if p.returncode != 0 or "went away during a job" not in err:
            raise AssertionError(f"serve ended {p.returncode}: {err[-800:]}")
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    return "the job killed, the next client served"


def serve_stdout_gone(user, cleanup):
    """serve on standard input whose reader of standard output closes it
    mid-job: the job is killed, the session ends."""
    _, ws = workspace(cleanup)
    mark = f"stockade-cancel-stdout-{os.getpid()}-{user.label}"
    s = Serve(user, ws)
    try:
        s.send(exec_req(1, job(mark)))
        wait_started(mark, s.p)
        s.p.stdout.close()
        gone(mark, ws)
        s.p.stdin.close()
        rc = s.p.wait(timeout=30)
        err = s.p.stderr.read().decode("utf-8", "replace")
        if "went away during a job" not in err:
            raise AssertionError(f"serve ended {rc}: {err[-800:]}")
    finally:
        if s.p.poll() is None:
            s.p.kill()
        s.p.wait()
    return f"the job killed, serve ended {rc}"


def main():
    cleanup = []
    users = [User("caller", [], STOCKADE)]
    failed = n = 0
    try:
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                raise AssertionError("setpriv is missing (util-linux)")
            users.append(User("uid 65534", SETPRIV,
                              unprivileged_binaries(STOCKADE, cleanup)))
        cases = []
        for u in users:
            cases += [
                (f"{u.label}: run, SIGINT mid-job: cancelled, exit 130",
                 run_signal, u, signal.SIGINT),
                (f"{u.label}: run, SIGTERM mid-job: cancelled, exit 143",
                 run_signal, u, signal.SIGTERM),
                (f"{u.label}: run streaming, SIGINT: summary cancelled",
                 run_stream, u),
                (f"{u.label}: serve, $/cancelRequest: exec answered "
                 "cancelled", serve_cancel_request, u),
                (f"{u.label}: serve --socket, the client goes away: job "
                 "killed", serve_socket_client_gone, u),
                (f"{u.label}: serve, standard output closed: job killed",
                 serve_stdout_gone, u),
            ]
        print(f"1..{len(cases)}")
        for title, fn, *args in cases:
            n += 1
            failed += tap_case(n, title, fn, *args, cleanup)
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as exc:
        print("1..1\nnot ok 1 - set-up")
        diag(exc)
        sys.exit(1)
