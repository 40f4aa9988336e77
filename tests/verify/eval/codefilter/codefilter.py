#!/usr/bin/env python3
"""A denylist code filter of the kind put in front of code interpreters.

This is the baseline that issue 6 ("code filters are not a sandbox, with
numbers") measures stockade against. It is written the way a careful team
writes such a filter, not as a strawman: it reads the file the way Python
does (the PEP 263 coding cookie honoured), matches on tokens rather than on
raw text where tokens are the truth, normalises identifiers as the compiler
does, decodes string literals, and fails closed on anything it cannot read.

Usage: codefilter.py [--json] FILE
  exit 0: allowed; exit 1: blocked (the reasons on stdout, one a line, or a
  JSON object with --json); exit 2: usage error or unreadable file.

The rules (each refusal names its rule):

  R0 readable       The file must decode (coding cookie or UTF-8) and
                    tokenize; an ERRORTOKEN (a stray character such as a
                    lone carriage return) is refused: fail closed.
  R1 import         `import M`, `import M.N as X`, `from M import n` where
                    any dotted component of M is a forbidden module
                    (FORBIDDEN_MODULES, with or without a leading
                    underscore: os and _os alike). In `from M import n`
                    each imported name n is held to R1 and R2 too
                    (`from tempfile import _os`).
  R2 name           Any identifier token, after NFKC normalisation (PEP
                    3131: the compiler folds `ｅｘｅｃ` into `exec`), that
                    is a forbidden name (FORBIDDEN_NAMES: eval, exec,
                    __import__, globals, vars, system, popen, environ,
                    Popen, CDLL, rmtree, write_text, ...), a dangerous
                    dunder (__builtins__, __subclasses__, __globals__,
                    __class__, __dict__, ...) or a frame/code attribute
                    (f_globals, gi_frame, co_code, ...). `compile` is
                    refused except as `re.compile`.
  R3 module-attr    An attribute access `.N` where N is a forbidden module
                    name (`tempfile._os`, `pathlib.os`, `asyncio.subprocess`).
  R4 getattr        getattr/setattr/delattr/hasattr only as a direct call
                    whose first argument is not a module imported in the
                    file (nor builtins), and whose attribute argument is a
                    single string literal that passes R5; any other use
                    (aliasing getattr, a computed attribute name) is refused.
  R5 literal        Every string or bytes literal is decoded (escapes
                    included; adjacent literals joined as the compiler joins
                    them, across comments and line breaks); a literal that
                    is a dotted name with a forbidden module or name in it
                    ("os", "subprocess.run", "builtins.exec") is refused, and
                    every literal is matched against the SENSITIVE patterns.
                    f-strings are parsed (never run): their constant parts
                    are checked joined and alone, and each {expression} is
                    tokenized and held to R2, R4, R5 and R6.
  R6 write-mode     open(), io.open, codecs.open, Path.open, gzip.open,
                    tarfile.open, ... (any call of `open` or `.open`) and
                    FileIO/ZipFile/TarFile: a mode literal with w, a, x or +
                    (tarfile's "w:gz" too) in the mode's place (`mode=`; the
                    second argument of a function, the first or second of
                    a method such as Path.open) is refused, and so is a
                    mode the filter cannot read (a `mode=`, or the second
                    argument of open() or of a module's open, that is not a
                    literal). Reading files is allowed.
  R7 pattern        Regular expressions over the whole decoded source,
                    comments included (so that text the tokenizer hides is
                    still seen): the SENSITIVE patterns (/proc, .ssh, id_rsa,
                    .aws, AWS secret names, API keys, 127.0.0.1, localhost,
                    /dev/tcp, rm -rf, curl|sh, ...) and CODE patterns
                    (`import os` at a line start, `os.system`, `eval(`,
                    `exec(`, `__import__`, the bare words subprocess, ctypes,
                    socket, pty).

What the filter deliberately does not do (a careful team would not either,
because each would refuse a large share of ordinary programs): it does not
forbid sys (only sys.modules, sys._getframe, settrace), open for reading,
pathlib, io, json, csv, re, logging, tempfile, sqlite3, operator,
functools, timeit, doctest, unittest; it does not run or parse the program
beyond tokens (f-strings aside), and it does not track values through
variables.

Importable: check_source(data: bytes) -> list of (rule, line, detail);
check_file(path) -> the same; an empty list means allowed.
"""

import ast
import io
import json
import re
import sys
import tokenize
import unicodedata

FORBIDDEN_MODULES = frozenset("""
    os posix nt posixsubprocess subprocess socket ssl ctypes cffi shutil pty
    pipes multiprocessing signal fcntl mmap importlib imp zipimport runpy
    code codeop pdb builtins __builtin__ pickle cPickle cloudpickle dill
    marshal shelve copyreg gc inspect urllib urllib2 urllib3 http httplib
    requests httpx aiohttp ftplib telnetlib smtplib poplib imaplib nntplib
    xmlrpc socketserver asyncore asynchat webbrowser paramiko pexpect sh
    plumbum commands popen2
""".split())

FORBIDDEN_NAMES = frozenset("""
    eval exec execfile compile __import__ globals locals vars breakpoint
    reload system popen popen2 popen3 popen4 Popen call check_call
    check_output getoutput getstatusoutput run_command
    fork forkpty vfork kill killpg spawnl spawnle spawnlp spawnlpe spawnv
    spawnve spawnvp spawnvpe spawn execl execle execlp execlpe execv execve
    execvp execvpe posix_spawn posix_spawnp startfile
    unlink rmdir removedirs rmtree rename renames chmod fchmod lchmod chown
    fchown lchown symlink symlink_to hardlink_to link_to mknod mkfifo
    write_text write_bytes putenv unsetenv environ environb getenv getenvb
    setuid setgid seteuid setegid setreuid setregid chroot ptrace
    memfd_create sendfile copy_file_range dup2
    create_subprocess_exec create_subprocess_shell subprocess_exec
    subprocess_shell open_connection open_unix_connection create_connection
    create_unix_connection create_datagram_endpoint sock_connect
    sock_sendall urlopen urlretrieve
    CDLL cdll PyDLL pydll WinDLL windll OleDLL oledll LibraryLoader
    pythonapi dlopen dlsym LoadLibrary CFUNCTYPE PYFUNCTYPE
    load_module exec_module import_module find_spec find_module find_loader
    run_path run_module CodeType FunctionType
    modules _getframe settrace setprofile
    f_globals f_locals f_builtins f_back f_code gi_frame gi_code cr_frame
    cr_code ag_frame tb_frame co_code func_globals func_code
""".split())

DANGEROUS_DUNDERS = frozenset("""
    __builtins__ __import__ __subclasses__ __globals__ __code__ __class__
    __bases__ __base__ __mro__ __dict__ __getattribute__ __loader__ __spec__
    __reduce__ __reduce_ex__ __closure__ __func__ __self__ __traceback__
    __subclasshook__ __init_subclass__
""".split())

# `compile` is refused except as an attribute of these (re.compile is in
# half of all text-processing programs).
COMPILE_OWNERS = frozenset({"re", "regex"})

GETATTR_LIKE = frozenset({"getattr", "setattr", "delattr", "hasattr"})
OPEN_LIKE = frozenset({"open", "FileIO", "ZipFile", "TarFile"})

# Matched on every decoded literal (R5) and on the whole source (R7).
SENSITIVE = [
    (r"/proc\b", "a /proc path"),
    (r"/etc/(passwd|shadow|sudoers|gshadow)\b", "a system account file"),
    (r"(^|[^\w])\.ssh\b", "an SSH directory"),
    (r"\bid_(rsa|dsa|ecdsa|ed25519)\b", "an SSH private key name"),
    (r"(^|[^\w])\.aws\b", "an AWS configuration directory"),
    (r"(?i)aws_secret|secret_access_key|aws_access_key", "an AWS secret name"),
    (r"(?i)\bapi_?key\b|_API_KEY\b", "an API key name"),
    (r"(^|[^\w])\.(netrc|bash_history|pgpass|git-credentials)\b",
     "a credentials file"),
    (r"\b127\.0\.0\.1\b|\blocalhost\b|\b0\.0\.0\.0\b|\[::1?\]",
     "a loopback or wildcard address"),
    (r"/dev/(tcp|udp)/", "a bash network path"),
    (r"\brm\s+-[a-zA-Z]*[rf]", "rm -r/-f"),
    (r"\b(curl|wget)\b[^\n|]*\|\s*(ba|z|da)?sh\b", "a download piped to a shell"),
    (r"\b(nc|ncat|netcat|socat)\s+-", "a netcat-like command"),
]

_MODS = "|".join(sorted(re.escape(m) for m in FORBIDDEN_MODULES))
CODE_PATTERNS = [
    (r"(?m)^[ \t]*(import|from)[ \t]+_?(%s)\b" % _MODS, "a forbidden import"),
    (r"\bos\s*\.\s*(system|popen|exec\w*|spawn\w*|posix_spawnp?|fork\w*|kill"
     r"|remove|unlink|rmdir|environ|getenv|putenv|open|fdopen|write|chmod"
     r"|chown|symlink|link|rename|replace|truncate)\b", "an os call"),
    (r"(?<![\w.])(eval|exec|execfile|compile)\s*\(", "eval/exec/compile"),
    (r"__import__|__builtins__|__subclasses__|__globals__", "an import or "
     "introspection dunder"),
    (r"\b(subprocess|ctypes|socket|pty)\b", "a process, socket or FFI module "
     "name"),
]

MODE_RE = re.compile(r"^[rwxabtU+]{1,4}(:[a-z0-9]*)?$")   # tarfile: "w:gz"
DOTTED_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*([.:][A-Za-z_][A-Za-z0-9_]*)*$")

SKIP_TYPES = (tokenize.NL, tokenize.COMMENT)


def write_mode(v):
    """Whether the string V is a file mode that writes ("w", "a+", "xb",
    tarfile's "w:gz"; not "r:xz")."""
    return bool(MODE_RE.match(v)) and bool(re.search(r"[wax+]",
                                                      v.split(":")[0]))


def nfkc(name):
    return unicodedata.normalize("NFKC", name)


def forbidden_module(name):
    return name in FORBIDDEN_MODULES or (name.startswith("_") and
                                         name.lstrip("_") in FORBIDDEN_MODULES)


def forbidden_name(name):
    return name in FORBIDDEN_NAMES or name in DANGEROUS_DUNDERS


def literal_text(tok):
    """The raw text inside a literal's quotes (the fallback for a literal
    the parser does not accept)."""
    s = tok.lstrip("rRbBuUfF")
    q = s[:3] if s[:3] in ('"""', "'''") else s[:1]
    return s[len(q):len(s) - len(q)] if len(s) >= 2 * len(q) else s


def fstring_parts(node):
    """Constant text and expression sources of a parsed f-string: the
    constants joined (an expression counting as nothing between them, so
    that f"/pr{''}oc" reads as "/proc") and each alone, and ast.unparse of
    each expression (identifiers already NFKC-folded by the parser)."""
    consts, exprs = [], []
    for n in ast.walk(node):
        if isinstance(n, ast.JoinedStr):
            parts = [v.value for v in n.values
                     if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            consts.append("".join(parts))
            consts.extend(parts)
        elif isinstance(n, ast.FormattedValue):
            exprs.append(ast.unparse(n.value))
    return consts, exprs


def decode_literals(strings):
    """Values of a run of adjacent STRING tokens: the joined value when the
    compiler can join them, else each one decoded alone; f-strings are
    parsed (not run) into their constant parts and their expressions.
    Returns (values, expression sources)."""
    texts = [t.string for t in strings]
    groups = [" ".join(texts)] + (texts if len(texts) > 1 else [])
    values, exprs = [], []
    for g in groups:
        try:
            tree = ast.parse("(" + g + "\n)", mode="eval").body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        if isinstance(tree, ast.Constant):
            values.append(tree.value)
        elif isinstance(tree, ast.JoinedStr):
            c, e = fstring_parts(tree)
            values.extend(c)
            for x in e:
                if x not in exprs:
                    exprs.append(x)
        if g is groups[0]:
            break
    if not values and not exprs:
        # not Python the parser accepts: match the raw text, fail closed
        values.append("".join(literal_text(t) for t in texts))
    return values, exprs


class Checker:
    def __init__(self, data):
        self.data = data
        self.found = []
        self.imported = {"builtins", "__builtins__"}

    def refuse(self, rule, line, detail):
        item = (rule, line, detail)
        if item not in self.found:
            self.found.append(item)

    # -- reading ----------------------------------------------------------

    def read(self):
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(self.data).readline)
            text = self.data.decode(encoding)
            if text.startswith("\ufeff"):
                text = text[1:]
            toks = list(tokenize.tokenize(io.BytesIO(self.data).readline))
        except (SyntaxError, UnicodeDecodeError, LookupError,
                tokenize.TokenError, IndentationError, ValueError) as exc:
            self.refuse("readable", 0, f"cannot be read as Python: {exc}")
            return None, None
        return text, toks

    # -- rules -------------------------------------------------------------

    def run(self):
        text, toks = self.read()
        if toks is None:
            return self.found
        sig = [t for t in toks if t.type not in (tokenize.ENCODING,
                                                   tokenize.ENDMARKER)]
        for t in sig:
            if t.type == tokenize.ERRORTOKEN and t.string not in (" ", "\t"):
                self.refuse("readable", t.start[0],
                            f"unexpected character {t.string!r}")
        code = [t for t in sig if t.type not in SKIP_TYPES + (
            tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)]
        self.imported = self.rule_import(sig)
        self.rule_names(code)
        self.rule_getattr(code, self.imported)
        self.rule_literals(sig)
        self.rule_open(code)
        self.rule_patterns(text)
        self.found.sort(key=lambda f: (f[1], f[0]))
        return self.found

    @staticmethod
    def statements(sig):
        """Logical statements: token lists split at NEWLINE and ';'."""
        stmts = [[]]
        for t in sig:
            if t.type in SKIP_TYPES or t.type in (tokenize.INDENT,
                                                 tokenize.DEDENT):
                continue
            if t.type == tokenize.NEWLINE or (t.type == tokenize.OP and
                                              t.string == ";"):
                stmts.append([])
            else:
                stmts[-1].append(t)
        return [s for s in stmts if s]

    def rule_import(self, sig):
        """R1; returns the names the file binds to imported modules."""
        imported = {"builtins", "__builtins__"}
        for s in self.statements(sig):
            words = [nfkc(t.string) for t in s]
            for k, w in enumerate(words):
                if w != "import" or s[k].type != tokenize.NAME:
                    continue
                line = s[k].start[0]
                f = k - 1
                while f >= 0 and (words[f] == "." or words[f] == "..." or
                                  s[f].type == tokenize.NAME and
                                  words[f] != "from"):
                    f -= 1
                if f >= 0 and words[f] == "from":
                    mod = [x for x in words[f + 1:k] if x not in (".", "...")]
                    for comp in mod:
                        if forbidden_module(comp):
                            self.refuse("import", line, "from-import of "
                                        "forbidden module " + ".".join(mod))
                            break
                    prev = None
                    for x in words[k + 1:]:
                        if x in ("(", ")", ",", "*"):
                            prev = x
                            continue
                        if prev == "as":
                            imported.add(x)
                        elif x != "as":
                            if forbidden_module(x) or forbidden_name(x):
                                self.refuse("import", line,
                                            f"imports forbidden name {x}")
                            imported.add(x)
                        prev = x
                else:
                    groups = [[]]
                    for x in words[k + 1:]:
                        if x == ",":
                            groups.append([])
                        elif x not in ("(", ")"):
                            groups[-1].append(x)
                    for g in groups:
                        if "as" in g:
                            a = g.index("as")
                            dotted, alias = g[:a], g[a + 1:a + 2]
                        else:
                            dotted, alias = g, g[:1]
                        dotted = [x for x in dotted if x != "."]
                        for comp in dotted:
                            if forbidden_module(comp):
                                self.refuse("import", line, "imports "
                                            "forbidden module " +
                                            ".".join(dotted))
                                break
                        imported.update(alias)
        return imported

    def rule_names(self, code):
        """R2 and R3."""
        for i, t in enumerate(code):
            if t.type != tokenize.NAME:
                continue
            name = nfkc(t.string)
            after_dot = i > 0 and code[i - 1].string == "."
            line = t.start[0]
            note = "" if name == t.string else f" (written {t.string!r})"
            if name == "compile":
                owner = nfkc(code[i - 2].string) if after_dot and i >= 2 else None
                if owner not in COMPILE_OWNERS:
                    self.refuse("name", line, f"compile{note}")
                continue
            if forbidden_name(name):
                self.refuse("name", line, f"forbidden name {name}{note}")
            elif after_dot and forbidden_module(name):
                self.refuse("module-attr", line,
                            f"attribute .{name} reaches a forbidden module{note}")

    @staticmethod
    def call_args(code, i):
        """Arguments of the call whose '(' is code[i]: a list of token
        lists split at top-level commas, and the index past ')'."""
        depth = 0
        args = [[]]
        j = i
        while j < len(code):
            s = code[j].string if code[j].type == tokenize.OP else None
            if s in ("(", "[", "{"):
                depth += 1
                if depth > 1:
                    args[-1].append(code[j])
            elif s in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return [a for a in args if a], j + 1
                args[-1].append(code[j])
            elif s == "," and depth == 1:
                args.append([])
            elif j > i:
                args[-1].append(code[j])
            j += 1
        return [a for a in args if a], j

    @staticmethod
    def literal_value(arg):
        """The value of an argument made only of literals, else None."""
        if not arg or any(t.type not in (tokenize.STRING, tokenize.NUMBER)
                          and t.string not in ("None", "True", "False")
                          for t in arg):
            return None
        try:
            return ast.literal_eval(" ".join(t.string for t in arg))
        except (ValueError, SyntaxError, TypeError):
            return None

    def rule_getattr(self, code, imported):
        """R4."""
        for i, t in enumerate(code):
            if t.type != tokenize.NAME or nfkc(t.string) not in GETATTR_LIKE:
                continue
            name = nfkc(t.string)
            line = t.start[0]
            if i + 1 >= len(code) or code[i + 1].string != "(" or \
                    (i > 0 and code[i - 1].string == "."):
                self.refuse("getattr", line, f"{name} used other than as a "
                            "direct call")
                continue
            args, _ = self.call_args(code, i + 1)
            if len(args) < 2:
                self.refuse("getattr", line, f"{name} with fewer than two "
                            "arguments")
                continue
            first = args[0]
            if len(first) == 1 and first[0].type == tokenize.NAME and \
                    nfkc(first[0].string) in imported:
                self.refuse("getattr", line, f"{name} on module "
                            f"{nfkc(first[0].string)}")
            attr = args[1]
            value = self.literal_value(attr)
            if not isinstance(value, str):
                self.refuse("getattr", line, f"{name} with a computed "
                            "attribute name")
            elif forbidden_name(value) or forbidden_module(value) or \
                    (value.startswith("__") and value.endswith("__")):
                self.refuse("getattr", line, f"{name} of {value!r}")

    def check_value(self, value, line):
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        if not isinstance(value, str):
            return
        v = value.strip()
        if DOTTED_RE.match(v):
            for comp in re.split(r"[.:]", v):
                if forbidden_module(comp) or forbidden_name(comp):
                    self.refuse("literal", line,
                                f"string {v[:60]!r} names {comp}")
                    break
        for pat, what in SENSITIVE:
            if re.search(pat, value):
                self.refuse("literal", line, f"string holds {what}: "
                            f"{value[:60]!r}")

    def rule_literals(self, sig):
        """R5: runs of adjacent STRING tokens (NL and comments between
        them do not break a run, as for the compiler)."""
        run = []
        for t in sig + [None]:
            if t is not None and t.type == tokenize.STRING:
                run.append(t)
                continue
            if t is not None and t.type in SKIP_TYPES and run:
                continue
            if run:
                values, exprs = decode_literals(run)
                for v in values:
                    self.check_value(v, run[0].start[0])
                for e in exprs:
                    self.check_fragment(e, run[0].start[0])
                run = []

    def check_fragment(self, source, line):
        """R2, R4, R5, R6 on an f-string's expression SOURCE, refusals
        reported at LINE."""
        sub = Checker(source.encode())
        try:
            toks = list(tokenize.tokenize(io.BytesIO(sub.data).readline))
        except (SyntaxError, tokenize.TokenError, ValueError):
            self.refuse("literal", line, "an f-string expression that does "
                        "not tokenize")
            return
        sig = [t for t in toks if t.type not in (tokenize.ENCODING,
                                                   tokenize.ENDMARKER)]
        code = [t for t in sig if t.type not in SKIP_TYPES + (
            tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)]
        sub.rule_names(code)
        sub.rule_getattr(code, self.imported)
        sub.rule_literals(sig)
        sub.rule_open(code)
        for rule, _ln, detail in sub.found:
            self.refuse(rule, line, detail + " (in an f-string)")

    def rule_open(self, code):
        """R6."""
        for i, t in enumerate(code):
            if t.type != tokenize.NAME or nfkc(t.string) not in OPEN_LIKE:
                continue
            if i + 1 >= len(code) or code[i + 1].string != "(":
                continue
            line = t.start[0]
            name = nfkc(t.string)
            attr = i > 0 and code[i - 1].string == "."
            args, _ = self.call_args(code, i + 1)
            positional = []
            for a in args:
                if len(a) >= 2 and a[0].type == tokenize.NAME and \
                        a[1].string == "=":
                    key = nfkc(a[0].string)
                    if key == "mode":
                        v = self.literal_value(a[2:])
                        if not isinstance(v, str):
                            self.refuse("write-mode", line, f"{name}() with a "
                                        "mode that is not a literal")
                        elif write_mode(v):
                            self.refuse("write-mode", line,
                                        f"{name}() in mode {v!r}")
                    continue
                if a[0].string in ("*", "**"):
                    self.refuse("write-mode", line, f"{name}() with unpacked "
                                "arguments")
                    continue
                positional.append(a)
            # Where the mode sits: second for open(), io.open, codecs.open,
            # gzip.open, tarfile.open, FileIO, ZipFile (a function of a
            # module, or a bare name); first or second for a method of
            # an object (Path.open(mode), ZipFile.open(name, mode)).
            receiver = nfkc(code[i - 2].string) if attr and i >= 2 else None
            of_module = not attr or receiver in self.imported
            places = (1,) if of_module else (0, 1)
            for k, a in enumerate(positional):
                if k not in places:
                    continue
                v = self.literal_value(a)
                if isinstance(v, str) and write_mode(v):
                    self.refuse("write-mode", line, f"{name}() in mode {v!r}")
                elif k == 1 and v is None and name == "open" and of_module:
                    self.refuse("write-mode", line, f"{name}() with a mode "
                                "that is not a literal")

    def rule_patterns(self, text):
        """R7, line by line so that a refusal names its line."""
        for pats in (SENSITIVE, CODE_PATTERNS):
            for pat, what in pats:
                for m in re.finditer(pat, text):
                    line = text.count("\n", 0, m.start()) + 1
                    self.refuse("pattern", line, f"{what}: {m.group(0).strip()!r}")


def check_source(data):
    """DATA (bytes of a Python source file) -> list of (rule, line, detail)
    refusals; empty when the filter allows the program."""
    return Checker(data).run()


def check_file(path):
    with open(path, "rb") as f:
        return check_source(f.read())


def main(argv):
    args = argv[1:]
    as_json = False
    if args and args[0] == "--json":
        as_json = True
        args = args[1:]
    if len(args) != 1 or args[0].startswith("-") and args[0] != "-":
        print("usage: codefilter.py [--json] FILE", file=sys.stderr)
        return 2
    path = args[0]
    try:
        if path == "-":
            found = check_source(sys.stdin.buffer.read())
        else:
            found = check_file(path)
    except OSError as exc:
        print(f"codefilter.py: {path}: {exc.strerror}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps({
            "file": path,
            "allowed": not found,
            "reasons": [{"rule": r, "line": ln, "detail": d}
                        for r, ln, d in found],
        }))
    elif found:
        for r, ln, d in found:
            print(f"blocked: {path}:{ln}: {r}: {d}")
    else:
        print(f"allowed: {path}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
