#!/usr/bin/env python3
# The soak test's job cycle (tests/system/test_soak.py): STEPS, 20 steps of one
# `exec` each, with the file transfers around them, and Runner, which runs
# them on one stockade_client.Session, keeps every result
# (stockade_test.save_result), validates it against the result schema and
# counts the jobs and the failures. Each step raises AssertionError when
# an answer is not the one meant: the status (and exit code, signal,
# output), the bytes of a file round-tripped, the changes listed.
#
# Step D (the workspace directory "c<cycle>") is made by the first step
# and removed by the last, so a workspace is empty after each full cycle.
# Over a socket, every other cycle passes descriptors (a memfd or a pipe)
# where the others send the bytes inline (base64). LIGHT (the concurrent
# sessions) makes the files smaller and the memory bomb 200 MiB against
# 32 MiB instead of 600 MiB against 64 MiB.

import base64
import hashlib
import io
import os
import random
import tarfile
import time

from stockade_test import save_result

# The sessions' policy: limits the attacks reach quickly (40 processes
# against 16, 1 MiB of output against 64 KiB).
POLICY = "[limits]\nprocesses = 16\nstdout_kb = 64\nstderr_kb = 64\n"

# --- one session's jobs --------------------------------------------------

class Runner:
    """Runs the cycle's steps on one Session and keeps the count of jobs,
    the failures (strings) and the results that fail the schema."""

    def __init__(self, session, name, light, validator, surrogates, fatal):
        """SESSION: a stockade_client.Session; LIGHT: the lighter mix;
        VALIDATOR: a jsonschema validator of the result schema;
        SURROGATES: validate_results.lone_surrogates; FATAL: the exception
        class that ends the session (SessionClosed), let through run()."""
        self.s, self.name, self.light, self.fatal = session, name, light, fatal
        self.validator, self.surrogates = validator, surrogates
        self.jobs, self.failures, self.invalid = 0, [], []
        self.statuses, self.seconds = {}, {}

    def exec(self, argv, want, timeout=10, memory_mb=None):
        r = self.s.exec(argv, timeout_seconds=timeout, memory_mb=memory_mb)
        self.jobs += 1
        save_result(r, test="soak")
        errs = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: "
                f"{e.message[:200]}" for e in self.validator.iter_errors(r)]
        errs += [f"lone surrogate in {p}" for p in self.surrogates(r)]
        if errs:
            self.invalid.append(f"{self.name} job {self.jobs}: " + "; ".join(errs))
        self.statuses[r["status"]] = self.statuses.get(r["status"], 0) + 1
        if r["status"] != want:
            raise AssertionError(f"{argv[:3]}: status {r['status']}, meant "
                                 f"{want} ({r.get('detail')!r})")
        return r

    def call(self, method, params, fds=()):
        return self.s.call(method, params, fds)

    def run(self, cycle, step):
        t = time.monotonic()
        try:
            STEPS[step](self, f"c{cycle}", cycle)
        except self.fatal:
            raise
        except Exception as exc:  # an error answer (RPCError), OSError too
            what = "" if isinstance(exc, AssertionError) else f"{type(exc).__name__}: "
            self.failures.append(f"{self.name} cycle {cycle} step "
                                 f"{STEPS[step].__name__}: {what}{exc}")
        finally:
            name = STEPS[step].__name__[5:]
            self.seconds[name] = self.seconds.get(name, 0) + time.monotonic() - t


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def b64(data):
    return base64.b64encode(data).decode("ascii")


def memfd(data=b""):
    fd = os.memfd_create("soak", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def memfd_bytes(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    out = b""
    while chunk := os.read(fd, 1 << 20):
        out += chunk
    os.close(fd)
    return out


def payload(cycle, n):
    return random.Random(cycle * 7919 + n).randbytes(n)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def tree_files(cycle):
    return {"a.txt": f"a {cycle}\n".encode(), "x/1.txt": payload(cycle, 3000),
            "x/2.bin": payload(cycle, 700), "x/y/3.txt": b"three\n",
            "b.bin": payload(cycle, 12000), "x/y/empty": b""}


def make_tar(files):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in sorted(files.items()):
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode = len(data), 0o644
            t.addfile(ti, io.BytesIO(data))
    return bio.getvalue()


def read_tar(data):
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        return {m.name: t.extractfile(m).read() for m in t if m.isfile()}


def by_fd(r, cycle):
    """Whether this step passes a descriptor: over a socket, every other
    cycle (the others stay inline)."""
    return r.s.over_socket and cycle % 2 == 0


def step_true(r, d, cycle):
    r.call("fs.mkdir", {"path": d})
    r.exec(["true"], "ok")


def step_echo(r, d, cycle):
    res = r.exec(["sh", "-c", 'printf "out-%s\\n" "$1"; printf "err-%s\\n" "$1" >&2',
                  "sh", d], "ok")
    expect((res["stdout"], res["stderr"]) == (f"out-{d}\n", f"err-{d}\n"),
           f"output {res['stdout']!r} {res['stderr']!r}")


def step_python(r, d, cycle):
    res = r.exec(["python3", "-c", "import sys; print(sum(range(int(sys.argv[1]))))",
                  str(cycle * 1000)], "ok")
    expect(res["stdout"] == f"{sum(range(cycle * 1000))}\n", f"stdout {res['stdout']!r}")


def step_exit(r, d, cycle):
    code = 1 + cycle % 250
    res = r.exec(["sh", "-c", 'exit "$1"', "sh", str(code)], "exit_nonzero")
    expect(res["exit_code"] == code, f"exit code {res['exit_code']}, meant {code}")


def step_segv(r, d, cycle):
    res = r.exec(["sh", "-c", "kill -SEGV $$"], "crash")
    expect(res["signal"] == "SIGSEGV", f"signal {res['signal']}")


def step_abort(r, d, cycle):
    res = r.exec(["python3", "-c", "import os; os.abort()"], "crash")
    expect(res["signal"] == "SIGABRT", f"signal {res['signal']}")


def step_timeout(r, d, cycle):
    r.exec(["sleep", "10"], "timeout", timeout=0.1)


def step_memory(r, d, cycle):
    mib, limit = (200, 32) if r.light else (600, 64)
    r.exec(["python3", "-c", f"b = []\nfor i in range({mib // 8}):\n"
            "    b.append(bytearray(8 << 20))"], "memory_limit", memory_mb=limit)


def step_output(r, d, cycle):
    # 1 MiB under the policy's 64 KiB cap: drained to the end (ok), head
    # and tail kept, every byte counted (on_output_limit = truncate).
    stream = "stdout" if cycle % 2 else "stderr"
    res = r.exec(["sh", "-c", "head -c 1048576 /dev/zero" +
                  ("" if stream == "stdout" else " >&2")], "ok")
    expect(res[stream + "_truncated"] is True, f"{stream} not marked truncated")
    expect(res[stream + "_bytes"] == 1048576,
           f"{stream}_bytes {res[stream + '_bytes']}, 1048576 were written")


def step_processes(r, d, cycle):
    # sh says "Cannot fork" when fork fails, which the broker reads as
    # process_limit whenever the monitor's samples missed the peak.
    r.exec(["sh", "-c", "for i in $(seq 40); do sleep 2 & done; wait"],
           "process_limit")


def step_orphan(r, d, cycle):
    res = r.exec(["sh", "-c", "setsid sleep 30 >/dev/null 2>&1 & echo started"], "ok")
    expect(res["stdout"] == "started\n", f"stdout {res['stdout']!r}")


def step_write_text(r, d, cycle):
    text = "".join(random.Random(cycle).choice("abcdefgh \n") for _ in range(4096))
    r.call("fs.write", {"path": f"{d}/t.txt", "text": text})
    res = r.exec(["sha256sum", f"{d}/t.txt"], "ok")
    expect(res["stdout"].split()[0] == sha(text.encode()), "t.txt's hash differs")


def step_write_data(r, d, cycle):
    data = payload(cycle, 32768 if r.light else 262144)
    r.call("fs.write", {"path": f"{d}/b.bin", "data": b64(data)})
    r.exec(["python3", "-c", "import sys; d = sys.argv[1]\n"
            "open(d + '/rev.bin', 'wb').write(open(d + '/b.bin', 'rb').read()[::-1])",
            d], "ok")
    got = base64.b64decode(r.call("fs.read", {"path": f"{d}/rev.bin"})["data"])
    expect(got == data[::-1], "rev.bin is not b.bin reversed")


def step_write_fd(r, d, cycle):
    data = payload(cycle, 131072 if r.light else 1048576)
    if by_fd(r, cycle):
        fd = memfd(data)
        try:
            r.call("fs.write", {"path": f"{d}/big.bin", "fd": 0, "size": len(data)}, [fd])
        finally:
            os.close(fd)
    else:
        r.call("fs.write", {"path": f"{d}/big.bin", "data": b64(data)})
    res = r.exec(["sha256sum", f"{d}/big.bin"], "ok")
    expect(res["stdout"].split()[0] == sha(data), "big.bin's hash differs")


def step_read_fd(r, d, cycle):
    n = 65536 if r.light else 524288
    r.exec(["python3", "-c", "import sys\nn, k = int(sys.argv[2]), int(sys.argv[3])\n"
            "open(sys.argv[1], 'wb').write((bytes(range(k, 251)) + bytes(range(k)))"
            " * (n // 251) + bytes(n % 251))", f"{d}/gen.bin", str(n),
            str(cycle % 251)], "ok")
    k = cycle % 251
    want = (bytes(range(k, 251)) + bytes(range(k))) * (n // 251) + bytes(n % 251)
    if by_fd(r, cycle):
        fd = memfd()
        try:
            size = r.call("fs.read", {"path": f"{d}/gen.bin", "fd": 0}, [fd])["size"]
        finally:
            got = memfd_bytes(fd)
        expect(size == n, f"fs.read by descriptor: size {size}")
    else:
        got = base64.b64decode(r.call("fs.read", {"path": f"{d}/gen.bin"})["data"])
    expect(got == want, "gen.bin read back differs")
    part = r.call("fs.read", {"path": f"{d}/gen.bin", "offset": 1000, "length": 99})
    expect(base64.b64decode(part["data"]) == want[1000:1099], "ranged read differs")


def step_pipe(r, d, cycle):
    data = payload(cycle, 8192 if r.light else 32768)
    if r.s.over_socket:
        rd, wr = os.pipe()
        os.write(wr, data)      # within the pipe's 64 KiB: no writer needed
        os.close(wr)
        try:
            r.call("fs.write", {"path": f"{d}/p.bin", "fd": 0, "size": len(data)}, [rd])
        finally:
            os.close(rd)
    else:
        r.call("fs.write", {"path": f"{d}/p.bin", "data": b64(b"old")})
        r.call("fs.write", {"path": f"{d}/p.bin", "data": b64(data), "overwrite": True})
    res = r.exec(["sha256sum", f"{d}/p.bin"], "ok")
    expect(res["stdout"].split()[0] == sha(data), "p.bin's hash differs")


def step_unpack(r, d, cycle):
    files = tree_files(cycle)
    archive = make_tar(files)
    params = {"path": f"{d}/u"}
    if by_fd(r, cycle):
        fd = memfd(archive)
        try:
            got = r.call("fs.unpack", dict(params, fd=0), [fd])
        finally:
            os.close(fd)
    else:
        got = r.call("fs.unpack", dict(params, data=b64(archive)))
    expect(got["files"] == len(files), f"fs.unpack made {got['files']} files")
    res = r.exec(["sha256sum", f"{d}/u/x/1.txt", f"{d}/u/x/y/3.txt"], "ok")
    expect([ln.split()[0] for ln in res["stdout"].splitlines()] ==
           [sha(files["x/1.txt"]), sha(files["x/y/3.txt"])],
           "the unpacked files' hashes differ in the jail")


def step_pack(r, d, cycle):
    r.exec(["sh", "-c", 'echo more >> "$1/u/a.txt"', "sh", d], "ok")
    want = dict(tree_files(cycle))
    want["a.txt"] += b"more\n"
    if by_fd(r, cycle):
        fd = memfd()
        try:
            r.call("fs.pack", {"path": f"{d}/u", "fd": 0}, [fd])
        finally:
            archive = memfd_bytes(fd)
    else:
        archive = base64.b64decode(r.call("fs.pack", {"path": f"{d}/u"})["data"])
    got = read_tar(archive)
    expect(got == want, f"fs.pack gave {sorted(got)} (contents or names differ)")


def step_changes(r, d, cycle):
    r.exec(["sh", "-c", 'echo new > "$1/new.txt"; echo mod >> "$1/t.txt"; '
            'rm "$1/rev.bin"', "sh", d], "ok")
    ch = r.call("fs.changes", {})
    created = {i["path"]: i["sha256"] for i in ch["created"]}
    modified = {i["path"] for i in ch["modified"]}
    deleted = {i["path"] for i in ch["deleted"]}
    expect(created == {f"{d}/new.txt": sha(b"new\n")}, f"created {created}")
    expect(f"{d}/t.txt" in modified and modified <= {d, f"{d}/t.txt"},
           f"modified {sorted(modified)}")
    expect(deleted == {f"{d}/rev.bin"}, f"deleted {sorted(deleted)}")


def step_cleanup(r, d, cycle):
    r.call("fs.remove", {"path": d, "recursive": True})
    res = r.exec(["sh", "-c", 'test ! -e "$1" && echo gone', "sh", d], "ok")
    expect(res["stdout"] == "gone\n", f"{d} still there")
    names = [e["path"] for e in r.call("fs.list", {"path": "."})["entries"]]
    expect(d not in names, f"fs.list still shows {d}")


STEPS = [step_true, step_echo, step_python, step_exit, step_segv, step_abort,
         step_timeout, step_memory, step_output, step_processes, step_orphan,
         step_write_text, step_write_data, step_write_fd, step_read_fd,
         step_pipe, step_unpack, step_pack, step_changes, step_cleanup]
