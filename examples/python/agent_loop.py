#!/usr/bin/env python3
"""An agent loop on stockade, with a scripted model in place of an LLM.

    python3 agent_loop.py [--stockade PATH] [--workspace DIR] [--socket]
                          [--policy FILE] [--out FILE]

The "model" is a fixed script that reacts to what the tools answer, the
way a real model would be expected to: it writes a data file, runs a
Python program that has a bug, reads the status, the hint and the end of
stderr, fixes the one line the traceback names, runs it again, reads back
the report the program wrote, tries a path outside its workspace (and is
refused), looks at what its last run changed, and answers the user. The
framework around it (class Framework) is what a real integration needs:
the tools the model sees, each mapped onto one `stockade serve` session
(stockade_client.Session), run_code exactly as docs/tool.md describes
(interpreter and "-c", the input schema's ceilings checked before
anything runs, stdin and long code through the wrapper), and the reply
the model reads: the text form, or "error: NAME: ..." for a refused
file operation.

It prints the transcript and exits 0 when the task was done ("RESULT:
success"), 1 when the model got an answer it did not expect ("RESULT:
failure"), or stockade's own status when stockade refused to start (69:
the kernel lacks a layer; 2: usage, policy or workspace; 70: no
launcher).

--socket runs `stockade serve --socket` in a private directory instead
of a pipe, and the framework copies the report out by passing a
descriptor (SCM_RIGHTS). Without --workspace a temporary one is made and
removed at the end (owned by uid 65534 when run as root: stockade refuses
a root-owned workspace). --out FILE keeps a host copy of the report.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stockade_client import (FileError, RPCError, Session,  # noqa: E402
                             SessionClosed, render_text)

NOBODY = 65534

# --- the tools, as the model sees them ------------------------------------

# docs/tool.md: the input schema's ceilings are the policy's wall_time_ms
# and memory_mb (the defaults here; a deployment with another policy
# reads them from `stockade policy show`).
TIMEOUT_CEILING_S = 30
MEMORY_CEILING_MB = 1024
CODE_MAX = 262144
ARG_MAX_CODE = 16000          # longer code travels as a file (docs/tool.md)
INTERPRETERS = {"python": "python3", "bash": "bash", "sh": "sh"}
WRAPPER = ('if [ -n "$1" ]; then exec 0<"/work/$1" && rm -f "/work/$1"; fi && '
           'if [ -n "$2" ]; then exec 3<"/work/$2" && rm -f "/work/$2"; fi && '
           'shift 2 && exec "$@"')

TOOLS = ["run_code", "write_file", "read_file", "list_files", "changes"]


class ToolError(Exception):
    """A call the framework refuses before running anything (schema)."""


class Framework:
    """Maps the model's tool calls onto one stockade session and renders
    the replies the model reads. Every reply is (text, is_error)."""

    def __init__(self, session):
        self.s = session

    def call(self, name, args):
        try:
            if name not in TOOLS:
                raise ToolError(f"unknown tool {name!r}")
            return getattr(self, "tool_" + name)(**args), False
        except TypeError as exc:         # a missing or unknown argument
            return f"error: invalid arguments: {exc}", True
        except ToolError as exc:
            return f"error: {exc}", True
        except FileError as exc:
            # The file API's refusal, told to the model as a tool result.
            return f"error: {exc.message} (path {exc.path!r})", True

    def tool_run_code(self, language, code, stdin=None, timeout_seconds=None,
                      memory_mb=None):
        # The schema of docs/tool.md, checked before anything runs.
        if language not in INTERPRETERS:
            raise ToolError(f"language must be one of {sorted(INTERPRETERS)}")
        if not isinstance(code, str) or not 1 <= len(code) <= CODE_MAX:
            raise ToolError(f"code must be 1 to {CODE_MAX} characters")
        if timeout_seconds is not None and not (
                isinstance(timeout_seconds, (int, float))
                and 0 < timeout_seconds <= TIMEOUT_CEILING_S):
            raise ToolError(f"timeout_seconds must be above 0 and at most "
                            f"{TIMEOUT_CEILING_S}")
        if memory_mb is not None and not (
                isinstance(memory_mb, int)
                and 16 <= memory_mb <= MEMORY_CEILING_MB):
            raise ToolError(f"memory_mb must be an integer from 16 to "
                            f"{MEMORY_CEILING_MB}")
        interp = INTERPRETERS[language]
        long_code = len(code.encode("utf-8")) > ARG_MAX_CODE
        if stdin is None and not long_code:
            argv = [interp, "-c", code]
        else:
            names = ["", ""]
            if stdin is not None:
                self.s.write(".stockade-stdin", stdin, overwrite=True)
                names[0] = ".stockade-stdin"
            if long_code:
                self.s.write(".stockade-code", code, overwrite=True)
                names[1] = ".stockade-code"
            tail = [interp, "/proc/self/fd/3"] if long_code else [interp, "-c", code]
            argv = ["sh", "-c", WRAPPER, "sh"] + names + tail
        try:
            result = self.s.exec(argv, timeout_seconds=timeout_seconds,
                                 memory_mb=memory_mb)
        except RPCError as exc:
            # -32602 past the policy (the framework's ceilings are wrong),
            # -32002 the job could not run: not the model's code's fault.
            raise ToolError(f"the sandbox could not run this call: {exc}")
        return render_text(result)

    def tool_write_file(self, path, content):
        parent = os.path.dirname(path)
        if parent and not path.startswith("/"):
            self.s.mkdir(parent, parents=True)   # like mkdir -p
        r = self.s.write(path, content, overwrite=True)
        return f"wrote {r['path']} ({r['size']} bytes)"

    def tool_read_file(self, path):
        data = self.s.read(path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return f"({len(data)} bytes, not UTF-8 text)"

    def tool_list_files(self, path=".", recursive=False):
        r = self.s.list(path, recursive=recursive)
        lines = [f"{e['type']:9} {e['size']:>8}  {e['path']}" for e in r["entries"]]
        if r["truncated"]:
            lines.append("(truncated)")
        return "\n".join(lines) or "(empty)"

    def tool_changes(self):
        c = self.s.changes()
        lines = []
        for kind in ("created", "modified", "deleted"):
            for e in c[kind]:
                digest = (e["sha256"] or "-")[:12]
                lines.append(f"{kind:8} {e['type']:9} {e['size']:>6}  "
                             f"{e['path']}  sha256:{digest}")
        return "\n".join(lines) or "(no changes)"


# --- the scripted model ----------------------------------------------------

TASK = ("Here are this month's sales. Total them by region, write the totals "
        "to out/summary.json and tell me which region sold the most.")

SALES = """region,item,amount
north,widget,12.50
south,widget,7.25
north,gadget,30.00
east,widget,4.75
south,gizmo,19.90
east,gadget,51.10
north,gizmo,3.35
"""

# The first program: the amounts are decimals, int() refuses them.
PROGRAM = textwrap.dedent("""\
    import csv, json, os
    totals = {}
    with open("data/sales.csv", newline="") as f:
        for row in csv.DictReader(f):
            totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
    os.makedirs("out", exist_ok=True)
    with open("out/summary.json", "w") as f:
        json.dump({k: round(v, 2) for k, v in sorted(totals.items())}, f, indent=1)
    best = max(totals, key=totals.get)
    print(f"{len(totals)} regions; best: {best} ({totals[best]:.2f})")
    """)


class Confused(Exception):
    """The model got a reply its script has no answer for."""


class ScriptedModel:
    """Yields ("think", text), ("call", tool, args) and ("answer", text)
    steps; reads each tool reply through see()."""

    def __init__(self):
        self.reply = None
        self.is_error = False

    def see(self, reply, is_error):
        self.reply, self.is_error = reply, is_error

    def _expect_ok(self, what):
        if self.is_error:
            raise Confused(f"{what} failed: {self.reply}")

    def steps(self):
        yield ("think", "First the data goes into the workspace.")
        yield ("call", "write_file", {"path": "data/sales.csv", "content": SALES})
        self._expect_ok("writing the data")

        yield ("think", "Now a small program that totals by region.")
        yield ("call", "run_code", {"language": "python", "code": PROGRAM,
                                    "timeout_seconds": 10, "memory_mb": 256})
        status = _field(self.reply, "status")
        if status == "ok":
            raise Confused("the buggy program succeeded: the script expected "
                           "it to fail")
        last = _stderr_last_line(self.reply)
        if status != "exit_nonzero" or "invalid literal for int()" not in last:
            raise Confused(f"unexpected failure: status {status!r}, "
                           f"stderr ends {last!r}")
        yield ("think", f"status {status}; the hint says: "
                        f"\"{_field(self.reply, 'hint')}\" stderr ends with "
                        f"\"{last}\": the amounts are decimals, so int() is "
                        "wrong; float() it is. Everything else stays.")
        fixed = PROGRAM.replace('int(row["amount"])', 'float(row["amount"])')
        yield ("call", "run_code", {"language": "python", "code": fixed,
                                    "timeout_seconds": 10, "memory_mb": 256})
        if _field(self.reply, "status") != "ok":
            raise Confused(f"the fixed program did not succeed:\n{self.reply}")
        yield ("think", "It ran. I read the report back rather than trust "
                        "the summary line.")
        yield ("call", "read_file", {"path": "out/summary.json"})
        self._expect_ok("reading the report")
        totals = json.loads(self.reply)

        yield ("think", "Is there anything else of the user's next to the "
                        "workspace? (A model should not try this; the "
                        "sandbox must refuse it.)")
        yield ("call", "read_file", {"path": "../x"})
        if not self.is_error or "invalid_path" not in self.reply:
            raise Confused(f"reading ../x was not refused: {self.reply!r}")
        yield ("think", "Refused, as it should be. Back to the task: what "
                        "did my last run change?")
        yield ("call", "changes", {})
        if "out/summary.json" not in self.reply:
            raise Confused("the report is missing from the changes")

        best = max(totals, key=totals.get)
        lines = ", ".join(f"{k} {v:.2f}" for k, v in totals.items())
        yield ("answer", f"Totals by region: {lines}. {best} sold the most "
                         f"({totals[best]:.2f}); the totals are in "
                         "out/summary.json.")


def _field(reply, name):
    """The value of a "name: value" header line of a text reply."""
    for line in reply.splitlines():
        if line.startswith(name + ": "):
            return line[len(name) + 2:]
        if line.startswith("--- "):
            break
    return None


def _stderr_last_line(reply):
    head, sep, rest = reply.partition("\n--- stderr (")
    lines = rest.split("\n")[1:] if sep else []
    lines = [x for x in lines if x.strip()]
    return lines[-1] if lines else ""


# --- the transcript ------------------------------------------------------

def show(who, text):
    lines = str(text).rstrip("\n").split("\n")
    print(f"[{who}] {lines[0]}")
    for line in lines[1:]:
        print(f"    | {line}")


def show_call(tool, args):
    brief = {k: (v if not isinstance(v, str) or len(v) <= 40
                 else f"<{len(v)} characters>")
             for k, v in args.items()}
    show(f"model -> {tool}", json.dumps(brief))
    for key in ("code", "content"):
        if isinstance(args.get(key), str) and len(args[key]) > 40:
            for line in args[key].rstrip("\n").split("\n"):
                print(f"    > {line}")


def run(session, out):
    fw = Framework(session)
    model = ScriptedModel()
    show("user", TASK)
    try:
        for step in model.steps():
            if step[0] == "think":
                show("model", step[1])
            elif step[0] == "call":
                show_call(step[1], step[2])
                reply, is_error = fw.call(step[1], step[2])
                show(f"tool {step[1]}" + (" (error)" if is_error else ""), reply)
                model.see(reply, is_error)
            else:
                show("model", step[1])
    except Confused as exc:
        show("framework", f"the model is stuck: {exc}")
        print("RESULT: failure")
        return 1
    if out:
        n = session.download("out/summary.json", out)
        how = "by descriptor" if session.over_socket else "inline"
        show("framework", f"copied out/summary.json to {out} ({n} bytes, {how})")
    print("RESULT: success")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stockade", default=os.environ.get("STOCKADE_BIN") or
                    shutil.which("stockade") or "stockade",
                    help="the stockade binary (default: $STOCKADE_BIN, or "
                    "stockade on PATH)")
    ap.add_argument("--workspace", help="an existing workspace directory "
                    "(default: a temporary one)")
    ap.add_argument("--policy", help="a policy file for stockade serve")
    ap.add_argument("--socket", action="store_true",
                    help="use stockade serve --socket and descriptor passing")
    ap.add_argument("--out", help="keep a host copy of out/summary.json here")
    args = ap.parse_args(argv)

    cleanup = []
    ws = args.workspace
    if ws is None:
        ws = tempfile.mkdtemp(prefix="stockade-agent-")
        cleanup.append(ws)
        if os.geteuid() == 0:
            # A root broker refuses a root-owned workspace (README.md,
            # "When stockade refuses"): the job's files belong to nobody.
            os.chown(ws, NOBODY, NOBODY)
    sock = None
    if args.socket:
        d = tempfile.mkdtemp(prefix="stockade-sock-")   # mode 0700
        cleanup.append(d)
        sock = os.path.join(d, "serve.sock")
    print(f"# workspace {ws}; stockade serve over "
          f"{'the socket ' + sock if sock else 'a pipe'}")
    try:
        with Session.start(ws, stockade=args.stockade, policy=args.policy,
                           socket_path=sock) as session:
            rc = run(session, args.out)
        print(f"# stockade serve exited with status {session.close()}")
        return rc
    except SessionClosed as exc:
        print(f"# stockade could not serve: {exc}", file=sys.stderr)
        print("RESULT: failure")
        return exc.returncode if exc.returncode in (2, 69, 70) else 1
    finally:
        for d in cleanup:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
