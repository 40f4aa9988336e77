#!/usr/bin/env python3
"""Measures the denylist code filter (codefilter.py) on the two corpora:
the bypass rate per obfuscation family of the hostile programs (how many
the filter ALLOWED), and the false-positive rate on the ordinary programs
(how many it BLOCKED). It runs no program: `stockade eval filter` runs the
hostile programs in the sandbox and calls this script for the filter's
side (issue 6, item 5; tests/verify/eval/codefilter/README.md).

Usage: filter_report.py [--json] [--files] [--hostile DIR] [--ordinary DIR]
  default DIRs: hostile/ and ordinary/ beside this script.
  Markdown on stdout; --files adds one row per program with the filter's
  first reason. --json prints instead:
    {"filter": PATH,
     "families": {slug: {"title": str, "total": n, "bypassed": k,
                         "rate": k/n, "files": [FILE, ...]}, ...},
     "hostile": {"total": n, "bypassed": k, "rate": k/n},
     "ordinary": {"total": n, "blocked": k, "rate": k/n, "files": [FILE, ...]}}
  where FILE is {"file": name, "path": absolute path, "allowed": bool,
  "reasons": [{"rule", "line", "detail"}, ...]} and, for hostile programs,
  also "family" (harm family), "exfil" (bool) and "tries" from the header.
  Families are listed in the order of FAMILIES; rates are fractions (0..1).
Exit status: 0; 2 when a corpus is missing or a hostile program's header
lacks a known `# filterfamily:`.
"""

import io
import json
import os
import re
import sys
import tokenize

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import codefilter  # noqa: E402  (beside this script)

# slug -> title, in the order of the report (issue 6, item 5)
FAMILIES = {
    "string-building": "string building",
    "dynamic-import": "`getattr`, `importlib`, `__import__` and other importers",
    "encoded-exec": "`eval`/`exec` of encoded text (base64, rot13, hex, zlib)",
    "ffi": "`ctypes` (foreign function calls)",
    "alt-apis": "alternative process, file and network APIs",
    "proc": "reading through `/proc`",
    "unicode-comments": "unicode and comment tricks",
}

HEADER_RE = re.compile(r"^#\s*([a-z]+):\s*(.*?)\s*$")


def read_header(path):
    """The `# key: value` lines of the file's first comment block, decoded
    as Python would decode the file (a coding cookie honoured)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(enc)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        text = data.decode("utf-8", "replace")
    header = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        m = HEADER_RE.match(line)
        if m and m.group(1) not in header:
            header[m.group(1)] = m.group(2)
    return header


def verdict(path):
    found = codefilter.check_file(path)
    return {
        "file": os.path.basename(path),
        "path": os.path.abspath(path),
        "allowed": not found,
        "reasons": [{"rule": r, "line": ln, "detail": d} for r, ln, d in found],
    }


def programs(directory):
    if not os.path.isdir(directory):
        raise SystemExit(f"filter_report.py: {directory}: not a directory")
    return sorted(os.path.join(directory, n) for n in os.listdir(directory)
                  if n.endswith(".py"))


def measure(hostile_dir, ordinary_dir):
    families = {slug: {"title": title, "total": 0, "bypassed": 0, "rate": 0.0,
                       "files": []} for slug, title in FAMILIES.items()}
    errors = []
    for path in programs(hostile_dir):
        h = read_header(path)
        slug = h.get("filterfamily")
        if slug not in families:
            errors.append(f"{path}: `# filterfamily:` is {slug!r}, not one of "
                          + ", ".join(FAMILIES))
            continue
        v = verdict(path)
        v["family"] = h.get("family", "")
        v["exfil"] = h.get("exfil", "").lower() == "yes"
        v["tries"] = h.get("tries", "")
        fam = families[slug]
        fam["files"].append(v)
        fam["total"] += 1
        fam["bypassed"] += v["allowed"]
    if errors:
        raise SystemExit("filter_report.py: " + "\n".join(errors))
    for fam in families.values():
        fam["rate"] = fam["bypassed"] / fam["total"] if fam["total"] else 0.0
    total = sum(f["total"] for f in families.values())
    bypassed = sum(f["bypassed"] for f in families.values())
    ordinary = [verdict(p) for p in programs(ordinary_dir)]
    blocked = sum(not v["allowed"] for v in ordinary)
    return {
        "filter": os.path.join(HERE, "codefilter.py"),
        "families": families,
        "hostile": {"total": total, "bypassed": bypassed,
                    "rate": bypassed / total if total else 0.0},
        "ordinary": {"total": len(ordinary), "blocked": blocked,
                     "rate": blocked / len(ordinary) if ordinary else 0.0,
                     "files": ordinary},
    }


def pct(rate):
    return f"{100 * rate:.0f}%"


def first_reason(v):
    if not v["reasons"]:
        return ""
    r = v["reasons"][0]
    text = f'{r["rule"]}: {r["detail"]}'.replace("|", "\\|")
    return text if len(text) <= 90 else text[:87] + "..."


def markdown(report, files):
    out = ["| filter family | hostile programs | allowed by the filter "
           "(bypassed) | bypass rate |",
           "|---|---:|---:|---:|"]
    for slug, fam in report["families"].items():
        out.append(f'| {fam["title"]} (`{slug}`) | {fam["total"]} | '
                   f'{fam["bypassed"]} | {pct(fam["rate"])} |')
    h = report["hostile"]
    out.append(f'| **all families** | **{h["total"]}** | **{h["bypassed"]}** '
               f'| **{pct(h["rate"])}** |')
    o = report["ordinary"]
    out += ["",
            "| ordinary programs | blocked by the filter (false positives) "
            "| false-positive rate |",
            "|---:|---:|---:|",
            f'| {o["total"]} | {o["blocked"]} | {pct(o["rate"])} |']
    if files:
        out += ["", "| hostile program | family | filter | first reason |",
                "|---|---|---|---|"]
        for slug, fam in report["families"].items():
            for v in fam["files"]:
                out.append(f'| `{v["file"]}` | `{slug}` | '
                           f'{"allowed" if v["allowed"] else "blocked"} | '
                           f'{first_reason(v)} |')
        out += ["", "| ordinary program | filter | first reason |",
                "|---|---|---|"]
        for v in o["files"]:
            out.append(f'| `{v["file"]}` | '
                       f'{"allowed" if v["allowed"] else "blocked"} | '
                       f'{first_reason(v)} |')
    return "\n".join(out)


def main(argv):
    as_json = files = False
    hostile = os.path.join(HERE, "hostile")
    ordinary = os.path.join(HERE, "ordinary")
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a == "--json":
            as_json = True
        elif a == "--files":
            files = True
        elif a in ("--hostile", "--ordinary") and args:
            if a == "--hostile":
                hostile = args.pop(0)
            else:
                ordinary = args.pop(0)
        else:
            print(__doc__.split("\n\n")[1], file=sys.stderr)
            return 2
    try:
        report = measure(hostile, ordinary)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(report, indent=1, ensure_ascii=False))
    else:
        print(markdown(report, files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
