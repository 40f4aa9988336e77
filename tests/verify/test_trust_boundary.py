#!/usr/bin/python3
# The trust boundary (issue 24; docs/decisions.md, "The check suite as its
# own program"): the shipped stockade carries none of the test tooling.
#   1. no symbol defined by verify/'s libraries (stockade-check,
#      stockade-eval) is defined in stockade (nm);
#   2. no source of verify/ is compiled into stockade or libbroker
#      (meson introspect --targets), and broker/ includes no verify/ header;
#   3. strings(1) of stockade finds no source-tree or build-tree path, no
#      honeypot and no decoy mode.
# Usage: test_trust_boundary.py STOCKADE [VERIFY_LIBRARY.a...], with
# STOCKADE_SOURCE_ROOT and STOCKADE_BUILD_ROOT set. TAP.
import json
import os
import re
import subprocess
import sys

WORDS = ["__decoy", "honeypot", "DECOY_SECRET", "STOCKADE_EVAL_API_KEY",
         "stockade-eval-secret"]


def defined(path):
    """The global symbols of text and data PATH defines (nm)."""
    out = subprocess.run(["nm", "-g", "--defined-only", path],
                         capture_output=True, text=True, check=True).stdout
    syms = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRtdbr":
            syms.add(f[2])
    return syms


def main():
    exe = sys.argv[1]
    libs = sys.argv[2:]
    src = os.path.realpath(os.environ["STOCKADE_SOURCE_ROOT"])
    bld = os.path.realpath(os.environ["STOCKADE_BUILD_ROOT"])
    print("1..4")
    rc = 0

    # 1. no verify/ symbol in the shipped binary.
    have = defined(exe)
    found = []
    for lib in libs:
        found += sorted(defined(lib) & have)
    ok = bool(libs) and not found and len(have) > 100
    print(f"{'ok' if ok else 'not ok'} 1 - stockade defines none of the "
          f"{len(libs)} verify/ libraries' symbols")
    for s in found[:20]:
        print(f"# in stockade: {s}")
    rc |= not ok

    # 2. no verify/ source in the broker's targets, no verify/ header
    # included from broker/.
    bad = []
    intro = os.path.join(bld, "meson-info", "intro-targets.json")
    if os.path.exists(intro):
        with open(intro) as f:
            targets = json.load(f)
        seen = 0
        for t in targets:
            # libbroker is made of its rooms' libraries (broker-cli,
            # broker-api, ...: broker/meson.build): each is looked at.
            if (t["name"] not in ("stockade", "broker")
                    and not t["name"].startswith("broker-")):
                continue
            seen += 1
            for s in t.get("target_sources", []):
                for p in s.get("sources", []):
                    if os.path.realpath(p).startswith(os.path.join(src, "verify") + "/"):
                        bad.append(f"target {t['name']} compiles {p}")
        if seen < 2:
            bad.append(f"{intro}: no targets stockade and broker")
    else:
        bad.append(f"{intro}: missing")
    vdir = os.path.join(src, "verify")
    headers = set()
    for d, _, files in os.walk(vdir):
        headers.update(f for f in files if f.endswith(".h"))
    inc = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
    for d, _, files in os.walk(os.path.join(src, "broker")):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                for h in inc.findall(fh.read()):
                    if os.path.basename(h) in headers or "verify/" in h:
                        bad.append(f"{os.path.relpath(os.path.join(d, f), src)} includes {h}")
    if not headers:
        bad.append("no header under verify/")
    print(f"{'ok' if not bad else 'not ok'} 2 - libbroker and stockade "
          "compile no verify/ source; broker/ includes no verify/ header")
    for b in bad[:20]:
        print(f"# {b}")
    rc |= bool(bad)

    # 3 and 4. strings(1): paths, then the test tooling's words.
    out = subprocess.run(["strings", "-a", "-n", "4", exe],
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    paths = [l for l in lines if src in l or bld in l]
    ok = "stockade" in out and not paths
    print(f"{'ok' if ok else 'not ok'} 3 - strings(1) of stockade holds no "
          f"path of the source tree {src} or the build tree {bld} "
          f"({len(paths)} found)")
    for l in paths[:10]:
        print(f"# {l}")
    rc |= not ok
    words = [(w, sum(w in l for l in lines)) for w in WORDS]
    ok = not any(n for _, n in words)
    print(f"{'ok' if ok else 'not ok'} 4 - strings(1) of stockade holds no "
          "honeypot, no decoy mode and no eval canary (" +
          ", ".join(f"{w}: {n}" for w, n in words) + ")")
    rc |= not ok
    return rc


if __name__ == "__main__":
    sys.exit(main())
