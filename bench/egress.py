#!/usr/bin/python3
"""bench/egress.py: what stockade-proxy costs a download and a connection
(issue 25's bench targets; docs/benchmarks.md, "Egress through the proxy").

    bench/egress.py [--build DIR] [--mib N] [--runs N] [--conns N]
                    [--proxy PATH] [--compare PATH] [--markdown]

On loopback only. build/bench/netbench (bench/netbench.c) serves N MiB of
zeros (default 256) at http://127.0.0.2:PORT/big with sendfile(2), one
byte at /one, and starts stockade-proxy (PATH, default DIR's) as the
broker does, with one job allowing `allow_address = 127.0.0.2/32:PORT`
and a listener on 127.0.0.1 standing for the jail's. Then:

- throughput: hyperfine -N, the same `curl -sS -o /dev/null` fetching
  /big (a) directly, (b) through the proxy alone (`-x
  http://127.0.0.1:LPORT`: the relay, no jail), (c) inside `stockade run
  --json --policy P` with P allowing the address (the jail's start, its
  own proxy and the relay; the jail has no way out without the proxy, so
  (a) is its baseline too). RUNS runs each (default 10) in two rounds,
  the order reversed in the second; MiB/s = N / median wall time. With
  --compare, (d): the same as (b) through a second proxy, the program
  PATH (another build: the relay before a change). For (b) and (d), the
  proxy's CPU time (user + system, /proc/PID/stat) per download too: on
  a loaded machine it moves less than the wall time.
- connection set-up: `netbench setup CONNS` (default 1000) GETs of /one,
  one after another, each a new connection timed from socket(2) to the
  server's close, directly and through the proxy (absolute form),
  alternating three times each; the added time is the difference of the
  medians (and of the 95th percentiles) of all of them.

Prints a Markdown section with --markdown, else the same as text; the
proxy's own report (its byte count must be every byte served) at the
end. Exit status 0, 1 when a step failed, 2 for usage.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def start(argv):
    """Starts ARGV; returns (process, the first line of its stdout)."""
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline().strip()
    if not line:
        raise RuntimeError(f"{argv[0]} {argv[1]} did not start")
    return p, line


def hyperfine(sides, runs, tmp):
    """Wall times (s) per side: two rounds of RUNS/2 runs, reversed."""
    times = {n: [] for n, _ in sides}
    for r in range(2):
        order = sides if r == 0 else sides[::-1]
        js = os.path.join(tmp, f"hf-{r}.json")
        cmd = ["hyperfine", "-N", "--style", "none", "--warmup", "1",
               "--runs", str(max(runs // 2, 3)), "--export-json", js]
        for n, argv in order:
            cmd += ["-n", n, shlex.join(argv)]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"hyperfine: {p.stderr[-400:]}")
        with open(js) as f:
            for res in json.load(f)["results"]:
                times[res["command"]] += res["times"]
    return times


def setup_times(netbench, n, port, pport):
    """Median and p95 (us) of N connections, direct and through PPORT,
    alternating 3 times each; returns {side: (medians, p95s)}."""
    out = {"direct": ([], []), "proxy": ([], [])}
    for _ in range(3):
        for side, extra in (("direct", []), ("proxy", [pport])):
            r = subprocess.run([netbench, "setup", str(n), "127.0.0.2", port,
                                *extra], capture_output=True, text=True,
                               check=True)
            j = json.loads(r.stdout)
            out[side][0].append(j["median_us"])
            out[side][1].append(j["p95_us"])
    return out


def table(md, head, rows):
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + " --- |" * len(head))
        for r in rows:
            print("| " + " | ".join(str(c) for c in r) + " |")
    else:
        for r in [head] + rows:
            print("  ".join(str(c) for c in r))
    print()


def cpu_s(pid):
    """User + system CPU seconds of process PID so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def throughput(a, tmp, port, proxies):
    """PROXIES: [(name, port, pid)]; returns the median ratio direct /
    the first proxy."""
    url = f"http://127.0.0.2:{port}/big"
    curl = ["curl", "-sS", "-o", "/dev/null"]
    pol = os.path.join(tmp, "egress.ini")
    with open(pol, "w") as f:
        f.write(f"[network]\nallow_address = 127.0.0.2/32:{port}\n")
    os.chmod(pol, 0o644)
    sides = [("direct", curl + [url])]
    sides += [(n, curl + ["-x", f"http://127.0.0.1:{pp}", url])
              for n, pp, _ in proxies]
    sides.append(("stockade run", [os.path.join(a.build, "stockade"), "run",
                                   "--json", "--policy", pol, "--", *curl,
                                   url]))
    cpu0 = {n: cpu_s(pid) for n, _, pid in proxies}
    t = hyperfine(sides, a.runs, tmp)
    per = 2 * (max(a.runs // 2, 3) + 1)  # downloads per side, warm-ups too
    cpu = {n: (cpu_s(pid) - cpu0[n]) / per * 1000 for n, _, pid in proxies}
    med = {n: statistics.median(v) for n, v in t.items()}
    rows = [[f"`{n}`", f"{med[n] * 1000:.0f}", f"{min(t[n]) * 1000:.0f}",
             f"{max(t[n]) * 1000:.0f}", len(t[n]),
             f"{a.mib / med[n]:.0f}", f"{med['direct'] / med[n]:.2f}",
             f"{cpu[n]:.0f}" if n in cpu else "-"]
            for n, _ in sides]
    table(a.markdown, ["download", "median ms", "min ms", "max ms", "runs",
                       "MiB/s", "x direct", "proxy CPU ms"], rows)
    print("Commands: " + "; ".join(f"`{shlex.join(v)}`" for _, v in sides))
    print()
    return med["direct"] / med[proxies[0][0]]


def setup(a, netbench, port, pport):
    s = setup_times(netbench, a.conns, port, pport)
    md = {k: statistics.median(v[0]) for k, v in s.items()}
    p95 = {k: statistics.median(v[1]) for k, v in s.items()}
    rows = [[k, f"{md[k]:.0f}", f"{p95[k]:.0f}",
             ", ".join(f"{x:.0f}" for x in s[k][0])] for k in s]
    rows.append(["added by the proxy", f"{md['proxy'] - md['direct']:.0f}",
                 f"{p95['proxy'] - p95['direct']:.0f}", ""])
    table(a.markdown, ["connection + GET /one", "median us", "p95 us",
                       "medians of the 3 runs"], rows)
    return (md["proxy"] - md["direct"]) / 1000


def main():
    ap = argparse.ArgumentParser(prog="bench/egress.py",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"))
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--conns", type=int, default=1000)
    ap.add_argument("--proxy")
    ap.add_argument("--compare")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    netbench = os.path.join(a.build, "bench", "netbench")
    proxy = a.proxy or os.path.join(a.build, "stockade-proxy")
    tmp = tempfile.mkdtemp(prefix="stockade-egress-")
    os.chmod(tmp, 0o755)
    server, port = start([netbench, "serve", "127.0.0.2", str(a.mib)])
    drvs = []
    try:
        proxies = []
        for name, path in (("proxy", proxy), ("proxy (--compare)", a.compare)):
            if path:
                d, line = start([netbench, "proxy", path, f"127.0.0.2/32:{port}"])
                drvs.append(d)
                proxies.append((name, *line.split()))
        x = throughput(a, tmp, port, proxies)
        added = setup(a, netbench, port, proxies[0][1])
        rc = 0
        for (name, _, _), d in zip(proxies, drvs):
            d.stdin.close()
            report = d.stdout.read().strip()
            rc |= d.wait()
            print(f"The report of `{name}`: `{report}`.")
        drvs = []
        print()
        print()
        print(f"- proxy alone / direct throughput: {x:.2f} (target >= 0.9: "
              f"{'PASS' if x >= 0.9 else 'MISS'})")
        print(f"- connection set-up added by the proxy: {added:.3f} ms "
              f"(target < 1 ms: {'PASS' if added < 1 else 'MISS'})")
        return 0 if rc == 0 else 1
    except (RuntimeError, subprocess.CalledProcessError, ValueError) as e:
        print(f"bench/egress.py: {e}", file=sys.stderr)
        return 1
    finally:
        for d in drvs:
            d.kill()
        server.kill()
        server.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    sys.exit(main())
