/*
 * check_results_util.c: the helpers of the results layer's checks
 * (check_results.h): one probe job, and its result's fields read and
 * compared, failing the check with what came instead.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "check_results.h"

/*
 * Runs ./stockade-probe ARGV[0] ARGV[1]... in a `stockade run --json` job
 * with RUN_ARGS (may be NULL) and POLICY (NULL: the embedded default).
 */
int
res_probe_job_within(struct check_ctx *c, struct check_job *j,
    const char *policy, const char *const *run_args, const char *const *argv,
    int deadline_ms)
{
	const char *full[16];
	struct check_job_opts o;
	size_t n = 0;

	full[n++] = "./stockade-probe";
	for (size_t i = 0; argv[i] != NULL && n < 15; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	memset(&o, 0, sizeof(o));
	o.argv = full;
	o.run_args = run_args;
	o.policy = policy;
	o.deadline_ms = deadline_ms;
	return check_job_run(c, &o, j);
}

int
res_probe_job(struct check_ctx *c, struct check_job *j, const char *policy,
    const char *const *run_args, const char *const *argv)
{
	return res_probe_job_within(c, j, policy, run_args, argv,
	    JOB_DEADLINE_MS);
}

json_t *
res_field(const struct check_job *j, const char *key)
{
	return json_object_get(j->result, key);
}

/* FIELD KEY of J's result as text: its integer, its string quoted,
 * "null", or "missing", into BUF. Returns BUF. */
const char *
res_shown(const struct check_job *j, const char *key, char *buf, size_t len)
{
	json_t *v = res_field(j, key);

	if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, len, "\"%s\"", json_string_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else if (json_is_null(v))
		snprintf(buf, len, "null");
	else
		snprintf(buf, len, "missing");
	return buf;
}

/* True when KEY of J's result is the integer WANT. */
bool
res_int_is(const struct check_job *j, const char *key, json_int_t want)
{
	json_t *v = res_field(j, key);

	return json_is_integer(v) && json_integer_value(v) == want;
}

/* KEY of J's result as a string, or "" when it is not one. */
const char *
res_str_of(const struct check_job *j, const char *key)
{
	const char *s = json_string_value(res_field(j, key));

	return s != NULL ? s : "";
}

/*
 * True when J gave a result of status WANT; otherwise fails R saying what
 * came instead (no result, or the status with its exit code, signal and
 * detail).
 */
bool
res_status_is(const struct check_job *j, const char *want,
    struct check_result *r)
{
	char why[512], ec[32], sig[32];

	if (j->result == NULL) {
		check_fail(r, "no result: %s",
		    check_job_summary(j, why, sizeof(why)));
		return false;
	}
	if (strcmp(j->status, want) == 0)
		return true;
	check_fail(r,
	    "status \"%s\", not \"%s\" (exit_code %s, signal %s, "
	    "detail \"%.160s\", stockade exit %d)",
	    j->status, want, res_shown(j, "exit_code", ec, sizeof(ec)),
	    res_shown(j, "signal", sig, sizeof(sig)), res_str_of(j, "detail"),
	    j->proc.status);
	return false;
}

/*
 * True when J's hint is not empty and contains NEED (NULL: anything);
 * otherwise fails R quoting it. Every result carries a hint for the
 * model that names the figure against the limit (result.h, job_hint).
 */
bool
res_hint_names(const struct check_job *j, const char *status, const char *need,
    struct check_result *r)
{
	const char *h = res_str_of(j, "hint");

	if (h[0] == '\0') {
		check_fail(r, "status %s but the hint is empty or missing",
		    status);
		return false;
	}
	if (need != NULL && strstr(h, need) == NULL) {
		check_fail(r,
		    "status %s but the hint does not name %s: "
		    "\"%.200s\"",
		    status, need, h);
		return false;
	}
	return true;
}

/* True when `stockade run` exited WANT (README.md, "Exit status");
 * otherwise fails R. */
bool
res_exit_is(const struct check_job *j, const char *status, int want,
    struct check_result *r)
{
	if (j->proc.status == want)
		return true;
	check_fail(r, "status %s but stockade run exited %d, not %d", status,
	    j->proc.status, want);
	return false;
}