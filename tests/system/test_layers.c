/*
 * test_layers.c: each layer of the jail switched off on its own (issue 6;
 * docs/layers.md), through the real `stockade run --unsafe-evaluation`:
 * for every layer a job whose result differs with the layer on and off,
 * so that a switch that does nothing, or a layer that is not really
 * there, fails here; and the rules around the switches: a policy that
 * switches any layer off is refused without --unsafe-evaluation, warned
 * about with it, named in the result's layers_off, refused by `stockade
 * serve` always, and an unknown layer name is a policy error.
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534; a skip for a kernel layer fails under STOCKADE_MUST_WORK=1.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "capture.h"
#include "harness.h"
#include "jobspec.h"
#include "policy.h"
#include "proto.h"
#include "result_json.h"
#include "supervisor.h"

extern char **environ;

TestSuite(layers, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 120);

/* ---- helpers ------------------------------------------------------------ */

/* A policy file laid over the default: [jail] unsafe_layers_off = OFF,
 * then the lines EXTRA (or NULL). Returns its path (harness-owned). */
static const char *
policy_off(const char *off, const char *extra)
{
	static char path[PATH_MAX];
	char text[1024];

	snprintf(path, sizeof(path), "%s/policy.ini",
	    harness_tmpdir("stockade-layers-policy"));
	snprintf(text, sizeof(text), "[jail]\nunsafe_layers_off = %s\n%s", off,
	    extra != NULL ? extra : "");
	harness_write_file(path, text);
	/* The 65534 variant's broker reads it too. */
	cr_assert_eq(chmod(path, 0644), 0);
	return path;
}

/*
 * Runs `stockade run --json --unsafe-evaluation --policy POLICY
 * [--workspace WS] -- CMD...` (CMD ends with NULL) into O; POLICY NULL
 * is the default policy, WS NULL a temporary workspace.
 */
static void
run_cmd(struct run_out *o, const char *policy, const char *ws,
    const char *const *cmd)
{
	const char *argv[64];
	size_t n = 0;

	argv[n++] = "run";
	argv[n++] = "--json";
	argv[n++] = "--unsafe-evaluation";
	if (policy != NULL) {
		argv[n++] = "--policy";
		argv[n++] = policy;
	}
	if (ws != NULL) {
		argv[n++] = "--workspace";
		argv[n++] = ws;
	}
	argv[n++] = "--";
	for (size_t i = 0; cmd[i] != NULL; i++) {
		cr_assert_lt(n, sizeof(argv) / sizeof(argv[0]) - 1);
		argv[n++] = cmd[i];
	}
	argv[n] = NULL;
	harness_run(argv, o);
	cr_assert_not_null(o->json, "no JSON result (exit %d): %s / %s",
	    o->status, o->out, o->err);
}

/* run_cmd with the layers OFF switched off ("" for none: the product). */
#define RUN_OFF(o, off, ws, ...)                                              \
	do {                                                                  \
		const char *const cmd_[] = {__VA_ARGS__, NULL};               \
		run_cmd((o), (off)[0] ? policy_off((off), NULL) : NULL, (ws), \
		    cmd_);                                                    \
	} while (0)

static const char *
jstr(const struct run_out *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o->json, key));

	cr_assert_not_null(v, "%s missing: %s", key, o->out);
	return v;
}

static const char *
status(const struct run_out *o)
{
	return jstr(o, "status");
}

/* The job's stdout, after asserting the status is ok. */
static const char *
ok_stdout(const struct run_out *o)
{
	cr_assert_str_eq(status(o), "ok", "%s / %s", o->out, o->err);
	return jstr(o, "stdout");
}

/* The job's exit code (-1 for null). */
static long
exit_code(const struct run_out *o)
{
	json_t *v = json_object_get(o->json, "exit_code");

	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* The result's layers_off as "a,b" into BUF. */
static const char *
layers_of(const struct run_out *o, char *buf, size_t size)
{
	json_t *a = json_object_get(o->json, "layers_off"), *v;
	size_t i, at = 0;

	cr_assert(json_is_array(a), "layers_off is not an array: %s", o->out);
	buf[0] = '\0';
	json_array_foreach(a, i, v)
	{
		cr_assert(json_is_string(v));
		at += (size_t)snprintf(buf + at, size - at, "%s%s",
		    i ? "," : "", json_string_value(v));
		cr_assert_lt(at, size);
	}
	return buf;
}

/* A fresh workspace and its real path (the job sees this one when its
 * mount namespace is off). */
static const char *
workspace_real(char *real)
{
	const char *ws = harness_workspace();

	cr_assert_not_null(realpath(ws, real), "%s: %s", ws, strerror(errno));
	return ws;
}

/* A file outside every workspace, readable by anyone: DIR/canary holding
 * TEXT, in a fresh directory under /tmp (mode 0755). */
static const char *
outside_file(const char *text)
{
	static char path[PATH_MAX];
	const char *dir = harness_tmpdir("stockade-layers-outside");

	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/canary", dir);
	harness_write_file(path, text);
	cr_assert_eq(chmod(path, 0644), 0);
	return path;
}

/* Waits up to WAIT_MS for a process with MARK in its command line. */
static int
wait_marked(const char *mark, int wait_ms)
{
	long end = harness_now_ms() + wait_ms;
	int n;

	while ((n = harness_count_marked(mark, 0, NULL, 0)) == 0 &&
	    harness_now_ms() < end)
		usleep(10000);
	return n;
}

/* Kills every process with MARK (a job's leftover); returns how many. */
static int
kill_marked(const char *mark)
{
	pid_t pids[16];
	int n = harness_count_marked(mark, 0, pids, 16);

	for (int i = 0; i < n && i < 16; i++)
		kill(pids[i], SIGKILL);
	harness_count_marked(mark, 2000, NULL, 0);
	return n;
}

/*
 * A shell script that leaves a process behind: a setsid'd shell, in a
 * session of its own, whose command line holds the mark ("$1$2", given
 * in two halves so that no other process of the job carries it whole),
 * then exits (or, with STAY, sleeps too).
 */
static const char *
leftover_script(bool stay)
{
	return stay ? "m=$1$2; (setsid sh -c \"sleep 60; : $m\" &); sleep 60"
		    : "m=$1$2; (setsid sh -c \"sleep 60; : $m\" &); sleep 0.3; "
		      "echo started";
}

/* A fresh mark for leftover_script, in halves H1 and H2 (9 bytes). */
static void
new_mark(char *mark, char *h1, char *h2)
{
	harness_random_digits(mark, 17);
	memcpy(h1, mark, 8);
	h1[8] = '\0';
	memcpy(h2, mark + 8, 9);
}

/* ---- the switches ------------------------------------------------------- */

Test(layers, refused_without_unsafe_evaluation)
{
	const char *p = policy_off("seccomp, pid_ns", NULL);
	struct run_out o;

	RUN(&o, "run", "--json", "--policy", p, "--", "true");
	cr_assert_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_assert_str_eq(o.out, "");
	cr_assert_not_null(strstr(o.err,
			       "stockade: refused: the policy "
			       "switches layers off (pid_ns, seccomp): "
			       "only `stockade eval` or `stockade run "
			       "--unsafe-evaluation` may run it\n"),
	    "%s", o.err);
	run_out_free(&o);
}

/* The older switch is the same switch. */
Test(layers, unsafe_no_seccomp_is_layer_seccomp)
{
	const char *p = policy_off("", "unsafe_no_seccomp = true\n");
	char buf[256];
	struct run_out o;

	RUN(&o, "run", "--json", "--policy", p, "--", "true");
	cr_assert_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_assert_not_null(strstr(o.err, "layers off (seccomp)"), "%s", o.err);
	run_out_free(&o);

	RUN(&o, "run", "--json", "--unsafe-evaluation", "--policy", p, "--",
	    "true");
	cr_assert_str_eq(status(&o), "ok", "%s", o.err);
	cr_assert_str_eq(layers_of(&o, buf, sizeof(buf)), "seccomp");
	run_out_free(&o);
}

Test(layers, warning_and_layers_off_in_the_result)
{
	char buf[256];
	struct run_out o;

	RUN_OFF(&o, "seccomp,pid_ns  limits", NULL, "true");
	cr_assert_str_eq(status(&o), "ok", "%s", o.err);
	cr_assert_str_eq(layers_of(&o, buf, sizeof(buf)),
	    "limits,pid_ns,seccomp");
	cr_assert_not_null(strstr(o.err,
			       "stockade: WARNING: unsafe "
			       "evaluation: layers off: limits, pid_ns, "
			       "seccomp; this job is not isolated\n"),
	    "%s", o.err);
	run_out_free(&o);

	/* The product: an empty list, no warning (the flag alone changes
	 * nothing). */
	RUN_OFF(&o, "", NULL, "true");
	cr_assert_str_eq(status(&o), "ok", "%s", o.err);
	cr_assert_str_eq(layers_of(&o, buf, sizeof(buf)), "");
	cr_assert_null(strstr(o.err, "WARNING"), "%s", o.err);
	run_out_free(&o);
}

Test(layers, serve_refuses_always)
{
	const char *p = policy_off("network_ns", NULL);
	struct run_out o;

	RUN(&o, "serve", "--workspace", harness_workspace(), "--policy", p);
	cr_assert_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_assert_not_null(strstr(o.err,
			       "refused: the policy switches layers "
			       "off (network_ns): `stockade serve` never "
			       "runs such a policy"),
	    "%s", o.err);
	run_out_free(&o);
}

/*
 * Not a layer, but fail closed the same way: a [network] allow-list runs
 * only through the egress proxy (issue 25). Without the proxy program
 * beside it, `run` refuses the policy rather than
 * run the job with no network or an unbounded one; with it, the job
 * runs and its result carries the network object. `policy check` names
 * every refused rule; deny rules alone open nothing and need no proxy.
 */
Test(layers, network_allow_list_runs_only_through_the_proxy)
{
	static char path[PATH_MAX], bin[PATH_MAX], cmd[4 * PATH_MAX];
	struct run_out o;

	snprintf(path, sizeof(path), "%s/net.ini",
	    harness_tmpdir("stockade-layers-net"));
	harness_write_file(path, "[network]\nallow = registry.example.org\n");
	cr_assert_eq(chmod(path, 0644), 0);
	/* A copy of stockade and its launcher without the proxy beside
	 * them. */
	snprintf(bin, sizeof(bin), "%s/stockade",
	    harness_tmpdir("stockade-layers-noproxy"));
	snprintf(cmd, sizeof(cmd),
	    "cp %s %s && cp %s %s/stockade-launcher && "
	    "chmod -R a+rX %s",
	    harness_stockade(), bin, harness_launcher(), dirname(strdupa(bin)),
	    dirname(strdupa(bin)));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	{
		const char *const argv[] = {bin, "run", "--json", "--policy",
		    path, "--", "true", NULL};

		harness_spawn(argv, &o);
	}
	cr_assert_eq(o.status, 70, "exit %d: %s", o.status, o.err);
	cr_assert_str_eq(o.out, "");
	cr_assert_not_null(strstr(o.err,
			       "stockade: refused: the policy's [network] "
			       "section allows hosts, and cannot find the "
			       "egress proxy stockade-proxy"),
	    "%s", o.err);
	run_out_free(&o);
	RUN(&o, "run", "--json", "--policy", path, "--", "true");
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_assert_not_null(strstr(o.out,
			       "\"network\":{\"connections\":[],"
			       "\"refusals\":[],"),
	    "%s", o.out);
	run_out_free(&o);

	/* `policy check` names every refused rule, not only the first. */
	harness_write_file(path, "[network]\nallow = a b\nallow = 0x7f.1\n");
	RUN(&o, "policy", "check", path);
	cr_assert_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	cr_assert_not_null(strstr(o.err, ":2: allow \"a b\" contains a space"),
	    "%s", o.err);
	cr_assert_not_null(strstr(o.err,
			       ":3: allow \"0x7f.1\" ends in a number"),
	    "%s", o.err);
	run_out_free(&o);

	harness_write_file(path, "[network]\ndeny = registry.example.org\n");
	RUN(&o, "run", "--json", "--policy", path, "--", "true");
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_assert_null(strstr(o.out, "\"network\""), "%s", o.out);
	run_out_free(&o);
}

Test(layers, unknown_layer_is_a_policy_error)
{
	const char *p = policy_off("pid_ns, sandboxes", NULL);
	char want[PATH_MAX + 256];
	struct run_out o;

	RUN(&o, "run", "--json", "--unsafe-evaluation", "--policy", p, "--",
	    "true");
	cr_assert_eq(o.status, 2, "exit %d: %s", o.status, o.err);
	snprintf(want, sizeof(want),
	    "%s:2: unsafe_layers_off names an "
	    "unknown layer \"sandboxes\" (the layers: limits, "
	    "process_group, scrubbed_env, private_cwd, user_ns, pid_ns, "
	    "mount_ns, network_ns, ipc_uts, no_terminal, caps_nnp, "
	    "landlock, seccomp)",
	    p);
	cr_assert_not_null(strstr(o.err, want), "%s", o.err);
	run_out_free(&o);
}

/* Every configuration of the layer table runs: none, then one layer
 * more at a time, up to the product. */
Test(layers, every_cumulative_configuration_runs)
{
	static const char *const order[] = {
	    "limits",
	    "process_group",
	    "scrubbed_env",
	    "private_cwd",
	    "user_ns",
	    "pid_ns",
	    "mount_ns",
	    "network_ns",
	    "ipc_uts",
	    "no_terminal",
	    "caps_nnp",
	    "landlock",
	    "seccomp",
	};
	const size_t n = sizeof(order) / sizeof(order[0]);

	for (size_t on = 0; on <= n; on++) {
		char off[512] = "", want[512] = "", got[512];
		struct run_out o;

		for (size_t i = on; i < n; i++) {
			strcat(off, i > on ? ", " : "");
			strcat(off, order[i]);
			strcat(want, i > on ? "," : "");
			strcat(want, order[i]);
		}
		RUN_OFF(&o, off, NULL, "sh", "-c", "echo ran");
		cr_assert_str_eq(ok_stdout(&o), "ran\n", "with %s off: %s", off,
		    o.err);
		cr_assert_str_eq(layers_of(&o, got, sizeof(got)), want);
		run_out_free(&o);
	}
}

/* ---- one layer at a time ------------------------------------------------ */

/* limits: output past the cap ends the job under on_output_limit = kill,
 * or does not; the wall clock stays as a backstop either way. */
Test(layers, limits)
{
	static const char kill[] = "[limits]\non_output_limit = kill\n";
	const char *const flood[] = {"head", "-c", "2000000", "/dev/zero",
	    NULL};
	struct run_out o;

	run_cmd(&o, policy_off("", kill), NULL, flood);
	cr_assert_str_eq(status(&o), "output_limit", "%s", o.out);
	run_out_free(&o);

	run_cmd(&o, policy_off("limits", kill), NULL, flood);
	cr_assert_str_eq(status(&o), "ok", "%s", o.err);
	cr_assert_eq(json_integer_value(
			 json_object_get(o.json, "stdout_bytes")),
	    2000000);
	/* Not capped at all: the result holds every byte (each NUL as
	 * U+FFFD, three bytes) and says nothing was cut. */
	cr_assert(json_is_false(json_object_get(o.json, "stdout_truncated")));
	cr_assert_eq(json_string_length(json_object_get(o.json, "stdout")),
	    3 * 2000000);
	run_out_free(&o);

	/* No rlimit of ours: the policy's open_files (256) is not set. */
	RUN_OFF(&o, "", NULL, "sh", "-c", "ulimit -n");
	cr_assert_str_eq(ok_stdout(&o), "256\n");
	run_out_free(&o);
	RUN_OFF(&o, "limits", NULL, "sh", "-c", "ulimit -n");
	cr_assert_str_neq(ok_stdout(&o), "256\n");
	run_out_free(&o);

	{
		const char *p = policy_off("limits",
		    "[limits]\n"
		    "wall_time_ms = 1000\n");
		const char *const cmd[] = {"sleep", "30", NULL};

		run_cmd(&o, p, NULL, cmd);
		cr_assert_str_eq(status(&o), "timeout", "%s", o.out);
		cr_assert_lt(o.wall_ms, 10000);
		run_out_free(&o);
	}
}

/* process_group, where it matters: without a pid namespace. */
Test(layers, process_group_ends_leftovers_when_the_job_ends)
{
	char mark[17], h1[9], h2[9];
	struct run_out o;

	new_mark(mark, h1, h2);
	RUN_OFF(&o, "pid_ns", NULL, "sh", "-c", leftover_script(false), "sh",
	    h1, h2);
	cr_assert_str_eq(ok_stdout(&o), "started\n", "%s", o.out);
	cr_assert_eq(harness_count_marked(mark, 2000, NULL, 0), 0,
	    "a process of the job outlived it");
	run_out_free(&o);

	new_mark(mark, h1, h2);
	RUN_OFF(&o, "pid_ns, process_group", NULL, "sh", "-c",
	    leftover_script(false), "sh", h1, h2);
	cr_assert_str_eq(ok_stdout(&o), "started\n", "%s", o.out);
	cr_assert_geq(wait_marked(mark, 500), 1,
	    "the leftover did not survive the job");
	cr_assert_geq(kill_marked(mark), 1);
	run_out_free(&o);
}

Test(layers, process_group_ends_leftovers_when_the_job_is_killed)
{
	const char *const off[] = {"pid_ns", "pid_ns, process_group"};
	char mark[17], h1[9], h2[9];
	struct run_out o;

	for (int i = 0; i < 2; i++) {
		const char *p = policy_off(off[i],
		    "[limits]\n"
		    "wall_time_ms = 1500\n");
		const char *const argv[] = {"sh", "-c", leftover_script(true),
		    "sh", h1, h2, NULL};

		new_mark(mark, h1, h2);
		run_cmd(&o, p, NULL, argv);
		cr_assert_str_eq(status(&o), "timeout", "%s", o.out);
		if (i == 0)
			cr_assert_eq(harness_count_marked(mark, 2000, NULL, 0),
			    0, "a process of the job outlived it");
		else
			cr_assert_geq(kill_marked(mark), 1,
			    "the leftover did not survive the job");
		run_out_free(&o);
	}
}

/* The broker dies: the launcher dies with it, and jail init, whose
 * parent-death signal is the launcher's, still ends the job's
 * processes. */
Test(layers, process_group_ends_leftovers_when_the_broker_dies)
{
	const char *p = policy_off("pid_ns", NULL);
	posix_spawn_file_actions_t fa;
	char mark[17], h1[9], h2[9];
	pid_t pid;
	int st;

	new_mark(mark, h1, h2);
	{
		const char *const argv[] = {
		    harness_stockade(),
		    "run",
		    "--unsafe-evaluation",
		    "--policy",
		    p,
		    "--",
		    "sh",
		    "-c",
		    leftover_script(true),
		    "sh",
		    h1,
		    h2,
		    NULL,
		};

		cr_assert_eq(posix_spawn_file_actions_init(&fa), 0);
		cr_assert_eq(posix_spawn_file_actions_addopen(&fa, 0,
				 "/dev/null", O_RDONLY, 0),
		    0);
		cr_assert_eq(posix_spawn_file_actions_addopen(&fa, 1,
				 "/dev/null", O_WRONLY, 0),
		    0);
		cr_assert_eq(posix_spawn_file_actions_addopen(&fa, 2,
				 "/dev/null", O_WRONLY, 0),
		    0);
		cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL,
				 (char *const *)(uintptr_t)argv, environ),
		    0);
		posix_spawn_file_actions_destroy(&fa);
	}
	cr_assert_geq(wait_marked(mark, 10000), 1, "the job did not start");
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(harness_count_marked(mark, 3000, NULL, 0), 0,
	    "a process of the job outlived its broker");
}

Test(layers, scrubbed_env)
{
	char canary[33], var[64];
	struct run_out o;

	harness_random_hex(canary, sizeof(canary));
	snprintf(var, sizeof(var), "STOCKADE_LAYERS_CANARY=%s", canary);
	cr_assert_eq(setenv("STOCKADE_LAYERS_CANARY", canary, 1), 0);
	cr_assert_eq(setenv("LANG", "xx_XX.bogus", 1), 0);

	RUN_OFF(&o, "", NULL, "env");
	cr_assert_null(strstr(ok_stdout(&o), canary), "%s", o.out);
	run_out_free(&o);

	RUN_OFF(&o, "scrubbed_env", NULL, "env");
	cr_assert_not_null(strstr(ok_stdout(&o), var), "%s", o.out);
	/* The policy's values win over the caller's. */
	cr_assert_not_null(strstr(jstr(&o, "stdout"), "\nLANG=C.UTF-8\n"), "%s",
	    o.out);
	cr_assert_null(strstr(jstr(&o, "stdout"), "bogus"), "%s", o.out);
	run_out_free(&o);
}

/* private_cwd without a mount namespace: HOME is the workspace and
 * TMPDIR a fresh directory in it, or both as the environment says. */
Test(layers, private_cwd_without_mount_ns)
{
	char real[PATH_MAX], want[PATH_MAX * 3 + 64];
	const char *ws = workspace_real(real);
	struct run_out o;

	RUN_OFF(&o, "mount_ns", ws, "sh", "-c",
	    "echo \"$HOME|$(pwd)|${TMPDIR%-*}\"; test -d \"$TMPDIR\"");
	snprintf(want, sizeof(want), "%s|%s|%s/.stockade-tmp\n", real, real,
	    real);
	cr_assert_str_eq(ok_stdout(&o), want, "%s", o.err);
	run_out_free(&o);

	ws = workspace_real(real);
	RUN_OFF(&o, "mount_ns, private_cwd", ws, "sh", "-c",
	    "echo \"$HOME|$(pwd)|${TMPDIR-unset}\"");
	snprintf(want, sizeof(want), "/home/sandbox|%s|unset\n", real);
	cr_assert_str_eq(ok_stdout(&o), want, "%s", o.err);
	run_out_free(&o);
}

/* private_cwd in a mount namespace: a private /tmp, or the host's. */
Test(layers, private_cwd_with_mount_ns)
{
	char canary[33];
	const char *file;
	struct run_out o;

	harness_random_hex(canary, sizeof(canary));
	file = outside_file(canary);
	RUN_OFF(&o, "", NULL, "cat", file);
	cr_assert_str_eq(status(&o), "exit_nonzero", "%s", o.out);
	cr_assert_null(strstr(o.out, canary));
	run_out_free(&o);

	RUN_OFF(&o, "private_cwd", NULL, "cat", file);
	cr_assert_str_eq(ok_stdout(&o), canary, "%s", o.err);
	run_out_free(&o);
}

Test(layers, user_ns)
{
	const char *ns = "user_ns, pid_ns, mount_ns, network_ns, ipc_uts, "
			 "landlock";
	char want[64];
	struct run_out o;

	RUN_OFF(&o, "", NULL, "cat", "/proc/self/uid_map");
	cr_assert_str_neq(ok_stdout(&o), "         0          0 4294967295\n");
	run_out_free(&o);

	/* The host's user namespace, with the payload's host ids
	 * (Landlock off too: without a mount namespace its rules name no
	 * /proc). */
	RUN_OFF(&o, ns, NULL, "sh", "-c", "cat /proc/self/uid_map; id -u");
	snprintf(want, sizeof(want), "         0          0 4294967295\n%u\n",
	    (unsigned)harness_workspace_owner());
	cr_assert_str_eq(ok_stdout(&o), want, "%s", o.err);
	run_out_free(&o);

	/* Alone: other namespaces need a user namespace, or root. */
	RUN_OFF(&o, "user_ns", NULL, "cat", "/proc/self/uid_map");
	if (geteuid() == 0) {
		cr_assert_str_eq(ok_stdout(&o),
		    "         0          0 4294967295\n");
	} else {
		cr_assert_str_eq(status(&o), "sandbox_error", "%s", o.out);
		cr_assert_not_null(strstr(jstr(&o, "detail"),
				       "without a user "
				       "namespace an unprivileged launcher "
				       "can make no other namespace"),
		    "%s", o.out);
	}
	run_out_free(&o);
}

/* pid_ns: the job sees the host's processes, this test among them. */
Test(layers, pid_ns)
{
	char path[64];
	struct run_out o;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)getpid());
	RUN_OFF(&o, "", NULL, "test", "-e", path);
	cr_assert_eq(exit_code(&o), 1, "%s", o.out);
	run_out_free(&o);

	RUN_OFF(&o, "pid_ns", NULL, "test", "-e", path);
	cr_assert_str_eq(status(&o), "ok", "%s", o.out);
	run_out_free(&o);

	/* Without a mount namespace too (the host's /proc itself). */
	RUN_OFF(&o, "pid_ns, mount_ns", NULL, "test", "-e", path);
	cr_assert_str_eq(status(&o), "ok", "%s", o.out);
	run_out_free(&o);
}

/* mount_ns: a host path outside the policy's binds exists, or not
 * (Landlock, still on, refuses to read it, not to find it). */
Test(layers, mount_ns)
{
	const char *file = outside_file("x");
	struct run_out o;

	RUN_OFF(&o, "", NULL, "test", "-e", file);
	cr_assert_eq(exit_code(&o), 1, "%s", o.out);
	run_out_free(&o);

	RUN_OFF(&o, "mount_ns", NULL, "test", "-e", file);
	cr_assert_str_eq(status(&o), "ok", "%s", o.out);
	run_out_free(&o);
}

static const char connect_py[] =
    "import socket, sys\n"
    "s = socket.socket()\n"
    "s.settimeout(3)\n"
    "try:\n"
    "    s.connect(('127.0.0.1', int(sys.argv[1])))\n"
    "except OSError as e:\n"
    "    print(type(e).__name__)\n"
    "    sys.exit(3)\n"
    "print('connected')\n";

/* network_ns: the host's loopback is reachable, or not: the namespace
 * alone keeps it out of reach (Landlock handles no TCP right). */
Test(layers, network_ns)
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

	RUN_OFF(&o, "", NULL, "python3", "-c", connect_py, port);
	cr_assert_eq(exit_code(&o), 3, "%s", o.out);
	run_out_free(&o);
	cr_assert_eq(accept(srv, NULL, NULL), -1);

	RUN_OFF(&o, "network_ns", NULL, "python3", "-c", connect_py, port);
	cr_assert_str_eq(ok_stdout(&o), "connected\n", "%s", o.out);
	run_out_free(&o);
	c = accept(srv, NULL, NULL);
	cr_assert_geq(c, 0, "no connection reached the host: %s",
	    strerror(errno));
	close(c);
	close(srv);
}

/* ipc_uts: the jail's hostname, or the host's. */
Test(layers, ipc_uts)
{
	char host[256], want[260];
	struct run_out o;

	cr_assert_eq(gethostname(host, sizeof(host)), 0);
	snprintf(want, sizeof(want), "%s\n", host);
	RUN_OFF(&o, "", NULL, "uname", "-n");
	cr_assert_str_eq(ok_stdout(&o), "stockade\n");
	run_out_free(&o);

	RUN_OFF(&o, "ipc_uts", NULL, "uname", "-n");
	cr_assert_str_eq(ok_stdout(&o), want);
	run_out_free(&o);
}

static const char session_py[] =
    "import os\n"
    "print(os.getsid(0) == os.getpid(), os.isatty(0))\n";

/*
 * Runs `stockade run --json --unsafe-evaluation --policy P -- CMD...`
 * with its standard input the terminal STDIN_FD; stdout parsed into
 * *RESULT (new reference).
 */
static json_t *
run_with_stdin(int stdin_fd, const char *policy, const char *const *cmd)
{
	const char *argv[32];
	posix_spawn_file_actions_t fa;
	char out[65536];
	size_t len = 0;
	ssize_t n;
	int po[2], st;
	size_t k = 0;
	pid_t pid;
	json_t *j;

	argv[k++] = harness_stockade();
	argv[k++] = "run";
	argv[k++] = "--json";
	argv[k++] = "--unsafe-evaluation";
	if (policy != NULL) {
		argv[k++] = "--policy";
		argv[k++] = policy;
	}
	argv[k++] = "--";
	for (size_t i = 0; cmd[i] != NULL; i++)
		argv[k++] = cmd[i];
	argv[k] = NULL;
	cr_assert_eq(pipe2(po, O_CLOEXEC), 0);
	cr_assert_eq(posix_spawn_file_actions_init(&fa), 0);
	cr_assert_eq(posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0), 0);
	cr_assert_eq(posix_spawn_file_actions_adddup2(&fa, po[1], 1), 0);
	cr_assert_eq(posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
			 O_WRONLY, 0),
	    0);
	cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL,
			 (char *const *)(uintptr_t)argv, environ),
	    0);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	while ((n = read(po[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	close(po[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	out[len] = '\0';
	j = json_loads(out, 0, NULL);
	cr_assert_not_null(j, "no JSON result: %s", out);
	return j;
}

/* no_terminal: a session of its own and /dev/null, or the caller's
 * session and terminal. */
Test(layers, no_terminal)
{
	const char *off = policy_off("no_terminal", NULL);
	const char *const cmd[] = {"python3", "-c", session_py, NULL};
	struct run_out o;
	json_t *j;
	int master, slave;

	/* Without a terminal to give: no setsid all the same. */
	RUN_OFF(&o, "", NULL, "python3", "-c", session_py);
	cr_assert_str_eq(ok_stdout(&o), "True False\n");
	run_out_free(&o);
	RUN_OFF(&o, "no_terminal", NULL, "python3", "-c", session_py);
	cr_assert_str_eq(ok_stdout(&o), "False False\n");
	run_out_free(&o);

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(master, 0, "posix_openpt: %s", strerror(errno));
	cr_assert_eq(grantpt(master), 0);
	cr_assert_eq(unlockpt(master), 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(slave, 0, "%s: %s", ptsname(master), strerror(errno));

	j = run_with_stdin(slave, NULL, cmd);
	cr_assert_str_eq(json_string_value(json_object_get(j, "stdout")),
	    "True False\n", "%s", json_dumps(j, 0));
	json_decref(j);
	j = run_with_stdin(slave, off, cmd);
	cr_assert_str_eq(json_string_value(json_object_get(j, "stdout")),
	    "False True\n", "%s", json_dumps(j, 0));
	json_decref(j);
	close(slave);
	close(master);
}

/* The launcher takes a second descriptor on RUN only as the caller's
 * terminal, and only with no_terminal off: anything else ends the
 * session (a sandbox_error for the job). */
Test(layers, run_takes_a_terminal_only_with_no_terminal_off)
{
	char err[POLICY_ERR_MAX + 256];
	char prog[] = "true";
	char *argv[] = {prog, NULL};
	struct policy pol;
	struct supervisor sup;
	struct job_spec spec;
	struct job_result res;
	int wsfd, p[2], master, slave;

	cr_assert_eq(policy_load_default(&pol, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(supervisor_init_path(&sup, harness_launcher(), err,
			 sizeof(err)),
	    0, "%s", err);
	wsfd = open(harness_workspace(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(wsfd, 0);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(master, 0);
	cr_assert_eq(grantpt(master), 0);
	cr_assert_eq(unlockpt(master), 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	cr_assert_geq(slave, 0);

	for (int i = 0; i < 3; i++) {
		/* 0: a pipe with no_terminal off; 1: a terminal with it
		 * on; 2: a terminal with it off, the one allowed. */
		cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, argv), 0);
		spec.limits = pol.limits;
		if (i != 1)
			spec.layers_off = JOB_LAYER_BIT(JOB_LAYER_NO_TERMINAL);
		sup.tty_fd = i == 0 ? p[0] : slave;
		cr_assert_eq(supervisor_run(&sup, &spec, wsfd, NULL, NULL,
				 &res),
		    0);
		if (i < 2) {
			cr_assert_eq(res.status, JOB_SANDBOX_ERROR, "case %d",
			    i);
			cr_assert_not_null(strstr(res.detail, "the launcher"),
			    "%s", res.detail);
		} else {
			cr_assert_eq(res.status, JOB_OK, "%s", res.detail);
		}
		job_result_clear(&res);
		job_spec_clear(&spec);
	}
	sup.tty_fd = -1;
	supervisor_free(&sup);
	policy_clear(&pol);
	close(wsfd);
	close(p[0]);
	close(p[1]);
	close(slave);
	close(master);
}

/* Collects a job's stdout (supervisor_run's output callback). */
static void
collect_stdout(void *arg, int stream, const uint8_t *data, size_t len)
{
	struct capture *c = arg;

	if (stream == 1)
		capture_add(c, data, len);
}

/*
 * JOB_F_STDIN (issue 22): a RUN that says it carries the job's standard
 * input must carry the read end of a pipe, and only then may a pipe come:
 * a RUN with the flag and no descriptor, with a pipe's write end or with
 * a character device (/dev/null), or a pipe without the flag, ends the
 * session unanswered. The supervisor's own way (sup.feed) is answered,
 * the program reading what was fed.
 */
Test(layers, run_takes_a_stdin_pipe_only_as_promised)
{
	char err[POLICY_ERR_MAX + 256];
	char prog[] = "cat";
	char *argv[] = {prog, NULL};
	struct policy pol;
	struct supervisor sup;
	struct job_spec spec;
	struct job_result res;
	struct stdin_feed feed;
	struct capture out;
	uint8_t *msg = malloc(PROTO_MAX_MSG), *text;
	int wsfd, p[2], null, n, fd;
	size_t len;

	cr_assert_not_null(msg);
	cr_assert_eq(policy_load_default(&pol, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(supervisor_init_path(&sup, harness_launcher(), err,
			 sizeof(err)),
	    0, "%s", err);
	wsfd = open(harness_workspace(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(wsfd, 0);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(null, 0);

	for (int i = 0; i < 4; i++) {
		/* 0: the flag, no descriptor; 1: the flag, a write end;
		 * 2: the flag, /dev/null; 3: a read end, no flag. */
		int second = i == 0 ? -1 : i == 1 ? p[1] : i == 2 ? null : p[0];
		int fds[2] = {wsfd, second};

		cr_assert_eq(supervisor_start(&sup), 0);
		cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, argv), 0);
		spec.limits = pol.limits;
		spec.job_id = sup.next_job_id++;
		if (i < 3)
			spec.flags |= JOB_F_STDIN;
		n = proto_encode_run(msg, PROTO_MAX_MSG, &spec);
		cr_assert_gt(n, 0);
		cr_assert_eq(proto_send_fds(sup.sock, msg, (size_t)n, fds,
				 second >= 0 ? 2 : 1),
		    0);
		/* No RESULT, no OUTPUT: the launcher ends the session. */
		n = proto_recv(sup.sock, msg, PROTO_MAX_MSG, &fd);
		cr_assert(n == 0 || n == -ECONNRESET, "case %d: %d", i, n);
		supervisor_stop(&sup);
		job_spec_clear(&spec);
	}

	stdin_feed_init_data(&feed, "fed\n", 4);
	cr_assert_eq(capture_init(&out, 4096), 0);
	cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, argv), 0);
	spec.limits = pol.limits;
	sup.feed = &feed;
	cr_assert_eq(supervisor_run(&sup, &spec, wsfd, collect_stdout, &out,
			 &res),
	    0);
	sup.feed = NULL;
	cr_assert_eq(res.status, JOB_OK, "%s", res.detail);
	text = capture_collect(&out, "", &len);
	cr_assert(text != NULL && len == 4 && memcmp(text, "fed\n", 4) == 0,
	    "stdout %.*s", (int)len, text != NULL ? (char *)text : "");
	free(text);
	capture_free(&out);
	stdin_feed_free(&feed);
	job_result_clear(&res);
	job_spec_clear(&spec);
	supervisor_free(&sup);
	policy_clear(&pol);
	free(msg);
	close(wsfd);
	close(null);
	close(p[0]);
	close(p[1]);
}

/* caps_nnp: no_new_privs and an empty bounding set, or neither. */
Test(layers, caps_nnp)
{
	static const char script[] =
	    "grep -E '^(NoNewPrivs|CapBnd):' /proc/self/status";
	struct run_out o;

	RUN_OFF(&o, "", NULL, "sh", "-c", script);
	cr_assert_str_eq(ok_stdout(&o),
	    "CapBnd:\t0000000000000000\nNoNewPrivs:\t1\n");
	run_out_free(&o);

	/* A root launcher's zygote emptied its own bounding set, which
	 * its jails inherit; anyone else's is full. */
	RUN_OFF(&o, "caps_nnp", NULL, "sh", "-c", script);
	cr_assert_not_null(strstr(ok_stdout(&o), "NoNewPrivs:\t0\n"), "%s",
	    o.out);
	if (geteuid() != 0)
		cr_assert_null(strstr(jstr(&o, "stdout"),
				   "CapBnd:\t0000000000000000"),
		    "%s", o.out);
	run_out_free(&o);
}

/* landlock, without a mount namespace (where it is the only wall): a
 * file outside the workspace is refused, or read. */
Test(layers, landlock)
{
	char canary[33];
	const char *file;
	struct run_out o;

	harness_random_hex(canary, sizeof(canary));
	file = outside_file(canary);
	RUN_OFF(&o, "mount_ns", NULL, "sh", "-c", "cat \"$1\" 2>&1; true", "sh",
	    file);
	cr_assert_not_null(strstr(ok_stdout(&o), "Permission denied"), "%s",
	    o.out);
	cr_assert_null(strstr(jstr(&o, "stdout"), canary));
	cr_assert_gt(json_integer_value(
			 json_object_get(o.json, "landlock_abi")),
	    0);
	run_out_free(&o);

	RUN_OFF(&o, "mount_ns, landlock", NULL, "cat", file);
	cr_assert_str_eq(ok_stdout(&o), canary, "%s", o.err);
	cr_assert_eq(json_integer_value(
			 json_object_get(o.json, "landlock_abi")),
	    0);
	run_out_free(&o);

	/* The workspace is still the job's, under Landlock. */
	RUN_OFF(&o, "mount_ns", NULL, "sh", "-c",
	    "echo hi > f && cat f && mkdir d && ls");
	cr_assert_str_eq(ok_stdout(&o), "hi\nd\nf\n", "%s", o.err);
	run_out_free(&o);
}

/* seccomp: a new user namespace is refused by the filter, or made. */
Test(layers, seccomp)
{
	struct run_out o;

	RUN_OFF(&o, "", NULL, "unshare", "-U", "true");
	cr_assert_neq(exit_code(&o), 0, "%s", o.out);
	cr_assert_gt(json_array_size(json_object_get(o.json, "denials")), 0,
	    "%s", o.out);
	run_out_free(&o);

	RUN_OFF(&o, "seccomp", NULL, "unshare", "-U", "true");
	cr_assert_str_eq(status(&o), "ok", "%s", o.out);
	cr_assert_eq(json_array_size(json_object_get(o.json, "denials")), 0);
	run_out_free(&o);
}

/* The monitor still holds the job's processes without a pid namespace:
 * an orphan (its parent gone) is reparented to init, a child subreaper,
 * and so stays in the tree the monitor sums. Here it holds more memory
 * than the job may (each process is under RLIMIT_DATA, the sum is not). */
Test(layers, limits_hold_without_pid_ns)
{
	const char *p = policy_off("pid_ns",
	    "[limits]\nmemory_mb = 64\n"
	    "wall_time_ms = 10000\n");
	const char *const cmd[] = {
	    "sh",
	    "-c",
	    "(python3 -c 'import time; b = bytearray(100 << 20); "
	    "time.sleep(30)' &); sleep 30",
	    NULL,
	};
	struct run_out o;

	run_cmd(&o, p, NULL, cmd);
	cr_assert_str_eq(status(&o), "memory_limit", "%s", o.out);
	run_out_free(&o);
}

/* ---- the pure parts ----------------------------------------------------- */

Test(layers, policy_list_syntax)
{
	static const struct {
		const char *text;
		uint32_t mask;
	} ok[] = {
	    {"", 0},
	    {"seccomp", JOB_LAYER_BIT(JOB_LAYER_SECCOMP)},
	    {"pid_ns,mount_ns",
		JOB_LAYER_BIT(JOB_LAYER_PID_NS) |
		    JOB_LAYER_BIT(JOB_LAYER_MOUNT_NS)},
	    {"landlock  limits ,  , ipc_uts",
		JOB_LAYER_BIT(JOB_LAYER_LANDLOCK) |
		    JOB_LAYER_BIT(JOB_LAYER_LIMITS) |
		    JOB_LAYER_BIT(JOB_LAYER_IPC_UTS)},
	};
	static const struct {
		const char *text;
		const char *why;
	} bad[] = {
	    {"pid_ns, pid_ns",
		"t:2: unsafe_layers_off names layer "
		"\"pid_ns\" twice"},
	    {"PID_NS",
		"t:2: unsafe_layers_off names an unknown layer "
		"\"PID_NS\""},
	    {"pid_ns;x",
		"t:2: unsafe_layers_off names an unknown layer "
		"\"pid_ns;x\""},
	};
	char text[256], err[POLICY_ERR_MAX], *buf;
	struct policy p;
	size_t len;
	FILE *f;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct policy q;

		snprintf(text, sizeof(text), "[jail]\nunsafe_layers_off = %s\n",
		    ok[i].text);
		cr_assert_eq(policy_load_string(&p, text, "t", err,
				 sizeof(err)),
		    0, "%s", err);
		cr_assert_eq(p.layers_off, ok[i].mask, "%s", ok[i].text);
		cr_assert_eq(policy_layers_off(&p), ok[i].mask);
		/* Written back in layer order, read back the same. */
		f = open_memstream(&buf, &len);
		cr_assert_not_null(f);
		cr_assert_eq(policy_format(&p, f), 0);
		cr_assert_eq(fclose(f), 0);
		cr_assert_eq(policy_load_string(&q, buf, "back", err,
				 sizeof(err)),
		    0, "%s", err);
		cr_assert_eq(q.layers_off, ok[i].mask);
		if (i == 3)
			cr_assert_not_null(strstr(buf,
					       "\nunsafe_layers_off = "
					       "limits, ipc_uts, landlock\n"),
			    "%s", buf);
		free(buf);
		policy_clear(&q);
		policy_clear(&p);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[jail]\nunsafe_layers_off = %s\n",
		    bad[i].text);
		cr_assert_eq(policy_load_string(&p, text, "t", err,
				 sizeof(err)),
		    -EINVAL);
		cr_assert_eq(strncmp(err, bad[i].why, strlen(bad[i].why)), 0,
		    "%s", err);
	}
	/* The older switch counts as layer seccomp. */
	cr_assert_eq(policy_load_string(&p,
			 "[jail]\nunsafe_no_seccomp = "
			 "true\nunsafe_layers_off = limits\n",
			 "t", err, sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(policy_layers_off(&p),
	    JOB_LAYER_BIT(JOB_LAYER_LIMITS) | JOB_LAYER_BIT(JOB_LAYER_SECCOMP));
	policy_clear(&p);
	/* The default switches nothing off. */
	cr_assert_eq(policy_load_default(&p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(policy_layers_off(&p), 0);
	policy_clear(&p);
}

Test(layers, result_names_them_in_layer_order)
{
	struct job_limits lim;
	struct capture out, err;
	struct job_result r;
	json_t *o;
	char *text;
	size_t len;
	FILE *f;

	memset(&lim, 0, sizeof(lim));
	cr_assert_eq(capture_init(&out, 1024), 0);
	cr_assert_eq(capture_init(&err, 1024), 0);
	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.enforcement = ENFORCE_MONITOR;
	r.layers_off = JOB_LAYER_BIT(JOB_LAYER_SECCOMP) |
	    JOB_LAYER_BIT(JOB_LAYER_SCRUBBED_ENV);
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	text = json_dumps(json_object_get(o, "layers_off"), JSON_COMPACT);
	cr_assert_str_eq(text, "[\"scrubbed_env\",\"seccomp\"]");
	free(text);
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	cr_assert_eq(result_print_text(o, f), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_not_null(strstr(text,
			       "\nlayers off: scrubbed_env, seccomp\n"),
	    "%s", text);
	free(text);
	json_decref(o);
	capture_free(&out);
	capture_free(&err);
}
