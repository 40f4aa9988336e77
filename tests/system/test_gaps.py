#!/usr/bin/python3
# What the jail does not stop, observed (docs/threat-model.md, "What
# stockade does not do"): the page names these gaps, and this test keeps
# it honest in both directions. If a gap closes (a kernel whose Landlock
# refuses the connect, a /proc that stops showing the host's figures),
# the test fails and the page must be changed with the code.
#
#  1. a path-named unix socket in a directory the policy binds is
#     reachable from the jail: the job connects and sends a token that a
#     listener on the host receives (no network is needed, so the network
#     namespace does not stop it, and Landlock has no right for it);
#  2. host-wide figures reach the jail: /proc/meminfo's MemTotal and the
#     kernel release are the host's, and /proc/uptime is the host's
#     within a few seconds (no time namespace): channels between jobs
#     and facts for an exploit;
#
# A gap that has closed stays here, asserted in its new direction:
#
#  3. [files] max_files binds a job too (no longer a gap, issue 26): a
#     job's writes to /work go to a stage, a tmpfs of max_files entries
#     (plus launcher/init/stage.c's STAGE_INODE_SLACK), so the kernel
#     refuses its 1017th new entry under max_files = 1000 (ENOSPC) and
#     the job ends disk_full; its change set, over max_files by that
#     slack, is not committed (quota_exceeded). (It was a gap while the launcher watched
#     only the workspace's bytes: a job made 2000 files and ended ok.)
#
# Every case runs as the test's user and, when that is root, as uid
# 65534 too (setpriv, with the binaries copied where that user can read
# them). The socket's directory is made under /var/tmp: the policy
# refuses binds under /tmp, which the jail mounts itself.
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (NOBODY, Skip, remove_all, save_result, tap_case,
                           tap_skip, unprivileged_binaries)

STOCKADE = os.path.abspath(os.environ.get("STOCKADE_BIN", "build/stockade"))


def run_job(user, policy_text, argv, tmp):
    """Runs ARGV with `stockade run --json` as USER (a (prefix, stockade)
    pair: [] or setpriv's argv, and the binary that user can run) on the
    default policy with POLICY_TEXT laid over it, the policy file in TMP;
    returns the parsed result."""
    prefix, stockade = user
    policy = os.path.join(tmp, "policy.ini")
    with open(policy, "w", encoding="utf-8") as fh:
        fh.write(policy_text)
    os.chmod(policy, 0o644)
    cmd = prefix + [stockade, "run", "--json", "--timeout", "10",
                  "--policy", policy, "--"] + argv
    p = subprocess.run(cmd, capture_output=True, timeout=60, cwd="/",
                       check=False)
    save_result(p.stdout)
    assert p.stdout, f"no result (exit {p.returncode}): {p.stderr.decode(errors='replace')}"
    return json.loads(p.stdout)


def bound_socket_reachable(user, tmp):
    sockdir = tempfile.mkdtemp(prefix="stockade-gaps-", dir="/var/tmp")
    CLEANUP.append(sockdir)
    os.chmod(sockdir, 0o755)
    path = os.path.join(sockdir, "svc.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    os.chmod(path, 0o777)
    srv.listen(1)
    srv.settimeout(20)
    token = secrets.token_hex(16)
    got = []

    def serve():
        try:
            conn, _ = srv.accept()
            with conn:
                conn.settimeout(10)
                got.append(conn.recv(256))
        except OSError as exc:
            got.append(exc)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    code = ("import socket, sys; s = socket.socket(socket.AF_UNIX); "
            f"s.connect({path!r}); s.sendall(sys.argv[1].encode()); s.close()")
    r = run_job(user, f"[filesystem]\nro_bind = {sockdir}\n",
                ["python3", "-c", code, token], tmp)
    t.join(25)
    srv.close()
    assert r["status"] == "ok", (
        f"the job did not connect ({r['status']}: {r['stderr'][-400:]}): if "
        "the kernel now refuses it, the gap is closed; update docs/threat-model.md")
    assert got and got[0] == token.encode(), (
        f"the listener on the host got {got!r}, not the job's token: the gap "
        "is closed; update docs/threat-model.md")
    return "a job connected to a socket in a bound directory and its token arrived"


def host_figures_visible(user, tmp):
    code = ("import os; print(os.uname().release); "
            "print(open('/proc/meminfo').readline().split()[1]); "
            "print(open('/proc/uptime').read().split()[0])")
    r = run_job(user, "", ["python3", "-c", code], tmp)
    assert r["status"] == "ok", f"{r['status']}: {r['stderr'][-400:]}"
    release, memtotal, uptime = r["stdout"].split()
    with open("/proc/meminfo", encoding="ascii") as fh:
        host_mem = fh.readline().split()[1]
    with open("/proc/uptime", encoding="ascii") as fh:
        host_up = float(fh.read().split()[0])
    assert release == os.uname().release, (release, os.uname().release)
    assert memtotal == host_mem, f"MemTotal {memtotal} kB in the jail, {host_mem} kB on the host"
    assert abs(float(uptime) - host_up) < 30, f"uptime {uptime} s in the jail, {host_up} s on the host"
    return f"release {release}, MemTotal {memtotal} kB, uptime within {abs(float(uptime) - host_up):.1f} s"


# launcher/init/stage.c: the stage's inodes are max_files plus this.
STAGE_INODE_SLACK = 16


def job_file_count_bounded(user, tmp):
    """Formerly the gap "a job made 2000 files under max_files = 1000 and
    ended ok": now the stage refuses the job's files past max_files
    (ENOSPC) and the job ends disk_full (the assertion is the new truth,
    docs/threat-model.md, "The workspace's file system")."""
    code = ("import errno, os\nos.mkdir('many')\nn = 0\ntry:\n"
            "    for i in range(2000):\n"
            "        open(f'many/{i}', 'w').close()\n"
            "        n += 1\n"
            "except OSError as e:\n"
            "    print(n, errno.errorcode[e.errno])\n"
            "    raise\n"
            "print(n, 'none')\n")
    r = run_job(user, "[files]\nmax_files = 1000\n", ["python3", "-c", code], tmp)
    made, err = (r["stdout"].split() + ["?", "?"])[:2]
    assert err == "ENOSPC" and made.isdigit(), (
        f"{r['status']} {r['stdout']!r}: the job was not refused ENOSPC "
        "under max_files = 1000: the gap is open again")
    # Its files and the directory 'many', against the stage's inodes.
    assert 1000 - STAGE_INODE_SLACK <= int(made) + 1 <= 1000 + STAGE_INODE_SLACK, (
        f"the job made {made} files and a directory under max_files = 1000")
    assert r["status"] == "disk_full", f"{r['status']}: {r.get('hint')}"
    # Its change set holds more entries than max_files (the stage's slack):
    # the commit refuses all of it (quota_exceeded), none is written back.
    w = r.get("workspace") or {}
    assert w.get("committed") == 0 and w.get("error") == "quota_exceeded", w
    return (f"a job under max_files = 1000 made {made} files, then ENOSPC; "
            f"disk_full, nothing committed: {r.get('detail')}")


CLEANUP = []


def main():
    cases = [("a unix socket in a bound directory is reachable from the jail",
              bound_socket_reachable),
             ("the kernel release, MemTotal and uptime are the host's",
              host_figures_visible),
             ("[files] max_files binds a job too: ENOSPC, disk_full "
              "(a gap closed by the stage)",
              job_file_count_bounded)]
    users = [f"as uid {os.geteuid()}"]
    if os.geteuid() == 0:
        users.append(f"as uid {NOBODY}")
    print(f"1..{len(cases) * len(users)}")
    failed = n = 0
    try:
        for label in users:
            user, skip = ([], STOCKADE), None
            if label != users[0]:
                if shutil.which("setpriv") is None:
                    skip = Skip("setpriv not found (util-linux)")
                else:
                    user = (["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                             "--clear-groups"],
                            unprivileged_binaries(STOCKADE, CLEANUP))
            tmp = tempfile.mkdtemp(prefix="stockade-gaps-", dir="/var/tmp")
            CLEANUP.append(tmp)
            os.chmod(tmp, 0o755)
            for title, fn in cases:
                n += 1
                if skip is not None:
                    failed += tap_skip(n, f"{title} ({label})", skip)
                else:
                    failed += tap_case(n, f"{title} ({label})", fn, user, tmp)
    finally:
        remove_all(CLEANUP)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
