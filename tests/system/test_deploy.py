#!/usr/bin/env python3
# The deployment recipe (deploy/): what can be checked without a
# container engine or a cluster (docs/deploy.md, "What was tested here").
#
# Registered in tests/meson.build as:
#
#   test('deploy', python, args : [files('test_deploy.py')],
#        protocol : 'tap', env : test_env, suite : 'jail',
#        is_parallel : false, timeout : 180)
#
# where test_env sets STOCKADE_BIN and STOCKADE_SOURCE_ROOT.
#
# Output is TAP:
#  1. deploy/k8s/*.yaml parse as YAML (python3-yaml) and the Deployment
#     has the fields docs/deploy.md explains: hostUsers false, procMount
#     Unmasked, runAsNonRoot with uid 10001, seccomp and AppArmor profiles
#     set (not RuntimeDefault for the stockade container), capabilities
#     drop ALL, allowPrivilegeEscalation false, readOnlyRootFilesystem, a
#     readinessProbe whose command is `stockade doctor --json`, an image,
#     resources (requests and limits), `serve --socket` in a volume the
#     agent container shares, /work not mounted in the agent container,
#     the policy ConfigMap mounted and passed with --policy.
#  2. The ConfigMap's policy.ini passes `stockade policy check`.
#  3. deploy/Containerfile: FROM debian:bookworm (both stages), a USER
#     that is not root, a HEALTHCHECK running doctor, python3 and tini
#     at run time, ENTRYPOINT/CMD running `stockade serve --socket` under
#     tini, and
#     every RUN instruction parses with `bash -n`.
#  4. The readiness probe's command, run as the pod runs it as far as one
#     machine can: uid 10001 (when the test is root), no_new_privs and an
#     empty bounding set (setpriv --no-new-privs --bounding-set=-all:
#     allowPrivilegeEscalation false, capabilities drop ALL): exit 0 and
#     a verdict that is not "refused".
#  5. The pod's two containers emulated: `stockade serve --socket` under
#     the same constraints with the ConfigMap's policy, a client of the
#     same uid (examples/python/stockade_client.py, Session.connect, as
#     the agent container would) runs a job through the socket, a client
#     of another uid cannot use the socket, and SIGTERM ends the broker
#     with status 0 and removes the socket.
#
# stockade refusing with 69 is a skip (a failure under
# STOCKADE_MUST_WORK=1).

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, tap_fail, tap_skip, traversable_tmp,
                           unprivileged_binaries)

WORKER_UID = 10001
# The runtime stage: python3 for the jobs, tini as pid 1 (the programs
# are static, meson.build's static_binaries: no shared library).
RUNTIME_LIBS = {"python3", "tini"}
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
    else sys.executable


def source_root():
    return os.environ.get("STOCKADE_SOURCE_ROOT") or \
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load_manifests():
    docs = []
    for path in sorted(glob.glob(os.path.join(source_root(), "deploy", "k8s",
                                              "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            docs += [(os.path.basename(path), d) for d in yaml.safe_load_all(f)
                     if d is not None]
    if not docs:
        raise AssertionError("no manifests in deploy/k8s")
    return docs


def the(docs, kind):
    found = [d for _, d in docs if d.get("kind") == kind]
    if len(found) != 1:
        raise AssertionError(f"expected one {kind}, found {len(found)}")
    return found[0]


def want(cond, what):
    if not cond:
        raise AssertionError(what)


def check_deployment(docs):
    dep = the(docs, "Deployment")
    want(dep.get("apiVersion") == "apps/v1", "Deployment apiVersion apps/v1")
    pod = dep["spec"]["template"]["spec"]
    want(dep["spec"]["selector"]["matchLabels"].items()
         <= dep["spec"]["template"]["metadata"]["labels"].items(),
         "the selector does not match the template's labels")
    want(pod.get("hostUsers") is False, "spec.hostUsers must be false")
    psc = pod.get("securityContext", {})
    want(psc.get("runAsNonRoot") is True, "pod runAsNonRoot")
    want(psc.get("runAsUser") == WORKER_UID, f"pod runAsUser {WORKER_UID}")
    sc_type = psc.get("seccompProfile", {}).get("type")
    want(sc_type in ("Unconfined", "Localhost"),
         f"pod seccompProfile {sc_type!r}: RuntimeDefault refuses user namespaces")
    aa_type = psc.get("appArmorProfile", {}).get("type")
    want(aa_type in ("Unconfined", "Localhost"), f"pod appArmorProfile {aa_type!r}")
    conts = {c["name"]: c for c in pod["containers"]}
    want("stockade" in conts and "agent" in conts,
         f"containers {sorted(conts)}: expected stockade and agent")
    st = conts["stockade"]
    want(isinstance(st.get("image"), str) and ":" in st["image"],
         "the stockade container has no tagged image")
    sc = st.get("securityContext", {})
    want(sc.get("procMount") == "Unmasked", "procMount must be Unmasked")
    want(sc.get("runAsNonRoot") is True and sc.get("runAsUser") == WORKER_UID,
         "the stockade container must run as non-root uid 10001")
    want(sc.get("allowPrivilegeEscalation") is False,
         "allowPrivilegeEscalation false")
    want(sc.get("capabilities", {}).get("drop") == ["ALL"], "drop ALL")
    want(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
    want(sc.get("privileged") in (None, False), "never privileged")
    for k in ("seccompProfile", "appArmorProfile"):
        want(sc.get(k, {}).get("type") != "RuntimeDefault",
             f"the stockade container's {k} overrides the pod's with RuntimeDefault")
    probe = st.get("readinessProbe", {}).get("exec", {}).get("command", [])
    want(probe[-2:] == ["doctor", "--json"] and
         os.path.basename(probe[0]) == "stockade",
         f"readinessProbe command {probe}: expected stockade doctor --json")
    res = st.get("resources", {})
    for part in ("requests", "limits"):
        want({"cpu", "memory"} <= set(res.get(part, {})),
             f"resources.{part} needs cpu and memory")
    args = st.get("args", [])
    want(args[:2] == ["serve", "--socket"], f"args {args}: serve --socket")
    sock = args[2]
    want("--workspace" in args and "--policy" in args, "--workspace and --policy")
    ws = args[args.index("--workspace") + 1]
    policy = args[args.index("--policy") + 1]
    vols = {v["name"]: v for v in pod["volumes"]}

    def mounts(c):
        return {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}

    sm, am = mounts(st), mounts(conts["agent"])
    sock_dir = os.path.dirname(sock)
    want(sock_dir in sm and am.get(sock_dir) == sm[sock_dir],
         f"the socket's directory {sock_dir} must be one volume in both containers")
    want("emptyDir" in vols[sm[sock_dir]], "the socket volume is an emptyDir")
    want(ws in sm and "emptyDir" in vols[sm[ws]], "the workspace is an emptyDir")
    want(ws not in am, "the agent container must not mount the workspace")
    pdir = os.path.dirname(policy)
    want(pdir in sm and "configMap" in vols[sm[pdir]],
         "the policy comes from a ConfigMap mounted at its directory")
    ag = conts["agent"].get("securityContext", {})
    want(ag.get("runAsUser") == WORKER_UID,
         "the agent container must share the broker's uid (SO_PEERCRED)")
    want(psc.get("runAsUser") == WORKER_UID or ag.get("runAsUser"), "agent uid")
    return {"probe": probe, "args": args, "policy_cm": vols[sm[pdir]]["configMap"]["name"]}


def policy_text(docs, cm_name):
    for _, d in docs:
        if d.get("kind") == "ConfigMap" and d["metadata"]["name"] == cm_name:
            return d["data"]["policy.ini"]
    raise AssertionError(f"no ConfigMap {cm_name}")


def containerfile_instructions():
    with open(os.path.join(source_root(), "deploy", "Containerfile"),
              encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, cur = [], ""
    for line in lines:
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if cur and line.lstrip().startswith("#"):
            continue   # a comment inside a continued instruction
        if line.endswith("\\"):
            cur += line[:-1]   # the builder drops backslash-newline
            continue
        cur += line
        word, _, rest = cur.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def check_containerfile(stockade_bin):
    ins = containerfile_instructions()
    froms = [r for w, r in ins if w == "FROM"]
    want(len(froms) == 2 and all(re.match(r"debian:bookworm\S*(\s|$)", f)
                                 for f in froms),
         f"FROM lines {froms}: expected two debian:bookworm* stages")
    users = [r for w, r in ins if w == "USER"]
    want(users and users[-1].split(":")[0] not in ("0", "root"),
         f"USER {users}: the runtime stage must not run as root")
    want(users[-1].split(":")[0] == str(WORKER_UID), "USER 10001")
    hc = [r for w, r in ins if w == "HEALTHCHECK"]
    want(len(hc) == 1 and "CMD" in hc[0] and "doctor" in hc[0],
         "a HEALTHCHECK running stockade doctor")
    runs = [r for w, r in ins if w == "RUN"]
    want(len(runs) >= 3, f"{len(runs)} RUN instructions")
    for r in runs:
        p = subprocess.run(["bash", "-n"], input=r, text=True,
                           capture_output=True, timeout=10)
        want(p.returncode == 0, f"bash -n refuses RUN {r!r}: {p.stderr}")
    final = ins[[i for i, (w, _) in enumerate(ins) if w == "FROM"][-1]:]
    runtime_runs = " ".join(r for w, r in final if w == "RUN")
    missing = RUNTIME_LIBS - set(runtime_runs.split())
    want(not missing, f"the runtime stage does not install {sorted(missing)}")
    want("-dev" not in runtime_runs, "the runtime stage installs -dev packages")
    ep = json.loads(dict(final)["ENTRYPOINT"])
    cmd = json.loads(dict(final)["CMD"])
    want(ep == ["/usr/bin/tini", "--", "stockade"] and
         cmd[:2] == ["serve", "--socket"] and
         "--workspace" in cmd, f"ENTRYPOINT {ep} CMD {cmd}")
    build_runs = " ".join(r for w, r in ins[:len(ins) - len(final)] if w == "RUN")
    want("--prefix=/usr" in build_runs and "meson install" in build_runs,
         "the build stage runs meson setup --prefix=/usr and meson install")
    return f"{len(ins)} instructions, {len(runs)} RUN lines parse"


def worker_prefix(is_root):
    """setpriv arguments giving what the pod's security context gives."""
    p = ["setpriv", "--no-new-privs"]
    if is_root:
        p += [f"--reuid={WORKER_UID}", f"--regid={WORKER_UID}",
              "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    return p


def worker_env():
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "HOME": "/nonexistent"}


def owned_dir(cleanup, prefix, uid, mode=0o700):
    d = tempfile.mkdtemp(prefix=prefix, dir=traversable_tmp())
    cleanup.append(d)
    if uid is not None:
        os.chown(d, uid, uid)
    os.chmod(d, mode)
    return d


def run_probe(probe, stockade, is_root):
    argv = worker_prefix(is_root) + [stockade] + probe[1:]
    diag("$ " + " ".join(argv))
    p = subprocess.run(argv, env=worker_env(), cwd="/", capture_output=True,
                       text=True, timeout=60)
    if p.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("doctor refused: " + p.stdout[-500:])
    want(p.returncode == 0, f"doctor --json exited {p.returncode}: {p.stderr}")
    verdict = json.loads(p.stdout)["verdict"]
    want(not verdict.startswith("refused"), f"verdict {verdict}")
    return verdict


CLIENT = """
import sys
sys.path.insert(0, sys.argv[1])
from stockade_client import Session
with Session.connect(sys.argv[2]) as s:
    s.write("job.py", "print(6 * 7)\\n")
    r = s.exec(["python3", "job.py"], timeout_seconds=10)
    print(r["status"], r["stdout"].strip(), r["enforcement"])
"""


def run_pod(stockade, policy, is_root, cleanup):
    uid = WORKER_UID if is_root else None
    ws = owned_dir(cleanup, "stockade-deploy-work-", uid)
    sockdir = owned_dir(cleanup, "stockade-deploy-run-", uid, 0o755)
    confdir = owned_dir(cleanup, "stockade-deploy-etc-", None, 0o755)
    with open(os.path.join(confdir, "policy.ini"), "w", encoding="utf-8") as f:
        f.write(policy)
    os.chmod(os.path.join(confdir, "policy.ini"), 0o644)
    pydir = owned_dir(cleanup, "stockade-deploy-agent-", None, 0o755)
    for name in ("stockade_client.py",):
        shutil.copyfile(os.path.join(source_root(), "examples", "python", name),
                        os.path.join(pydir, name))
        os.chmod(os.path.join(pydir, name), 0o644)
    sock = os.path.join(sockdir, "stockade.sock")
    argv = worker_prefix(is_root) + [stockade, "serve", "--socket", sock,
                                     "--workspace", ws, "--policy",
                                     os.path.join(confdir, "policy.ini")]
    diag("$ " + " ".join(argv))
    errf = tempfile.TemporaryFile()
    server = subprocess.Popen(argv, env=worker_env(), cwd="/",
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=errf)
    try:
        deadline = time.monotonic() + 15
        while not os.path.exists(sock):
            if server.poll() is not None:
                errf.seek(0)
                msg = errf.read().decode(errors="replace")
                if server.returncode == EXIT_NO_KERNEL_LAYER:
                    raise Skip("serve refused: " + msg)
                raise AssertionError(f"serve exited {server.returncode}: {msg}")
            want(time.monotonic() < deadline, "no socket after 15 s")
            time.sleep(0.02)
        c = subprocess.run(worker_prefix(is_root) + [PYTHON, "-c", CLIENT, pydir,
                                                     sock],
                           env=worker_env(), cwd="/", capture_output=True,
                           text=True, timeout=60)
        want(c.returncode == 0, f"the agent-side client failed: {c.stderr[-1500:]}")
        want(c.stdout.split()[:2] == ["ok", "42"], f"job: {c.stdout!r}")
        note = f"job ok through the socket ({c.stdout.split()[-1]})"
        if is_root:
            other = subprocess.run(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                 "--clear-groups", PYTHON, "-c", CLIENT, pydir, sock],
                env=worker_env(), cwd="/", capture_output=True, text=True,
                timeout=60)
            want(other.returncode != 0, "a client of uid 65534 used the socket")
            note += "; uid 65534 kept out"
        server.send_signal(signal.SIGTERM)
        rc = server.wait(15)
        want(rc == 0, f"serve exited {rc} on SIGTERM")
        want(not os.path.exists(sock), "the socket was left behind")
        return note
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        errf.seek(0)
        tail = errf.read().decode(errors="replace").strip()
        if tail:
            diag("serve's stderr: " + tail[-1500:])
        errf.close()


def main():
    stockade_bin = os.environ.get("STOCKADE_BIN", "")
    is_root = os.geteuid() == 0
    print("1..5")
    failed = 0
    cleanup = []
    state = {}

    def step(number, title, fn):
        nonlocal failed
        try:
            note = fn()
            print(f"ok {number} - {title}" + (f" ({note})" if note else ""))
        except Skip as exc:
            failed += tap_skip(number, title, exc)
        except (AssertionError, OSError, ValueError, KeyError, TypeError,
                IndexError, yaml.YAMLError, subprocess.SubprocessError) as exc:
            failed += 1
            tap_fail(number, title, exc)
        sys.stdout.flush()

    def manifests():
        docs = load_manifests()
        state["docs"] = docs
        state.update(check_deployment(docs))
        return f"{len(docs)} documents"

    def policy():
        text = policy_text(state["docs"], state["policy_cm"])
        state["policy"] = text
        with tempfile.NamedTemporaryFile("w", suffix=".ini") as f:
            f.write(text)
            f.flush()
            p = subprocess.run([stockade_bin, "policy", "check", f.name],
                               capture_output=True, text=True, timeout=30)
        want(p.returncode == 0, f"policy check: {p.stdout}{p.stderr}")
        return None

    def binaries():
        if "stockade" not in state:
            want(os.access(stockade_bin, os.X_OK), f"STOCKADE_BIN={stockade_bin!r}")
            if shutil.which("setpriv") is None:
                raise Skip("setpriv not found (util-linux)")
            state["stockade"] = unprivileged_binaries(stockade_bin, cleanup) \
                if is_root else stockade_bin
        return state["stockade"]

    try:
        step(1, "deploy/k8s parses, with the security context and probe of "
                "docs/deploy.md", manifests)
        step(2, "the ConfigMap's policy passes stockade policy check", policy)
        step(3, "deploy/Containerfile: bookworm, non-root USER, HEALTHCHECK "
                "doctor, RUN lines parse", lambda: check_containerfile(stockade_bin))
        who = f"uid {WORKER_UID}, " if is_root else ""
        step(4, f"the readiness probe passes as the pod runs it ({who}"
                "no_new_privs, no capabilities)",
             lambda: run_probe(state["probe"], binaries(), is_root))
        step(5, f"serve --socket and an agent-side client of the same uid "
                f"({who}no_new_privs)",
             lambda: run_pod(binaries(), state["policy"], is_root, cleanup))
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
