#!/usr/bin/env python3
# Progress on a terminal (issue 8, item 5; broker/cli/progress.c, README.md
# "Progress on a terminal"): `stockade put` and `get` of a 64 MiB file
# and `stockade run` of a job that lasts two seconds, on a pseudo-terminal
# (python's pty module) and not on one.
#
# Registered in tests/meson.build as:
#
#   test('progress', python, args : [files('test_progress.py')],
#        protocol : 'tap', env : test_env, suite : 'jail',
#        is_parallel : false, timeout : 300)
#
# where test_env sets STOCKADE_BIN (the launcher sits beside it).
#
# What must hold, for every user it runs as (root and uid 65534 through
# setpriv when the test runs as root; the invoking user otherwise):
#  - on a terminal (stdout and stderr a pty, TERM=xterm), put and get show
#    a line with bytes, total, percentage, rate and elapsed time, redrawn
#    with CR + ESC [ K, and end with a "(100%)" line; the file arrives
#    intact (sha256);
#  - with stdout or stderr not a terminal, or --no-progress, stderr is
#    byte for byte what --no-progress with stdout to a file gives (here:
#    empty), and TERM=dumb gets the final line without any redraw;
#  - a small file shows nothing;
#  - run of a 2 s job on a pty shows "running N s of 30 s (limit)", erased
#    before the program's output and before the summary, which still
#    ends the output; on a pipe, with --json or --format text, nothing of
#    it.
#
# Output is TAP. A check that cannot run here (a kernel without user
# namespaces: exit 69; no setpriv) is "# SKIP", "not ok" under
# STOCKADE_MUST_WORK=1.

import hashlib
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, tap_fail, tap_skip, traversable_tmp,
                           unprivileged_binaries)

BIG = 64 << 20
ERASE = b"\r\x1b[K"
UNIT = rb"[0-9.]+ (?:B|KiB|MiB|GiB)"
METER = rb"stockade: %s " + UNIT + rb" of 64\.0 MiB \([0-9]+%%\), " + UNIT + \
    rb"/s, [0-9]+\.[0-9] s"
FINAL = rb"stockade: %s 64\.0 MiB \(100%%\) in [0-9]+\.[0-9] s, " + UNIT + \
    rb"/s\r?\n"
RUNNING = rb"stockade: running [0-9]+\.[0-9] s of 30 s \(limit\)"


def spawn(argv, env, out_tty=True, err_tty=True, stdin=None, timeout=120):
    """Runs ARGV with its stdout and/or stderr on a new pty (the others to
    files). Returns (status, what the pty showed, stdout, stderr) as
    bytes (the pty's copy is empty when neither stream is on it)."""
    master, slave = pty.openpty()
    with tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        proc = subprocess.Popen(argv, env=env,
                                stdin=stdin if stdin is not None
                                else subprocess.DEVNULL,
                                stdout=slave if out_tty else fout,
                                stderr=slave if err_tty else ferr,
                                start_new_session=True)
        os.close(slave)
        shown = bytearray()
        deadline = time.monotonic() + timeout
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    proc.kill()
                    raise AssertionError(f"{argv} did not end in {timeout} s")
                ready, _, _ = select.select([master], [], [], min(left, 1.0))
                if not ready:
                    if proc.poll() is not None and not (out_tty or err_tty):
                        break
                    continue
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every end of the slave is closed
                    break
                if not data:
                    break
                shown += data
        finally:
            os.close(master)
        status = proc.wait(timeout=timeout)
        fout.seek(0)
        ferr.seek(0)
        return status, bytes(shown), fout.read(), ferr.read()


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def refused(status, text):
    if status == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused (exit 69: the kernel lacks a layer): "
                   + text.decode(errors="replace")[-300:])


class Setup:
    """A workspace and a host directory for one user; the 64 MiB file."""

    def __init__(self, stockade, prefix, owner, env, cleanup):
        self.stockade = stockade
        self.prefix = prefix
        self.env = env
        self.dir = tempfile.mkdtemp(prefix="stockade-progress-",
                                    dir=traversable_tmp())
        cleanup.append(self.dir)
        os.chmod(self.dir, 0o755)
        self.ws = os.path.join(self.dir, "ws")
        self.host = os.path.join(self.dir, "host")
        os.mkdir(self.ws, 0o700)
        os.mkdir(self.host, 0o755)
        self.big = os.path.join(self.host, "big.bin")
        with open(self.big, "wb") as f:
            for _ in range(BIG >> 20):
                f.write(os.urandom(1 << 20))
        self.small = os.path.join(self.host, "small.txt")
        with open(self.small, "wb") as f:
            f.write(b"hello\n")
        if owner is not None:
            for path in (self.ws, self.host, self.big, self.small):
                os.chown(path, owner, owner)
        self.big_sum = sha256(self.big)

    def argv(self, *args):
        return self.prefix + [self.stockade] + list(args)

    def fs(self, cmd, *args):
        return self.argv(cmd, "--workspace", self.ws, *args)

    def term(self, name="xterm"):
        env = dict(self.env)
        env["TERM"] = name
        return env


def check_meter(verb, shown):
    if ERASE not in shown:
        raise AssertionError(f"{verb}: no line redrawn with CR ESC [ K:\n"
                             f"{shown!r}")
    if not re.search(METER % verb.encode(), shown):
        raise AssertionError(f"{verb}: no line with bytes, total, percent, "
                             f"rate and elapsed time:\n{shown!r}")
    if not re.search(FINAL % verb.encode() + rb"$", shown):
        raise AssertionError(f"{verb}: the output does not end with the "
                             f"(100%) line:\n{shown!r}")
    # The last live line is erased before the final one.
    final = re.search(FINAL % verb.encode() + rb"$", shown).start()
    if not shown[:final].endswith(ERASE):
        raise AssertionError(f"{verb}: the final line does not follow an "
                             f"erase:\n{shown!r}")


def t_put_tty(s):
    status, shown, _, _ = spawn(s.fs("put", s.big, "big.bin"), s.term())
    refused(status, shown)
    assert status == 0, f"put exited {status}: {shown!r}"
    check_meter("put", shown)
    got = sha256(os.path.join(s.ws, "big.bin"))
    assert got == s.big_sum, "the file put differs (sha256)"
    return f"{len(shown)} bytes on the terminal"


def t_get_tty(s):
    out = os.path.join(s.host, "back.bin")
    status, shown, _, _ = spawn(s.fs("get", "big.bin", out), s.term())
    refused(status, shown)
    assert status == 0, f"get exited {status}: {shown!r}"
    check_meter("get", shown)
    assert sha256(out) == s.big_sum, "the file got differs (sha256)"
    return "meter and sha256"


def t_not_terminal(s):
    """Every way of not being (only) on a terminal prints what
    --no-progress with stdout to a file prints."""
    out = os.path.join(s.host, "back2.bin")
    cmds = {
        "put": s.fs("put", "--overwrite", s.big, "big2.bin"),
        "get": s.fs("get", "big.bin", out),
    }
    for verb, argv in cmds.items():
        ref = spawn(argv[:len(s.prefix) + 2] + ["--no-progress"] +
                    argv[len(s.prefix) + 2:], s.term(), out_tty=False)
        refused(ref[0], ref[1])
        assert ref[0] == 0, f"{verb} --no-progress exited {ref[0]}: {ref!r}"
        cases = [
            ("stdout to a file", dict(out_tty=False), 1),
            ("stderr to a file", dict(err_tty=False), 3),
            ("--no-progress on a terminal", None, 1),
        ]
        for what, kw, idx in cases:
            if kw is None:
                r = spawn(argv[:len(s.prefix) + 2] + ["--no-progress"] +
                          argv[len(s.prefix) + 2:], s.term())
            else:
                r = spawn(argv, s.term(), **kw)
            assert r[0] == 0, f"{verb}, {what}: exited {r[0]}"
            if r[idx] != ref[1]:
                raise AssertionError(f"{verb}, {what}: stderr {r[idx]!r}, "
                                     f"--no-progress gave {ref[1]!r}")
        if verb == "get":
            assert sha256(out) == s.big_sum, "the file got differs"
    assert sha256(os.path.join(s.ws, "big2.bin")) == s.big_sum
    return f"stderr byte for byte as --no-progress ({len(ref[1])} bytes)"


def t_get_stdout(s):
    """A small put shows nothing; get to standard output on a terminal
    shows only the data (the meter would be mixed into it), even past
    the meter's 1 MiB."""
    status, shown, _, _ = spawn(s.fs("put", "--overwrite", s.small,
                                     "small.txt"), s.term())
    refused(status, shown)
    assert status == 0 and shown == b"", \
        f"a 6-byte put showed something: {status} {shown!r}"
    two = os.path.join(s.host, "two.txt")
    with open(two, "wb") as f:
        f.write(b"a" * (2 << 20))
    os.chmod(two, 0o644)
    status, shown, _, _ = spawn(s.fs("put", "--no-progress", "--overwrite",
                                     two, "two.txt"), s.term())
    assert status == 0 and shown == b"", f"put: {status} {shown!r}"
    status, shown, _, _ = spawn(s.fs("get", "two.txt", "-"), s.term())
    assert status == 0, f"get to stdout exited {status}"
    if shown != b"a" * (2 << 20):
        raise AssertionError(f"get to stdout on a terminal: {len(shown)} "
                             f"bytes, not the 2 MiB alone: "
                             f"{shown[-200:]!r}")
    return "a small put shows nothing; get to stdout only the data"


def t_dumb(s):
    status, shown, _, _ = spawn(s.fs("put", "--overwrite", s.big,
                                     "big3.bin"), s.term("dumb"))
    assert status == 0, f"put exited {status}: {shown!r}"
    if b"\x1b" in shown or b"\r\x1b" in shown:
        raise AssertionError(f"TERM=dumb got an escape sequence: {shown!r}")
    if not re.fullmatch(FINAL % b"put", shown):
        raise AssertionError(f"TERM=dumb: not the final line alone: "
                             f"{shown!r}")
    return "final line only"


def t_run_tty(s):
    argv = s.argv("run", "--", "sh", "-c",
                  "echo first; sleep 2; echo second; sleep 0.5")
    status, shown, _, _ = spawn(argv, s.term())
    refused(status, shown)
    assert status == 0, f"run exited {status}: {shown!r}"
    if not re.search(RUNNING, shown):
        raise AssertionError(f"no \"running\" line: {shown!r}")
    # Erased before the program's output passes, and before the summary.
    if ERASE + b"second\r\n" not in shown:
        raise AssertionError(f"the status line was not erased before the "
                             f"output: {shown!r}")
    m = re.search(rb"stockade: ok \(exit 0\), wall [0-9]+ ms[^\r\n]*\r\n$",
                  shown)
    if m is None:
        raise AssertionError(f"the summary does not end the output: "
                             f"{shown!r}")
    if not shown[:m.start()].endswith(ERASE) or \
            re.search(RUNNING, shown[m.start():]):
        raise AssertionError(f"a status line is left before or after the "
                             f"summary: {shown!r}")
    if not shown.startswith(b"first\r\n"):
        raise AssertionError(f"the output before the first second: "
                             f"{shown!r}")
    return "status line, erased before output and summary"


def t_run_split_c1(s):
    """Issue 23: C1 controls (CSI, OSC, ST as UTF-8: C2 9B, C2 9D, C2 9C)
    each written in two writes a moment apart, on stdout and stderr, so
    that the broker gets them in separate chunks. The terminal must see
    them in caret notation, never raw; the only ESC it sees is the
    status line's own erase (CR ESC [ K)."""
    script = ("printf '\\302'; sleep 0.4; printf '\\2332J\\n'; "
              "printf '\\302' >&2; sleep 0.4; printf '\\2350;pwn\\302' >&2; "
              "sleep 0.4; printf '\\234\\n' >&2; printf 'end\\302'")
    status, shown, _, _ = spawn(s.argv("run", "--", "sh", "-c", script),
                                s.term())
    refused(status, shown)
    assert status == 0, f"run exited {status}: {shown!r}"
    for raw in (b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x9c"):
        if raw in shown:
            raise AssertionError(f"a raw C1 control {raw!r} reached the "
                                 f"terminal: {shown!r}")
    text = shown.replace(ERASE, b"")
    if b"\x1b" in text:
        raise AssertionError(f"an ESC other than the status line's reached "
                             f"the terminal: {shown!r}")
    if any(0x80 <= b <= 0x9f for b in text.decode("utf-8", "replace")
           .encode("latin-1", "replace")):
        raise AssertionError(f"a C1 byte reached the terminal: {shown!r}")
    # Interleaved as the two streams arrive; "end" is stdout's, its
    # lone lead byte shown as U+FFFD when the stream ends.
    for want in (b"^[[2J", b"^[]0;pwn", b"^[\\", b"end",
                 b"\xef\xbf\xbd"):
        if want not in shown:
            raise AssertionError(f"{want!r} is not shown: {shown!r}")
    return "CSI, OSC and ST in two writes each shown as ^[[, ^[], ^[\\"


def t_run_quiet(s):
    """A 1.5 s job on a pipe, with --json, --format text, --no-progress:
    nothing of the status line."""
    job = ["--", "sleep", "1.5"]
    variants = [
        ("stdout to a file", [], dict(out_tty=False)),
        ("stderr to a file", [], dict(err_tty=False)),
        ("--json", ["--json"], {}),
        ("--format text", ["--format", "text"], {}),
        ("--no-progress", ["--no-progress"], {}),
    ]
    for what, flags, kw in variants:
        status, shown, out, err = spawn(s.argv("run", *flags, *job),
                                        s.term(), **kw)
        refused(status, shown + err)
        assert status == 0, f"{what}: exited {status}: {shown!r} {err!r}"
        for where in (shown, out, err):
            if b"running" in where or b"\x1b[K" in where:
                raise AssertionError(f"{what}: a status line: {where!r}")
        if what == "--json":
            line = shown.strip()
            assert line.startswith(b"{") and line.endswith(b"}") and \
                b"\r\n" not in line, f"--json: not one object: {shown!r}"
    return "nothing on a pipe, with --json, --format text, --no-progress"


TESTS = [
    ("put of 64 MiB on a terminal shows the meter, 100%, sha256", t_put_tty),
    ("get of 64 MiB on a terminal shows the meter, 100%, sha256", t_get_tty),
    ("put/get not on a terminal print what --no-progress prints",
     t_not_terminal),
    ("a small put shows nothing; get to stdout shows only the data",
     t_get_stdout),
    ("TERM=dumb: the final line, no redraw", t_dumb),
    ("run of a 2.5 s job on a terminal shows \"running\"", t_run_tty),
    ("run on a pipe, --json, --format text, --no-progress: no status",
     t_run_quiet),
    ("run on a terminal: C1 controls split across writes are escaped",
     t_run_split_c1),
]


def main():
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    is_root = os.geteuid() == 0
    users = []
    if is_root:
        users.append(("root", [], NOBODY, dict(os.environ)))
        users.append((f"uid {NOBODY}",
                      ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                       "--clear-groups"], NOBODY,
                      {"PATH": "/usr/local/bin:/usr/bin:/bin",
                       "LANG": "C.UTF-8", "HOME": "/nonexistent"}))
    else:
        users.append(("the invoking user", [], None, dict(os.environ)))
    print(f"1..{len(users) * len(TESTS)}")
    failed = 0
    cleanup = []
    number = 0
    try:
        for who, prefix, owner, env in users:
            setup = None
            setup_error = None
            try:
                if not stockade_bin or not os.access(stockade_bin, os.X_OK):
                    raise AssertionError(f"STOCKADE_BIN={stockade_bin!r} is "
                                         "not an executable")
                stockade = stockade_bin
                if prefix:
                    if shutil.which(prefix[0]) is None:
                        raise Skip(f"{prefix[0]} not found (util-linux)")
                    stockade = unprivileged_binaries(stockade_bin, cleanup)
                env.pop("NO_COLOR", None)
                setup = Setup(stockade, prefix, owner, env, cleanup)
            except (Skip, AssertionError, OSError) as exc:
                setup_error = exc
            for title, fn in TESTS:
                number += 1
                name = f"{title} ({who})"
                try:
                    if setup_error is not None:
                        raise setup_error
                    note = fn(setup)
                    print(f"ok {number} - {name} ({note})")
                except Skip as exc:
                    failed += tap_skip(number, name, exc)
                except (AssertionError, OSError, ValueError,
                        subprocess.SubprocessError) as exc:
                    failed += 1
                    tap_fail(number, name, exc)
                sys.stdout.flush()
    finally:
        remove_all(cleanup)
    if not is_root:
        diag("not root: run as root to test root and uid 65534 too")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
