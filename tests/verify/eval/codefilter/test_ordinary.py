#!/usr/bin/env python3
# Every ordinary program of the code-filter evaluation (tests/verify/eval/codefilter/ordinary/)
# runs to exit 0 in the full product under the default policy: the
# denominator of the filter's false-positive rate is made of programs the
# sandbox itself runs without complaint (issue 6, item 5; tests/verify/eval/codefilter/README.md).
#
# Meant to be registered in tests/meson.build as:
#
#   test('eval-ordinary', python, args : [files('eval/test_ordinary.py')],
#        protocol : 'tap', env : test_env, suite : 'jail',
#        is_parallel : false, timeout : 600)
#
# STOCKADE_BIN names stockade (stockade-launcher beside it). For every user
# it runs as (root and uid 65534 when the test runs as root; the invoking
# user otherwise) and every program, it copies the program alone into a
# fresh workspace and runs
#     $STOCKADE_BIN run --format json --workspace WS -- python3 PROGRAM
# (no --policy: the compiled-in default), asserting status "ok" and exit
# code 0. A kernel without a layer (stockade exits 69) is "# SKIP", and
# "not ok" under STOCKADE_MUST_WORK=1.
# Arguments: program names (e.g. 31-subprocess-sort.py) to run only those.

import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "lib"))  # stockade_test

from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,  # noqa: E402
                           remove_all, save_result, tap_fail, tap_skip,
                           traversable_tmp, unprivileged_binaries)

ORDINARY = os.path.join(HERE, "ordinary")


def run_one(prefix, stockade, program, owner, env, cleanup):
    ws = tempfile.mkdtemp(prefix="stockade-ordinary-", dir=traversable_tmp())
    cleanup.append(ws)
    name = os.path.basename(program)
    shutil.copyfile(program, os.path.join(ws, name))
    if owner is not None:
        os.chown(os.path.join(ws, name), owner, owner)
        os.chown(ws, owner, owner)
    argv = prefix + [stockade, "run", "--format", "json", "--workspace", ws,
                     "--", "python3", name]
    proc = subprocess.run(argv, cwd="/", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused, the kernel lacks a layer: "
                   + (proc.stderr.strip() or "(no message)"))
    try:
        result = json.loads(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"stdout is not one JSON object ({exc}), exit "
                             f"{proc.returncode}: {proc.stdout[:1000]!r}\n"
                             f"stderr: {proc.stderr[:1000]!r}") from None
    save_result(proc.stdout, test="eval-ordinary")
    if result.get("status") != "ok" or result.get("exit_code") != 0 or \
            proc.returncode != 0:
        raise AssertionError(
            f"status {result.get('status')!r}, exit_code "
            f"{result.get('exit_code')!r}, stockade exit {proc.returncode}, "
            f"detail {result.get('detail')!r}\nstdout: "
            f"{result.get('stdout', '')[-1500:]!r}\nstderr: "
            f"{result.get('stderr', '')[-1500:]!r}")
    return f"{result.get('wall_ms')} ms"


def main(argv):
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    wanted = set(argv[1:])
    programs = sorted(os.path.join(ORDINARY, n) for n in os.listdir(ORDINARY)
                      if n.endswith(".py") and (not wanted or n in wanted))
    cases = []
    if os.geteuid() == 0:
        # A root broker refuses a root-owned workspace: it belongs to nobody.
        cases.append(("as root", [], NOBODY, dict(os.environ)))
        cases.append((f"as uid {NOBODY} (setpriv)",
                      ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                       "--clear-groups"], NOBODY,
                      {"PATH": "/usr/local/bin:/usr/bin:/bin",
                       "LANG": "C.UTF-8", "HOME": "/nonexistent"}))
    else:
        cases.append(("as the invoking user", [], None, dict(os.environ)))
    print(f"1..{len(cases) * len(programs)}")
    if not programs:
        diag("no program selected")
    failed = 0
    number = 0
    cleanup = []
    try:
        for who, prefix, owner, env in cases:
            stockade = stockade_bin
            setup_error = None
            try:
                if not stockade_bin or not os.access(stockade_bin, os.X_OK):
                    raise AssertionError(f"STOCKADE_BIN={stockade_bin!r} is not "
                                         "an executable (set by tests/meson.build)")
                if prefix:
                    if shutil.which(prefix[0]) is None:
                        raise Skip(f"{prefix[0]} not found (util-linux)")
                    stockade = unprivileged_binaries(stockade_bin, cleanup)
            except (Skip, AssertionError, OSError) as exc:
                setup_error = exc
            for program in programs:
                number += 1
                title = f"{os.path.basename(program)} exits 0 in the jail {who}"
                try:
                    if setup_error is not None:
                        raise setup_error
                    note = run_one(prefix, stockade, program, owner, env,
                                   cleanup)
                    print(f"ok {number} - {title} ({note})")
                except Skip as exc:
                    failed += tap_skip(number, title, exc)
                except (AssertionError, OSError, ValueError,
                        subprocess.SubprocessError) as exc:
                    failed += 1
                    tap_fail(number, title, exc)
                sys.stdout.flush()
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
