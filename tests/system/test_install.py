#!/usr/bin/python3
# `meson install` (issue 8, README.md "Installation"): the build tree of
# this test run (STOCKADE_BUILD_ROOT) installed with `meson install
# --destdir` into a temporary directory, then, in that tree:
#   - the layout: exactly the files of the installation layout
#     (/tmp/s/issue8.md, README.md), each with its mode;
#   - `stockade --version`;
#   - the broker finds its launcher relative to its own binary
#     (broker/host/install_path.h): a copy without the launcher names the
#     relative place it tried;
#   - `stockade doctor` and `stockade run -- python3 -c 'print(1)'` from a
#     copy of the tree in a fresh 0755 directory, as root and as uid 65534
#     (as the invoking user when not root);
#   - `stockade check --prefix TREE/usr/local --only limits`; `stockade
#     check` executes libexec/stockade/stockade-check, and without it (and
#     for eval: stockade-eval is not installed) exits 70 naming the place;
#   - `--help` of every command on stdout with exit 0, and a bad option on
#     stderr with a non-zero status;
#   - every man page renders with man -l and groff without a warning, and
#     documents every command, option, policy key and protocol method;
#   - the bash completion loads and completes.
# TAP. A check that cannot run here (a kernel without a layer: stockade
# exits 69; setpriv or man missing) is "# SKIP"; with STOCKADE_MUST_WORK=1
# it is "not ok" instead. STOCKADE_TEST_KEEP=1 keeps the directories.

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, remove_all,
                           tap_fail, tap_skip, traversable_tmp)

PREFIX = "usr/local"

# Every file `meson install` puts under the prefix, with its mode.
EXPECTED_FILES = {
    "bin/stockade": 0o755,
    "libexec/stockade/stockade-launcher": 0o755,
    "libexec/stockade/stockade-proxy": 0o755,
    "libexec/stockade/stockade-check": 0o755,
    "libexec/stockade/stockade-probe": 0o755,
    "share/stockade/policy/default.ini": 0o644,
    "share/stockade/policy/seccomp-default.ini": 0o644,
    "share/stockade/policy/seccomp-strict.ini": 0o644,
    "share/man/man1/stockade.1": 0o644,
    "share/man/man5/stockade-policy.5": 0o644,
    "share/man/man7/stockade-protocol.7": 0o644,
    "share/bash-completion/completions/stockade": 0o644,
}

COMMANDS = ["run", "put", "get", "ls", "stat", "rm", "mkdir", "mv", "unpack",
            "pack", "serve", "mcp", "policy", "doctor", "check", "eval"]
# Every usage the broker has: `stockade WORDS... --help`.
HELPS = [[c] for c in COMMANDS] + [
    ["policy", "show"], ["policy", "default"], ["policy", "check"],
    ["eval", "layers"], ["eval", "isolation"], ["eval", "corpus"],
    ["eval", "filter"]]

NOBODY_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
              "HOME": "/nonexistent"}

ROOT = os.environ["STOCKADE_SOURCE_ROOT"]
BUILD = os.environ["STOCKADE_BUILD_ROOT"]


def run(argv, timeout=120, **kw):
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, **kw)


def require(ok, what, proc=None):
    if not ok:
        if proc is not None:
            what += (f"\nexit {proc.returncode}\nstdout: {proc.stdout[-2000:]}"
                     f"\nstderr: {proc.stderr[-2000:]}")
        raise AssertionError(what)


def refused(proc):
    """Raises Skip when stockade refused for want of a kernel layer."""
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused (exit 69): "
                   + " ".join(proc.stderr.split())[:300])


class Ctx:
    def __init__(self):
        self.cleanup = []
        self.dest = None      # the --destdir tree
        self.copy = None      # a copy of it in a fresh 0755 directory

    def bin(self, tree):
        return os.path.join(tree, PREFIX, "bin", "stockade")

    def users(self):
        """(title, argv prefix, env) per user to run as."""
        env = dict(os.environ)
        out = [("as the invoking user" if os.geteuid() else "as root", [],
                env)]
        if os.geteuid() == 0:
            out.append((f"as uid {NOBODY}",
                        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                         "--clear-groups"], NOBODY_ENV))
        return out


def t_install(c):
    meson = shutil.which("meson")
    require(meson is not None, "meson not found in PATH")
    c.dest = tempfile.mkdtemp(prefix="stockade-install-",
                              dir=traversable_tmp())
    c.cleanup.append(c.dest)
    p = run([meson, "install", "--no-rebuild", "--quiet", "--destdir",
             c.dest, "-C", BUILD], timeout=300)
    require(p.returncode == 0, "meson install --destdir failed", p)


def t_layout(c):
    root = os.path.join(c.dest, PREFIX)
    found = {}
    bad = []
    for d, dirs, files in os.walk(c.dest):
        for name in dirs:
            m = stat.S_IMODE(os.lstat(os.path.join(d, name)).st_mode)
            if m != 0o755:
                bad.append(f"directory {os.path.join(d, name)} mode {m:o}")
        for name in files:
            path = os.path.join(d, name)
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                bad.append(f"{path}: not a regular file")
            found[os.path.relpath(path, root)] = stat.S_IMODE(st.st_mode)
    for rel, mode in EXPECTED_FILES.items():
        if rel not in found:
            bad.append(f"missing: {PREFIX}/{rel}")
        elif found[rel] != mode:
            bad.append(f"{PREFIX}/{rel}: mode {found[rel]:o}, expected {mode:o}")
    for rel in sorted(set(found) - set(EXPECTED_FILES)):
        bad.append(f"unexpected: {rel}")
    for rel in ("share/stockade/policy/default.ini",
                "share/stockade/policy/seccomp-default.ini",
                "share/stockade/policy/seccomp-strict.ini"):
        src = os.path.join(ROOT, "policy", os.path.basename(rel))
        if rel in found and open(src, "rb").read() != \
                open(os.path.join(root, rel), "rb").read():
            bad.append(f"{rel} differs from policy/{os.path.basename(rel)}")
    comp = os.path.join(root, "share/bash-completion/completions/stockade")
    if os.path.exists(comp) and open(comp, "rb").read() != open(
            os.path.join(ROOT, "tools/completion/stockade.bash"), "rb").read():
        bad.append("the completion differs from tools/completion/stockade.bash")
    require(not bad, "\n".join(bad))


def t_version(c):
    p = run([c.bin(c.dest), "--version"])
    require(p.returncode == 0 and p.stderr == "" and
            re.fullmatch(r"stockade \d+\.\d+\.\d+ \(protocol \d+\)\n", p.stdout),
            "stockade --version", p)


def copy_tree(c):
    """The installed tree copied into a fresh 0755 directory that uid
    65534 can enter (the build tree may sit where it cannot)."""
    if c.copy is None:
        d = tempfile.mkdtemp(prefix="stockade-installed-",
                             dir=traversable_tmp())
        c.cleanup.append(d)
        os.chmod(d, 0o755)
        shutil.copytree(os.path.join(c.dest, "usr"), os.path.join(d, "usr"),
                        symlinks=True)
        c.copy = d
    return c.copy


def t_relative(c):
    """The launcher is found by the relative path from bindir to
    libexecdir: without it, the error names the place in this tree."""
    d = tempfile.mkdtemp(prefix="stockade-nolauncher-", dir=traversable_tmp())
    c.cleanup.append(d)
    shutil.copytree(os.path.join(c.dest, "usr"), os.path.join(d, "usr"))
    libexec = os.path.join(d, PREFIX, "libexec", "stockade")
    os.unlink(os.path.join(libexec, "stockade-launcher"))
    p = run([c.bin(d), "run", "--", "true"])
    refused(p)
    require(p.returncode == 70 and
            os.path.join(libexec, "stockade-launcher") in p.stderr,
            "a tree without its launcher: exit 70 naming "
            f"{libexec}/stockade-launcher", p)


def t_verify(c):
    """`stockade check` executes libexecdir/stockade/stockade-check, found
    as the launcher is: without it, exit 70 naming the place in this tree;
    stockade-eval is not installed, and `stockade eval` says so."""
    d = tempfile.mkdtemp(prefix="stockade-nocheck-", dir=traversable_tmp())
    c.cleanup.append(d)
    shutil.copytree(os.path.join(c.dest, "usr"), os.path.join(d, "usr"))
    libexec = os.path.join(d, PREFIX, "libexec", "stockade")
    p = run([c.bin(d), "check", "--list"])
    require(p.returncode == 0 and "limits.rlimit" in p.stdout,
            "the installed stockade check --list", p)
    os.unlink(os.path.join(libexec, "stockade-check"))
    bad = []
    for cmd, name in (("check", "stockade-check"), ("eval", "stockade-eval")):
        p = run([c.bin(d), cmd, "--help"])
        if not (p.returncode == 70 and p.stdout == "" and
                os.path.join(libexec, name) in p.stderr and
                f"{name} not found" in p.stderr):
            bad.append(f"stockade {cmd} without {name}: exit {p.returncode}, "
                       f"stderr {p.stderr[:300]!r}")
    require(not bad, "\n".join(bad))


def t_doctor(c, title, pre, env):
    tree = copy_tree(c)
    p = run(pre + [c.bin(tree), "doctor"], env=env, cwd=tree)
    refused(p)
    last = p.stdout.strip().splitlines()[-1:] or [""]
    require(p.returncode == 0 and re.match(r"(full|degraded: )", last[0]),
            f"stockade doctor {title}: exit 0 with a verdict", p)


def t_run(c, title, pre, env):
    tree = copy_tree(c)
    p = run(pre + [c.bin(tree), "run", "--", "python3", "-c", "print(1)"],
            env=env, cwd=tree)
    refused(p)
    require(p.returncode == 0 and p.stdout == "1\n",
            f"stockade run {title} prints 1", p)


def t_check(c, title, pre, env):
    tree = copy_tree(c)
    p = run(pre + [c.bin(tree), "check", "--prefix",
                   os.path.join(tree, PREFIX), "--only", "limits"],
            env=env, cwd=tree, timeout=300)
    refused(p)
    require(p.returncode == 0 and
            re.search(r"checks, (\d+) passed, 0 failed, 0 skipped", p.stdout)
            and os.path.join(tree, PREFIX, "bin", "stockade") in p.stdout,
            f"stockade check --prefix {title}", p)


def for_words(exe, words):
    """The stockade to ask about WORDS: the installed EXE, but the build
    tree's for `stockade eval`, whose stockade-eval is a build-tree tool
    that `meson install` leaves out (README.md; t_verify)."""
    return os.path.join(BUILD, "stockade") if words[0] == "eval" else exe


def usage_options(exe, words):
    """The options of `stockade WORDS... --help` that belong to WORDS: for
    a subcommand (policy show, eval filter), only those of the usage lines
    that name it."""
    text = run([for_words(exe, words)] + words + ["--help"]).stdout
    if len(words) > 1:
        keep, lines = False, []
        for line in text.splitlines():
            m = re.match(r"\s*(?:usage:\s*)?stockade (\S+) (\S+)", line)
            if m:
                keep = words[1] in m.group(2).split("|")
            elif not line.startswith(" "):
                keep = False
            if keep:
                lines.append(line)
        text = "\n".join(lines)
    return set(re.findall(r"--[a-z][a-z0-9-]*", text))


def t_help(c):
    bad = []
    exe = c.bin(c.dest)
    for words in HELPS:
        p = run([for_words(exe, words)] + words + ["--help"])
        if p.returncode != 0 or not p.stdout.startswith("usage:") or p.stderr:
            bad.append(f"stockade {' '.join(words)} --help: exit "
                       f"{p.returncode}, stdout {p.stdout[:80]!r}, "
                       f"stderr {p.stderr[:200]!r}")
        p = run([for_words(exe, words)] + words + ["--no-such-option"],
                stdin=subprocess.DEVNULL)
        if p.returncode == 0 or p.stdout or not p.stderr:
            bad.append(f"stockade {' '.join(words)} --no-such-option: exit "
                       f"{p.returncode}, stdout {p.stdout[:80]!r}, "
                       f"stderr {p.stderr[:200]!r}")
    for argv in ([], ["no-such-command"]):
        p = run([exe] + argv)
        if p.returncode != 2 or p.stdout or not p.stderr:
            bad.append(f"stockade {' '.join(argv)}: exit {p.returncode}")
    # `stockade run --help` describes every option of its synopsis on a
    # line of its own, with its default where it has one (issue 22).
    text = run([exe, "run", "--help"]).stdout
    synopsis, _, rest = text.partition("\n\n")
    for opt in sorted(set(re.findall(r"--[a-z][a-z0-9-]*", synopsis))):
        if not re.search(rf"^  {opt}\b", rest, re.M):
            bad.append(f"stockade run --help does not describe {opt}")
    for opt in ("--timeout", "--cpu-time", "--memory", "--processes",
                "--file-size", "--tmp-size", "--output"):
        line = re.search(rf"^  {opt}\b.*(?:\n {{20,}}.*)*", rest, re.M)
        if line is None or "default" not in line.group(0):
            bad.append(f"stockade run --help gives no default for {opt}")
    # One line per command (issue 22): "  run -- PROGRAM ...  what it
    # does", "  ls|stat PATH...  ...".
    p = run([exe, "--help"])
    for cmd in COMMANDS:
        if not re.search(rf"^  (?:[a-z]+\|)*{cmd}\b.*  +\S",
                         p.stdout, re.M):
            bad.append(f"stockade --help has no line for {cmd}")
    require(not bad, "\n".join(bad))


def render(path):
    """The man page at PATH rendered, with what man and groff warned."""
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
    man = run(["man", "--warnings", "-E", "UTF-8", "-l", path], env=env)
    groff = run(["groff", "-man", "-ww", "-z", path], env=env)
    return man, groff


def t_man(c):
    if shutil.which("man") is None or shutil.which("groff") is None:
        raise Skip("man or groff not found (man-db, groff-base)")
    bad = []
    for rel in EXPECTED_FILES:
        if "/man/" not in rel:
            continue
        man, groff = render(os.path.join(c.dest, PREFIX, rel))
        name = os.path.basename(rel)
        if man.returncode != 0 or man.stderr or "NAME" not in man.stdout:
            bad.append(f"man -l {name}: exit {man.returncode}: {man.stderr}")
        if groff.returncode != 0 or groff.stderr:
            bad.append(f"groff -man -ww {name}: {groff.stderr}")
    require(not bad, "\n".join(bad))


def t_man_complete(c):
    """The pages document what the program has: every command and every
    option of every --help (stockade.1, as scdoc source, where no line is
    broken inside a word), every section and key of the default policy
    (stockade-policy.5), every method of docs/protocol.md and every MCP
    tool (stockade-protocol.7)."""
    man = os.path.join(ROOT, "docs", "man")
    page1 = open(os.path.join(man, "stockade.1.scd")).read()
    page5 = open(os.path.join(man, "stockade-policy.5.scd")).read()
    page7 = open(os.path.join(man, "stockade-protocol.7.scd")).read()
    bad = []
    exe = c.bin(c.dest)
    for words in HELPS:
        for opt in sorted(usage_options(exe, words)):
            if f"*{opt}*" not in page1:
                bad.append(f"stockade.1: {' '.join(words)} {opt}")
    for cmd in COMMANDS:
        if f"## stockade {cmd}" not in page1 and not re.search(
                rf"## stockade [a-z, ]*\b{cmd}\b", page1):
            bad.append(f"stockade.1: no section for {cmd}")
    for sec in ("EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"):
        if f"# {sec}" not in page1:
            bad.append(f"stockade.1: no {sec}")
    section = None
    for line in open(os.path.join(ROOT, "policy", "default.ini")):
        m = re.match(r"\[(\w+)\]", line)
        if m:
            section = m.group(1)
            if f"# [{section}]" not in page5:
                bad.append(f"stockade-policy.5: no section [{section}]")
            continue
        m = re.match(r"(\w+)\s*=", line)
        if m and section not in ("environment",) and \
                f"*{m.group(1)}*" not in page5:
            bad.append(f"stockade-policy.5: [{section}] {m.group(1)}")
    for key in ("denied", "[profile]", "[allow]"):
        if key not in page5:
            bad.append(f"stockade-policy.5: seccomp profile {key}")
    proto = open(os.path.join(ROOT, "docs", "protocol.md")).read()
    for method in re.findall(r"^### `([a-z.]+)`", proto, re.M):
        if f"*{method}*\n\t" not in page7:
            bad.append(f"stockade-protocol.7: method {method}")
    for tool in ("run_code", "run_command", "write_file", "read_file",
                 "list_files", "changes", "checkpoint", "restore_checkpoint",
                 "list_checkpoints", "drop_checkpoint"):
        if f"*{tool}*\n\t" not in page7:
            bad.append(f"stockade-protocol.7: MCP tool {tool}")
    for code in re.findall(r"^\| (-32\d\d\d) \|", proto, re.M):
        if code not in page7:
            bad.append(f"stockade-protocol.7: error {code}")
    require(not bad, "\n".join(bad))


def complete(comp, words):
    """What the completion gives for WORDS (the last one being completed)."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); '
              'COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); '
              '_stockade; printf "%s\\n" "${COMPREPLY[@]}"')
    p = run(["bash", "--norc", "--noprofile", "-c", script, "bash", comp]
            + words)
    require(p.returncode == 0 and p.stderr == "",
            f"completing {words}", p)
    return p.stdout.split()


def t_completion(c):
    comp = os.path.join(c.dest, PREFIX,
                        "share/bash-completion/completions/stockade")
    p = run(["bash", "--norc", "--noprofile", "-c",
             'source "$1" && complete -p stockade', "bash", comp])
    require(p.returncode == 0 and p.stdout.strip() ==
            "complete -F _stockade stockade" and p.stderr == "",
            "the completion loads and registers _stockade", p)
    exe = c.bin(c.dest)
    cases = [
        (["stockade", "ch"], ["check"]),
        (["stockade", "m"], ["mkdir", "mv", "mcp"]),
        (["stockade", "policy", ""], ["show", "default", "check", "--help"]),
        (["stockade", "eval", ""], ["layers", "isolation", "corpus",
                                    "filter", "--help"]),
        (["stockade", "check", "--only", "lim"], ["limits"]),
        (["stockade", "check", "--only", "limits,pid"], ["limits,pid_ns"]),
        ([exe, "check", "--only", "user_ns.setg"],
         ["user_ns.setgroups_denied"]),
        (["stockade", "run", "--format", ""], ["stream", "json", "text"]),
        (["stockade", "run", "--workspace", c.dest + "/us"],
         [c.dest + "/usr"]),
    ]
    bad = []
    for words, want in cases:
        got = complete(comp, words)
        if sorted(got) != sorted(want):
            bad.append(f"{words[1:]}: {got}, expected {want}")
    # Every option of every --help is offered after its command.
    for words in HELPS:
        if words in (["policy"], ["eval"]):
            continue  # their usage is the subcommands'
        offered = set(complete(comp, ["stockade"] + words + ["--"]))
        offered |= set(complete(comp, ["stockade"] + words + ["-"]))
        for opt in usage_options(exe, words):
            if opt not in offered and not (words == ["run"] and opt == "--"):
                bad.append(f"stockade {' '.join(words)}: {opt} not offered")
    require(not bad, "\n".join(bad))


def main():
    c = Ctx()
    tests = [("meson install --destdir into a temporary directory", t_install),
             ("the installed files and their modes", t_layout),
             ("stockade --version from the installed tree", t_version),
             ("the launcher is found relative to the installed broker",
              t_relative),
             ("stockade check runs the installed stockade-check; without "
              "it, and for eval, a named error", t_verify)]
    for title, pre, env in c.users():
        tests.append((f"stockade doctor {title}",
                      lambda c, a=(title, pre, env): t_doctor(c, *a)))
        tests.append((f"stockade run -- python3 -c 'print(1)' {title}",
                      lambda c, a=(title, pre, env): t_run(c, *a)))
        tests.append((f"stockade check --prefix TREE --only limits {title}",
                      lambda c, a=(title, pre, env): t_check(c, *a)))
    tests += [("--help of every command on stdout, errors on stderr", t_help),
              ("the man pages render without warnings", t_man),
              ("the man pages document every command, option, key and method",
               t_man_complete),
              ("the bash completion loads and completes", t_completion)]
    print(f"1..{len(tests)}")
    failed = 0
    try:
        for n, (title, fn) in enumerate(tests, 1):
            if n > 1 and c.dest is None:
                print(f"not ok {n} - {title} (nothing installed)")
                failed += 1
                continue
            try:
                if f"uid {NOBODY}" in title and shutil.which("setpriv") is None:
                    raise Skip("setpriv not found (util-linux)")
                fn(c)
                print(f"ok {n} - {title}")
            except Skip as exc:
                failed += tap_skip(n, title, exc)
            except Exception as exc:  # noqa: BLE001 - reported as TAP
                tap_fail(n, title, exc)
                failed += 1
                if fn is t_install:
                    c.dest = None
            sys.stdout.flush()
    finally:
        remove_all(c.cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
