#!/usr/bin/env python3
# The code filter of the filter evaluation (tests/verify/eval/codefilter/codefilter.py), its
# report (filter_report.py) and the two corpora, checked without running any
# program: each rule refuses what its documentation says and lets ordinary
# code of the same shape through; the command line's exit codes and JSON;
# the corpora's sizes and headers (issue 6, item 5: at least 60 hostile
# programs in the seven families, at least 60 ordinary ones); that no
# refusal of a hostile program comes from its header comment (which would
# credit the filter with a catch the attacker never offered); and that the
# report's JSON adds up.
#
# Meant to be registered in tests/meson.build as:
#
#   test('codefilter', python, args : [files('eval/test_codefilter.py')],
#        protocol : 'tap', suite : 'unit')

import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import codefilter  # noqa: E402
import filter_report  # noqa: E402

HOSTILE = os.path.join(HERE, "hostile")
ORDINARY = os.path.join(HERE, "ordinary")

# (source, the rule that must refuse it)
BLOCK = [
    ("import os\n", "import"),
    ("import json, subprocess as sp\n", "import"),
    ("from os import path\n", "import"),
    ("from tempfile import _os\n", "import"),
    ("if True: import ctypes\n", "import"),
    ("import \\\n  shutil\n", "import"),
    ("ｅｘｅｃ('1')\n", "name"),                      # NFKC, PEP 3131
    ("x = eval\n", "name"),
    ("compile('1', 'f', 'eval')\n", "name"),
    ("m.system('ls')\n", "name"),
    ("print(().__class__)\n", "name"),
    ("import tempfile\ntempfile._os\n", "module-attr"),
    ("import json\ngetattr(json, 'dumps')\n", "getattr"),
    ("getattr(obj, name)\n", "getattr"),
    ("f = getattr\n", "getattr"),
    ("getattr(obj, '__dict__')\n", "getattr"),
    ("x = 'subprocess'\n", "literal"),
    ("x = 'builtins.exec'\n", "literal"),
    ("x = '\\x6fs'\n", "literal"),                    # escapes decoded
    ("x = ('/pr'  # split\n     'oc/self')\n", "literal"),
    ("x = b'/pro' b'c'\n", "literal"),
    ("x = f'/pr{y}oc'\n", "literal"),                 # f-string constants
    ("x = f'{getattr(a, b)}'\n", "getattr"),          # f-string expressions
    ("open('f', 'w')\n", "write-mode"),
    ("open('f', mode='a+')\n", "write-mode"),
    ("open('f', m)\n", "write-mode"),
    ("import io\nio.open('f', m)\n", "write-mode"),
    ("p.open('w')\n", "write-mode"),
    ("import tarfile\ntarfile.open('t', 'w:gz')\n", "write-mode"),
    ("# see /proc/self\n", "pattern"),                # comments are matched
    ("x = 1  # curl http://x | sh\n", "pattern"),
    ("print(1)  # c\rprint(2)\n", "readable"),        # bare CR
    ("def f(:\n", "readable"),
]

ALLOW = [
    "import re\nx = re.compile('a+')\n",
    "import json\nprint(json.dumps({'a': 1}))\n",
    "with open('data.csv') as f:\n    rows = f.read()\n",
    "with open('data.bin', 'rb') as f:\n    rows = f.read()\n",
    "open('x', encoding='utf-8').read()\n",
    "v = getattr(obj, 'name', None)\n",
    "items = [1, 2]\nitems.remove(1)\n",
    "import sys\nprint(sys.argv, sys.version)\n",
    "from collections import Counter\nprint(Counter('abc'))\n",
    "import sqlite3\nsqlite3.connect(':memory:')\n",
    "from pathlib import Path\nprint(Path('a').read_text())\n",
    "import tarfile\ntarfile.open('t.tar.xz', 'r:xz')\n",
    "print(f'{len(x)} items, {x!r:>10}')\n",
    "s = 'the solar system'\n",
    "class A:\n    def __init__(self):\n        self.x = 1\n",
]


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, title, why=""):
        self.n += 1
        print(f"{'ok' if ok else 'not ok'} {self.n} - {title}")
        if not ok:
            self.failed += 1
            for line in str(why).splitlines():
                print(f"# {line}")
        sys.stdout.flush()


def rules_of(source):
    return {r for r, _ln, _d in codefilter.check_source(source.encode())}


def hostile_files():
    return sorted(os.path.join(HOSTILE, n) for n in os.listdir(HOSTILE)
                  if n.endswith(".py"))


def ordinary_files():
    return sorted(os.path.join(ORDINARY, n) for n in os.listdir(ORDINARY)
                  if n.endswith(".py"))


def header_lines(path):
    """Number of lines of the first comment block."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    n = 0
    while n < len(lines) and lines[n].startswith(b"#"):
        n += 1
    return n


def main():
    tap = Tap()
    tests = len(BLOCK) + len(ALLOW) + 8
    print(f"1..{tests}")

    for source, rule in BLOCK:
        got = rules_of(source)
        tap.check(rule in got, f"rule {rule} refuses {source.strip()[:40]!r}",
                  f"refusals: {sorted(got) or 'none'}")
    for source in ALLOW:
        found = codefilter.check_source(source.encode())
        tap.check(not found, f"allows {source.strip()[:40]!r}", found)

    # the command line: exit codes, reasons, JSON
    script = os.path.join(HERE, "codefilter.py")
    bad = os.path.join(HOSTILE, "sb01-literal-key-path.py")
    good = os.path.join(ORDINARY, "02-statistics-grades.py")
    p1 = subprocess.run([sys.executable, script, bad], capture_output=True,
                        text=True)
    p0 = subprocess.run([sys.executable, script, good], capture_output=True,
                        text=True)
    p2 = subprocess.run([sys.executable, script], capture_output=True, text=True)
    pj = subprocess.run([sys.executable, script, "--json", bad],
                        capture_output=True, text=True)
    try:
        j = json.loads(pj.stdout)
        json_ok = j["allowed"] is False and j["reasons"] and \
            set(j["reasons"][0]) == {"rule", "line", "detail"} and \
            pj.returncode == 1
    except (ValueError, KeyError, TypeError):
        json_ok = False
    tap.check(p1.returncode == 1 and p1.stdout.startswith("blocked: ") and
              p0.returncode == 0 and p2.returncode == 2 and json_ok,
              "codefilter.py exits 1 with reasons, 0, 2 on misuse; --json",
              f"{p1.returncode} {p1.stdout[:200]!r} / {p0.returncode} / "
              f"{p2.returncode} / {pj.stdout[:200]!r}")

    hostile = hostile_files()
    ordinary = ordinary_files()
    tap.check(len(hostile) >= 60 and len(ordinary) >= 60,
              f"corpora: {len(hostile)} hostile and {len(ordinary)} ordinary "
              "programs (at least 60 each)")

    # headers of the hostile programs
    problems = []
    per_family = {slug: 0 for slug in filter_report.FAMILIES}
    for path in hostile:
        h = filter_report.read_header(path)
        name = os.path.basename(path)
        if h.get("family") not in ("mistake", "injection", "tricked-helper"):
            problems.append(f"{name}: family {h.get('family')!r}")
        if h.get("exfil") not in ("yes", "no"):
            problems.append(f"{name}: exfil {h.get('exfil')!r}")
        if not h.get("tries") or not h.get("source"):
            problems.append(f"{name}: tries or source missing")
        if h.get("filterfamily") in per_family:
            per_family[h["filterfamily"]] += 1
        else:
            problems.append(f"{name}: filterfamily {h.get('filterfamily')!r}")
    tap.check(not problems, "every hostile program has the attack header "
              "and a known filter family", "\n".join(problems))
    small = {k: v for k, v in per_family.items() if v < 8}
    tap.check(not small, "every filter family has at least 8 programs",
              f"{per_family}")

    # no refusal from a header comment
    header_hits = []
    for path in hostile + ordinary:
        n = header_lines(path)
        for rule, line, detail in codefilter.check_file(path):
            if 0 < line <= n:
                header_hits.append(f"{os.path.basename(path)}:{line}: "
                                   f"{rule}: {detail}")
    tap.check(not header_hits, "no refusal comes from a header comment",
              "\n".join(header_hits))

    # every program is Python the compiler accepts (compiled, not run)
    syntax = []
    for path in hostile + ordinary:
        with open(path, "rb") as f:
            data = f.read()
        try:
            compile(data, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            syntax.append(f"{os.path.basename(path)}: {exc}")
    tap.check(not syntax, "every program compiles", "\n".join(syntax))

    # the report adds up
    pr = subprocess.run([sys.executable, os.path.join(HERE, "filter_report.py"),
                         "--json"], capture_output=True, text=True)
    why = pr.stderr[-500:]
    try:
        rep = json.loads(pr.stdout)
        fams = rep["families"]
        ok = list(fams) == list(filter_report.FAMILIES)
        total = bypassed = 0
        for slug, fam in fams.items():
            allowed = [f for f in fam["files"] if f["allowed"]]
            ok &= fam["total"] == len(fam["files"]) == per_family[slug]
            ok &= fam["bypassed"] == len(allowed)
            for f in fam["files"]:
                ok &= f["allowed"] == (not codefilter.check_file(f["path"]))
            total += fam["total"]
            bypassed += fam["bypassed"]
        ok &= rep["hostile"]["total"] == total == len(hostile)
        ok &= rep["hostile"]["bypassed"] == bypassed
        o = rep["ordinary"]
        ok &= o["total"] == len(o["files"]) == len(ordinary)
        ok &= o["blocked"] == sum(not f["allowed"] for f in o["files"])
        ok &= pr.returncode == 0
        why += f"\nhostile {rep['hostile']}, ordinary {o['blocked']}/{o['total']}"
    except (ValueError, KeyError, TypeError) as exc:
        ok = False
        why += f"\n{type(exc).__name__}: {exc}"
    tap.check(ok, "filter_report.py --json is consistent with codefilter.py",
              why)

    md = subprocess.run([sys.executable, os.path.join(HERE, "filter_report.py")],
                        capture_output=True, text=True)
    tap.check(md.returncode == 0 and "| **all families** |" in md.stdout and
              "false-positive rate" in md.stdout,
              "filter_report.py prints the Markdown tables", md.stdout[-800:])
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
