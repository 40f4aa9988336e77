#!/usr/bin/python3
# `stockade mcp` driven by a real MCP client, not one written here: the
# official TypeScript SDK's Client with its stdio transport
# (@modelcontextprotocol/sdk, pinned in tests/broker/api/mcp/package-lock.json),
# through tests/broker/api/mcp/client.mjs (initialize, tools/list, Python, files,
# stdin, a timeout, progress, cancellation, hostile paths, changes).
#
# Then the MCP Inspector's CLI mode (@modelcontextprotocol/inspector,
# tests/broker/api/mcp-inspector/, headless) lists the tools and calls two.
#
# Set-up: `npm ci` from each lock file into the build directory (the
# npm registry; npm's cache makes a rerun cheap). The SDK client runs as
# the caller and as uid 65534, each against a fresh workspace. TAP.
# Without node or npm the test skips, and fails under STOCKADE_MUST_WORK=1.
# The Inspector 0.21 asks for Node.js 22 and runs on 20: on an older one
# (Debian 12's own nodejs is 18) its part skips with the reason.
import json
import os
import shutil
import subprocess
import sys
import tempfile

MUST = os.environ.get("STOCKADE_MUST_WORK") == "1"
HERE = os.path.dirname(os.path.abspath(__file__))


def skip_or_fail(why):
    why = " ".join(why.split())
    print("1..0 # SKIP " + why if not MUST else "1..1\nnot ok 1 - " + why)
    return 1 if MUST else 0


def install_client(dest, src="mcp", files=("client.mjs",)):
    """Copies tests/SRC/ (its package files and FILES) to DEST and installs
    its lock file there (npm ci only when the lock file changed). Returns
    None or the reason it failed."""
    os.makedirs(dest, exist_ok=True)
    lock = os.path.join(HERE, src, "package-lock.json")
    stamp = os.path.join(dest, "node_modules", ".stockade-lock")
    for f in ("package.json", "package-lock.json") + tuple(files):
        shutil.copyfile(os.path.join(HERE, src, f), os.path.join(dest, f))
    want = open(lock, "rb").read()
    if os.path.exists(stamp) and open(stamp, "rb").read() == want:
        return None
    r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                        "--loglevel=error"], cwd=dest, capture_output=True,
                       text=True, timeout=900)
    if r.returncode != 0:
        # One line for TAP: npm's error lines (a registry out of reach,
        # a TLS proxy whose CA this machine does not trust, ...).
        errs = [ln for ln in r.stderr.splitlines() if "ERR!" in ln][:4]
        return (f"npm ci from the npm registry failed (exit {r.returncode}): "
                + " | ".join(errs or r.stderr.splitlines()[-3:]))[:600]
    with open(stamp, "wb") as f:
        f.write(want)
    return None


def run_client(n, label, client_dir, stockade, as_user):
    """Runs client.mjs against STOCKADE with a fresh workspace; prints its
    TAP as comments and one TAP line. Returns True on success."""
    scratch = tempfile.mkdtemp(prefix="stockade-mcp-ws-")
    os.chmod(scratch, 0o755)
    ws = os.path.join(scratch, "ws")
    os.mkdir(ws)
    cmd = ["node", os.path.join(client_dir, "client.mjs"), stockade, ws]
    env = dict(os.environ)
    if as_user or os.geteuid() == 0:
        # A root broker refuses a workspace owned by root.
        os.chown(ws, 65534, 65534)
    if as_user:
        env["HOME"] = scratch
        cmd = ["setpriv", "--reuid=65534", "--regid=65534",
               "--clear-groups"] + cmd
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                           env=env)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = str(e.stdout or "") + "\n(timed out)", -1
    for line in out.splitlines():
        print("# " + line)
    tap_ok = "not ok" not in out and "\nok " in "\n" + out
    ok = rc == 0 and tap_ok
    print(f"{'ok' if ok else 'not ok'} {n} - the TypeScript SDK client "
          f"against stockade mcp {label}")
    shutil.rmtree(scratch, ignore_errors=True)
    return ok


def inspector(n, build, stockade):
    """The MCP Inspector's CLI mode against STOCKADE: tools/list, a run
    and a hostile path. Prints one TAP line; returns True on success or
    skip."""
    major = int(subprocess.run(["node", "-p", "process.versions.node"],
                               capture_output=True, text=True).stdout
                .split(".")[0] or 0)
    if major < 20:
        print(f"ok {n} # SKIP the MCP Inspector 0.21 needs Node.js 20 or "
              f"later (22 by its package); this machine has {major}")
        return True
    dest = os.path.join(build, "tests", "mcp-inspector")
    why = install_client(dest, "mcp-inspector", ())
    if why is not None:
        print(f"not ok {n} - the MCP Inspector could not be installed: "
              + why.replace("\n", " "))
        return False
    scratch = tempfile.mkdtemp(prefix="stockade-mcp-insp-")
    ws = os.path.join(scratch, "ws")
    os.mkdir(ws)
    if os.geteuid() == 0:
        os.chown(ws, 65534, 65534)
    cli = [os.path.join(dest, "node_modules", ".bin", "mcp-inspector"),
           "--cli", stockade, "mcp", "--workspace", ws]
    problems = []
    try:
        def run(*args):
            r = subprocess.run(cli + list(args), capture_output=True,
                               text=True, timeout=120)
            try:
                return json.loads(r.stdout)
            except ValueError:
                problems.append(f"{args}: exit {r.returncode}: "
                                f"{(r.stdout + r.stderr)[-500:]}")
                return {}
        names = sorted(t["name"] for t in run("--method", "tools/list")
                       .get("tools", []))
        if names != ["changes", "checkpoint", "drop_checkpoint",
                     "list_checkpoints", "list_files", "read_file",
                     "restore_checkpoint", "run_code", "run_command",
                     "write_file"]:
            problems.append(f"tools/list gave {names}")
        r = run("--method", "tools/call", "--tool-name", "run_code",
                "--tool-arg", "language=python", "--tool-arg",
                "code=print(6*7)")
        if r.get("structuredContent", {}).get("stdout") != "42\n":
            problems.append(f"run_code gave {r}")
        r = run("--method", "tools/call", "--tool-name", "read_file",
                "--tool-arg", "path=../../etc/passwd")
        if r.get("isError") is not True or "invalid_path" not in json.dumps(r):
            problems.append(f"read_file ../../etc/passwd gave {r}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for p in problems:
        print("# " + p)
    print(f"{'ok' if not problems else 'not ok'} {n} - the MCP Inspector's "
          "CLI mode lists the ten tools, runs Python, refuses ../")
    return not problems


def main():
    if shutil.which("node") is None or shutil.which("npm") is None:
        return skip_or_fail("node and npm are needed (tools/bootstrap "
                            "installs them)")
    build = os.path.dirname(os.path.abspath(os.environ["STOCKADE_BIN"]))
    client_dir = os.path.join(build, "tests", "mcp-client")
    why = install_client(client_dir)
    if why is not None:
        return skip_or_fail(why)
    print("1..3")
    ok = run_client(1, "as the caller", client_dir, os.environ["STOCKADE_BIN"],
                    False)
    # As 65534: the binaries and the client where that user can reach them
    # (CI's checkout may not be).
    tmp = tempfile.mkdtemp(prefix="stockade-mcp-bin-")
    try:
        os.chmod(tmp, 0o755)
        for exe in ("stockade", "stockade-launcher"):
            shutil.copy2(os.path.join(build, exe), os.path.join(tmp, exe))
        shutil.copytree(client_dir, os.path.join(tmp, "client"))
        subprocess.run(["chmod", "-R", "a+rX", tmp], check=True)
        ok &= run_client(2, "as uid 65534", os.path.join(tmp, "client"),
                         os.path.join(tmp, "stockade"), True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ok &= inspector(3, build, os.environ["STOCKADE_BIN"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
