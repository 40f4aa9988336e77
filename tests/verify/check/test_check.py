#!/usr/bin/python3
# `stockade check` (issue 7, docs/check.md) as a test, as root and as uid
# 65534 (setpriv, the three binaries copied where that user can reach):
# at least 60 checks, every layer of docs/check.md covered, none failed
# and, under STOCKADE_MUST_WORK=1, none skipped (these machines have every
# layer the checks need). Then the command itself: --list, --only, its
# usage errors, and that it does fail (exit 1) when what it checks is
# broken: a prefix whose stockade-probe observes nothing.
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (MUST_WORK, NOBODY, diag, kernel_has_i386_entry,
                           remove_all, tap_fail,
                           traversable_tmp, unprivileged_binaries)

LAYERS = ["limits", "process_cleanup", "environment", "working_directory",
          "user_ns", "pid_ns", "mount_ns", "network_ns", "egress", "ipc_ns",
          "uts_ns",
          "terminal", "capabilities", "no_new_privs", "landlock", "seccomp",
          "file_api", "results", "boundary", "policy"]
ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": "/tmp"}


def run(cmd, timeout=170):
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV,
                          timeout=timeout, cwd="/")


def full_run(stockade, prefix):
    p = run(prefix + [stockade, "check", "--json"])
    try:
        out = json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"no JSON (exit {p.returncode}): {p.stderr[-2000:]}")
    lines = [f"{c['verdict']}  {c['name']}  {c['observed']}" for c in out["checks"]]
    diag("\n".join(lines))
    diag(f"{out['total']} checks in {out['seconds']:.1f} s")
    failed = [c["name"] for c in out["checks"] if c["verdict"] == "FAIL"]
    skipped = [c["name"] for c in out["checks"] if c["verdict"] == "SKIP"]
    assert not failed, f"checks failed: {failed}"
    assert p.returncode == 0, f"exit {p.returncode} with no failed check"
    if MUST_WORK:
        assert not skipped, f"skipped under STOCKADE_MUST_WORK=1: {skipped}"
    assert out["total"] >= 60, f"only {out['total']} checks"
    assert out["total"] == len(out["checks"])
    for c in out["checks"]:
        assert c["layer"] in LAYERS, c
        assert c["name"].startswith(c["layer"] + "."), c
        assert c["observed"], c
    missing = set(LAYERS) - {c["layer"] for c in out["checks"]}
    assert not missing, f"layers with no check: {sorted(missing)}"
    assert out["seconds"] < 120, f"took {out['seconds']:.0f} s"


def t_list(stockade):
    p = run([stockade, "check", "--list"])
    assert p.returncode == 0, p.stderr
    names = [l.split()[1] for l in p.stdout.splitlines()]
    assert len(names) >= 60 and len(set(names)) == len(names), names
    p = run([stockade, "check", "--list", "--only", "seccomp,user_ns"])
    layers = {l.split()[0] for l in p.stdout.splitlines()}
    assert layers == {"seccomp", "user_ns"}, layers


def t_only(stockade):
    p = run([stockade, "check", "--only", "user_ns.setgroups_denied", "--json"])
    out = json.loads(p.stdout)
    assert [c["name"] for c in out["checks"]] == ["user_ns.setgroups_denied"], out
    assert p.returncode == 0 and out["passed"] == 1, (p.returncode, out)
    p = run([stockade, "check", "--only", "no_such_layer"])
    assert p.returncode == 2 and "no_such_layer" in p.stderr, (p.returncode, p.stderr)
    p = run([stockade, "check", "--bogus"])
    assert p.returncode == 2, p.returncode


def t_fails_when_broken(stockade, cleanup):
    """A prefix with the real stockade and launcher but a probe that
    prints nothing: the jail checks must fail, and the exit be 1."""
    d = tempfile.mkdtemp(prefix="stockade-check-broken-", dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    src = os.path.dirname(stockade)
    for name in ("stockade", "stockade-launcher"):
        shutil.copyfile(os.path.join(src, name), os.path.join(d, name))
        os.chmod(os.path.join(d, name), 0o755)
    # /bin/true runs in every jail of the default policy (/usr is bound)
    # and prints nothing.
    shutil.copyfile("/bin/true", os.path.join(d, "stockade-probe"))
    os.chmod(os.path.join(d, "stockade-probe"), 0o755)
    p = run([stockade, "check", "--prefix", d, "--only",
             "user_ns.setgroups_denied,no_new_privs.set"])
    diag(p.stdout)
    assert p.returncode == 1, f"exit {p.returncode}: {p.stderr}"
    assert p.stdout.count("FAIL") == 2, p.stdout
    empty = tempfile.mkdtemp(prefix="stockade-check-empty-", dir=traversable_tmp())
    cleanup.append(empty)
    p = run([stockade, "check", "--prefix", empty])
    assert p.returncode == 70 and "--prefix" in p.stderr, (p.returncode, p.stderr)


I386_CHECKS = "seccomp.i386_abi_ends_job,results.int80_ends_job_as_policy_violation"


def t_i386_branches(stockade):
    """The i386 checks run the branch of the kernel they find (check.h,
    check_kernel_has_i386_entry): on this kernel's own answer both pass;
    told the other kernel's answer (STOCKADE_CHECK_FAKE_KERNEL), the
    job's real outcome contradicts it and both must fail. So neither
    branch passes whatever the job does: with the entry, a job that
    faulted instead of being killed by the filter is a FAIL; without it,
    a job that was killed with a denial is a FAIL."""
    has = kernel_has_i386_entry()
    p = run([stockade, "check", "--only", I386_CHECKS, "--json"])
    out = json.loads(p.stdout)
    diag("\n".join(f"{c['verdict']}  {c['name']}  {c['observed']}"
                    for c in out["checks"]))
    assert [c["verdict"] for c in out["checks"]] == ["PASS", "PASS"], out
    want = "entry" if has else "no i386 entry"
    assert all(want in c["observed"] or has for c in out["checks"]), out
    other = "no-i386" if has else "i386"
    env = dict(ENV, STOCKADE_CHECK_FAKE_KERNEL=other)
    p = subprocess.run([stockade, "check", "--only", I386_CHECKS, "--json"],
                       capture_output=True, text=True, env=env, timeout=170,
                       cwd="/")
    out = json.loads(p.stdout)
    diag("\n".join(f"{c['verdict']}  {c['name']}  {c['observed']}"
                    for c in out["checks"]))
    assert [c["verdict"] for c in out["checks"]] == ["FAIL", "FAIL"], out
    assert p.returncode == 1, p.returncode


LANDLOCK_LATE = "landlock.signal_to_init_refused,landlock.device_ioctl_refused"


def t_landlock_branches(stockade):
    """The Landlock checks whose right needs ABI 5 or 6 run on every
    kernel: told the kernel has ABI 4 (STOCKADE_CHECK_FAKE_KERNEL), they
    still run their probe, pass on what bounds the attempt instead and
    say so; they are never skipped."""
    for fake, want in ((None, ["EPERM", "EACCES"]),
                       ("landlock-abi=4", ["has no such right (ABI 6)",
                                           "has no such right (ABI 5)"])):
        env = dict(ENV)
        if fake:
            env["STOCKADE_CHECK_FAKE_KERNEL"] = fake
        p = subprocess.run([stockade, "check", "--only", LANDLOCK_LATE,
                            "--json"], capture_output=True, text=True,
                           env=env, timeout=170, cwd="/")
        out = json.loads(p.stdout)
        diag("\n".join(f"{c['verdict']}  {c['name']}  {c['observed']}"
                        for c in out["checks"]))
        assert [c["verdict"] for c in out["checks"]] == ["PASS", "PASS"], out
        for c, w in zip(out["checks"], want):
            assert w in c["observed"], (w, c)


def main():
    stockade = os.path.abspath(os.environ["STOCKADE_BIN"])
    cleanup = []
    tests = [("stockade check passes as the invoking user "
              f"(uid {os.geteuid()})", lambda: full_run(stockade, []))]
    if os.geteuid() == 0:
        def as_nobody():
            copy = unprivileged_binaries(stockade, cleanup)
            full_run(copy, ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                            "--clear-groups"])
        tests.append((f"stockade check passes as uid {NOBODY} (setpriv)", as_nobody))
    tests += [("--list: at least 60 distinct checks; --only filters by layer",
               lambda: t_list(stockade)),
              ("--only runs one check; an unknown layer or option is a usage error",
               lambda: t_only(stockade)),
              ("the i386 checks pass on this kernel's branch and fail when "
               "told the other kernel's answer",
               lambda: t_i386_branches(stockade)),
              ("the Landlock checks of ABI 5 and 6 run on an older ABI's "
               "branch, never skipped",
               lambda: t_landlock_branches(stockade)),
              ("a broken probe fails the checks (exit 1); a prefix without "
               "binaries is refused (exit 70)",
               lambda: t_fails_when_broken(stockade, cleanup))]
    print(f"1..{len(tests)}", flush=True)
    failed = 0
    try:
        for i, (title, fn) in enumerate(tests, 1):
            try:
                fn()
                print(f"ok {i} - {title}", flush=True)
            except Exception as exc:  # noqa: BLE001 - reported as TAP
                failed += 1
                tap_fail(i, title, exc)
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
