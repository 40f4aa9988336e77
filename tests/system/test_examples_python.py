#!/usr/bin/env python3
# The Python client and the example agent loop (examples/python/) against
# the build's stockade.
#
# Registered in tests/meson.build as:
#
#   test('examples-python', python, args : [files('test_examples_python.py')],
#        protocol : 'tap', env : test_env, suite : 'jail',
#        is_parallel : false, timeout : 300)
#
# where test_env sets STOCKADE_BIN (the launcher sits beside it) and
# STOCKADE_SOURCE_ROOT.
#
# Output is TAP. For every user it runs as (root and uid 65534 through
# setpriv when the test runs as root; the invoking user otherwise) and for
# both transports (`stockade serve` on a pipe, and --socket with
# descriptor passing), it runs
#     python3 agent_loop.py --stockade STOCKADE --workspace WS --out FILE
# and checks that the transcript reaches "RESULT: success" through the
# steps the script is about (the buggy run's exit_nonzero with the
# ValueError on stderr, the fixed run's ok, the refusal of "../x" as
# invalid_path, the report among the changes), that the report in the
# workspace holds the totals this test computes on its own from the data
# file the model wrote (decimal arithmetic, not the example's floats), and
# that the host copy made through the client (by descriptor over the
# socket) is the same bytes. For uid 65534, stockade, stockade-launcher
# and the two example files are copied into a fresh 0755 directory first.
# One more test drives stockade_client.Session directly: the typed errors
# (a hostile path "../x" is FileError invalid_path with code -32001 and
# the path; a timeout above the policy is RPCError -32602 naming the
# parameter) and a clean close (exit status 0).
#
# stockade exiting 69 (the kernel lacks a layer) is a skip, a failure
# under STOCKADE_MUST_WORK=1.

import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, tap_fail, tap_skip, traversable_tmp,
                           unprivileged_binaries)

EXAMPLE_FILES = ("stockade_client.py", "agent_loop.py")
# Debian's interpreter, which uid 65534 can always run (an interpreter
# under /root, such as pyenv's, may not be reachable by that user).
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
    else sys.executable


def examples_dir():
    root = os.environ.get("STOCKADE_SOURCE_ROOT") or \
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    return os.path.join(root, "examples", "python")


def private_dir(owner, cleanup, prefix):
    d = tempfile.mkdtemp(prefix=prefix, dir=traversable_tmp())
    cleanup.append(d)
    if owner is not None:
        os.chown(d, owner, owner)
    return d


def expected_totals(csv_text):
    """Region totals of the model's data file, computed here: split on
    commas, Decimal sums (the example uses csv and float)."""
    lines = csv_text.strip().split("\n")
    header = lines[0].split(",")
    ri, ai = header.index("region"), header.index("amount")
    totals = {}
    for line in lines[1:]:
        f = line.split(",")
        totals[f[ri]] = totals.get(f[ri], decimal.Decimal(0)) + decimal.Decimal(f[ai])
    return totals


def check_transcript(out, socket_mode):
    marks = ["[tool write_file] wrote data/sales.csv",
             "[tool run_code] status: exit_nonzero",
             "ValueError: invalid literal for int() with base 10",
             "[tool run_code] status: ok",
             "[tool read_file (error)] error: invalid_path:",
             "out/summary.json  sha256:",
             "by descriptor)" if socket_mode else "inline)",
             "RESULT: success"]
    pos = 0
    for mark in marks:
        at = out.find(mark, pos)
        if at < 0:
            raise AssertionError(f"the transcript lacks {mark!r} (in order)")
        pos = at + len(mark)


def run_agent(prefix, python_dir, stockade, owner, env, socket_mode, cleanup):
    ws = private_dir(owner, cleanup, "stockade-agent-ws-")
    hostdir = private_dir(owner, cleanup, "stockade-agent-out-")
    out_file = os.path.join(hostdir, "summary.json")
    argv = prefix + [PYTHON, "-B", os.path.join(python_dir, "agent_loop.py"),
                     "--stockade", stockade, "--workspace", ws, "--out", out_file]
    if socket_mode:
        argv.append("--socket")
    diag("$ " + " ".join(argv))
    proc = subprocess.run(argv, cwd="/", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused, the kernel lacks a layer: "
                   + proc.stderr.strip())
    if proc.returncode != 0 or proc.stderr.strip():
        diag(proc.stdout)
        diag("stderr: " + proc.stderr)
    if proc.returncode != 0:
        raise AssertionError(f"agent_loop.py exited {proc.returncode}")
    check_transcript(proc.stdout, socket_mode)

    with open(os.path.join(ws, "data", "sales.csv"), encoding="utf-8") as f:
        want = expected_totals(f.read())
    with open(os.path.join(ws, "out", "summary.json"), "rb") as f:
        report = f.read()
    got = json.loads(report, parse_float=decimal.Decimal)
    if got != want:
        raise AssertionError(f"report {got} != expected {want}")
    st = os.stat(os.path.join(ws, "out", "summary.json"))
    expect_uid = owner if owner is not None else os.getuid()
    if st.st_uid != expect_uid:
        raise AssertionError(f"the report belongs to uid {st.st_uid}, "
                             f"expected {expect_uid}")
    with open(out_file, "rb") as f:
        if f.read() != report:
            raise AssertionError("the host copy differs from the report")
    best = max(want, key=want.get)
    if f"{best} sold the most ({want[best]:.2f})" not in proc.stdout:
        raise AssertionError(f"the answer does not name {best} {want[best]}")
    return f"totals {dict((k, str(v)) for k, v in sorted(want.items()))}"


def client_errors(stockade, owner, cleanup):
    sys.dont_write_bytecode = True     # no __pycache__ in the source tree
    sys.path.insert(0, examples_dir())
    from stockade_client import FileError, RPCError, Session
    ws = private_dir(owner, cleanup, "stockade-client-ws-")
    s = Session.start(ws, stockade=stockade)
    try:
        try:
            s.read("../x")
            raise AssertionError("reading ../x was not refused")
        except FileError as e:
            if (e.name, e.code, e.path) != ("invalid_path", -32001, "../x"):
                raise AssertionError(f"../x: got {e.name!r} {e.code} {e.path!r}")
        try:
            s.exec(["true"], timeout_seconds=100000)
            raise AssertionError("a timeout above the policy was accepted")
        except FileError:
            raise AssertionError("a bad parameter raised FileError")
        except RPCError as e:
            if (e.code, e.param) != (-32602, "timeout_seconds"):
                raise AssertionError(f"timeout: got {e.code} {e.param!r}")
        r = s.exec(["sh", "-c", "echo 42 > n.txt"], timeout_seconds=10)
        if r["status"] != "ok":
            raise AssertionError(f"exec: {r['status']}: {r['detail']}")
        if s.read("n.txt") != b"42\n":
            raise AssertionError("n.txt does not hold 42")
    finally:
        rc = s.close()
    if rc != 0:
        raise AssertionError(f"stockade serve exited {rc} after close()")
    return "invalid_path for ../x, -32602 timeout_seconds, exit 0 on close"


def main():
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    is_root = os.geteuid() == 0
    users = []
    if is_root:
        nobody_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                      "HOME": "/nonexistent"}
        users.append(("root", [], NOBODY, dict(os.environ)))
        users.append((f"uid {NOBODY}", ["setpriv", f"--reuid={NOBODY}",
                                        f"--regid={NOBODY}", "--clear-groups"],
                      NOBODY, nobody_env))
    else:
        users.append(("the invoking user", [], None, dict(os.environ)))
    cases = [(f"agent_loop.py as {who} over {'a socket' if sock else 'a pipe'}",
              prefix, owner, env, sock)
             for who, prefix, owner, env in users for sock in (False, True)]
    print(f"1..{len(cases) + 1}")

    failed = 0
    cleanup = []
    try:
        for number, (title, prefix, owner, env, sock) in enumerate(cases, 1):
            try:
                if not stockade_bin or not os.access(stockade_bin, os.X_OK):
                    raise AssertionError(f"STOCKADE_BIN={stockade_bin!r} is not "
                                         "an executable")
                stockade, pydir = stockade_bin, examples_dir()
                if prefix:
                    if shutil.which(prefix[0]) is None:
                        raise Skip(f"{prefix[0]} not found (util-linux)")
                    stockade = unprivileged_binaries(stockade_bin, cleanup)
                    pydir = os.path.dirname(stockade)
                    for name in EXAMPLE_FILES:
                        shutil.copyfile(os.path.join(examples_dir(), name),
                                        os.path.join(pydir, name))
                        os.chmod(os.path.join(pydir, name), 0o644)
                note = run_agent(prefix, pydir, stockade, owner, env, sock,
                                 cleanup)
                print(f"ok {number} - {title} ({note})")
            except Skip as exc:
                failed += tap_skip(number, title, exc)
            except (AssertionError, OSError, ValueError,
                    subprocess.SubprocessError) as exc:
                failed += 1
                tap_fail(number, title, exc)
            sys.stdout.flush()
        number = len(cases) + 1
        title = "stockade_client.Session: typed errors and a clean close"
        try:
            note = client_errors(stockade_bin, NOBODY if is_root else None,
                                 cleanup)
            print(f"ok {number} - {title} ({note})")
        except Exception as exc:  # the client's own exceptions included
            failed += 1
            tap_fail(number, title, exc)
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
