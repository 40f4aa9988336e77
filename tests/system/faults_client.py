# Case 5 of test_faults_kill.py: a client gone in the middle of fs.write
# or fs.read over `stockade serve --socket` (docs/protocol.md): no file,
# no temporary name, the broker alive, and the next connection finds the
# other files intact and a working launcher.

import base64
import hashlib
import json
import os
import socket

from faults_util import exec_ok, finish, reconnect
from test_fsattack import check, no_temporaries, write_with_deadline

MiB = 1 << 20


def seeded(h):
    """A socket session on a fresh workspace with keep.bin (1 MiB), a
    4 MiB big.bin and a run job; returns (session, sha of keep.bin)."""
    ws = h.new_ws()
    s = h.serve(ws, sock=True)
    keep = os.urandom(MiB)
    s.result("fs.write", {"path": "keep.bin", "data": base64.b64encode(keep).decode()})
    exec_ok(s, "first")
    s.result("exec", {"argv": ["sh", "-c", "head -c 4194304 /dev/urandom > big.bin"]})
    s.result("fs.mkdir", {"path": "in"})
    return ws, s, hashlib.sha256(keep).hexdigest()


def intact(s, ws, keep_sha, what):
    """After a client went: the broker alive, a new connection, no file in
    in/, keep.bin unchanged, the launcher working."""
    check(s.proc.poll() is None, lambda: f"{what}: the broker ended: {s.stderr()}")
    reconnect(s)
    check(s.result("fs.list", {"path": "in"})["entries"] == [],
          f"{what}: in/ is not empty")
    got = s.result("fs.read", {"path": "keep.bin"})
    check(hashlib.sha256(base64.b64decode(got["data"])).hexdigest() == keep_sha,
          f"{what}: keep.bin changed")
    no_temporaries(ws)
    exec_ok(s, "after")


def other_client(s):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(30)  # every send and receive has a deadline
    s.sock.close()
    s.sock = None
    c.connect(s.path)
    return c


def case_write_cut(h):
    ws, s, keep_sha = seeded(h)
    notes = []
    try:
        # An inline line cut off half way: 4 MiB of base64, half sent
        # (the broker is reading it: more than a socket buffer), then
        # the connection closed.
        c = other_client(s)
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "fs.write",
                           "params": {"path": "in/inline.bin", "data":
                                      base64.b64encode(os.urandom(3 * MiB))
                                      .decode()}}).encode()
        c.sendall(line[:len(line) // 2])
        c.close()
        intact(s, ws, keep_sha, "an inline line cut")
        notes.append("inline line cut")
        # A descriptor's data cut off, the client gone: its pipe and its
        # connection closed one after the other, in either order, without
        # and with "size".
        for size, pipe_first in ((None, True), (None, False),
                                 (2 * MiB, True), (2 * MiB, False)):
            c = other_client(s)
            r, w = os.pipe()
            params = {"path": "in/fd.bin", "fd": 0}
            if size:
                params["size"] = size
            req = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "fs.write",
                              "params": params}).encode() + b"\n"
            socket.send_fds(c, [req], [r])
            os.close(r)
            write_with_deadline(w, b"x" * MiB, 30)
            for fd in ((w, c) if pipe_first else (c, w)):
                fd.close() if isinstance(fd, socket.socket) else os.close(fd)
            intact(s, ws, keep_sha, f"fd write cut (size {size}, pipe "
                   f"{'first' if pipe_first else 'last'})")
        notes.append("fd write cut x4")
        # The pipe ends early but the client stays: io_error, exactly.
        r, w = os.pipe()
        rid, req = s.request("fs.write", {"path": "in/short.bin", "fd": 0,
                                          "size": 2 * MiB})
        s.send(req, [r])
        os.close(r)
        write_with_deadline(w, b"x" * MiB, 30)
        os.close(w)
        msg = s.answer(rid, s.recv_line(30), "a short fd write")
        check(msg.get("error", {}).get("data", {}).get("error") == "io_error",
              f"a short write: want io_error, got {msg}")
        intact(s, ws, keep_sha, "a short fd write")
        notes.append("short write io_error")
        s.close()
        return ", ".join(notes)
    finally:
        finish(s)


def case_read_cut(h):
    ws, s, keep_sha = seeded(h)
    try:
        big = s.result("fs.stat", {"path": "big.bin"})
        # The connection closed while a 4 MiB inline answer is written.
        c = other_client(s)
        c.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "fs.read",
                              "params": {"path": "big.bin"}}).encode() + b"\n")
        got = b""
        while len(got) < 256 * 1024:
            b = c.recv(65536)
            check(b, "the inline answer ended early")
            got += b
        c.close()
        intact(s, ws, keep_sha, "an inline read cut")
        check(s.result("fs.stat", {"path": "big.bin"}) == big, "big.bin changed")
        # The client's pipe closed while the broker copies into it, then
        # its connection.
        c = other_client(s)
        r, w = os.pipe()
        req = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "fs.read",
                          "params": {"path": "big.bin", "fd": 0}}).encode() + b"\n"
        socket.send_fds(c, [req], [w])
        os.close(w)
        n = 0
        while n < 256 * 1024:
            b = os.read(r, 65536)
            check(b, "the pipe ended early")
            n += len(b)
        os.close(r)
        c.close()
        intact(s, ws, keep_sha, "a read into a closed pipe")
        check(s.result("fs.stat", {"path": "big.bin"}) == big, "big.bin changed")
        s.close()
        return "inline answer and pipe cut; next client fine"
    finally:
        finish(s)
