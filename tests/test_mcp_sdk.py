#!/usr/bin/python3
# `stockade mcp` driven by a real MCP client, not one written here: the
# official TypeScript SDK's Client with its stdio transport
# (@modelcontextprotocol/sdk, pinned in tests/mcp/package-lock.json),
# through tests/mcp/client.mjs (initialize, tools/list, Python, files,
# stdin, a timeout, progress, cancellation, hostile paths, changes).
#
# Set-up: `npm ci` from the lock file into the build directory (the
# npm registry; npm's cache makes a rerun cheap). Then the client runs as
# the caller and as uid 65534, each against a fresh workspace. TAP.
# Without node or npm the test skips, and fails under STOCKADE_MUST_WORK=1.
import os
import shutil
import subprocess
import sys
import tempfile

MUST = os.environ.get("STOCKADE_MUST_WORK") == "1"
HERE = os.path.dirname(os.path.abspath(__file__))


def skip_or_fail(why):
    print("1..0 # SKIP " + why if not MUST else "1..1\nnot ok 1 - " + why)
    return 1 if MUST else 0


def install_client(dest):
    """Copies tests/mcp/ to DEST and installs its lock file there (npm ci
    only when the lock file changed). Returns None or the reason it
    failed."""
    os.makedirs(dest, exist_ok=True)
    lock = os.path.join(HERE, "mcp", "package-lock.json")
    stamp = os.path.join(dest, "node_modules", ".stockade-lock")
    for f in ("package.json", "package-lock.json", "client.mjs"):
        shutil.copyfile(os.path.join(HERE, "mcp", f), os.path.join(dest, f))
    want = open(lock, "rb").read()
    if os.path.exists(stamp) and open(stamp, "rb").read() == want:
        return None
    r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                        "--loglevel=error"], cwd=dest, capture_output=True,
                       text=True, timeout=900)
    if r.returncode != 0:
        return f"npm ci failed ({r.returncode}): {r.stderr[-2000:]}"
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


def main():
    if shutil.which("node") is None or shutil.which("npm") is None:
        return skip_or_fail("node and npm are needed (tools/bootstrap "
                            "installs them)")
    build = os.path.dirname(os.path.abspath(os.environ["STOCKADE_BIN"]))
    client_dir = os.path.join(build, "tests", "mcp-client")
    why = install_client(client_dir)
    if why is not None:
        return skip_or_fail(why)
    print("1..2")
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
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
