#!/usr/bin/env python3
# The MCP host snippets (examples/mcp/) start a working `stockade mcp`.
#
# Registered in tests/meson.build as:
#
#   test('examples-mcp', python, args : [files('test_examples_mcp.py')],
#        protocol : 'tap', env : test_env, suite : 'jail',
#        is_parallel : false, timeout : 180)
#
# where test_env sets STOCKADE_BIN and STOCKADE_SOURCE_ROOT.
#
# Output is TAP, one test per snippet. Each snippet is parsed as its host
# reads it (JSON; TOML with tomllib; the `claude mcp add` line split as a
# shell would, the command being what follows "--"), its server entry
# "stockade" is taken (mcpServers, servers, or [mcp_servers.stockade]),
# and the command it names is checked: `stockade` (or an absolute path
# ending in /stockade), arguments exactly `mcp --workspace DIR`, "type"
# "stdio" where the host has that field. Then the command is replaced by
# the build's stockade and DIR by a fresh directory (owned by uid 65534
# when the test runs as root: a root broker refuses a root-owned
# workspace), the server is started as the host would start it (stdin and
# stdout pipes), and a small client written here with the standard
# library does the minimal MCP exchange over stdio (newline-delimited
# JSON-RPC 2.0; https://modelcontextprotocol.io/specification/2025-06-18):
# initialize with protocolVersion "2025-06-18", the
# notifications/initialized notification, tools/list (exactly the ten
# tools run_code, run_command, write_file, read_file, list_files,
# changes, checkpoint, restore_checkpoint, list_checkpoints,
# drop_checkpoint), and tools/call run_code with python print(6*7), whose text
# content must hold "42" and which must not be isError. Closing stdin
# must end the server with status 0.
#
# stockade exiting 69 (the kernel lacks a layer) is a skip, a failure
# under STOCKADE_MUST_WORK=1.

import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import tomllib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, tap_fail, tap_skip, traversable_tmp)

TOOLS = {"run_code", "run_command", "write_file", "read_file", "list_files",
         "changes", "checkpoint", "restore_checkpoint", "list_checkpoints",
         "drop_checkpoint"}
PROTOCOL_VERSION = "2025-06-18"

# (title, file under examples/mcp, how it is read, where the entry is)
SNIPPETS = [
    ("Claude Desktop", "claude-desktop/claude_desktop_config.json", "json",
     "mcpServers"),
    ("Claude Code, claude mcp add", "claude-code/add.sh", "claude-add", None),
    ("Claude Code, project .mcp.json", "claude-code/.mcp.json", "json",
     "mcpServers"),
    ("VS Code .vscode/mcp.json", "vscode/.vscode/mcp.json", "json", "servers"),
    ("Cursor .cursor/mcp.json", "cursor/.cursor/mcp.json", "json",
     "mcpServers"),
    ("Codex config.toml", "codex/config.toml", "toml", "mcp_servers"),
]


def snippet_command(path, kind, key):
    """(command, args, entry) of the snippet's "stockade" server."""
    with open(path, "rb") as f:
        raw = f.read()
    if kind == "claude-add":
        lines = [ln for ln in raw.decode().splitlines()
                 if ln.startswith("claude mcp add")]
        if len(lines) != 1:
            raise AssertionError(f"expected one `claude mcp add` line, got {lines}")
        words = shlex.split(lines[0])
        if "--" not in words:
            raise AssertionError("no -- before the server's command")
        opts, cmd = words[3:words.index("--")], words[words.index("--") + 1:]
        # claude mcp add [options] NAME -- COMMAND [ARGS...]
        if opts[-1] != "stockade" or "--transport" not in opts or \
                opts[opts.index("--transport") + 1] != "stdio":
            raise AssertionError(f"options/name: {opts}")
        return cmd[0], cmd[1:], {"type": "stdio"}
    doc = tomllib.loads(raw.decode()) if kind == "toml" else json.loads(raw)
    servers = doc.get(key)
    if not isinstance(servers, dict) or "stockade" not in servers:
        raise AssertionError(f"no {key}.stockade in {path}")
    entry = servers["stockade"]
    return entry.get("command"), entry.get("args"), entry


def check_shape(command, args, entry, key):
    if not isinstance(command, str) or not (
            command == "stockade" or (command.startswith("/")
                                      and command.endswith("/stockade"))):
        raise AssertionError(f"command {command!r} is not stockade")
    if not (isinstance(args, list) and len(args) == 3 and args[:2] ==
            ["mcp", "--workspace"] and isinstance(args[2], str)
            and args[2].startswith("/")):
        raise AssertionError(f"args {args!r} are not mcp --workspace /DIR")
    if key == "servers" and entry.get("type") != "stdio":
        raise AssertionError("VS Code needs \"type\": \"stdio\"")


class Client:
    """A minimal MCP client over a child's stdin/stdout."""

    def __init__(self, argv):
        self.errf = tempfile.TemporaryFile()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.errf,
                                  cwd="/")
        self.next_id = 1

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def stderr(self):
        self.errf.seek(0)
        return self.errf.read().decode("utf-8", "replace")

    def request(self, method, params, timeout=60):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method,
                   "params": params})
        timer = threading.Timer(timeout, self.p.kill)
        timer.start()
        try:
            while True:
                line = self.p.stdout.readline()
                if not line:
                    rc = self.p.wait()
                    if rc == EXIT_NO_KERNEL_LAYER:
                        raise Skip("stockade refused: " + self.stderr().strip())
                    raise AssertionError(f"{method}: the server closed stdout "
                                         f"(exit {rc}); stderr: "
                                         f"{self.stderr().strip()[-800:]}")
                msg = json.loads(line)
                if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
                    raise AssertionError(f"not a JSON-RPC 2.0 message: {line!r}")
                if "method" in msg:
                    if "id" in msg:     # a request of the server's: refuse it
                        self.send({"jsonrpc": "2.0", "id": msg["id"],
                                   "error": {"code": -32601,
                                             "message": "not supported"}})
                    continue            # a notification (log, progress)
                if msg.get("id") != rid:
                    raise AssertionError(f"{method}: answer for id "
                                         f"{msg.get('id')!r}, expected {rid}")
                if "error" in msg:
                    raise AssertionError(f"{method}: error {msg['error']}")
                return msg["result"]
        finally:
            timer.cancel()

    def close(self, timeout=15):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            raise AssertionError(f"the server did not exit within {timeout} s "
                                 "of the end of its input")
        finally:
            self.stderr_text = self.stderr()
            self.p.stdout.close()
            self.errf.close()


def handshake(argv):
    c = Client(argv)
    try:
        init = c.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "stockade-examples-test", "version": "1"}})
        if not isinstance(init.get("protocolVersion"), str):
            raise AssertionError(f"initialize: no protocolVersion: {init}")
        if "tools" not in (init.get("capabilities") or {}):
            raise AssertionError(f"initialize: no tools capability: {init}")
        c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        names = {t.get("name") for t in c.request("tools/list", {})["tools"]}
        if names != TOOLS:
            raise AssertionError(f"tools/list: {sorted(names)}, expected "
                                 f"{sorted(TOOLS)}")
        r = c.request("tools/call", {"name": "run_code", "arguments": {
            "language": "python", "code": "print(6*7)"}})
        text = "".join(x.get("text", "") for x in r.get("content", [])
                       if x.get("type") == "text")
        if r.get("isError") or "42" not in text:
            raise AssertionError(f"run_code print(6*7): isError "
                                 f"{r.get('isError')!r}, text {text[:600]!r}")
    except BaseException:
        try:
            c.close(5)
        except AssertionError:
            pass
        raise
    rc = c.close()
    if rc != 0:
        raise AssertionError(f"exit status {rc} at the end of input; stderr: "
                             f"{c.stderr_text.strip()[-800:]}")
    return init.get("protocolVersion")


def main():
    stockade = os.environ.get("STOCKADE_BIN", "")
    root = os.environ.get("STOCKADE_SOURCE_ROOT") or \
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    mcp_dir = os.path.join(root, "examples", "mcp")
    print(f"1..{len(SNIPPETS)}")
    failed = 0
    cleanup = []
    try:
        for number, (title, rel, kind, key) in enumerate(SNIPPETS, 1):
            try:
                if not stockade or not os.access(stockade, os.X_OK):
                    raise AssertionError(f"STOCKADE_BIN={stockade!r} is not an "
                                         "executable")
                command, args, entry = snippet_command(
                    os.path.join(mcp_dir, rel), kind, key)
                check_shape(command, args, entry, key)
                ws = tempfile.mkdtemp(prefix="stockade-mcp-ws-",
                                      dir=traversable_tmp())
                cleanup.append(ws)
                if os.geteuid() == 0:
                    os.chown(ws, NOBODY, NOBODY)
                argv = [stockade] + args[:2] + [ws]
                diag(f"{rel}: {command} {' '.join(args)}")
                diag("$ " + " ".join(argv))
                version = handshake(argv)
                print(f"ok {number} - {title} ({rel}): initialize "
                      f"({version}), ten tools, run_code printed 42")
            except Skip as exc:
                failed += tap_skip(number, title, exc)
            except (AssertionError, OSError, ValueError, KeyError, TypeError,
                    tomllib.TOMLDecodeError, subprocess.SubprocessError) as exc:
                failed += 1
                tap_fail(number, f"{title} ({rel})", exc)
            sys.stdout.flush()
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
