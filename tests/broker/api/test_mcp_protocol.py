#!/usr/bin/python3
# `stockade mcp` at the protocol's edges (docs/mcp.md), over its stdio
# with hand-made lines: what a real client (test_mcp_sdk.py) never sends.
# Version negotiation, requests before initialize, bad lines, a cut last
# line, ping and cancellation while a job runs, a queued request
# cancelled, SIGTERM mid-job, the temporary workspace, the policy as the
# ceiling of the schemas, refused policies, the checkpoint tools. As the
# caller; the session and checkpoint parts again as uid 65534. TAP.
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

STOCKADE = os.environ["STOCKADE_BIN"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}}}
results = []


def check(name, cond, detail=""):
    results.append((name, bool(cond), detail))


def line(o):
    return json.dumps(o) + "\n"


def call(i, tool, args, meta=None):
    p = {"name": tool, "arguments": args}
    if meta:
        p["_meta"] = meta
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": p}


def session(text, args=(), prefix=(), timeout=60, env=None):
    """Runs stockade mcp on the input TEXT; returns (rc, [messages],
    stderr)."""
    r = subprocess.run(list(prefix) + [STOCKADE, "mcp"] + list(args),
                       input=text, capture_output=True, text=True,
                       timeout=timeout, env=env)
    msgs = []
    for ln in r.stdout.splitlines():
        try:
            msgs.append(json.loads(ln))
        except ValueError:
            msgs.append({"unparsable": ln})
    return r.returncode, msgs, r.stderr


def by_id(msgs, i):
    return [m for m in msgs if m.get("id") == i]


class Live:
    """A session driven line by line."""

    def __init__(self, args=(), prefix=()):
        self.p = subprocess.Popen(list(prefix) + [STOCKADE, "mcp"] + list(args),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)

    def send(self, o):
        self.p.stdin.write(line(o))
        self.p.stdin.flush()

    def recv(self):
        ln = self.p.stdout.readline()
        return json.loads(ln) if ln else None


def workspace(owner_65534):
    d = tempfile.mkdtemp(prefix="stockade-mcp-proto-")
    os.chmod(d, 0o755)
    ws = os.path.join(d, "ws")
    os.mkdir(ws)
    if owner_65534 or os.geteuid() == 0:
        os.chown(ws, 65534, 65534)
    return d, ws


def negotiation():
    for asked, want, structured in (("2025-11-25", "2025-11-25", True),
                                    ("2025-06-18", "2025-06-18", True),
                                    ("2025-03-26", "2025-03-26", False),
                                    ("2024-11-05", "2024-11-05", False),
                                    ("1999-01-01", "2025-11-25", True)):
        init = json.loads(json.dumps(INIT))
        init["params"]["protocolVersion"] = asked
        rc, msgs, _ = session(line(init) + line(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + line(
            call(3, "run_code", {"language": "sh", "code": "echo hi"})))
        got = by_id(msgs, 1)[0]["result"]["protocolVersion"]
        tools = by_id(msgs, 2)[0]["result"]["tools"]
        res = by_id(msgs, 3)[0]["result"]
        has = all("outputSchema" in t for t in tools) and "structuredContent" in res
        none = not any("outputSchema" in t for t in tools) and "structuredContent" not in res
        check(f"initialize with {asked} answers {want}; structured output "
              f"{'on' if structured else 'off'}",
              rc == 0 and got == want and (has if structured else none)
              and res["content"][0]["text"].startswith("status: ok"),
              f"got {got}, rc {rc}")


def edges():
    rc, msgs, _ = session(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                          + line({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    check("a request before initialize is -32002; ping is answered",
          by_id(msgs, 1)[0]["error"]["code"] == -32002
          and by_id(msgs, 2)[0]["result"] == {})
    bad = ("{not json\n" '{"jsonrpc":"2.0","id":5,"id":6,"method":"ping"}\n'
           "[1,2]\n" + line({"jsonrpc": "1.0", "id": 7, "method": "ping"})
           + line({"jsonrpc": "2.0", "id": None, "method": "ping"})
           + line({"jsonrpc": "2.0", "id": 8, "method": "resources/list"})
           + line({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                   "params": {"name": "nope", "arguments": {}}}))
    rc, msgs, _ = session(line(INIT) + bad)
    # Lines that are not requests are answered by the reader at once,
    # before the queued ones: compare the codes, not their order.
    codes = sorted(m.get("error", {}).get("code", 0) for m in msgs
                   if m.get("id") != 1)
    check("bad lines: parse error, duplicate key, batch, jsonrpc 1.0, null id, "
          "unknown method, unknown tool",
          codes == sorted([-32700, -32700, -32600, -32600, -32600, -32601,
                           -32602])
          and rc == 0, f"codes {codes}")
    d, ws = workspace(False)
    try:
        rc, msgs, _ = session(line(INIT) + json.dumps(call(
            2, "write_file", {"path": "cut.txt", "content": "x"})),
            ["--workspace", ws])
        check("a last line without its newline is not carried out",
              rc == 0 and not by_id(msgs, 2)
              and not os.path.exists(os.path.join(ws, "cut.txt")))
    finally:
        shutil.rmtree(d, ignore_errors=True)


def live(prefix=(), label="", owner_65534=False):
    d, ws = workspace(owner_65534)
    try:
        s = Live(["--workspace", ws], prefix)
        s.send(INIT)
        s.recv()
        t0 = time.time()
        s.send(call(2, "run_code", {"language": "sh",
                                    "code": "sleep 30; echo late > late.txt"},
                    {"progressToken": 77}))
        s.send(call(3, "write_file", {"path": "queued.txt", "content": "q"}))
        s.send(call(4, "run_code", {"language": "sh", "code": "echo four"}))
        time.sleep(1.5)
        s.send({"jsonrpc": "2.0", "id": 5, "method": "ping"})
        got = [s.recv(), s.recv()]
        ping = [m for m in got if m.get("id") == 5]
        prog = [m for m in got if m.get("method") == "notifications/progress"]
        check(f"{label}ping is answered while a job runs; progress carries "
              "the token", ping and prog and prog[0]["params"]["progressToken"] == 77
              and prog[0]["params"]["total"] == 30, f"{got}")
        # Cancel the queued write, then the running job.
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 3}})
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 2, "reason": "test"}})
        m = s.recv()
        while m is not None and m.get("method") == "notifications/progress":
            m = s.recv()
        check(f"{label}cancelled: the job is killed and unanswered, the "
              "queued request dropped, the next one answered",
              m is not None and m.get("id") == 4
              and m["result"]["structuredContent"]["stdout"] == "four\n"
              and time.time() - t0 < 10
              and not os.path.exists(os.path.join(ws, "queued.txt")), f"{m}")
        # SIGTERM in the middle of a job: it is cancelled, the server exits 0.
        s.send(call(6, "run_code", {"language": "sh",
                                    "code": "sleep 30; echo late > late2.txt"}))
        time.sleep(1)
        t1 = time.time()
        s.p.send_signal(signal.SIGTERM)
        rc = s.p.wait(timeout=15)
        check(f"{label}SIGTERM mid-job: the job is killed, exit 0",
              rc == 0 and time.time() - t1 < 10, f"rc {rc}")
        # Its answer is the job's result, status cancelled (issue 22):
        # not a tool error, with a hint not to run it again.
        m = s.recv()
        while m is not None and m.get("method") == "notifications/progress":
            m = s.recv()
        sc = (m or {}).get("result", {}).get("structuredContent", {})
        check(f"{label}SIGTERM mid-job: answered cancelled, not an error, "
              "with the hint not to retry",
              m is not None and m.get("id") == 6
              and sc.get("status") == "cancelled"
              and m["result"].get("isError") is False
              and "SIGTERM" in sc.get("detail", "")
              and "do not run it again on your own" in sc.get("hint", "")
              and m["result"]["content"][0]["text"].startswith(
                  "status: cancelled\n"), f"{m}")
        # The cancelled request 2 was not answered; its job ended
        # cancelled, which standard error says.
        err = s.p.stderr.read()
        check(f"{label}notifications/cancelled: the job ended cancelled "
              "(standard error), not a sandbox_error",
              "request 2 cancelled by the client, not answered: its job "
              "ended cancelled" in err, err[-1500:])
        time.sleep(0.5)
        check(f"{label}no job wrote after it was cancelled",
              not os.path.exists(os.path.join(ws, "late.txt"))
              and not os.path.exists(os.path.join(ws, "late2.txt")))
        s.p.stdout.close()
        s.p.stderr.close()
        s.p.stdin.close()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def checkpoints(prefix=(), label="", owner_65534=False):
    """The checkpoint tools (issue 26, point 5) over fs.checkpoint and
    fs.restore: listed, a round trip, named errors, off by policy."""
    d, ws = workspace(owner_65534)
    try:
        text = (line(INIT)
                + line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
                + line(call(3, "write_file", {"path": "a.txt", "content": "one"}))
                + line(call(4, "checkpoint", {"name": "c1"}))
                + line(call(5, "write_file", {"path": "a.txt", "content": "two"}))
                + line(call(6, "write_file", {"path": "d/b.txt", "content": "b"}))
                + line(call(7, "list_checkpoints", {}))
                + line(call(8, "restore_checkpoint", {"name": "c1"}))
                + line(call(9, "read_file", {"path": "a.txt"}))
                + line(call(10, "checkpoint", {"name": "a/b"}))
                + line(call(11, "restore_checkpoint", {"name": "none"}))
                + line(call(12, "drop_checkpoint", {"name": "c1"})))
        rc, msgs, err = session(text, ["--workspace", ws], prefix)
        names = {t["name"] for t in by_id(msgs, 2)[0]["result"]["tools"]}
        check(f"{label}tools/list has the checkpoint tools",
              {"checkpoint", "restore_checkpoint", "list_checkpoints",
               "drop_checkpoint"} <= names, f"{sorted(names)}")
        res = {i: (by_id(msgs, i) or [{}])[0].get("result", {})
               for i in range(3, 13)}
        listed = res[7].get("structuredContent", {}).get("checkpoints", [])
        check(f"{label}checkpoint, list, restore, drop: the workspace is "
              "back as it was",
              rc == 0 and res[4].get("isError") is False
              and [c["name"] for c in listed] == ["c1"]
              and res[8].get("isError") is False
              and res[9]["structuredContent"]["content"] == "one"
              and not os.path.exists(os.path.join(ws, "d"))
              and res[12].get("isError") is False,
              f"rc {rc} {json.dumps(res)[:1500]} {err[-500:]}")
        check(f"{label}checkpoint errors are named tool errors",
              res[10].get("isError") is True
              and "invalid_checkpoint_name" in res[10]["content"][0]["text"]
              and res[11].get("isError") is True
              and "no_such_checkpoint" in res[11]["content"][0]["text"],
              json.dumps([res[10], res[11]])[:800])
        pol = os.path.join(d, "p.ini")
        with open(pol, "w") as f:
            f.write("[files]\nmax_checkpoints = 0\n")
        os.chmod(d, 0o755)
        os.chmod(pol, 0o644)
        rc, msgs, _ = session(line(INIT) + line(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            + line(call(3, "checkpoint", {"name": "c1"})),
            ["--workspace", ws, "--policy", pol], prefix)
        names = {t["name"] for t in by_id(msgs, 2)[0]["result"]["tools"]}
        r3 = by_id(msgs, 3)[0]["result"]
        check(f"{label}max_checkpoints = 0: no checkpoint tool listed, a "
              "call is checkpoints_off",
              "checkpoint" not in names and r3.get("isError") is True
              and "checkpoints_off" in r3["content"][0]["text"],
              f"{sorted(names)} {r3}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def temporary_and_policy():
    tmp = tempfile.mkdtemp(prefix="stockade-mcp-tmpdir-")
    os.chmod(tmp, 0o755)
    try:
        env = dict(os.environ, TMPDIR=tmp)
        rc, msgs, err = session(line(INIT) + line(call(
            2, "write_file", {"path": "a.txt", "content": "x"})), env=env)
        check("without --workspace: a temporary workspace, named on stderr, "
              "removed at exit", rc == 0 and "workspace " + tmp in err
              and os.listdir(tmp) == [], f"{err} {os.listdir(tmp)}")
        rc, msgs, err = session(line(INIT), ["--keep"], env=env)
        check("--keep keeps it", rc == 0 and len(os.listdir(tmp)) == 1)
        pol = os.path.join(tmp, "p.ini")
        with open(pol, "w") as f:
            f.write("[limits]\nwall_time_ms = 5000\nmemory_mb = 256\n")
        rc, msgs, _ = session(line(INIT) + line(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            ["--policy", pol], env=env)
        tools = {t["name"]: t for t in by_id(msgs, 2)[0]["result"]["tools"]}
        props = tools["run_code"]["inputSchema"]["properties"]
        check("the policy is the ceiling: the schema's maxima and the "
              "description follow it", props["timeout_seconds"]["maximum"] == 5
              and props["memory_mb"]["maximum"] == 256
              and "5 s of wall-clock time" in tools["run_code"]["description"],
              json.dumps(props)[:300])
        with open(pol, "w") as f:
            f.write("[jail]\nunsafe_layers_off = network_ns\n")
        rc, _, err = session(line(INIT), ["--policy", pol], env=env)
        check("a policy that switches a layer off is refused (exit 2)",
              rc == 2 and "refused" in err, err)
        rc, _, err = session(line(INIT), ["--workspace", os.path.join(
            tmp, "missing")], env=env)
        check("a missing workspace is exit 2", rc == 2, err)
        rc, _, err = session("", ["--bogus"])
        check("an unknown option is exit 2 with the usage",
              rc == 2 and "usage: stockade mcp" in err)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def findings():
    """What an attack on the server found (issue 8's review), each kept
    fixed."""
    d, ws = workspace(False)
    try:
        args = ["--workspace", ws]
        rc, msgs, _ = session(line(INIT) + line(INIT), args)
        second = by_id(msgs, 1)
        check("a second initialize is refused (-32600)", len(second) == 2
              and second[1].get("error", {}).get("code") == -32600)
        nul = call(2, "write_file", {"path": "n.txt", "content": "a\u0000b"})
        big = "\x1b" * (3 << 20)   # 18 MiB of JSON: over 16, within 6 x inline_kb
        rc, msgs, _ = session(line(INIT) + line(nul) + line(call(
            3, "write_file", {"path": "esc.txt", "content": "\x1b[31mred\x07"}))
            + line(call(4, "read_file", {"path": "esc.txt"}))
            + line(call(5, "run_code", {"language": "bash", "code": "--version"}))
            + line(call(6, "run_command", {"argv": ["true"] * 1024, "stdin": "x"}))
            + line(call(7, "write_file", {"path": "big.txt", "content": big})),
            args, timeout=120)
        r = {i: by_id(msgs, i)[0]["result"] for i in range(2, 8)
             if by_id(msgs, i) and "result" in by_id(msgs, i)[0]}
        check("a NUL in utf-8 content is a tool error that names base64",
              r.get(2, {}).get("isError") is True
              and "base64" in r[2]["content"][0]["text"], f"{r.get(2)}")
        t = r.get(4, {})
        check("read_file: the text shows control characters in caret "
              "notation, structuredContent keeps the bytes",
              "^[" in t.get("content", [{}])[0].get("text", "")
              and "\x1b" not in t["content"][0]["text"]
              and t["structuredContent"]["content"] == "\x1b[31mred\x07", f"{t}")
        check("shell code starting with '-' is code, not an option",
              r.get(5, {}).get("structuredContent", {}).get("exit_code") == 127,
              f"{r.get(5)}")
        check("with stdin (a pipe, no wrapper), argv may hold all 1024 "
              "strings", r.get(6, {}).get("isError") is False
              and r[6]["structuredContent"]["status"] == "ok", f"{r.get(6)}")
        check("a write_file line of 18 MiB (3 MiB of escaped controls) is "
              "carried out", r.get(7, {}).get("isError") is False, f"{msgs[-1]}"[:300])
        # A job that learns its helper names and plants entries there:
        # changes reports them, and the server deletes nothing of its.
        # (Long code is the one helper left: stdin is a pipe.)
        code = ("#" * 16001 + "\n"
                'n0=$(readlink /proc/self/fd/3); n0=${n0#/work/}; n0=${n0%% *}; '
                'mkdir "$n0"; echo x > "$n0/inner"; echo "$n0"')
        rc, msgs, _ = session(line(INIT) + line(call(
            2, "run_code", {"language": "sh", "code": code, "stdin": "s"}))
            + line(call(3, "changes", {})), args)
        name = by_id(msgs, 2)[0]["result"]["structuredContent"]["stdout"].strip()
        ch = by_id(msgs, 3)[0]["result"]["structuredContent"]
        # A file that became a directory is "modified" (fs.changes).
        created = [e["path"] for e in ch["created"] + ch["modified"]]
        check("a job's entries at its helper's name are reported by changes "
              "and left in place", name.startswith(".stockade-code-")
              and name in created and name + "/inner" in created
              and os.path.isdir(os.path.join(ws, name)), f"{name} {created}")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    # A client that closes its end of stdout mid-job: the job is killed,
    # the session ends (exit 1) at once.
    d, ws = workspace(False)
    try:
        s = Live(["--workspace", ws])
        s.send(INIT)
        s.recv()
        s.send(call(2, "run_code", {"language": "sh",
                                    "code": "sleep 8; echo late > late.txt"}))
        time.sleep(1)
        s.p.stdout.close()
        t0 = time.time()
        rc = s.p.wait(timeout=15)
        time.sleep(0.3)
        check("stdout closed by the client mid-job: the job is killed, exit 1",
              rc == 1 and time.time() - t0 < 4
              and not os.path.exists(os.path.join(ws, "late.txt")),
              f"rc {rc} after {time.time() - t0:.1f} s")
        s.p.stdin.close()
        s.p.stderr.close()
        # A client that stops reading while a large result waits: SIGTERM
        # still ends the server.
        s = Live(["--workspace", ws])
        s.send(INIT)
        s.recv()
        s.send(call(2, "run_code", {"language": "python", "code":
                    "for i in range(40000): print('x' * 50)"}))
        s.send(call(3, "run_code", {"language": "sh", "code": "sleep 20"}))
        time.sleep(3)
        s.p.send_signal(signal.SIGTERM)
        try:
            rc = s.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = "hung"
            s.p.kill()
        check("SIGTERM while the client does not read: exit 0", rc == 0,
              f"rc {rc}")
        for f in (s.p.stdin, s.p.stdout, s.p.stderr):
            try:
                f.close()
            except OSError:
                pass
        # A burst of pings never read (their answers fill the pipe),
        # then SIGTERM: the answers still buffered are given up at once.
        s = Live(["--workspace", ws])
        s.send(INIT)
        s.recv()
        burst = "".join(line({"jsonrpc": "2.0", "id": 10 + i, "method": "ping"})
                        for i in range(20000)).encode()
        os.set_blocking(s.p.stdin.fileno(), False)
        # Write until both pipes are full: the server blocked on its
        # answers, with stdin's pipe full of pings behind them.
        stalled = time.time()
        while burst and time.time() - stalled < 1:
            try:
                burst = burst[os.write(s.p.stdin.fileno(), burst):]
                stalled = time.time()
            except BlockingIOError:
                time.sleep(0.05)
        t1 = time.time()
        s.p.send_signal(signal.SIGTERM)
        try:
            rc = s.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = "hung"
            s.p.kill()
        check("SIGTERM after a burst of unread pings: exit 0 at once",
              rc == 0 and time.time() - t1 < 5, f"rc {rc}")
        # Standard output closed from the start: the server runs on
        # /dev/null, and nothing it opens lands on descriptor 1.
        r = subprocess.run([STOCKADE, "mcp", "--workspace", ws],
                           input=line(INIT), text=True, stdout=None,
                           stderr=subprocess.PIPE, timeout=30,
                           pass_fds=(), close_fds=True,
                           preexec_fn=lambda: os.close(1))
        check("standard output closed at start: exit 0, no error",
              r.returncode == 0 and r.stderr == "", r.stderr)
        for f in (s.p.stdin, s.p.stdout, s.p.stderr):
            try:
                f.close()
            except OSError:
                pass
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    global STOCKADE
    negotiation()
    edges()
    live()
    checkpoints()
    temporary_and_policy()
    findings()
    # The live session again as uid 65534, from a copy it can reach.
    tmp = tempfile.mkdtemp(prefix="stockade-mcp-bin-")
    try:
        os.chmod(tmp, 0o755)
        for exe in ("stockade", "stockade-launcher"):
            shutil.copy2(os.path.join(os.path.dirname(STOCKADE), exe),
                         os.path.join(tmp, exe))
        saved, STOCKADE = STOCKADE, os.path.join(tmp, "stockade")
        if os.geteuid() == 0:
            live(["setpriv", "--reuid=65534", "--regid=65534",
                  "--clear-groups"], "as 65534: ", True)
            checkpoints(["setpriv", "--reuid=65534", "--regid=65534",
                         "--clear-groups"], "as 65534: ", True)
        STOCKADE = saved
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{len(results)}")
    failed = 0
    for i, (name, ok, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            failed += 1
            for ln in str(detail).splitlines()[:10]:
                print("# " + ln)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
