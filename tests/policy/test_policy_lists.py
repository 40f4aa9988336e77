#!/usr/bin/python3
# Issue 22, "Policy lists add to the defaults", through the two sessions
# (`stockade serve`'s JSON-RPC exec, `stockade mcp`'s run_code): a policy
# that gives one bind and one variable keeps the default's /usr binds and
# PATH, and a bind whose host path goes while the session runs ends the
# next job as sandbox_error naming that path. `stockade run` and `policy
# check` are tests/launcher/init/test_jail.c's (jail, jail-65534). As the caller, and as
# uid 65534 when run as root. TAP.
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (NOBODY, Skip, remove_all, save_result, tap_case,
                           tap_skip, traversable_tmp, unprivileged_binaries)

STOCKADE = os.path.abspath(os.environ.get("STOCKADE_BIN", "build/stockade"))
TIMEOUT = 60
MCP_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}}


def check(cond, msg):
    if not cond:
        raise AssertionError(msg() if callable(msg) else msg)


class Setup:
    """A bind source (TMP/bind, holding "hello"), a policy file laying it
    and GREETING = hi over the default with no warm jail (pool_size = 0:
    each job's jail is built when it comes, after the source is gone), and
    a workspace the job's user owns."""

    def __init__(self, tmp):
        self.dir = tempfile.mkdtemp(prefix="bind-", dir=tmp)
        os.chmod(self.dir, 0o755)
        with open(os.path.join(self.dir, "hello"), "w") as f:
            f.write("hello\n")
        os.chmod(os.path.join(self.dir, "hello"), 0o644)
        self.policy = os.path.join(self.dir + ".ini")
        with open(self.policy, "w") as f:
            f.write(f"[jail]\npool_size = 0\n[filesystem]\nro_bind = "
                    f"{self.dir}\n[environment]\nGREETING = hi\n")
        os.chmod(self.policy, 0o644)
        # The workspace where every other test's is (the bind source is
        # under /var/tmp, which the jail does not mount itself): a root
        # broker id-maps it, which some file systems refuse (overlayfs
        # on a fresh machine's /var/tmp: README.md, "When stockade
        # refuses").
        self.ws = tempfile.mkdtemp(prefix="stockade-policy-lists-ws-",
                                   dir=traversable_tmp())
        CLEANUP.append(self.ws)
        os.chmod(self.ws, 0o755)
        if os.geteuid() == 0:
            os.chown(self.ws, NOBODY, NOBODY)
        self.script = (f'echo "$PATH $GREETING $TZ"; cat {self.dir}/hello && '
                       "test -x /usr/bin/env && echo usr")
        self.want = "/usr/local/bin:/usr/bin:/bin hi UTC\nhello\nusr\n"

    def remove_source(self):
        os.unlink(os.path.join(self.dir, "hello"))
        os.rmdir(self.dir)


class Session:
    """ARGV's stdio, one JSON line each way."""

    def __init__(self, argv):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(argv, cwd="/", stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err)
        self.buf = b""

    def send(self, o):
        self.p.stdin.write((json.dumps(o) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, rid):
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\n" in self.buf:
                ln, self.buf = self.buf.split(b"\n", 1)
                msg = json.loads(ln)
                if msg.get("id") == rid:
                    return msg
            left = deadline - time.monotonic()
            check(left > 0, lambda: f"no answer to {rid}: {self.stderr()}")
            ready, _, _ = select.select([self.p.stdout], [], [], left)
            if ready:
                b = os.read(self.p.stdout.fileno(), 1 << 20)
                check(b, lambda: f"the session closed stdout: {self.stderr()}")
                self.buf += b

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode("utf-8", "replace")[-1000:]

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.p.stdout.close()
        self.err.close()
        return self.p.returncode


def serve_case(user, tmp):
    prefix, stockade = user
    s = Setup(tmp)
    sess = Session(prefix + [stockade, "serve", "--policy", s.policy,
                             "--workspace", s.ws])
    try:
        sess.send({"jsonrpc": "2.0", "id": 1, "method": "exec",
                   "params": {"argv": ["sh", "-c", s.script]}})
        r = sess.recv(1)
        check("result" in r, lambda: f"exec: {r}")
        save_result(r["result"])
        check(r["result"]["status"] == "ok" and r["result"]["stdout"] == s.want,
              lambda: f"the default's PATH and /usr are gone: {r['result']}")
        s.remove_source()
        sess.send({"jsonrpc": "2.0", "id": 2, "method": "exec",
                   "params": {"argv": ["true"]}})
        r = sess.recv(2)
        check("result" in r, lambda: f"exec: {r}")
        res = r["result"]
        save_result(res)
        want = f"ro_bind {s.dir}: No such file or directory"
        check(res["status"] == "sandbox_error" and want in res["detail"]
              and want in res["hint"],
              lambda: f"the vanished bind is not named: {res}")
    finally:
        rc = sess.close()
    check(rc == 0, lambda: f"stockade serve exited {rc}")
    return "ok, then sandbox_error naming the bind"


def mcp_case(user, tmp):
    prefix, stockade = user
    s = Setup(tmp)
    sess = Session(prefix + [stockade, "mcp", "--policy", s.policy,
                             "--workspace", s.ws])
    try:
        sess.send(MCP_INIT)
        sess.recv(1)

        def run_code(rid, code):
            sess.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": "run_code", "arguments": {
                           "language": "sh", "code": code}}})
            r = sess.recv(rid)
            check("result" in r, lambda: f"run_code: {r}")
            return r["result"]

        res = run_code(2, s.script)
        out = res["structuredContent"]
        check(out["status"] == "ok" and out["stdout"] == s.want,
              lambda: f"the default's PATH and /usr are gone: {res}")
        s.remove_source()
        res = run_code(3, "true")
        out = res["structuredContent"]
        want = f"ro_bind {s.dir}: No such file or directory"
        check(out["status"] == "sandbox_error" and want in out["detail"]
              and want in res["content"][0]["text"],
              lambda: f"the vanished bind is not named: {res}")
    finally:
        rc = sess.close()
    check(rc == 0, lambda: f"stockade mcp exited {rc}")
    return "ok, then sandbox_error naming the bind"


CLEANUP = []


def main():
    cases = [("serve: one bind and one variable keep the default's /usr and "
              "PATH; the bind gone is sandbox_error naming it", serve_case),
             ("mcp: one bind and one variable keep the default's /usr and "
              "PATH; the bind gone is sandbox_error naming it", mcp_case)]
    users = [f"as uid {os.geteuid()}"]
    if os.geteuid() == 0:
        users.append(f"as uid {NOBODY}")
    print(f"1..{len(cases) * len(users)}")
    failed = n = 0
    try:
        for label in users:
            user, skip = ([], STOCKADE), None
            if label != users[0]:
                if shutil.which("setpriv") is None:
                    skip = Skip("setpriv not found (util-linux)")
                else:
                    user = (["setpriv", f"--reuid={NOBODY}",
                             f"--regid={NOBODY}", "--clear-groups"],
                            unprivileged_binaries(STOCKADE, CLEANUP))
            # Not under /tmp or /work, which the jail mounts itself.
            tmp = tempfile.mkdtemp(prefix="stockade-policy-lists-",
                                   dir="/var/tmp")
            CLEANUP.append(tmp)
            os.chmod(tmp, 0o755)
            for title, fn in cases:
                n += 1
                if skip is not None:
                    failed += tap_skip(n, f"{title} ({label})", skip)
                else:
                    failed += tap_case(n, f"{title} ({label})", fn, user, tmp)
    finally:
        remove_all(CLEANUP)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
