/*
 * check_broker_side.c: the boundary checks of `stockade check` (check.h)
 * on the broker's side of the broker <-> launcher protocol
 * (shared/proto.h): what the broker does with a launcher that breaks it
 * or dies, and what becomes of a jail whose broker dies. The launcher's
 * side is check_boundary.c.
 *
 * A hostile launcher: a copy of the stockade under test, beside a copy
 * of stockade-probe named stockade-launcher (probe_boundary.c,
 * "--ipc-fd"), runs a job on it. A death: the real `stockade run` has
 * its real launcher, or is itself, killed with SIGKILL in the middle of
 * a job (check_boundary_proc.c starts it in the background). The
 * broker's death is check_broker_death.c (its entry is in this file's
 * table).
 *
 * Each job has a deadline of a few seconds, so that a defect that hangs
 * costs seconds; every child started is reaped, and what a defect leaves
 * running is killed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "check_boundary.h"
#include "proto.h"

/* mark-then-mark's sleep between its two files, ms, in the check of a
 * launcher killed mid-job. */
#define LATE_MS 3000
/* How soon after its launcher's death a job must end as sandbox_error. */
#define DEATH_NOTICE_MS 2000

/* ---- a hostile launcher ------------------------------------------------- */

/* Copies the file FROM to TO (mode 0755). Returns 0 or a negative errno. */
static int
copy_exe(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out, e = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0) {
		e = -errno;
		close(in);
		return e;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(out, buf, (size_t)n) != n) {
			e = n < 0 ? -errno : -EIO;
			break;
		}
	}
	close(in);
	if (close(out) < 0 && e == 0)
		e = -errno;
	return e;
}

/*
 * The hostile installation, made once per run under C's tmpdir: DIR/
 * stockade, a copy of the stockade under test, and DIR/stockade-launcher,
 * a copy of the probe, whose mode is DIR/fake-launcher.mode. The broker
 * finds its launcher beside itself (supervisor_init). Writes DIR into
 * BUF. Returns 0 or a negative errno.
 */
static int
fake_install(struct check_ctx *c, char *buf, size_t len)
{
	static char made_for[4096];
	char path[4200];
	int e;

	strlcpy(buf, c->tmpdir, len);
	strlcat(buf, "/boundary-fake", len);
	if (strcmp(made_for, c->tmpdir) == 0)
		return 0;
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/stockade", buf);
	if ((e = copy_exe(c->stockade, path)) < 0 && e != -EEXIST)
		return e;
	snprintf(path, sizeof(path), "%s/stockade-launcher", buf);
	if ((e = copy_exe(c->probe, path)) < 0 && e != -EEXIST)
		return e;
	snprintf(made_for, sizeof(made_for), "%s", c->tmpdir);
	return 0;
}

/* What a job on the fake launcher gave. */
struct fake_job {
	struct check_proc proc;
	json_t *result;
	const char *status, *detail, *out;
};

/*
 * Runs `stockade run --json -- fake-job` of the hostile installation with
 * its launcher in MODE (probe_boundary.c). Returns 0 when stockade ran
 * (J->result may still be NULL), else writes why into R.
 */
static int
fake_run(struct check_ctx *c, const char *mode, struct fake_job *j,
    struct check_result *r)
{
	char dir[4096], exe[4200], mf[4200];
	int e;

	memset(j, 0, sizeof(*j));
	j->status = j->detail = j->out = "";
	if ((e = fake_install(c, dir, sizeof(dir))) < 0) {
		check_fail(r,
		    "cannot make the hostile installation under %s: "
		    "%s",
		    c->tmpdir, strerror(-e));
		return -1;
	}
	snprintf(exe, sizeof(exe), "%s/stockade", dir);
	snprintf(mf, sizeof(mf), "%s/fake-launcher.mode", dir);
	if ((e = check_write_file(mf, mode, strlen(mode), false, c->root)) <
	    0) {
		check_fail(r, "cannot write %s: %s", mf, strerror(-e));
		return -1;
	}
	const char *argv[] = {exe, "run", "--json", "--", "fake-job", NULL};
	if ((e = check_exec(c, argv, NULL, NULL, 0, 5000, &j->proc)) < 0) {
		check_fail(r, "cannot run %s: %s", exe, strerror(-e));
		check_proc_free(&j->proc);
		return -1;
	}
	j->result = json_loads(j->proc.out, 0, NULL);
	if (j->result != NULL) {
		const char *v;

		if ((v = json_string_value(
			 json_object_get(j->result, "status"))))
			j->status = v;
		if ((v = json_string_value(
			 json_object_get(j->result, "detail"))))
			j->detail = v;
		if ((v = json_string_value(
			 json_object_get(j->result, "stdout"))))
			j->out = v;
	}
	return 0;
}

static void
fake_free(struct fake_job *j)
{
	json_decref(j->result);
	check_proc_free(&j->proc);
}

/* "exit N, stderr: ..." of a fake job without a result. */
static const char *
fake_summary(const struct fake_job *j, char *buf, size_t len)
{
	size_t n = j->proc.errlen;

	while (n > 0 && j->proc.err[n - 1] == '\n')
		n--;
	snprintf(buf, len,
	    "stockade exit %d%s, status \"%s\", detail \"%s\", "
	    "stderr: %.*s",
	    j->proc.status,
	    j->proc.timed_out ? " (killed at its deadline)" : "", j->status,
	    j->detail, (int)(n > 200 ? 200 : n),
	    j->proc.err + (n > 200 ? n - 200 : 0));
	return buf;
}

/* boundary.launcher_descriptor_refused_by_broker: the launcher sends
 * OUTPUT "a", then OUTPUT "b" carrying a descriptor of the host's /, then
 * RESULT ok. The broker must close it and end the job as sandbox_error
 * (proto.h: the launcher's messages carry no descriptor; a descriptor
 * kept is a way out for a compromised launcher). */
/*
 * One job on the hostile launcher in MODE, which logs SENT on its stderr
 * once it did its mistake (WHAT, for the observation). A sound broker
 * ends the job as sandbox_error naming the protocol, its detail starting
 * with DETAIL, with exactly OUT as the job's stdout (what the launcher
 * sent before the mistake).
 */
static void
hostile_launcher(struct check_ctx *c, struct check_result *r, const char *mode,
    const char *sent, const char *detail, const char *out, const char *what)
{
	struct fake_job j;
	char why[400];

	if (fake_run(c, mode, &j, r) < 0)
		return;
	if (strstr(j.proc.err, sent) == NULL)
		check_fail(r, "the hostile launcher did not get to send %s: %s",
		    what, fake_summary(&j, why, sizeof(why)));
	else if (strcmp(j.status, "sandbox_error") == 0 &&
	    strstr(j.detail, "protocol") != NULL &&
	    strncmp(j.detail, detail, strlen(detail)) == 0 &&
	    strcmp(j.out, out) == 0)
		check_pass(r,
		    "after %s: sandbox_error \"%s\", stdout \"%s\" "
		    "(what came before)",
		    what, j.detail, j.out);
	else if (j.result == NULL)
		check_fail(r, "no result after %s: %s", what,
		    fake_summary(&j, why, sizeof(why)));
	else
		check_fail(r,
		    "status %s, stdout \"%s\", detail \"%s\": the "
		    "broker took %s",
		    j.status, j.out, j.detail, what);
	fake_free(&j);
}

/* boundary.launcher_descriptor_refused_by_broker: the launcher sends
 * OUTPUT "a", then OUTPUT "b" carrying a descriptor of the host's /, then
 * RESULT ok. The broker must close it and end the job as sandbox_error
 * (proto.h: the launcher's messages carry no descriptor; a descriptor
 * kept is a way out for a compromised launcher). */
static void
broker_refuses_fd(struct check_ctx *c, struct check_result *r)
{
	hostile_launcher(c, r, "smuggle-fd", "sends OUTPUT with a descriptor",
	    "", "a", "an OUTPUT carrying a descriptor of /");
}

/* boundary.wrong_version_reply_refused_by_broker: the launcher answers
 * HELLO with PROTO_VERSION - 1 and would run the job all the same; the
 * broker must not start it (proto.h: the same version or the session
 * ends). */
static void
broker_refuses_version(struct check_ctx *c, struct check_result *r)
{
	hostile_launcher(c, r, "wrong-version", "HELLO_REPLY with version",
	    "cannot start the launcher", "",
	    "a HELLO_REPLY of the previous protocol version");
}

/* boundary.foreign_job_result_refused: the launcher sends OUTPUT "a" and
 * then a RESULT ok for the next job id, not the running one (broker/
 * supervisor.c phase table: OUTPUT and RESULT of this job's id only). */
static void
broker_refuses_foreign_result(struct check_ctx *c, struct check_result *r)
{
	hostile_launcher(c, r, "foreign-result", "RESULT for job", "", "a",
	    "a RESULT for job 2 while job 1 runs");
}

/* ---- a launcher that dies ---------------------------------------------- */

/*
 * Starts launcher_death's job into B: a real `stockade run --json` in
 * the workspace WS whose probe makes "started", sleeps LATE_MS and makes
 * MARK; returns once the probe runs (its command line holds MARK: a
 * job's files are staged until it ends, issue 26). Returns false when it
 * could not start or never did within 5 s (R failed, B ended).
 */
static bool
start_marked_job(struct check_ctx *c, struct check_result *r, const char *ws,
    const char *mark, struct bgrun *b)
{
	char put[4200], ms[16];
	int64_t t0;
	int e;

	snprintf(put, sizeof(put), "%s:stockade-probe", c->probe);
	snprintf(ms, sizeof(ms), "%d", LATE_MS);
	const char *argv[] = {c->stockade, "run", "--json", "--workspace", ws,
	    "--put", put, "--", "./stockade-probe", "mark-then-mark", "started",
	    ms, mark, NULL};
	if ((e = bgrun_start(c, argv, b)) < 0) {
		check_fail(r, "cannot run %s: %s", c->stockade, strerror(-e));
		return false;
	}
	t0 = check_now_ms();
	/* The job under way: its probe runs, MARK LATE_MS away. */
	while (!check_marked_process(mark)) {
		if (bgrun_poll(b, 5) || check_now_ms() - t0 > 5000) {
			bgrun_end(b);
			check_fail(r,
			    "the job never started (stockade exit %d, "
			    "stdout %.150s, stderr %.150s)",
			    b->status, b->obuf, b->ebuf);
			return false;
		}
	}
	return true;
}

/* Waits for the run B, killed into at T_KILL, to end, at most
 * DEATH_NOTICE_MS + 1 s; reaps it. Returns when it ended (ms), or 0. */
static int64_t
await_end(struct bgrun *b, int64_t t_kill)
{
	int64_t t_end = 0;

	while (!bgrun_poll(b, 10))
		if (check_now_ms() - t_kill > DEATH_NOTICE_MS + 1000)
			break;
	if (b->pid == 0)
		t_end = check_now_ms();
	bgrun_end(b);
	return t_end;
}

/*
 * boundary.launcher_death_ends_job: a real `stockade run` whose job's
 * probe sleeps LATE_MS; once it runs, its launcher (the child of
 * stockade run) is killed with SIGKILL. The job must end as
 * sandbox_error naming the launcher's death within DEATH_NOTICE_MS, and
 * the jail with it: its probe (found by a mark in its command line) no
 * longer runs once the result is in (proto.h, supervisor.h: a launcher that dies is a
 * sandbox_error; PR_SET_PDEATHSIG, prctl(2)).
 */
static void
launcher_death(struct check_ctx *c, struct check_result *r)
{
	char ws[4096], comm[64] = "", why[300], mark[64];
	struct bgrun b;
	json_t *res = NULL;
	const char *status = "", *detail = "";
	int64_t t_kill, t_end;
	pid_t launcher = 0;
	int wsfd = -1, e;

	if ((e = check_workspace(c, ws, sizeof(ws))) < 0 ||
	    (wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		check_fail(r, "cannot make a workspace: %s",
		    strerror(e < 0 ? -e : errno));
		return;
	}
	snprintf(mark, sizeof(mark), "late-%d-%lld", (int)getpid(),
	    (long long)check_now_ms());
	if (!start_marked_job(c, r, ws, mark, &b)) {
		close(wsfd);
		return;
	}
	launcher = boundary_find_child(b.pid, comm, sizeof(comm));
	if (launcher <= 0) {
		bgrun_end(&b);
		check_fail(r,
		    "stockade run (pid %d) has no child in /proc: "
		    "no launcher to kill",
		    (int)b.pid);
		close(wsfd);
		return;
	}
	kill(launcher, SIGKILL);
	t_kill = check_now_ms();
	t_end = await_end(&b, t_kill);
	/* A jail that outlived its launcher: its probe still sleeps. */
	usleep(100000);
	if ((res = json_loads(b.obuf, 0, NULL)) != NULL) {
		const char *v;

		if ((v = json_string_value(json_object_get(res, "status"))))
			status = v;
		if ((v = json_string_value(json_object_get(res, "detail"))))
			detail = v;
	}
	snprintf(why, sizeof(why),
	    "after the launcher (pid %d, %s) was "
	    "killed mid-job",
	    (int)launcher, comm);
	if (t_end == 0)
		check_fail(r,
		    "no result within %d ms %s: its death went "
		    "unnoticed",
		    DEATH_NOTICE_MS + 1000, why);
	else if (check_marked_process(mark))
		check_fail(r,
		    "the job's probe still ran %lld ms after its result, "
		    "%s: the jail outlived its launcher",
		    (long long)(check_now_ms() - t_end), why);
	else if (strcmp(status, "sandbox_error") != 0 ||
	    strstr(detail, "launcher") == NULL ||
	    strstr(detail, "died") == NULL)
		check_fail(r,
		    "status \"%s\", detail \"%s\" %s (stockade exit "
		    "%d)",
		    status, detail, why, b.status);
	else if (t_end - t_kill > DEATH_NOTICE_MS)
		check_fail(r, "sandbox_error only %lld ms %s",
		    (long long)(t_end - t_kill), why);
	else
		check_pass(r,
		    "sandbox_error \"%s\" %lld ms %s; the job's "
		    "probe gone with it",
		    detail, (long long)(t_end - t_kill), why);
	json_decref(res);
	close(wsfd);
}

const struct check checks_broker_side[] = {
    {"boundary.launcher_descriptor_refused_by_broker", "boundary",
	"a descriptor sent by the launcher ends the job as sandbox_error",
	broker_refuses_fd},
    {"boundary.wrong_version_reply_refused_by_broker", "boundary",
	"a launcher answering another protocol version runs no job",
	broker_refuses_version},
    {"boundary.foreign_job_result_refused", "boundary",
	"a RESULT for another job id ends the job as sandbox_error",
	broker_refuses_foreign_result},
    {"boundary.launcher_death_ends_job", "boundary",
	"a launcher killed mid-job: sandbox_error naming its death within "
	"2 s, and the job's processes gone",
	launcher_death},
    {"boundary.broker_death_kills_jail", "boundary",
	"a broker killed mid-job: within 1 s no process under it remains "
	"and the job's heartbeat has stopped",
	boundary_broker_death},
    {NULL, NULL, NULL, NULL},
};
