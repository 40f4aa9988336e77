#!/usr/bin/python3
# The names the documents cite against the code, so that the documents
# cannot drift from it (docs/threat-model.md, docs/integrators.md,
# README.md).
#
# R1  Every backticked attack (`NN-name`: two digits, a dash, and a letter
#     somewhere after it, so `10-60` is not one; `_` is read too, so that
#     `26-fork_bomb` fails) is a file of tests/attacks/.
# R2  Every backticked check (`layer.what`, `what` of [a-z0-9_-]) is one of
#     `stockade check --list`. A token is read as a check when its prefix
#     is a check layer, or one miswritten: without its underscores
#     (`mountns`), or a namespace's without `_ns` (`uts`, `mount`,
#     `network`, `user`); not when its suffix is a file extension
#     (`results.tar`) or it is a sysctl of this host
#     (`user.max_user_namespaces`, under /proc/sys). Every element of
#     `stockade check ... --only A,B` (or `--only=A,B`), inline or in a
#     fenced block, is a layer of `stockade check --help` or a check.
# R3  Every repository path (`tests/...`, `docs/...`, ...) and relative
#     link exists.
# R4  Every `meson test` command names existing tests and suites
#     (meson-info/intro-tests.json).
# R9  Every ```ini block is a policy `stockade policy check` accepts.
# R10 Every `[section] key` is a key of `stockade policy default`. A span
#     `[section] key = value` ([limits], [jail], [files], [environment],
#     [filesystem]) is written to a file as that section and line and
#     must pass `stockade policy check` (--unsafe-evaluation for an
#     `unsafe_` key: it is a real key, refused only in production). A
#     span `key = value` alone is checked so in the section of `stockade
#     policy default` that has the key; written with blanks around `=`
#     (a policy line), a lower-case key that no section has, and that
#     `policy check` takes in none, fails. `key=value` without blanks and
#     an unknown key is a shell's or a kernel's (`size=`, `lsm=`); upper
#     case is an [environment] variable; a value in capitals, with `...`
#     or `<...>` is the prose's placeholder, and only the key is checked.
#     A `[policy] key = value` span has only its key checked: alone, a
#     `replace` would leave a job no program, which `policy check` refuses.
# R11 Every name of a column headed `planted defect...` is a defect patch
#     (verify/defects/GROUP/NAME.patch).
# R13 Every backticked `NAME_ns` is a layer of the jail (`unsafe_layers_off`'s
#     names) or of `stockade check` (`net_ns` is neither).
# R14 Every reference to a section names a heading (any level) of its
#     file, compared without backticks, blanks collapsed: in prose and
#     tables (not fenced blocks), `FILE.md, "TITLE"` (FILE relative to
#     the document, else to the root; README.md the root's) and
#     `[text](FILE.md), "TITLE"`; and a link `FILE.md#anchor` or
#     `#anchor` (this document) names the GitHub anchor of a heading
#     (lower case, punctuation but - and _ dropped, spaces to -).
# R5  integrators.md has one `doctor check` table, with a row for each
#     check of `stockade doctor --json` (exit 0, or 69 on a host that
#     refuses a layer) and nothing else.
# R6  integrators.md has one `status` table, one row for each status of
#     docs/result.schema.json and nothing else.
# R7  threat-model.md cites every attack of the corpus.
# R8  threat-model.md has one `layer` table (first header `layer`, a
#     `shown by` column) with one row per layer of the jail, each row's
#     `shown by` cell citing something specific that exists: a check, an
#     attack, a file (not a directory) under tests/, or a `meson test`
#     naming a test (a `--suite` alone is not one).
# R12 threat-model.md has one table with an `attacks` column (the attack
#     families), which cites every attack of the corpus exactly once.
# In the tables of R5, R6 and R8 each row's first cell is exactly one
# backticked name. The names come from the built stockade and the tree,
# never from a list here.
#
# Failures read `DOC:LINE: `TOKEN`: reason`. A rule that finds nothing
# where it expects something (a table missing) fails, and so does a
# source of truth that gives nothing (doctor printing no JSON: its exit
# status and stderr are in the message).
# STOCKADE_CLAIM_DOCS (colon-separated paths, relative ones to the source
# root) replaces the list of documents, for development; the rules of a
# document that is not in the list are then skipped.
import concurrent.futures
import fnmatch
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = os.path.abspath(os.environ.get(
    "STOCKADE_SOURCE_ROOT",
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.path.abspath(os.environ.get("STOCKADE_BIN",
                                     os.path.join(ROOT, "build", "stockade")))
BUILD = os.path.abspath(os.environ.get("STOCKADE_BUILD_ROOT",
                                       os.path.dirname(BIN)))
DEFAULT_DOCS = ["docs/threat-model.md", "docs/integrators.md", "README.md"]
TIMEOUT = 20

# An attack is NN-name: a letter after the first dash (`10-60` is a
# range, not an attack); underscores are matched so that `26-fork_bomb`
# is caught as a misspelt attack, not passed over.
ATTACK_FILE = re.compile(r"^([0-9][0-9]-[a-z0-9][a-z0-9_-]*)(\.py|\.sh|\.c)$")
ATTACK_TOKEN = re.compile(r"^[0-9][0-9]-[a-z0-9][a-z0-9_-]*$")
CHECK_TOKEN = re.compile(r"^([a-z][a-z0-9_]*)\.([a-z0-9_-]+)$")
# What a dotted token is when it is a file name, not a check name.
FILE_SUFFIXES = {"c", "h", "md", "py", "json", "ini", "sh", "txt", "yaml",
                 "yml", "def", "conf", "toml", "cfg", "supp", "js", "ts",
                 "html", "1", "5", "7", "tar", "gz", "log", "csv", "tsv",
                 "xz", "zst"}
# A namespace named the way the layers are (`net_ns`).
NS_TOKEN = re.compile(r"^[a-z][a-z0-9]*_ns$")
STOCKADE_CHECK = re.compile(r"(?<![\w-])stockade\s+check(?![\w-])")
PATH_PREFIXES = ("tests/", "docs/", "broker/", "launcher/", "shared/", "verify/",
                 "policy/", "tools/", "bench/", "examples/", "deploy/",
                 "fuzz/", "debian/", ".ci/")
PATH_TOKEN = re.compile(r"^(?P<path>[^\s:]+?)(?::(?P<line>[0-9]+)(?:-[0-9]+)?)?$")
SECTION_KEY = re.compile(r"^\[([a-z_][a-z0-9_]*)\]\s+([A-Za-z_][A-Za-z0-9_]*)(?:\s*=.*)?$")
SECTION_KEY_VALUE = re.compile(r"^\[([a-z_][a-z0-9_]*)\]\s+([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$")
# `key = value` alone; the blanks around = are groups 2 and 3.
KEY_VALUE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\s*)=(\s*)(.*)$")
POLICY_SECTIONS = {"limits", "jail", "files", "environment", "filesystem"}
SECTION_ONLY = re.compile(r"^\[([a-z_][a-z0-9_]*)\]$")
CHECKED_SECTIONS = {"limits", "jail", "files", "policy"}
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
MESON_TEST = re.compile(r"(?<![\w-])meson\s+test(?![\w-])")
# A word in capitals after `meson test` (NAME, SUITE) is a placeholder of
# the prose, not a test: meson's test names here are lower case.
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*$")

# meson test's options (meson test --help, meson 1.0): those that take an
# argument, and those that take none.
MESON_ARG_OPTS = {"-C", "--suite", "--no-suite", "--setup", "--num-processes",
                  "--maxfail", "--repeat", "--gdb-path", "--wrapper",
                  "--logbase", "-t", "--timeout-multiplier", "--test-args"}
MESON_FLAG_OPTS = {"--print-errorlogs", "--list", "-v", "--verbose", "-q",
                   "--quiet", "--no-rebuild", "--gdb", "--benchmark",
                   "--no-stdsplit", "-h", "--help"}


class Failed(Exception):
    """A rule's failure: the messages, one a line."""

    def __init__(self, messages):
        super().__init__("\n".join(messages))
        self.messages = list(messages)


class Skip(Exception):
    pass


# ---------------------------------------------------------------- Markdown

class Span:
    """Inline code: its text (whitespace collapsed), the line it starts on."""

    def __init__(self, text, line):
        self.text = text
        self.line = line


class Table:
    def __init__(self, line, header, rows):
        self.line = line        # the header's line
        self.header = header    # [cell text]
        self.rows = rows        # [(line, [cell text])]

    def column(self, name):
        names = [header_name(c) for c in self.header]
        return names.index(name) if name in names else None


class Fence:
    def __init__(self, line, info, body):
        self.line = line        # the opening fence's line
        self.info = info        # the info string's first word, lower case
        self.body = body        # [(line, text)]


class Doc:
    def __init__(self, path):
        self.path = path
        self.name = display(path)
        self.base = os.path.basename(path)
        self.exists = os.path.isfile(path)
        self.lines = []
        self.spans = []
        self.links = []         # [(line, target)]
        self.tables = []
        self.fences = []
        self.problems = []      # structural: an unclosed fence
        self.fence_lines = set()  # the lines of fenced blocks, fences included
        self.blocks = []        # [[(line, text)]]: paragraphs, rows, headings
        self.headings = []      # [(line, text)]: ATX headings, any level
        if self.exists:
            with open(path, encoding="utf-8") as fh:
                self.lines = fh.read().splitlines()
            self._parse()
        for f in self.fences:
            self.fence_lines.update(range(f.line, f.line + len(f.body) + 2))
        for line, text in enumerate(self.lines, 1):
            m = HEADING.match(text)
            if m and line not in self.fence_lines:
                self.headings.append((line, (m.group(2) or "").strip()))

    def where(self, line):
        return f"{self.name}:{line}"

    def _parse(self):
        blocks = []             # [[(line, text)]]: paragraphs, table rows
        para = []
        i = 0
        n = len(self.lines)
        while i < n:
            text = self.lines[i]
            m = re.match(r"^(\s*)(`{3,}|~{3,})(.*)$", text)
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                if para:
                    blocks.append(para)
                    para = []
                indent = len(m.group(1))
                fence = m.group(2)
                info = (m.group(3).split() or [""])[0].lower()
                start = i + 1
                body = []
                i += 1
                close = re.compile(r"^\s*" + re.escape(fence[0]) + "{"
                                   + str(len(fence)) + r",}\s*$")
                while i < n and not close.match(self.lines[i]):
                    # The fence's indentation is taken off its lines
                    # (a block in a list item), as CommonMark does.
                    line = self.lines[i]
                    cut = len(line) - len(line.lstrip(" "))
                    body.append((i + 1, line[min(cut, indent):]))
                    i += 1
                if i >= n:
                    self.problems.append(
                        f"{self.where(start)}: {fence}{m.group(3)}: the "
                        "fenced block opened here is never closed")
                self.fences.append(Fence(start, info, body))
                i += 1
                continue
            if not text.strip():
                if para:
                    blocks.append(para)
                    para = []
            elif text.lstrip().startswith("|"):
                if para:
                    blocks.append(para)
                    para = []
                rows = []
                while i < n and self.lines[i].lstrip().startswith("|"):
                    rows.append((i + 1, self.lines[i]))
                    i += 1
                for r in rows:
                    blocks.append([r])
                self._table(rows)
                continue
            elif text.lstrip().startswith("#"):
                if para:
                    blocks.append(para)
                    para = []
                blocks.append([(i + 1, text)])
            else:
                para.append((i + 1, text))
            i += 1
        if para:
            blocks.append(para)
        self.blocks = blocks
        for block in blocks:
            self._inline(block)

    def _inline(self, block):
        """Code spans (which may run over lines of one paragraph) and link
        targets outside them."""
        text = "\n".join(t for _, t in block)
        starts = []
        off = 0
        for line, t in block:
            starts.append((off, line))
            off += len(t) + 1

        def line_of(pos):
            ln = block[0][0]
            for o, l in starts:
                if o <= pos:
                    ln = l
            return ln

        masked = list(text)
        for start, end, content in code_spans(text):
            self.spans.append(Span(" ".join(content.split()), line_of(start)))
            for k in range(start, end):
                if masked[k] != "\n":
                    masked[k] = " "
        masked = "".join(masked)
        for m in re.finditer(r"\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\)",
                             masked):
            target = m.group(1)
            if target.startswith("<"):
                target = target[1:-1]
            self.links.append((line_of(m.start()), target))
        for m in re.finditer(r"(?m)^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", masked):
            target = m.group(1).strip("<>")
            self.links.append((line_of(m.start()), target))

    def _table(self, rows):
        if len(rows) < 2:
            return
        rule = split_row(rows[1][1])
        if not rule or not all(re.match(r"^:?-+:?$", c) for c in rule):
            return
        self.tables.append(Table(rows[0][0], split_row(rows[0][1]),
                                 [(ln, split_row(t)) for ln, t in rows[2:]]))


def code_spans(text):
    """[(start, end, content)] of the code spans of TEXT, CommonMark's way:
    a run of N backticks up to the next run of exactly N; a backslash
    outside a span escapes the next character."""
    out = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c != "`":
            i += 1
            continue
        j = i
        while j < len(text) and text[j] == "`":
            j += 1
        run = j - i
        m = re.compile(r"(?<!`)`{%d}(?!`)" % run).search(text, j)
        if not m:
            i = j
            continue
        out.append((i, m.end(), text[j:m.start()]))
        i = m.end()
    return out


def split_row(line):
    """The cells of a table row: split on | outside code spans, not \\|."""
    s = line.strip()
    inside = [False] * len(s)
    for start, end, _ in code_spans(s):
        for k in range(start, end):
            inside[k] = True
    cells = []
    cur = ""
    for k, ch in enumerate(s):
        if ch == "|" and not inside[k] and (k == 0 or s[k - 1] != "\\"):
            cells.append(cur)
            cur = ""
        else:
            cur += ch
    cells.append(cur)
    if cells and not cells[0].strip():
        cells = cells[1:]
    if cells and not cells[-1].strip():
        cells = cells[:-1]
    return [c.strip() for c in cells]


def header_name(cell):
    return " ".join(cell.strip().strip("*_`").lower().split())


def cell_spans(cell):
    return [" ".join(c.split()) for _, _, c in code_spans(cell)]


def display(path):
    p = os.path.abspath(path)
    if p.startswith(ROOT + os.sep):
        return os.path.relpath(p, ROOT)
    return p


# ---------------------------------------------------------- sources of truth

def run(args, ok_codes=(0,)):
    p = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)
    if p.returncode not in ok_codes:
        raise Failed([f"{' '.join(args)}: exit {p.returncode}: "
                      f"{(p.stderr or p.stdout).strip()}"])
    return p


def attack_token(tok):
    """Whether TOK is written as an attack's name (NN-name)."""
    return bool(ATTACK_TOKEN.match(tok)) and \
        re.search(r"[a-z]", tok.split("-", 1)[1]) is not None


def attack_file(tok):
    """The attack TOK names as a file (NN-name.py), or None."""
    m = ATTACK_FILE.match(tok)
    return m.group(1) if m and attack_token(m.group(1)) else None


def src_attacks():
    d = os.path.join(ROOT, "tests", "attacks")
    files = sorted(f for f in os.listdir(d) if attack_file(f))
    names = sorted({attack_file(f) for f in files})
    if not names:
        raise Failed([f"{d}: no attack (NN-name.py, .sh or .c)"])
    return {"names": set(names), "files": set(files)}


def src_checks():
    out = run([BIN, "check", "--list"]).stdout
    checks = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2:
            checks[f[1]] = f[0]
    helptext = run([BIN, "check", "--help"]).stdout
    m = re.search(r"^Layers:(.*)$", helptext, re.M)
    layers = set(checks.values()) | set(m.group(1).split() if m else [])
    if not checks or not m:
        raise Failed(["`stockade check --list` printed no check, or "
                      "`check --help` no Layers: line"])
    return {"checks": checks, "layers": layers}


def src_doctor():
    # Exit 69 is a host that refuses a layer: the JSON is on stdout all
    # the same, and its check names are what the table must have.
    args = [BIN, "doctor", "--json"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)
    why = f"exit {p.returncode}, stderr: {p.stderr.strip()[:400]!r}"
    if not p.stdout.strip():
        raise Failed([f"`stockade doctor --json` printed no JSON ({why})"])
    try:
        names = [c["name"] for c in json.loads(p.stdout)["checks"]]
    except (ValueError, KeyError, TypeError) as e:
        raise Failed([f"`stockade doctor --json` printed no JSON with checks "
                      f"({e}; {why}): stdout {p.stdout[:200]!r}"])
    if p.returncode not in (0, 69):
        raise Failed([f"`stockade doctor --json`: {why} (0 or 69 expected)"])
    if not names:
        raise Failed(["`stockade doctor --json` names no check"])
    return names


def src_meson():
    path = os.path.join(BUILD, "meson-info", "intro-tests.json")
    with open(path, encoding="utf-8") as fh:
        tests = json.load(fh)
    names = {t["name"] for t in tests}
    suites = set()
    projects = set()
    for t in tests:
        for s in t["suite"]:
            suites.add(s)
            if ":" in s:
                proj, plain = s.split(":", 1)
                suites.add(plain)
                projects.add(proj)
    suites |= projects
    if not names:
        raise Failed([f"{path}: no test"])
    return {"tests": names, "suites": suites, "projects": projects}


def src_job_layers():
    with tempfile.TemporaryDirectory(prefix="docs-claims-") as d:
        f = os.path.join(d, "layers.ini")
        with open(f, "w") as fh:
            fh.write("[jail]\nunsafe_layers_off = nosuchlayer\n")
        p = subprocess.run([BIN, "policy", "check", f], capture_output=True,
                           text=True, timeout=TIMEOUT)
    m = re.search(r"\(the layers: ([^)]*)\)", p.stderr + p.stdout)
    if p.returncode == 0 or not m:
        raise Failed(["`stockade policy check` of unsafe_layers_off = "
                      f"nosuchlayer (exit {p.returncode}) lists no layers: "
                      f"{(p.stderr + p.stdout).strip()}"])
    layers = [x.strip() for x in re.split(r",|\band\b", m.group(1)) if x.strip()]
    return layers


def src_statuses():
    with open(os.path.join(ROOT, "docs", "result.schema.json"),
              encoding="utf-8") as fh:
        schema = json.load(fh)
    statuses = schema["properties"]["status"]["enum"]
    if not statuses:
        raise Failed(["docs/result.schema.json: no status"])
    return statuses


def src_policy():
    out = run([BIN, "policy", "default"]).stdout
    sections = {}
    cur = None
    for line in out.splitlines():
        s = line.strip()
        if not s or s[0] in ";#":
            continue
        m = re.match(r"^\[([^\]]+)\]$", s)
        if m:
            cur = sections.setdefault(m.group(1), set())
            continue
        if cur is not None and "=" in s:
            cur.add(s.split("=", 1)[0].strip())
    if not all(sections.get(s) for s in CHECKED_SECTIONS):
        raise Failed(["`stockade policy default`: no keys in "
                      + ", ".join(sorted(CHECKED_SECTIONS))])
    return sections


def src_defects():
    names = set()
    top = os.path.join(ROOT, "verify", "defects")
    for dirpath, _, files in os.walk(top):
        names.update(f[:-len(".patch")] for f in files if f.endswith(".patch"))
    if not names:
        raise Failed(["no planted defect in verify/defects/GROUP/NAME.patch"])
    return names


SOURCES = [
    ("attacks", "the attacks of tests/attacks/", src_attacks,
     lambda v: f"{len(v['names'])}"),
    ("checks", "the checks and layers of `stockade check --list`", src_checks,
     lambda v: f"{len(v['checks'])} checks, {len(v['layers'])} layers"),
    ("doctor", "the checks of `stockade doctor --json`", src_doctor,
     lambda v: f"{len(v)}"),
    ("meson", "the tests and suites of meson-info/intro-tests.json", src_meson,
     lambda v: f"{len(v['tests'])} tests"),
    ("job_layers", "the jail's layers (`unsafe_layers_off`'s names)",
     src_job_layers, lambda v: f"{len(v)}"),
    ("statuses", "the statuses of docs/result.schema.json", src_statuses,
     lambda v: f"{len(v)}"),
    ("policy", "the sections and keys of `stockade policy default`", src_policy,
     lambda v: f"{len(v)} sections"),
    ("defects", "the planted defects of verify/defects/",
     src_defects, lambda v: f"{len(v)}"),
]


class Truth:
    def __init__(self):
        self.values = {}
        self.errors = {}

    def __getitem__(self, key):
        if key in self.errors:
            raise Failed([f"{key}: not known ({self.errors[key]})"])
        return self.values[key]


# -------------------------------------------------------------- the checks

def is_attack(truth, tok):
    return tok in truth["attacks"]["names"]


def is_check(truth, tok):
    return tok in truth["checks"]["checks"]


def loose(name):
    return name.replace("_", "")


def layer_spellings(truth):
    """The ways a check layer is miswritten and still read as one: without
    its underscores (`mountns`, `processcleanup`), and a namespace's
    without its `_ns` (`uts`, `mount`, `network`, `user`)."""
    out = set()
    for layer in truth["checks"]["layers"]:
        out.add(loose(layer))
        if layer.endswith("_ns"):
            out.add(loose(layer[:-3]))
    return out


def is_sysctl(tok):
    """Whether TOK (`user.max_user_namespaces`) is a sysctl of this host."""
    return os.path.exists(os.path.join("/proc/sys", *tok.split(".")))


def check_like(truth, tok):
    """Whether TOK is written as a check name (layer.what, the layer
    perhaps misspelt) and is no file name or sysctl."""
    m = CHECK_TOKEN.match(tok)
    if not m:
        return False
    if is_check(truth, tok):
        return True
    if loose(m.group(1)) not in layer_spellings(truth):
        return False
    return m.group(2) not in FILE_SUFFIXES and not is_sysctl(tok)


def path_problem(base, tok):
    """None when the repository path TOK (its first word, optionally
    :LINE, or a glob) exists, else what is wrong."""
    word = tok.split()[0]
    m = PATH_TOKEN.match(word)
    if not m:
        return "not a path"
    path = m.group("path")
    full = os.path.join(base, path)
    if any(c in path for c in "*?["):
        if not glob.glob(full, recursive=True):
            return "no file of the source tree matches"
        return None
    if not os.path.exists(full):
        return "no such file or directory in the source tree"
    if m.group("line"):
        want = int(m.group("line"))
        if not os.path.isfile(full):
            return f"{path} is not a file, but is cited with a line number"
        with open(full, encoding="utf-8", errors="replace") as fh:
            have = sum(1 for _ in fh)
        if want < 1 or want > have:
            return f"{path} has {have} lines, no line {want}"
    return None


def is_path_token(tok):
    return tok.startswith(PATH_PREFIXES)


def meson_commands(doc):
    """[(line, text after `meson test`)] from inline code and fenced blocks."""
    return commands(doc, MESON_TEST)


def commands(doc, pattern):
    """[(line, text after PATTERN)] from inline code and fenced blocks (a
    block's lines joined where they end in a backslash)."""
    out = []
    for s in doc.spans:
        for m in pattern.finditer(s.text):
            out.append((s.line, s.text[m.end():]))
    for f in doc.fences:
        logical = []
        cur, start = "", None
        for line, text in f.body:
            if start is None:
                start = line
            if text.rstrip().endswith("\\"):
                cur += text.rstrip()[:-1] + " "
                continue
            logical.append((start, cur + text))
            cur, start = "", None
        if start is not None:
            logical.append((start, cur))
        for line, text in logical:
            for m in pattern.finditer(text):
                out.append((line, text[m.end():]))
    return out


def command_words(rest):
    """The words of one command: REST up to a shell separator, a comment
    or the end of the span."""
    rest = re.split(r";|&&|\|\||\||(?:^|\s)#|\)|`|>|<", rest, maxsplit=1)[0]
    try:
        return shlex.split(rest)
    except ValueError:
        return rest.split()


def parse_meson(truth, rest):
    """(errors, tests and suites named) of the words after `meson test`."""
    errors, tests, suites = parse_meson_named(truth, rest)
    return errors, tests + suites


def parse_meson_named(truth, rest):
    """(errors, tests named, suites named) of the words after `meson test`."""
    words = command_words(rest)
    meson = truth["meson"]
    errors = []
    named = []          # suites
    tests = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-"):
            opt, eq, val = w.partition("=")
            if opt in ("--suite", "--no-suite") and (eq or i + 1 < len(words)):
                if not eq:
                    val = words[i + 1]
                    i += 1
                if PLACEHOLDER.match(val):
                    pass
                elif val not in meson["suites"]:
                    errors.append(f"`{opt} {val}`: no such suite")
                else:
                    named.append(val)
            elif eq and opt.startswith("--"):
                pass
            elif opt.startswith("-C") and len(opt) > 2:
                pass
            elif opt in MESON_ARG_OPTS:
                if i + 1 >= len(words):
                    errors.append(f"`{opt}` without its argument")
                i += 1
            elif opt not in MESON_FLAG_OPTS:
                errors.append(f"`{w}`: an option this test does not know")
        elif PLACEHOLDER.match(w):
            pass
        elif not meson_test_exists(meson, w):
            errors.append(f"`{w}`: no such test")
        else:
            tests.append(w)
        i += 1
    return errors, tests, named


def meson_test_exists(meson, name):
    if ":" in name:
        proj, name = name.split(":", 1)
        if proj not in meson["projects"]:
            return False
        if not name:
            return True
    if any(c in name for c in "*?["):
        return any(fnmatch.fnmatchcase(t, name) for t in meson["tests"])
    return name in meson["tests"]


def scan_spans(doc, judge):
    """Runs JUDGE(text) on every inline code span of DOC: None when the
    span is not a citation of this rule's kind, "" when it is and holds,
    else the reason it does not. Raises Failed with one DOC:LINE line per
    bad citation; returns the count."""
    bad, n = [], 0
    for s in doc.spans:
        why = judge(s.text)
        if why is None:
            continue
        n += 1
        if why:
            bad.append(f"{doc.where(s.line)}: `{s.text}`: {why}")
    if bad:
        raise Failed(bad)
    return f"{n} cited"


def rule_attacks(truth, doc):
    attacks = truth["attacks"]

    def judge(tok):
        if attack_token(tok):
            return "" if tok in attacks["names"] else "no such attack in tests/attacks/"
        if attack_file(tok):
            return "" if tok in attacks["files"] else "no such file in tests/attacks/"
        return None
    return scan_spans(doc, judge)


def rule_checks(truth, doc):
    def judge(tok):
        if not check_like(truth, tok):
            return None
        return "" if is_check(truth, tok) else "no such check in `stockade check --list`"
    return scan_spans(doc, judge)


def rule_paths(truth, doc):
    def judge(tok):
        if not is_path_token(tok):
            return None
        return path_problem(ROOT, tok) or ""
    return scan_spans(doc, judge)


def rule_links(truth, doc):
    bad, n = [], 0
    base = os.path.dirname(doc.path)
    for line, target in doc.links:
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue
        n += 1
        path = urllib.parse.unquote(target.split("#", 1)[0].split("?", 1)[0])
        if not path:
            bad.append(f"{doc.where(line)}: `({target})`: empty link target")
        elif not os.path.exists(os.path.join(base, path)):
            bad.append(f"{doc.where(line)}: `({target})`: "
                       f"{display(os.path.join(base, path))} does not exist")
    if bad:
        raise Failed(bad)
    return f"{n} relative links"


def rule_meson(truth, doc):
    bad = []
    cmds = meson_commands(doc)
    for line, rest in cmds:
        errors, _ = parse_meson(truth, rest)
        for e in errors:
            bad.append(f"{doc.where(line)}: `meson test{rest.rstrip()}`: {e}")
    if bad:
        raise Failed(bad)
    return f"{len(cmds)} commands"


def rule_ini(truth, doc):
    blocks = [f for f in doc.fences if f.info == "ini"]
    if not blocks:
        return "no ```ini block"
    bad = []
    with tempfile.TemporaryDirectory(prefix="docs-claims-") as d:
        def one(f):
            path = os.path.join(d, f"block-{f.line}.ini")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("".join(t + "\n" for _, t in f.body))
            p = subprocess.run([BIN, "policy", "check", path],
                               capture_output=True, text=True, timeout=TIMEOUT)
            if p.returncode == 0:
                return None
            msg = (p.stderr or p.stdout).strip()
            msg = re.sub(re.escape(path) + r":(\d+)",
                         lambda m: doc.where(f.line + int(m.group(1))), msg)
            msg = msg.replace(path, doc.where(f.line))
            return (f"{doc.where(f.line)}: ```ini block: `stockade policy "
                    f"check` exit {p.returncode}: {msg}")
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            bad = [r for r in ex.map(one, blocks) if r]
    if bad:
        raise Failed(bad)
    return f"{len(blocks)} blocks"


def policy_check(sec, key, value, d):
    """None when `stockade policy check` takes `[SEC] KEY = VALUE`, else
    its message (one line). An `unsafe_` key is checked as an
    evaluation's policy (--unsafe-evaluation): it is a real key, which a
    production policy must not set."""
    fd, path = tempfile.mkstemp(prefix=f"{sec}-{key}-", suffix=".ini", dir=d)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"[{sec}]\n{key} = {value}\n")
    args = [BIN, "policy", "check"]
    if key.startswith("unsafe_"):
        args.append("--unsafe-evaluation")
    p = subprocess.run(args + [path], capture_output=True, text=True,
                       timeout=TIMEOUT)
    if p.returncode == 0:
        return None
    msg = (p.stderr or p.stdout).strip()
    msg = re.sub(re.escape(path) + r"(:[0-9]+)?:?\s*", "", msg)
    msg = re.sub(r"^stockade:\s*", "", msg, flags=re.M)
    return f"exit {p.returncode}: " + "; ".join(
        x.strip() for x in msg.splitlines() if x.strip())


def placeholder_value(value):
    """A value of the prose (PATH, N, LAYERS, ..., <name>), not one to check."""
    return bool(PLACEHOLDER.match(value)) or "..." in value or \
        re.search(r"<[^>]*>", value) is not None


def rule_policy_keys(truth, doc):
    sections = truth["policy"]
    bad, n = [], 0
    todo = []           # (line, tok, [sections to try], key, value)

    def key(line, sec, k, tok):
        if sec not in sections:
            bad.append(f"{doc.where(line)}: `{tok}`: no section [{sec}] in "
                       "`stockade policy default`")
        elif sec in CHECKED_SECTIONS and k is not None and k not in sections[sec]:
            bad.append(f"{doc.where(line)}: `{tok}`: no key {k} in [{sec}] "
                       "of `stockade policy default`")

    for s in doc.spans:
        m = SECTION_KEY_VALUE.match(s.text)
        if m:
            n += 1
            sec, k, value = m.group(1), m.group(2), m.group(3).strip()
            if sec not in POLICY_SECTIONS or placeholder_value(value):
                key(s.line, sec, k, s.text)
            else:
                todo.append((s.line, s.text, [sec], k, value))
            continue
        m = SECTION_KEY.match(s.text)
        if m:
            n += 1
            key(s.line, m.group(1), m.group(2), s.text)
            continue
        m = SECTION_ONLY.match(s.text)
        if m:
            n += 1
            key(s.line, m.group(1), None, s.text)
            continue
        m = KEY_VALUE.match(s.text)
        if not m:
            continue
        k, value = m.group(1), m.group(4).strip()
        spaced = bool(m.group(2)) and (bool(m.group(3)) or not value)
        homes = [sec for sec in sorted(CHECKED_SECTIONS) if k in sections[sec]]
        if not homes:
            homes = [sec for sec in sorted(POLICY_SECTIONS - {"environment"})
                     if k in sections.get(sec, ())]
        if homes:
            n += 1
            if not placeholder_value(value):
                todo.append((s.line, s.text, homes, k, value))
        elif not re.match(r"^[a-z_][a-z0-9_]*$", k):
            pass        # an [environment]-style variable (any name is
            # one), or a unit's `Delegate = yes`: policy keys are lower case
        elif spaced:
            # Written as a policy line (`key = value`), with a key that
            # `stockade policy default` has nowhere: a key of no section,
            # unless `stockade policy check` takes it in one.
            n += 1
            todo.append((s.line, s.text, None, k, value))
        # else `key=value` written as a shell's or kernel's (`size=`,
        # `buildtype=release`): not a policy key.
    # `[section]` `key`: two spans with only blanks between them.
    for line, text in enumerate(doc.lines, 1):
        if line in doc.fence_lines:
            continue
        for m in re.finditer(r"`\[([a-z_][a-z0-9_]*)\]`\s+`([a-z_][a-z0-9_]*)`",
                             text):
            n += 1
            key(line, m.group(1), m.group(2), f"[{m.group(1)}]` `{m.group(2)}")

    with tempfile.TemporaryDirectory(prefix="docs-claims-") as d:
        def one(item):
            line, tok, homes, k, value = item
            if homes is None:
                tried = sorted(POLICY_SECTIONS - {"environment"})
                if any(policy_check(sec, k, value, d) is None for sec in tried):
                    return None
                return (f"{doc.where(line)}: `{tok}`: no key {k} in any "
                        "section of `stockade policy default`, and `stockade "
                        "policy check` takes it in none of "
                        + ", ".join(f"[{x}]" for x in tried))
            why = [policy_check(sec, k, value, d) for sec in homes]
            if any(w is None for w in why):
                return None
            return (f"{doc.where(line)}: `{tok}`: `stockade policy check` of "
                    f"[{homes[0]}] {k} = {value}: {why[0]}")
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            bad += [r for r in ex.map(one, todo) if r]
    if bad:
        raise Failed(bad)
    return f"{n} cited, {len(todo)} values checked"


def rule_check_only(truth, doc):
    checks = truth["checks"]
    bad, n = [], 0
    for line, rest in commands(doc, STOCKADE_CHECK):
        words = command_words(rest)
        i = 0
        while i < len(words):
            w = words[i]
            i += 1
            if w == "--only" and i < len(words):
                arg = words[i]
                i += 1
            elif w.startswith("--only="):
                arg = w[len("--only="):]
            else:
                continue
            if not re.search(r"[a-z]", arg):
                continue        # the prose's LAYER[,LAYER...]
            for el in arg.split(","):
                n += 1
                if el not in checks["layers"] and el not in checks["checks"]:
                    bad.append(f"{doc.where(line)}: `{el or arg}`: in "
                               f"`stockade check --only {arg}`, "
                               + ("an empty element" if not el else
                                  "neither a layer of `stockade check "
                                  "--help` nor a check of `stockade check "
                                  "--list`"))
    if bad:
        raise Failed(bad)
    return f"{n} cited"


def rule_ns_names(truth, doc):
    known = set(truth["job_layers"]) | set(truth["checks"]["layers"])

    def judge(tok):
        if not NS_TOKEN.match(tok):
            return None
        return "" if tok in known else (
            "neither a layer of the jail (`unsafe_layers_off`'s names) nor "
            "a check layer of `stockade check`")
    return scan_spans(doc, judge)


# ------------------------------------------------- references to sections

XREF_LINK = re.compile(r"(?P<link>\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\))"
                       r"(?:\s*,\s*\"([^\"]+)\")?")
XREF_BARE = re.compile(r"(?<![\w./-])(`?)([A-Za-z0-9_][\w./-]*\.md)\1,\s+\"([^\"]+)\"")
_DOCS = {}


def other_doc(path):
    path = os.path.abspath(path)
    if path not in _DOCS:
        _DOCS[path] = Doc(path)
    return _DOCS[path]


def plain_title(text):
    """A title or heading as compared: without backticks, blanks collapsed."""
    return " ".join(text.replace("`", "").split())


def slugs(doc):
    """The anchors GitHub gives DOC's headings: lower case, punctuation
    but - and _ dropped, spaces to -, -1, -2, ... after a repeat."""
    out, seen = set(), {}
    for _, text in doc.headings:
        t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
        t = re.sub(r"<[^>]+>", "", t).replace("`", "").strip().lower()
        s = re.sub(r"[^\w\- ]", "", t).replace(" ", "-")
        if s in seen:
            seen[s] += 1
            out.add(f"{s}-{seen[s]}")
        else:
            seen[s] = 0
            out.add(s)
    return out


def doc_root(doc):
    """Where README.md is for DOC: the source root, or above its docs/."""
    p = os.path.abspath(doc.path)
    if p.startswith(ROOT + os.sep):
        return ROOT
    parts = os.path.dirname(p).split(os.sep)
    if "docs" in parts:
        return os.sep.join(parts[:parts.index("docs")]) or os.sep
    return os.path.dirname(p)


def rule_xrefs(truth, doc):
    """`FILE.md, "TITLE"`, `[text](FILE.md), "TITLE"` and links with an
    #anchor name a heading of FILE (of DOC for a bare #anchor)."""
    bad, n = [], 0
    here = os.path.dirname(os.path.abspath(doc.path))
    root = doc_root(doc)

    def title_problem(path, title, bare=False):
        if not os.path.isfile(path):
            if bare:
                return (f"no such file beside the document or at the root "
                        f"({display(path)})")
            return f"{display(path)} does not exist"
        want = plain_title(title)
        if any(plain_title(h) == want for _, h in other_doc(path).headings):
            return None
        return f"no heading \"{want}\" in {display(path)}"

    for block in doc.blocks:
        text = "\n".join(t for _, t in block)
        starts, off = [], 0
        for line, t in block:
            starts.append((off, line))
            off += len(t) + 1

        def line_of(pos):
            return max((o, l) for o, l in starts if o <= pos)[1]
        spans = code_spans(text)

        def in_code(pos):
            return any(a <= pos < b for a, b, _ in spans)
        links = []
        for m in XREF_LINK.finditer(text):
            if in_code(m.start()):
                continue
            links.append((m.start(), m.end()))
            target = m.group(2).strip("<>")
            title = m.group(3)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue
            file, _, anchor = target.partition("#")
            file = urllib.parse.unquote(file.split("?", 1)[0])
            if file and not file.endswith(".md"):
                continue
            if not anchor and title is None:
                continue
            path = os.path.join(here, file) if file else doc.path
            line = line_of(m.start())
            link = " ".join(m.group("link").split())
            if anchor:
                n += 1
                anchor = urllib.parse.unquote(anchor)
                if not os.path.isfile(path):
                    bad.append(f"{doc.where(line)}: `{link}`: "
                               f"{display(path)} does not exist")
                elif anchor not in slugs(other_doc(path)):
                    bad.append(f"{doc.where(line)}: `{link}`: no heading of "
                               f"{display(path)} has the anchor #{anchor}")
            if title is not None:
                n += 1
                why = title_problem(path, title)
                if why:
                    bad.append(f"{doc.where(line)}: `{link}, \"{plain_title(title)}\"`: "
                               f"{why}")
        for m in XREF_BARE.finditer(text):
            if any(a <= m.start() < b for a, b in links):
                continue
            if in_code(m.start(2)) and not m.group(1):
                continue
            n += 1
            file, title = m.group(2), m.group(3)
            if file == "README.md":
                path = os.path.join(root, file)
            elif os.path.exists(os.path.join(here, file)):
                path = os.path.join(here, file)
            else:
                path = os.path.join(root, file)
            why = title_problem(path, title, bare=True)
            if why:
                bad.append(f"{doc.where(line_of(m.start(2)))}: `{file}, "
                           f"\"{plain_title(title)}\"`: {why}")
    if bad:
        raise Failed(bad)
    return f"{n} references"


def rule_defects(truth, doc):
    tables = [t for t in doc.tables
              if column_starting(t, "planted defect") is not None]
    if not tables:
        return "no `planted defect` column"
    defects = truth["defects"]
    bad, n = [], 0
    for t in tables:
        col = column_starting(t, "planted defect")
        for line, cells in t.rows:
            if col >= len(cells):
                continue
            for tok in cell_spans(cells[col]):
                n += 1
                if tok not in defects:
                    bad.append(f"{doc.where(line)}: `{tok}`: no such planted "
                               "defect (no verify/defects/*/NAME.patch)")
    if bad:
        raise Failed(bad)
    return f"{n} cited in {len(tables)} tables"


def column_starting(t, prefix):
    """The first column of T whose header starts with PREFIX, or None."""
    for i, c in enumerate(t.header):
        if header_name(c).startswith(prefix):
            return i
    return None


def first_column(doc, t, what):
    """[(line, name)] of the backticked names of T's first column; a row
    whose first cell has no backticked name, or more than one, is a
    failure."""
    out, bad = [], []
    for line, cells in t.rows:
        names = cell_spans(cells[0]) if cells else []
        if len(names) != 1:
            bad.append(f"{doc.where(line)}: `{cells[0] if cells else ''}`: "
                       f"{len(names)} backticked names in the first cell, "
                       f"where one {what} is expected")
        out += [(line, n) for n in names[:1]]
    return out, bad


def tables_headed(doc, first, column=None):
    return [t for t in doc.tables
            if t.header and header_name(t.header[0]) == first
            and (column is None or t.column(column) is not None)]


def the_table(doc, first, column=None):
    """The one table whose first header cell is FIRST (with a COLUMN
    column); none, or a second one, is a failure."""
    tables = tables_headed(doc, first, column)
    what = f"first header cell is `{first}`" + \
        (f" with a `{column}` column" if column else "")
    if not tables:
        raise Failed([f"{doc.where(1)}: `{first}`: no table whose {what}"])
    if len(tables) > 1:
        raise Failed([f"{doc.where(t.line)}: `{first}`: another table whose "
                      f"{what} (the first at line {tables[0].line}): there "
                      "must be exactly one" for t in tables[1:]])
    return tables[0]


def exact_rows(doc, table, want, what, source, exact):
    """The rows of TABLE against the names WANT."""
    names, bad = first_column(doc, table, what)
    seen = {}
    for line, name in names:
        if name not in want:
            bad.append(f"{doc.where(line)}: `{name}`: not a {what} of {source}")
        elif exact and name in seen:
            bad.append(f"{doc.where(line)}: `{name}`: listed again (first at "
                       f"line {seen[name]})")
        seen.setdefault(name, line)
    for w in want:
        if w not in seen:
            bad.append(f"{doc.where(table.line)}: `{w}`: the {what} has "
                       "no row in this table")
    return bad, len(names)


def rule_doctor_table(truth, doc):
    table = the_table(doc, "doctor check")
    bad, n = exact_rows(doc, table, truth["doctor"], "doctor check",
                        "`stockade doctor --json`", exact=False)
    if bad:
        raise Failed(bad)
    return f"{n} rows"


def rule_status_table(truth, doc):
    table = the_table(doc, "status")
    bad, n = exact_rows(doc, table, truth["statuses"], "status",
                        "docs/result.schema.json", exact=True)
    if bad:
        raise Failed(bad)
    return f"{n} rows"


def rule_all_attacks(truth, doc):
    cited = set()
    for s in doc.spans:
        if attack_token(s.text):
            cited.add(s.text)
        elif attack_file(s.text):
            cited.add(attack_file(s.text))
    missing = sorted(truth["attacks"]["names"] - cited)
    if missing:
        raise Failed([f"{doc.where(1)}: `{a}`: an attack of tests/attacks/ "
                      "cited (backticked) nowhere in the document"
                      for a in missing])
    return f"all {len(truth['attacks']['names'])} cited"


def rule_family_table(truth, doc):
    """The attack-family table (a column `attacks`) cites each attack of
    the corpus once, and nothing else in that column."""
    tables = [t for t in doc.tables if t.column("attacks") is not None]
    if not tables:
        raise Failed([f"{doc.where(1)}: `attacks`: no table with an "
                      "`attacks` column (the attack families)"])
    if len(tables) > 1:
        raise Failed([f"{doc.where(t.line)}: `attacks`: another table with "
                      f"an `attacks` column (the first at line "
                      f"{tables[0].line}): there must be exactly one"
                      for t in tables[1:]])
    t = tables[0]
    col = t.column("attacks")
    names = truth["attacks"]["names"]
    bad, seen = [], {}
    for line, cells in t.rows:
        for tok in cell_spans(cells[col]) if col < len(cells) else []:
            name = tok if attack_token(tok) else attack_file(tok)
            if name not in names:
                bad.append(f"{doc.where(line)}: `{tok}`: not an attack of "
                           "tests/attacks/ (the `attacks` column cites "
                           "attacks only)")
            elif name in seen:
                bad.append(f"{doc.where(line)}: `{tok}`: cited again in the "
                           f"`attacks` column (first at line {seen[name]})")
            else:
                seen[name] = line
    for a in sorted(names - set(seen)):
        bad.append(f"{doc.where(t.line)}: `{a}`: an attack of tests/attacks/ "
                   "in no row of the `attacks` column")
    if bad:
        raise Failed(bad)
    return f"{len(seen)} attacks, each once"


def layer_table(doc):
    return the_table(doc, "layer", "shown by")


def rule_layer_rows(truth, doc):
    bad, n = exact_rows(doc, layer_table(doc), truth["job_layers"],
                        "job layer", "`unsafe_layers_off`'s names", exact=True)
    if bad:
        raise Failed(bad)
    return f"{n} rows"


def shown(truth, tok):
    """Whether TOK, a span of a `shown by` cell, is an existing and
    specific citation: a check, an attack, a file under tests/ (not a
    directory), or a `meson test` naming a test (not only a suite)."""
    if attack_token(tok):
        return is_attack(truth, tok)
    if check_like(truth, tok):
        return is_check(truth, tok)
    if tok.startswith("tests/"):
        if path_problem(ROOT, tok) is not None:
            return False
        m = PATH_TOKEN.match(tok.split()[0])
        path = os.path.join(ROOT, m.group("path"))
        if any(c in path for c in "*?["):
            return any(os.path.isfile(f) for f in glob.glob(path, recursive=True))
        return os.path.isfile(path)
    m = MESON_TEST.search(tok)
    if m:
        errors, tests, _ = parse_meson_named(truth, tok[m.end():])
        return not errors and bool(tests)
    return False


def rule_layer_shown(truth, doc):
    bad, n = [], 0
    t = layer_table(doc)
    col = t.column("shown by")
    for line, cells in t.rows:
        n += 1
        layer = " ".join(cell_spans(cells[0])) if cells else ""
        cell = cells[col] if col < len(cells) else ""
        if not any(shown(truth, tok) for tok in cell_spans(cell)):
            bad.append(f"{doc.where(line)}: `{layer or (cells[0] if cells else '')}`: "
                       "the `shown by` cell cites no existing check, attack, "
                       "file under tests/ or `meson test` naming a test")
    if bad:
        raise Failed(bad)
    return f"{n} rows cite evidence"


GENERIC = [
    ("R1", "every backticked `NN-name` is an attack of tests/attacks/",
     rule_attacks, ["attacks"]),
    ("R2", "every backticked `layer.what` is a check of `stockade check --list`",
     rule_checks, ["checks"]),
    ("R2", "every element of `stockade check --only` is a layer or a check",
     rule_check_only, ["checks"]),
    ("R3", "every backticked repository path exists", rule_paths, []),
    ("R3", "every relative link resolves", rule_links, []),
    ("R4", "every `meson test` names existing tests and suites", rule_meson,
     ["meson"]),
    ("R9", "every ```ini block passes `stockade policy check`", rule_ini, []),
    ("R10", "every backticked `[section] key` is a key of `stockade policy "
     "default`, and every `key = value` passes `stockade policy check`",
     rule_policy_keys, ["policy"]),
    ("R11", "every name of a `planted defect` column is a planted defect",
     rule_defects, ["defects"]),
    ("R13", "every backticked `NAME_ns` is a layer of the jail or of "
     "`stockade check`", rule_ns_names, ["job_layers", "checks"]),
    ("R14", "every reference to a section (`FILE.md, \"TITLE\"`, an "
     "#anchor) names a heading", rule_xrefs, []),
]
SPECIFIC = [
    ("integrators.md", "R5", "the `doctor check` table has exactly the checks "
     "of `stockade doctor`", rule_doctor_table, ["doctor"]),
    ("integrators.md", "R6", "the `status` table has exactly the statuses of "
     "the result schema", rule_status_table, ["statuses"]),
    ("threat-model.md", "R7", "every attack of tests/attacks/ is cited",
     rule_all_attacks, ["attacks"]),
    ("threat-model.md", "R8", "the `layer` table has exactly the jail's layers",
     rule_layer_rows, ["job_layers"]),
    ("threat-model.md", "R8", "each `layer` row's `shown by` cites evidence",
     rule_layer_shown, ["checks", "attacks", "meson"]),
    ("threat-model.md", "R12", "the attack-family table's `attacks` column "
     "cites every attack once", rule_family_table, ["attacks"]),
]


def needing(truth, needs, fn, doc):
    """FN on DOC, failing first if a source FN needs is not known."""
    for k in needs:
        if k in truth.errors:
            raise Failed([f"{doc.where(0)}: `{k}`: not checked, its source of "
                          f"truth failed: {'; '.join(truth.errors[k])}"])
    return fn(truth, doc)


def doc_paths():
    """The documents: DEFAULT_DOCS under the source root, or those of
    STOCKADE_CLAIM_DOCS (a relative one under the source root, else under
    the working directory when only there)."""
    env = os.environ.get("STOCKADE_CLAIM_DOCS", "")
    if not env:
        return [os.path.join(ROOT, p) for p in DEFAULT_DOCS]
    out = []
    for p in (p for p in env.split(":") if p):
        if os.path.isabs(p):
            out.append(p)
        elif os.path.exists(os.path.join(ROOT, p)) or not os.path.exists(p):
            out.append(os.path.join(ROOT, p))
        else:
            out.append(os.path.abspath(p))
    return out


def main():
    t0 = time.monotonic()
    results = []        # (status: "ok"/"not ok"/"skip", title, messages)

    def record(title, fn, *args):
        try:
            note = fn(*args)
            results.append(("ok", f"{title} ({note})" if note else title, []))
        except Skip as e:
            results.append(("skip", title, [str(e)]))
        except Failed as e:
            results.append(("not ok", title, e.messages))
        except (OSError, ValueError, KeyError, TypeError,
                subprocess.SubprocessError) as e:
            results.append(("not ok", title, [f"{type(e).__name__}: {e}"]))

    truth = Truth()
    with concurrent.futures.ThreadPoolExecutor(len(SOURCES)) as ex:
        futures = {key: ex.submit(fn) for key, _, fn, _ in SOURCES}
        for key, title, _, note in SOURCES:
            try:
                truth.values[key] = futures[key].result()
            except Exception as e:      # reported, and the rules that need it fail
                truth.errors[key] = e.messages if isinstance(e, Failed) else \
                    [f"{type(e).__name__}: {e}"]
    for key, title, _, note in SOURCES:
        if key in truth.errors:
            results.append(("not ok", f"source: {title}", truth.errors[key]))
        else:
            results.append(("ok", f"source: {title} ({note(truth.values[key])})", []))

    docs = [Doc(p) for p in doc_paths()]
    for doc in docs:
        def exists(doc=doc):
            if not doc.exists:
                raise Failed([f"{doc.name}:0: `{doc.name}`: the document is "
                              "missing"])
            if doc.problems:
                raise Failed(doc.problems)
            return f"{len(doc.lines)} lines"
        record(f"{doc.name}: exists and parses", exists)
        for rid, title, fn, needs in GENERIC:
            t = f"{doc.name}: {rid} {title}"
            if not doc.exists:
                results.append(("skip", t, ["the document is missing"]))
                continue
            record(t, needing, truth, needs, fn, doc)
    for base, rid, title, fn, needs in SPECIFIC:
        mine = [d for d in docs if d.base == base]
        if not mine:
            results.append(("skip", f"{base}: {rid} {title}", ["not scanned"]))
            continue
        for doc in mine:
            t = f"{doc.name}: {rid} {title}"
            if not doc.exists:
                results.append(("not ok", t, [f"{doc.name}:0: `{doc.name}`: "
                                "the document is missing"]))
                continue
            record(t, needing, truth, needs, fn, doc)

    print(f"1..{len(results)}")
    failed = 0
    for i, (status, title, messages) in enumerate(results, 1):
        if status == "skip":
            print(f"ok {i} - {title} # SKIP {'; '.join(messages)}")
            continue
        print(f"{status} {i} - {title}")
        if status != "ok":
            failed += 1
            for m in messages:
                for line in str(m).splitlines():
                    print(f"# {line}")
    print(f"# {failed} failed; {time.monotonic() - t0:.2f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
