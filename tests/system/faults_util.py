# The helpers of the fault-injection tests (test_faults_kill.py,
# faults_client.py): the processes of a `stockade serve` session read
# from /proc alone (no procps: the broker, its spawner, the launcher, its
# zygote, jail inits and payloads, told apart by parentage and pid
# namespace), the queue of a unix socket (sock_diag(7)), the user the
# broker runs as (Host: what test_fsattack.Session needs) and the calls
# every case makes.

import json
import os
import socket
import stat
import struct
import time

from stockade_test import NOBODY, save_result, traversable_tmp
from test_fsattack import Dirs, Session, check, wait_for

DIED = "the launcher died during the job"
HINT = "The sandbox itself failed, not the program: " + DIED


# --- /proc ---------------------------------------------------------------------

def stat_of(pid):
    """(state, ppid, starttime) of PID, or None when it does not exist."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return f[0], int(f[1]), int(f[19])


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def pid_ns(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def all_stats():
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = stat_of(int(name))
            if st is not None:
                out[int(name)] = st
    return out


def children(pid, stats=None):
    stats = stats if stats is not None else all_stats()
    return sorted(p for p, st in stats.items() if st[1] == pid)


def subtree(pid):
    """{pid: starttime} of PID and everything below it."""
    stats = all_stats()
    out, level = {}, [pid]
    while level:
        nxt = []
        for p in level:
            if p in stats:
                out[p] = stats[p][2]
                nxt += children(p, stats)
        level = nxt
    return out


def live(ident):
    """The processes of IDENT ({pid: starttime}) still alive; zombies are
    dead (and reaped when they are ours: the test is a subreaper)."""
    left = []
    for pid, start in ident.items():
        st = stat_of(pid)
        if st is None or st[2] != start:
            continue
        if st[0] in "ZX":
            if st[1] == os.getpid():
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            continue
        left.append(pid)
    return left


def marked(mark):
    m = mark.encode()
    return [int(n) for n in os.listdir("/proc") if n.isdigit() and
            any(m in a for a in cmdline(int(n)))]


def unix_rqueue(pid, fd):
    """Bytes waiting in the receive queue of PID's unix socket FD
    (sock_diag(7): SOCK_DIAG_BY_FAMILY for AF_UNIX by inode,
    UDIAG_SHOW_RQLEN; linux/unix_diag.h); 0 for a socket of another
    network namespace, which sock_diag cannot see."""
    ino = os.stat(f"/proc/{pid}/fd/{fd}").st_ino
    req = struct.pack("=BBHIIIII", socket.AF_UNIX, 0, 0, 0xffffffff, ino,
                      0x10, 0xffffffff, 0xffffffff)
    hdr = struct.pack("=IHHII", 16 + len(req), 20, 1, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 4) as nl:
        nl.sendto(hdr + req, (0, 0))
        msg = nl.recv(65536)
    length, typ = struct.unpack_from("=IH", msg)
    # A socket made in another network namespace (the jail's: init's
    # hand-over socket to its payload) is not this one's to see: ENOENT.
    if typ == 2 and struct.unpack_from('=i', msg, 16)[0] == -2:
        return 0
    check(typ != 2, lambda: f"sock_diag refused: errno "
          f"{-struct.unpack_from('=i', msg, 16)[0]}")
    off = 16 + 16                       # nlmsghdr, unix_diag_msg
    while off + 4 <= length:
        alen, atype = struct.unpack_from("=HH", msg, off)
        if atype == 4:                  # UNIX_DIAG_RQLEN
            return struct.unpack_from("=I", msg, off + 4)[0]
        off += (alen + 3) & ~3
    raise AssertionError(f"no UNIX_DIAG_RQLEN for socket {ino} of {pid}")


def queued(pids):
    """Bytes waiting in the unix sockets the processes PIDS hold."""
    total = 0
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if stat.S_ISSOCK(os.stat(f"/proc/{pid}/fd/{fd}").st_mode):
                    total += unix_rqueue(pid, int(fd))
            except FileNotFoundError:
                continue            # closed meanwhile
    return total


class Tree:
    """The launcher below broker BROKER and its parts, from /proc."""

    def __init__(self, broker):
        stats = all_stats()
        hits = [p for p in children(broker, stats)
                if cmdline(p)[:1] == [b"stockade-launcher"]]
        check(len(hits) == 1, f"want one stockade-launcher below the broker "
              f"{broker}, found {hits}")
        self.launcher = hits[0]
        ns = pid_ns(self.launcher)
        kids = children(self.launcher, stats)
        self.zygotes = [p for p in kids if pid_ns(p) == ns]
        self.inits = [p for p in kids if pid_ns(p) != ns]
        check(len(self.zygotes) == 1, f"want one zygote below the launcher, "
              f"found {self.zygotes}")
        self.zygote = self.zygotes[0]
        self.ident = subtree(self.launcher)


def wait_pool(broker, n):
    """The Tree once the launcher has N waiting jails (inits whose only
    child, if any, is their payload still waiting for its job, named
    stockade-wait: launcher/payload/payload.c); a launcher not there yet
    is waited for too."""
    got = []

    def ready():
        try:
            t = Tree(broker)
        except AssertionError as exc:
            got[:] = [exc]
            return False
        got[:] = [t]
        return len([i for i in t.inits
                    if all(comm(k) == "stockade-wait"
                           for k in children(i))]) == n
    try:
        wait_for(ready, 20, f"{n} warm jail(s) in the pool")
    except AssertionError as exc:
        raise AssertionError(f"{exc} (last seen: {got[0] if got else None}: "
                             f"{getattr(got[0], 'inits', '') if got else ''})")
    return got[0]


def wait_gone(ident, seconds, what):
    """Seconds until no process of IDENT is alive, asserting SECONDS."""
    t0 = time.monotonic()
    deadline = t0 + seconds
    while True:
        left = live(ident)
        if not left:
            return time.monotonic() - t0
        check(time.monotonic() < deadline, lambda: f"{what}: still alive after "
              f"{seconds} s: " + ", ".join(f"{p} {cmdline(p)!r}" for p in left))
        time.sleep(0.002)


# --- the user and the sessions ----------------------------------------------

class Host(Dirs):
    """One user the broker runs as; what test_fsattack.Session needs."""

    def __init__(self, stockade, prefix, env, cleanup):
        self.stockade = stockade
        self.prefix = prefix
        self.env = env
        self.cleanup = cleanup
        self.owner = NOBODY if prefix else None
        self.run_owner = self.owner  # Dirs.host_file's
        self.ws_owner = NOBODY if os.geteuid() == 0 else None
        self.base = self.mkdtemp("stockade-faults-kill-", self.owner)
        self.scratch = self.mkdtemp("stockade-faults-kill-host-", self.owner)
        self.nsock = self.nws = 0
        self.serve_state = None
        self.pol_nopool = self.host_file("nopool.ini", b"[jail]\npool_size = 0\n")

    def mkdtemp(self, prefix, owner):
        return self._mkdtemp(prefix, traversable_tmp(), owner)

    def serve(self, ws, policy=None, sock=False):
        return Session(self, ws, policy, sock)


def finish(s):
    """Kills the session S unless it was closed (a case that failed)."""
    if not s.closed:
        s.kill()


def reconnect(s):
    """A new client connection to the socket session S."""
    if s.sock is not None:
        s.sock.close()
    s.sock = s.connect()
    s.rfd = s.sock.fileno()
    s.buf = b""


def exec_ok(s, text="next"):
    r = s.result("exec", {"argv": ["sh", "-c", f"echo {text}"],
                          "timeout_seconds": 20})
    check(r["status"] == "ok" and r["exit_code"] == 0 and
          r["stdout"] == text + "\n",
          f"the next exec: {json.dumps(r)[:600]}")
    return r


def start_exec(s, argv):
    rid, line = s.request("exec", {"argv": argv, "timeout_seconds": 30})
    s.send(line)
    return rid


def expect_launcher_died(s, rid):
    """The answer to exec RID: the sandbox_error of a launcher that died."""
    msg = s.answer(rid, s.recv_line(30), "the killed job's answer")
    check("result" in msg, f"want a result, got {msg}")
    r = msg["result"]
    save_result(r)
    check(r["status"] == "sandbox_error" and r["exit_code"] is None and
          r["signal"] is None, f"want sandbox_error, got {json.dumps(r)[:600]}")
    check(r["detail"].startswith(DIED + " ("),
          f"detail {r['detail']!r}: want {DIED!r}")
    check(r["hint"].startswith(HINT), f"hint {r['hint']!r}")
    return r


def sleeper(mark):
    return ["sh", "-c", f"sleep 30; : {mark}"]


def wait_payload(s, mark):
    wait_for(lambda: marked(mark), 20, "the payload")
    return Tree(s.proc.pid)


def after_launcher_kill(s, old, rid, what):
    """The common end of cases 1 and 2: the sandbox_error, the old
    launcher's processes gone, the broker alive, the next exec on a new
    launcher."""
    r = expect_launcher_died(s, rid)
    t = wait_gone(old.ident, 10, f"the old launcher's processes ({what})")
    check(s.proc.poll() is None, "the broker ended")
    exec_ok(s)
    new = Tree(s.proc.pid)
    check(new.launcher != old.launcher, "the next job ran on the old launcher")
    return f"{r['detail']}; old tree gone in {t * 1000:.0f} ms"
