#!/usr/bin/python3
# A default build carries no trace of the planted defects (issue 7,
# docs/defects.md): strings(1) on stockade, stockade-launcher,
# stockade-check, stockade-eval and stockade-probe finds none of the defect names of shared/plants-*.def,
# nor the variable that switches them on, nor the option that lists them.
# Registered only for builds without -Dplanted_defects=true.
import os
import re
import subprocess
import sys

DEF_RE = re.compile(r'PLANT_DEFECT\(\s*(\w+)\s*,')


def main():
    root = os.environ["STOCKADE_SOURCE_ROOT"]
    bindir = os.path.dirname(os.path.abspath(os.environ["STOCKADE_BIN"]))
    names = []
    for g in ("jail", "seccomp", "fs", "results", "boundary"):
        with open(os.path.join(root, "shared", f"plants-{g}.def")) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        names += DEF_RE.findall(text)
    print("1..2")
    ok = len(names) >= 40 and len(set(names)) == len(names)
    print(f"{'ok' if ok else 'not ok'} 1 - at least 40 distinct planted defects "
          f"are listed ({len(names)})")
    words = names + ["STOCKADE_PLANT", "--list-plants", "planted defect"]
    found = []
    for exe in ("stockade", "stockade-launcher", "stockade-check",
                "stockade-eval", "stockade-probe"):
        out = subprocess.run(["strings", "-a", "-n", "4", os.path.join(bindir, exe)],
                             capture_output=True, text=True, check=True).stdout
        # strings works: a string every binary holds is there.
        if "stockade" not in out:
            found.append(f"{exe}: strings(1) found not even \"stockade\"")
        for w in words:
            if w in out:
                found.append(f"{exe}: {w}")
    print(f"{'ok' if not found else 'not ok'} 2 - no defect name, STOCKADE_PLANT "
          "or --list-plants in the default build's binaries")
    for f in found:
        print(f"# found {f}")
    return 0 if ok and not found else 1


if __name__ == "__main__":
    sys.exit(main())
