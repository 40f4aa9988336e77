#!/usr/bin/python3
"""Latency of `stockade mcp` tool calls in one warm session.

Usage: bench/mcp-calls.py STOCKADE [N]

Starts `stockade mcp` (a temporary workspace), initializes, then makes N
calls (default 100) of each: ping, write_file of 1 KiB, read_file of it,
run_command ["true"], run_code python "pass"; prints the median, the 10th
and the 90th percentile of the round trip in milliseconds (the client's
wall clock: line written to response read). Standard library only; run
by hand (docs/benchmarks.md), never from the test suite.
"""
import json
import statistics
import subprocess
import sys
import time


def main():
    stockade = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    p = subprocess.Popen([stockade, "mcp"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    ids = iter(range(1, 1 << 30))

    def rpc(method, params=None):
        msg = {"jsonrpc": "2.0", "id": next(ids), "method": method}
        if params is not None:
            msg["params"] = params
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()
        r = json.loads(p.stdout.readline())
        if "error" in r or r.get("result", {}).get("isError"):
            sys.exit(f"{method} failed: {r}")
        return r

    rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}})
    cases = [
        ("ping", "ping", None),
        ("write_file 1 KiB", "tools/call",
         {"name": "write_file", "arguments": {"path": "a.txt",
                                              "content": "x" * 1024}}),
        ("read_file 1 KiB", "tools/call",
         {"name": "read_file", "arguments": {"path": "a.txt"}}),
        ("run_command true", "tools/call",
         {"name": "run_command", "arguments": {"argv": ["true"]}}),
        ("run_code python pass", "tools/call",
         {"name": "run_code", "arguments": {"language": "python",
                                            "code": "pass"}}),
    ]
    print(f"{'call':<24} {'median ms':>10} {'p10':>8} {'p90':>8}  ({n} calls)")
    for name, method, params in cases:
        rpc(method, params)  # warm
        t = []
        for _ in range(n):
            t0 = time.perf_counter()
            rpc(method, params)
            t.append((time.perf_counter() - t0) * 1000)
        q = statistics.quantiles(t, n=10)
        print(f"{name:<24} {statistics.median(t):>10.2f} {q[0]:>8.2f} "
              f"{q[-1]:>8.2f}")
    p.stdin.close()
    p.wait()


if __name__ == "__main__":
    main()
