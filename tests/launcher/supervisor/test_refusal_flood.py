#!/usr/bin/env python3
# A flood of refused calls costs the launcher little (issue 23, point 6;
# launcher/supervisor/denials.c, denials_hold_ms; docs/decisions.md, "Refusals
# are answered at a bounded rate").
#
# Registered in tests/meson.build as test('refusal-flood', ...) with
# STOCKADE_BIN and STOCKADE_LIMIT_PROGRAMS (tests/system/limits, refusal-flood).
#
# The job (tests/system/limits/refusal_flood.c) calls socket(AF_VSOCK) in a loop
# in 4 threads for 2.5 s while a fifth spins: every call is refused by
# the filter and answered by the launcher. While it runs, this test samples
# the CPU time (utime + stime, /proc/PID/stat) of every stockade-launcher
# process under the stockade it started; the last sample of each is its
# total to within the 50 ms between samples. What must hold:
#  - the launcher used under a tenth of the job's wall time and under
#    half of the job's CPU time (the result's cpu_ms). Before the bound,
#    the launcher answered 20,000 to 28,000 refusals a second and spent
#    0.57 s in a 2.5 s flood on a loaded 2-core machine (60% of the job's
#    0.94 s); with the bound it answers at most DENIALS_RATE (1000) a
#    second after a burst of 1000: 0.04 to 0.07 s, its start-up included.
#    A busier machine only slows the launcher down, so it spends less in
#    the same wall time; the job's spinning thread keeps the job's CPU
#    near its share of a core (the wall bound is the one that decides;
#    the CPU one is loose so that a starved job cannot fail it);
#  - the result's count for socket is the number of refusals the program
#    saw: a call made to wait is still answered and counted, once.
#
# As root and as uid 65534 (setpriv) when run as root; as the invoking
# user otherwise. TAP; a kernel without a layer stockade needs (exit 69)
# is "# SKIP", "not ok" under STOCKADE_MUST_WORK=1.

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, tap_fail, tap_skip, traversable_tmp,
                           unprivileged_binaries)

TICK = os.sysconf("SC_CLK_TCK")
FLOOD_S = 2.5


def proc_table():
    """{pid: (ppid, comm, utime + stime in ticks)} of every process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        close = stat.rfind(b")")
        comm = stat[stat.find(b"(") + 1:close].decode(errors="replace")
        fields = stat[close + 2:].split()
        # After the comm: state ppid ... utime (14th field) stime (15th).
        table[int(name)] = (int(fields[1]), comm,
                            int(fields[11]) + int(fields[12]))
    return table


class LauncherSampler(threading.Thread):
    """Samples the CPU of stockade-launcher processes under ROOT until
    stopped; self.cpu holds the last sample of each, by pid."""

    def __init__(self, root):
        super().__init__(daemon=True)
        self.root = root
        self.cpu = {}
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            table = proc_table()
            for pid, (_, comm, ticks) in table.items():
                if not comm.startswith("stockade-launch"):
                    continue
                p, hops = pid, 0
                while p in table and p != self.root and hops < 64:
                    p, hops = table[p][0], hops + 1
                if p == self.root:
                    self.cpu[pid] = max(self.cpu.get(pid, 0), ticks)
            self.done.wait(0.05)


def t_flood(stockade, prefix, owner, cleanup):
    progs = os.environ.get("STOCKADE_LIMIT_PROGRAMS", "")
    src = os.path.join(progs, "refusal-flood")
    if not os.path.isfile(src):
        raise AssertionError(f"{src} is missing (STOCKADE_LIMIT_PROGRAMS)")
    ws = tempfile.mkdtemp(prefix="stockade-flood-", dir=traversable_tmp())
    cleanup.append(ws)
    shutil.copyfile(src, os.path.join(ws, "refusal-flood"))
    os.chmod(os.path.join(ws, "refusal-flood"), 0o755)
    if owner is not None:
        os.chown(ws, owner, owner)
        os.chown(os.path.join(ws, "refusal-flood"), owner, owner)
    argv = prefix + [stockade, "run", "--json", "--workspace", ws,
                     "--timeout", "30", "--", "/work/refusal-flood",
                     str(FLOOD_S)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    sampler = LauncherSampler(proc.pid)
    sampler.start()
    out, err = proc.communicate(timeout=120)
    sampler.done.set()
    sampler.join()
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused (exit 69): " + err.decode()[-300:])
    try:
        res = json.loads(out)
    except ValueError:
        raise AssertionError(f"no result (exit {proc.returncode}): "
                             f"{out[-300:]!r} {err[-300:]!r}")
    if res.get("status") != "ok":
        raise AssertionError(f"status {res.get('status')}: {res!r}"[:800])
    words = res["stdout"].split()
    if len(words) != 4 or words[0] != "refused":
        raise AssertionError(f"the program said {res['stdout']!r}")
    refused, other = int(words[1]), int(words[3])
    counted = sum(d["count"] for d in res["denials"]
                  if d["syscall"] == "socket")
    if not sampler.cpu:
        raise AssertionError("no stockade-launcher process was seen")
    launcher_s = sum(sampler.cpu.values()) / TICK
    job_s = res["cpu_ms"] / 1000
    wall_s = res["wall_ms"] / 1000
    figures = (f"{refused} refusals ({refused / FLOOD_S:.0f}/s), launcher "
               f"CPU {launcher_s:.2f} s, job CPU {job_s:.2f} s, wall "
               f"{wall_s:.2f} s")
    diag(figures)
    if refused == 0 or other != 0:
        raise AssertionError(f"the calls were not all refused: {figures}, "
                             f"{other} otherwise")
    if counted != refused:
        raise AssertionError(f"the result counts {counted} refusals of "
                             f"socket, the program saw {refused}")
    if launcher_s >= 0.5 * job_s or launcher_s >= 0.1 * wall_s:
        raise AssertionError(f"the launcher spent too much: {figures} "
                             f"(bound: under half of the job's CPU and a "
                             f"tenth of its wall time)")
    return figures


def main():
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    users = []
    if os.geteuid() == 0:
        users.append(("root", [], NOBODY))
        users.append((f"uid {NOBODY}",
                      ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                       "--clear-groups"], NOBODY))
    else:
        users.append(("the invoking user", [], None))
    print(f"1..{len(users)}")
    failed = 0
    cleanup = []
    try:
        for number, (who, prefix, owner) in enumerate(users, 1):
            title = (f"a refusal flood costs the launcher under a tenth "
                     f"of the wall time and half the job's CPU; every "
                     f"refusal counted ({who})")
            try:
                stockade = stockade_bin
                if prefix:
                    if shutil.which(prefix[0]) is None:
                        raise Skip(f"{prefix[0]} not found (util-linux)")
                    stockade = unprivileged_binaries(stockade_bin, cleanup)
                note = t_flood(stockade, prefix, owner, cleanup)
                print(f"ok {number} - {title} ({note})")
            except Skip as exc:
                failed += tap_skip(number, title, exc)
            except (AssertionError, OSError, ValueError, KeyError,
                    subprocess.SubprocessError) as exc:
                failed += 1
                tap_fail(number, title, exc)
            sys.stdout.flush()
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
