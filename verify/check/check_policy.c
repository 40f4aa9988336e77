/*
 * check_policy.c: the checks of the policy layer (check.h). A production
 * command (`stockade run` without --unsafe-evaluation, `stockade serve`,
 * `stockade policy check`) refuses a policy that sets an evaluation-only
 * key (unsafe_*; docs/layers.md) and one with an unknown key (README.md,
 * "Policy"), naming the key; `stockade run --unsafe-evaluation` runs the
 * former and says so.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* Deadline of the one job these checks run (`true`, well under 1 s). */
#define JOB_DEADLINE_MS 8000
/* Deadline of a command that should be refused before any job. */
#define REFUSAL_DEADLINE_MS 5000

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/*
 * Runs `stockade ARGS...` (ARGS[0] the subcommand; the word "@POLICY" is
 * replaced by a file holding POLICY) and passes R when it exits 2 with
 * nothing on stdout and "refused" or the complaint on stderr naming NAME
 * or, when not NULL, ALT (the refusal of a layer switch names the layers
 * it switches off). WHAT names the command for the observation.
 */
static void
expect_refused(struct check_ctx *c, struct check_result *r, const char *what,
    const char *const *args, const char *policy, const char *name,
    const char *alt)
{
	const char *argv[32];
	char path[4096], err[200];
	struct check_proc p;
	size_t n = 0;
	int e;

	check_tmpname(c, "policy", path, sizeof(path));
	if ((e = check_write_file(path, policy, strlen(policy), false,
		 c->root)) < 0) {
		check_fail(r, "cannot write the policy: %s", strerror(-e));
		return;
	}
	argv[n++] = c->stockade;
	for (size_t i = 0; args[i] != NULL && n < 31; i++)
		argv[n++] = strcmp(args[i], "@POLICY") == 0 ? path : args[i];
	argv[n] = NULL;
	if (check_exec(c, argv, NULL, NULL, 0, REFUSAL_DEADLINE_MS, &p) < 0) {
		check_fail(r, "could not start %s", c->stockade);
	} else {
		/* One line of stderr for the observation. */
		snprintf(err, sizeof(err), "%s", p.err);
		err[strcspn(err, "\n")] = '\0';
		if (p.timed_out)
			check_fail(r, "%s did not end within %d ms", what,
			    REFUSAL_DEADLINE_MS);
		else if (p.status != 2)
			check_fail(r,
			    "%s did not refuse %s: exit %d, stdout "
			    "\"%.80s\", stderr \"%s\"",
			    what, name, p.status, p.out, err);
		else if (p.outlen != 0)
			check_fail(r, "%s exited 2 but printed \"%.80s\"", what,
			    p.out);
		else if (strstr(p.err, name) == NULL &&
		    (alt == NULL || strstr(p.err, alt) == NULL))
			check_fail(r, "%s exited 2 without naming %s: \"%s\"",
			    what, name, err);
		else
			check_pass(r, "%s refused %s, exit 2: \"%s\"", what,
			    name, err);
	}
	check_proc_free(&p);
	unlink(path);
}

/* policy.run_refuses_unsafe_layers_off: `stockade run` without
 * --unsafe-evaluation refuses [jail] unsafe_layers_off (docs/layers.md). */
static void
run_refuses_layers_off(struct check_ctx *c, struct check_result *r)
{
	expect_refused(c, r, "stockade run",
	    ARGS("run", "--json", "--policy", "@POLICY", "--", "true"),
	    "[jail]\nunsafe_layers_off = ipc_uts\n", "unsafe_layers_off",
	    "layers off (ipc_uts)");
}

/* policy.run_refuses_unsafe_no_seccomp: the older switch of the same
 * kind, [jail] unsafe_no_seccomp = true, is refused alike. */
static void
run_refuses_no_seccomp(struct check_ctx *c, struct check_result *r)
{
	expect_refused(c, r, "stockade run",
	    ARGS("run", "--json", "--policy", "@POLICY", "--", "true"),
	    "[jail]\nunsafe_no_seccomp = true\n", "unsafe_no_seccomp",
	    "layers off (seccomp)");
}

/* policy.run_refuses_unsafe_ro_bind: a bind given no
 * Landlock rule ([filesystem] unsafe_ro_bind_no_landlock, for tests of
 * the layers) is an evaluation's too. */
static void
run_refuses_ro_bind_no_landlock(struct check_ctx *c, struct check_result *r)
{
	expect_refused(c, r, "stockade run",
	    ARGS("run", "--json", "--policy", "@POLICY", "--", "true"),
	    "[filesystem]\nro_bind = /usr\n"
	    "unsafe_ro_bind_no_landlock = /etc\n",
	    "unsafe_ro_bind_no_landlock", NULL);
}

/* policy.serve_refuses_unsafe_keys: `stockade serve` refuses every
 * evaluation-only key whatever its arguments (the two layer switches and
 * a bind given no Landlock rule): a session serves an agent, never an
 * evaluation (docs/layers.md). */
static void
serve_refuses_unsafe(struct check_ctx *c, struct check_result *r)
{
	static const struct {
		const char *text, *key, *alt;
	} unsafe[] = {
	    {"[jail]\nunsafe_layers_off = ipc_uts\n", "unsafe_layers_off",
		"layers off (ipc_uts)"},
	    {"[jail]\nunsafe_no_seccomp = true\n", "unsafe_no_seccomp",
		"layers off (seccomp)"},
	    {"[filesystem]\nro_bind = /usr\n"
	     "unsafe_ro_bind_no_landlock = /etc\n",
		"unsafe_ro_bind_no_landlock", NULL},
	};
	char ws[4096];

	if (check_workspace(c, ws, sizeof(ws)) < 0) {
		check_fail(r, "cannot make a workspace");
		return;
	}
	for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++) {
		expect_refused(c, r, "stockade serve",
		    ARGS("serve", "--policy", "@POLICY", "--workspace", ws),
		    unsafe[i].text, unsafe[i].key, unsafe[i].alt);
		if (r->verdict != CHECK_PASS)
			return;
	}
	check_pass(r,
	    "stockade serve refused unsafe_layers_off, "
	    "unsafe_no_seccomp and unsafe_ro_bind_no_landlock, exit 2 "
	    "each");
}

/* policy.run_refuses_unknown_key: a misspelt key is an error
 * ("FILE:LINE: unknown key"), not a default kept silently (README.md,
 * "Policy"). */
static void
run_refuses_unknown_key(struct check_ctx *c, struct check_result *r)
{
	expect_refused(c, r, "stockade run",
	    ARGS("run", "--json", "--policy", "@POLICY", "--", "true"),
	    "[limits]\nmemory_mbb = 64\n", "\"memory_mbb\"", NULL);
}

/* policy.policy_check_refuses_unknown_key: `stockade policy check`
 * refuses the same file. */
static void
check_refuses_unknown_key(struct check_ctx *c, struct check_result *r)
{
	expect_refused(c, r, "stockade policy check",
	    ARGS("policy", "check", "@POLICY"), "[jail]\nno_such_key = 1\n",
	    "\"no_such_key\"", NULL);
}

/* policy.policy_check_refuses_unsafe_keys: `stockade policy check`
 * agrees with `stockade run`: each evaluation-only key is refused
 * naming it, a sound policy is ok, and with --unsafe-evaluation the
 * evaluation's policy is ok. */
static void
check_refuses_unsafe(struct check_ctx *c, struct check_result *r)
{
	static const struct {
		const char *text, *key;
	} unsafe[] = {
	    {"[jail]\nunsafe_layers_off = ipc_uts\n", "unsafe_layers_off"},
	    {"[jail]\nunsafe_no_seccomp = true\n", "unsafe_no_seccomp"},
	    {"[filesystem]\nro_bind = /usr\n"
	     "unsafe_ro_bind_no_landlock = /etc\n",
		"unsafe_ro_bind_no_landlock"},
	};
	const char *argv[6];
	char path[4096];
	struct check_proc p;

	for (size_t i = 0; i < sizeof(unsafe) / sizeof(unsafe[0]); i++) {
		expect_refused(c, r, "stockade policy check",
		    ARGS("policy", "check", "@POLICY"), unsafe[i].text,
		    unsafe[i].key, NULL);
		if (r->verdict != CHECK_PASS)
			return;
	}
	/* The sound policy, and the evaluation's with the option. */
	for (int k = 0; k < 2; k++) {
		const char *text = k == 0 ? "[limits]\nmemory_mb = 512\n"
					  : unsafe[2].text;
		size_t n = 0;

		check_tmpname(c, "policy", path, sizeof(path));
		if (check_write_file(path, text, strlen(text), false, c->root) <
		    0) {
			check_fail(r, "cannot write the policy");
			return;
		}
		argv[n++] = c->stockade;
		argv[n++] = "policy";
		argv[n++] = "check";
		if (k == 1)
			argv[n++] = "--unsafe-evaluation";
		argv[n++] = path;
		argv[n] = NULL;
		if (check_exec(c, argv, NULL, NULL, 0, REFUSAL_DEADLINE_MS,
			&p) < 0 ||
		    p.status != 0) {
			check_fail(r,
			    "stockade policy check%s of %s exited %d: "
			    "%.200s",
			    k == 1 ? " --unsafe-evaluation" : "",
			    k == 0 ? "a sound policy"
				   : "an evaluation's policy",
			    p.status, p.err);
			check_proc_free(&p);
			unlink(path);
			return;
		}
		check_proc_free(&p);
		unlink(path);
	}
	check_pass(r,
	    "stockade policy check refused unsafe_layers_off, "
	    "unsafe_no_seccomp and unsafe_ro_bind_no_landlock (exit 2, "
	    "each named); a sound policy and, with "
	    "--unsafe-evaluation, the evaluation's are ok");
}

/* policy.unsafe_evaluation_reports_layers_off: with --unsafe-evaluation
 * `stockade run` runs a policy switching ipc_uts off, warns on stderr,
 * and the result's layers_off says ["ipc_uts"] (docs/layers.md). */
static void
unsafe_evaluation_reports(struct check_ctx *c, struct check_result *r)
{
	static const char policy[] = "[jail]\nunsafe_layers_off = ipc_uts\n";
	struct check_job_opts o;
	struct check_job j;
	json_t *off;
	const char *first;
	char *shown_off = NULL, why[512];

	memset(&o, 0, sizeof(o));
	o.argv = ARGS("true");
	o.run_args = ARGS("--unsafe-evaluation");
	o.policy = policy;
	o.no_probe = true;
	o.deadline_ms = JOB_DEADLINE_MS;
	check_job_run(c, &o, &j);
	if (j.result == NULL || strcmp(j.status, "ok") != 0) {
		check_fail(r, "the evaluation did not run to ok: %s",
		    check_job_summary(&j, why, sizeof(why)));
		goto out;
	}
	off = json_object_get(j.result, "layers_off");
	shown_off = json_dumps(off, JSON_COMPACT | JSON_ENCODE_ANY);
	first = json_string_value(json_array_get(off, 0));
	if (json_array_size(off) != 1 || first == NULL ||
	    strcmp(first, "ipc_uts") != 0)
		check_fail(r,
		    "status ok with --unsafe-evaluation but "
		    "layers_off is %s, not [\"ipc_uts\"]",
		    shown_off != NULL ? shown_off : "missing");
	else if (strstr(j.proc.err, "WARNING: unsafe evaluation") == NULL)
		check_fail(r,
		    "the job ran with ipc_uts off and no warning on "
		    "stderr: \"%.160s\"",
		    j.proc.err);
	else
		check_pass(r,
		    "ran with --unsafe-evaluation, warned on stderr, "
		    "layers_off [\"ipc_uts\"] in the result");
out:
	free(shown_off);
	check_job_free(&j);
}

const struct check checks_policy[] = {
    {"policy.run_refuses_unsafe_layers_off", "policy",
	"stockade run refuses unsafe_layers_off without --unsafe-evaluation, "
	"exit 2",
	run_refuses_layers_off},
    {"policy.run_refuses_unsafe_no_seccomp", "policy",
	"stockade run refuses unsafe_no_seccomp without --unsafe-evaluation, "
	"exit 2",
	run_refuses_no_seccomp},
    {"policy.run_refuses_unsafe_ro_bind", "policy",
	"stockade run refuses unsafe_ro_bind_no_landlock without "
	"--unsafe-evaluation, exit 2",
	run_refuses_ro_bind_no_landlock},
    {"policy.serve_refuses_unsafe_keys", "policy",
	"stockade serve refuses unsafe_layers_off, unsafe_no_seccomp and "
	"unsafe_ro_bind_no_landlock, exit 2",
	serve_refuses_unsafe},
    {"policy.run_refuses_unknown_key", "policy",
	"stockade run refuses an unknown key, naming it, exit 2",
	run_refuses_unknown_key},
    {"policy.policy_check_refuses_unknown_key", "policy",
	"stockade policy check refuses an unknown key, naming it, exit 2",
	check_refuses_unknown_key},
    {"policy.policy_check_refuses_unsafe_keys", "policy",
	"stockade policy check refuses each unsafe_ key, exit 2; ok with "
	"--unsafe-evaluation",
	check_refuses_unsafe},
    {"policy.unsafe_evaluation_reports_layers_off", "policy",
	"run --unsafe-evaluation warns and the result's layers_off names the "
	"layer",
	unsafe_evaluation_reports},
    {NULL, NULL, NULL, NULL},
};
