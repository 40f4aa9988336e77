#!/usr/bin/env python3
# Tar streams in and out of the workspace (issue 9: fs.unpack, fs.pack,
# `stockade unpack`, `stockade pack`; broker/fs/fs_tar.h).
#
# Registered in tests/meson.build as test('fstar', ...): TAP, suite jail,
# with test_env (STOCKADE_BIN). It reuses test_fsattack.py's machinery: the
# users (as root and as uid 65534 when root), the canaries outside the
# workspace checked after every case, the sessions of `stockade serve` on
# stdio and on --socket (descriptors with SCM_RIGHTS), and jobs that plant
# what an attack needs inside /work themselves.
#
# Every hostile archive goes through every front (fs.unpack inline over
# stdio, fs.unpack with a pipe over the socket, `stockade unpack` from a
# file and from stdin) and must give its named error with data.path the
# entry and data.done the entries completed, leave no partial file and no
# temporary name, and touch nothing outside the workspace.

import base64
import io
import os
import shutil
import stat
import subprocess
import sys
import tarfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
import test_fsattack as fa
from test_fsattack import check, escape, no_temporaries

MiB = 1 << 20
POLICY_SMALL = (b"[files]\nmax_file_mb = 1\nworkspace_mb = 2\nmax_files = 40\n"
                b"max_path_bytes = 64\nmax_depth = 4\n")


# --- archives ---------------------------------------------------------------

def tar_of(members, fmt=tarfile.PAX_FORMAT):
    """A tar archive of MEMBERS: (name, kind, data-or-target[, mode]) with
    kind "f" (file), "d" (directory), "l" (symlink), "h" (hard link), "c"
    (character device), "p" (FIFO)."""
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt, encoding="utf-8",
                      errors="surrogateescape") as t:
        for m in members:
            name, kind, data = m[0], m[1], m[2]
            ti = tarfile.TarInfo(name)
            ti.mode = m[3] if len(m) > 3 else (0o755 if kind == "d" else 0o644)
            ti.mtime = 1700000000
            body = None
            if kind == "f":
                ti.size = len(data)
                body = io.BytesIO(data)
            elif kind == "d":
                ti.type = tarfile.DIRTYPE
            elif kind == "l":
                ti.type, ti.linkname = tarfile.SYMTYPE, data
            elif kind == "h":
                ti.type, ti.linkname = tarfile.LNKTYPE, data
            elif kind == "c":
                ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
            elif kind == "p":
                ti.type = tarfile.FIFOTYPE
            t.addfile(ti, body)
    return b.getvalue()


def untar(data):
    """{name: (kind, bytes or None, mode)} of the archive DATA."""
    out = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:",
                      encoding="utf-8", errors="surrogateescape") as t:
        for m in t.getmembers():
            body = t.extractfile(m).read() if m.isfile() else None
            out[m.name] = ("d" if m.isdir() else "f" if m.isfile() else "?",
                           body, m.mode)
    return out


def tree(root):
    """{relative path: bytes or None for a directory} below ROOT."""
    out = {}
    for top, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(top, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p) or not (os.path.isdir(p) or os.path.isfile(p)):
                out[rel] = "special"
            elif os.path.isdir(p):
                out[rel] = None
            else:
                with open(p, "rb") as f:
                    out[rel] = f.read()
    return out


def feed(data):
    """A pipe whose read end yields DATA (written by a thread) then ends."""
    r, w = os.pipe()

    def writer():
        try:
            os.write(w, data) if len(data) < 65536 else \
                [os.write(w, data[i:i + 65536]) for i in range(0, len(data), 65536)]
        except OSError:
            pass  # the broker stopped reading: its error says why
        finally:
            os.close(w)
    t = threading.Thread(target=writer, daemon=True)
    t.start()
    return r, t


# --- the fronts ---------------------------------------------------------------

def unpack_all_fronts(env, ws, data, dest, sessions, policy=None,
                      overwrite=False):
    """fs.unpack of DATA into DEST through every front: a list of (front,
    the answer or the CompletedProcess). "{i}" in DEST is the front's
    number (0 to 3), so that each can have its own destination."""
    pol = ["--policy", policy] if policy else []
    ow = ["--overwrite"] if overwrite else []
    out = []
    for s in sessions:
        params = dict(fa.path_params(dest.format(i=len(out))),
                      overwrite=overwrite)
        if s.sock is None:
            msg = s.call("fs.unpack", dict(params, data=base64.b64encode(
                data).decode()))
        else:
            r, t = feed(data)
            try:
                msg = s.call("fs.unpack", dict(params, fd=0), fds=[r])
            finally:
                os.close(r)
                t.join(10)
        out.append(("socket fd" if s.sock else "stdio inline", msg))
    host = env.host_file("archive.tar", data)
    p = env.cli(["unpack", "--workspace", ws] + pol + ow +
                [host, dest.format(i=len(out))])
    out.append(("cli file", p))
    with open(host, "rb") as f:
        p = env.cli(["unpack", "--workspace", ws] + pol + ow +
                    ["-", dest.format(i=len(out))], stdin=f)
    out.append(("cli stdin", p))
    return out


def expect_error(env, ws, data, want, entry, done, sessions, policy=None,
                 dest="u{i}", text=None):
    """Every front refuses DATA with WANT on ENTRY (the archive's name;
    None: the destination) after DONE entries, and leaves no temporary
    name. Front i unpacks into DEST with "{i}" replaced by i."""
    for i, (front, got) in enumerate(unpack_all_fronts(
            env, ws, data, dest, sessions, policy=policy)):
        dest_i = dest.format(i=i)
        name = entry if entry is not None else dest_i
        if isinstance(got, subprocess.CompletedProcess):
            err = got.stderr.decode("utf-8", "replace")
            want_line = f"stockade: {escape(name)}: {want}: "
            check(got.returncode == 1 and want_line in err and
                  f"stopped after {done} entries" in err,
                  f"{front}: want exit 1, {want_line!r} and {done} done, got "
                  f"exit {got.returncode}: {err!r}")
            check(b"\x1b" not in got.stderr, f"{front}: a raw escape: {err!r}")
            if text:
                check(text in err, f"{front}: {text!r} not in {err!r}")
        else:
            e = got.get("error") or {}
            d = e.get("data") or {}
            check(e.get("code") == fa.ERROR_FS and d.get("error") == want and
                  fa.entry_raw_path(d) == fa.raw(name) and
                  d.get("done") == done,
                  f"{front}: want {want} on {name!r} after {done}, got {got}")
            if text:
                check(text in e.get("message", ""),
                      f"{front}: {text!r} not in {e.get('message')!r}")
    no_temporaries(ws)


def leaves_nothing(ws, names):
    for n in names:
        for top, dirs, files in os.walk(ws):
            check(n not in files, f"{os.path.join(top, n)} was left")


# --- the cases ----------------------------------------------------------------

def files_for_roundtrip():
    bad = b"bad\xffname-\x1b[31m".decode("utf-8", "surrogateescape")
    return [
        (".", "d", None),
        ("empty", "f", b""),
        ("small.txt", "f", b"hello\n", 0o600),
        ("big.bin", "f", os.urandom(300 * 1024)),
        ("sub", "d", None, 0o750),
        ("sub/deeper", "d", None),
        ("sub/deeper/x", "f", b"x" * 4097),
        ("noparent/made/y", "f", b"y"),          # parents made as tar does
        ("ümlaut-ü", "f", b"utf8"),
        (bad, "f", b"raw"),
        ("setuid", "f", b"#!/bin/sh\n", 0o4755),
        ("n" * 120 + "/" + "m" * 120, "f", b"long"),
        # A name made long by "./" prefixes (over 4096 bytes as the
        # archive spells it, "dotted" once they are dropped).
        ("./" * 2100 + "dotted", "f", b"d"),
    ]


def case_roundtrip(env):
    """A tree in through every front (counts and contents), then out with
    fs.pack inline and into a pipe and `stockade pack`, equal again; the
    setuid bit is never kept."""
    ws = env.new_ws()
    members = files_for_roundtrip()
    data = tar_of(members, fmt=tarfile.GNU_FORMAT)
    want = {m[0].lstrip("./") if m[0].startswith("./") else m[0]: m[2]
            for m in members if m[0] != "."}
    want.update({"noparent": None, "noparent/made": None, "n" * 120: None})
    sessions = env.sessions(ws)
    try:
        for i, (front, got) in enumerate(unpack_all_fronts(
                env, ws, data, "in{i}", sessions)):
            if isinstance(got, subprocess.CompletedProcess):
                check(got.returncode == 0, f"{front}: {got.stderr!r}")
            else:
                check(got.get("result") == {"files": 10, "directories": 3,
                                            "bytes": sum(len(m[2]) for m in members
                                                         if m[1] == "f")},
                      f"{front}: {got}")
            t = tree(os.path.join(ws, f"in{i}"))
            got_t = {os.fsencode(k).decode("utf-8", "surrogateescape"): v
                     for k, v in t.items()}
            check(got_t == want, f"{front}: the tree differs: "
                  f"{sorted(set(got_t) ^ set(want))}")
            st = os.stat(os.path.join(ws, f"in{i}", "setuid"))
            check(stat.S_IMODE(st.st_mode) & 0o7000 == 0,
                  f"{front}: setuid kept: {oct(st.st_mode)}")
            check(stat.S_IMODE(os.stat(os.path.join(
                ws, f"in{i}", "small.txt")).st_mode) == 0o600,
                f"{front}: the mode of small.txt was not kept")
            if env.ws_owner is not None:
                # As root, every file the writers made (their owner
                # looked up once a request) is the workspace owner's.
                top = os.path.join(ws, f"in{i}")
                wrong = [os.path.join(d, n) for d, _, ns in os.walk(top)
                         for n in ns
                         if os.lstat(os.path.join(d, n)).st_uid !=
                         env.ws_owner]
                check(not wrong, f"{front}: not the workspace owner's: "
                      f"{wrong[:3]}")
        no_temporaries(ws)
        # Out again: inline, into a pipe, and the CLI.
        stdio, sock = sessions
        res = stdio.result("fs.pack", {"path": "in0"})
        check(res["files"] == 10 and res["skipped"] == 0, f"fs.pack: {res}")
        packed = [base64.b64decode(res["data"])]
        r, w = os.pipe()
        got = []
        t = threading.Thread(target=lambda: got.append(fa.drain(r, 30)),
                             daemon=True)
        t.start()
        try:
            msg = sock.call("fs.pack", {"path": "in0", "fd": 0}, fds=[w])
        finally:
            os.close(w)
            t.join(30)
            os.close(r)
        packed.append(got[0] if got else b"")
        check("result" in msg, f"fs.pack into a pipe: {msg}")
        out = os.path.join(env.scratch, "out.tar")
        env.cli_ok(["pack", "--workspace", ws, "in0", out])
        with open(out, "rb") as f:
            packed.append(f.read())
        packed.append(env.cli_ok(["pack", "--workspace", ws, "in0", "-"]).stdout)
        for k, p in enumerate(packed):
            m = untar(p)
            got_t = {n: v[1] for n, v in m.items()}
            check(got_t == want, f"pack {k}: differs: {sorted(set(got_t) ^ set(want))}")
            check(all(v[2] & 0o7000 == 0 for v in m.values()),
                  f"pack {k}: a setuid/setgid/sticky mode")
        # A single file packs under its own name.
        m = untar(env.cli_ok(["pack", "--workspace", ws, "in0/sub/deeper/x",
                              "-"]).stdout)
        check(list(m) == ["x"], f"a file packed as {list(m)}")
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    return "4 fronts in, 4 out"


def case_pack_skips_links(env):
    """The job plants symlinks (to the canary, to /), a FIFO and a hard
    link: fs.pack leaves them out, counts them, never follows them; the
    canary's content never appears."""
    ws = env.new_ws()
    # A job's FIFO and hard-linked files never reach the workspace
    # (issue 26: unapplicable, the file API makes none); its symlinks and
    # files do. A host program plants the rest as the job did before.
    specials = "mkfifo d/fifo; echo two > d/one; ln d/one d/two"
    w = fa.job_result(env, ws, "set -e; cd /work; mkdir d; echo ok > d/real; "
                      f"ln -s {env.canary.path} d/canary; ln -s / d/root; "
                      + specials)["workspace"]
    check(w.get("unapplicable") == 3, f"workspace: {w}")
    for n in ("fifo", "one", "two"):
        check(not os.path.lexists(os.path.join(ws, "d", n)),
              f"the job's d/{n} reached the workspace")
    for n in ("real", "canary", "root"):
        check(os.path.lexists(os.path.join(ws, "d", n)),
              f"the job's d/{n} is not in the workspace")
    fa.host_plant(env, ws, "set -e; cd /work; " + specials)
    sessions = env.sessions(ws)
    try:
        res = sessions[0].result("fs.pack", {"path": "d"})
        m = untar(base64.b64decode(res["data"]))
        check(sorted(m) == ["real"] and res["skipped"] == 5,
              f"packed {sorted(m)}, result {res}")
        p = env.cli_ok(["pack", "--workspace", ws, "d", "-"])
        check(sorted(untar(p.stdout)) == ["real"] and
              b"5 entries left out" in p.stderr, f"cli: {p.stderr!r}")
        # Named itself, a link is an error, not a skip.
        sessions[0].error("fs.pack", {"path": "d/canary"}, "symlink_refused")
        sessions[0].error("fs.pack", {"path": "d/root/etc"}, "symlink_refused")
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    return "5 skipped"


def case_hostile_names(env):
    """`..`, absolute names, names through a symlink the job planted,
    over max_path_bytes, deeper than max_depth: invalid_path or
    symlink_refused on the entry, after the entries before it."""
    ws = env.new_ws()
    pol = env.host_file("small.ini", POLICY_SMALL)
    # In each front's destination (u0..u3): the archive's names meet
    # them on their way.
    env.job(ws, "set -e; cd /work; for i in 0 1 2 3; do mkdir -p u$i/d; "
            f"ln -s {env.outside} u$i/link; ln -s / u$i/root; "
            "ln -s ../link u$i/d/up; done")
    ok = ("ok", "f", b"fine")
    cases = [
        ("../escape", "invalid_path", "\"..\""),
        ("a/../../escape", "invalid_path", None),
        ("/etc/stockade-abs", "invalid_path", "relative"),
        ("link/x", "symlink_refused", None),
        ("root/tmp/x", "symlink_refused", None),
        ("d/up/x", "symlink_refused", None),
        ("x" * 70, "invalid_path", None),
        ("a/b/c/d/e", "invalid_path", None),
    ]
    sessions = env.sessions(ws, pol)
    try:
        for name, want, text in cases:
            data = tar_of([ok, (name, "f", b"attack")])
            expect_error(env, ws, data, want, name, 1, sessions, policy=pol,
                         text=text)
            for i in range(4):
                os.unlink(os.path.join(ws, f"u{i}", "ok"))
        # A directory entry through a link is refused too.
        expect_error(env, ws, tar_of([("link", "d", None)]),
                     "symlink_refused", "link/", 0, sessions, policy=pol)
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    leaves_nothing(env.outside, ["escape", "attack"])  # and the canaries
    check(not os.path.exists("/etc/stockade-abs"), "/etc/stockade-abs exists")
    return f"{len(cases) + 1} archives x 4 fronts"


def case_planted_target(env):
    """The job plants a symlink at a name the archive writes: without
    overwrite that is exists, with it the link itself is replaced and
    its target (the canary) is untouched."""
    ws = env.new_ws()
    env.job(ws, "set -e; cd /work; for i in 0 1 2 3; do mkdir u$i; "
            f"ln -s {env.canary.path} u$i/t; done")
    data = tar_of([("t", "f", b"attack-data\n")])
    sessions = env.sessions(ws)
    try:
        expect_error(env, ws, data, "exists", "t", 0, sessions)
        res = sessions[0].result("fs.unpack", {"path": "u0", "overwrite": True,
                                               "data": base64.b64encode(data).decode()})
        check(res["files"] == 1 and
              not os.path.islink(os.path.join(ws, "u0", "t")),
              f"the link was not replaced: {res}")
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    return "exists, then replaced"


def case_quotas(env):
    """A file over max_file_mb (too_large), the workspace over
    workspace_mb (quota_exceeded), more entries than max_files
    (quota_exceeded): decided on the declared size, nothing partial."""
    ws = env.new_ws()
    pol = env.host_file("small.ini", POLICY_SMALL)
    sessions = env.sessions(ws, pol)
    try:
        expect_error(env, ws, tar_of([("a", "f", b"1"),
                                      ("huge", "f", b"h" * (MiB + 1))]),
                     "too_large", "huge", 1, sessions, policy=pol)
        leaves_nothing(ws, ["huge"])
        # 2 MiB for the workspace: the third file of 0.9 MiB is over it.
        # Each front unpacks into its own directory and removes it after.
        big = [(f"q{i}", "f", os.urandom(900 * 1024)) for i in range(3)]
        for front, got in unpack_all_fronts(env, ws, tar_of(big), "q",
                                            sessions[:1], policy=pol)[:1]:
            e = got.get("error", {})
            check(e.get("data", {}).get("error") == "quota_exceeded" and
                  e["data"].get("path") == "q2" and e["data"].get("done") == 2,
                  f"{front}: {got}")
        check(sorted(os.listdir(os.path.join(ws, "q"))) == ["q0", "q1"],
              f"left {os.listdir(os.path.join(ws, 'q'))}")
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    ws = env.new_ws()
    sessions = env.sessions(ws, pol)
    try:
        many = [(f"m{i:02d}", "f", b"m") for i in range(45)]
        for front, got in unpack_all_fronts(env, ws, tar_of(many), ".",
                                            sessions[:1], policy=pol)[:1]:
            e = got.get("error", {})
            check(e.get("data", {}).get("error") == "quota_exceeded" and
                  e["data"].get("done") == 40, f"{front}: {got}")
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    no_temporaries(ws)
    return "too_large, workspace_mb, max_files"


def case_entry_types(env):
    """Symlinks, hard links, devices and FIFOs in the archive are named
    errors; nothing of them is made."""
    ws = env.new_ws()
    ok = ("ok", "f", b"fine")
    sessions = env.sessions(ws)
    try:
        for k, (member, want) in enumerate((
                (("s", "l", env.canary.path), "symlink_refused"),
                (("h", "h", "ok"), "hardlinked_file"),
                (("c", "c", None), "not_regular_file"),
                (("p", "p", None), "not_regular_file"))):
            expect_error(env, ws, tar_of([ok, member]), want, member[0], 1,
                         sessions, dest=f"t{k}-{{i}}")
            leaves_nothing(ws, [member[0]])
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    return "4 types"


def case_broken_streams(env):
    """A size that lies (the stream ends inside the data), a stream cut
    between entries (no end blocks), a stream that is not tar, a gzip
    stream: io_error, no partial file, the complete entries before kept."""
    ws = env.new_ws()
    whole = tar_of([("a", "f", b"A" * 1000), ("b", "f", b"B" * 10000)])
    lying = whole[:512 + 1024 + 512 + 3000]   # b's data cut at 3000 bytes
    cut = whole[:512 + 1024]                   # after a, before b's header
    import gzip
    sessions = env.sessions(ws)
    try:
        expect_error(env, ws, lying, "io_error", "b", 1, sessions,
                     dest="lie{i}", text="Truncated")
        leaves_nothing(ws, ["b"])
        expect_error(env, ws, cut, "io_error", None, 1, sessions,
                     dest="cut{i}", text="end-of-archive")
        expect_error(env, ws, b"not a tar stream at all\n" * 40, "io_error",
                     None, 0, sessions, dest="junk{i}",
                     text="not a tar archive")
        expect_error(env, ws, gzip.compress(whole), "io_error", None, 0,
                     sessions, dest="gz{i}", text="gzip")
        leaves_nothing(ws, ["b"])
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    return "4 streams x 4 fronts"


def case_cut_end_blocks(env):
    """Issue 23: a stream cut inside its end-of-archive blocks (two zero
    blocks of 512 bytes, POSIX pax "ustar Interchange Format"): after the
    first, inside the second, inside the first. Each is io_error naming
    the end-of-archive blocks after the 2 whole entries, which are kept
    whole (they were complete); nothing half-written, no temporary name.
    The same entries with both blocks and nothing after them (no record
    padding to 10240 bytes) unpack. The second file's data ends on a
    block boundary (no padding) and the first's does not: the end blocks
    are found either way. Today's code took the first three as
    complete (the third was refused already)."""
    ws = env.new_ws()
    whole = tar_of([("a", "f", b"A" * 1000), ("b", "f", b"B" * 10240)],
                   fmt=tarfile.USTAR_FORMAT)
    end = 512 + 1024 + 512 + 10240      # where the first zero block starts
    check(whole[end:end + 1024] == bytes(1024) and whole[end - 1] == 0x42,
          "the archive is not laid out as this test expects")
    sessions = env.sessions(ws)
    # Inside the first block, libarchive itself finds the stream
    # truncated (refused before too: the control).
    cuts = [("first", end + 512, "end-of-archive"),
            ("second", end + 512 + 100, "end-of-archive"),
            ("mid-first", end + 256, "Truncated")]
    try:
        for what, at, text in cuts:
            expect_error(env, ws, whole[:at], "io_error", None, 2, sessions,
                         dest=f"end-{what}-{{i}}", text=text)
            for i in range(4):
                d = os.path.join(ws, f"end-{what}-{i}")
                got = tree(d) if os.path.isdir(d) else {}
                check(got in ({}, {"a": b"A" * 1000, "b": b"B" * 10240}),
                      f"{what} {i}: half-written: "
                      f"{ {k: len(v or b'') for k, v in got.items()} }")
        for front, got in unpack_all_fronts(env, ws, whole[:end + 1024],
                                            "end-ok-{i}", sessions):
            if isinstance(got, subprocess.CompletedProcess):
                check(got.returncode == 0, f"{front}: {got.stderr!r}")
            else:
                check("error" not in got, f"{front}: {got}")
        for i in range(4):
            check(tree(os.path.join(ws, f"end-ok-{i}")) ==
                  {"a": b"A" * 1000, "b": b"B" * 10240}, f"end-ok-{i}")
        fa.close_all(sessions)
    finally:
        fa.close_all_quietly(sessions)
    no_temporaries(ws)
    return "3 cuts x 4 fronts refused, the exact end accepted"


def case_review_regressions(env):
    """What a review found, each run several times (the writer threads
    race): nothing after a failed entry is written; a file then a path
    through it is not_a_directory on the second entry, every time;
    directories made for an entry count against max_files with the files
    in flight; a pack that fails leaves a stream tar refuses; a header
    whose checksum does not match is io_error, not an entry."""
    ws = env.new_ws()
    pol = env.host_file("small.ini", POLICY_SMALL)

    def cli_unpack(data, dest):
        host = env.host_file("r.tar", data)
        return env.cli(["unpack", "--workspace", ws, "--policy", pol, host,
                        dest])

    for k in range(3):
        dest = f"after{k}"
        p = cli_unpack(tar_of([("taken", "f", b"old")]), dest)
        check(p.returncode == 0, f"{p.stderr!r}")
        members = [(f"big{i}", "f", os.urandom(60 * 1024)) for i in range(12)]
        members += [("taken", "f", b"new")]
        members += [(f"later{i:02d}", "f", b"s") for i in range(20)]
        p = cli_unpack(tar_of(members), dest)
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 1 and "taken: exists" in err and
              "stopped after 12 entries" in err, f"run {k}: {err!r}")
        later = [n for n in os.listdir(os.path.join(ws, dest))
                 if n.startswith("later")]
        # At most the one a second writer was already writing (fs_tar.h).
        check(later in ([], ["later00"]),
              f"run {k}: written after the failure: {later}")
        shutil.rmtree(os.path.join(ws, dest))
    for k in range(5):
        p = cli_unpack(tar_of([("f", "f", b"file"), ("f/g", "f", b"g")]),
                       f"fg{k}")
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 1 and "f/g: not_a_directory" in err and
              "stopped after 1 entries" in err and
              os.path.isfile(os.path.join(ws, f"fg{k}", "f")),
              f"run {k}: {err!r}")
        shutil.rmtree(os.path.join(ws, f"fg{k}"))
    # max_files = 40: 38 files, then one needing two new directories.
    members = [(f"m{i:02d}", "f", b"m") for i in range(38)]
    members += [("a/b/x", "f", b"x")]
    p = cli_unpack(tar_of(members), "many")
    entries = sum(len(d) + len(f) for _, d, f in os.walk(ws))
    check(p.returncode == 1 and b"quota_exceeded" in p.stderr and
          entries <= 40, f"{entries} entries: {p.stderr!r}")
    shutil.rmtree(os.path.join(ws, "many"))
    # A pack that fails after a whole first entry.
    out = os.path.join(ws, "out")
    os.mkdir(out)
    with open(os.path.join(out, "a"), "wb") as f:
        f.write(os.urandom(65024))
    with open(os.path.join(out, "z"), "wb") as f:
        f.write(os.urandom(MiB + 1))
    if env.ws_owner is not None:
        for n in ("", "a", "z"):
            os.chown(os.path.join(out, n), env.ws_owner, env.ws_owner)
    p = env.cli(["pack", "--workspace", ws, "--policy", pol, "out", "-"])
    check(p.returncode == 1 and b"too_large" in p.stderr, f"{p.stderr!r}")
    t = subprocess.run(["tar", "-tf", "-"], input=p.stdout,
                       capture_output=True, timeout=30)
    check(t.returncode != 0, f"tar took the failed pack's output: {t.stdout!r}")
    shutil.rmtree(out)
    # A damaged second header.
    data = bytearray(tar_of([("a", "f", b"x"), ("b", "f", b"y")],
                            fmt=tarfile.USTAR_FORMAT))
    data[1024 + 148:1024 + 156] = b"9999999\0"
    p = cli_unpack(bytes(data), "dmg")
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 1 and "io_error" in err and
          "stopped after 1 entries" in err, f"{err!r}")
    no_temporaries(ws)
    return "5 findings, repeated"


CASES = [
    ("unpack and pack round trip through every front", case_roundtrip),
    ("pack leaves out planted links, FIFOs, hard links", case_pack_skips_links),
    ("hostile names: .., absolute, through planted links, too long, too deep",
     case_hostile_names),
    ("a symlink planted at a target name", case_planted_target),
    ("quotas: max_file_mb, workspace_mb, max_files", case_quotas),
    ("symlink, hard link, device and FIFO entries", case_entry_types),
    ("lying sizes, cut streams, not tar, gzip", case_broken_streams),
    ("a stream cut inside its end-of-archive blocks", case_cut_end_blocks),
    ("a review's findings: writes after a failure, f then f/g, parents "
     "against max_files, a failed pack, a damaged header",
     case_review_regressions),
]


if __name__ == "__main__":
    fa.CASES = CASES
    sys.exit(fa.main())
