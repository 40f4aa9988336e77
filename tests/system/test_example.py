#!/usr/bin/env python3
# The bundled example (examples/distro_spans.py) run in the jail on real data.
#
# Registered in tests/meson.build as:
#
#   test('example', python, args : [files('test_example.py')],
#        protocol : 'tap', env : test_env,
#        suite : 'jail', is_parallel : false, timeout : 120)
#
# where test_env sets STOCKADE_BIN (stockade_exe.full_path(); the launcher
# must sit beside it) and STOCKADE_SOURCE_ROOT (meson.project_source_root()).
#
# Output is TAP. For every user it runs as (root and uid 65534 when the test
# runs as root; only the invoking user otherwise), it copies debian.csv,
# ubuntu.csv (from /usr/share/distro-info) and the example into a fresh
# workspace, runs
#     $STOCKADE_BIN run --json --workspace WS -- python3 /work/distro_spans.py
# asserts status "ok", and compares /work/distro-report.csv with rows this file
# computes on its own from /usr/share/distro-info. It deliberately shares no
# code with the example: different parsing (str.split, not csv), different
# date arithmetic (ordinals from strptime, not fromisoformat subtraction).
#
# A check that cannot run here (no distro-info-data, a kernel without
# unprivileged user namespaces: `stockade` exits 69) is reported as
# "# SKIP"; with STOCKADE_MUST_WORK=1 it is "not ok" instead.

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, save_result, tap_fail, tap_skip,
                           traversable_tmp, unprivileged_binaries)

DISTRO_INFO = "/usr/share/distro-info"

HEADER = ("distro,version,codename,series,release,eol,support_days,lts_days,"
          "elts_days,server_days,esm_days,legacy_days,extended_kind,"
          "extended_eol,extended_days")
EXTENDED_KINDS = ["eol-lts", "eol-elts", "eol-server", "eol-esm", "eol-legacy"]


# --- the independent computation ---------------------------------------------

def day_number(text):
    """Days since 0001-01-01 of a YYYY-MM-DD string (strptime, not fromisoformat)."""
    t = time.strptime(text, "%Y-%m-%d")
    # Days before this year (proleptic Gregorian) plus the day of the year.
    y = t.tm_year - 1
    return y * 365 + y // 4 - y // 100 + y // 400 + t.tm_yday


def expected_report(today):
    """The report lines (header included) expected for the day TODAY."""
    lines = [HEADER]
    for distro in ("debian", "ubuntu"):
        with open(os.path.join(DISTRO_INFO, distro + ".csv"), encoding="utf-8") as f:
            text = f.read().splitlines()
        names = text[0].split(",")
        for raw in text[1:]:
            if not raw.strip():
                continue
            fields = raw.split(",")
            rec = {name: (fields[i].strip() if i < len(fields) else "")
                   for i, name in enumerate(names)}
            if rec["release"] == "" or rec["release"] > today or rec["eol"] == "":
                continue  # ISO dates compare as strings
            start = day_number(rec["release"])
            out = [distro, rec["version"], rec["codename"], rec["series"],
                   rec["release"], rec["eol"], str(day_number(rec["eol"]) - start)]
            best = ("", "")
            for kind in EXTENDED_KINDS:
                date = rec.get(kind, "")
                out.append(str(day_number(date) - start) if date else "")
                if date and date > best[1]:
                    best = (kind, date)
            if best[0]:
                out += [best[0], best[1], str(day_number(best[1]) - start)]
            else:
                out += ["", "", ""]
            for value in out:
                # Nothing in the real tables needs CSV quoting; if that ever
                # changes, this test must learn it rather than guess.
                assert not any(c in value for c in ',"\n'), f"needs quoting: {value!r}"
            lines.append(",".join(out))
    return lines


def utc_today():
    return time.strftime("%Y-%m-%d", time.gmtime())


# --- running the example in the jail -----------------------------------------

def make_workspace(source_root, owner, cleanup):
    ws = tempfile.mkdtemp(prefix="stockade-example-", dir=traversable_tmp())
    cleanup.append(ws)
    for name in ("debian.csv", "ubuntu.csv"):
        shutil.copyfile(os.path.join(DISTRO_INFO, name), os.path.join(ws, name))
    shutil.copyfile(os.path.join(source_root, "examples", "distro_spans.py"),
                    os.path.join(ws, "distro_spans.py"))
    if owner is not None:
        for name in os.listdir(ws):
            os.chown(os.path.join(ws, name), owner, owner)
        os.chown(ws, owner, owner)
    return ws


def run_example(prefix, stockade, ws, env, expect_uid):
    """Runs the example once; raises Skip or AssertionError, or returns a note."""
    argv = prefix + [stockade, "run", "--json", "--workspace", ws, "--",
                     "python3", "/work/distro_spans.py"]
    diag("$ " + " ".join(argv))
    before = utc_today()
    proc = subprocess.run(argv, cwd="/", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=100)
    after = utc_today()
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused, the kernel lacks a layer: "
                   + (proc.stderr.strip() or "(no message)"))
    if proc.stderr.strip():
        diag("stockade's stderr:\n" + proc.stderr.rstrip())
    try:
        result = json.loads(proc.stdout)
        save_result(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"stdout is not one JSON object ({exc}), exit "
                             f"{proc.returncode}: {proc.stdout[:2000]!r}") from None
    if not isinstance(result, dict):
        raise AssertionError(f"stdout is JSON but not an object: {proc.stdout[:500]!r}")
    diag("status=%s exit_code=%s wall_ms=%s hint=%s" % (
        result.get("status"), result.get("exit_code"), result.get("wall_ms"),
        result.get("hint")))
    if result.get("status") != "ok" or proc.returncode != 0:
        raise AssertionError(
            f"status {result.get('status')!r}, exit {proc.returncode}, "
            f"detail {result.get('detail')!r}\nstdout: {result.get('stdout')!r}\n"
            f"stderr: {result.get('stderr')!r}")
    if result.get("exit_code") != 0 or result.get("signal") is not None:
        raise AssertionError(f"ok with exit_code {result.get('exit_code')!r} "
                             f"signal {result.get('signal')!r}")
    diag("the example's stdout:\n" + str(result.get("stdout", "")).rstrip())
    if "report written to /work/distro-report.csv" not in result.get("stdout", ""):
        raise AssertionError("the example's summary does not name the report")

    report_path = os.path.join(ws, "distro-report.csv")
    if not os.path.isfile(report_path):
        raise AssertionError(f"no report in the workspace: {sorted(os.listdir(ws))}")
    st = os.stat(report_path)
    if st.st_uid != expect_uid:
        raise AssertionError(f"the report is owned by uid {st.st_uid} on the host, "
                             f"expected the invoking user {expect_uid}")
    with open(report_path, encoding="utf-8") as f:
        got = f.read()
    if not got.endswith("\n"):
        raise AssertionError("the report does not end with a newline")
    got_lines = got[:-1].split("\n")

    # The example decides "released yet" with its own clock (UTC); accept the
    # day the run started or the day it ended (a run across midnight).
    for day in sorted({before, after}):
        want = expected_report(day)
        if got_lines == want:
            return f"{len(want) - 1} rows match, as of {day}"
    want = expected_report(after)
    diffs = [f"line {i + 1}: got {g!r}, want {w!r}"
             for i, (g, w) in enumerate(zip(got_lines, want)) if g != w]
    if len(got_lines) != len(want):
        diffs.append(f"{len(got_lines)} lines, want {len(want)}")
    raise AssertionError("the report differs from the independent computation:\n"
                         + "\n".join(diffs[:20]))


def main():
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    source_root = os.environ.get("STOCKADE_SOURCE_ROOT") or \
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    is_root = os.geteuid() == 0

    # (name, prefix for argv, who owns the workspace, environment, uid on the host)
    cases = []
    if is_root:
        # A root broker refuses a root-owned workspace (its jobs run as
        # nobody and would otherwise get root's access to the directory):
        # the workspace belongs to nobody, and so does the report.
        cases.append(("report matches, run as root", [], NOBODY, dict(os.environ),
                      NOBODY))
        nobody_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                      "HOME": "/nonexistent"}
        cases.append((f"report matches, run as unprivileged uid {NOBODY} (setpriv)",
                      ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                       "--clear-groups"], NOBODY, nobody_env, NOBODY))
    else:
        uid = os.getuid()
        try:
            who = pwd.getpwuid(uid).pw_name
        except KeyError:
            who = str(uid)
        cases.append((f"report matches, run as the invoking unprivileged user {who}",
                      [], None, dict(os.environ), uid))

    print(f"1..{len(cases)}")
    if not is_root:
        diag("not root: the example runs once, as the invoking user (already "
             "unprivileged); run as root to also test root and setpriv to uid 65534")

    failed = 0
    cleanup = []
    try:
        for number, (name, prefix, owner, env, expect_uid) in enumerate(cases, 1):
            try:
                if not stockade_bin or not os.access(stockade_bin, os.X_OK):
                    raise AssertionError(f"STOCKADE_BIN={stockade_bin!r} is not an "
                                         "executable (set by tests/meson.build)")
                for name_ in ("debian.csv", "ubuntu.csv"):
                    if not os.path.isfile(os.path.join(DISTRO_INFO, name_)):
                        raise Skip(f"{DISTRO_INFO}/{name_} is missing "
                                   "(apt-get install distro-info-data)")
                stockade = stockade_bin
                if prefix:
                    if shutil.which(prefix[0]) is None:
                        raise Skip(f"{prefix[0]} not found (util-linux)")
                    stockade = unprivileged_binaries(stockade_bin, cleanup)
                ws = make_workspace(source_root, owner, cleanup)
                note = run_example(prefix, stockade, ws, env, expect_uid)
                print(f"ok {number} - {name} ({note})")
            except Skip as exc:
                failed += tap_skip(number, name, exc)
            except (AssertionError, OSError, ValueError, subprocess.SubprocessError) as exc:
                failed += 1
                tap_fail(number, name, exc)
            sys.stdout.flush()
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
