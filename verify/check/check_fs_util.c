/*
 * check_fs_util.c: what the file_api checks of `stockade check` share
 * (check_fs.h): a host file to copy in, the size of a workspace entry,
 * a job run through `stockade run` and its line for a verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "check_fs.h"

/* A host file (the invoking user's) with LEN bytes of FILL, at PATH. */
bool
fsc_host_file(struct check_ctx *c, struct check_result *r, char *path,
    size_t plen, size_t len, int fill)
{
	char *buf = malloc(len + 1);
	int e = -ENOMEM;

	check_tmpname(c, "host", path, plen);
	if (buf != NULL) {
		memset(buf, fill, len);
		e = check_write_file(path, buf, len, false, c->root);
		free(buf);
	}
	if (e < 0)
		check_fail(r, "cannot make the host file %s: %s", path,
		    strerror(-e));
	return e == 0;
}

/* The size and type of REL in S's workspace (lstat); -1 size when it is
 * missing. */
long long
fsc_ws_size(const struct scene *s, const char *rel, mode_t *type)
{
	char p[4400];
	struct stat st;

	if (lstat(fsc_in_ws(s, rel, p, sizeof(p)), &st) < 0) {
		*type = 0;
		return -1;
	}
	*type = st.st_mode & S_IFMT;
	return (long long)st.st_size;
}

/* Runs the job ARGV in S's workspace with RUN_ARGS (no probe, the
 * default policy, FSC_DEADLINE_MS) into J. Returns 0 or fails R. */
int
fsc_run_job(const struct scene *s, struct check_result *r,
    const char *const *argv, const char *const *run_args, struct check_job *j)
{
	struct check_job_opts o;

	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.run_args = run_args;
	o.workspace = s->ws;
	o.no_probe = true;
	o.deadline_ms = FSC_DEADLINE_MS;
	if (check_job_run(s->c, &o, j) < 0) {
		check_fail(r, "stockade run could not be started");
		check_job_free(j);
		return -1;
	}
	return 0;
}

/* How the job J ended, for an observation: "hung: ..." or "stockade
 * exit N, status S: <first error line>". Returns BUF. */
const char *
fsc_job_line(const struct check_job *j, char *buf, size_t len)
{
	char line[400];

	if (j->proc.timed_out)
		snprintf(buf, len, "hung: killed after %lld ms",
		    (long long)j->proc.elapsed_ms);
	else
		snprintf(buf, len, "stockade exit %d, status \"%s\": %s",
		    j->proc.status, j->status,
		    fsc_error_line(&j->proc, line, sizeof(line)));
	return buf;
}
