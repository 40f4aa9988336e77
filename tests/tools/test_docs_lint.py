#!/usr/bin/python3
# tools/docs-lint against its fixtures, tests/tools/docs-lint/: for each rule
# of the linter (the `RN` lines of `tools/docs-lint --help`) at least one
# good-RN*.md, which must pass, and one bad-RN*.md, which must fail on
# that rule alone, naming the rule and the line.
#
# A fixture's first line says what is expected of it:
#   <!-- docs-lint fixture: passes every rule -->
#   <!-- docs-lint fixture: passes RN as NAME -->
#   <!-- docs-lint fixture: RN at line L -->
#   <!-- docs-lint fixture: RN at line L as NAME -->
# "as NAME" (integrators.md, threat-model.md) is for the rules of one
# document (R5 to R8, R12): the fixture is linted with `--as NAME --rules
# RN`, since a small document cannot hold the other tables of that
# document. Without it the fixture is linted with every rule. A bad
# fixture must make only RN fail, with a `# FIXTURE:L: ` message.
#
# The environment is docs-claims' (STOCKADE_SOURCE_ROOT, STOCKADE_BIN,
# STOCKADE_BUILD_ROOT): the linter reads the same build.
import concurrent.futures
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.environ.get(
    "STOCKADE_SOURCE_ROOT",
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))))
LINT = os.path.join(ROOT, "tools", "docs-lint")
FIXTURES = os.path.join(ROOT, "tests", "tools", "docs-lint")
NAME = re.compile(r"^(good|bad)-(R[0-9]+)(-[a-z0-9-]+)?\.md$")
HEADER = re.compile(r"^<!-- docs-lint fixture: (?:passes (every rule|R[0-9]+)"
                    r"|(R[0-9]+) at line ([0-9]+))(?: as ([a-z.-]+))? -->$")
TIMEOUT = 120


def lint(args):
    """(exit status, output) of tools/docs-lint --tap ARGS."""
    p = subprocess.run([sys.executable, LINT, "--tap"] + args,
                       capture_output=True, text=True, timeout=TIMEOUT)
    return p.returncode, p.stdout + p.stderr


def failures(out):
    """{title of a not-ok line: [its # messages]} of the TAP OUT."""
    fails, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^not ok [0-9]+ - (.*)$", line)
        if m:
            cur = fails.setdefault(m.group(1), [])
        elif re.match(r"^ok ", line):
            cur = None
        elif cur is not None and line.startswith("# "):
            cur.append(line[2:])
    return fails


def check(name):
    """None when the fixture NAME holds, else why not."""
    kind, rule = NAME.match(name).group(1, 2)
    path = os.path.join(FIXTURES, name)
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    m = HEADER.match(lines[0] if lines else "")
    if not m:
        return "line 1 is no `<!-- docs-lint fixture: ... -->` header"
    passes, bad_rule, at, as_name = m.groups()
    if (kind == "good") != (passes is not None):
        return f"a {kind} fixture whose header says {lines[0]}"
    if (passes not in (None, "every rule") and passes != rule) or \
            (bad_rule is not None and bad_rule != rule):
        return f"the header names another rule than {rule}"
    args = ["--as", as_name, "--rules", rule] if as_name else []
    if as_name and passes == "every rule":
        return "`passes every rule` with `as NAME`: say `passes RN as NAME`"
    status, out = lint(args + [path])
    fails = failures(out)
    if kind == "good":
        if status != 0 or fails:
            return f"exit {status}, expected to pass:\n{out}"
        return None
    line = int(at)
    if line > len(lines):
        return f"line {line} is past the end ({len(lines)} lines)"
    if status != 1:
        return f"exit {status}, 1 expected:\n{out}"
    if not fails:
        return f"no rule failed:\n{out}"
    others = [t for t in fails if f": {rule} " not in t]
    if others:
        return f"rules other than {rule} failed:\n{out}"
    want = f"{rel}:{line}: "
    if not any(msg.startswith(want) for msgs in fails.values() for msg in msgs):
        return f"{rule} failed, but with no message at `{want}`:\n{out}"
    return None


def main():
    names = sorted(os.listdir(FIXTURES))
    results = []        # (ok, title, why)
    odd = [n for n in names if not NAME.match(n)]
    results.append((not odd, "every file of tests/tools/docs-lint/ is a "
                    "good-RN*.md or bad-RN*.md", ", ".join(odd)))
    fixtures = [n for n in names if NAME.match(n)]

    status, out = lint(["--help"])
    rules = sorted(set(re.findall(r"(?m)^(R[0-9]+)\s", out)),
                   key=lambda r: int(r[1:]))
    missing = [f"{k}-{r}.md" for r in rules for k in ("good", "bad")
               if not any(NAME.match(n).group(1, 2) == (k, r)
                          for n in fixtures)]
    results.append((status == 0 and rules and not missing,
                    f"every rule of `docs-lint --help` ({len(rules)}) has a "
                    "good and a bad fixture",
                    f"exit {status}, rules {rules}, missing: "
                    + ", ".join(missing)))

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        for name, why in zip(fixtures, ex.map(check, fixtures)):
            results.append((why is None, name, why or ""))

    print(f"1..{len(results)}")
    failed = 0
    for i, (ok, title, why) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {title}")
        if not ok:
            failed += 1
            for line in why.splitlines():
                print(f"# {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
