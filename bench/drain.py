#!/usr/bin/python3
"""bench/drain.py: what draining a program that prints far past its output
cap costs (issue 22, point 6; docs/benchmarks.md, "Draining output").

    bench/drain.py [--build DIR] [--mib N] [--runs N] [--markdown]

Runs `sh -c 'head -c NM /dev/zero'` (N MiB, default 1024: 1 GiB) RUNS times
(default 3) each way, in turn:

- bare, stdout to /dev/null (the cost of writing it at all);
- bare, stdout to a pipe this script reads and drops (what any consumer of
  the output pays);
- `stockade run --json` under the default policy (cap 1024 KiB, on_output_limit
  = truncate): the launcher reads every byte and forwards it, the broker
  keeps the first and last 512 KiB; this script reads the one-line result;
- `stockade run` streamed (the default format) into a pipe this script
  reads: the head passes through, the marker and the tail at the end.

For each: the wall time from start to reap, and the CPU time (user +
system) of the process and every descendant it waited for (os.wait4's
rusage; stockade's launcher and the jail included), medians over the
runs; for stockade also the job's own figures from the result (`wall_ms`,
`cpu_ms`: the jail's processes). The memory the broker and the launcher
keep while draining is asserted by the limits test (their VmHWM after
200 MiB), not measured here. Prints one Markdown table with
--markdown, else the same as text. Standard library only; run it as an
ordinary user or as root (root's job runs as 65534, in a temporary
workspace stockade makes).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def run_once(argv, to_null, keep):
    """Runs ARGV with stdout to /dev/null (TO_NULL) or to a pipe read here
    in 64 KiB reads, dropped unless KEEP; returns (wall s, CPU s, stdout
    when KEEP else b"")."""
    start = time.monotonic()
    out = open(os.devnull, "wb") if to_null else subprocess.PIPE
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                         stderr=subprocess.DEVNULL, bufsize=0)
    kept = []
    if not to_null:
        fd = p.stdout.fileno()
        while True:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            if keep:
                kept.append(b)
        p.stdout.close()
    else:
        out.close()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} exited {os.waitstatus_to_exitcode(status)}")
    return wall, ru.ru_utime + ru.ru_stime, b"".join(kept)


def main():
    ap = argparse.ArgumentParser(prog="bench/drain.py",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    stockade = os.path.join(os.path.abspath(a.build), "stockade")
    prog = ["sh", "-c", f"head -c {a.mib}M /dev/zero"]
    sides = [
        ("bare, to /dev/null", prog, True, False),
        ("bare, to a pipe", prog, False, False),
        ("stockade run --json", [stockade, "run", "--json", "--timeout",
                                 "300", "--", *prog], False, True),
        ("stockade run (streamed)", [stockade, "run", "--timeout", "300",
                                     "--", *prog], False, False),
    ]
    got = {n: [] for n, *_ in sides}
    for r in range(a.runs):
        for name, argv, to_null, js in (sides if r % 2 == 0 else sides[::-1]):
            wall, cpu, text = run_once(argv, to_null, js)
            job = {}
            if js:
                o = json.loads(text)
                if o["status"] != "ok" or o["stdout_bytes"] != a.mib << 20 \
                        or o["stdout_truncated"] is not True:
                    raise RuntimeError(f"{name}: status {o['status']}, "
                                       f"stdout_bytes {o['stdout_bytes']}")
                job = o
            got[name].append((wall, cpu, job))
    rows = []
    bare = statistics.median(w for w, *_ in got["bare, to a pipe"])
    bare_cpu = statistics.median(c for _, c, *_ in got["bare, to a pipe"])
    for name, *_ in sides:
        v = got[name]
        wall = statistics.median(x[0] for x in v)
        cpu = statistics.median(x[1] for x in v)
        jobs = [x[2] for x in v if x[2]]
        job = (f"{statistics.median(j['wall_ms'] for j in jobs):.0f} ms / "
               f"{statistics.median(j['cpu_ms'] for j in jobs):.0f} ms"
               if jobs else "-")
        rows.append([name, f"{wall:.2f}", f"{cpu:.2f}",
                     f"{a.mib / wall:.0f}", f"{wall / bare:.2f}",
                     f"{cpu / bare_cpu:.2f}" if bare_cpu > 0 else "-", job])
    head = ["command", "wall s", "CPU s", "MiB/s", "x pipe wall",
            "x pipe CPU", "result wall / CPU"]
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + " --- |" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        print("  ".join(head))
        for r in rows:
            print("  ".join(r))
    print(f"\n{a.mib} MiB, {a.runs} runs each (order reversed every other "
          f"run), medians; program: {' '.join(prog)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
