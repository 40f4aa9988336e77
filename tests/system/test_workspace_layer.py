#!/usr/bin/env python3
# The workspace as a layer (issue 26), through `stockade run`, `stockade
# serve` and `stockade mcp`, as the caller and, when that is root, as uid
# 65534 (setpriv; the binaries copied by unprivileged_binaries):
#
# 1. quota held at write time by the job's stage (a tmpfs sized by its
#    allowance): a file unlinked but kept open still counts, so does
#    posix_fallocate, and so does [files] max_files; each job ends
#    disk_full with the figures, and the workspace never holds more than
#    its quota;
# 2. a commit that does not fit in the workspace's quota leaves the
#    changes staged with a named error (quota_exceeded), and fs.rollback
#    drops them;
# 3. rollback: after `exec {"commit": "keep"}` and fs.rollback, after
#    `run --rollback-on-failure` of a job that failed, after `run
#    --dry-run`, and after an MCP run under `commit = on_ok` that failed,
#    the workspace is byte for byte what it was (every entry's type,
#    mode, SHA-256 and symlink target);
# 4. two jobs from one checkpoint: fs.checkpoint, two execs kept apart
#    (commit keep) that each see the checkpoint's state, one committed,
#    one rolled back, then fs.restore; the MCP checkpoint tools the same
#    way;
# 5. the write-back firewall: a job that writes .git/hooks/pre-commit
#    in a git checkout has it refused (result and fs.changes name the
#    rule), and the user's own `git commit` on the host afterwards runs
#    no hook;
# 6. a broker killed in the middle of a commit: every file is old or
#    new (never torn), and the next session undoes the commit from its
#    journal (or removes a journal whose commit had finished): the
#    workspace is then exactly the state before or after the job.
#
# Registered in tests/meson.build as test 'workspace-layer' (TAP) with
# STOCKADE_BIN.
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (NOBODY, Skip, diag, remove_all, save_result,
                           tap_case, traversable_tmp, unprivileged_binaries)

STOCKADE = os.environ["STOCKADE_BIN"]
SETPRIV = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
           "--clear-groups"]
EXIT_NO_KERNEL_LAYER = 78
JOURNAL = ".stockade-commit"
QUOTA_POLICY = """[files]
workspace_mb = 16
max_files = 60
"""
ON_OK_POLICY = """[files]
commit = on_ok
"""


class User:
    def __init__(self, label, prefix, binary):
        self.label = label
        self.prefix = prefix
        self.bin = binary


def owned_dir(user, cleanup, prefix="stockade-layer-"):
    """A fresh 0755 directory D holding an empty workspace D/ws that USER
    owns (65534 for the setpriv user); returns (D, ws)."""
    d = tempfile.mkdtemp(prefix=prefix, dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    ws = os.path.join(d, "ws")
    os.mkdir(ws)
    if user.prefix or os.geteuid() == 0:
        os.chown(d, NOBODY, NOBODY)
        os.chown(ws, NOBODY, NOBODY)
    return d, ws


def policy_file(d, text):
    p = os.path.join(d, "policy.ini")
    with open(p, "w") as f:
        f.write(text)
    os.chmod(p, 0o644)
    return p


def as_owner(ws, fn):
    """Runs FN() and gives everything below WS to the workspace's owner."""
    fn()
    st = os.stat(ws)
    for root, dirs, files in os.walk(ws):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), st.st_uid, st.st_gid)


def seed(ws):
    """A small tree with several modes and a symlink."""
    def make():
        os.makedirs(os.path.join(ws, "src", "deep"))
        for name, mode, text in (("src/main.c", 0o644, "int main;\n"),
                                 ("src/run.sh", 0o755, "#!/bin/sh\n"),
                                 ("src/deep/secret", 0o600, "s" * 5000),
                                 ("README", 0o644, "hello\n")):
            p = os.path.join(ws, name)
            with open(p, "w") as f:
                f.write(text)
            os.chmod(p, mode)
        os.chmod(os.path.join(ws, "src", "deep"), 0o700)
        os.symlink("src/main.c", os.path.join(ws, "link"))
    as_owner(ws, make)


def digest(ws):
    """{path: (type, mode, sha256 or link target)} of everything in WS."""
    out = {}
    for root, dirs, files in os.walk(ws):
        for n in dirs + files:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, ws)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), "")
            else:
                with open(p, "rb") as f:
                    h = hashlib.sha256(f.read()).hexdigest()
                out[rel] = ("file", stat.S_IMODE(st.st_mode), h)
    return out


def same_tree(before, ws, what):
    after = digest(ws)
    if after != before:
        diff = sorted(set(before.items()) ^ set(after.items()))
        raise AssertionError(f"{what}: the workspace differs: {diff[:8]}")


def run(user, args, **kw):
    r = subprocess.run(user.prefix + [user.bin] + args, capture_output=True,
                       text=True, timeout=kw.pop("timeout", 120), cwd="/",
                       **kw)
    if r.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused: the kernel lacks a layer: "
                   + r.stderr[-300:])
    return r


def run_json(user, args):
    r = run(user, ["run", "--format", "json"] + args)
    try:
        res = json.loads(r.stdout)
    except ValueError:
        raise AssertionError(f"run exited {r.returncode}, no result: "
                             f"{r.stderr[-800:]}")
    save_result(res)
    return res, r


class Serve:
    """`stockade serve` on standard input and output, line by line."""

    def __init__(self, user, ws, policy=None):
        args = ["serve", "--workspace", ws]
        if policy:
            args += ["--policy", policy]
        self.p = subprocess.Popen(user.prefix + [user.bin] + args,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd="/")
        self.n = 0

    def call(self, method, **params):
        self.n += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.n,
                                        "method": method,
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            err = self.p.stderr.read().decode()
            if self.p.wait() == EXIT_NO_KERNEL_LAYER:
                raise Skip("serve refused: the kernel lacks a layer")
            raise AssertionError(f"serve ended without an answer to "
                                 f"{method}: {err[-800:]}")
        return json.loads(line)

    def ok(self, method, **params):
        r = self.call(method, **params)
        if "result" not in r:
            raise AssertionError(f"{method} {params}: {r}")
        if method == "exec":
            save_result(r["result"])
        return r["result"]

    def end(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            if not f.closed:
                f.close()


class Mcp:
    def __init__(self, user, ws, policy=None):
        args = ["mcp", "--workspace", ws]
        if policy:
            args += ["--policy", policy]
        self.p = subprocess.Popen(user.prefix + [user.bin] + args,
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd="/")
        self.n = 0
        self.rpc("initialize", protocolVersion="2025-06-18",
                 capabilities={}, clientInfo={"name": "t", "version": "1"})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method":
                                       "notifications/initialized"}) + "\n")

    def rpc(self, method, **params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n,
                                       "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise AssertionError("mcp ended: " + self.p.stderr.read()[-800:])
        r = json.loads(line)
        if "result" not in r:
            raise AssertionError(f"{method}: {r}")
        return r["result"]

    def tool(self, tool_name, **args):
        r = self.rpc("tools/call", name=tool_name, arguments=args)
        return r.get("structuredContent", r)

    def end(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def total_bytes(ws):
    n = 0
    for root, _, files in os.walk(ws):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                n += os.lstat(p).st_size
    return n


# ---- 1, 2: quota -------------------------------------------------------

UNLINKED = r"""
import os
f = open("/work/held", "wb")
f.write(b"x" * (11 << 20)); f.flush()
os.unlink("/work/held")
g = open("/work/more", "wb")
g.write(b"y" * (11 << 20)); g.flush()
print("not refused")
"""
FALLOCATE = r"""
import os
fd = os.open("/work/big", os.O_CREAT | os.O_WRONLY, 0o644)
os.posix_fallocate(fd, 0, 30 << 20)  # past the 16 MiB stage, under file_size_mb
print("not refused")
"""
MANY = r"""
import os
for i in range(200):
    open(f"/work/f{i}", "w").close()
print("not refused")
"""


def check_full(res, word, label):
    if res.get("status") != "disk_full":
        raise AssertionError(f"{label}: status {res.get('status')!r}, "
                             f"detail {res.get('detail')!r}")
    if word not in res.get("detail", ""):
        raise AssertionError(f"{label}: detail {res.get('detail')!r} does "
                             f"not say {word!r}")


def quota_cases(user, front, cleanup):
    d, ws = owned_dir(user, cleanup)
    pol = policy_file(d, QUOTA_POLICY)
    cases = (("unlinked-open", UNLINKED, "MiB"),
             ("fallocate", FALLOCATE, "MiB"),
             ("max_files", MANY, "entries"))
    seen = []
    for label, code, word in cases:
        argv = ["python3", "-c", code]
        if front == "run":
            res, _ = run_json(user, ["--policy", pol, "--workspace", ws,
                                     "--"] + argv)
        elif front == "serve":
            s = Serve(user, ws, pol)
            try:
                res = s.ok("exec", argv=argv)
            finally:
                s.end()
        else:
            m = Mcp(user, ws, pol)
            try:
                res = m.tool("run_command", argv=argv)
            finally:
                m.end()
        check_full(res, word, f"{front} {label}")
        if "not refused" in res.get("stdout", ""):
            raise AssertionError(f"{front} {label}: the write went through")
        if total_bytes(ws) > 16 << 20:
            raise AssertionError(f"{front} {label}: the workspace holds "
                                 f"{total_bytes(ws)} bytes, over 16 MiB")
        nfiles = sum(len(f) + len(dd) for _, dd, f in os.walk(ws))
        if nfiles > 60:
            raise AssertionError(f"{front} {label}: {nfiles} entries")
        seen.append(f"{label} disk_full")
        shutil.rmtree(ws)
        os.mkdir(ws)
        if user.prefix or os.geteuid() == 0:
            os.chown(ws, NOBODY, NOBODY)
    return ", ".join(seen)


def commit_over_quota(user, cleanup):
    d, ws = owned_dir(user, cleanup)
    pol = policy_file(d, QUOTA_POLICY)
    as_owner(ws, lambda: open(os.path.join(ws, "old"), "wb").write(
        b"o" * (12 << 20)))
    before = digest(ws)
    s = Serve(user, ws, pol)
    try:
        res = s.ok("exec", argv=["sh", "-c", "head -c 8388608 /dev/zero "
                                 "> /work/new"])
        w = res.get("workspace", {})
        if res.get("status") != "disk_full" or w.get("error") != \
                "quota_exceeded" or not w.get("stage"):
            raise AssertionError(f"status {res.get('status')}, workspace "
                                 f"{w}")
        same_tree(before, ws, "after a commit over the quota")
        diff = s.ok("fs.diff", stage=w["stage"])
        if [c["path"] for c in diff["created"]] != ["new"]:
            raise AssertionError(f"fs.diff {diff}")
        s.ok("fs.rollback", stage=w["stage"])
        same_tree(before, ws, "after fs.rollback")
    finally:
        s.end()
    return "disk_full, quota_exceeded, kept staged, rolled back"


# ---- 3: rollback -------------------------------------------------------

MUTATE = ("echo changed >> /work/README; rm /work/src/main.c; "
          "chmod 600 /work/src/run.sh; mkdir /work/new; "
          "echo x > /work/new/file; rm /work/link; ln -s /etc /work/link; "
          "rm -r /work/src/deep")


def rollback_serve(user, cleanup):
    _, ws = owned_dir(user, cleanup)
    seed(ws)
    before = digest(ws)
    s = Serve(user, ws)
    try:
        res = s.ok("exec", argv=["sh", "-c", MUTATE], commit="keep")
        stage = res.get("workspace", {}).get("stage")
        if res.get("status") != "ok" or not stage:
            raise AssertionError(f"exec: {res.get('status')} "
                                 f"{res.get('workspace')}")
        same_tree(before, ws, "while staged")
        diff = s.ok("fs.diff", stage=stage)
        kinds = {k: sorted(c["path"] for c in diff[k])
                 for k in ("created", "modified", "deleted")}
        if "README" not in kinds["modified"] or \
                "src/main.c" not in kinds["deleted"] or \
                "new/file" not in kinds["created"] or \
                "src/deep/secret" not in kinds["deleted"]:
            raise AssertionError(f"fs.diff {kinds}")
        s.ok("fs.rollback", stage=stage)
        same_tree(before, ws, "after fs.rollback")
    finally:
        s.end()
    return f"{sum(len(v) for v in kinds.values())} changes rolled back"


def rollback_run(user, cleanup):
    _, ws = owned_dir(user, cleanup)
    seed(ws)
    before = digest(ws)
    res, _ = run_json(user, ["--rollback-on-failure", "--workspace", ws,
                             "--", "sh", "-c", MUTATE + "; exit 3"])
    if res.get("status") != "exit_nonzero" or \
            res.get("workspace", {}).get("rolled_back", 0) < 5:
        raise AssertionError(f"{res.get('status')} {res.get('workspace')}")
    same_tree(before, ws, "after --rollback-on-failure")
    r = run(user, ["run", "--dry-run", "--workspace", ws, "--", "sh", "-c",
                   MUTATE])
    if r.returncode != 0 or "dry run: modified README" not in r.stderr or \
            "nothing applied" not in r.stderr:
        raise AssertionError(f"--dry-run exit {r.returncode}: "
                             f"{r.stderr[-600:]}")
    same_tree(before, ws, "after --dry-run")
    res, _ = run_json(user, ["--workspace", ws, "--", "sh", "-c",
                             "echo new > /work/README"])
    if res.get("workspace", {}).get("committed") != 1 or \
            open(os.path.join(ws, "README")).read() != "new\n":
        raise AssertionError(f"commit always: {res.get('workspace')}")
    return "failed job rolled back; dry run applied nothing; ok committed"


# ---- the confined broker reads the stage through its spawner ----------

WRITE_TREE = "echo hi > /work/f; mkdir /work/d; echo x > /work/d/g"


def confined_commit(user, front, cleanup):
    """A confined broker (every front confines itself) reads the job's
    stage through its spawner (broker/jobs/spawner.h): run commits the
    job's files and directory; serve's exec commits them and fs.changes
    lists them."""
    _, ws = owned_dir(user, cleanup)
    if front == "run":
        res, _ = run_json(user, ["--workspace", ws, "--", "sh", "-c",
                                 WRITE_TREE])
    else:
        s = Serve(user, ws)
        try:
            res = s.ok("exec", argv=["sh", "-c", WRITE_TREE])
            ch = s.ok("fs.changes")
        finally:
            s.end()
        made = sorted(c["path"] for c in ch.get("created", []))
        if made != ["d", "d/g", "f"] or \
                any(c.get("state") != "committed" for c in ch["created"]):
            raise AssertionError(f"fs.changes: {ch}")
    w = res.get("workspace", {})
    if res.get("status") != "ok" or w.get("committed") != 3 or \
            w.get("error") is not None:
        raise AssertionError(f"{front}: {res.get('status')} {w}")
    got = {p: open(os.path.join(ws, p)).read() for p in ("f", "d/g")
           if os.path.isfile(os.path.join(ws, p))}
    if got != {"f": "hi\n", "d/g": "x\n"}:
        raise AssertionError(f"{front}: the workspace holds {got}")
    return "f, d and d/g committed"


def rollback_mcp(user, cleanup):
    d, ws = owned_dir(user, cleanup)
    seed(ws)
    before = digest(ws)
    m = Mcp(user, ws, policy_file(d, ON_OK_POLICY))
    try:
        res = m.tool("run_command", argv=["sh", "-c", MUTATE + "; exit 1"])
    finally:
        m.end()
    if res.get("status") != "exit_nonzero":
        raise AssertionError(f"mcp: {str(res)[:600]}")
    same_tree(before, ws, "after an MCP job under commit = on_ok")
    return "commit = on_ok rolled back a failed MCP job"


# ---- 4: checkpoints ----------------------------------------------------

def checkpoint_serve(user, cleanup):
    _, ws = owned_dir(user, cleanup)
    seed(ws)
    base = digest(ws)
    s = Serve(user, ws)
    try:
        s.ok("fs.checkpoint", name="base")
        see = "cat /work/fix.txt 2>/dev/null || echo none; "
        a = s.ok("exec", argv=["sh", "-c", see + "echo A > /work/fix.txt"],
                 commit="keep")
        b = s.ok("exec", argv=["sh", "-c", see + "echo B > /work/fix.txt"],
                 commit="keep")
        if a.get("stdout") != "none\n" or b.get("stdout") != "none\n":
            raise AssertionError(f"the second job saw the first's change: "
                                 f"{a.get('stdout')!r} {b.get('stdout')!r}")
        sa, sb = a["workspace"]["stage"], b["workspace"]["stage"]
        s.ok("fs.commit", stage=sb)
        s.ok("fs.rollback", stage=sa)
        if open(os.path.join(ws, "fix.txt")).read() != "B\n":
            raise AssertionError("fix B was not the one kept")
        s.ok("fs.restore", name="base")
        same_tree(base, ws, "after fs.restore base")
        listed = s.ok("fs.checkpoints")
        if [c["name"] for c in listed["checkpoints"]] != ["base"]:
            raise AssertionError(f"fs.checkpoints {listed}")
    finally:
        s.end()
    return "two fixes side by side from one checkpoint, B kept, restored"


def checkpoint_mcp(user, cleanup):
    _, ws = owned_dir(user, cleanup)
    seed(ws)
    base = digest(ws)
    m = Mcp(user, ws)
    try:
        m.tool("checkpoint", name="before-fix")
        m.tool("run_command", argv=["sh", "-c", MUTATE])
        if digest(ws) == base:
            raise AssertionError("the job's changes were not committed")
        m.tool("restore_checkpoint", name="before-fix")
    finally:
        m.end()
    same_tree(base, ws, "after restore_checkpoint")
    return "checkpoint, job, restore_checkpoint"


# ---- 5: the write-back firewall ---------------------------------------

HOOK = ("mkdir -p /work/.git/hooks && printf '#!/bin/sh\\ntouch "
        "\"$(git rev-parse --show-toplevel)/../HOOK_RAN\"\\n' > "
        "/work/.git/hooks/pre-commit && chmod 755 "
        "/work/.git/hooks/pre-commit && echo code > /work/app.py")


def git_prefix(user):
    """The workspace's owner runs git: 65534 when the test is root."""
    return user.prefix or (SETPRIV if os.geteuid() == 0 else [])


def git_repo(user, d, ws):
    if shutil.which("git") is None:
        raise AssertionError("git is missing (tools/bootstrap installs it)")
    env = dict(os.environ, HOME=d, GIT_CONFIG_NOSYSTEM="1")
    for args in (["init", "-q"], ["config", "user.email", "t@example.org"],
                 ["config", "user.name", "t"]):
        r = subprocess.run(git_prefix(user) + ["git", "-c", "safe.directory=*", "-C", ws] + args, env=env,
                           capture_output=True, text=True, cwd="/")
        if r.returncode != 0:
            raise AssertionError(f"git {args}: {r.stderr}")
    return env


def host_commit(user, ws, env):
    r = subprocess.run(git_prefix(user) + ["git", "-c", "safe.directory=*", "-C", ws, "add", "-A"], env=env,
                       capture_output=True, text=True, cwd="/")
    r = subprocess.run(git_prefix(user) + ["git", "-c", "safe.directory=*", "-C", ws,
                                      "commit", "-q", "-m", "user's commit"], env=env,
                       capture_output=True, text=True, cwd="/")
    if r.returncode != 0:
        raise AssertionError(f"git commit: {r.stderr}")


def hook_refused(user, front, cleanup):
    d, ws = owned_dir(user, cleanup)
    env = git_repo(user, d, ws)
    argv = ["sh", "-c", HOOK]
    if front == "run":
        res, _ = run_json(user, ["--workspace", ws, "--"] + argv)
    elif front == "serve":
        s = Serve(user, ws)
        try:
            res = s.ok("exec", argv=argv)
            ch = s.ok("fs.changes")
        finally:
            s.end()
        held = [c for c in ch["created"]
                if c["path"] == ".git/hooks/pre-commit"]
        if not held or held[0].get("state") != "refused" or \
                not held[0].get("rule"):
            raise AssertionError(f"fs.changes: {ch['created']}")
    else:
        m = Mcp(user, ws)
        try:
            res = m.tool("run_command", argv=argv)
        finally:
            m.end()
    w = res.get("workspace", {})
    names = [h["path"] for h in w.get("held", [])]
    if ".git/hooks/pre-commit" not in names or w.get("refused", 0) < 1:
        raise AssertionError(f"{front}: workspace {w}")
    if "held back" not in res.get("hint", ""):
        raise AssertionError(f"{front}: hint {res.get('hint')!r}")
    if os.path.exists(os.path.join(ws, ".git", "hooks", "pre-commit")):
        raise AssertionError(f"{front}: the hook reached the workspace")
    if not os.path.exists(os.path.join(ws, "app.py")):
        raise AssertionError(f"{front}: the job's other file was held too")
    host_commit(user, ws, env)
    if os.path.exists(os.path.join(d, "HOOK_RAN")):
        raise AssertionError(f"{front}: the user's git commit ran the hook")
    return "hook refused, app.py committed, the user's commit ran no hook"


# ---- 6: a broker killed mid-commit ------------------------------------

def killed_mid_commit(user, cleanup):
    for attempt, nfiles in enumerate((3000, 8000, 16000)):
        d, ws = owned_dir(user, cleanup)
        as_owner(ws, lambda: [open(os.path.join(ws, f"m{i:05d}"), "w").write(
            "old " * 1000) for i in range(300)])
        before = digest(ws)
        s = Serve(user, ws)
        code = ("for i in $(seq -w 0 299); do echo new > /work/m00$i; done; "
                f"mkdir /work/c; cd /work/c; seq 1 {nfiles} | xargs touch")
        s.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 1, "method":
                                     "exec", "params": {"argv": ["sh", "-c",
                                                                 code]}})
                         + "\n").encode())
        s.p.stdin.flush()
        journal = os.path.join(ws, JOURNAL)
        deadline = time.monotonic() + 120
        caught = False
        while time.monotonic() < deadline and s.p.poll() is None:
            if os.path.exists(journal):
                os.kill(s.p.pid, signal.SIGKILL)
                caught = True
                break
            time.sleep(0.0005)
        s.end()
        if not caught:
            diag(f"attempt {attempt}: the commit of {nfiles} files ended "
                 "before the journal was seen")
            continue
        for i in range(300):
            text = open(os.path.join(ws, f"m{i:05d}")).read()
            if text not in ("old " * 1000, "new\n"):
                raise AssertionError(f"m{i:05d} is torn: {text[:40]!r}")
        r = run(user, ["run", "--workspace", ws, "--", "true"])
        if r.returncode != 0:
            raise AssertionError(f"the next run: {r.stderr[-600:]}")
        if os.path.exists(journal):
            raise AssertionError("the journal is still there")
        now = digest(ws)
        if now != before:
            created = [p for p in now if p.startswith("c/") or p == "c"]
            if len(created) != nfiles + 1 or any(
                    open(os.path.join(ws, f"m{i:05d}")).read() != "new\n"
                    for i in range(300)):
                raise AssertionError("after recovery the workspace is "
                                     "neither before nor after the job")
            return f"killed in a finished commit; journal removed"
        return f"killed mid-commit of {nfiles} files; undone by the next run"
    raise AssertionError("no commit was caught in progress")


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
            for front in ("run", "serve"):
                cases.append((f"{u.label}: {front}: a confined broker "
                              "commits the job's stage", confined_commit, u,
                              front))
            for front in ("run", "serve", "mcp"):
                cases.append((f"{u.label}: {front}: unlinked-open, "
                              "fallocate and max_files are disk_full",
                              quota_cases, u, front))
            cases += [
                (f"{u.label}: serve: a commit over the quota stays staged",
                 commit_over_quota, u),
                (f"{u.label}: serve: fs.rollback restores hashes and modes",
                 rollback_serve, u),
                (f"{u.label}: run: --rollback-on-failure, --dry-run",
                 rollback_run, u),
                (f"{u.label}: mcp: commit = on_ok rolls a failure back",
                 rollback_mcp, u),
                (f"{u.label}: serve: two jobs from one checkpoint",
                 checkpoint_serve, u),
                (f"{u.label}: mcp: checkpoint and restore",
                 checkpoint_mcp, u),
            ]
            for front in ("run", "serve", "mcp"):
                cases.append((f"{u.label}: {front}: a new git hook is "
                              "refused and never runs", hook_refused, u,
                              front))
            cases.append((f"{u.label}: serve: broker killed mid-commit",
                          killed_mid_commit, u))
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
