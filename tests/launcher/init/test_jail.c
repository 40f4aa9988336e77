/*
 * test_jail.c: the jailed program observes its own world (issue 2, "What
 * it must show"). Each test runs the real `stockade run` (STOCKADE_BIN)
 * and asserts one fact exactly: the values and errnos seen inside, the
 * JSON result, the exit status, and the host after the job.
 *
 * Registered twice in tests/meson.build: as the invoking user, and with
 * STOCKADE_TEST_AS_USER=65534 (harness.h says how that variant drops
 * privileges). Skips (no user namespaces) become failures under
 * STOCKADE_MUST_WORK=1.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "proto.h"
#include "policy.h"

/* Files outside the harness's temporary directories that a test made;
 * removed by the suite's .fini even when the test fails. */
static char *made_files[4];
static size_t nmade;

static void
remember_file(const char *path)
{
	cr_assert_lt(nmade, sizeof(made_files) / sizeof(made_files[0]));
	made_files[nmade] = strdup(path);
	cr_assert_not_null(made_files[nmade]);
	nmade++;
}

static void
jail_fini(void)
{
	for (size_t i = 0; i < nmade; i++) {
		(void)unlink(made_files[i]);
		free(made_files[i]);
	}
	nmade = 0;
	harness_cleanup();
}

TestSuite(jail, .init = harness_setup, .fini = jail_fini, .timeout = 60);

/* ---- the JSON result ---------------------------------------------------- */

enum kind {
	K_STRING,
	K_INT,
	K_BOOL,
	K_OBJECT,
	K_ARRAY,
	K_INT_OR_NULL,
	K_STRING_OR_NULL
};

static const struct {
	const char *name;
	enum kind kind;
} result_fields[] = {
    {"status", K_STRING},
    {"exit_code", K_INT_OR_NULL},
    {"signal", K_STRING_OR_NULL},
    {"wall_ms", K_INT},
    {"cpu_ms", K_INT},
    {"peak_memory_kb", K_INT},
    {"memory_measure", K_STRING},
    {"peak_processes", K_INT},
    {"limits_reached", K_ARRAY},
    {"stdout", K_STRING},
    {"stderr", K_STRING},
    {"stdout_truncated", K_BOOL},
    {"stderr_truncated", K_BOOL},
    {"stdout_bytes", K_INT},
    {"stderr_bytes", K_INT},
    {"limits", K_OBJECT},
    {"enforcement", K_STRING},
    {"landlock_abi", K_INT},
    {"denials", K_ARRAY},
    {"layers_off", K_ARRAY},
    {"detail", K_STRING},
    {"hint", K_STRING},
};

static const char *const limit_fields[] = {
    "wall_time_ms",
    "cpu_time_ms",
    "memory_mb",
    "processes",
    "file_size_mb",
    "open_files",
    "tmp_mb",
    "home_mb",
    "stdout_kb",
    "stderr_kb",
    "workspace_mb",
};

/* Every field present with its JSON type, no other field (but an
 * object "workspace", a staged job's), a non-empty
 * hint, non-negative figures, and exactly one JSON object on stdout. */
static void
assert_result_shape(const struct run_out *o)
{
	json_t *j = o->json, *lim;
	const char *key;
	json_t *v;

	cr_assert(json_is_object(j),
	    "stdout is not one JSON object (exit %d): %s / stderr: %s",
	    o->status, o->out, o->err);
	cr_assert(o->out_len > 2 && o->out[o->out_len - 1] == '\n' &&
		o->out[o->out_len - 2] == '}',
	    "stdout is not one object and a newline: %s", o->out);
	for (size_t i = 0; i < sizeof(result_fields) / sizeof(result_fields[0]);
	     i++) {
		const char *name = result_fields[i].name;

		v = json_object_get(j, name);
		cr_assert_not_null(v, "field %s missing: %s", name, o->out);
		switch (result_fields[i].kind) {
		case K_STRING:
			cr_assert(json_is_string(v), "%s is not a string",
			    name);
			break;
		case K_INT:
			cr_assert(json_is_integer(v), "%s is not an integer",
			    name);
			cr_assert_geq(json_integer_value(v), 0, "%s < 0", name);
			break;
		case K_BOOL:
			cr_assert(json_is_boolean(v), "%s is not a boolean",
			    name);
			break;
		case K_OBJECT:
			cr_assert(json_is_object(v), "%s is not an object",
			    name);
			break;
		case K_ARRAY:
			cr_assert(json_is_array(v), "%s is not an array", name);
			break;
		case K_INT_OR_NULL:
			cr_assert(json_is_integer(v) || json_is_null(v),
			    "%s is neither an integer nor null", name);
			break;
		case K_STRING_OR_NULL:
			cr_assert(json_is_string(v) || json_is_null(v),
			    "%s is neither a string nor null", name);
			break;
		}
	}
	json_object_foreach(j, key, v)
	{
		bool known = false;

		for (size_t i = 0;
		     i < sizeof(result_fields) / sizeof(result_fields[0]); i++)
			known |= strcmp(result_fields[i].name, key) == 0;
		/* A job that ran with a stage (issue 26) says what became of
		 * its writes. */
		known |= strcmp(key, "workspace") == 0 && json_is_object(v);
		cr_assert(known, "unexpected field %s", key);
	}
	cr_assert_gt(strlen(json_string_value(json_object_get(j, "hint"))), 0,
	    "empty hint");
	lim = json_object_get(j, "limits");
	for (size_t i = 0; i < sizeof(limit_fields) / sizeof(limit_fields[0]);
	     i++) {
		v = json_object_get(lim, limit_fields[i]);
		cr_assert(json_is_integer(v) && json_integer_value(v) > 0,
		    "limits.%s is not a positive integer", limit_fields[i]);
	}
	/* cpu_percent: 0 is "no cpu.max" (policy/default.ini). */
	v = json_object_get(lim, "cpu_percent");
	cr_assert(json_is_integer(v) && json_integer_value(v) >= 0,
	    "limits.cpu_percent is not a non-negative integer");
	cr_assert_eq(json_object_size(lim),
	    sizeof(limit_fields) / sizeof(limit_fields[0]) + 1);
}

static const char *
jstr(const struct run_out *o, const char *name)
{
	json_t *v = json_object_get(o->json, name);

	cr_assert(json_is_string(v), "%s is not a string: %s", name, o->out);
	return json_string_value(v);
}

static json_int_t
jint(const struct run_out *o, const char *name)
{
	json_t *v = json_object_get(o->json, name);

	cr_assert(json_is_integer(v), "%s is not an integer: %s", name, o->out);
	return json_integer_value(v);
}

static void
assert_null_field(const struct run_out *o, const char *name)
{
	cr_assert(json_is_null(json_object_get(o->json, name)),
	    "%s is not null: %s", name, o->out);
}

/* The job ended "ok" (exit 0, no signal, stockade exit 0); returns the
 * payload's stdout. */
static const char *
expect_ok(const struct run_out *o)
{
	assert_result_shape(o);
	cr_assert_str_eq(jstr(o, "status"), "ok",
	    "status is not ok: %s / stderr: %s", o->out, o->err);
	cr_assert_eq(jint(o, "exit_code"), 0);
	assert_null_field(o, "signal");
	cr_assert_eq(o->status, 0, "stockade exited %d", o->status);
	return jstr(o, "stdout");
}

/* The job exited with CODE: exit_nonzero, stockade's status CODE. */
static void
expect_exit(const struct run_out *o, int code)
{
	assert_result_shape(o);
	cr_assert_str_eq(jstr(o, "status"), "exit_nonzero", "%s", o->out);
	cr_assert_eq(jint(o, "exit_code"), code, "%s", o->out);
	assert_null_field(o, "signal");
	cr_assert_eq(o->status, code, "stockade exited %d", o->status);
}

/* ---- the jail's own world ----------------------------------------------- */

Test(jail, hostname_is_stockade_not_the_hosts)
{
	char host[256];
	struct run_out o;

	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	cr_assert_str_neq(host, "stockade",
	    "the host is itself named stockade: the test cannot "
	    "tell the two apart");
	RUN(&o, "run", "--json", "--", "uname", "-n");
	cr_assert_str_eq(expect_ok(&o), "stockade\n");
	run_out_free(&o);
}

Test(jail, proc_lists_only_init_and_the_payload)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os\n"
	    "print(sorted((e for e in os.listdir('/proc') if e.isdigit()),"
	    " key=int), os.getpid(), os.getppid())\n");
	cr_assert_str_eq(expect_ok(&o), "['1', '2'] 2 1\n");
	run_out_free(&o);
}

/* Issue 23, point 3: the host facts of /proc read empty in the job, its
 * boot id is a fresh UUID (not the host's, not the last job's), and the
 * tmpfs the masks came from is gone from its mount table. */
Test(jail, host_facts_of_proc_are_masked)
{
	static const char *const prog =
	    "import os\n"
	    "for p in ('/proc/cmdline', '/proc/keys', '/proc/key-users',\n"
	    "          '/proc/partitions', '/proc/diskstats',\n"
	    "          '/proc/zoneinfo', '/proc/buddyinfo', '/proc/iomem',\n"
	    "          '/proc/config.gz', '/proc/kallsyms', '/proc/swaps'):\n"
	    "    try:\n"
	    "        n = len(open(p, 'rb').read())\n"
	    "    except FileNotFoundError:\n"
	    "        n = 0\n"
	    "    if n:\n"
	    "        print(p, n)\n"
	    "print(open('/proc/sys/kernel/random/boot_id').read().strip())\n"
	    "print('.stockade-masks' in open('/proc/self/mountinfo').read(),"
	    " os.path.exists('/.stockade-masks'))\n";
	char host[64] = "", first[64], second[64];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	struct run_out o;
	const char *out;

	cr_assert_not_null(f);
	cr_assert_not_null(fgets(host, sizeof(host), f));
	fclose(f);
	RUN(&o, "run", "--json", "--", "python3", "-c", prog);
	out = expect_ok(&o);
	cr_assert_eq(sscanf(out, "%63s", first), 1, "%s", out);
	cr_assert_eq(strlen(first), 36, "not a boot id: %s", out);
	cr_assert(strstr(out, "False False\n") != NULL, "%s", out);
	cr_assert_neq(strncmp(host, first, 36), 0,
	    "the job reads the host's boot id %s", first);
	run_out_free(&o);
	RUN(&o, "run", "--json", "--", "python3", "-c", prog);
	out = expect_ok(&o);
	cr_assert_eq(sscanf(out, "%63s", second), 1, "%s", out);
	cr_assert_str_neq(first, second, "two jobs share the boot id %s",
	    first);
	run_out_free(&o);
}

Test(jail, only_interface_is_lo_and_it_is_up)
{
	struct run_out o;

	/* The interfaces of the jail's network namespace (/proc/net/dev:
	 * netlink sockets are refused by the seccomp filter), SIOCGIFFLAGS
	 * (0x8913) on lo; then a UDP datagram to itself over lo: lo reaches
	 * the jail itself; and a TCP server on lo answers a client of the
	 * same job (issue 22: Landlock handles no TCP right; the namespace
	 * keeps everything else out of reach). */
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import fcntl, socket, struct\n"
	    "names = [l.split(':')[0].strip() for l in"
	    " open('/proc/net/dev').readlines()[2:]]\n"
	    "print(names)\n"
	    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
	    "req = struct.pack('16sH22x', b'lo', 0)\n"
	    "flags = struct.unpack('16sH', fcntl.ioctl(s.fileno(), 0x8913,"
	    " req)[:18])[1]\n"
	    "print('up' if flags & 1 else 'down',"
	    " 'loopback' if flags & 8 else 'not-loopback')\n"
	    "s.bind(('127.0.0.1', 0))\n"
	    "c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
	    "c.sendto(b'ping', s.getsockname())\n"
	    "s.settimeout(2)\n"
	    "print(s.recv(4).decode())\n"
	    "l = socket.socket()\n"
	    "l.bind(('127.0.0.1', 0))\n"
	    "l.listen(1)\n"
	    "c = socket.create_connection(l.getsockname(), timeout=2)\n"
	    "a, _ = l.accept()\n"
	    "c.sendall(b'tcp')\n"
	    "print(a.recv(3).decode(), 'over lo')\n");
	cr_assert_str_eq(expect_ok(&o),
	    "['lo']\nup loopback\nping\ntcp over lo\n");
	run_out_free(&o);
}

Test(jail, tcp_connect_to_hosts_loopback_is_refused)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t salen = sizeof(sa);
	char port[16];
	struct run_out o;
	int srv, c;

	srv = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	cr_assert_geq(srv, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(srv, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(srv, 16), 0);
	cr_assert_eq(getsockname(srv, (struct sockaddr *)&sa, &salen), 0);
	snprintf(port, sizeof(port), "%u", (unsigned)ntohs(sa.sin_port));

	/* 3: refused by the network namespace, whose lo is not the host's
	 * and has nothing listening on that port (ECONNREFUSED; Landlock
	 * handles no TCP right since issue 22); 4: another error; 0:
	 * connected. */
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import socket, sys\n"
	    "s = socket.socket()\n"
	    "s.settimeout(3)\n"
	    "try:\n"
	    "    s.connect(('127.0.0.1', int(sys.argv[1])))\n"
	    "except ConnectionRefusedError:\n"
	    "    sys.exit(3)\n"
	    "except OSError as e:\n"
	    "    print(repr(e))\n"
	    "    sys.exit(4)\n"
	    "print('connected')\n",
	    port);
	expect_exit(&o, 3);
	cr_assert_str_eq(jstr(&o, "stdout"), "");

	/* Nothing reached the host's server. */
	c = accept(srv, NULL, NULL);
	cr_assert_eq(c, -1, "a connection from the jail reached the host");
	cr_assert_eq(errno, EAGAIN, "accept: %s", strerror(errno));
	close(srv);
	run_out_free(&o);
}

/* A local HTTP server in the job, as a test suite's fixture server:
 * `python3 -m http.server` on the jail's loopback serves a file of /work
 * to a client of the same job (issue 22). */
Test(jail, local_http_server_in_the_job)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--timeout", "20", "--", "sh", "-c",
	    "echo served > /work/page.txt && "
	    "python3 -m http.server 8000 --bind 127.0.0.1 "
	    "--directory /work >/dev/null 2>&1 & srv=$! && "
	    "python3 -c 'import time, urllib.request\n"
	    "for _ in range(100):\n"
	    "    try:\n"
	    "        print(urllib.request.urlopen(\"http://127.0.0.1:8000/"
	    "page.txt\").read().decode(), end=\"\")\n"
	    "        break\n"
	    "    except OSError:\n"
	    "        time.sleep(0.1)\n' && kill $srv");
	cr_assert_str_eq(expect_ok(&o), "served\n");
	run_out_free(&o);
}

Test(jail, no_route_beyond_the_jail)
{
	struct run_out o;

	/* 101 ENETUNREACH: the namespace has no route at all, for UDP and
	 * TCP alike (Landlock handles no TCP right). */
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import socket\n"
	    "for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):\n"
	    "    try:\n"
	    "        s = socket.socket(socket.AF_INET, kind)\n"
	    "        s.settimeout(2)\n"
	    "        s.connect(('192.0.2.1', 80))\n"
	    "        s.send(b'x')\n"
	    "        print('connected')\n"
	    "    except OSError as e:\n"
	    "        print(e.errno)\n");
	cr_assert_str_eq(expect_ok(&o), "101\n101\n");
	run_out_free(&o);

	/* A program that fails on it is told the sandbox has no network
	 * (issue 22), not only to read its stderr. */
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import socket\n"
	    "socket.create_connection(('192.0.2.1', 80), timeout=2)\n");
	cr_assert_str_eq(jstr(&o, "status"), "exit_nonzero", "%s", o.out);
	cr_assert_not_null(strstr(jstr(&o, "hint"),
			       "the sandbox has no "
			       "network"),
	    "%s", o.out);
	run_out_free(&o);
}

/* ---- what must stay outside --------------------------------------------- */

/*
 * Tries every path to the canary it can think of and prints one JSON
 * object: the errno name of each attempt (or "READ <content>"), and every
 * path the walk of the visible tree found with the canary's name.
 */
static const char canary_script[] =
    "import errno, json, os, sys\n"
    "path, name = sys.argv[1], sys.argv[2]\n"
    "res = {}\n"
    "def attempt(label, p):\n"
    "    try:\n"
    "        with open(p, 'rb') as f:\n"
    "            res[label] = 'READ ' + f.read().decode('latin-1')\n"
    "    except OSError as e:\n"
    "        res[label] = errno.errorcode.get(e.errno, str(e.errno))\n"
    "attempt('absolute', path)\n"
    "attempt('proc1root', '/proc/1/root' + path)\n"
    "attempt('procselfroot', '/proc/self/root' + path)\n"
    "attempt('procselfcwd', '/proc/self/cwd/../../..' + path)\n"
    "os.chdir('/work')\n"
    "attempt('climb', '../../../../../../../..' + path)\n"
    "found, walked = [], 0\n"
    /* Landlock gives no right to list / (launcher/payload/landlock_jail.c):
	 * then every name a jail may have at its top, that exists. */
    "try:\n"
    "    tops = os.listdir('/')\n"
    "except PermissionError:\n"
    "    tops = [t for t in ('bin', 'dev', 'etc', 'home', 'lib', 'lib32',\n"
    "            'lib64', 'libx32', 'mnt', 'opt', 'root', 'run', 'sbin',\n"
    "            'srv', 'sys', 'tmp', 'var', 'work') if\n"
    "            os.path.lexists('/' + t)]\n"
    "for top in sorted(tops):\n"
    "    t = '/' + top\n"
    "    if top in ('proc', 'usr') or os.path.islink(t):\n"
    "        continue\n"
    "    for d, dirs, files in os.walk(t):\n"
    "        walked += 1\n"
    "        if name in files or name in dirs:\n"
    "            found.append(os.path.join(d, name))\n"
    "res['found'] = found\n"
    "res['walked'] = walked\n"
    "print(json.dumps(res, sort_keys=True))\n";

Test(jail, canary_file_unreachable_by_any_path)
{
	const char *home = getenv("HOME");
	char secret[33], name[64], path[4096], *content;
	struct run_out o;
	json_t *res;

	harness_random_hex(secret, sizeof(secret));
	{
		char rnd[13];

		harness_random_hex(rnd, sizeof(rnd));
		snprintf(name, sizeof(name), "stockade-canary-%s", rnd);
	}
	if (home != NULL && home[0] == '/' && strncmp(home, "/tmp/", 5) != 0 &&
	    strcmp(home, "/tmp") != 0 && access(home, W_OK) == 0)
		snprintf(path, sizeof(path), "%s/%s", home, name);
	else
		snprintf(path, sizeof(path), "%s/%s",
		    harness_tmpdir("stockade-test-canary"), name);
	remember_file(path);
	harness_write_file(path, secret);
	content = harness_read_file(path, NULL);
	cr_assert_str_eq(content, secret,
	    "the canary is not readable on the host");
	free(content);

	RUN(&o, "run", "--json", "--workspace", harness_workspace(), "--",
	    "python3", "-c", canary_script, path, name);
	cr_assert_null(strstr(o.out, secret), "the canary leaked: %s", o.out);
	cr_assert_null(strstr(o.err, secret), "the canary leaked: %s", o.err);
	res = json_loads(expect_ok(&o), 0, NULL);
	cr_assert_not_null(res, "payload output: %s", jstr(&o, "stdout"));
	cr_assert_str_eq(json_string_value(json_object_get(res, "absolute")),
	    "ENOENT");
	/* init is not dumpable: its root link is closed to the payload. */
	cr_assert_str_eq(json_string_value(json_object_get(res, "proc1root")),
	    "EACCES");
	cr_assert_str_eq(json_string_value(
			     json_object_get(res, "procselfroot")),
	    "ENOENT");
	cr_assert_str_eq(json_string_value(json_object_get(res, "procselfcwd")),
	    "ENOENT");
	cr_assert_str_eq(json_string_value(json_object_get(res, "climb")),
	    "ENOENT");
	cr_assert_eq(json_array_size(json_object_get(res, "found")), 0,
	    "the canary's name is visible in the jail: %s", jstr(&o, "stdout"));
	/* The walk saw the tree (/etc, /dev, /home, /work, /tmp...). */
	cr_assert_geq(json_integer_value(json_object_get(res, "walked")), 5);
	json_decref(res);
	run_out_free(&o);
}

/*
 * Dumps the payload's environment and every readable /proc/PID/environ
 * and cmdline of the jail, so the host can search it for the canary.
 */
static const char env_script[] =
    "import errno, json, os\n"
    "procs = {}\n"
    "for p in sorted(e for e in os.listdir('/proc') if e.isdigit()):\n"
    "    for f in ('environ', 'cmdline'):\n"
    "        try:\n"
    "            with open('/proc/%s/%s' % (p, f), 'rb') as fh:\n"
    "                procs[p + '/' + f] = fh.read().replace(b'\\0',"
    " b' ').decode('latin-1')\n"
    "        except OSError as e:\n"
    "            procs[p + '/' + f] = errno.errorcode.get(e.errno, '?')\n"
    "print(json.dumps({'environ': dict(os.environ), 'procs': procs}))\n";

Test(jail, caller_environment_is_absent_inside)
{
	char secret[41], err[POLICY_ERR_MAX];
	struct policy pol;
	struct run_out o;
	json_t *res, *env, *procs;

	harness_random_hex(secret, sizeof(secret));
	cr_assert_eq(setenv("STOCKADE_TEST_CANARY", secret, 1), 0);

	RUN(&o, "run", "--json", "--", "python3", "-c", env_script);
	cr_assert_null(strstr(o.out, secret), "the canary leaked: %s", o.out);
	cr_assert_null(strstr(o.err, secret), "the canary leaked: %s", o.err);
	cr_assert_null(strstr(o.out, "STOCKADE_TEST_CANARY"), "%s", o.out);
	res = json_loads(expect_ok(&o), 0, NULL);
	cr_assert_not_null(res, "payload output: %s", jstr(&o, "stdout"));

	/* os.environ is exactly the policy's [environment]. */
	memset(&pol, 0, sizeof(pol));
	cr_assert_eq(policy_load_default(&pol, err, sizeof(err)), 0, "%s", err);
	env = json_object_get(res, "environ");
	cr_assert_eq(json_object_size(env), pol.nenv, "environ: %s",
	    jstr(&o, "stdout"));
	for (size_t i = 0; i < pol.nenv; i++) {
		const char *eq = strchr(pol.env[i], '=');
		char key[256];
		json_t *v;

		cr_assert_not_null(eq);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - pol.env[i]),
		    pol.env[i]);
		v = json_object_get(env, key);
		cr_assert(json_is_string(v), "%s missing inside", key);
		cr_assert_str_eq(json_string_value(v), eq + 1, "%s", key);
	}
	policy_clear(&pol);

	/* The search covered the payload's own environ and cmdline (pid 2)
	 * and init's cmdline; init's environ is closed (not dumpable). */
	procs = json_object_get(res, "procs");
	cr_assert_eq(json_object_size(procs), 4, "%s", jstr(&o, "stdout"));
	cr_assert_str_eq(json_string_value(json_object_get(procs, "1/environ")),
	    "EACCES");
	cr_assert_str_neq(json_string_value(
			      json_object_get(procs, "2/environ")),
	    "EACCES");
	cr_assert_not_null(
	    strstr(json_string_value(json_object_get(procs, "2/environ")),
		"PATH=/usr/local/bin"));
	json_decref(res);
	run_out_free(&o);
}

/* ---- policy lists (issue 22) --------------------------------------------- */

/* A directory of the host to bind, outside /tmp and /work (which the jail
 * mounts itself), readable by everyone, holding "hello"; DIR gets its
 * path (SIZE bytes). */
static void
make_bind_source(char *dir, size_t size)
{
	char path[PATH_MAX];

	snprintf(dir, size, "/var/tmp/stockade-bind-XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/hello", dir);
	harness_write_file(path, "hello\n");
	cr_assert_eq(chmod(path, 0644), 0);
}

static void
remove_bind_source(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/hello", dir);
	(void)unlink(path);
	(void)rmdir(dir);
}

/* Writes TEXT to a policy file in a temporary directory; returns its
 * path (static). */
static const char *
policy_file(const char *text)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/policy.ini",
	    harness_tmpdir("stockade-test-policy"));
	harness_write_file(path, text);
	return path;
}

/*
 * A policy that gives one bind and one variable keeps the default's /usr
 * binds and PATH (issue 22): `policy check` takes it, `policy show` says
 * where each line came from, and the job runs the system's sh with the
 * bind and both variables.
 */
Test(jail, policy_with_one_bind_keeps_the_defaults)
{
	char dir[64], text[512], want[PATH_MAX + 512];
	const char *pol;
	struct run_out o;

	make_bind_source(dir, sizeof(dir));
	snprintf(text, sizeof(text),
	    "[filesystem]\nro_bind = %s\n"
	    "[environment]\nGREETING = hi\n",
	    dir);
	pol = policy_file(text);

	RUN(&o, "policy", "check", pol);
	cr_assert_eq(o.status, 0, "policy check: %s%s", o.out, o.err);
	run_out_free(&o);

	RUN(&o, "policy", "show", "--policy", pol);
	cr_assert_eq(o.status, 0, "%s", o.err);
	snprintf(want, sizeof(want), "\nro_bind = %s ; file:2\n", dir);
	cr_assert_not_null(strstr(o.out, want), "%s", o.out);
	cr_assert_not_null(strstr(o.out, "\nro_bind = /usr ; default:"), "%s",
	    o.out);
	cr_assert_not_null(strstr(o.out, "\nGREETING = hi ; file:4\n"), "%s",
	    o.out);
	run_out_free(&o);

	snprintf(text, sizeof(text),
	    "echo \"$PATH $GREETING $TZ\"; cat %s/hello"
	    " && test -x /usr/bin/env && echo usr",
	    dir);
	RUN(&o, "run", "--json", "--policy", pol, "--", "sh", "-c", text);
	cr_assert_str_eq(expect_ok(&o),
	    "/usr/local/bin:/usr/bin:/bin hi UTC\nhello\nusr\n");
	run_out_free(&o);
	remove_bind_source(dir);
}

/*
 * A bind whose host path goes between `policy check` and the job: check
 * names it at its line; the job ends as sandbox_error (stockade exit 70)
 * with a detail naming the path.
 */
Test(jail, vanished_bind_is_sandbox_error_naming_it)
{
	char dir[64], text[512], want[PATH_MAX + 512];
	const char *pol;
	struct run_out o;

	make_bind_source(dir, sizeof(dir));
	snprintf(text, sizeof(text),
	    "[jail]\npool_size = 0\n"
	    "[filesystem]\nro_bind = %s\n",
	    dir);
	pol = policy_file(text);
	RUN(&o, "policy", "check", pol);
	cr_assert_eq(o.status, 0, "policy check: %s%s", o.out, o.err);
	run_out_free(&o);
	remove_bind_source(dir);

	RUN(&o, "policy", "check", pol);
	cr_assert_eq(o.status, 2, "policy check: %s%s", o.out, o.err);
	snprintf(want, sizeof(want),
	    "%s:4: ro_bind %s: the host has no such "
	    "path",
	    pol, dir);
	cr_assert_not_null(strstr(o.err, want), "%s", o.err);
	run_out_free(&o);

	RUN(&o, "run", "--json", "--policy", pol, "--", "true");
	assert_result_shape(&o);
	cr_assert_str_eq(jstr(&o, "status"), "sandbox_error", "%s", o.out);
	cr_assert_eq(o.status, 70, "stockade exited %d", o.status);
	snprintf(want, sizeof(want), "ro_bind %s: No such file or directory",
	    dir);
	cr_assert_not_null(strstr(jstr(&o, "detail"), want), "%s", o.out);
	cr_assert_not_null(strstr(jstr(&o, "hint"), want), "%s", o.out);
	run_out_free(&o);
}

/*
 * Replacing a list is explicit ([policy] replace): the file's binds are
 * then the only ones, so `policy check` refuses a job left with no program
 * to run, unless [policy] no_programs says that is meant; the job then has
 * no /usr (sh is not found: exit 127). An environment replaced by none is
 * empty.
 */
Test(jail, replaced_binds_leave_no_program_unless_meant)
{
	char dir[64], text[512], want[PATH_MAX + 512];
	const char *pol;
	struct run_out o;

	make_bind_source(dir, sizeof(dir));
	snprintf(text, sizeof(text),
	    "[policy]\nreplace = filesystem\n"
	    "[filesystem]\nro_bind = %s\n",
	    dir);
	pol = policy_file(text);
	RUN(&o, "policy", "check", pol);
	cr_assert_eq(o.status, 2, "policy check: %s%s", o.out, o.err);
	snprintf(want, sizeof(want),
	    "%s:2: the job has no program to run: no "
	    "directory of PATH (/usr/local/bin:/usr/bin:/bin) is at or "
	    "below a bind of [filesystem]",
	    pol);
	cr_assert_not_null(strstr(o.err, want), "%s", o.err);
	run_out_free(&o);

	RUN(&o, "policy", "show", "--policy", pol);
	cr_assert_not_null(strstr(o.out, "\nreplace = filesystem ; file:2\n"),
	    "%s", o.out);
	cr_assert_not_null(strstr(o.out, "; the file's list alone"), "%s",
	    o.out);
	cr_assert_null(strstr(o.out, "ro_bind = /usr"), "%s", o.out);
	run_out_free(&o);

	snprintf(text, sizeof(text),
	    "[policy]\nreplace = filesystem\n"
	    "no_programs = true\n[filesystem]\nro_bind = %s\n",
	    dir);
	pol = policy_file(text);
	RUN(&o, "policy", "check", pol);
	cr_assert_eq(o.status, 0, "policy check: %s%s", o.out, o.err);
	run_out_free(&o);
	RUN(&o, "run", "--json", "--policy", pol, "--", "sh", "-c", "true");
	expect_exit(&o, 127);
	run_out_free(&o);
	remove_bind_source(dir);

	/* An environment replaced by none is empty. */
	pol = policy_file("[policy]\nreplace = environment\n"
			  "no_programs = true\n");
	RUN(&o, "run", "--json", "--policy", pol, "--", "/usr/bin/env");
	cr_assert_str_eq(expect_ok(&o), "");
	run_out_free(&o);
}

Test(jail, payload_is_unprivileged_and_confined)
{
	static const char *const zero_lines[] = {
	    "CapInh:\t0000000000000000",
	    "CapPrm:\t0000000000000000",
	    "CapEff:\t0000000000000000",
	    "CapBnd:\t0000000000000000",
	    "CapAmb:\t0000000000000000",
	    "NoNewPrivs:\t1",
	    "Seccomp:\t2",
	    "Uid:\t1000\t1000\t1000\t1000",
	    "Gid:\t1000\t1000\t1000\t1000",
	};
	struct run_out o;
	const char *status;

	RUN(&o, "run", "--json", "--", "id", "-u");
	cr_assert_str_eq(expect_ok(&o), "1000\n");
	run_out_free(&o);

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "print(open('/proc/self/status').read(), end='')");
	status = expect_ok(&o);
	for (size_t i = 0; i < sizeof(zero_lines) / sizeof(zero_lines[0]);
	     i++) {
		char want[64];

		snprintf(want, sizeof(want), "\n%s\n", zero_lines[i]);
		cr_assert_not_null(strstr(status, want), "no \"%s\" in:\n%s",
		    zero_lines[i], status);
	}
	run_out_free(&o);

	/* Securebits set and locked (PR_GET_SECUREBITS, 27): NOROOT,
	 * NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, each locked:
	 * 0xef (capabilities(7)). */
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import ctypes\n"
	    "print(hex(ctypes.CDLL(None).prctl(27, 0, 0, 0, 0)))\n");
	cr_assert_str_eq(expect_ok(&o), "0xef\n");
	run_out_free(&o);
}

Test(jail, etc_ssl_private_is_not_visible)
{
	struct stat st;
	struct run_out o;

	if (stat("/etc/ssl/private", &st) != 0 || !S_ISDIR(st.st_mode))
		harness_skip("the host has no /etc/ssl/private to hide");
	RUN(&o, "run", "--json", "--", "ls", "/etc/ssl/private");
	expect_exit(&o, 2);
	cr_assert_not_null(strstr(jstr(&o, "stderr"),
			       "No such file or directory"),
	    "%s", jstr(&o, "stderr"));
	run_out_free(&o);

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os\n"
	    "try:\n"
	    "    os.lstat('/etc/ssl/private')\n"
	    "    print('visible')\n"
	    "except OSError as e:\n"
	    "    print(e.errno)\n"
	    "print('private' in os.listdir('/etc/ssl'))\n");
	cr_assert_str_eq(expect_ok(&o), "2\nFalse\n");
	run_out_free(&o);
}

/* ---- the file system ---------------------------------------------------- */

Test(jail, write_to_usr_fails_with_erofs)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os\n"
	    "for p in ('/usr/x', '/usr/bin/x', '/x'):\n"
	    "    try:\n"
	    "        open(p, 'w')\n"
	    "        print(p, 'written')\n"
	    "    except OSError as e:\n"
	    "        print(p, e.errno)\n");
	cr_assert_str_eq(expect_ok(&o), "/usr/x 30\n/usr/bin/x 30\n/x 30\n");
	run_out_free(&o);
}

Test(jail, file_written_to_work_appears_in_workspace)
{
	const char *ws = harness_workspace();
	char rnd[17], want[64], path[4096], *got;
	struct run_out o;
	struct stat st;

	harness_random_hex(rnd, sizeof(rnd));
	snprintf(want, sizeof(want), "from the jail %s\n", rnd);
	RUN(&o, "run", "--json", "--workspace", ws, "--", "python3", "-c",
	    "import os, sys\n"
	    "print(os.getcwd())\n"
	    "with open('/work/out.txt', 'w') as f:\n"
	    "    f.write('from the jail %s\\n' % sys.argv[1])\n",
	    rnd);
	cr_assert_str_eq(expect_ok(&o), "/work\n");
	snprintf(path, sizeof(path), "%s/out.txt", ws);
	got = harness_read_file(path, NULL);
	cr_assert_not_null(got, "%s: %s", path, strerror(errno));
	cr_assert_str_eq(got, want);
	/* Owned on the host by the workspace's owner: the user who ran
	 * stockade, or the ordinary user a root deployment gave it to. */
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_uid, harness_workspace_owner());
	cr_assert_eq(st.st_gid,
	    geteuid() == 0 ? PROTO_ROOT_PAYLOAD_ID : getegid());
	free(got);
	run_out_free(&o);
}

Test(jail, tmp_is_not_the_hosts_tmp)
{
	char rnd[17], host_mark[128], jail_mark[128], arg[300];
	struct run_out o;
	struct stat st;

	harness_random_hex(rnd, sizeof(rnd));
	snprintf(host_mark, sizeof(host_mark), "/tmp/stockade-test-hostmark-%s",
	    rnd);
	snprintf(jail_mark, sizeof(jail_mark), "/tmp/stockade-test-jailmark-%s",
	    rnd);
	remember_file(host_mark);
	remember_file(jail_mark);
	harness_write_file(host_mark, "host\n");
	snprintf(arg, sizeof(arg), "%s", host_mark);

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os, sys\n"
	    "print(os.listdir('/tmp'))\n"
	    "print(os.path.lexists(sys.argv[1]))\n"
	    "open(sys.argv[2], 'w').write('jail\\n')\n"
	    "print(sorted(os.listdir('/tmp')) == "
	    "[os.path.basename(sys.argv[2])])\n",
	    arg, jail_mark);
	cr_assert_str_eq(expect_ok(&o), "[]\nFalse\nTrue\n");
	cr_assert_eq(lstat(jail_mark, &st), -1,
	    "the jail's /tmp file appeared in the host's /tmp");
	cr_assert_eq(errno, ENOENT);
	cr_assert_eq(lstat(host_mark, &st), 0);
	run_out_free(&o);
}

/* ---- results (issue 2's four jobs) ----------------------------------------
 * */

Test(jail, json_ok_print_42)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c", "print(6*7)");
	cr_assert_str_eq(expect_ok(&o), "42\n");
	cr_assert_str_eq(jstr(&o, "stderr"), "");
	cr_assert_eq(jint(&o, "stdout_bytes"), 3);
	cr_assert_eq(jint(&o, "stderr_bytes"), 0);
	cr_assert(json_is_false(json_object_get(o.json, "stdout_truncated")));
	cr_assert(json_is_false(json_object_get(o.json, "stderr_truncated")));
	run_out_free(&o);
}

Test(jail, json_exit_3_is_exit_nonzero)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import sys; sys.exit(3)");
	expect_exit(&o, 3);
	run_out_free(&o);
}

Test(jail, json_timeout_within_one_to_two_seconds)
{
	struct run_out o;
	json_int_t wall;

	RUN(&o, "run", "--json", "--timeout", "1", "--", "python3", "-c",
	    "while True: pass");
	assert_result_shape(&o);
	cr_assert_str_eq(jstr(&o, "status"), "timeout", "%s", o.out);
	assert_null_field(&o, "exit_code");
	cr_assert_str_eq(jstr(&o, "signal"), "SIGKILL");
	wall = jint(&o, "wall_ms");
	cr_assert(wall >= 1000 && wall <= 2000, "wall_ms %lld",
	    (long long)wall);
	cr_assert_lt(o.wall_ms, 2000, "stockade took %ld ms from outside",
	    o.wall_ms);
	cr_assert_eq(json_integer_value(
			 json_object_get(json_object_get(o.json, "limits"),
			     "wall_time_ms")),
	    1000);
	cr_assert_eq(o.status, 124);
	run_out_free(&o);
}

Test(jail, json_sigsegv_is_crash)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)");
	assert_result_shape(&o);
	cr_assert_str_eq(jstr(&o, "status"), "crash", "%s", o.out);
	assert_null_field(&o, "exit_code");
	cr_assert_str_eq(jstr(&o, "signal"), "SIGSEGV");
	cr_assert_eq(o.status, 139);
	run_out_free(&o);
}

Test(jail, missing_program_is_exit_127)
{
	char name[64], rnd[13];
	struct run_out o;

	harness_random_hex(rnd, sizeof(rnd));
	snprintf(name, sizeof(name), "stockade-no-such-program-%s", rnd);
	RUN(&o, "run", "--json", "--", name);
	expect_exit(&o, 127);
	cr_assert_not_null(strstr(jstr(&o, "stderr"),
			       "No such file or directory"),
	    "%s", jstr(&o, "stderr"));
	run_out_free(&o);
}

Test(jail, non_executable_file_is_exit_126)
{
	const char *ws = harness_workspace();
	char path[4096];
	struct run_out o;

	snprintf(path, sizeof(path), "%s/script.sh", ws);
	harness_write_file(path, "#!/bin/sh\necho should not run\n");
	cr_assert_eq(chmod(path, 0644), 0);
	RUN(&o, "run", "--json", "--workspace", ws, "--", "./script.sh");
	expect_exit(&o, 126);
	cr_assert_str_eq(jstr(&o, "stdout"), "");
	cr_assert_not_null(strstr(jstr(&o, "stderr"), "Permission denied"),
	    "%s", jstr(&o, "stderr"));
	run_out_free(&o);
}

/* ---- nothing of a job outlives it ------------------------------------------
 * */

/*
 * Starts, each carrying MARK in its argv: a `setsid sh -c 'sleep ...'` in
 * the background (sleep's own argv carries it as a negligible extra
 * duration), and a double-forked python daemon in a new session that
 * ignores SIGTERM. Waits until both are running, prints "running", and
 * then exits, or with "spin" as a second argument spins until killed.
 */
static const char leftover_script[] =
    "import os, subprocess, sys, time\n"
    "mark = sys.argv[1]\n"
    "subprocess.Popen(['sh', '-c', 'setsid sh -c \"sleep 300 0.0000000%s;"
    " :\" shmark-%s &' % (mark, mark)])\n"
    "daemon = ('import os, signal, sys, time\\n'\n"
    "          'signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n'\n"
    "          'if os.fork(): sys.exit(0)\\n'\n"
    "          'os.setsid()\\n'\n"
    "          'if os.fork(): sys.exit(0)\\n'\n"
    "          'open(\"/tmp/daemon-\" + sys.argv[1], \"w\").close()\\n'\n"
    "          'time.sleep(300)\\n')\n"
    "subprocess.run([sys.executable, '-c', daemon, mark], check=True)\n"
    "def marked():\n"
    "    names = []\n"
    "    for p in os.listdir('/proc'):\n"
    "        if not p.isdigit() or int(p) == os.getpid():\n"
    "            continue\n"
    "        try:\n"
    "            cmd = open('/proc/%s/cmdline' % p, "
    "'rb').read().split(b'\\0')\n"
    "        except OSError:\n"
    "            continue\n"
    "        if any(mark.encode() in a for a in cmd):\n"
    "            names.append(os.path.basename(cmd[0]).decode())\n"
    "    return sorted(names)\n"
    "for _ in range(250):\n"
    "    m = marked()\n"
    "    if 'sleep' in m and os.path.exists('/tmp/daemon-' + mark):\n"
    "        break\n"
    "    time.sleep(0.01)\n"
    "print('running', 'sleep' in m, os.path.exists('/tmp/daemon-' + mark))\n"
    "sys.stdout.flush()\n"
    "if sys.argv[2:] == ['spin']:\n"
    "    while True:\n"
    "        pass\n";

/* The scan that the two tests below rely on does see a live process. */
Test(jail, marker_scan_sees_a_live_host_process)
{
	char mark[17], arg[40];
	pid_t pid, found[2];
	long end;
	int n;

	harness_random_digits(mark, sizeof(mark));
	snprintf(arg, sizeof(arg), "0.0000000%s", mark);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execlp("sleep", "sleep", "30", arg, (char *)NULL);
		_exit(127);
	}
	end = harness_now_ms() + 2000;
	while ((n = harness_count_marked(mark, 0, found, 2)) == 0 &&
	    harness_now_ms() < end)
		usleep(10000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(found[0], pid);
	cr_assert_eq(harness_count_marked(mark, 1000, NULL, 0), 0);
}

static void
assert_nothing_left(const char *mark)
{
	pid_t pids[8];
	int n = harness_count_marked(mark, 1000, pids, 8);

	cr_assert_eq(n, 0,
	    "%d process(es) of the job survived it (first: pid "
	    "%d)",
	    n, (int)pids[0]);
}

Test(jail, no_process_outlives_its_job)
{
	char mark[17];
	struct run_out o;

	harness_random_digits(mark, sizeof(mark));
	RUN(&o, "run", "--json", "--", "python3", "-c", leftover_script, mark);
	cr_assert_str_eq(expect_ok(&o), "running True True\n", "stderr: %s",
	    jstr(&o, "stderr"));
	assert_nothing_left(mark);
	run_out_free(&o);
}

/*
 * Orphans are reaped by the jail's init (pid_namespaces(7): init is the
 * reaper of its namespace), so zombies never pile up during a job: 30
 * orphans that exit at once, then the jail's own /proc is searched for a
 * process in state Z. The script's own children are waited by sh.
 */
Test(jail, orphans_are_reaped_by_init)
{
	static const char script[] =
	    "for i in $(seq 30); do (sleep 0 &); done; sleep 0.5; "
	    "z=0; for f in /proc/[0-9]*/stat; do "
	    "read -r line < \"$f\" 2>/dev/null || continue; "
	    "case \"${line##*) }\" in Z*) z=$((z+1));; esac; done; "
	    "echo zombies=$z";
	struct run_out o;

	RUN(&o, "run", "--json", "--", "sh", "-c", script);
	cr_assert_str_eq(expect_ok(&o), "zombies=0\n", "stderr: %s",
	    jstr(&o, "stderr"));
	run_out_free(&o);
}

/*
 * The payload starts with every signal at its default disposition: the
 * launcher ignores SIGPIPE for itself, and an ignored signal would cross
 * fork and execve (signal(7)), turning `yes | head -1` into an EPIPE
 * error instead of a quiet death by SIGPIPE.
 */
Test(jail, payload_signals_are_at_their_defaults)
{
	struct run_out o;

	RUN(&o, "run", "--json", "--", "sh", "-c",
	    "grep -E '^Sig(Ign|Blk):' /proc/self/status");
	cr_assert_str_eq(expect_ok(&o),
	    "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n",
	    "got: %s / stderr: %s", jstr(&o, "stdout"), jstr(&o, "stderr"));
	run_out_free(&o);
}

/*
 * Under the /proc monitor (these machines have no delegated cgroup v2),
 * memory that no process maps is refused, since the monitor could not
 * count it: memfd_create, SysV shared memory and message queues
 * (launcher/zygote/seccomp.c). A cgroup v2 leaf would charge them instead.
 */
Test(jail, unmapped_memory_is_refused_under_the_monitor)
{
	static const char script[] =
	    "import ctypes, os\n"
	    "libc = ctypes.CDLL(None, use_errno=True)\n"
	    "try:\n"
	    "    os.memfd_create('x')\n"
	    "    print('memfd ok')\n"
	    "except OSError as e:\n"
	    "    print('memfd', e.errno)\n"
	    "for name in ('shmget', 'msgget'):\n"
	    "    f = getattr(libc, name)\n"
	    "    r = f(0, 1 << 20, 0o1600) if name == 'shmget' else f(0, "
	    "0o1600)\n"
	    "    print(name, r, ctypes.get_errno())\n";
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c", script);
	cr_assert_str_eq(jstr(&o, "enforcement"), "monitor");
	cr_assert_str_eq(expect_ok(&o), "memfd 1\nshmget -1 1\nmsgget -1 1\n",
	    "stderr: %s", jstr(&o, "stderr"));
	run_out_free(&o);
}

Test(jail, no_process_outlives_a_timed_out_job)
{
	char mark[17];
	struct run_out o;

	harness_random_digits(mark, sizeof(mark));
	RUN(&o, "run", "--json", "--timeout", "1.5", "--", "python3", "-c",
	    leftover_script, mark, "spin");
	assert_result_shape(&o);
	cr_assert_str_eq(jstr(&o, "status"), "timeout", "%s", o.out);
	cr_assert_str_eq(jstr(&o, "stdout"), "running True True\n");
	cr_assert_eq(o.status, 124);
	assert_nothing_left(mark);
	run_out_free(&o);
}

/* ---- an ordinary system inside ------------------------------------------ */

Test(jail, looks_like_an_ordinary_system)
{
	struct run_out o;

	/* stdin is the jail's /dev/null at end of file; the payload has a
	 * passwd and group entry and a writable home; /dev/shm, /dev/null
	 * and C.UTF-8 work; the time zone is UTC; no resolv.conf while the
	 * network is off; /etc/hosts names localhost. */
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os, pwd, grp, sys, time, locale\n"
	    "print(os.readlink('/proc/self/fd/0'), repr(sys.stdin.read()))\n"
	    "pw = pwd.getpwuid(os.getuid())\n"
	    "print(pw.pw_name, pw.pw_dir, grp.getgrgid(os.getgid()).gr_name)\n"
	    "open(os.path.expanduser('~/.cache-test'), 'w').write('x')\n"
	    "print(os.listdir(os.path.expanduser('~')))\n"
	    "open('/dev/shm/seg', 'w').write('y'); "
	    "print(os.listdir('/dev/shm'))\n"
	    "open('/dev/null', 'w').write('z')\n"
	    "print(locale.setlocale(locale.LC_ALL, ''), 'é'.encode())\n"
	    "print(time.strftime('%Z', time.localtime(0)))\n"
	    "print(os.path.exists('/etc/resolv.conf'))\n"
	    "print('localhost' in open('/etc/hosts').read())\n");
	cr_assert_str_eq(expect_ok(&o),
	    "/dev/null ''\n"
	    "sandbox /home/sandbox sandbox\n"
	    "['.cache-test']\n"
	    "['seg']\n"
	    "C.UTF-8 b'\\xc3\\xa9'\n"
	    "UTC\n"
	    "False\n"
	    "True\n");
	run_out_free(&o);
}

Test(jail, pty_only_when_the_policy_asks)
{
	char policy[4096];
	struct run_out o;

	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os, pty\n"
	    "print(os.path.exists('/dev/pts'), os.path.exists('/dev/ptmx'))\n"
	    "try:\n"
	    "    os.openpty()\n"
	    "except OSError as e:\n"
	    "    print(e.errno)\n");
	cr_assert_str_eq(expect_ok(&o), "False False\n2\n");
	run_out_free(&o);

	snprintf(policy, sizeof(policy), "%s/pty.ini",
	    harness_tmpdir("stockade-policy-"));
	harness_write_file(policy, "[jail]\npty = true\n");
	RUN(&o, "run", "--json", "--policy", policy, "--", "python3", "-c",
	    "import os, pty, sys\n"
	    "m, s = pty.openpty()\n"
	    "print(os.ttyname(s), os.listdir('/dev/pts'))\n"
	    "os.write(m, b'ping\\n')\n"
	    "print(os.read(s, 16))\n"
	    "print(sys.stdout.isatty())\n");
	cr_assert_str_eq(expect_ok(&o),
	    "/dev/pts/0 ['0', 'ptmx']\nb'ping\\n'\nFalse\n");
	run_out_free(&o);
}

/* ---- failing closed ----------------------------------------------------- */

Test(jail, refuses_without_user_namespaces)
{
	char script[512];
	struct run_out o;

	/* A throwaway user namespace whose user.max_user_namespaces is 0:
	 * stockade inside must refuse (exit 69) naming the cause and the fix,
	 * and run nothing. */
	snprintf(script, sizeof(script),
	    "echo 0 > /proc/sys/user/max_user_namespaces || exit 99; "
	    "exec \"$0\" run -- sh -c 'echo RAN'");
	{
		const char *const argv[] = {"unshare", "--user",
		    "--map-root-user", "sh", "-c", script, harness_stockade(),
		    NULL};

		harness_spawn(argv, &o);
	}
	cr_assert_eq(o.status, 69, "exit %d; stdout: %s; stderr: %s", o.status,
	    o.out, o.err);
	cr_assert_eq(o.out_len, 0, "something ran: %s", o.out);
	cr_assert_not_null(strstr(o.err,
			       "refused: user namespaces are disabled "
			       "(user.max_user_namespaces = 0). Fix: sysctl -w "
			       "user.max_user_namespaces="),
	    "%s", o.err);
	run_out_free(&o);
}

/* ---- the temporary workspace -------------------------------------------- */

/* Entries of DIR other than "." and "..", into NAME (first one). */
static int
count_entries(const char *dir, char *name, size_t size)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n++ == 0)
			snprintf(name, size, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

Test(jail, temporary_workspace_is_private_and_removed_unless_kept)
{
	const char *tmp = harness_tmpdir("stockade-tmpdir-");
	char name[256], path[4096];
	struct stat st;
	struct run_out o;

	/* Without --workspace: a fresh directory under $TMPDIR, gone after
	 * the job, even with a subdirectory the job locked (mode 0). */
	cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
	RUN(&o, "run", "--json", "--", "sh", "-c",
	    "mkdir -p /work/a/b && touch /work/a/b/f && chmod 0 /work/a && "
	    "ln -s /etc /work/link && pwd");
	cr_assert_str_eq(expect_ok(&o), "/work\n");
	run_out_free(&o);
	cr_assert_eq(count_entries(tmp, name, sizeof(name)), 0,
	    "left behind in $TMPDIR: %s", name);

	/* With --keep: kept, mode 0700, with what the job wrote, and said. */
	RUN(&o, "run", "--keep", "--", "sh", "-c", "echo kept > /work/f");
	cr_assert_eq(o.status, 0, "%s", o.err);
	cr_assert_eq(count_entries(tmp, name, sizeof(name)), 1);
	cr_assert_eq(strncmp(name, "stockade-", 9), 0, "%s", name);
	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	cr_assert_eq(lstat(path, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
	cr_assert_eq(st.st_uid, harness_workspace_owner());
	cr_assert_not_null(strstr(o.err, path), "%s", o.err);
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/%s/f", tmp, name);
	{
		char *got = harness_read_file(path, NULL);

		cr_assert_not_null(got, "%s: %s", path, strerror(errno));
		cr_assert_str_eq(got, "kept\n");
		free(got);
	}
}

/* A tree 1000 directories deep, a FIFO, a symlink to / and a locked
 * directory in the middle: the temporary workspace still goes. The old
 * removal stopped at 512 levels (-ELOOP) and left it all in $TMPDIR. */
Test(jail, temporary_workspace_with_a_deep_tree_is_removed)
{
	const char *tmp = harness_tmpdir("stockade-tmpdir-");
	char name[256];
	struct run_out o;

	cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
	/* Built by chdir: the whole path (2005 bytes) stays under
	 * PATH_MAX, but only one component is used at a time. */
	RUN(&o, "run", "--json", "--", "python3", "-c",
	    "import os\n"
	    "os.chdir('/work')\n"
	    "for i in range(1000):\n"
	    "    os.mkdir('d')\n"
	    "    os.chdir('d')\n"
	    "os.mkfifo('fifo')\n"
	    "os.symlink('/', 'root')\n"
	    "open('f', 'w').close()\n"
	    "os.chmod('/work/' + 'd/' * 500, 0)\n"
	    "print(len(os.getcwd()))\n");
	cr_assert_str_eq(expect_ok(&o), "2005\n");
	cr_assert_str_eq(o.err, "", "stockade said: %s", o.err);
	run_out_free(&o);
	cr_assert_eq(count_entries(tmp, name, sizeof(name)), 0,
	    "left behind in $TMPDIR: %s", name);
}

/* ---- the workspace path ------------------------------------------------- */

/*
 * Confused deputy through the workspace path: a job plants /work/a ->
 * OUTSIDE, a host directory; a later `stockade run --workspace WS/a/sub`
 * must not follow it. O_NOFOLLOW covered only the last component, so the
 * second job wrote into OUTSIDE/sub.
 */
Test(jail, workspace_through_a_planted_symlink_is_refused)
{
	const char *ws = harness_workspace();
	const char *outside = harness_tmpdir("stockade-outside-");
	char sub[4096], link[4096], target[4096], want[8192], name[256];
	struct stat st;
	struct run_out o;

	/* What the symlink leads to exists on the host, as ~/.ssh would. */
	snprintf(target, sizeof(target), "%s/sub", outside);
	cr_assert_eq(mkdir(target, 0700), 0, "%s: %s", target, strerror(errno));
	RUN(&o, "run", "--json", "--workspace", ws, "--", "ln", "-s", outside,
	    "/work/a");
	expect_ok(&o);
	run_out_free(&o);
	snprintf(link, sizeof(link), "%s/a", ws);
	cr_assert_eq(lstat(link, &st), 0, "%s: %s", link, strerror(errno));
	cr_assert(S_ISLNK(st.st_mode), "the job did not plant a symlink");

	/* A symlink in the middle of the path... */
	snprintf(sub, sizeof(sub), "%s/a/sub", ws);
	RUN(&o, "run", "--workspace", sub, "--", "sh", "-c",
	    "echo planted > /work/f");
	snprintf(want, sizeof(want),
	    "stockade: workspace %s: a component is a symbolic link; give "
	    "the path without symlinks\n",
	    sub);
	cr_assert_eq(o.status, 2, "exit %d; stderr: %s", o.status, o.err);
	cr_assert_str_eq(o.err, want);
	cr_assert_eq(o.out_len, 0, "something ran: %s", o.out);
	run_out_free(&o);
	cr_assert_eq(count_entries(target, name, sizeof(name)), 0,
	    "written outside the workspace: %s", name);

	/* ...and as the last component. */
	RUN(&o, "run", "--workspace", link, "--", "sh", "-c",
	    "echo planted > /work/f");
	snprintf(want, sizeof(want),
	    "stockade: workspace %s: a component is a symbolic link; give "
	    "the path without symlinks\n",
	    link);
	cr_assert_eq(o.status, 2, "exit %d; stderr: %s", o.status, o.err);
	cr_assert_str_eq(o.err, want);
	run_out_free(&o);
	cr_assert_eq(count_entries(outside, name, sizeof(name)), 1,
	    "written outside the workspace");
}

/* A relative --workspace resolves from the current directory. */
Test(jail, workspace_relative_path_is_from_the_cwd)
{
	const char *ws = harness_workspace();
	char path[4096], *got;
	struct run_out o;

	snprintf(path, sizeof(path), "%s/real", ws);
	cr_assert_eq(mkdir(path, 0700), 0);
	if (geteuid() == 0)
		cr_assert_eq(chown(path, PROTO_ROOT_PAYLOAD_ID,
				 PROTO_ROOT_PAYLOAD_ID),
		    0);
	cr_assert_eq(chdir(ws), 0);
	RUN(&o, "run", "--json", "--workspace", "real", "--", "sh", "-c",
	    "echo relative > /work/f");
	expect_ok(&o);
	run_out_free(&o);
	snprintf(path, sizeof(path), "%s/real/f", ws);
	got = harness_read_file(path, NULL);
	cr_assert_not_null(got, "%s: %s", path, strerror(errno));
	cr_assert_str_eq(got, "relative\n");
	free(got);
}

/*
 * A kernel without openat2 (Linux < 5.6), simulated by a seccomp filter
 * that answers ENOSYS (tests/lib/with_enosys.c): stockade refuses (69) with
 * the requirement, for a given and for a temporary workspace, and runs
 * nothing; it never falls back to open(2) (style.md rule 18).
 */
Test(jail, workspace_without_openat2_is_refused)
{
	/* The check every command starts with (broker/host/doctor.h). */
	static const char want[] =
	    "stockade: refused: the kernel has no openat2(2) (ENOSYS; "
	    "Linux before 5.6, or a seccomp profile that hides it). Fix: "
	    "run stockade on Linux 5.6 or later, outside any seccomp "
	    "profile that denies openat2\n";
	const char *tmp = harness_tmpdir("stockade-tmpdir-");
	const char *ws = harness_workspace();
	char enosys[4096], name[256];
	struct run_out o;

	snprintf(enosys, sizeof(enosys), "%s", harness_helper("with-enosys"));
	cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
	/* No cached pass (doctor.h): an empty runtime directory of ours, so
	 * that the check runs and its words are the refusal's. */
	cr_assert_eq(chmod(tmp, 0700), 0);
	cr_assert_eq(setenv("XDG_RUNTIME_DIR", tmp, 1), 0);
	{
		const char *const argv[] = {enosys, "openat2",
		    harness_stockade(), "run", "--workspace", ws, "--", "sh",
		    "-c", "echo RAN", NULL};

		harness_spawn(argv, &o);
	}
	cr_assert_eq(o.status, 69, "exit %d; stderr: %s", o.status, o.err);
	cr_assert_str_eq(o.err, want);
	cr_assert_eq(o.out_len, 0, "something ran: %s", o.out);
	run_out_free(&o);
	{
		const char *const argv[] = {enosys, "openat2",
		    harness_stockade(), "run", "--", "sh", "-c", "echo RAN",
		    NULL};

		harness_spawn(argv, &o);
	}
	cr_assert_eq(o.status, 69, "exit %d; stderr: %s", o.status, o.err);
	cr_assert_str_eq(o.err, want);
	cr_assert_eq(o.out_len, 0, "something ran: %s", o.out);
	run_out_free(&o);
	cr_assert_eq(count_entries(tmp, name, sizeof(name)), 0,
	    "left behind in $TMPDIR: %s", name);
}

/* ---- the command line's bounds ------------------------------------------ */

#define TOO_LONG                                                             \
	"stockade: the command line is too long: at most 1024 arguments of " \
	"at most 16384 bytes each\n"

/* Runs ARGV (NULL-terminated; the whole command, stockade's path first:
 * harness_run takes at most 255 arguments) and expects the usage error
 * MESSAGE, exit 2, before anything ran. */
static void
expect_too_long(const char *const *argv, const char *message)
{
	struct run_out o;

	harness_spawn(argv, &o);
	cr_assert_eq(o.status, 2, "exit %d; stderr: %.300s", o.status, o.err);
	cr_assert_str_eq(o.err, message);
	cr_assert_eq(o.out_len, 0, "%s", o.out);
	run_out_free(&o);
}

/* One argument over JOB_MAX_STR (16 KiB) was "sandbox_error: cannot start
 * the launcher: Invalid argument"; exactly 16 KiB runs. */
Test(jail, argument_over_16_kib_is_a_usage_error)
{
	char *big = malloc(16384 + 2);
	struct run_out o;

	cr_assert_not_null(big);
	memset(big, 'x', 16384 + 1);
	big[16384 + 1] = '\0';
	{
		const char *const argv[] = {harness_stockade(), "run", "--json",
		    "--", "echo", big, NULL};

		expect_too_long(argv, TOO_LONG);
	}
	{
		/* The program name counts as an argument. */
		const char *const argv[] = {harness_stockade(), "run", "--json",
		    "--", big, NULL};

		expect_too_long(argv, TOO_LONG);
	}
	big[16384] = '\0';
	{
		const char *const argv[] = {"run", "--json", "--", "sh", "-c",
		    "echo ${#1}", "sh", big, NULL};

		harness_run(argv, &o);
	}
	cr_assert_str_eq(expect_ok(&o), "16384\n");
	run_out_free(&o);
	/* Every argument within bounds, but not one message together. */
	{
		const char *argv[16] = {harness_stockade(), "run", "--json",
		    "--", "echo"};

		for (int i = 5; i < 15; i++)
			argv[i] = big;
		argv[15] = NULL;
		expect_too_long(argv,
		    "stockade: the command line is too long: with "
		    "the policy's environment and mounts it must "
		    "fit in 131072 bytes\n");
	}
	free(big);
}

/* More than JOB_MAX_ARGS (1024) arguments, the program included; exactly
 * 1024 runs. */
Test(jail, more_than_1024_arguments_is_a_usage_error)
{
	const char *argv[1040];
	struct run_out o;
	size_t n = 0;

	argv[n++] = harness_stockade();
	argv[n++] = "run";
	argv[n++] = "--json";
	argv[n++] = "--";
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = "echo $#";
	argv[n++] = "sh";
	/* sh, -c, the script and $0 are 4: 1020 more make 1024. */
	while (n < 4 + 1024)
		argv[n++] = "a";
	argv[n] = NULL;
	harness_spawn(argv, &o);
	cr_assert_str_eq(expect_ok(&o), "1020\n");
	run_out_free(&o);
	argv[n++] = "a";
	argv[n] = NULL;
	expect_too_long(argv, TOO_LONG);
}

/* A caller that stops reading (stockade ... | head -c 10) must not kill
 * the broker by SIGPIPE before it removes the temporary workspace. */
Test(jail, closed_stdout_still_removes_the_workspace)
{
	const char *tmp = harness_tmpdir("stockade-tmpdir-");
	char name[256];
	int p[2], st, null;
	pid_t pid;

	cr_assert_eq(setenv("TMPDIR", tmp, 1), 0);
	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(null, 2);
		close(p[0]);
		close(p[1]);
		/* An ignored SIGPIPE would be inherited across exec and hide
		 * the broker's own handling. */
		signal(SIGPIPE, SIG_DFL);
		execl(harness_stockade(), "stockade", "run", "--", "sh", "-c",
		    "for i in $(seq 1 2000); do echo line $i; done",
		    (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	close(p[0]); /* the reader is gone before anything is written */
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "stockade died of signal %d",
	    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_assert_eq(WEXITSTATUS(st), 0);
	cr_assert_eq(count_entries(tmp, name, sizeof(name)), 0,
	    "left behind in $TMPDIR: %s", name);
}

/* As root, a workspace owned by root is refused: the id-mapped job would
 * get root's access to everything of root's in it (--workspace /etc). As
 * an ordinary user the same directory, the user's own, is simply used. */
Test(jail, root_owned_workspace_is_refused_when_running_as_root)
{
	const char *dir = harness_tmpdir("stockade-rootws-");
	struct run_out o;

	RUN(&o, "run", "--json", "--workspace", dir, "--", "sh", "-c",
	    "echo x > /work/f");
	if (geteuid() == 0) {
		cr_assert_eq(o.status, 2, "exit %d: %s %s", o.status, o.out,
		    o.err);
		cr_assert_eq(o.out_len, 0, "%s", o.out);
		cr_assert_not_null(strstr(o.err,
				       "belongs to uid 0: stockade runs "
				       "as root"),
		    "%s", o.err);
	} else {
		cr_assert_eq(o.status, 0, "exit %d: %s %s", o.status, o.out,
		    o.err);
	}
	run_out_free(&o);
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/f", dir);
		cr_assert_eq(access(path, F_OK) == 0, geteuid() != 0);
	}
}

/* A workspace the job could not write is refused before any job runs
 * (issue 22), by run, serve and mcp alike: read-only (0555), as the
 * payload's owner sees it; the message names the mode and the fix. */
Test(jail, unwritable_workspace_is_refused_before_the_job)
{
	const char *ws = harness_workspace();
	static const char *const fronts[][3] = {{"serve", NULL, NULL},
	    {"mcp", NULL, NULL}};
	char path[4096];
	struct run_out o;

	cr_assert_eq(chmod(ws, 0555), 0);
	RUN(&o, "run", "--json", "--workspace", ws, "--", "sh", "-c", "exit 7");
	cr_assert_eq(o.status, 2, "exit %d: %s %s", o.status, o.out, o.err);
	cr_assert_eq(o.out_len, 0, "a job ran: %s", o.out);
	cr_assert_not_null(strstr(o.err,
			       "is not writable by the job (mode "
			       "0555"),
	    "%s", o.err);
	cr_assert_not_null(strstr(o.err, "chmod u+wx"), "%s", o.err);
	run_out_free(&o);
	for (size_t i = 0; i < 2; i++) {
		RUN(&o, fronts[i][0], "--workspace", ws);
		cr_assert_neq(o.status, 0, "%s: exit 0: %s", fronts[i][0],
		    o.err);
		cr_assert_not_null(strstr(o.err, "is not writable by the job"),
		    "%s: %s", fronts[i][0], o.err);
		run_out_free(&o);
	}
	cr_assert_eq(chmod(ws, 0755), 0);
	snprintf(path, sizeof(path), "%s/f", ws);
	RUN(&o, "run", "--json", "--workspace", ws, "--", "sh", "-c",
	    "echo x > /work/f");
	expect_ok(&o);
	run_out_free(&o);
	cr_assert_eq(access(path, F_OK), 0);
}

/* A job cannot leave its workspace directory with other permissions
 * than it had (chmod 777 /work would outlive the job). */
Test(jail, workspace_mode_is_restored_after_the_job)
{
	const char *ws = harness_workspace();
	struct stat st;
	struct run_out o;

	cr_assert_eq(chmod(ws, 0750), 0);
	RUN(&o, "run", "--json", "--workspace", ws, "--", "chmod", "777",
	    "/work");
	expect_ok(&o);
	run_out_free(&o);
	cr_assert_eq(stat(ws, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0750, "mode %o", st.st_mode & 07777);
}
