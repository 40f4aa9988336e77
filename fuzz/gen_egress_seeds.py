#!/usr/bin/python3
"""Writes the seed inputs of the egress_wire fuzzer (fuzz/fuzz_egress_wire.c,
fuzz/README.md) into DIR: the differential corpus of issue 25, each
hostile host name as an HTTP CONNECT, an absolute-form request, a SOCKS5
request and a TLS ClientHello's server name (the names of
tests/broker/egress/test_egress_bypass.c), then accepted requests, the
OpenSSL hellos of tests/broker/egress/hellos/, and the smuggling heads.
An input is a control byte (0 HTTP, 1 SOCKS5, 2 TLS), a two-byte split
point, then the bytes.

Usage: fuzz/gen_egress_seeds.py fuzz/corpus/egress_wire"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NAMES = [
    ("allowed", b"allowed.example"),
    ("upper-dot", b"ALLOWED.Example."),
    ("punycode", b"xn--bcher-kva.example"),
    ("underscore", b"_dmarc.allowed.example"),
    ("ipv4", b"127.0.0.1"),
    ("nul-after", b"allowed.example\0.evil.example"),
    ("nul-before", b"evil.example\0allowed.example"),
    ("userinfo", b"allowed.example@evil.example"),
    ("percent-dot", b"evil.example%2eallowed.example"),
    ("percent-nul", b"allowed.example%00.evil.example"),
    ("crlf", b"allowed.example\r\nX: y"),
    ("lf", b"allowed.example\n"),
    ("space", b"allowed.example evil.example"),
    ("tab", b"allowed.example\tevil"),
    ("slash", b"allowed.example/evil"),
    ("backslash", b"allowed.example\\evil"),
    ("hash", b"allowed.example#evil"),
    ("query", b"allowed.example?evil"),
    ("utf8", "b\u00fccher.example".encode()),
    ("empty", b""),
]

REQUESTS = [
    ("connect-ipv6", b"CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n"),
    ("connect-host", b"CONNECT a.example:443 HTTP/1.1\r\n"
     b"Host: a.example:443\r\nUser-Agent: curl/7.88\r\n"
     b"Proxy-Connection: Keep-Alive\r\n\r\n"),
    ("get-pip", b"GET http://pypi.example/simple/x/?a=1 HTTP/1.1\r\n"
     b"Host: pypi.example\r\nAccept: */*\r\nConnection: keep-alive, X-A\r\n"
     b"X-A: 1\r\nProxy-Authorization: Basic eDp5\r\n\r\n"),
    ("post-cl", b"POST http://h.example/up HTTP/1.1\r\nHost: h.example\r\n"
     b"Content-Length: 5\r\n\r\nhello"),
    ("cl-te", b"POST http://h.example/ HTTP/1.1\r\nContent-Length: 5\r\n"
     b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
    ("te-cl", b"POST http://h.example/ HTTP/1.1\r\n"
     b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"),
    ("obs-fold", b"GET http://h.example/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n"),
    ("host-mismatch", b"GET http://allowed.example/ HTTP/1.1\r\n"
     b"Host: evil.example\r\n\r\n"),
    ("origin-form", b"GET / HTTP/1.1\r\nHost: allowed.example\r\n\r\n"),
    ("https-uri", b"GET https://allowed.example/ HTTP/1.1\r\n\r\n"),
]


def seed(d, name, parser, data):
    split = len(data) // 2
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(bytes([parser, split >> 8, split & 0xff]) + data)


def sni_hello(name):
    sni = b"\0" + len(name).to_bytes(2, "big") + name
    ext = (b"\0\0" + (len(sni) + 2).to_bytes(2, "big") +
           len(sni).to_bytes(2, "big") + sni)
    body = (b"\3\3" + b"\x5a" * 32 + b"\0" + b"\0\2\x13\1" + b"\1\0" +
            len(ext).to_bytes(2, "big") + ext)
    hs = b"\1" + len(body).to_bytes(3, "big") + body
    return b"\x16\3\1" + len(hs).to_bytes(2, "big") + hs


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for tag, name in NAMES:
        seed(d, "connect-" + tag, 0,
             b"CONNECT " + name + b":443 HTTP/1.1\r\n\r\n")
        seed(d, "absolute-" + tag, 0,
             b"GET http://" + name + b"/ HTTP/1.1\r\n\r\n")
        seed(d, "socks5-" + tag, 1,
             b"\5\1\0" + b"\5\1\0\3" + bytes([len(name)]) + name + b"\1\xbb")
        seed(d, "sni-" + tag, 2, sni_hello(name))
    for tag, data in REQUESTS:
        seed(d, "http-" + tag, 0, data)
    seed(d, "socks5-ipv4", 1, b"\5\2\2\0\5\1\0\1\x7f\0\0\1\0\x50")
    seed(d, "socks5-ipv6", 1, b"\5\1\0\5\1\0\4" + b"\0" * 15 + b"\1\1\xbb")
    seed(d, "socks5-bind", 1, b"\5\1\0\5\2\0\1\0\0\0\0\0\0")
    seed(d, "socks4a", 1, b"\4\1\1\xbb\0\0\0\1user\0allowed.example\0")
    hellos = os.path.join(ROOT, "tests", "broker", "egress", "hellos")
    for f in sorted(os.listdir(hellos)):
        with open(os.path.join(hellos, f), "rb") as fh:
            seed(d, "tls-" + f[:-4], 2, fh.read())
    seed(d, "tls-sslv2", 2, b"\x80\x2e\x01\x03\x01\0\x15\0\0\0\x10")
    seed(d, "tls-http-on-443", 2, b"GET / HTTP/1.1\r\n\r\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
