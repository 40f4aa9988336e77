/*
 * check_jail.c: the checks of the jail's layers (check.h): limits,
 * process cleanup, environment, working directory, the namespaces,
 * terminal, capabilities, no_new_privs and Landlock. Each runs
 * stockade-probe in a real job and compares what it saw with what a
 * sound jail shows.
 */
#include <string.h>

#include "check.h"

/* user_ns.setgroups_denied: /proc/self/setgroups says "deny", so the
 * payload cannot drop a group to reach what it denies
 * (user_namespaces(7), CVE-2014-8989). */
static void
setgroups_denied(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[256], why[512];

	if (check_probe(c, &j, "setgroups", (char *)NULL) < 0 ||
	    !check_value(&j, "setgroups", v, sizeof(v)))
		check_fail(r, "no observation: %s",
			   check_job_summary(&j, why, sizeof(why)));
	else if (strcmp(v, "deny") == 0)
		check_pass(r, "/proc/self/setgroups says \"deny\"");
	else
		check_fail(r, "/proc/self/setgroups says \"%s\"", v);
	check_job_free(&j);
}

/* no_new_privs.set: NoNewPrivs is 1 in /proc/self/status. */
static void
nnp_set(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[256], why[512];

	if (check_probe(c, &j, "status", (char *)NULL) < 0 ||
	    !check_value(&j, "status.NoNewPrivs", v, sizeof(v)))
		check_fail(r, "no observation: %s",
			   check_job_summary(&j, why, sizeof(why)));
	else if (strcmp(v, "1") == 0)
		check_pass(r, "NoNewPrivs is 1 in /proc/self/status");
	else
		check_fail(r, "NoNewPrivs is %s in /proc/self/status", v);
	check_job_free(&j);
}

const struct check checks_jail[] = {
	{"user_ns.setgroups_denied", "user_ns",
	 "/proc/self/setgroups says \"deny\"", setgroups_denied},
	{"no_new_privs.set", "no_new_privs",
	 "NoNewPrivs is 1 in /proc/self/status", nnp_set},
	{NULL, NULL, NULL, NULL},
};
