# The host disk full under the broker's writes (test_faults_io.py, case
# 1): 1 MiB tmpfs file systems mounted in the test's own mount namespace
# as the workspace and as a host directory; every failure is the name
# docs/protocol.md gives it, leaves no partial file, and the same session
# or command succeeds once space is freed.

import base64
import os
import shutil
import subprocess

from faults_io_util import (KiB, Session, check, feed_pipe, listing,
                            no_temporaries, pattern, tar_of)


class Disk:
    """A 1 MiB tmpfs at a fresh directory (in the test's own mount
    namespace), with a workspace or host directory in it owned by the
    broker's user."""

    def __init__(self, ctx, name):
        self.mnt = ctx.mkdtemp(name + "-", ctx.base)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0755",
                        "tmpfs", self.mnt], check=True, timeout=30)
        self.dir = ctx.new_dir(self.mnt, "d")
        self.ctx = ctx

    def fill(self, leave):
        """Fills the disk until LEAVE bytes are free, with the file
        filler (the broker's user's)."""
        free = shutil.disk_usage(self.mnt).free
        path = os.path.join(self.dir, "filler")
        self.ctx.host_file("filler", b"\0" * max(0, free - leave), self.dir)
        return path

    def free(self):
        return shutil.disk_usage(self.mnt).free

    def umount(self):
        subprocess.run(["umount", self.mnt], check=False, timeout=30)


def case_disk_write(ctx):
    disk = Disk(ctx, "disk")
    try:
        ws = disk.dir
        ctx.host_file("keep.txt", b"old content\n", ws)
        disk.fill(64 * KiB)
        big = pattern(300 * KiB, "big")
        src = ctx.host_file("src.bin", big)
        sock = os.path.join(ctx.sock_dir, "disk-write")
        s = Session(ctx, ws, sock_path=sock)
        try:
            b64 = base64.b64encode(big).decode()
            s.error("fs.write", {"path": "new.bin", "data": b64}, "quota_exceeded")
            s.error("fs.write", {"path": "keep.txt", "data": b64,
                                 "overwrite": True}, "quota_exceeded")
            with open(src, "rb") as f:
                s.error("fs.write", {"path": "new.bin", "fd": 0}, "quota_exceeded",
                        [f.fileno()])
            with open(src, "rb") as f:
                s.error("fs.write", {"path": "keep.txt", "fd": 0, "overwrite": True,
                                     "size": len(big)}, "quota_exceeded", [f.fileno()])
            for size in (len(big), None):
                r, t = feed_pipe(big)
                params = {"path": "new.bin", "fd": 0}
                if size is not None:
                    params["size"] = size
                s.error("fs.write", params, "quota_exceeded", [r])
                os.close(r)
                t.join(10)
                check(not t.is_alive(), "the pipe feeder still blocked")
            got = listing(ws)
            check(got.get("keep.txt") == b"old content\n" and "new.bin" not in got,
                  f"after the failed writes: {sorted(got)}")
            no_temporaries(ws)
            # Space freed, through the same session: the writes succeed.
            s.result("fs.remove", {"path": "filler"})
            s.result("fs.write", {"path": "new.bin", "data": b64})
            with open(src, "rb") as f:
                s.result("fs.write", {"path": "keep.txt", "fd": 0, "overwrite": True},
                         [f.fileno()])
            check(listing(ws).get("keep.txt") == big, "keep.txt after the write")
        finally:
            rc = s.close()
        check(rc == 0, f"serve --socket exited {rc}: {s.stderr()}")
        no_temporaries(ws)
        return "fs.write inline, file and pipe descriptors: quota_exceeded, then ok"
    finally:
        disk.umount()


def case_disk_unpack(ctx):
    disk = Disk(ctx, "disk")
    try:
        ws = disk.dir
        disk.fill(200 * KiB)
        one = tar_of([("small.txt", b"small\n"),
                      ("big.bin", pattern(400 * KiB, "unpack"))])
        # Many files of up to 64 KiB: created by the writer threads.
        many_files = [(f"m/f{i:03d}", pattern(60 * KiB, f"m{i}")) for i in range(8)]
        many = tar_of(many_files)
        s = Session(ctx, ws)
        try:
            err = s.error("fs.unpack", {"path": "u", "data":
                                        base64.b64encode(one).decode()},
                          "quota_exceeded")
            check(err["data"].get("path") == "big.bin" and
                  err["data"].get("done") == 1, f"fs.unpack: {err}")
            got = listing(ws)
            check(got.get("u/small.txt") == b"small\n" and "u/big.bin" not in got,
                  f"after the failed unpack: {sorted(got)}")
            err = s.error("fs.unpack", {"path": "v", "data":
                                        base64.b64encode(many).decode()},
                          "quota_exceeded")
            want = dict(many_files)
            got = listing(os.path.join(ws, "v")) if os.path.isdir(
                os.path.join(ws, "v")) else {}
            for name, data in got.items():
                check(data == "dir" or want.get(name) == data,
                      f"v/{name}: partial after the failed unpack")
            check(0 < err["data"].get("done", -1) < len(many_files),
                  f"fs.unpack of many: {err}")
            no_temporaries(ws)
            s.result("fs.remove", {"path": "filler"})
            s.result("fs.remove", {"path": "v", "recursive": True})
            r = s.result("fs.unpack", {"path": "u", "overwrite": True,
                                       "data": base64.b64encode(one).decode()})
            check(r["files"] == 2, f"fs.unpack after freeing: {r}")
        finally:
            rc = s.close()
        check(rc == 0, f"serve exited {rc}: {s.stderr()}")
        return "fs.unpack, one big entry and the writer threads: quota_exceeded, then ok"
    finally:
        disk.umount()


def case_disk_cli(ctx):
    disk = Disk(ctx, "disk")
    host = Disk(ctx, "hostdisk")
    try:
        ws = disk.dir
        src = ctx.host_file("cli.bin", pattern(300 * KiB, "cli"))
        inws = ctx.host_file("inws.bin", pattern(300 * KiB, "inws"), ws)
        disk.fill(64 * KiB)
        for args in (["put", "--workspace", ws, src, "p.bin"],
                     ["run", "--workspace", ws, "--put", f"{src}:p.bin", "--",
                      "true"]):
            p = ctx.cli(args)
            err = p.stderr.decode("utf-8", "replace")
            check(p.returncode == 1 and "stockade: p.bin: quota_exceeded: " in err,
                  f"stockade {args[0]}: exit {p.returncode}: {err!r}")
            check(not os.path.exists(os.path.join(ws, "p.bin")), "p.bin exists")
        no_temporaries(ws)
        # A get into a full host disk: the host side's ENOSPC.
        dest = ctx.host_file("dest.bin", b"old\n", host.dir)
        host.fill(64 * KiB)
        p = ctx.cli(["get", "--workspace", ws, "inws.bin", dest])
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 1 and "stockade: inws.bin: io_error: " in err,
              f"stockade get into a full disk: exit {p.returncode}: {err!r}")
        with open(dest, "rb") as f:
            check(f.read() == b"old\n", "the get changed its destination")
        no_temporaries(host.dir)
        os.unlink(os.path.join(host.dir, "filler"))
        os.unlink(os.path.join(ws, "filler"))
        for args in (["put", "--workspace", ws, src, "p.bin"],
                     ["run", "--workspace", ws, "--put", f"{src}:q.bin", "--",
                      "true"]):
            p = ctx.cli(args)
            check(p.returncode == 0, f"{args[0]} after freeing: {p.stderr!r}")
        for name in ("p.bin", "q.bin"):
            with open(os.path.join(ws, name), "rb") as f, open(src, "rb") as g:
                check(f.read() == g.read(), f"{name} after freeing: wrong content")
        p = ctx.cli(["get", "--workspace", ws, "inws.bin", dest])
        check(p.returncode == 0, f"get after freeing: {p.stderr!r}")
        with open(dest, "rb") as f, open(inws, "rb") as g:
            check(f.read() == g.read(), "get after freeing: wrong content")
        return "put, run --put: quota_exceeded; get to a full host disk: io_error; then ok"
    finally:
        disk.umount()
        host.umount()


def case_disk_job(ctx):
    """A job writes 2 MB into a workspace on a full 1 MiB disk. Its writes
    go to its stage (issue 26), so the job itself ends well; the commit
    finds the disk full (quota_exceeded), applies nothing (all or
    nothing) and keeps the change set staged: the job is disk_full with
    the workspace's error, fs.changes lists "fill" as staged, and
    fs.rollback drops it. Then the session goes on: a host-side ENOSPC
    on fs.read, and a write and a job once space is freed."""
    disk = Disk(ctx, "disk")
    host = Disk(ctx, "hostdisk")
    try:
        ws = disk.dir
        ctx.host_file("a.txt", b"alpha\n", ws)
        s = Session(ctx, ws)
        try:
            r = s.result("exec", {"argv": ["sh", "-c",
                                           "head -c 2000000 /dev/zero > fill"]})
            w = r.get("workspace") or {}
            check(r["status"] == "disk_full" and r["exit_code"] == 0 and
                  w.get("error") == "quota_exceeded" and w.get("stage") and
                  w.get("committed") == 0,
                  f"the job that fills the disk: {r}")
            check(not os.path.exists(os.path.join(ws, "fill")),
                  "a commit that did not fit left part of it")
            ch = s.result("fs.changes", {})
            check([(c["path"], c["size"], c["state"]) for c in ch["created"]]
                  == [("fill", 2000000, "staged")]
                  and not ch["modified"] and not ch["deleted"],
                  f"fs.changes after the job: {ch}")
            s.result("fs.rollback", {"stage": w["stage"]})
            r = s.result("fs.read", {"path": "a.txt"})
            check(base64.b64decode(r["data"]) == b"alpha\n", f"fs.read: {r}")
            big = pattern(200 * KiB, "f")
            s.result("fs.write", {"path": "fill", "data":
                                  base64.b64encode(big).decode()})
            size = len(big)
            # fs.read into a host file on a full disk: the host side.
            host.fill(16 * KiB)
            out = ctx.host_file("out.bin", b"", host.dir)
            with open(out, "wb") as f:
                s.error("fs.read", {"path": "fill", "fd": 0}, "io_error",
                        [f.fileno()])
            os.unlink(os.path.join(host.dir, "filler"))
            with open(out, "wb") as f:
                r = s.result("fs.read", {"path": "fill", "fd": 0}, [f.fileno()])
            check(r["size"] == size and os.path.getsize(out) == size,
                  f"fs.read into the freed disk: {r}")
            disk.fill(16 * KiB)
            s.error("fs.write", {"path": "b.bin", "data": base64.b64encode(
                pattern(64 * KiB, "b")).decode()}, "quota_exceeded")
            os.unlink(os.path.join(ws, "filler"))
            s.result("fs.remove", {"path": "fill"})
            s.result("fs.write", {"path": "b.bin", "data": base64.b64encode(
                pattern(64 * KiB, "b")).decode()})
            r = s.result("exec", {"argv": ["sh", "-c", "wc -c < b.bin"]})
            check(r["status"] == "ok" and r["stdout"] == "65536\n", f"exec: {r}")
        finally:
            rc = s.close()
        check(rc == 0, f"serve exited {rc}: {s.stderr()}")
        return ("job disk_full at its commit, nothing applied, kept staged; "
                "fs.changes, fs.read work; host ENOSPC; then ok")
    finally:
        disk.umount()
        host.umount()
