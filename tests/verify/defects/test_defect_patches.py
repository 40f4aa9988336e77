#!/usr/bin/python3
# Planted defects are patches, never code in the product (issue 24, item 3;
# docs/defects.md):
#   1. at least 40 distinct defects, each verify/defects/GROUP/NAME.patch;
#   2. every patch still applies to the sources with no fuzz, and reverses
#      (tools/defect-matrix --apply-check): a patch that an edit nearby
#      broke fails here, not silently in the matrix;
#   3. no product source (broker/, launcher/, shared/, policy/) holds a
#      test switch: no PLANTED(), no STOCKADE_PLANT, no plant.h;
#   4. strings(1) of the built programs holds no defect name.
import os
import re
import subprocess
import sys

SWITCH_RE = re.compile(r"\bPLANTED\s*\(|STOCKADE_PLANT|plant\.h|STOCKADE_PLANTED")


def main():
    root = os.environ["STOCKADE_SOURCE_ROOT"]
    bindir = os.path.dirname(os.path.abspath(os.environ["STOCKADE_BIN"]))
    names = []
    top = os.path.join(root, "verify", "defects")
    for g in sorted(os.listdir(top)):
        for fn in sorted(os.listdir(os.path.join(top, g))):
            if fn.endswith(".patch"):
                names.append(fn[:-len(".patch")])
    print("1..4")
    ok1 = len(names) >= 40 and len(set(names)) == len(names)
    print(f"{'ok' if ok1 else 'not ok'} 1 - at least 40 distinct planted "
          f"defects, one patch each ({len(names)})")

    p = subprocess.run([sys.executable, os.path.join(root, "tools", "defect-matrix"),
                        "--apply-check"], capture_output=True, text=True)
    ok2 = p.returncode == 0
    print(f"{'ok' if ok2 else 'not ok'} 2 - every defect patch applies to the "
          "sources and reverses (tools/defect-matrix --apply-check)")
    if not ok2:
        for line in (p.stdout + p.stderr).splitlines():
            print(f"# {line}")

    found = []
    for d in ("broker", "launcher", "shared", "policy"):
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h", ".def", ".build")):
                    continue
                path = os.path.join(dirpath, fn)
                with open(path, encoding="utf-8") as f:
                    for no, line in enumerate(f, 1):
                        if SWITCH_RE.search(line):
                            found.append(f"{os.path.relpath(path, root)}:{no}: "
                                         f"{line.strip()}")
    ok3 = not found
    print(f"{'ok' if ok3 else 'not ok'} 3 - no test switch in the product "
          "sources (PLANTED, STOCKADE_PLANT, plant.h)")
    for f in found:
        print(f"# {f}")

    seen = []
    for exe in ("stockade", "stockade-launcher"):
        out = subprocess.run(["strings", "-a", "-n", "4", os.path.join(bindir, exe)],
                             capture_output=True, text=True, check=True).stdout
        # strings works: a string every binary holds is there.
        if "stockade" not in out:
            seen.append(f"{exe}: strings(1) found not even \"stockade\"")
        seen += [f"{exe}: {n}" for n in names + ["STOCKADE_PLANT"] if n in out]
    ok4 = not seen
    print(f"{'ok' if ok4 else 'not ok'} 4 - no defect name in the shipped "
          "programs")
    for s in seen:
        print(f"# found {s}")
    return 0 if ok1 and ok2 and ok3 and ok4 else 1


if __name__ == "__main__":
    sys.exit(main())
