#!/usr/bin/python3
# The committed evidence (issue 6; docs/evidence.md, docs/evidence/)
# against the corpus it was made from: each table names the command that
# regenerates it, has one row per attack of tests/verify/eval/attacks/ (the isolation
# table one per `exfil: yes` attack), shows no attack succeeding against
# the full product (and no harm in the filter table), and docs/evidence.md
# includes each committed table as it is. It runs nothing: a corpus that
# changed without the tables being regenerated fails here.
import os
import re
import sys

ROOT = os.environ.get("STOCKADE_SOURCE_ROOT",
                      os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
DOCS = os.path.join(ROOT, "docs")
ATTACKS = os.path.join(ROOT, "tests", "verify", "eval", "attacks")
NAME = re.compile(r"^([0-9][0-9]-[a-z0-9_-]+)(\.py|\.sh|\.c)$")
STOPPED = {"\u2713", "**\u2713**"}
# Not run (the attack could not try) and the run failed: allowed in a
# weakened column, never in the full product's (docs/evidence.md, "What
# stopped means").
INCONCLUSIVE = {"N", "E"}
STOP_WORDS = ["canary-unread", "pwned-absent", "files-intact",
              "decoy-unsignalled", "no-survivor", "output-capped",
              "terminal-untouched"]


def by_design():
    """The attacks that declare the allowed host lets them out
    (by-design: allowed-host-exit; issue 25)."""
    out = set()
    for f in sorted(os.listdir(ATTACKS)):
        m = NAME.match(f)
        if m:
            with open(os.path.join(ATTACKS, f), encoding="utf-8") as fh:
                if re.search(r"^\s*[#*]\s*by-design:\s*allowed-host-exit\s*$",
                             fh.read(4096), re.M):
                    out.add(m.group(1))
    return out


def attacks():
    """{name: exfil} of every attack in tests/verify/eval/attacks/."""
    out = {}
    for f in sorted(os.listdir(ATTACKS)):
        m = NAME.match(f)
        if not m:
            continue
        with open(os.path.join(ATTACKS, f), encoding="utf-8") as fh:
            head = fh.read(4096)
        out[m.group(1)] = re.search(r"^\s*[#*]\s*exfil:\s*yes\s*$", head, re.M) is not None
    return out


def table(path):
    """The first line and the rows (lists of cells) of the Markdown table
    in PATH, header and rule lines left out."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    rows = [[c.strip() for c in line.strip("|").split("|")]
            for line in lines if line.startswith("| ")]
    return lines[0] if lines else "", rows[1:], lines


def check_layers():
    first, rows, _ = table(os.path.join(DOCS, "evidence", "layers.md"))
    assert "`stockade eval layers`" in first, first
    names = [r[0] for r in rows]
    assert names == sorted(attacks()), (
        "the layer table's rows are not the corpus: regenerate it "
        f"(missing {sorted(set(attacks()) - set(names))}, "
        f"extra {sorted(set(names) - set(attacks()))})")
    for r in rows:
        assert len(r) == 2 + 14, r
        assert all(c in STOPPED or c == "\u2717" or c in INCONCLUSIVE
                   for c in r[2:]), r
        assert r[-1] in STOPPED, f"{r[0]}: the full product does not stop it"
        # One first stop in bold, unless a column before it could not say
        # (N or E): then it is unknown and nothing is bold.
        bold = sum(c == "**\u2713**" for c in r[2:])
        assert bold == 1 or (bold == 0 and any(c in INCONCLUSIVE for c in r[2:])), r


def check_isolation():
    first, rows, _ = table(os.path.join(DOCS, "evidence", "isolation.md"))
    assert "`stockade eval isolation`" in first, first
    exfil = sorted(n for n, x in attacks().items() if x)
    assert [r[0] for r in rows] == exfil, "the isolation table's rows are not the exfil attacks"
    # neither, fs only, net only, both, allow-list only, fs + allow-list
    # (issue 25): both stop everything; under an allow-list, everything
    # but what the allowed host lets out by design, which shows as such.
    exits = by_design()
    assert exits, "no attack declares the allowed host an exit"
    # "allow-list only" (files not isolated) leaks what "net only" leaks,
    # by output and files, and nothing more by the network.
    for r in rows:
        assert len(r) == 7, r
        assert r[4] == "\u2713", f"{r[0]}: both isolations together do not stop it"
        if r[0] in exits:
            # The allowed host (index), or a wildcard allow's resolver
            # (dns: the names the proxy asks for).
            assert r[5] == r[6] and r[5] in ("\u2717 index", "\u2717 dns"), (
                f"{r[0]}: the allowed host is no exit here: {r[5]}, {r[6]}")
            continue
        assert r[5] == r[3], f"{r[0]}: the allow-list changes what net only shows: {r[5]}"
        assert r[6] == "\u2713", f"{r[0]}: fs + allow-list lets it out: {r[6]}"


def check_filter():
    first, rows, _ = table(os.path.join(DOCS, "evidence", "filter.md"))
    assert "`stockade eval filter`" in first, first
    assert rows, "no family"
    for r in rows:
        assert r[-1] == "0", f"{r[0]}: harm in the sandbox"


def check_stopped_from_evidence():
    """Every run of the committed layer table that is stopped shows its
    attempt, and the page lists the stopped-when vocabulary the corpus
    uses (issue 23 point 9)."""
    import json
    with open(os.path.join(DOCS, "evidence", "layers.json"), encoding="utf-8") as fh:
        layers = json.load(fh)
    for a in layers["attacks"]:
        for cfg, run in a["runs"].items():
            if run["outcome"] == "stopped":
                assert run.get("attempted") is True, (
                    f"{a['name']} under {cfg}: counted stopped without its "
                    "ATTEMPTED marker: regenerate the table")
            assert run["outcome"] != "not_run" or run.get("error"), (
                f"{a['name']} under {cfg}: not run, and no reason")
    with open(os.path.join(DOCS, "evidence.md"), encoding="utf-8") as fh:
        doc = fh.read()
    for w in STOP_WORDS:
        assert f"| `{w}` |" in doc, f"docs/evidence.md does not define {w}"


def check_included():
    with open(os.path.join(DOCS, "evidence.md"), encoding="utf-8") as fh:
        doc = fh.read()
    for name in ("layers", "isolation", "filter"):
        _, _, lines = table(os.path.join(DOCS, "evidence", name + ".md"))
        body = "\n".join(line for line in lines if line.startswith("|"))
        assert body in doc, f"docs/evidence.md does not include evidence/{name}.md's table as it is"


def main():
    tests = [("layer table: one row per attack, the full product stops each", check_layers),
             ("isolation table: one row per exfil attack, both stop each, and the allow-list columns", check_isolation),
             ("filter table: no harm in the sandbox", check_filter),
             ("a stopped run shows its attempt; the vocabulary is written",
              check_stopped_from_evidence),
             ("docs/evidence.md includes the committed tables", check_included)]
    print(f"1..{len(tests)}")
    failed = 0
    for i, (title, fn) in enumerate(tests, 1):
        try:
            fn()
            print(f"ok {i} - {title}")
        except (AssertionError, OSError) as e:
            failed += 1
            print(f"not ok {i} - {title}")
            for line in str(e).splitlines():
                print(f"# {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
