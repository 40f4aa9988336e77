/*
 * test_landlock.c: the payload's Landlock domain
 * (launcher/payload/landlock_jail.c; issue 5, item 2 and "What it must show"),
 * observed from inside the jail through the real `stockade run`.
 *
 * Each check tells which layer answered by the errno (style.md rule 21):
 * Landlock refuses a file access with EACCES and a signal across its
 * scope with EPERM (it handles no TCP right: the network namespace
 * bounds TCP, and the jail may serve on its own loopback); the mount layer
 * refuses a write under a read-only mount with EROFS, and the VFS asks
 * the mount before Landlock (mnt_want_write comes before the
 * security_path_mknod and security_file_open hooks), so a write the mount
 * layer refuses never reaches Landlock. A read-only bind the policy marks
 * unsafe_ro_bind_no_landlock is the mount layer's mistake made on
 * purpose: its files are mounted but have no Landlock rule.
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534; a skip for a kernel layer fails under STOCKADE_MUST_WORK=1.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "policy.h"

/* The canary directory (outside /tmp, which a policy may not bind) made
 * by a test and removed by the suite's .fini. */
static char canary_dir[64];

static void
landlock_fini(void)
{
	char path[128];

	if (canary_dir[0] != '\0') {
		snprintf(path, sizeof(path), "%s/canary", canary_dir);
		(void)unlink(path);
		(void)rmdir(canary_dir);
		canary_dir[0] = '\0';
	}
	harness_cleanup();
}

TestSuite(landlock, .init = harness_setup, .fini = landlock_fini,
    .timeout = 120);

/* The kernel's Landlock ABI, 0 when it has none (landlock(7)). */
static int
kernel_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? 0 : (int)v;
}

/* Skips (fails under STOCKADE_MUST_WORK=1) below ABI WANT; true to go on. */
static bool
need_abi(int want)
{
	char why[128];
	int abi = kernel_abi();

	if (abi >= want)
		return true;
	snprintf(why, sizeof(why),
	    "this kernel's Landlock ABI is %d; the "
	    "check needs %d",
	    abi, want);
	harness_skip(why);
	return false;
}

/*
 * A policy file: the embedded default with LINE (a [filesystem] key, or
 * NULL) added to its bind list, under a [filesystem] header of its own
 * (a list section may come again; policy_format writes [network] after
 * [filesystem]). Returns its path (in a harness temporary directory).
 */
static const char *
policy_with(const char *line)
{
	static char path[4096];
	char err[POLICY_ERR_MAX];
	struct policy p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/policy.ini",
	    harness_tmpdir("stockade-landlock-policy"));
	cr_assert_eq(policy_load_default(&p, err, sizeof(err)), 0, "%s", err);
	f = fopen(path, "we");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(policy_format(&p, f), 0);
	if (line != NULL)
		fprintf(f, "[filesystem]\n%s\n", line);
	cr_assert_eq(fclose(f), 0);
	policy_clear(&p);
	return path;
}

/* Runs `python3 -c SCRIPT ARG` under POLICY (NULL: the default), with
 * --unsafe-evaluation when UNSAFE (a policy with an evaluation-only key,
 * unsafe_ro_bind_no_landlock, needs it), expects "ok", and returns the
 * JSON the script printed; the caller frees both. */
static json_t *
run_python_opt(const char *policy, bool unsafe, const char *script,
    const char *arg, struct run_out *o)
{
	const char *status;
	json_t *res;

	if (policy != NULL && unsafe)
		RUN(o, "run", "--json", "--unsafe-evaluation", "--policy",
		    policy, "--", "python3", "-c", script,
		    arg != NULL ? arg : "");
	else if (policy != NULL)
		RUN(o, "run", "--json", "--policy", policy, "--", "python3",
		    "-c", script, arg != NULL ? arg : "");
	else
		RUN(o, "run", "--json", "--", "python3", "-c", script,
		    arg != NULL ? arg : "");
	cr_assert_not_null(o->json, "no JSON result (exit %d): %s / %s",
	    o->status, o->out, o->err);
	status = json_string_value(json_object_get(o->json, "status"));
	cr_assert_str_eq(status != NULL ? status : "", "ok", "%s", o->out);
	res = json_loads(json_string_value(json_object_get(o->json, "stdout")),
	    0, NULL);
	cr_assert_not_null(res, "the script's output is not JSON: %s", o->out);
	return res;
}

static json_t *
run_python(const char *policy, const char *script, const char *arg,
    struct run_out *o)
{
	return run_python_opt(policy, false, script, arg, o);
}

/* The string RES[KEY] (an errno name, "ok", or a value). */
static const char *
field(const json_t *res, const char *key)
{
	const char *v = json_string_value(json_object_get(res, key));

	cr_assert_not_null(v, "%s missing or not a string", key);
	return v;
}

/* Prints {label: "ok" | value | errno name} for each attempt. */
#define ATTEMPT_PY                                             \
	"import errno, json, os, socket, sys\n"                \
	"res = {}\n"                                           \
	"def attempt(label, f):\n"                             \
	"    try:\n"                                           \
	"        v = f()\n"                                    \
	"        res[label] = 'ok' if v is None else str(v)\n" \
	"    except OSError as e:\n"                           \
	"        res[label] = errno.errorcode.get(e.errno, str(e.errno))\n"

/* ---- the ABI ------------------------------------------------------------- */

Test(landlock, result_reports_the_kernels_abi)
{
	struct run_out o;
	int abi = kernel_abi();

	RUN(&o, "run", "--json", "--", "true");
	cr_assert_not_null(o.json, "%s / %s", o.out, o.err);
	if (abi == 0) {
		/* Fail closed: no Landlock, no job (never a weaker jail). */
		cr_assert_str_eq(json_string_value(
				     json_object_get(o.json, "status")),
		    "sandbox_error", "%s", o.out);
		run_out_free(&o);
		harness_skip("this kernel has no Landlock");
		return;
	}
	cr_assert_str_eq(json_string_value(json_object_get(o.json, "status")),
	    "ok", "%s", o.out);
	cr_assert_eq(json_integer_value(
			 json_object_get(o.json, "landlock_abi")),
	    abi, "%s", o.out);
	run_out_free(&o);
}

/* ---- the mount layer weakened: Landlock alone ------------------------------
 * */

/* Makes the canary directory with one file "canary" holding SECRET, both
 * readable by everyone (a root launcher's payload is 65534 outside). */
static void
make_canary(char *secret, size_t size)
{
	char path[128];

	harness_random_hex(secret, size);
	snprintf(canary_dir, sizeof(canary_dir),
	    "/var/tmp/stockade-landlock-XXXXXX");
	cr_assert_not_null(mkdtemp(canary_dir), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(chmod(canary_dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/canary", canary_dir);
	harness_write_file(path, secret);
	cr_assert_eq(chmod(path, 0644), 0);
}

static const char canary_script[] = ATTEMPT_PY
    "d = sys.argv[1]\n"
    "f = d + '/canary'\n"
    "attempt('stat', lambda: os.stat(f).st_size)\n"
    "attempt('read', lambda: open(f).read())\n"
    "attempt('list', lambda: ','.join(os.listdir(d)))\n"
    "attempt('write', lambda: open(d + '/new', 'w').close())\n"
    "attempt('via_proc', lambda: open('/proc/self/root' + f).read())\n"
    "print(json.dumps(res))\n";

Test(landlock, file_the_mount_layer_shows_is_unreadable_without_a_rule)
{
	char secret[33], line[256];
	struct run_out o;
	json_t *res;

	if (!need_abi(1))
		return;
	make_canary(secret, sizeof(secret));

	/* Mounted, no rule: the name and metadata show (Landlock has no
	 * right for stat or path walks), the content does not. */
	snprintf(line, sizeof(line), "unsafe_ro_bind_no_landlock = %s",
	    canary_dir);
	res = run_python_opt(policy_with(line), true, canary_script, canary_dir,
	    &o);
	cr_assert_null(strstr(o.out, secret), "the canary leaked: %s", o.out);
	cr_assert_str_eq(field(res, "stat"), "32");
	cr_assert_str_eq(field(res, "read"), "EACCES", "%s", o.out);
	cr_assert_str_eq(field(res, "via_proc"), "EACCES", "%s", o.out);
	cr_assert_str_eq(field(res, "list"), "EACCES", "%s", o.out);
	/* The read-only mount answers a write before Landlock is asked. */
	cr_assert_str_eq(field(res, "write"), "EROFS", "%s", o.out);
	json_decref(res);
	run_out_free(&o);

	/* The same directory with an ordinary bind reads: the difference
	 * above is Landlock's alone. */
	snprintf(line, sizeof(line), "ro_bind = %s", canary_dir);
	res = run_python(policy_with(line), canary_script, canary_dir, &o);
	cr_assert_str_eq(field(res, "stat"), "32");
	cr_assert_str_eq(field(res, "read"), secret, "%s", o.out);
	cr_assert_str_eq(field(res, "via_proc"), secret, "%s", o.out);
	cr_assert_str_eq(field(res, "list"), "canary", "%s", o.out);
	cr_assert_str_eq(field(res, "write"), "EROFS", "%s", o.out);
	json_decref(res);
	run_out_free(&o);
}

/* ---- writes ----------------------------------------------------------------
 * */

Test(landlock, writes_only_in_work_tmp_shm_and_home)
{
	static const char script[] = ATTEMPT_PY
	    "def create(p):\n"
	    "    open(p, 'w').close()\n"
	    "    os.unlink(p)\n"
	    "def write(p):\n"
	    "    with open(p, 'wb', buffering=0) as fh:\n"
	    "        fh.write(b'x')\n"
	    "for label, p in (('work', '/work/f'), ('tmp', '/tmp/f'),\n"
	    "                 ('shm', '/dev/shm/f'),\n"
	    "                 ('home', os.path.expanduser('~/f')),\n"
	    "                 ('root', '/f'), ('etc', '/etc/f'),\n"
	    "                 ('usr', '/usr/bin/f'), ('dev', '/dev/f'),\n"
	    "                 ('proc', '/proc/f'), ('home_parent', "
	    "'/home/f')):\n"
	    "    attempt('create_' + label, lambda: create(p))\n"
	    "for label, p in (('null', '/dev/null'), ('full', '/dev/full'),\n"
	    "                 ('random', '/dev/random'),\n"
	    "                 ('urandom', '/dev/urandom'),\n"
	    "                 ('passwd', '/etc/passwd'),\n"
	    "                 ('comm', '/proc/self/comm'),\n"
	    "                 ('sysctl', '/proc/sys/kernel/hostname')):\n"
	    "    attempt('write_' + label, lambda: write(p))\n"
	    "def across(a, b):\n"
	    "    os.makedirs(a + '/x')\n"
	    "    os.makedirs(a + '/y')\n"
	    "    open(a + '/x/f', 'w').close()\n"
	    "    os.rename(a + '/x/f', a + '/y/f')\n"
	    "    os.link(a + '/y/f', a + '/x/g')\n"
	    "    os.rename(a + '/y', b)\n"
	    "attempt('refer_work', lambda: across('/work/r', '/work/s'))\n"
	    "attempt('refer_tmp', lambda: across('/tmp/r', '/tmp/r2'))\n"
	    "print(json.dumps(res))\n";
	static const struct {
		const char *key, *want;
	} want[] = {
	    {"create_work", "ok"},
	    {"create_tmp", "ok"},
	    {"create_shm", "ok"},
	    {"create_home", "ok"},
	    /* Read-only mounts (the root tmpfs, /etc in it, /usr, /dev):
		 * the mount layer answers first. */
	    {"create_root", "EROFS"},
	    {"create_etc", "EROFS"},
	    {"create_usr", "EROFS"},
	    {"create_dev", "EROFS"},
	    {"create_home_parent", "EROFS"},
	    /* procfs makes no files: its own answer. */
	    {"create_proc", "ENOENT"},
	    {"write_null", "ok"},
	    {"write_full", "ENOSPC"},
	    {"write_passwd", "EROFS"},
	    {"write_sysctl", "EROFS"},
	    /* What the mount layer lets through and Landlock does not: a
		 * device on a read-only mount can still be written (the
		 * read-only check covers files, directories and links), and
		 * /proc is mounted read-write for the kernel's own checks. */
	    {"write_random", "EACCES"},
	    {"write_urandom", "EACCES"},
	    {"write_comm", "EACCES"},
	    /* Renames and links between directories (REFER, ABI 2):
		 * without the right, EXDEV. */
	    {"refer_work", "ok"},
	    {"refer_tmp", "ok"},
	};
	struct run_out o;
	json_t *res;

	if (!need_abi(1))
		return;
	res = run_python(NULL, script, NULL, &o);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect_str_eq(field(res, want[i].key), want[i].want,
		    "%s: %s", want[i].key, o.out);
	json_decref(res);
	run_out_free(&o);
}

/* ---- network and scopes
 * ------------------------------------------------------ */

/* Landlock handles no TCP right (issue 22: a job may serve on its own
 * loopback): a bind on lo succeeds and a connect to a port where nothing
 * listens is the stack's ECONNREFUSED, not Landlock's EACCES. */
Test(landlock, tcp_is_left_to_the_network_namespace)
{
	static const char script[] = ATTEMPT_PY
	    "def tcp_bind():\n"
	    "    socket.socket().bind(('127.0.0.1', 0))\n"
	    "def tcp_connect():\n"
	    "    socket.socket().connect(('127.0.0.1', 9))\n"
	    "def tcp6_bind():\n"
	    "    socket.socket(socket.AF_INET6).bind(('::1', 0))\n"
	    "def udp_bind():\n"
	    "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
	    ".bind(('127.0.0.1', 0))\n"
	    "attempt('tcp_bind', tcp_bind)\n"
	    "attempt('tcp_connect', tcp_connect)\n"
	    "attempt('tcp6_bind', tcp6_bind)\n"
	    "attempt('udp_bind', udp_bind)\n"
	    "print(json.dumps(res))\n";
	struct run_out o;
	json_t *res;

	if (!need_abi(4))
		return;
	res = run_python(NULL, script, NULL, &o);
	cr_assert_str_eq(field(res, "tcp_bind"), "ok", "%s", o.out);
	cr_assert_str_eq(field(res, "tcp_connect"), "ECONNREFUSED", "%s",
	    o.out);
	cr_assert_str_eq(field(res, "udp_bind"), "ok", "%s", o.out);
	/* ::1 exists where the jail's lo has IPv6; either way not EACCES. */
	cr_assert_str_neq(field(res, "tcp6_bind"), "EACCES", "%s", o.out);
	json_decref(res);
	run_out_free(&o);
}

Test(landlock, signals_stay_inside_the_domain)
{
	/* Jail init runs as the payload's uid, so kill(2)'s credential
	 * check allows signalling it; init forked the payload before
	 * Landlock, so it is outside the payload's domain and the signal
	 * scope alone refuses (EPERM). A child of the payload is in the
	 * domain and can be signalled. */
	static const char script[] = ATTEMPT_PY
	    "import signal, subprocess\n"
	    "attempt('init', lambda: os.kill(1, 0))\n"
	    "c = subprocess.Popen(['sleep', '30'])\n"
	    "attempt('child', lambda: os.kill(c.pid, signal.SIGTERM))\n"
	    "res['child_status'] = str(c.wait())\n"
	    "print(json.dumps(res))\n";
	struct run_out o;
	json_t *res;

	if (!need_abi(6))
		return;
	res = run_python(NULL, script, NULL, &o);
	cr_assert_str_eq(field(res, "init"), "EPERM", "%s", o.out);
	cr_assert_str_eq(field(res, "child"), "ok", "%s", o.out);
	cr_assert_str_eq(field(res, "child_status"), "-15", "%s", o.out);
	json_decref(res);
	run_out_free(&o);
}

Test(landlock, abstract_socket_outside_is_unreachable)
{
	/* The host's abstract socket is out of reach twice: abstract names
	 * belong to a network namespace (unix(7)), so the jail's lookup
	 * finds nothing (ECONNREFUSED, the namespace answering first), and
	 * the socket was made outside the payload's Landlock domain
	 * (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, EPERM). One made inside the
	 * domain is reached by the payload's own processes. */
	static const char script[] = ATTEMPT_PY
	    "def outside():\n"
	    "    socket.socket(socket.AF_UNIX).connect('\\0' + sys.argv[1])\n"
	    "attempt('outside', outside)\n"
	    "srv = socket.socket(socket.AF_UNIX)\n"
	    "srv.bind('\\0inside-' + sys.argv[1])\n"
	    "srv.listen(1)\n"
	    "srv.settimeout(10)\n"
	    "if os.fork() == 0:\n"
	    "    socket.socket(socket.AF_UNIX).connect('\\0inside-' +"
	    " sys.argv[1])\n"
	    "    os._exit(0)\n"
	    "a, _ = srv.accept()\n"
	    "res['inside'] = 'ok'\n"
	    "print(json.dumps(res))\n";
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char name[40];
	struct run_out o;
	json_t *res;
	socklen_t len;
	int srv;

	if (!need_abi(6))
		return;
	memcpy(name, "stockade-landlock-", 18);
	harness_random_hex(name + 18, sizeof(name) - 18);
	srv = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	cr_assert_geq(srv, 0);
	memcpy(sa.sun_path + 1, name, strlen(name));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(name));
	cr_assert_eq(bind(srv, (struct sockaddr *)&sa, len), 0, "bind: %s",
	    strerror(errno));
	cr_assert_eq(listen(srv, 4), 0);

	res = run_python(NULL, script, name, &o);
	cr_assert(strcmp(field(res, "outside"), "ECONNREFUSED") == 0 ||
		strcmp(field(res, "outside"), "EPERM") == 0,
	    "%s", o.out);
	cr_assert_str_eq(field(res, "inside"), "ok", "%s", o.out);
	cr_assert_eq(accept(srv, NULL, NULL), -1,
	    "a connection from the jail reached the host's socket");
	cr_assert_eq(errno, EAGAIN);
	close(srv);
	json_decref(res);
	run_out_free(&o);
}

/* ---- real programs ---------------------------------------------------------
 * */

Test(landlock, pty_when_the_policy_asks)
{
	static const char script[] = ATTEMPT_PY
	    "import pty, termios, tty\n"
	    "m, s = pty.openpty()\n"
	    "tty.setraw(s)\n"
	    "os.write(m, b'ping')\n"
	    "res['read'] = os.read(s, 4).decode()\n"
	    "res['name'] = os.ttyname(s)\n"
	    "res['list'] = ','.join(sorted(os.listdir('/dev/pts')))\n"
	    "print(json.dumps(res))\n";
	char path[4096];
	struct run_out o;
	json_t *res;

	if (!need_abi(1))
		return;
	snprintf(path, sizeof(path), "%s/pty.ini",
	    harness_tmpdir("stockade-landlock-policy"));
	harness_write_file(path, "[jail]\npty = true\n");
	/* Terminal ioctls (tcsetattr, TIOCGPTN) are IOCTL_DEV, ABI 5. */
	res = run_python(path, script, NULL, &o);
	cr_assert_str_eq(field(res, "read"), "ping", "%s", o.out);
	cr_assert_str_eq(field(res, "name"), "/dev/pts/0", "%s", o.out);
	cr_assert_str_eq(field(res, "list"), "0,ptmx", "%s", o.out);
	json_decref(res);
	run_out_free(&o);
}

Test(landlock, python_subprocess_multiprocessing_threading)
{
	static const char script[] =
	    "import json, multiprocessing as mp, subprocess, threading\n"
	    "def square(x):\n"
	    "    return x * x\n"
	    "if __name__ == '__main__':\n"
	    "    res = {}\n"
	    "    res['subprocess'] = subprocess.run(['sh', '-c', 'echo sub'],"
	    " capture_output=True, text=True, check=True).stdout.strip()\n"
	    "    for method in ('fork', 'spawn', 'forkserver'):\n"
	    "        with mp.get_context(method).Pool(2) as p:\n"
	    "            res[method] = str(sum(p.map(square, range(5))))\n"
	    "    q = mp.Queue()\n"
	    "    p = mp.Process(target=q.put, args=('queued',))\n"
	    "    p.start()\n"
	    "    res['queue'] = q.get(timeout=20)\n"
	    "    p.join()\n"
	    "    with mp.Manager() as m:\n"
	    "        d = m.dict(a='managed')\n"
	    "        res['manager'] = d['a']\n"
	    "    out = []\n"
	    "    ts = [threading.Thread(target=out.append, args=(i,))"
	    " for i in range(8)]\n"
	    "    [t.start() for t in ts]\n"
	    "    [t.join() for t in ts]\n"
	    "    res['threads'] = str(sum(out))\n"
	    "    print(json.dumps(res))\n";
	char path[4096];
	const char *ws, *status;
	struct run_out o;
	json_t *res;

	if (!need_abi(1))
		return;
	/* A file, not -c: spawn and forkserver workers import __main__. */
	ws = harness_workspace();
	snprintf(path, sizeof(path), "%s/mp.py", ws);
	harness_write_file(path, script);
	RUN(&o, "run", "--json", "--workspace", ws, "--", "python3", "mp.py");
	cr_assert_not_null(o.json, "no JSON result (exit %d): %s / %s",
	    o.status, o.out, o.err);
	status = json_string_value(json_object_get(o.json, "status"));
	cr_assert_str_eq(status != NULL ? status : "", "ok", "%s", o.out);
	res = json_loads(json_string_value(json_object_get(o.json, "stdout")),
	    0, NULL);
	cr_assert_not_null(res, "the script's output is not JSON: %s", o.out);
	cr_assert_str_eq(field(res, "subprocess"), "sub");
	cr_assert_str_eq(field(res, "fork"), "30");
	cr_assert_str_eq(field(res, "spawn"), "30");
	cr_assert_str_eq(field(res, "forkserver"), "30");
	cr_assert_str_eq(field(res, "queue"), "queued");
	cr_assert_str_eq(field(res, "manager"), "managed");
	cr_assert_str_eq(field(res, "threads"), "28");
	json_decref(res);
	run_out_free(&o);
}

/* Runs `sh -c SCRIPT` in a fresh workspace, expects "ok", returns stdout
 * (owned by O). */
static const char *
run_sh(const char *script, struct run_out *o)
{
	const char *status;

	RUN(o, "run", "--json", "--workspace", harness_workspace(), "--", "sh",
	    "-c", script);
	cr_assert_not_null(o->json, "no JSON result (exit %d): %s / %s",
	    o->status, o->out, o->err);
	status = json_string_value(json_object_get(o->json, "status"));
	cr_assert_str_eq(status != NULL ? status : "", "ok", "%s", o->out);
	return json_string_value(json_object_get(o->json, "stdout"));
}

Test(landlock, sh_redirections_pipes_and_here_documents)
{
	struct run_out o;

	if (!need_abi(1))
		return;
	/* The /etc rule serves $(cat /etc/hostname); the /tmp rule the
	 * rest of what a shell script writes outside /work. */
	cr_assert_str_eq(run_sh("echo gone > /dev/null; echo a > f; "
				"cat f >> f2; cat f2 | tr a b; "
				"cat <<EOF\nhere\nEOF\n"
				"head -c 4 /dev/zero | wc -c; "
				"x=$(cat /etc/hostname); echo $x; "
				"echo tmp > /tmp/t; cat /tmp/t; "
				"echo x 2>/dev/null >&2",
			     &o),
	    "b\nhere\n4\nstockade\ntmp\n");
	run_out_free(&o);
}

Test(landlock, gcc_compiles_and_runs_a_c_file_in_work)
{
	struct run_out o;

	if (!need_abi(1))
		return;
	if (access("/usr/bin/gcc", X_OK) != 0) {
		criterion_skip_test("gcc is not installed (/usr/bin/gcc)");
		return;
	}
	cr_assert_str_eq(
	    run_sh("printf '#include <stdio.h>\\nint main(void)"
		   "{ puts(\"compiled\"); return 0; }\\n' > h.c && "
		   "gcc -O2 -Wall -o h h.c && ./h",
		&o),
	    "compiled\n");
	run_out_free(&o);
}

Test(landlock, git_init_and_commit_in_work)
{
	struct run_out o;

	if (!need_abi(1))
		return;
	if (access("/usr/bin/git", X_OK) != 0) {
		criterion_skip_test("git is not installed (/usr/bin/git)");
		return;
	}
	cr_assert_str_eq(
	    run_sh("git init -q repo && cd repo && "
		   "echo x > f && git add f && "
		   "git -c user.name=t -c user.email=t@t commit -qm m "
		   "&& git mv f g && git -c user.name=t "
		   "-c user.email=t@t commit -qm mv && "
		   "git log --oneline | wc -l",
		&o),
	    "2\n");
	run_out_free(&o);
}

Test(landlock, tar_creates_and_extracts_in_work)
{
	struct run_out o;

	if (!need_abi(1))
		return;
	cr_assert_str_eq(
	    run_sh("mkdir -p d/e && echo y > d/e/f && "
		   "ln -s e/f d/l && tar czf t.tgz d && rm -r d && "
		   "tar xzf t.tgz && cat d/l && "
		   "tar cf /tmp/t.tar d && tar tf /tmp/t.tar | sort | "
		   "tr '\\n' ' '",
		&o),
	    "y\nd/ d/e/ d/e/f d/l ");
	run_out_free(&o);
}
