#!/usr/bin/python3
# `stockade eval corpus` as a test (suite 'attacks', issue 6): every
# program of tests/verify/eval/attacks/ against the full product, which must stop
# them all; the eval's exit status is the test's (0: all stopped; 1: one
# succeeded; 70: a run could not be judged), its table the log.
#
# With STOCKADE_TEST_AS_USER=65534 and run as root, the eval runs as uid
# 65534 (setpriv), with the two binaries, the built corpus and the C
# attacks' sources (their headers) copied into a /tmp directory that user
# can read: the build tree may sit where others may not enter.
import os
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "lib"))  # tests/lib: stockade_test
from stockade_test import NOBODY, remove_all, traversable_tmp, unprivileged_binaries


def copy_corpus(built, source, cleanup):
    d = tempfile.mkdtemp(prefix="stockade-attacks-", dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    for folder, wanted in ((built, None), (source, ".c")):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not os.path.isfile(path) or (wanted and not name.endswith(wanted)):
                continue
            shutil.copyfile(path, os.path.join(d, name))
            mode = os.stat(path).st_mode & 0o755
            os.chmod(os.path.join(d, name), mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return d


def main():
    stockade = os.environ["STOCKADE_BIN"]
    built = os.environ["STOCKADE_ATTACKS_DIR"]
    source = os.path.join(os.environ["STOCKADE_SOURCE_ROOT"], "tests", "verify", "eval", "attacks")
    cleanup = []
    cmd = [stockade, "eval", "corpus", "--attacks", built, "--attacks-src", source]
    if os.environ.get("STOCKADE_TEST_AS_USER") == str(NOBODY) and os.geteuid() == 0:
        stockade = unprivileged_binaries(stockade, cleanup)
        corpus = copy_corpus(built, source, cleanup)
        cmd = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
               stockade, "eval", "corpus", "--attacks", corpus, "--attacks-src", corpus]
    print("$ " + " ".join(cmd), flush=True)
    try:
        rc = subprocess.run(cmd, check=False, timeout=540).returncode
    finally:
        remove_all(cleanup)
    return rc


if __name__ == "__main__":
    sys.exit(main())
