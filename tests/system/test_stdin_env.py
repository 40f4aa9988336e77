#!/usr/bin/env python3
# A job's standard input and its per-job environment (issue 22, points 2
# and 3; README.md, "Standard input" and "Environment"; docs/protocol.md,
# exec's stdin, stdin_b64, stdin_fd and env; docs/mcp.md).
#
# Through every front, as root and as uid 65534 (setpriv, with stockade
# and stockade-launcher copied where 65534 can reach them) when the test
# is root, else as the invoking user:
#   run    a pipe reaches the program (`echo 'print(1+1)' | stockade run
#          -- python3 -` prints 2), 3 MiB arrive whole, --stdin FILE,
#          --no-stdin, a terminal gives /dev/null, a program that never
#          reads an endless pipe still ends, an input that fails to read
#          (EISDIR) makes the job sandbox_error, never ok; --env sets and overrides,
#          --env NAME passes stockade's own value, nothing else of the
#          caller's environment arrives, bad names and names the policy's
#          [jail] client_env does not list are refused by name;
#   serve  exec with stdin (text), stdin_b64, stdin_fd over --socket (1
#          MiB through a pipe, and an endless pipe the program ignores),
#          inline input over inline_kb refused as too_large (never cut),
#          env laid over [environment], env_not_allowed, invalid_env_name;
#   mcp    run_command with stdin and env, and a tool call whose env the
#          policy refuses.
# Every case fails on a stockade without the feature (stdin was
# /dev/null; --env, stdin and env were unknown).
#
# Bounds: every stockade is killed after 60 s. TAP.

import base64
import json
import os
import pty
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, tap_fail, tap_skip, traversable_tmp,
                           unprivileged_binaries)

DEADLINE = 60
MiB = 1 << 20
SETPRIV = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
           "--clear-groups", "--"]
NOBODY_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
              "HOME": "/nonexistent"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}}


def check(cond, message):
    if not cond:
        raise AssertionError(message() if callable(message) else message)


class User:
    def __init__(self, label, prefix, stockade, env, owner, cleanup):
        self.label = label
        self.prefix = prefix
        self.stockade = stockade
        self.env = env
        self.owner = owner
        self.cleanup = cleanup

    def new_dir(self):
        d = tempfile.mkdtemp(prefix="stockade-stdin-env-",
                             dir=traversable_tmp())
        self.cleanup.append(d)
        os.chmod(d, 0o755)
        ws = os.path.join(d, "ws")
        os.mkdir(ws)
        if self.owner is not None:
            os.chown(ws, self.owner, self.owner)
        return d, ws

    def policy(self, d, text):
        path = os.path.join(d, "policy.ini")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, 0o644)
        return path

    def run(self, flags, argv, stdin=subprocess.DEVNULL, data=None,
            env=None):
        """`stockade run --json FLAGS -- ARGV`: (rc, result or None,
        stderr)."""
        p = subprocess.run(self.prefix + [self.stockade, "run", "--json"]
                           + flags + ["--"] + argv, cwd="/",
                           env=env if env is not None else self.env,
                           stdin=stdin if data is None else None,
                           input=data, capture_output=True,
                           timeout=DEADLINE)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode == EXIT_NO_KERNEL_LAYER:
            raise Skip("stockade refused, the kernel lacks a layer: " + err)
        out = p.stdout.decode("utf-8", "replace").strip()
        return p.returncode, json.loads(out) if out else None, err


def ok_stdout(r, want, what):
    rc, o, err = r
    check(rc == 0 and o is not None and o["status"] == "ok"
          and o["stdout"] == want,
          lambda: f"{what}: want ok with stdout {want!r}, got rc {rc}, "
                  f"{o and (o['status'], o['stdout'][:200], o['detail'])}, "
                  f"stderr {err[-300:]!r}")


# --- stockade run ---------------------------------------------------------

def case_run_pipe(u):
    ok_stdout(u.run([], ["python3", "-"], data=b"print(1+1)\n"), "2\n",
              "echo 'print(1+1)' | stockade run -- python3 -")
    return "python3 - read its program from the pipe"


def case_run_big(u):
    data = os.urandom(3 * MiB)
    import hashlib
    want = hashlib.sha256(data).hexdigest() + "  -\n"
    ok_stdout(u.run([], ["sha256sum"], data=data), want, "3 MiB piped")
    d, _ = u.new_dir()
    path = os.path.join(d, "input.bin")
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, 0o644)
    ok_stdout(u.run(["--stdin", path], ["sha256sum"]), want,
              "--stdin FILE of 3 MiB")
    return "3 MiB arrive whole, piped and with --stdin FILE"


def case_run_no_stdin(u):
    ok_stdout(u.run(["--no-stdin"], ["cat"], data=b"not for the job\n"),
              "", "--no-stdin")
    # A terminal is never read: the program gets /dev/null.
    master, slave = pty.openpty()
    try:
        ok_stdout(u.run([], ["cat"], stdin=slave), "", "stdin a terminal")
    finally:
        os.close(master)
        os.close(slave)
    rc, o, err = u.run(["--stdin", "/nonexistent/input"], ["cat"])
    check(rc == 2 and o is None and "--stdin /nonexistent/input" in err,
          f"--stdin of a missing file: rc {rc}, {err!r}")
    rc, o, err = u.run(["--stdin", "/", ], ["cat"])
    check(rc == 2 and "is a directory" in err,
          f"--stdin of a directory: rc {rc}, {err!r}")
    # An input that fails to read (a directory as stockade's own stdin:
    # EISDIR) is never an ok job on part of its input.
    d = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        rc, o, err = u.run([], ["cat"], stdin=d)
    finally:
        os.close(d)
    check(rc == 70 and o is not None and o["status"] == "sandbox_error"
          and "could not read the job's standard input" in o["detail"],
          lambda: f"a stdin that fails to read: rc {rc}, "
                  f"{o and (o['status'], o['detail'])}, {err[-300:]!r}")
    return ("--no-stdin and a terminal give /dev/null; bad --stdin "
            "refused; a read error is sandbox_error")


def case_run_unread(u):
    """A program that never reads an endless pipe ends, and its output
    comes: the broker does not wait on the pipe."""
    p = subprocess.Popen(u.prefix + [u.stockade, "run", "--json", "--",
                                     "sh", "-c", "sleep 0.5; echo done"],
                         cwd="/", env=u.env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stop = threading.Event()

    def feed():
        chunk = b"y\n" * 32768
        try:
            while not stop.is_set():
                p.stdin.write(chunk)
        except (BrokenPipeError, ValueError, OSError):
            pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    try:
        # --json: stderr holds a line at most, so reading stdout first
        # cannot stall on it.
        out = p.stdout.read()
        err = p.stderr.read().decode("utf-8", "replace")
        p.wait(timeout=DEADLINE)
    finally:
        stop.set()
        if p.poll() is None:
            p.kill()
    o = json.loads(out)
    check(p.returncode == 0 and o["status"] == "ok"
          and o["stdout"] == "done\n",
          f"rc {p.returncode}, {o['status']}, {o['stdout']!r}, {err[-300:]!r}")
    return "an endless pipe the program never reads does not hold the job"


def case_run_env(u):
    env = dict(u.env, STOCKADE_TEST_SECRET="host-only",
               STOCKADE_TEST_NAMED="from-host")
    r = u.run(["--env", "FOO=bar baz", "--env", "LANG=C", "--env",
               "STOCKADE_TEST_NAMED", "--env", "EMPTY="],
              ["sh", "-c", 'printf "%s|%s|%s|%s|%s|%s" "$FOO" "$LANG" '
               '"$STOCKADE_TEST_NAMED" "${STOCKADE_TEST_SECRET-unset}" '
               '"${EMPTY-unset}" "$PATH"'], env=env)
    ok_stdout(r, "bar baz|C|from-host|unset||/usr/local/bin:/usr/bin:/bin",
              "--env over [environment]")
    rc, o, err = u.run(["--env", "1X=y"], ["true"])
    check(rc == 2 and "invalid_env_name" in err, f"1X: rc {rc}, {err!r}")
    rc, o, err = u.run(["--env", "A-B=y"], ["true"])
    check(rc == 2 and "invalid_env_name" in err, f"A-B: rc {rc}, {err!r}")
    rc, o, err = u.run(["--env", "STOCKADE_TEST_UNSET_NAME"], ["true"])
    check(rc == 2 and "has no STOCKADE_TEST_UNSET_NAME" in err,
          f"an unset name: rc {rc}, {err!r}")
    d, _ = u.new_dir()
    pol = u.policy(d, "[jail]\nclient_env = LANG, MY_*\n")
    ok_stdout(u.run(["--policy", pol, "--env", "MY_X=1", "--env", "LANG=C"],
                    ["sh", "-c", 'printf "$MY_X$LANG"']), "1C",
              "client_env lists MY_* and LANG")
    rc, o, err = u.run(["--policy", pol, "--env", "LD_PRELOAD=/x.so"],
                       ["true"])
    check(rc == 2 and "env_not_allowed" in err and "LD_PRELOAD" in err,
          f"LD_PRELOAD past client_env: rc {rc}, {err!r}")
    pol = u.policy(d, "[jail]\nclient_env =\n")
    rc, o, err = u.run(["--policy", pol, "--env", "FOO=1"], ["true"])
    check(rc == 2 and "env_not_allowed" in err,
          f"an empty client_env: rc {rc}, {err!r}")
    pol = u.policy(d, "[jail]\nclient_env = A-B\n")
    rc, o, err = u.run(["--policy", pol], ["true"])
    check(rc != 0 and "client_env" in err and "A-B" in err,
          f"a bad client_env: rc {rc}, {err!r}")
    return "--env set, passed on, refused by name and by client_env"


# --- stockade serve -----------------------------------------------------------

class Serve:
    def __init__(self, u, ws, extra=()):
        self.p = subprocess.Popen(u.prefix + [u.stockade, "serve",
                                              "--workspace", ws] + list(extra),
                                  cwd="/", env=u.env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.n = 0

    def call(self, params):
        self.n += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.n,
                                        "method": "exec",
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        ln = self.p.stdout.readline()
        check(ln, lambda: "serve ended: "
              + self.p.stderr.read().decode("utf-8", "replace")[-500:])
        return json.loads(ln)

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=DEADLINE)
        finally:
            if self.p.poll() is None:
                self.p.kill()
            self.p.stdout.close()
            self.p.stderr.close()


def result_of(r, want_stdout, what):
    check("result" in r and r["result"]["status"] == "ok"
          and r["result"]["stdout"] == want_stdout,
          lambda: f"{what}: {json.dumps(r)[:600]}")


def error_of(r, name, param, what):
    e = r.get("error", {})
    check(e.get("code") == -32602 and e.get("data", {}).get("error") == name
          and e.get("data", {}).get("param") == param,
          lambda: f"{what}: want -32602 {name}, got {json.dumps(r)[:600]}")


def case_serve(u):
    d, ws = u.new_dir()
    pol = u.policy(d, "[files]\ninline_kb = 4\n[jail]\nclient_env = FOO, "
                      "LANG, APP_*\n")
    s = Serve(u, ws, ["--policy", pol])
    try:
        result_of(s.call({"argv": ["python3", "-"],
                          "stdin": "print(1+1)\n"}), "2\n", "stdin text")
        result_of(s.call({"argv": ["od", "-An", "-tx1"],
                          "stdin_b64": base64.b64encode(b"\0\xff").decode()}),
                  " 00 ff\n", "stdin_b64")
        result_of(s.call({"argv": ["wc", "-c"], "stdin": "x" * 4096}),
                  "4096\n", "stdin at inline_kb exactly")
        r = s.call({"argv": ["wc", "-c"], "stdin": "x" * 4097})
        error_of(r, "too_large", "stdin", "stdin one byte over inline_kb")
        check(r["error"]["data"].get("limit_bytes") == 4096, f"{r}")
        r = s.call({"argv": ["wc", "-c"],
                    "stdin_b64": base64.b64encode(b"x" * 4097).decode()})
        error_of(r, "too_large", "stdin_b64", "stdin_b64 over inline_kb")
        r = s.call({"argv": ["cat"], "stdin": "a", "stdin_b64": "YQ=="})
        check(r.get("error", {}).get("code") == -32602, f"two stdins: {r}")
        result_of(s.call({"argv": ["sh", "-c", 'printf "$FOO|$LANG|$APP_1|$PATH"'],
                          "env": {"FOO": "bar", "LANG": "C",
                                  "APP_1": "one"}}),
                  "bar|C|one|/usr/local/bin:/usr/bin:/bin", "env")
        error_of(s.call({"argv": ["true"], "env": {"PATH": "/tmp"}}),
                 "env_not_allowed", "env", "PATH past client_env")
        error_of(s.call({"argv": ["true"], "env": {"A=B": "x"}}),
                 "invalid_env_name", "env", "a name with =")
        error_of(s.call({"argv": ["true"], "env": {"APP_X": 1}}),
                 "invalid_env_value", "env", "a value that is a number")
        error_of(s.call({"argv": ["true"], "env": {"APP_X": "a\u0000b"}}),
                 "invalid_env_value", "env", "a value with a NUL")
    finally:
        s.close()
    return "stdin, stdin_b64, too_large, env and its refusals"


def case_serve_fd(u):
    d, ws = u.new_dir()
    sock_dir = os.path.join(d, "sock")
    os.mkdir(sock_dir)
    if u.owner is not None:
        os.chown(sock_dir, u.owner, u.owner)
    sock_path = os.path.join(sock_dir, "s.sock")
    s = Serve(u, ws, ["--socket", sock_path])
    try:
        for _ in range(200):
            if os.path.exists(sock_path):
                break
            time.sleep(0.05)
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(sock_path)
        f = c.makefile("rb")

        def call(i, params, fds):
            socket.send_fds(c, [(json.dumps({"jsonrpc": "2.0", "id": i,
                                             "method": "exec",
                                             "params": params}) + "\n")
                                .encode()], fds)
            return json.loads(f.readline())

        # 1 MiB through a pipe, written while the job reads it.
        r_end, w_end = os.pipe()
        data = os.urandom(MiB)

        def write_all():
            with os.fdopen(w_end, "wb") as w:
                w.write(data)

        t = threading.Thread(target=write_all)
        t.start()
        r = call(1, {"argv": ["wc", "-c"], "stdin_fd": 0}, [r_end])
        os.close(r_end)
        t.join()
        result_of(r, f"{MiB}\n", "stdin_fd: 1 MiB through a pipe")
        # An endless pipe the program never reads.
        r_end, w_end = os.pipe()
        stop = threading.Event()

        def endless():
            try:
                while not stop.is_set():
                    os.write(w_end, b"y" * 65536)
            except OSError:
                pass

        t = threading.Thread(target=endless, daemon=True)
        t.start()
        try:
            r = call(2, {"argv": ["sh", "-c", "sleep 0.3; echo done"],
                         "stdin_fd": 0}, [r_end])
        finally:
            stop.set()
            os.close(r_end)
        result_of(r, "done\n", "stdin_fd: an endless pipe left unread")
        os.close(w_end)
        r = call(3, {"argv": ["cat"], "stdin_fd": 1}, [])
        check(r.get("error", {}).get("data", {}).get("param") == "stdin_fd",
              f"stdin_fd naming no descriptor: {r}")
        c.close()
    finally:
        s.p.send_signal(15)
        s.close()
    return "stdin_fd: a pipe streamed, an unread endless one harmless"


# --- stockade mcp -------------------------------------------------------------

def case_mcp(u):
    d, ws = u.new_dir()
    pol = u.policy(d, "[jail]\nclient_env = GREETING\n")
    msgs = [INIT,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "run_command", "arguments": {
                 "argv": ["sh", "-c", 'read x; echo "$GREETING $x"'],
                 "stdin": "world\n", "env": {"GREETING": "hello"}}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
             "params": {"name": "run_code", "arguments": {
                 "language": "python", "code": "import sys; print(sys.stdin.read()[::-1])",
                 "stdin": "abc"}}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
             "params": {"name": "run_command", "arguments": {
                 "argv": ["true"], "env": {"LD_PRELOAD": "/x"}}}},
            {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}]
    p = subprocess.run(u.prefix + [u.stockade, "mcp", "--workspace", ws,
                                   "--policy", pol], cwd="/", env=u.env,
                       input="".join(json.dumps(m) + "\n" for m in msgs),
                       capture_output=True, text=True, timeout=DEADLINE)
    got = {m.get("id"): m for m in map(json.loads, p.stdout.splitlines())}
    r2, r3, r4 = got.get(2, {}), got.get(3, {}), got.get(4, {})
    s2 = r2.get("result", {}).get("structuredContent", {})
    check(s2.get("status") == "ok" and s2.get("stdout") == "hello world\n",
          f"run_command with stdin and env: {json.dumps(r2)[:600]} "
          f"{p.stderr[-300:]}")
    s3 = r3.get("result", {}).get("structuredContent", {})
    check(s3.get("stdout") == "cba\n", f"run_code with stdin: {r3}")
    t4 = r4.get("result", {})
    check(t4.get("isError") is True
          and "env_not_allowed" in t4["content"][0]["text"],
          f"env the policy refuses: {r4}")
    tools = {t["name"]: t for t in got[5]["result"]["tools"]}
    env_schema = tools["run_command"]["inputSchema"]["properties"].get("env")
    check(env_schema is not None and "GREETING" in env_schema["description"],
          f"run_command's schema: {env_schema}")
    return "run_command and run_code: stdin is a pipe, env set or refused"


CASES = [
    ("run: a pipe is the program's stdin", case_run_pipe),
    ("run: 3 MiB piped and from --stdin FILE", case_run_big),
    ("run: --no-stdin, a terminal, bad --stdin", case_run_no_stdin),
    ("run: an endless pipe the program never reads", case_run_unread),
    ("run: --env and [jail] client_env", case_run_env),
    ("serve: exec's stdin, stdin_b64 and env", case_serve),
    ("serve: exec's stdin_fd over --socket", case_serve_fd),
    ("mcp: the run tools' stdin and env", case_mcp),
]


def users(stockade_bin, cleanup):
    if os.geteuid() != 0:
        return [(f"as uid {os.getuid()}",
                 lambda: User(f"uid {os.getuid()}", [], stockade_bin,
                              dict(os.environ), None, cleanup))]
    return [("as root",
             lambda: User("root", [], stockade_bin, dict(os.environ),
                          NOBODY, cleanup)),
            (f"as uid {NOBODY} (setpriv)",
             lambda: User(f"uid {NOBODY}", SETPRIV,
                          unprivileged_binaries(stockade_bin, cleanup),
                          dict(NOBODY_ENV), NOBODY, cleanup))]


def main():
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    if not os.path.isabs(stockade_bin) or not os.access(stockade_bin, os.X_OK):
        print("1..1")
        print("not ok 1 - STOCKADE_BIN must be set (tests/meson.build)")
        return 1
    cleanup = []
    who = users(stockade_bin, cleanup)
    plan = [(f"{title} ({label})", label, fn)
            for label, _ in who for title, fn in CASES]
    make = dict(who)
    made = {}
    print(f"1..{len(plan)}")
    sys.stdout.flush()
    failed = 0
    try:
        for number, (title, label, fn) in enumerate(plan, 1):
            try:
                if label not in made:
                    made[label] = make[label]()
                t0 = time.monotonic()
                note = fn(made[label])
                print(f"ok {number} - {title}")
                diag(f"{note} [{time.monotonic() - t0:.1f} s]")
            except Skip as exc:
                failed += tap_skip(number, title, exc)
            except Exception as exc:  # noqa: BLE001 - reported as TAP
                failed += 1
                tap_fail(number, title, exc)
            sys.stdout.flush()
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
