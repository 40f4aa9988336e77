#!/usr/bin/python3
"""tests/broker/egress/gen_hellos.py: real ClientHello bytes for the tests
of broker/egress/egress_tls.c, from this machine's OpenSSL through
python3's ssl module with memory BIOs (no network, no server: the
handshake's first flight is what the client writes before it reads).

  gen_hellos.py DIR        writes the fixtures below into DIR
  gen_hellos.py --one NAME writes one TLS 1.3 hello with SNI NAME to stdout

The fixtures (committed in tests/broker/egress/hellos/, made with
OpenSSL 3.0 of Debian 12):
  tls13-sni.bin    the default client (TLS 1.2 and 1.3 offered), SNI
                   sni.example.org
  tls12-sni.bin    at most TLS 1.2 (no supported_versions, no key_share)
  tls13-nosni.bin  no server_hostname: no server_name extension
  tls12-nosni.bin  the same at most TLS 1.2
  tls13-grease.bin tls13-sni.bin with a GREASE extension (type 0x0a0a, no
                   data) put first, as RFC 8701 section 3 lets a client
                   do: OpenSSL sends none itself
"""
import os
import ssl
import sys

SNI = "sni.example.org"


def hello(sni, maxver=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if maxver is not None:
        ctx.maximum_version = maxver
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname=sni)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def add_grease(rec):
    """REC (one record holding one ClientHello) with extension 0x0a0a of
    no data first in its extension block, every length fixed."""
    assert rec[0] == 0x16 and rec[5] == 0x01
    b = bytearray(rec)
    i = 5 + 4 + 2 + 32
    i += 1 + b[i]                       # legacy_session_id
    i += 2 + (b[i] << 8 | b[i + 1])     # cipher_suites
    i += 1 + b[i]                       # legacy_compression_methods
    ext_len = b[i] << 8 | b[i + 1]
    b[i:i + 2] = (ext_len + 4).to_bytes(2, "big")
    b[i + 2:i + 2] = b"\x0a\x0a\x00\x00"
    hs_len = int.from_bytes(b[6:9], "big") + 4
    b[6:9] = hs_len.to_bytes(3, "big")
    b[3:5] = (int.from_bytes(b[3:5], "big") + 4).to_bytes(2, "big")
    return bytes(b)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        sys.stdout.buffer.write(hello(sys.argv[2]))
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    v12 = ssl.TLSVersion.TLSv1_2
    files = {
        "tls13-sni.bin": hello(SNI),
        "tls12-sni.bin": hello(SNI, v12),
        "tls13-nosni.bin": hello(None),
        "tls12-nosni.bin": hello(None, v12),
    }
    files["tls13-grease.bin"] = add_grease(files["tls13-sni.bin"])
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
