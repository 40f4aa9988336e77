#!/usr/bin/python3
"""Writes the seed inputs of the rpc and mcp fuzzers (fuzz/README.md):
sessions of request lines, one request per line, as docs/protocol.md and
docs/mcp.md spell them. Usage: fuzz/gen_json_seeds.py fuzz/corpus"""
import base64
import io
import json
import os
import sys
import tarfile


def tar_b64(entries):
    """An uncompressed ustar archive of ENTRIES (name, data or None for a
    directory), base64."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                t.addfile(info)
            else:
                info.size = len(data)
                info.mode = 0o644
                t.addfile(info, io.BytesIO(data))
    return base64.b64encode(out.getvalue()).decode()


def rpc(i, method, params=None, notify=False):
    r = {"jsonrpc": "2.0", "method": method}
    if not notify:
        r["id"] = i
    if params is not None:
        r["params"] = params
    return json.dumps(r, separators=(",", ":"))


RPC = {
    "doc-session": [
        rpc(1, "fs.write", {"path": "hello.py", "text": "print('hi')\n"}),
        rpc(2, "exec", {"argv": ["python3", "hello.py"]}),
        rpc(3, "fs.read", {"path": "../etc/passwd"}),
        rpc(4, "exec", {"argv": ["sh", "-c", "echo x > new.txt; rm hello.py"]}),
        rpc(5, "fs.changes"),
    ],
    "write-read": [
        rpc(1, "fs.write", {"path": "d/a.txt", "data": base64.b64encode(b"abc\n").decode()}),
        rpc(2, "fs.mkdir", {"path": "d", "parents": True, "mode": 0o700}),
        rpc(3, "fs.write", {"path": "d/a.txt", "text": "x", "mode": 0o600, "overwrite": True}),
        rpc(4, "fs.read", {"path": "d/a.txt", "offset": 0, "length": 1}),
        rpc(5, "fs.stat", {"path": "d/a.txt"}),
        rpc(6, "fs.list", {"path": ".", "recursive": True, "limit": 10}),
    ],
    "rename-remove": [
        rpc("a", "fs.write", {"path": "f", "text": "1"}),
        rpc("b", "fs.rename", {"from": "f", "to": "g", "overwrite": False}),
        rpc("c", "fs.rename", {"from_b64": base64.b64encode(b"g").decode(), "to": "h"}),
        rpc("d", "fs.remove", {"path": "h"}),
        rpc("e", "fs.mkdir", {"path": "x/y", "parents": True}),
        rpc("f", "fs.remove", {"path": "x", "recursive": True}),
    ],
    "unpack-pack": [
        rpc(1, "fs.unpack", {"path": "src", "data": tar_b64([("pkg", None), ("pkg/a.py", b"print(1)\n"), ("./b.txt", b"b")])}),
        rpc(2, "fs.pack", {"path": "src"}),
        rpc(3, "fs.unpack", {"path": ".", "overwrite": True, "data": tar_b64([("../escape", b"x")])}),
        rpc(4, "fs.list", {"recursive": True}),
    ],
    "path-b64": [
        rpc(1, "fs.write", {"path_b64": base64.b64encode(b"caf\xe9\x00").decode(), "text": ""}),
        rpc(2, "fs.write", {"path_b64": base64.b64encode(b"caf\xe9").decode(), "text": "e"}),
        rpc(3, "fs.list"),
    ],
    "bad-envelopes": [
        '{"jsonrpc":"2.0","id":1,"method":"fs.read","params":{"path":"a","path":"../x"}}',
        '[{"jsonrpc":"2.0","id":1,"method":"fs.list"}]',
        '{"jsonrpc":"1.0","id":1,"method":"fs.list"}',
        '{"jsonrpc":"2.0","id":{},"method":"fs.list"}',
        '{"jsonrpc":"2.0","id":null,"method":"fs.list","params":[]}',
        '{"jsonrpc":"2.0","id":2,"method":"nope"}',
        '{"jsonrpc":"2.0","method":"fs.mkdir","params":{"path":"n"}}',
        "not json",
        '"a string"',
        rpc(3, "fs.write", {"path": "a", "text": "x", "overwirte": True}),
        rpc(4, "fs.write", {"path": "a", "text": "x", "fd": 0}),
        rpc(5, "exec", {"argv": [], "timeout_seconds": 0}),
        rpc(6, "exec", {"argv": ["true"], "timeout_seconds": 1.5, "memory_mb": 64}),
    ],
    "bad-paths": [
        rpc(1, "fs.stat", {"path": "/etc/passwd"}),
        rpc(2, "fs.stat", {"path": "a//b"}),
        rpc(3, "fs.stat", {"path": "a/./b"}),
        rpc(4, "fs.stat", {"path": "a/"}),
        rpc(5, "fs.stat", {"path": "a\u0000b"}),
        rpc(6, "fs.stat", {"path": "x" * 300}),
        rpc(7, "fs.mkdir", {"path": "/".join(["d"] * 70), "parents": True}),
    ],
}


def mcp(i, method, params=None):
    r = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        r["params"] = params
    return json.dumps(r, separators=(",", ":"))


def call(i, name, args, token=None):
    p = {"name": name, "arguments": args}
    if token is not None:
        p["_meta"] = {"progressToken": token}
    return mcp(i, "tools/call", p)


INIT = mcp(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "fuzz", "version": "1"}})
INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
MCP = {
    "tools": [INIT, INITIALIZED, mcp(1, "tools/list"), mcp(2, "ping")],
    "old-revision": [
        mcp(0, "initialize", {"protocolVersion": "2024-11-05"}),
        mcp(1, "tools/list"),
        call(2, "list_files", {}),
    ],
    "files": [
        INIT,
        call(1, "write_file", {"path": "a/b.py", "content": "print(2)\n"}),
        call(2, "write_file", {"path": "bin", "content": base64.b64encode(b"\x00\x01").decode(), "encoding": "base64"}),
        call(3, "read_file", {"path": "a/b.py", "offset": 0, "length": 5}),
        call(4, "list_files", {"path": ".", "recursive": True}),
        call(5, "changes", {}),
    ],
    "run": [
        INIT,
        call(1, "run_code", {"language": "python", "code": "print(1)", "stdin": "x", "timeout_seconds": 5}, token="t1"),
        call(2, "run_command", {"argv": ["ls", "-l"], "memory_mb": 64}, token=7),
        call(3, "changes", {}),
    ],
    "errors": [
        mcp(1, "tools/list"),
        INIT,
        INIT,
        call(2, "nope", {}),
        call(3, "read_file", {"path": "../x"}),
        call(4, "write_file", {"path": "x", "content": 1}),
        '{"jsonrpc":"2.0","id":5,"result":{}}',
        '{"jsonrpc":"2.0","id":null,"method":"ping"}',
        '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":[]}',
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
        "{bad json",
    ],
}


def main():
    top = sys.argv[1]
    for kind, seeds in (("rpc", RPC), ("mcp", MCP)):
        os.makedirs(os.path.join(top, kind), exist_ok=True)
        for name, lines in seeds.items():
            with open(os.path.join(top, kind, "seed-" + name), "w") as f:
                f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
