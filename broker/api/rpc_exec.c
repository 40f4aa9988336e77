/*
 * rpc_exec.c: the exec method of `stockade serve` (docs/protocol.md):
 * its parameters (argv, the limits below the policy's, standard input
 * inline or as a descriptor, the environment) become a job (jobrun.h)
 * that runs with the workspace at /work, between two snapshots whose
 * difference fs.changes reports. The dispatcher is rpc.c.
 */
#include "rpc_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "fsutil.h"
#include "jobrun.h"
#include "log.h"
#include "workspace.h"

/* The "argv" parameter: a non-empty array of strings without NUL, as a
 * NULL-terminated vector of borrowed strings in *ARGV (freed by the
 * caller). */
static bool
get_argv(struct call *c, char ***argv, int *argc)
{
	json_t *v = json_object_get(c->params, "argv"), *s;
	size_t n = 0, i;

	*argv = NULL;
	*argc = 0;
	if (json_is_array(v))
		n = json_array_size(v);
	if (n == 0 || n > JOB_MAX_ARGS) {
		rpc_bad_param(c, "argv", "expected an array of 1 to %u strings",
		    JOB_MAX_ARGS);
		return false;
	}
	if ((*argv = calloc(n + 1, sizeof(char *))) == NULL) {
		rpc_out_of_memory(c);
		return false;
	}
	json_array_foreach(v, i, s)
	{
		if (!json_is_string(s) ||
		    strlen(json_string_value(s)) != json_string_length(s)) {
			rpc_bad_param(c, "argv",
			    "element %zu is not a string "
			    "without NUL",
			    i);
			return false;
		}
		/* Borrowed: the request keeps the string alive. */
		(*argv)[i] = (char *)(uintptr_t)json_string_value(s);
	}
	*argc = (int)n;
	return true;
}

/* timeout_seconds and memory_mb: at most the policy's limits. */
static bool
get_overrides(struct call *c, struct jobrun_overrides *ov)
{
	const struct job_limits *lim = &c->s->policy->limits;
	json_t *t = json_object_get(c->params, "timeout_seconds");
	uint64_t mb, max_mb = lim->memory_bytes >> 20;
	double v;

	memset(ov, 0, sizeof(*ov));
	if (t != NULL) {
		v = json_is_number(t) ? json_number_value(t) : -1.0;
		if (!(v > 0) || ceil(v * 1000.0) > (double)lim->wall_ms) {
			rpc_bad_param(c, "timeout_seconds",
			    "expected seconds "
			    "above 0 and at most %.3f (the policy's "
			    "wall_time_ms)",
			    (double)lim->wall_ms / 1000.0);
			return false;
		}
		ov->wall_ms = (uint64_t)ceil(v * 1000.0);
	}
	if (!rpc_opt_uint(c, "memory_mb", 0, max_mb < 16 ? max_mb : 16, max_mb,
		&mb))
		return false;
	ov->memory_bytes = mb << 20;
	return true;
}

/*
 * The job's standard input (docs/protocol.md, exec): at most one of
 * "stdin" (a string, its bytes as they are, at most inline_kb),
 * "stdin_b64" (base64, at most inline_kb decoded) or "stdin_fd" (a
 * readable descriptor sent with the request, rpc_get_fd's kinds),
 * streamed to the program (stdin_feed.h). Inline bytes over the limit
 * are refused by name (too_large), never cut: a job must not run on part
 * of its input. *FEED_SET says whether F was set up; *RAW holds decoded
 * base64 (the caller frees it after the job).
 */
static bool
get_stdin(struct call *c, struct stdin_feed *f, bool *feed_set, uint8_t **raw)
{
	static const char *const names[] = {"stdin", "stdin_b64", "stdin_fd"};
	uint64_t limit = c->s->policy->files.inline_bytes;
	const char *given = NULL;
	json_t *v;
	size_t len;
	int fd, e;

	*feed_set = false;
	*raw = NULL;
	for (size_t i = 0; i < 3; i++) {
		if (json_object_get(c->params, names[i]) == NULL)
			continue;
		if (given != NULL) {
			rpc_bad_param(c, names[i],
			    "give one of stdin, stdin_b64 "
			    "and stdin_fd, not %s and %s",
			    given, names[i]);
			return false;
		}
		given = names[i];
	}
	if (given == NULL)
		return true;
	v = json_object_get(c->params, given);
	if (strcmp(given, "stdin_fd") == 0) {
		if (!rpc_get_fd_named(c, "stdin_fd", true, &fd))
			return false;
		if (stdin_feed_init_fd(f, fd) < 0) {
			rpc_out_of_memory(c);
			return false;
		}
		*feed_set = true;
		return true;
	}
	if (!json_is_string(v)) {
		rpc_bad_param(c, given, "expected a %sstring",
		    given[5] == '_' ? "base64 " : "");
		return false;
	}
	len = json_string_length(v);
	if (given[5] == '_') {
		e = rpc_b64_decode(json_string_value(v), len, limit, raw, &len);
		if (e == -ENOMEM) {
			rpc_out_of_memory(c);
			return false;
		}
		if (e == -EINVAL) {
			rpc_bad_param(c, given, "not base64");
			return false;
		}
	} else {
		e = len > limit ? -EFBIG : 0;
	}
	if (e == -EFBIG) {
		rpc_fail(c, RPC_INVALID_PARAMS,
		    json_pack("{s:s,s:s,s:I}", "param", given, "error",
			"too_large", "limit_bytes", (json_int_t)limit),
		    "invalid params: %s: too_large: "
		    "inline standard input is at most %llu bytes (the "
		    "policy's [files] inline_kb); pass a descriptor as "
		    "stdin_fd for more",
		    given, (unsigned long long)limit);
		return false;
	}
	stdin_feed_init_data(f,
	    *raw != NULL ? (const void *)*raw
			 : (const void *)json_string_value(v),
	    len);
	*feed_set = true;
	return true;
}

/*
 * The "env" parameter: an object of variable names and string values,
 * laid over the policy's [environment] (jobrun_set_env) as far as its
 * [jail] client_env allows. A refusal is -32602 with data.param "env",
 * data.error its name (invalid_env_name, invalid_env_value,
 * env_not_allowed, too_many_env) and data.name the variable.
 */
static bool
get_env(struct call *c, struct jobrun *jr)
{
	json_t *o = json_object_get(c->params, "env"), *v;
	enum jobenv_error je;
	const char *name;
	char why[512];
	bool oom;
	int e;

	if (o == NULL)
		return true;
	if (!json_is_object(o)) {
		rpc_bad_param(c, "env",
		    "expected an object of variable names "
		    "and string values");
		return false;
	}
	json_object_foreach(o, name, v)
	{
		if (!json_is_string(v)) {
			rpc_fail(c, RPC_INVALID_PARAMS,
			    json_pack("{s:s,s:s,s:s}", "param", "env", "error",
				"invalid_env_value", "name", name),
			    "invalid params: env: "
			    "invalid_env_value: the value of %.64s is not a "
			    "string",
			    name);
			return false;
		}
		je = jobrun_set_env(jr, c->s->policy, name,
		    json_string_value(v), json_string_length(v), &oom, why,
		    sizeof(why));
		if (oom) {
			rpc_out_of_memory(c);
			return false;
		}
		if (je != JOBENV_OK) {
			rpc_fail(c, RPC_INVALID_PARAMS,
			    json_pack("{s:s,s:s,s:s}", "param", "env", "error",
				jobenv_error_name(je), "name", name),
			    "invalid params: env: %s", why);
			return false;
		}
	}
	if ((e = jobrun_check_fits(jr)) < 0) {
		if (e == -ENOMEM)
			rpc_out_of_memory(c);
		else
			rpc_bad_param(c, "env", "%s",
			    jobrun_spec_error(e, why, sizeof(why)));
		return false;
	}
	return true;
}

/* Refuses the "network" parameter for REASON: -32602 with data.param
 * "network", data.error ERROR and, when RULE is not NULL, data.rule. */
static void
network_refused(struct call *c, const char *error, const char *rule,
    const char *why)
{
	json_t *data = rule != NULL
	    ? json_pack("{s:s,s:s,s:s}", "param", "network", "error", error,
		  "rule", rule)
	    : json_pack("{s:s,s:s}", "param", "network", "error", error);

	rpc_fail(c, RPC_INVALID_PARAMS, data, "invalid params: network: %s: %s",
	    error, why);
}

/*
 * The "network" parameter (rpc_network_rules): the job's own list, which
 * narrows the policy's [network] list and never widens it
 * (jobrun_use_network). Without it, a session with a proxy gives the job
 * the policy's list. Refused with data.error "invalid_network_rule" (a
 * rule that does not parse) or "network_not_allowed" (data.rule: the
 * first rule the policy does not cover; every allow rule, in a session
 * whose policy allows no host).
 */
static bool
get_network(struct call *c, struct jobrun *jr)
{
	json_t *v = json_object_get(c->params, "network");
	struct egress_rules narrow = {0}, none = {0}, out = {0};
	char why[512], rule[EGRESS_RULE_BUF];
	size_t bad = 0;
	int e = 0;

	if (v != NULL &&
	    (e = rpc_network_rules(v, &narrow, why, sizeof(why))) < 0) {
		if (e == -ENOMEM)
			rpc_out_of_memory(c);
		else
			network_refused(c, "invalid_network_rule", NULL, why);
		return false;
	}
	if (c->s->proxy != NULL)
		e = jobrun_use_network(jr, c->s->proxy, &c->s->policy->net,
		    v != NULL ? &narrow : NULL, &bad);
	else if (v != NULL)
		/* No host is allowed: a list may only deny. */
		e = egress_rules_narrow(&none, &narrow, &out, &bad);
	egress_rules_clear(&out);
	if (e == -EPERM) {
		(void)egress_rule_format(&narrow.v[bad], rule, sizeof(rule));
		snprintf(why, sizeof(why),
		    "%s %s is not within the policy's [network] list (a "
		    "job's list may narrow it, never widen it)",
		    egress_rule_kind_name(narrow.v[bad].kind), rule);
		network_refused(c, "network_not_allowed", rule, why);
	} else if (e == -E2BIG) {
		snprintf(why, sizeof(why),
		    "more than %u rules with the "
		    "policy's deny rules",
		    EGRESS_MAX_RULES);
		network_refused(c, "invalid_network_rule", NULL, why);
	} else if (e < 0)
		rpc_out_of_memory(c);
	egress_rules_clear(&narrow);
	return e == 0;
}

/* Puts the workspace directory's permission bits back to the session's
 * (rpc_session.root_mode) when a job changed them; best effort. */
static void
restore_root_mode(struct rpc_session *s)
{
	int e;

	if (s->root_mode >= 0 &&
	    (e = workspace_restore_mode(s->fs.root, (unsigned)s->root_mode)) <
		0)
		log_warn("cannot put back the workspace's mode %04o: %s",
		    (unsigned)s->root_mode, strerror(-e));
}

/*
 * Reads exec's parameters (argv, timeout_seconds and memory_mb, the
 * standard input, env) into JR, FEED, *ARGV and *RAW (the caller frees
 * those two and FEED, which it set up empty). Returns true with JR
 * initialised (the caller frees it with jobrun_free), or false with C's
 * error set and JR freed or never initialised; a session without a
 * launcher is refused last, after every parameter was checked.
 */
static bool
exec_prepare(struct call *c, struct jobrun *jr, struct stdin_feed *feed,
    char ***argv, uint8_t **raw)
{
	static const char *const names[] = {"argv", "timeout_seconds",
	    "memory_mb", "stdin", "stdin_b64", "stdin_fd", "env", "network",
	    "commit", NULL};
	struct jobrun_overrides ov;
	char err[256];
	bool has_stdin;
	int argc, e;

	if (!rpc_known_params(c, names) || !get_argv(c, argv, &argc) ||
	    !get_overrides(c, &ov) || !get_stdin(c, feed, &has_stdin, raw))
		return false;
	if ((e = jobrun_init(jr, c->s->policy, argc, *argv, &ov)) < 0) {
		if (e == -ENOMEM) {
			rpc_out_of_memory(c);
			return false;
		}
		rpc_bad_param(c, "argv", "%s",
		    jobrun_spec_error(e, err, sizeof(err)));
		return false;
	}
	if (!get_env(c, jr) || !get_network(c, jr) ||
	    !rpc_exec_stage_begin(c, jr)) {
		jobrun_free(jr);
		return false;
	}
	if (has_stdin)
		jr->feed = feed;
	if (c->s->sup == NULL) {
		jobrun_free(jr);
		rpc_fail(c, RPC_JOB_ERROR, NULL, "no launcher in this session");
		return false;
	}
	return true;
}

/*
 * Runs the job JR (exec_prepare's; it stays the caller's): its writes go
 * to a stage (issue 26), and its change set, read, held back and
 * committed or kept by jobrun_exec (jobrun_settle), becomes the
 * session's newest (fs.changes). No walk of the workspace happens here.
 * Interrupted before the job (-EINTR), nothing runs and the session ends
 * after this answer (serve.c). Returns the job's result object, or NULL
 * with C's error set when the job could not run.
 */
static json_t *
exec_run(struct call *c, struct jobrun *jr)
{
	struct rpc_session *s = c->s;
	json_t *r;
	int e;

	e = jobrun_exec(jr, s->sup, &s->fs, false);
	restore_root_mode(s);
	if (e < 0)
		return rpc_fail(c, RPC_JOB_ERROR, NULL, "%s",
		    jr->res.detail ? jr->res.detail : strerror(-e));
	r = jobrun_result_json(jr);
	rpc_exec_stage_end(s, jr);
	return r != NULL ? r : rpc_out_of_memory(c);
}

/*
 * exec: the job runs with the workspace at /work, its writes staged and
 * then committed, rolled back or kept (the "commit" parameter, the
 * policy's [files] commit); fs.changes reports its change set.
 */
json_t *
rpc_exec(struct call *c, struct rawpath *p)
{
	struct jobrun jr;
	struct stdin_feed feed;
	_cleanup_free_ char **argv = NULL;
	_cleanup_free_ uint8_t *raw = NULL;
	json_t *r;

	(void)p;
	stdin_feed_init_data(&feed, "", 0);
	if (!exec_prepare(c, &jr, &feed, &argv, &raw)) {
		stdin_feed_free(&feed);
		return NULL;
	}
	r = exec_run(c, &jr);
	jobrun_free(&jr);
	stdin_feed_free(&feed);
	return r;
}
