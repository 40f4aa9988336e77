# check_corpus.py SOURCE_DIR BUILD_DIR: checks the attack corpus against
# its contract (README.md here; /docs/evidence.md): file names, the header
# keys of each attack, the positional argv check, README.md's one line per
# attack, and that the build directory holds every attack ready to run (C
# built without extension, Python and shell copied byte for byte). Prints
# TAP-free text and exits 1 at the first list of problems.
#
# It checks the corpus, not what the attacks do: `stockade eval corpus`
# (meson test --suite attacks) runs them.

import os
import re
import stat
import sys

NAME = re.compile(r"^(\d\d)-[a-z0-9]+(?:-[a-z0-9]+)*\.(py|sh|c)$")
KEYS = {"family", "tries", "source", "exfil", "fileapi", "stopped-when",
        "attempted-when", "by-design"}
# What an attack may declare lets it through by design (issue 25): the
# one host an allow-list names is an exit.
BY_DESIGN = {"allowed-host-exit"}
# What being stopped looks like (docs/evidence.md, "What stopped means";
# verify/eval/eval_corpus.c stop_words): a closed vocabulary.
STOP_WORDS = {"canary-unread", "pwned-absent", "files-intact",
              "decoy-unsignalled", "no-survivor", "output-capped",
              "terminal-untouched"}
ATTEMPT_WORDS = {"marker"}
FAMILIES = {"mistake", "injection", "tricked-helper"}
MIN_TOTAL, MIN_C, MIN_SH = 44, 6, 8


def header(path, ext):
    """The key/value lines of the file's first comment block, in order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    block = []
    if ext == "c":
        if not lines or lines[0] != "/*":
            return None
        for line in lines[1:]:
            if line.strip() == "*/":
                break
            block.append(line)
        pat = re.compile(r"^ \* ([a-z-]+): (.+)$")
    else:
        for line in lines:
            if not line.startswith("#"):
                break
            block.append(line)
        pat = re.compile(r"^# ([a-z-]+): (.+)$")
    return [m.groups() for m in map(pat.match, block) if m and m.group(1) in KEYS]


def check(src, build):
    problems = []
    names = sorted(n for n in os.listdir(src) if NAME.match(n))
    strays = sorted(n for n in os.listdir(src) if re.match(r"^\d\d-", n)
                    and n not in names)
    problems += [f"{n}: not a valid attack name (NN-short-name.py|sh|c)" for n in strays]
    numbers = [NAME.match(n).group(1) for n in names]
    problems += [f"number {x} used twice" for x in sorted(set(numbers))
                 if numbers.count(x) > 1]
    exts = [NAME.match(n).group(2) for n in names]
    if len(names) < MIN_TOTAL or exts.count("c") < MIN_C or exts.count("sh") < MIN_SH:
        problems.append(f"{len(names)} attacks ({exts.count('c')} C, "
                        f"{exts.count('sh')} shell): at least {MIN_TOTAL}, "
                        f"{MIN_C} C and {MIN_SH} shell wanted")
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for n in names:
        path = os.path.join(src, n)
        ext = NAME.match(n).group(2)
        keys = header(path, ext)
        if keys is None:
            problems.append(f"{n}: a C attack starts with its /* header */")
            continue
        single = {}
        for k, v in keys:
            if k != "fileapi" and k in single:
                problems.append(f"{n}: {k} given twice")
            single.setdefault(k, v)
        for k in ("family", "tries", "source", "exfil", "stopped-when",
                  "attempted-when"):
            if k not in single:
                problems.append(f"{n}: no '{k}:' line in the header")
        if single.get("family", "mistake") not in FAMILIES:
            problems.append(f"{n}: family must be one of {sorted(FAMILIES)}")
        if single.get("exfil", "no") not in ("yes", "no"):
            problems.append(f"{n}: exfil must be yes or no")
        source = single.get("source", "none")
        if source != "none" and not re.match(r"^https?://\S+$", source):
            problems.append(f"{n}: source must be a URL or none")
        words = [w for w in re.split(r"[,\s]+", single.get("stopped-when", "")) if w]
        if "stopped-when" in single and (not words or set(words) - STOP_WORDS
                                         or len(set(words)) != len(words)):
            problems.append(f"{n}: stopped-when lists words of {sorted(STOP_WORDS)}, each once")
        if single.get("exfil") == "yes" and "canary-unread" not in words:
            problems.append(f"{n}: an exfil attack is stopped when its canary is unread "
                            "(stopped-when: canary-unread)")
        if single.get("by-design", "allowed-host-exit") not in BY_DESIGN:
            problems.append(f"{n}: by-design must be one of {sorted(BY_DESIGN)}")
        if single.get("attempted-when", "marker") not in ATTEMPT_WORDS:
            problems.append(f"{n}: attempted-when must be one of {sorted(ATTEMPT_WORDS)}")
        for k, v in keys:
            if k == "fileapi" and not re.match(r"^(get|put) [^\s/][^\s]*$", v):
                problems.append(f"{n}: fileapi must be 'get NAME' or 'put NAME'")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        guard = {"py": "len(sys.argv) < 9", "sh": "[ $# -ge 8 ]", "c": "argc < 9"}[ext]
        if guard not in text:
            problems.append(f"{n}: no check of the 8 positional arguments ({guard})")
        if single.get("attempted-when") == "marker" and "ATTEMPTED" not in text:
            problems.append(f"{n}: attempted-when: marker, but it never prints "
                            "ATTEMPTED <token>")
        if not re.search(rf"^\| `{re.escape(n)}` \|", readme, re.M):
            problems.append(f"{n}: no line in README.md's table")
        built = os.path.join(build, n[:-2] if ext == "c" else n)
        if not os.path.exists(built):
            problems.append(f"{n}: not in the build directory ({built})")
        elif ext == "c":
            if not os.stat(built).st_mode & stat.S_IXUSR:
                problems.append(f"{built}: not executable")
        else:
            with open(built, encoding="utf-8") as f:
                if f.read() != text:
                    problems.append(f"{built}: differs from {path}")
    for row in re.findall(r"^\| `([^`]+)` \|", readme, re.M):
        if row not in names:
            problems.append(f"README.md lists {row}, which is not an attack here")
    return names, problems


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_corpus.py SOURCE_DIR BUILD_DIR")
    names, problems = check(sys.argv[1], sys.argv[2])
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(names)} attacks: names, headers, argv checks, README.md "
          f"and the build directory agree")


if __name__ == "__main__":
    main()
