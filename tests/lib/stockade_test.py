# The helpers the Python tests share (test_example.py, test_fsattack.py):
# TAP lines and diagnostics, the skip that STOCKADE_MUST_WORK=1 turns into
# a failure, what running stockade as uid 65534 needs (a directory that
# user can enter, and the two binaries copied into one), and the removal
# of the test's directories at the end.
#
# Imported from beside the test scripts: python puts a script's own
# directory first on sys.path.

import itertools
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

NOBODY = 65534
EXIT_NO_KERNEL_LAYER = 69   # README.md, "Exit status": a refusal
MUST_WORK = os.environ.get("STOCKADE_MUST_WORK") == "1"


_I386_PROBE = r"""
import ctypes, mmap, os, resource, signal
signal.signal(signal.SIGSEGV, signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
code = bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])  # i386 getpid; ret
m = mmap.mmap(-1, mmap.PAGESIZE,
              prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
f = ctypes.CFUNCTYPE(ctypes.c_int)(
    ctypes.addressof(ctypes.c_char.from_buffer(m)))
os._exit(0 if f() == os.getpid() else 1)
"""
_i386_entry = None


def kernel_has_i386_entry():
    """Whether this kernel has the i386 system call entry (`int $0x80`
    from a 64-bit process): a child outside any filter makes the i386
    getpid and gets its pid back, or dies of SIGSEGV, as on a kernel
    built without IA32 emulation or booted with ia32_emulation=0 (then
    False). Anything else (another architecture, another ending) is
    True: a test never excuses a job on a guess. Asked once per process.
    The C tests ask the same way (tests/lib/x86_abi.h)."""
    global _i386_entry
    if _i386_entry is None:
        import platform
        if platform.machine() != "x86_64":
            _i386_entry = True
        else:
            rc = subprocess.run([sys.executable, "-c", _I386_PROBE],
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                timeout=30).returncode
            _i386_entry = rc != -signal.SIGSEGV
    return _i386_entry


class Skip(Exception):
    pass


def diag(text):
    """Prints TEXT as TAP diagnostics, one "# " line per line."""
    for line in str(text).splitlines() or [""]:
        print(f"# {line}")
    sys.stdout.flush()


def traversable_tmp():
    """A temporary-directory base that another user can enter."""
    base = tempfile.gettempdir()
    path = os.path.abspath(base)
    while True:
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return "/tmp"
        if path == "/":
            return base
        path = os.path.dirname(path)


def unprivileged_binaries(stockade_bin, cleanup):
    """Copies stockade, stockade-launcher and (when built) stockade-check,
    stockade-eval, stockade-probe and stockade-proxy (the egress proxy,
    issue 25) into a 0755 directory of their own (the build tree may sit
    under a directory other users cannot enter)."""
    d = tempfile.mkdtemp(prefix="stockade-bin-", dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    src_dir = os.path.dirname(os.path.abspath(stockade_bin))
    for name in ("stockade", "stockade-launcher", "stockade-check",
                 "stockade-eval", "stockade-probe", "stockade-proxy"):
        src = os.path.join(src_dir, name)
        if name not in ("stockade", "stockade-launcher") and not os.path.exists(src):
            continue  # only check, eval and [network] allow rules need them
        if not os.path.exists(src):
            raise AssertionError(f"{src} is missing (it must sit beside {stockade_bin})")
        shutil.copyfile(src, os.path.join(d, name))
        os.chmod(os.path.join(d, name), 0o755)
    return os.path.join(d, "stockade")


def tap_skip(number, title, exc):
    """Prints the TAP line of test NUMBER (TITLE) that raised Skip EXC:
    "ok ... # SKIP", or "not ok" under STOCKADE_MUST_WORK=1 (style.md rule
    23). Returns 1 when that is a failure, else 0."""
    reason = " ".join(str(exc).split())  # one TAP line
    if MUST_WORK:
        print(f"not ok {number} - {title} (would skip, but "
              f"STOCKADE_MUST_WORK=1: {reason})")
        return 1
    print(f"ok {number} - {title} # SKIP {reason}")
    return 0


def tap_fail(number, title, exc):
    """Prints the TAP line of test NUMBER (TITLE) that raised EXC, and EXC
    as diagnostics (an AssertionError's message alone)."""
    print(f"not ok {number} - {title}")
    diag(f"{type(exc).__name__}: {exc}"
         if not isinstance(exc, AssertionError) else exc)


def tap_case(number, title, fn, *args):
    """Runs FN(*ARGS) as TAP test NUMBER (TITLE): "ok" with the note FN
    returns and the seconds it took; tap_skip when it raises Skip;
    "not ok" (tap_fail) when it raises an assertion, OS, value, key, type
    or subprocess error. Returns 1 when the test failed, else 0."""
    try:
        t0 = time.monotonic()
        note = fn(*args)
        print(f"ok {number} - {title} ({note}; "
              f"{time.monotonic() - t0:.1f} s)")
        return 0
    except Skip as exc:
        return tap_skip(number, title, exc)
    except (AssertionError, OSError, ValueError, KeyError, TypeError,
            subprocess.SubprocessError) as exc:
        tap_fail(number, title, exc)
        return 1
    finally:
        sys.stdout.flush()


def alive_with(mark):
    """The pids of the host's processes other than this one whose command
    line holds the string MARK (a set; processes gone while read are left
    out). A job's writes to /work are staged until it ends (issue 26), so
    a test sees that a job has got somewhere by a process whose command
    line carries a mark built at run time (absent from the job's first
    command line), never by a file in /work."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if mark.encode() in f.read():
                    found.add(int(name))
        except OSError:
            continue
    return found


def wait_marked(mark, alive, timeout, what="the job never started"):
    """Waits up to TIMEOUT seconds for a process with MARK in its command
    line (alive_with); ALIVE() is false once waiting is pointless (the
    process under test has ended). Raises AssertionError(WHAT) otherwise."""
    deadline = time.monotonic() + timeout
    while not alive_with(mark):
        if not alive() or time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.02)


def remove_all(paths):
    """Removes the directories PATHS, or lists them when
    STOCKADE_TEST_KEEP=1 (debugging)."""
    if os.environ.get("STOCKADE_TEST_KEEP") == "1":
        diag("kept: " + " ".join(paths))
        return
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)
        if os.path.exists(path):
            # A tree deeper than rmtree copes with: the workspace's own
            # remover, as root or its owner.
            subprocess.run(["rm", "-rf", "--one-file-system", path],
                           timeout=120, check=False)


_result_counter = itertools.count(1)


def save_result(result, test=None):
    """Keeps one job result for the result-schema test
    (tests/system/validate_results.py): when STOCKADE_RESULTS_DIR is set, writes
    RESULT (the JSON text as received, str or bytes, or an already parsed
    dict) as the file <TEST>-<pid>-<counter>.json in that directory, made
    mode 01777 when missing (the 65534 variants write there too). TEST
    defaults to the script's name without "test_" and ".py". Text that is
    not a JSON object with a "status" key is not a result and is not kept.
    Never raises: a failure is printed as a TAP diagnostic (the test goes
    on; result-schema reports what is missing)."""
    directory = os.environ.get("STOCKADE_RESULTS_DIR")
    if not directory:
        return
    try:
        if isinstance(result, dict):
            obj = result
            data = json.dumps(result, ensure_ascii=False).encode("utf-8",
                                                                  "surrogatepass")
        else:
            data = result.encode("utf-8", "surrogateescape") \
                if isinstance(result, str) else bytes(result)
            data = data.strip()
            try:
                obj = json.loads(data)
            except ValueError:
                return
        if not isinstance(obj, dict) or "status" not in obj:
            return
        if test is None:
            test = os.path.basename(sys.argv[0] or "python")
            test = test[:-3] if test.endswith(".py") else test
            test = test[5:] if test.startswith("test_") else test
        if not os.path.isdir(directory):
            try:
                os.mkdir(directory)
                os.chmod(directory, 0o1777)
            except FileExistsError:
                pass
        name = f"{test}-{os.getpid()}-{next(_result_counter)}.json"
        tmp = os.path.join(directory, "." + name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data + b"\n")
        os.rename(tmp, os.path.join(directory, name))
    except (OSError, TypeError, ValueError) as exc:
        diag(f"could not keep a result in {directory}: {exc}")
