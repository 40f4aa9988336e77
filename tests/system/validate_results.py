#!/usr/bin/env python3
# Every result the test suites received, validated against
# docs/result.schema.json (issue 4, "A JSON Schema for the result that
# every test result is validated against").
#
# Registered in tests/meson.build as the test 'result-schema', run last
# (priority -1000), with STOCKADE_RESULTS_DIR (where tests/lib/harness.c and
# tests/lib/stockade_test.save_result put one file per result:
# <test>-<pid>-<counter>.json) and STOCKADE_SOURCE_ROOT.
#
# TAP: one line for the schema itself (Draft202012Validator.check_schema),
# one line per status seen across the files (with how many results had
# it), one "not ok" line per invalid file (naming the file and every
# violation), and a last line that fails when a status of the thirteen never
# appeared (naming the missing ones). A missing or empty directory is a
# failure: the collection did not happen.
#
# Issue 23: lines that a pss_sum and an rss_sum (or cgroup) measure, and
# an ok result with limits_reached, each appear in a valid result.
#
# Besides the schema, each file must be strict UTF-8 holding exactly one
# JSON object, and no string in it may hold a lone UTF-16 surrogate (JSON
# allows "\ud800"; a valid UTF-8 result cannot mean one).
#
# Once validated, the directory is renamed to STOCKADE_RESULTS_DIR with
# ".validated" appended (replacing the previous one), so that the next run
# starts empty and validates only its own results (stale files from an
# older build would otherwise be judged, or would supply a status the
# current run never produced); the real results stay there to read.
#
# Needs Debian's python3-jsonschema (>= 4.0 for draft 2020-12), run by
# /usr/bin/python3 (meson.build finds that interpreter first).

import json
import os
import shutil
import sys

STATUSES = ["ok", "exit_nonzero", "timeout", "cpu_limit", "memory_limit",
            "process_limit", "output_limit", "file_size_limit", "disk_full",
            "crash", "policy_violation", "sandbox_error", "cancelled"]


def diag(text):
    for line in str(text).splitlines() or [""]:
        print(f"# {line}")


def lone_surrogates(value, path="$"):
    """Paths of the strings in VALUE that hold a lone surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return [path]
        return []
    if isinstance(value, dict):
        return [p for k, v in value.items()
                for p in lone_surrogates(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value)
                for p in lone_surrogates(v, f"{path}[{i}]")]
    return []


def load(path):
    """The object in PATH, or raises ValueError saying why it is none."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8: {exc}") from None
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not one JSON value: {exc}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"not a JSON object but {type(obj).__name__}")
    bad = lone_surrogates(obj)
    if bad:
        raise ValueError("lone surrogate in " + ", ".join(bad))
    return obj


def main():
    lines = []          # (ok, description)
    results_dir = os.environ.get("STOCKADE_RESULTS_DIR", "")
    root = os.environ.get("STOCKADE_SOURCE_ROOT") or \
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    schema_path = os.path.join(root, "docs", "result.schema.json")

    try:
        import jsonschema
        from jsonschema import Draft202012Validator
    except ImportError as exc:
        print("1..1")
        print(f"not ok 1 - jsonschema with draft 2020-12 ({exc}; "
              "apt-get install python3-jsonschema)")
        return 1

    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    try:
        Draft202012Validator.check_schema(schema)
        lines.append((True, f"{schema_path} is a valid draft 2020-12 schema"))
    except jsonschema.SchemaError as exc:
        lines.append((False, f"{schema_path} is not a valid schema: "
                             f"{exc.message}"))
        schema = None
    validator = Draft202012Validator(schema) if schema is not None else None

    if not results_dir or not os.path.isdir(results_dir):
        lines.append((False, "results collected in STOCKADE_RESULTS_DIR="
                             f"{results_dir!r} (no such directory: no test "
                             "saved a result since the last validation, "
                             f"whose results are in {results_dir}.validated)"))
        return report(lines)
    names = sorted(n for n in os.listdir(results_dir) if n.endswith(".json"))
    if not names:
        lines.append((False, f"results collected in {results_dir} (the "
                             "directory holds no result)"))
        return report(lines)

    seen = {}
    valid = {}
    invalid = []
    for name in names:
        path = os.path.join(results_dir, name)
        try:
            obj = load(path)
        except (OSError, ValueError) as exc:
            invalid.append((name, [str(exc)], None))
            continue
        errors = []
        if validator is not None:
            errors = [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}"
                      f": {e.message[:300]}"
                      for e in sorted(validator.iter_errors(obj),
                                      key=lambda e: list(e.absolute_path))]
        if errors:
            invalid.append((name, errors, obj))
            continue
        seen.setdefault(obj["status"], []).append(name)
        valid[name] = obj

    for status in STATUSES:
        if status in seen:
            lines.append((True, f"status {status}: {len(seen[status])} valid "
                                f"result(s), e.g. {seen[status][0]}"))
    for name, errors, obj in invalid:
        lines.append((False, f"{name} is not a valid result",
                      errors + ([] if obj is None else
                                ["status " + repr(obj.get("status")) +
                                 ", hint " + repr(obj.get("hint"))])))
    # Issue 23: the monitor's two measures of memory, and an ok job that
    # reached a limit (tests/system/test_limits.py makes each), show in valid
    # results.
    for what, test in (
            ("memory_measure pss_sum (a forked pool)",
             lambda o: o.get("memory_measure") == "pss_sum"),
            ("memory_measure rss_sum or cgroup",
             lambda o: o.get("memory_measure") in ("rss_sum", "cgroup")),
            ("an ok result with limits_reached",
             lambda o: o.get("status") == "ok" and o.get("limits_reached"))):
        found = [n for n in valid if test(valid[n])]
        lines.append((bool(found), f"{what}: {len(found)} valid result(s)"))
    missing = [s for s in STATUSES if s not in seen]
    lines.append((not missing,
                  f"every status appears in a valid result ({len(names)} "
                  f"files, {len(invalid)} invalid)" +
                  (f"; missing: {', '.join(missing)}" if missing else "")))
    rc = report(lines)
    set_aside(results_dir)
    return rc


def set_aside(results_dir):
    """Renames RESULTS_DIR to RESULTS_DIR.validated (see the top)."""
    done = results_dir.rstrip("/") + ".validated"
    try:
        if os.path.isdir(done):
            shutil.rmtree(done)
        os.rename(results_dir, done)
        diag(f"results kept in {done}")
    except OSError as exc:
        diag(f"could not set the results aside ({exc}); the next run will "
             f"see them again")


def report(lines):
    print(f"1..{len(lines)}")
    failed = 0
    for i, line in enumerate(lines, 1):
        ok, text = line[0], line[1]
        print(f"{'ok' if ok else 'not ok'} {i} - {text}")
        if len(line) > 2:
            diag("\n".join(line[2]))
        failed += not ok
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
