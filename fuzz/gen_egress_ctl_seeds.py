#!/usr/bin/python3
"""Writes the seeds of the egress_ctl fuzzer (fuzz/fuzz_egress_ctl.c) into
fuzz/corpus/egress_ctl/: WIRE_PROXY_JOB and WIRE_PROXY_REPORT bodies in
the layout of shared/egress_ctl.c, hosts to report, and packet-socket
frames. usage: fuzz/gen_egress_ctl_seeds.py [DIR]"""
import os
import struct
import sys

HOST_BUF, ADDR_BUF, DETAIL_BUF = 254, 46, 48


def job(rules, port=3128):
    body = struct.pack("<QQQIIHH", 7, 1 << 20, 1 << 20, 100, 10, port,
                       len(rules))
    for kind, text in rules:
        body += bytes([kind]) + text.encode() + b"\0"
    return b"\0" + body


def field(text, size):
    return text.encode().ljust(size, b"\0")


def report(conns, refusals):
    body = struct.pack("<QQQQQIIBB", 7, len(conns), len(refusals), 10, 20,
                       len(conns), len(refusals), 0, 0)
    for host, port, addr in conns:
        body += field(host, HOST_BUF) + struct.pack("<H", port)
        body += field(addr, ADDR_BUF) + struct.pack("<IQQ", 1, 10, 20)
    for host, port, reason, detail in refusals:
        body += field(host, HOST_BUF) + struct.pack("<HB", port, reason)
        body += field(detail, DETAIL_BUF) + struct.pack("<I", 1)
    return b"\1" + body


def ipv4(proto, l4):
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 0, 0, 64,
                       proto, 0, bytes([127, 0, 0, 1]), bytes([10, 0, 0, 1]))
    return head + l4


def ipv6(nxt, rest):
    return (struct.pack("!IHBB", 6 << 28, len(rest), nxt, 64)
            + bytes(15) + b"\1" + bytes([0x20, 1, 0xd, 0xb8]) + bytes(11)
            + b"\1" + rest)


SYN = struct.pack("!HHIIBBHHH", 50000, 443, 0, 0, 0x50, 0x02, 0, 0, 0)
UDP = struct.pack("!HHHH", 50000, 53, 12, 0) + b"abcd"

SEEDS = {
    "job-empty": job([]),
    "job-rules": job([(0, "*.example.org:8443"), (0, "deb.debian.org"),
                      (1, "[fd00::]/8:80-90"), (1, "127.0.0.1:8080"),
                      (2, "evil.example.org")]),
    "job-bad-rule": job([(0, "user@host")]),
    "report-empty": report([], []),
    "report-full": report([("deb.debian.org", 443, "203.0.113.80")],
                          [("evil.org", 443, 1, ""),
                           ("10.0.0.1", 53, 6, "udp")]),
    "refusal-nul": b"\2allowed.com\0.evil.com",
    "refusal-crlf": b"\2a\r\nb \\c",
    "frame-ipv4-syn": b"\3" + ipv4(6, SYN),
    "frame-ipv4-udp": b"\3" + ipv4(17, UDP),
    "frame-ipv6-hop-udp": b"\3" + ipv6(0, bytes([17, 0]) + bytes(6) + UDP),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "egress_ctl")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, "seed-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
