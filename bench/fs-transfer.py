#!/usr/bin/env python3
"""fs-transfer.py: bulk transfers through `stockade serve` against cp and tar.

Run by hand (not a test):

    bench/fs-transfer.py [--build DIR] [--dir SCRATCH] [--runs N]
                         [--big-mib 1024] [--files 10000]
                         [--only big|many] [--markdown]

Everything happens in SCRATCH (default $TMPDIR or /tmp), so the baseline and
stockade use the same disk. One `stockade serve --workspace WS --socket S`
session is started; the client is build/bench/fsbench (bench/fsbench.c),
which passes descriptors with SCM_RIGHTS so the broker copies in the kernel.

  big put   cp HOST_FILE COPY            vs  fs.write with "fd" (1 request)
  big get   cp WS_FILE HOST_COPY         vs  fs.read with "fd"  (1 request)
  many in   tar -C SRC -cf - . | tar -C DST -xf -
                                         vs  tar -C SRC -cf - . into a pipe
                                             passed with one fs.unpack
  many out  tar from the workspace to a host directory
                                         vs  one fs.pack into a pipe read by
                                             tar -C DST -xf -

In both many-file rows tar runs on one side of the pipe and the broker on
the other, as the two tars of the baseline do; the stockade figure
includes that tar's start and end.

--markdown prints only the table's rows (for bench/run): transfer,
baseline command, baseline median, stockade median, ratio, target.

Runs alternate between the two sides: in odd runs the baseline goes
first, in even runs stockade. Each figure is the median of RUNS runs,
destinations removed before each run, and before each timed side
(untimed, settle()): sync(2), as root the clean page cache dropped, the
source read back in. Both sides so start with no dirty data, a source in
the page cache and the same free memory: without it, a gigabyte written
just before is one the kernel writes back during the next copy, and the
second side of a pair gets memory the VM's host must fault in (the side
that ran first won 9 pairs of 10, issue 27). Each run's figures go to
stderr. The ratio is baseline time / stockade time: above 1.0 stockade is
faster. The stockade figures exclude the session's start (one serve per benchmark); the
baselines include their processes' start (cp, tar: about 1 ms).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def warm(path):
    """Reads PATH (a file, or every file under a directory) so that it
    is in the page cache."""
    files = [path] if not os.path.isdir(path) else [
        os.path.join(d, n) for d, _, ns in os.walk(path) for n in ns]
    buf = bytearray(1 << 20)
    for name in files:
        with open(name, "rb", buffering=0) as f:
            while f.readinto(buf):
                pass


def settle(source):
    """The same start for every timed side: no dirty data (sync), as
    root the clean page cache dropped, then SOURCE read back in. Without
    the drop, the side that runs second finds the memory freed by the
    removals before the pair taken by the first side's pages and by the
    loop device's own cache of them; on this VM, memory the guest has not
    used lately costs the host's faults, and a 1 GiB copy into it took
    4 to 5 times as long (docs/benchmarks.md, issue 27)."""
    os.sync()
    if os.geteuid() == 0:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1")
    warm(source)


def timed(cmd, source):
    settle(source)  # untimed
    t0 = time.monotonic()
    subprocess.run(cmd, check=True)
    return (time.monotonic() - t0) * 1000.0


def fsbench(client, sock, source, *args):
    settle(source)  # untimed, as timed()
    out = subprocess.run([client, sock, *map(str, args)], check=True,
                         stdout=subprocess.PIPE, text=True)
    return float(out.stdout.strip())


def both(first_base, base, ours):
    """Runs the two sides of one row, the baseline first when FIRST_BASE;
    returns (baseline ms, stockade ms)."""
    if first_base:
        b = base()
        return b, ours()
    o = ours()
    return base(), o


def clear(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


# transfer -> (label, baseline command, target ratio)
ROWS = {
    "big put": ("SIZE in (`fs.write`, descriptor)", "`cp FILE COPY`", "0.9"),
    "big get": ("SIZE out (`fs.read`, descriptor)", "`cp WS_FILE COPY`",
                "0.9"),
    "many in": ("COUNT × 4 KiB in (`tar c` into `fs.unpack`)",
                "`tar c \\| tar x` into the workspace", "1.0"),
    "many out": ("COUNT × 4 KiB out (`fs.pack` into `tar x`)",
                 "`tar c \\| tar x` to the host", "1.0"),
}


def many_run(a, rows, client, sock, ws, src, scratch):
    """One run of the two many-file rows, each side into a fresh
    directory."""
    # many in: both sides write into a fresh directory inside
    # the workspace. Nothing is removed between runs: ext4 skips
    # inodes freed in the last seconds (recently_deleted), so
    # creating right after deleting thousands of files measures
    # the allocator's bitmap scan, not the transfer.
    run = len(rows["many in"][0])
    dst = os.path.join(ws, f"tar-{run}")
    mine = os.path.join(ws, f"many-{run}")
    for d in (dst, mine):
        os.mkdir(d)
        if os.geteuid() == 0:
            st = os.stat(ws)
            os.chown(d, st.st_uid, st.st_gid)
    first = run % 2 == 0
    b, o = both(first, lambda: timed(
        ["sh", "-c", 'tar -C "$1" -cf - . | tar -C "$2" -xf -',
         "sh", src, dst], src),
        lambda: fsbench(client, sock, src, "unpack", src, f"many-{run}"))
    add(rows, "many in", run, first, b, o)
    # many out: from the files just unpacked, into fresh host dirs
    dst2 = os.path.join(scratch, f"tar-out-{run}")
    out = os.path.join(scratch, f"out-{run}")
    os.mkdir(dst2)
    os.mkdir(out)
    b, o = both(first, lambda: timed(
        ["sh", "-c", 'tar -C "$1" -cf - . | tar -C "$2" -xf -',
         "sh", mine, dst2], mine),
        lambda: fsbench(client, sock, mine, "pack", f"many-{run}", out))
    add(rows, "many out", run, first, b, o)


def add(rows, key, run, first_base, base, ours):
    """Records one run's pair of ROW KEY and prints it on stderr."""
    rows[key][0].append(base)
    rows[key][1].append(ours)
    print(f"run {run + 1}: {key}: baseline {base:.1f} ms, stockade "
          f"{ours:.1f} ms, {'baseline' if first_base else 'stockade'} "
          f"first", file=sys.stderr)


def big_run(rows, client, sock, ws, big, scratch):
    """One run of the two 1 GiB rows."""
    run = len(rows["big put"][1])
    first = run % 2 == 0
    # big put. A new name each run, the previous one removed untimed: an
    # overwrite would time the old file's freeing too, which cp's side
    # does not pay.
    clear(os.path.join(scratch, "cp-copy"))
    if run > 0:
        clear(os.path.join(ws, f"big-{run - 1}"))
    b, o = both(first,
                lambda: timed(["cp", big, os.path.join(scratch, "cp-copy")],
                              big),
                lambda: fsbench(client, sock, big, "put-big", big,
                                f"big-{run}"))
    add(rows, "big put", run, first, b, o)
    # big get (from the workspace file just written)
    mine = os.path.join(ws, f"big-{run}")
    clear(os.path.join(scratch, "cp-back"))
    clear(os.path.join(scratch, "got"))
    b, o = both(first,
                lambda: timed(["cp", mine, os.path.join(scratch, "cp-back")],
                              mine),
                lambda: fsbench(client, sock, mine, "get-big", f"big-{run}",
                                os.path.join(scratch, "got")))
    add(rows, "big get", run, first, b, o)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--build", default=os.path.join(here, "..", "build"))
    ap.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--big-mib", type=int, default=1024)
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--only", choices=("big", "many"))
    ap.add_argument("--markdown", action="store_true",
                    help="print only the Markdown table rows")
    a = ap.parse_args()
    do_big = a.only in (None, "big")
    do_many = a.only in (None, "many")
    build = os.path.abspath(a.build)
    stockade = os.path.join(build, "stockade")
    client = os.path.join(build, "bench", "fsbench")
    for p in (stockade, client):
        if not os.access(p, os.X_OK):
            sys.exit(f"fs-transfer.py: {p} is missing: build first")

    scratch = tempfile.mkdtemp(prefix="stockade-bench-", dir=a.dir)
    serve = None
    try:
        ws = os.path.join(scratch, "ws")
        os.mkdir(ws, 0o700)
        if os.geteuid() == 0:
            # As root, stockade refuses a root-owned workspace (README.md,
            # "Running as root"): give it to the user jobs run as.
            os.chown(scratch, 0, 0)
            os.chmod(scratch, 0o755)
            os.chown(ws, 65534, 65534)
        sock = os.path.join(scratch, "serve.sock")
        policy = os.path.join(scratch, "bench.ini")
        with open(policy, "w") as f:
            f.write("[files]\n"
                    f"max_file_mb = {a.big_mib + 1}\n"
                    # The broker counts what it wrote; it does not see
                    # the untimed host-side removals between runs.
                    "workspace_mb = 16777216\n"
                    "max_files = 100000000\n")
        serve = subprocess.Popen([stockade, "serve", "--workspace", ws,
                                  "--policy", policy, "--socket", sock])
        for _ in range(500):
            if os.path.exists(sock):
                break
            time.sleep(0.01)
        else:
            sys.exit("fs-transfer.py: serve did not create its socket")

        big = os.path.join(scratch, "big")
        if do_big:
            with open(big, "wb") as f:
                chunk = os.urandom(1 << 20)
                for _ in range(a.big_mib):
                    f.write(chunk)
        src = os.path.join(scratch, "src")
        os.mkdir(src)
        for i in range(a.files if do_many else 0):
            with open(os.path.join(src, f"f{i:05d}"), "wb") as f:
                f.write(os.urandom(4096))
        os.sync()

        rows = {k: ([], []) for k in ROWS
                if (do_big if k.startswith("big") else do_many)}
        for _ in range(a.runs):
            if do_many:
                many_run(a, rows, client, sock, ws, src, scratch)
            if not do_big:
                continue
            big_run(rows, client, sock, ws, big, scratch)
        if not a.markdown:
            print("| transfer | baseline | baseline median | "
                  "stockade median | ratio | target |")
            print("| --- | --- | --- | --- | --- | --- |")
        for k, (base, ours) in rows.items():
            b, s = statistics.median(base), statistics.median(ours)
            label, cmd, target = ROWS[k]
            label = label.replace("COUNT", f"{a.files:,}")
            # "GiB" or "big" marks the big-file rows for bench/run.
            label = label.replace("SIZE", f"{a.big_mib // 1024} GiB"
                                  if a.big_mib % 1024 == 0 else
                                  f"{a.big_mib} MiB big file")
            print(f"| {label} | {cmd} | {b:.1f} ms | {s:.1f} ms | "
                  f"{b / s:.2f} | {target} |")
        if a.markdown:
            return
        print(f"runs: {a.runs}; big file {a.big_mib} MiB; "
              f"{a.files} files of 4 KiB; scratch on "
              f"{subprocess.run(['stat', '-f', '-c', '%T', scratch], capture_output=True, text=True).stdout.strip()}; "
              f"load average {open('/proc/loadavg').read().split()[:3]}")
    finally:
        if serve is not None:
            serve.terminate()
            serve.wait(timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
