#!/usr/bin/env python3
# A scripted model: a stand-in for a real one, driving "run code" sessions
# through stockade and taking its next step from the hint alone (issue 4,
# "The tool a model sees"; docs/tool.md).
#
# Registered in tests/meson.build as test 'model' (TAP), with STOCKADE_BIN
# (the launcher beside it), STOCKADE_SOURCE_ROOT, STOCKADE_RESULTS_DIR and
# STOCKADE_LIMIT_PROGRAMS in its environment.
#
# Three parts:
#
# - ScriptedModel reads the compact text reply (`stockade run --format
#   text`) as a model would, but acts on nothing but the phrases of its
#   `hint:` line (the stable phrases of docs/tool.md): never the status
#   line, the figures, or what the test knows. Only where the hint tells it
#   to read stderr does it read the stderr section. Given a hint, it names
#   one action ("bound_loops", "stream_input", "inspect_signal SIGSEGV",
#   ...); a hint that matches no failure phrase means the job is done; a
#   hint that matches two unrelated phrases, or names more than one signal,
#   leaves it unable to choose, and the session fails with that hint.
# - Framework is the agent framework: it maps one tool call (the input schema
#   of docs/tool.md: language, code, stdin, timeout_seconds, memory_mb) to
#   `stockade run` exactly as docs/tool.md says, and hands the model the
#   text reply.
# - One session per failure kind, each from a bad first program: the test
#   asserts the status of the first reply (both in text and, from a second
#   run of the same call, in JSON), the action the model chose, that it did
#   not send the same program again, that the program it chose from the
#   hint ends "ok", and what that program left in /work.
#
# Every program is bounded when run bare (no sandbox): at most about 220 MB
# of memory, 32 MB of disk, 32 processes, 8 s.
#
# Sessions run as the invoking user; when that is root, again as uid 65534
# (setpriv, the binaries copied by stockade_test.unprivileged_binaries).
# Workspaces belong to 65534 when the test is root (a root broker refuses
# a root-owned workspace).
#
# Regenerating the replies shown in docs/tool.md (the first reply of the
# sessions marked as examples, as real output of this build):
#
#   STOCKADE_BIN=build/stockade python3 tests/system/test_model.py \
#       --write-examples /tmp/examples --update-doc docs/tool.md
#
# writes each example as STATUS.json (indented) and STATUS.txt into
# the directory, the markdown block into examples.md, and replaces the
# block between the two "generated" markers of docs/tool.md with it.
# STOCKADE_TEST_ONLY=WORD runs only the sessions whose title holds WORD;
# STOCKADE_TEST_KEEP=1 keeps the directories.

import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           kernel_has_i386_entry,
                           remove_all, save_result, tap_fail, tap_skip,
                           traversable_tmp, unprivileged_binaries)

STATUSES = ("ok", "exit_nonzero", "timeout", "cpu_limit", "memory_limit",
            "process_limit", "output_limit", "file_size_limit", "disk_full",
            "crash", "policy_violation", "sandbox_error", "cancelled")
FIGURES = ("exit_code", "signal", "wall_ms", "cpu_ms", "peak_memory_kb",
           "peak_processes", "enforcement")


# --- the scripted model ------------------------------------------------------

class Confused(Exception):
    """The hint did not let the model choose one next step."""


# The stable phrases of docs/tool.md and the action each one leads to. The
# exit-code phrases are more specific than "read stderr" (a hint about exit
# code 127 may also say to read stderr); a sandbox failure outranks all.
PHRASES = (
    ("bound its loops", "bound_loops"),
    ("make the computation cheaper", "cheaper"),
    ("stream large inputs", "stream_input"),
    ("bounded pool", "bounded_pool"),
    ("write large results to a file in /work", "write_to_file"),
    ("write it to a file in /work", "write_to_file"),
    ("smaller files", "smaller_files"),
    ("delete temporary files or write less", "write_less"),
    ("retrying will fail the same way", "avoid_operation"),
    ("not found", "use_existing_program"),
    ("cannot be executed", "run_through_interpreter"),
    ("read stderr", "read_stderr"),
    # Issue 25: a program that went around the proxy, or failed a name
    # lookup, must go through it; a wrong TLS name or a request that names
    # no host is the program's to fix.
    ("must use the proxy", "use_proxy"),
    ("use the same name in the request and in TLS", "fix_server_name"),
    ("check the URL", "fix_url"),
)
# Issue 25: what only the user can change (a host the policy does not
# allow, a private address, a [network] cap). The model asks the user and
# sends nothing more: no retry, no other host, mirror or address.
ASK_USER = ("ask the user to add", "ask the user to raise")
EXIT_CODE_ACTIONS = ("use_existing_program", "run_through_interpreter")
SIGNAL_NAME = re.compile(r"\bSIG[A-Z0-9]+\b")


def hint_line(reply):
    """The hint of a text reply: the first "hint: " line of its header
    (above the stdout section, so the program's own output cannot pose as
    one)."""
    for line in reply.split("\n"):
        if line.startswith("--- stdout"):
            break
        if line.startswith("hint: "):
            return line[len("hint: "):]
    raise Confused("the reply has no hint: line:\n" + reply[:1000])


def stderr_section(reply):
    """The program's stderr as the text reply shows it (after the last
    stderr header; empty when there is none)."""
    heads = list(re.finditer(r"^--- stderr \([^\n]*\) ---\n", reply, re.M))
    return reply[heads[-1].end():] if heads else ""


def read_hint(hint):
    """The action HINT leads to: (name, argument). ("done", None) when it
    names no failure. Raises Confused when it leads two ways."""
    if "The sandbox itself failed, not the program" in hint:
        return ("tell_user", None)
    # Stopped by the user: running it again would overrule them.
    if "do not run it again on your own" in hint:
        return ("tell_user", None)
    if any(phrase in hint for phrase in ASK_USER):
        return ("ask_user", None)
    found = [action for phrase, action in PHRASES if phrase in hint]
    if any(a in EXIT_CODE_ACTIONS for a in found) and "read_stderr" in found:
        found.remove("read_stderr")
    signals = sorted(set(SIGNAL_NAME.findall(hint)))
    if "inspect" in hint and signals:
        if len(signals) > 1:
            raise Confused(f"the hint names {len(signals)} signals "
                           f"({', '.join(signals)}); which one killed the "
                           f"program? hint: {hint}")
        found.append("inspect_signal")
    if len(found) > 1:
        raise Confused(f"the hint leads to {', '.join(found)} at once: {hint}")
    if not found:
        return ("done", None)
    return (found[0], signals[0] if found[0] == "inspect_signal" else None)


def read_stderr(text):
    """What the model makes of a program's stderr, when the hint sends it
    there: (action, argument)."""
    m = re.search(r"No module named '([\w.]+)'", text)
    if m:
        return ("avoid_module", m.group(1))
    raise Confused("stderr says nothing the model knows how to fix:\n"
                   + text[-1000:])


def call_key(call):
    return json.dumps(call, sort_keys=True)


class ScriptedModel:
    """One session's model. FIXES maps an action to the tool call the model
    would write for it: a call, a list of calls to try in turn (each sent
    at most once), or a function of the action's argument (the signal
    name, the missing module) giving a call. It knows nothing else about
    the session: not the status, not the limits, not what the test
    expects."""

    def __init__(self, first, fixes):
        self.first = first
        self.fixes = fixes
        self.sent = []          # every call, in order
        self.actions = []       # (action, argument) after each reply
        self.banned = set()     # calls never to send again

    def start(self):
        self.sent.append(self.first)
        return self.first

    def react(self, reply):
        """The next tool call after REPLY (the text form), or None when the
        model stops (done, or telling the user)."""
        action, arg = read_hint(hint_line(reply))
        if action == "read_stderr":
            # The hint sends the model to stderr, and what it finds there
            # decides the rewrite.
            action, arg = read_stderr(stderr_section(reply))
            self.actions.append(("read_stderr/" + action, arg))
        else:
            self.actions.append((action, arg))
        if action in ("done", "tell_user", "ask_user"):
            return None
        last = self.sent[-1]
        if action == "avoid_operation":
            # "retrying will fail the same way": that call is dead for good.
            self.banned.add(call_key(last))
        fix = self.fixes.get(action)
        if fix is None:
            raise Confused(f"the model has no rewrite for {action}")
        options = [fix(arg)] if callable(fix) else \
            fix if isinstance(fix, list) else [fix]
        for call in options:
            key = call_key(call)
            # Never the same program again after a failure.
            if key in self.banned or key == call_key(last):
                continue
            if action == "avoid_operation" and any(
                    key == call_key(c) for c in self.sent):
                continue
            self.sent.append(call)
            return call
        raise Confused(f"after {action}, every rewrite was already tried")


# --- the framework: a tool call as `stockade run` ----------------------------

INTERPRETERS = {"python": "python3", "bash": "bash", "sh": "sh"}
MAX_ARG_CODE = 16000    # bytes of code passed as an argument (stockade: 16 KiB each)
CODE_NAME = ".stockade-code"
# stdin is stockade run's own standard input, streamed to the program
# (docs/tool.md). Long code travels as a workspace file, opened as
# descriptor 3 and unlinked before the program starts, so nothing is left
# in /work. $1 names it, the program follows.
WRAPPER = 'exec 3<"/work/$1" && rm -f "/work/$1" && shift 1 && exec "$@"'


def tool_schema(source_root):
    """The input schema of docs/tool.md (the first json block under
    "## Input schema"), checked as a JSON Schema."""
    import jsonschema    # python3-jsonschema, as tests/system/validate_results.py
    with open(os.path.join(source_root, "docs", "tool.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Input schema\n.*?^```json\n(.*?)^```", text, re.M | re.S)
    if not m:
        raise AssertionError("docs/tool.md: no json block under '## Input schema'")
    schema = json.loads(m.group(1))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    good = {"language": "python", "code": "print(1)", "stdin": "",
            "env": {"LC_ALL": "C"}, "timeout_seconds": 0.5, "memory_mb": 64}
    bad = [{"language": "ruby", "code": "p 1"}, {"language": "sh"},
           {"language": "sh", "code": ""},
           dict(good, timeout_seconds=0), dict(good, timeout_seconds=31),
           dict(good, memory_mb=2048), dict(good, memory_mb=1.5),
           dict(good, argv=["sh"]), dict(good, env={"A=B": "x"}),
           dict(good, env={"A": 1})]
    if not v.is_valid(good) or any(v.is_valid(b) for b in bad):
        raise AssertionError("docs/tool.md: the input schema takes "
                             + json.dumps([b for b in bad if v.is_valid(b)])
                             + (" and refuses " + json.dumps(good)
                                if not v.is_valid(good) else ""))
    return v


class Framework:
    """The agent framework of one pass: which stockade, as whom, the
    workspace, the ceilings it registered in the tool schema, the schema
    (docs/tool.md) every call is validated against."""

    def __init__(self, stockade, prefix, env, ws, scratch, ceilings, schema):
        self.schema = schema
        self.stockade = stockade
        self.prefix = prefix
        self.env = env
        self.ws = ws
        self.scratch = scratch      # host directory for long code files
        self.ceilings = ceilings    # {"timeout_seconds": S, "memory_mb": M}

    def argv(self, call, fmt, flags):
        """`stockade run` for CALL, as docs/tool.md maps it."""
        errors = [e.message for e in self.schema.iter_errors(call)]
        if errors:
            raise AssertionError(f"the call does not match the input schema "
                                 f"of docs/tool.md: {errors}")
        lang = call["language"]
        if lang not in INTERPRETERS:
            raise AssertionError(f"the model used language {lang!r}")
        argv = [self.stockade, "run", "--format", fmt, "--workspace", self.ws]
        for key, flag in (("timeout_seconds", "--timeout"),
                          ("memory_mb", "--memory")):
            value = call.get(key, self.ceilings[key])
            if value > self.ceilings[key]:
                raise AssertionError(f"{key} {value} is above the schema's "
                                     f"maximum {self.ceilings[key]}")
            argv += [flag, str(value)]
        for name, value in call.get("env", {}).items():
            argv += ["--env", f"{name}={value}"]
        argv += flags
        interpreter = INTERPRETERS[lang]
        code = call["code"]
        if len(code.encode("utf-8")) <= MAX_ARG_CODE:
            return argv + ["--", interpreter, "-c", code]
        argv += ["--put", self.host_file(code, CODE_NAME)]
        return argv + ["--", "sh", "-c", WRAPPER, "sh", CODE_NAME,
                       interpreter, "/proc/self/fd/3"]

    def host_file(self, text, name):
        """A --put argument for TEXT as the workspace file NAME."""
        fd, host = tempfile.mkstemp(dir=self.scratch, prefix=name)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(host, 0o644)
        return f"{host}:{name}"

    def run(self, call, fmt, flags, during=None):
        """Runs CALL; returns (exit status, stdout text, stderr text, the
        stockade argv). DURING(popen), if given, runs while the job does."""
        argv = self.argv(call, fmt, flags)
        # stdin is stockade's own, a pipe (without it, /dev/null).
        data = call["stdin"].encode("utf-8") if "stdin" in call else None
        p = subprocess.Popen(self.prefix + argv, env=self.env, cwd="/",
                             stdin=subprocess.PIPE if data is not None
                             else subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=bound_child)
        try:
            if during is not None:
                during(p)
            out, err = p.communicate(input=data, timeout=90)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        if p.returncode == EXIT_NO_KERNEL_LAYER:
            raise Skip("stockade refused, the kernel lacks a layer: "
                       + err.decode("utf-8", "replace").strip())
        return (p.returncode, out.decode("utf-8", "replace"),
                err.decode("utf-8", "replace"), argv)


def bound_child():
    """preexec_fn of every stockade started: no core dumps, bounded CPU."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, (300, 300))


# --- what the test (not the model) checks of a reply --------------------------

def expected_exit(status, exit_code=None, sig=None):
    """The exit status of `stockade run` for a result (README.md)."""
    if status == "ok":
        return 0
    if status == "exit_nonzero":
        return exit_code
    if status == "timeout":
        return 124
    if status == "crash":
        return 128 + signal.Signals[sig].value
    if status == "sandbox_error":
        return 70
    if status == "cancelled":
        # The only cancellation these sessions make is Ctrl-C (SIGINT).
        return 128 + signal.SIGINT
    return 125


def parse_text(reply):
    """The header of a text reply: {"status", "hint", "figures": {...},
    "detail"}; raises AssertionError when it is not the documented form."""
    lines = reply.split("\n")
    if len(lines) < 5:
        raise AssertionError(f"a text reply of {len(lines)} lines:\n{reply}")
    got = {}
    for i, key in enumerate(("status", "hint", "figures")):
        if not lines[i].startswith(key + ": "):
            raise AssertionError(f"line {i + 1} of the text reply is not "
                                 f"'{key}: ...': {lines[i]!r}")
        got[key] = lines[i][len(key) + 2:]
    if got["status"] not in STATUSES:
        raise AssertionError(f"unknown status {got['status']!r}")
    figures = {}
    for item in got["figures"].split(" "):
        name, eq, value = item.partition("=")
        if not eq or name in figures:
            raise AssertionError(f"figures line: bad item {item!r}")
        figures[name] = value
    if tuple(figures) != FIGURES:
        raise AssertionError(f"figures line: {tuple(figures)}, expected "
                             f"{FIGURES}")
    got["figures"] = figures
    rest = 3
    got["detail"] = ""
    if lines[3].startswith("detail: "):
        got["detail"] = lines[3][len("detail: "):]
        rest = 4
    got["denied"] = ""
    if lines[rest].startswith("denied: "):
        got["denied"] = lines[rest][len("denied: "):]
        rest += 1
    if not re.match(r"--- stdout \(\d+ bytes[,)].* ---$", lines[rest]):
        raise AssertionError(f"line {rest + 1}: no stdout header: "
                             f"{lines[rest]!r}")
    if not re.search(r"^--- stderr \(\d+ bytes[,)].* ---$", reply, re.M):
        raise AssertionError("no stderr header in the text reply")
    return got


def normalised(hint):
    """A hint with its figures blanked, to compare two runs' hints."""
    return re.sub(r"\d+(\.\d+)?", "N", hint)


# --- the sessions --------------------------------------------------------------

def source(code):
    code = code.strip()
    return code + "\n" if "\n" in code else code


def py(code, **kw):
    return dict(language="python", code=source(code), **kw)


def sh(code, **kw):
    return dict(language="sh", code=source(code), **kw)


LINE = "0123456789" * 9 + "abcdef"   # 96 characters and a newline: 97 bytes
GENERATOR = f"yes {LINE} | head -c 209715200"   # 200 MiB of input

CRASHERS = {
    "SIGSEGV": "import ctypes\nctypes.string_at(0)  # a null pointer read",
    "SIGABRT": "import os\nos.abort()  # what a failed C assert() does",
    "SIGFPE": "import ctypes\nctypes.CDLL(None).div(1, 0)  # integer division by zero",
    "SIGBUS": ("import mmap, os\n"
               "fd = os.open('/tmp/map', os.O_RDWR | os.O_CREAT, 0o600)\n"
               "os.ftruncate(fd, 4096)\n"
               "m = mmap.mmap(fd, 4096)\n"
               "os.ftruncate(fd, 0)  # the mapping now lies past the end\n"
               "print(m[0])"),
}


def crash_diagnostic(first_code):
    """The model's diagnostic after a crash by the signal the hint named:
    run the crashing code as a child with faulthandler on, and check that
    it dies of that very signal."""
    def write(sig):
        return py(f"""
import signal, subprocess, sys
code = {first_code!r}
p = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code],
                   capture_output=True, text=True, timeout=20)
got = signal.Signals(-p.returncode).name if p.returncode < 0 else None
print("the hint named {sig}; the child ended by", got, "-",
      "confirmed" if got == "{sig}" else "MISMATCH")
print(p.stderr.strip()[-1500:])
""")
    return write


# Marks the command line of the job whose launcher is killed, unique to
# this run of the test.
JOB_MARK = f"stockade-model-job-{os.getpid()}-{time.time_ns()}"
# The job of both mid-job sessions: it carries JOB_MARK in its command
# line from the start, then exec()s a sleeper whose command line also
# holds JOB_MARK + "-up", a string built at run time (so the first
# command line never holds it). The host waits for that process, not a
# file: a job's writes to /work are staged until it ends (issue 26) and
# a /work/started would never show on the host while the job runs.
SLEEPER = """
import os, sys
up = "{JOB_MARK}" + "-" + "up"
os.execv(sys.executable, [sys.executable, "-c",
         "import time; time.sleep(8); print('finished')", up])
"""


def session_list():
    """(title, dict) of every session. Keys: status (what the first call
    ends in: the test's knowledge), action/arg (the right step), first,
    fixes (the model's), flags (the framework's limits beyond the tool
    input), policy (a policy file's text, passed with --policy), setup(ws),
    check(ws, final_stdout), example (the name of the docs/tool.md example
    its first reply is), example_final (likewise, its last reply), x86
    (needs x86-64)."""
    s = []
    s.append(dict(
        title="timeout: an unbounded wait loop, then a bounded one",
        status="timeout", action="bound_loops", example="timeout",
        first=py("""
import os, time
start = time.monotonic()
while not os.path.exists("/work/ready"):   # nothing ever creates it
    time.sleep(0.05)
    if time.monotonic() - start > 8:        # (bounded when run bare)
        break
print("ready")
""", timeout_seconds=1),
        fixes={"bound_loops": py("""
import os, time
for attempt in range(10):
    if os.path.exists("/work/ready"):
        print("ready")
        break
    time.sleep(0.02)
else:
    print("/work/ready did not appear after 10 checks; giving up")
""", timeout_seconds=1)},
        check=lambda ws, out: "giving up" in out or _fail(out)))
    s.append(dict(
        title="cpu_limit: trial division, then a sieve",
        status="cpu_limit", action="cheaper", example="cpu_limit",
        flags=["--cpu-time", "1"],
        first=py("""
count = sum(1 for k in range(2, 30000) if all(k % d for d in range(2, k)))
print(count, "primes below 30000")
"""),
        fixes={"cheaper": py("""
limit = 30000
sieve = bytearray([1]) * limit
sieve[0:2] = b"\\0\\0"
for k in range(2, int(limit ** 0.5) + 1):
    if sieve[k]:
        sieve[k * k::k] = bytes(len(range(k * k, limit, k)))
print(sum(sieve), "primes below 30000")
""")},
        check=lambda ws, out: "3245 primes below 30000" in out or _fail(out)))
    s.append(dict(
        title="memory_limit: 200 MiB read whole under 64 MiB, then streamed",
        status="memory_limit", action="stream_input", example="memory_limit",
        first=py(f"""
import subprocess
p = subprocess.Popen({GENERATOR!r}, shell=True, stdout=subprocess.PIPE)
data = p.stdout.read()          # the whole input in memory
p.wait()
print(len(data.splitlines()), "records")
""", memory_mb=64),
        fixes={"stream_input": py(f"""
import subprocess
p = subprocess.Popen({GENERATOR!r}, shell=True, stdout=subprocess.PIPE)
count = 0
for line in p.stdout:           # one line at a time
    count += 1
p.wait()
print(count, "records")
""", memory_mb=64)},
        check=lambda ws, out: "2162013 records" in out or _fail(out)))
    # The right step after process_limit, for both sessions below.
    POOL_OF_3 = py("""
import subprocess
items, running, done = list(range(30)), [], 0
while items or running:
    while items and len(running) < 3:
        items.pop()
        running.append(subprocess.Popen(["sleep", "0.05"]))
    done += running.pop(0).wait() == 0
print(done, "items done")
""")
    s.append(dict(
        title="process_limit: 30 workers at once, then a pool of 3",
        status="process_limit", action="bounded_pool",
        flags=["--processes", "8"],
        first=py("""
import subprocess
workers = [subprocess.Popen(["sleep", "2"]) for item in range(30)]
print(sum(w.wait() == 0 for w in workers), "items done")
"""),
        fixes={"bounded_pool": POOL_OF_3},
        check=lambda ws, out: "30 items done" in out or _fail(out)))
    s.append(dict(
        title="process_limit: 30 workers, failed starts retried, then a pool of 3",
        status="process_limit", action="bounded_pool", example="process_limit",
        flags=["--processes", "8"],
        first=py("""
import subprocess, time
workers = []
while len(workers) < 30:
    try:
        workers.append(subprocess.Popen(["sleep", "3"]))
    except BlockingIOError:     # no process free yet: try again
        time.sleep(0.1)
print(sum(w.wait() == 0 for w in workers), "items done")
"""),
        fixes={"bounded_pool": POOL_OF_3},
        check=lambda ws, out: "30 items done" in out or _fail(out)))
    rows_first = py("""
for i in range(100000):
    print(f"row {i}: {i * i}")
""")
    rows_to_file = py("""
with open("/work/rows.txt", "w") as f:
    for i in range(100000):
        f.write(f"row {i}: {i * i}\\n")
print("wrote 100000 rows to /work/rows.txt; the last:", f"row 99999: {99999 ** 2}")
""")
    s.append(dict(
        title="truncated output: 100000 lines printed (ok, head and tail "
              "kept), then written to /work",
        status="ok", action="write_to_file", flags=["--output", "1"],
        first=rows_first, fixes={"write_to_file": rows_to_file},
        check=check_rows))
    s.append(dict(
        title="output_limit (on_output_limit = kill): 100000 lines printed, "
              "then written to /work",
        status="output_limit", action="write_to_file", example="output_limit",
        flags=["--output", "1"], policy="[limits]\non_output_limit = kill\n",
        first=rows_first, fixes={"write_to_file": rows_to_file},
        check=check_rows))
    s.append(dict(
        title="file_size_limit: one 8 MiB file under 2 MiB, then 512 KiB parts",
        status="file_size_limit", action="smaller_files",
        example="file_size_limit", flags=["--file-size", "2"],
        first=py("""
with open("/work/blob.bin", "wb") as f:
    f.write(bytes(8 << 20))
print("wrote /work/blob.bin")
"""),
        fixes={"smaller_files": py("""
import os
os.makedirs("/work/parts", exist_ok=True)
for i in range(16):
    with open(f"/work/parts/blob.{i}", "wb") as f:
        f.write(bytes(512 << 10))
print("16 parts of 512 KiB in /work/parts")
""")},
        check=check_parts))
    s.append(dict(
        title="file_size_limit: the same in sh (set -e), then 512 KiB parts",
        status="file_size_limit", action="smaller_files",
        flags=["--file-size", "2"],
        first=sh("""
set -e
head -c 8388608 /dev/zero > /work/blob.bin
ls -l /work/blob.bin
"""),
        fixes={"smaller_files": sh("""
set -e
mkdir -p /work/parts
for i in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
    head -c 524288 /dev/zero > /work/parts/blob.$i
done
echo "16 parts of 512 KiB in /work/parts"
""")},
        check=check_parts))
    s.append(dict(
        title="disk_full: 32 MiB of scratch in an 8 MiB /tmp, then 4 MiB removed after use",
        status="disk_full", action="write_less", example="disk_full",
        flags=["--tmp-size", "8"],
        first=py("""
import hashlib
with open("/tmp/scratch.bin", "wb") as f:
    for i in range(32):
        f.write(bytes([i]) * 1048576)
print(hashlib.sha256(open("/tmp/scratch.bin", "rb").read()).hexdigest())
"""),
        fixes={"write_less": py("""
import hashlib, os
with open("/tmp/scratch.bin", "wb") as f:
    for i in range(4):
        f.write(bytes([i]) * 1048576)
with open("/tmp/scratch.bin", "rb") as f:
    print(hashlib.sha256(f.read()).hexdigest())
os.remove("/tmp/scratch.bin")
""")},
        check=lambda ws, out: re.search(r"^[0-9a-f]{64}$", out, re.M)
        or _fail(out)))
    for sig, code in CRASHERS.items():
        s.append(dict(
            title=f"crash: {sig}, then a diagnostic of that signal",
            status="crash", action="inspect_signal", arg=sig,
            example="crash" if sig == "SIGSEGV" else None,
            first=py(code),
            fixes={"inspect_signal": crash_diagnostic(code.strip() + "\n")},
            check=lambda ws, out, sig=sig: (
                f"the hint named {sig}; the child ended by {sig} - confirmed"
                in out) or _fail(out)))
    s.append(dict(
        title="policy_violation: two forbidden system calls, never retried, then os.getpid()",
        status="policy_violation", action="avoid_operation",
        example="policy_violation", x86=True, again=True,
        first=py("""
import ctypes
print("pid", ctypes.CDLL(None).syscall(0x40000000 + 39))  # getpid, x32 ABI
"""),
        fixes={"avoid_operation": [
            py("""
import ctypes
print("pid", ctypes.CDLL(None).syscall(0x40000000 + 39))  # getpid, x32 ABI
"""),
            py("""
import ctypes, mmap
code = bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3])  # getpid, i386 ABI (int 0x80)
m = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
print("pid", ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))())
""") if kernel_has_i386_entry() else py("""
import ctypes
# This kernel has no i386 entry (int 0x80 would fault, not be refused):
# the second refused call is another through the x32 ABI.
print("uid", ctypes.CDLL(None).syscall(0x40000000 + 102))  # getuid, x32 ABI
"""),
            py("""
import os
print("pid", os.getpid())
""")]},
        check=lambda ws, out: re.search(r"^pid \d+$", out, re.M)
        or _fail(out)))
    s.append(dict(
        title="exit_nonzero: import numpy fails, stderr read, the csv module instead",
        status="exit_nonzero", exit_code=1, action="read_stderr/avoid_module",
        arg="numpy", example="exit_nonzero",
        first=py("""
import sys
import numpy
rows = numpy.loadtxt(sys.stdin, delimiter=",", skiprows=1)
print("mean", rows[:, 1].mean())
""", stdin="name,score\nada,3\nbob,5\ncy,10\n"),
        fixes={"avoid_module": lambda module: py("""
import csv, sys
scores = [float(row["score"]) for row in csv.DictReader(sys.stdin)]
print("mean", sum(scores) / len(scores))
""", stdin="name,score\nada,3\nbob,5\ncy,10\n")},
        check=lambda ws, out: "mean 6.0" in out or _fail(out)))
    s.append(dict(
        title="exit_nonzero 127: python is not found, then python3",
        status="exit_nonzero", exit_code=127, action="use_existing_program",
        example="exit_nonzero_127", example_final="ok",
        first=sh("python -c 'print(6 * 7)'"),
        fixes={"use_existing_program": sh("python3 -c 'print(6 * 7)'")},
        check=lambda ws, out: out.strip() == "42" or _fail(out)))
    s.append(dict(
        title="exit_nonzero 126: a script without x, then run through sh",
        status="exit_nonzero", exit_code=126,
        action="run_through_interpreter", example="exit_nonzero_126",
        setup=lambda ws: write_file(ws, "report.sh",
                                    "#!/bin/sh\necho report: $(ls /work | wc -l) files\n",
                                    0o644),
        first=sh("/work/report.sh"),
        fixes={"run_through_interpreter": sh("sh /work/report.sh")},
        check=lambda ws, out: "report: 1 files" in out or _fail(out)))
    padding = "# " + "padding " * 2500 + "\n"      # 20 KB of code
    s.append(dict(
        title="tool mapping: stdin through a pipe, env as --env, 20 KB of code as a file, none left in /work",
        status="ok", action="done",
        first=py(padding + """
import os, sys
print(os.environ["LABEL"], sum(int(x) for x in sys.stdin.read().split()))
""", stdin="1 2 3\n4\n", env={"LABEL": "sum"}),
        fixes={},
        check=lambda ws, out: (out.strip() == "sum 10" or _fail(out)) and (
            not os.listdir(ws) or _fail(f"left in /work: {os.listdir(ws)}"))))
    s.append(dict(
        title="sandbox_error: the launcher killed mid-job, the model tells the user",
        status="sandbox_error", action="tell_user", example="sandbox_error",
        kill_launcher=True,
        first=py(SLEEPER.replace("{JOB_MARK}", JOB_MARK)),
        fixes={},
        check=lambda ws, out: no_survivor(JOB_MARK)))
    s.append(dict(
        title="cancelled: the user presses Ctrl-C mid-job, the model tells the user",
        status="cancelled", action="tell_user", example="cancelled",
        interrupt=True,
        first=py('print("step 1 of 3 done", flush=True)\n'
                 + SLEEPER.replace("{JOB_MARK}", JOB_MARK)),
        fixes={},
        check=lambda ws, out: ("step 1 of 3 done" in out or _fail(out))
        and "finished" not in out and no_survivor(JOB_MARK)))
    return s


def _fail(out):
    raise AssertionError(f"the final program's stdout is not as expected:\n{out[-2000:]}")


def no_survivor(marker, wait=5.0):
    """True once no process on the host has MARKER in its command line
    (the job of a killed launcher must not outlive it); waits up to WAIT
    seconds for the kernel to finish the kill."""
    deadline = time.monotonic() + wait
    while True:
        alive = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == os.getpid():
                continue
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if marker.encode() in f.read():
                        alive.append(int(name))
            except OSError:
                continue
        if not alive:
            return True
        if time.monotonic() > deadline:
            raise AssertionError(f"processes of the job outlived its "
                                 f"launcher: {alive}")
        time.sleep(0.05)


def write_file(ws, name, text, mode):
    path = os.path.join(ws, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)
    st = os.stat(ws)
    os.chown(path, st.st_uid, st.st_gid)


def check_rows(ws, out):
    if "wrote 100000 rows to /work/rows.txt" not in out:
        _fail(out)
    with open(os.path.join(ws, "rows.txt"), encoding="utf-8") as f:
        rows = f.read().splitlines()
    if len(rows) != 100000 or rows[-1] != f"row 99999: {99999 ** 2}":
        raise AssertionError(f"/work/rows.txt holds {len(rows)} rows, "
                             f"the last {rows[-1:]}")
    return True


def check_parts(ws, out):
    if "16 parts of 512 KiB" not in out:
        _fail(out)
    parts = os.path.join(ws, "parts")
    sizes = sorted(os.path.getsize(os.path.join(parts, n))
                   for n in os.listdir(parts))
    if sizes != [524288] * 16:
        raise AssertionError(f"/work/parts holds files of {sizes} bytes")
    return True


# --- one session ---------------------------------------------------------------

def find_launchers(broker_pid):
    """The pids of the stockade-launcher processes BROKER_PID started (its
    direct children: the jail's init, below the launcher, has the same
    name)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        comm_end = stat.rfind(")")
        ppid = int(stat[comm_end + 2:].split()[1])
        comm = stat[stat.find("(") + 1:comm_end]
        if ppid == broker_pid and comm.startswith("stockade-launch"):
            found.append(int(name))
    return found


def marked(marker):
    """The pids of the processes other than us with MARKER in their
    command line."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.add(int(name))
        except OSError:
            continue
    return found


def wait_job_up(p):
    """Waits until the SLEEPER job has exec()d its sleeping process (its
    command line holds JOB_MARK + "-up"); P is the stockade we started.
    A sleeper of an earlier run still dying does not count."""
    deadline = time.monotonic() + 20
    before = marked(JOB_MARK + "-up")
    while not marked(JOB_MARK + "-up") - before:
        if p.poll() is not None or time.monotonic() > deadline:
            raise AssertionError("the job never started")
        time.sleep(0.02)


def launcher_killer(ws):
    """DURING of a run: once the job's sleeper runs, SIGKILL the
    launcher the stockade we started has started (by its pid)."""
    def during(p):
        wait_job_up(p)
        pids = find_launchers(p.pid)
        if len(pids) != 1:
            raise AssertionError(f"launchers below stockade {p.pid}: {pids}")
        os.kill(pids[0], signal.SIGKILL)
    return during


def interrupter(ws):
    """DURING of a run: once the job's sleeper runs, SIGINT to the
    stockade we started, as Ctrl-C on its terminal would."""
    def during(p):
        wait_job_up(p)
        p.send_signal(signal.SIGINT)
    return during


def during_of(sess, ws):
    """The DURING of SESS's first call: what the test does to the run."""
    if sess.get("kill_launcher"):
        return launcher_killer(ws)
    if sess.get("interrupt"):
        return interrupter(ws)
    return None


def run_session(fw, sess, examples):
    """Drives one session; returns a note for the TAP line."""
    ws = fw.ws
    for name in os.listdir(ws):
        path = os.path.join(ws, name)
        shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) \
            else os.remove(path)
    if sess.get("setup"):
        sess["setup"](ws)
    flags = sess.get("flags", [])
    if sess.get("policy"):
        # In the framework's scratch directory, which every user reads.
        path = os.path.join(fw.scratch, "policy.ini")
        with open(path, "w", encoding="utf-8") as f:
            f.write(sess["policy"])
        os.chmod(path, 0o644)
        flags = ["--policy", path] + flags
    during = during_of(sess, ws)
    model = ScriptedModel(sess["first"], sess["fixes"])
    call = model.start()
    replies = []
    for turn in range(4):
        code, reply, err, argv = fw.run(call, "text", flags, during)
        diag(f"--- call {turn + 1}: {json.dumps(call)}\n$ stockade "
             + shlex.join(argv[1:]) + f"\n{reply}")
        if err.strip():
            diag("stockade's stderr: " + err.strip())
        head = parse_text(reply)
        replies.append(head)
        status = head["status"]
        want_exit = expected_exit(status, _int(head["figures"]["exit_code"]),
                                  head["figures"]["signal"])
        if code != want_exit:
            raise AssertionError(f"status {status}: stockade exited {code}, "
                                 f"expected {want_exit}")
        if turn == 0:
            if status != sess["status"]:
                raise AssertionError(f"the first call ended {status}, not "
                                     f"{sess['status']}: {head['hint']}")
            if "exit_code" in sess and \
                    head["figures"]["exit_code"] != str(sess["exit_code"]):
                raise AssertionError(f"exit code {head['figures']['exit_code']}, "
                                     f"expected {sess['exit_code']}")
            twin(fw, call, flags, head, sess, examples, "example", reply,
                 argv, during_of(sess, ws) if during else None)
        if status == "ok" and sess.get("example_final"):
            twin(fw, call, flags, head, sess, examples, "example_final", reply,
                 argv, None)
        final = reply
        try:
            call = model.react(reply)
        except Confused as exc:
            raise AssertionError(f"the model could not choose after "
                                 f"{status}: {exc}") from None
        during = None
        if call is None:
            break
    else:
        raise AssertionError(f"the model was still going after 4 calls: "
                             f"{model.actions}")
    # What the model chose, against what the test knows is right.
    want = (sess["action"], sess.get("arg"))
    if model.actions[0] != want:
        raise AssertionError(f"after {sess['status']} the model chose "
                             f"{model.actions[0]}, expected {want}")
    keys = [call_key(c) for c in model.sent]
    if len(keys) > 1 and keys[1] == keys[0]:
        raise AssertionError("the model sent its first program again")
    if sess["action"] == "avoid_operation":
        if len(set(keys)) != len(keys):
            raise AssertionError("after 'retrying will fail the same way' "
                                 "the model sent a program twice")
        if sess.get("again") and [r["status"] for r in replies] != \
                ["policy_violation", "policy_violation", "ok"]:
            raise AssertionError("expected two refused calls, then ok: "
                                 f"{[r['status'] for r in replies]}")
    if sess["action"] == "tell_user":
        if len(model.sent) != 1 or model.actions != [("tell_user", None)]:
            raise AssertionError(f"after {sess['status']} the model went "
                                 f"on: {model.actions}")
        sess["check"](ws, stdout_section(final))
        return "the model tells the user and sends nothing; no process of the job is left"
    if replies[-1]["status"] != "ok" or model.actions[-1] != ("done", None):
        raise AssertionError(f"final status {replies[-1]['status']}, actions "
                             f"{model.actions}")
    sess["check"](ws, stdout_section(final))
    steps = " -> ".join(f"{a}{' ' + g if g else ''}" for a, g in model.actions)
    return f"{len(model.sent)} calls: {steps}"


def stdout_section(reply):
    m = re.search(r"^--- stdout \([^\n]*\) ---\n", reply, re.M)
    heads = list(re.finditer(r"^--- stderr \([^\n]*\) ---\n", reply, re.M))
    return reply[m.end():heads[-1].start()] if m and heads else ""


def _int(text):
    return None if text == "none" else int(text)


def twin(fw, call, flags, head, sess, examples, which, text, argv, during):
    """Runs CALL again with --format json: the same status and hint (its
    figures aside) as the text reply; records the result; keeps both as
    an example when asked."""
    code, out, err, _ = fw.run(call, "json", flags, during)
    try:
        result = json.loads(out)
    except ValueError as exc:
        raise AssertionError(f"--format json printed no JSON ({exc}): "
                             f"{out[:500]!r} {err[:500]!r}") from None
    if not isinstance(result, dict) or out.count("\n") != 1:
        raise AssertionError(f"--format json: not one line of one object: {out[:500]!r}")
    save_result(out)
    if result.get("status") != head["status"]:
        raise AssertionError(f"the same call ended {result.get('status')} in "
                             f"JSON, {head['status']} in text")
    if normalised(result.get("hint", "")) != normalised(head["hint"]):
        raise AssertionError(f"JSON hint {result.get('hint')!r} differs from "
                             f"the text hint {head['hint']!r}")
    if examples is not None and sess.get(which):
        examples[sess[which]] = dict(call=call, flags=flags, text=text,
                                     json=result, argv=argv)


# --- examples for docs/tool.md -------------------------------------------------

EXAMPLE_ORDER = ("ok", "exit_nonzero", "exit_nonzero_127", "exit_nonzero_126",
                 "timeout", "cpu_limit", "memory_limit", "process_limit",
                 "output_limit", "file_size_limit", "disk_full", "crash",
                 "policy_violation", "sandbox_error", "cancelled")
NEXT_STEP = {
    "ok": "No failure phrase in the hint: the model takes the output as the answer.",
    "exit_nonzero": "\"read stderr\": the model reads stderr, finds `No module named 'numpy'`, and rewrites the program with the standard library's `csv` module (ok).",
    "exit_nonzero_127": "\"not found\": the model calls an interpreter that exists, `python3` instead of `python` (ok).",
    "exit_nonzero_126": "\"cannot be executed\": the model runs the script through its interpreter, `sh /work/report.sh` (ok).",
    "timeout": "\"bound its loops\": the model rewrites the wait as at most 10 checks and reports when it gives up (ok).",
    "cpu_limit": "\"make the computation cheaper\": the model replaces trial division with a sieve (ok, in about 0.1 s of CPU).",
    "memory_limit": "\"stream large inputs\": the model reads the 200 MiB input line by line instead of whole (ok, a few MiB resident).",
    "process_limit": "\"bounded pool\": the model runs the 30 workers at most 3 at a time (ok).",
    "output_limit": "\"write large results to a file in /work\": the model writes the rows to `/work/rows.txt` and prints one summary line (ok; the file is there after the job).",
    "file_size_limit": "\"smaller files\": the model writes 16 parts of 512 KiB under `/work/parts` (ok).",
    "disk_full": "\"delete temporary files or write less\": the model uses 4 MiB of scratch in /tmp and removes it when done (ok).",
    "crash": "\"inspect\" and the signal name: the model does not rerun the program unchanged; it runs the crashing code as a child under `python3 -X faulthandler`, checks that it dies of the signal the hint named and reads the traceback (ok).",
    "policy_violation": "\"retrying will fail the same way\": the model never sends that program again; it tries another way (here a second forbidden call, also refused, then `os.getpid()`, ok) and never repeats any program of the session.",
    "sandbox_error": "(The test killed the launcher with SIGKILL while the job slept.) \"The sandbox itself failed, not the program\": the model does not change its code; it tells the user, quoting the detail.",
    "cancelled": "(The test sent SIGINT to `stockade run`, as Ctrl-C would, once the job had printed its first step.) \"do not run it again on your own\": the model does not run it again; it tells the user it was stopped, with the output so far.",
}
# Said before an example's tool call.
EXAMPLE_NOTE = {
    "output_limit": "Under a policy P.ini with `[limits] on_output_limit = "
                    "kill`; by default the same call ends `ok`, with the "
                    "output truncated and the hint saying so.",
}
BEGIN = "<!-- generated by tests/system/test_model.py --write-examples: begin -->"
END = "<!-- generated by tests/system/test_model.py --write-examples: end -->"


def one_field_a_line(obj):
    """OBJ as JSON with each top-level field on a line of its own."""
    return "{\n" + ",\n".join(
        f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
        for k, v in obj.items()) + "\n}"


def examples_markdown(examples):
    out = [BEGIN, ""]
    for name in EXAMPLE_ORDER:
        ex = examples.get(name)
        if ex is None:
            continue
        status = ex["json"]["status"]
        title = f"`{status}`" + {"exit_nonzero_127": " (exit code 127)",
                                 "exit_nonzero_126": " (exit code 126)",
                                 "exit_nonzero": " (exit code 1)"}.get(name, "")
        argv = ["stockade"] + ex["argv"][1:]
        argv[argv.index("--workspace") + 1] = "WS"
        if "--put" in argv:
            i = argv.index("--put") + 1
            argv[i] = "CODE_FILE:" + argv[i].split(":", 1)[1]
        flags = list(ex["flags"])
        for words in (argv, flags):
            if "--policy" in words:
                words[words.index("--policy") + 1] = "P.ini"
        cmd = shlex.join(argv)
        if "stdin" in ex["call"]:
            cmd = shlex.join(["printf", "%s", ex["call"]["stdin"]]) + " | " + cmd
        out += [f"### {title}", ""] + ([EXAMPLE_NOTE[name], ""]
                                       if name in EXAMPLE_NOTE else []) + [
                "Tool call:", "", "```json",
                json.dumps(ex["call"], ensure_ascii=False), "```", "",
                "`stockade run` (framework limits: "
                + (" ".join(flags) or "none beyond the call") + "):", "",
                "```sh", cmd, "```", "",
                "Reply, text form (what the model reads):", "", "```text",
                ex["text"].rstrip("\n"), "```", "",
                "The same call with `--format json` (another run; one "
                "field a line here, stockade prints one line):", "", "```json",
                one_field_a_line(ex["json"]), "```", "",
                "Next step: " + NEXT_STEP[name], ""]
    out.append(END)
    return "\n".join(out) + "\n"


def write_examples(directory, examples, doc):
    os.makedirs(directory, exist_ok=True)
    for name, ex in examples.items():
        with open(os.path.join(directory, name + ".txt"), "w", encoding="utf-8") as f:
            f.write(ex["text"])
        with open(os.path.join(directory, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(ex["json"], f, indent=2, ensure_ascii=False)
            f.write("\n")
    md = examples_markdown(examples)
    with open(os.path.join(directory, "examples.md"), "w", encoding="utf-8") as f:
        f.write(md)
    if doc:
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        a, b = text.find(BEGIN), text.find(END)
        if a < 0 or b < a:
            raise SystemExit(f"{doc}: no generated block to replace")
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text[:a] + md.rstrip("\n") + text[b + len(END):])


# --- main ------------------------------------------------------------------------

def make_ws(owner, cleanup):
    d = tempfile.mkdtemp(prefix="stockade-model-", dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    ws = os.path.join(d, "ws")
    os.mkdir(ws, 0o755)
    scratch = os.path.join(d, "stdin")
    os.mkdir(scratch, 0o755)
    if owner is not None:
        os.chown(ws, owner, owner)
    return ws, scratch


def main(argv):
    write_dir, doc = None, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--write-examples" and args:
            write_dir = args.pop(0)
        elif a == "--update-doc" and args:
            doc = args.pop(0)
        else:
            print(f"usage: {sys.argv[0]} [--write-examples DIR [--update-doc FILE]]",
                  file=sys.stderr)
            return 64
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    source_root = os.environ.get("STOCKADE_SOURCE_ROOT") or \
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    only = os.environ.get("STOCKADE_TEST_ONLY", "")
    is_root = os.geteuid() == 0
    sessions = [s for s in session_list() if only in s["title"]]
    passes = [("as the invoking user", [], dict(os.environ),
               NOBODY if is_root else None)]
    if is_root and not write_dir:
        passes.append((f"as uid {NOBODY}",
                       ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                        "--clear-groups"],
                       {"PATH": "/usr/local/bin:/usr/bin:/bin",
                        "LANG": "C.UTF-8", "HOME": "/nonexistent"}, NOBODY))
    print(f"1..{len(sessions) * len(passes)}")
    failed, number, cleanup = 0, 0, []
    examples = {}
    try:
        for pass_name, prefix, env, owner in passes:
            try:
                if not stockade_bin or not os.access(stockade_bin, os.X_OK):
                    raise AssertionError(f"STOCKADE_BIN={stockade_bin!r} is not "
                                         "an executable (set by tests/meson.build)")
                stockade = stockade_bin
                if prefix:
                    stockade = unprivileged_binaries(stockade_bin, cleanup)
                ws, scratch = make_ws(owner, cleanup)
                fw = Framework(stockade, prefix, env, ws, scratch,
                               {"timeout_seconds": 10, "memory_mb": 1024},
                               tool_schema(source_root))
                setup_error = None
            except (AssertionError, OSError, ValueError, ImportError) as exc:
                setup_error = exc
            for sess in sessions:
                number += 1
                title = f"{sess['title']} ({pass_name})"
                try:
                    if setup_error is not None:
                        raise setup_error
                    if sess.get("x86") and platform.machine() != "x86_64":
                        raise Skip("x32 and i386 system calls need x86-64")
                    note = run_session(fw, sess, examples if not prefix else None)
                    print(f"ok {number} - {title} ({note})")
                except Skip as exc:
                    failed += tap_skip(number, title, exc)
                except (AssertionError, OSError, ValueError, KeyError,
                        subprocess.SubprocessError) as exc:
                    failed += 1
                    tap_fail(number, title, exc)
                sys.stdout.flush()
        if write_dir:
            write_examples(write_dir, examples, doc)
            diag(f"examples written to {write_dir}"
                 + (f" and {doc}" if doc else ""))
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
