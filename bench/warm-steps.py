#!/usr/bin/python3
"""bench/warm-steps.py TRACE...: the steps of one warm job in each of
bench/warm-trace.sh's traces, and per step the median over the traces, as
a Markdown table (docs/benchmarks.md, "A warm job: where the time goes").

A step runs from one marker event to the next: the client's request
written, the broker's RUN (sendmsg on the launcher's socket), the
launcher's GO to the waiting jail, init's hand-over to its payload (or,
in a build before issue 27, its fork of the payload), the payload's
successful execve, the program's exit_group, init's exit_group, the
launcher's waitid, its RESULT, the broker's answer on stdout."""
import re
import statistics
import sys

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+\S+\s+'
                  r'([\d.]+):\s+(.*)$')
NAMES = ["the request read to RUN sent (broker)",
         "RUN to GO sent (launcher)",
         "GO to the payload handed its job, or forked (init)",
         "to the exec done (payload)",
         "the program runs to exit_group",
         "the payload's end to init's exit_group",
         "init's exit to the launcher's waitid",
         "waitid to RESULT sent (launcher)",
         "RESULT to the answer written (broker)",
         "whole"]


def events(path):
    out = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                out.append((float(m.group(4)) * 1000, m.group(1).strip(),
                            m.group(5)))
    return out


def steps(ev):
    def first(cond, after):
        for t, comm, body in ev:
            if after is not None and t >= after and cond(comm, body):
                return t
        return None

    def launcher(c):
        return c.startswith("stockade-launch")

    t = [first(lambda c, b: c.startswith("python3") and
               b.startswith("sys_write("), 0.0)]
    t.append(first(lambda c, b: c == "stockade" and
                   b.startswith("sys_sendmsg(fd: 4"), t[-1]))
    got = first(lambda c, b: launcher(c) and b.startswith("sys_recvmsg -> "),
                t[-1])
    t.append(first(lambda c, b: launcher(c) and b.startswith("sys_sendmsg("),
                   got))
    t.append(first(lambda c, b: c.startswith("stockade-init") and
                   (b.startswith("sys_sendmsg(fd: 7") or
                    b.startswith("sys_clone")), t[-1]))
    t.append(first(lambda c, b: b.startswith("sys_execve -> 0x0"), t[-1]))
    t.append(first(lambda c, b: c == "true" and
                   b.startswith("sys_exit_group"), t[-1]))
    t.append(first(lambda c, b: c.startswith("stockade-init") and
                   b.startswith("sys_exit_group"), t[-1]))
    t.append(first(lambda c, b: launcher(c) and
                   b.startswith("sys_waitid -> "), t[-1]))
    t.append(first(lambda c, b: launcher(c) and
                   b.startswith("sys_sendmsg(fd: 3"), t[-1]))
    t.append(first(lambda c, b: c == "stockade" and
                   b.startswith("sys_write(fd: 1"), t[-1]))
    if None in t:
        return None
    return [t[i + 1] - t[i] for i in range(len(t) - 1)] + [t[-1] - t[0]]


def main():
    runs = [r for r in (steps(events(p)) for p in sys.argv[1:]) if r]
    if not runs:
        sys.exit("warm-steps: no trace with every step")
    print(f"| step ({len(runs)} traces) | median ms |\n| --- | --- |")
    for i, name in enumerate(NAMES):
        print(f"| {name} | {statistics.median(r[i] for r in runs):.2f} |")


if __name__ == "__main__":
    main()
