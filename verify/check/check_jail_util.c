/*
 * check_jail_util.c: what the checks of the jail's layers share
 * (check_jail.h): running stockade-probe in a job and reading back what it
 * printed, the default policy's sections, and the namespace comparison.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_jail.h"

const struct pj jail_plain;

/*
 * Runs the probe with ARGV (NULL-terminated) in a job as S says, into J
 * (always initialised: free it with check_job_free). True when the job
 * ended with S's status; otherwise fails R saying what came instead.
 */
bool
jail_probe_ok(struct check_ctx *c, struct check_result *r, struct check_job *j,
    const struct pj *s, const char *const *argv)
{
	const char *full[32];
	const char *want = s->status != NULL ? s->status : "ok";
	struct check_job_opts o;
	char why[512];
	size_t n = 0;
	int e;

	memset(j, 0, sizeof(*j));
	j->status = j->out = j->err = "";
	full[n++] = JAIL_PROBE;
	for (size_t i = 0; argv[i] != NULL && n < 31; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	memset(&o, 0, sizeof(o));
	o.argv = full;
	o.run_args = s->run_args;
	o.policy = s->policy;
	o.workspace = s->workspace;
	o.extra_env = s->extra_env;
	o.deadline_ms = s->deadline_ms > 0 ? s->deadline_ms
					   : JAIL_JOB_DEADLINE_MS;
	if ((e = check_job_run(c, &o, j)) < 0) {
		check_fail(r, "cannot run stockade: %s", strerror(-e));
		return false;
	}
	if (j->result == NULL || strcmp(j->status, want) != 0) {
		check_fail(r, "the probe's job did not end \"%s\": %s", want,
		    check_job_summary(j, why, sizeof(why)));
		return false;
	}
	return true;
}

/* KEY of the probe's output into BUF; when missing, fails R and returns
 * false. */
bool
jail_val(struct check_result *r, const struct check_job *j, const char *key,
    char *buf, size_t len)
{
	char why[512];

	if (check_value(j, key, buf, len))
		return true;
	check_fail(r, "the probe printed no %s: %s", key,
	    check_job_summary(j, why, sizeof(why)));
	return false;
}

/* The integer LIMIT of the result's "limits" object, or -1. */
json_int_t
jail_job_limit(const struct check_job *j, const char *limit)
{
	json_t *v = json_object_get(json_object_get(j->result, "limits"),
	    limit);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* True when the comma-separated LIST holds ITEM. */
bool
jail_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p != NULL && *p != '\0';) {
		const char *comma = strchr(p, ',');
		size_t l = comma != NULL ? (size_t)(comma - p) : strlen(p);

		if (l == n && strncmp(p, item, n) == 0)
			return true;
		p = comma != NULL ? comma + 1 : NULL;
	}
	return false;
}

/*
 * The entries of section SECTION ("environment", "filesystem") of the
 * embedded default policy (`stockade policy default`), as "NAME=value"
 * lines without blanks around the "=", into BUF. Returns 0 or a negative
 * errno (-EPROTO when the command failed).
 */
int
jail_default_section(struct check_ctx *c, const char *section, char *buf,
    size_t len)
{
	const char *const argv[] = {c->stockade, "policy", "default", NULL};
	struct check_proc p;
	char head[64];
	bool in = false;
	size_t n = 0;
	int e;

	buf[0] = '\0';
	e = check_exec(c, argv, NULL, NULL, 0, JAIL_JOB_DEADLINE_MS, &p);
	if (e < 0)
		return e;
	if (p.status != 0) {
		check_proc_free(&p);
		return -EPROTO;
	}
	snprintf(head, sizeof(head), "[%s]", section);
	for (char *line = strtok(p.out, "\n"); line != NULL;
	     line = strtok(NULL, "\n")) {
		char *eq, *k, *v, *end;

		if (line[0] == '[') {
			in = strcmp(line, head) == 0;
			continue;
		}
		if (!in || line[0] == '#' || (eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		k = line + strspn(line, " \t");
		for (end = eq; end > k && (end[-1] == ' ' || end[-1] == '\t');)
			*--end = '\0';
		v = eq + 1 + strspn(eq + 1, " \t");
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s=%s\n",
		    k, v);
		if (n >= len) {
			check_proc_free(&p);
			return -ENAMETOOLONG;
		}
	}
	check_proc_free(&p);
	return 0;
}

/* The default policy's [jail] home into BUF. Returns 0 or a negative
 * errno (-ENOENT when it names none). */
int
jail_default_home(struct check_ctx *c, char *buf, size_t len)
{
	char jail[4096];
	int e = jail_default_section(c, "jail", jail, sizeof(jail));

	if (e < 0)
		return e;
	for (char *line = strtok(jail, "\n"); line != NULL;
	     line = strtok(NULL, "\n"))
		if (strncmp(line, "home=", 5) == 0 && line[5] == '/') {
			snprintf(buf, len, "%s", line + 5);
			return 0;
		}
	return -ENOENT;
}

/* namespaces(7): two processes share a namespace exactly when their
 * /proc/PID/ns/NAME links read alike. NS: "user", "pid", ... */
void
jail_own_namespace(struct check_ctx *c, struct check_result *r, const char *ns)
{
	struct check_job j;
	char path[64], key[32], mine[128], theirs[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	n = readlink(path, mine, sizeof(mine) - 1);
	if (n < 0) {
		check_fail(r, "cannot read our own %s: %s", path,
		    strerror(errno));
		return;
	}
	mine[n] = '\0';
	snprintf(key, sizeof(key), "ns.%s", ns);
	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("ns")) &&
	    jail_val(r, &j, key, theirs, sizeof(theirs))) {
		if (strcmp(mine, theirs) == 0)
			check_fail(r,
			    "the job's %s namespace is the caller's "
			    "own, %s",
			    ns, theirs);
		else
			check_pass(r,
			    "the job's %s namespace is %s, the "
			    "caller's %s",
			    ns, theirs, mine);
	}
	check_job_free(&j);
}
