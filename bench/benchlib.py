"""benchlib.py: what bench/run's sections share (docs/benchmarks.md): the
report being built, PASS/MISS verdicts, the clean-ups run at exit or on
SIGINT/SIGTERM, and the one measurement running (so a signal reaches it
first). Imported by bench/run from beside it; standard library only."""

import re
import signal
import subprocess
import sys

cleanups = []  # run in reverse at exit, also on SIGINT/SIGTERM
running = []  # the measurement running now (measure())


def log(msg):
    print(f"bench/run: {msg}", file=sys.stderr, flush=True)


def at_exit():
    while cleanups:
        try:
            cleanups.pop()()
        except Exception as e:  # keep cleaning up
            log(f"clean-up: {e}")


def on_signal(signum, _frame):
    """SIGINT/SIGTERM: the running measurement gets SIGINT and up to 30 s to
    clean up (fs-transfer.py ends its session, jobbench's sessions see end
    of input), then SystemExit runs the clean-ups (the loop mount)."""
    child = running[0] if running else None
    if child is not None and child.poll() is None:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
    sys.exit(128 + signum)


def measure(cmd, **kw):
    """subprocess.run(CMD, text=True, **KW) for a long measurement, known to
    on_signal while it runs; returns the CompletedProcess."""
    with subprocess.Popen(cmd, text=True, **kw) as p:
        running[:] = [p]
        try:
            out, err = p.communicate()
        finally:
            running[:] = []
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def ms(x):
    return f"{x:.2f}" if x < 100 else f"{x:.1f}"


def verdict(value, limit, below=True):
    """PASS when VALUE <= LIMIT (below) or >= LIMIT; a MISS says by how much."""
    ok = value <= limit if below else value >= limit
    if ok:
        return "PASS"
    return f"MISS by {abs(value / limit - 1) * 100:.0f} %"


class Report:
    def __init__(self):
        self.lines, self.targets, self.failed = [], [], []

    def add(self, *lines):
        self.lines.extend(lines)

    def table(self, header, rows):
        self.add("| " + " | ".join(header) + " |",
                 "|" + " --- |" * len(header))
        for r in rows:
            self.add("| " + " | ".join(str(c) for c in r) + " |")
        self.add("")

    def target(self, what, measured, limit, result):
        self.targets.append((what, measured, limit, result))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cells_of(row):
    """The cells of a Markdown table row ("\\|" inside a cell is no border)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]
