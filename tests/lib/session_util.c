/* session_util.c: session_util.h. */
#include "session_util.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jobspec.h"

void
on_output(void *arg, int stream, const uint8_t *data, size_t len)
{
	struct captured *c = arg;
	size_t room;

	cr_assert(stream == 1 || stream == 2, "stream %d", stream);
	room = sizeof(c->data[stream]) - 1 - c->len[stream];
	if (len > room)
		len = room;
	memcpy(c->data[stream] + c->len[stream], data, len);
	c->len[stream] += len;
	c->data[stream][c->len[stream]] = '\0';
	if (c->kill_on_output != NULL && c->kill_on_output->pid > 0) {
		cr_assert_eq(kill(c->kill_on_output->pid, SIGKILL), 0);
		c->kill_on_output = NULL;
	}
}

/* Entries of directory PATH, "." and ".." excluded. */
int
count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d, "opendir %s: %s", path, strerror(errno));
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

int
count_lines(const char *path)
{
	char *text = harness_read_file(path, NULL);
	int n = 0;

	cr_assert_not_null(text, "%s: %s", path, strerror(errno));
	for (const char *p = text; *p; p++)
		n += *p == '\n';
	free(text);
	return n;
}

int
launcher_fds(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	return count_entries(path);
}

/* "FD->TARGET ..." for each descriptor of PID, for messages. */
char *
launcher_fd_list(pid_t pid)
{
	char dir[64], *list = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&list, &len);
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	cr_assert(f != NULL && d != NULL);
	while ((de = readdir(d)) != NULL) {
		char path[320], target[256];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		fprintf(f, "%s->%s ", de->d_name, target);
	}
	closedir(d);
	fclose(f);
	return list;
}

/* The launcher's children, as the kernel lists them ("" when none). */
char *
launcher_children(pid_t pid)
{
	char path[80], *text;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	text = harness_read_file(path, NULL);
	cr_assert_not_null(text, "%s: %s", path, strerror(errno));
	return text;
}

/* Whether /proc/PID/status has the line LINE ("Seccomp:\t2"). */
void
assert_status_line(pid_t pid, const char *line)
{
	char path[64], want[64], *st;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = harness_read_file(path, NULL);
	cr_assert_not_null(st, "%s: %s", path, strerror(errno));
	snprintf(want, sizeof(want), "\n%s\n", line);
	cr_assert_not_null(strstr(st, want), "pid %d has no \"%s\": %s",
	    (int)pid, line, st);
	free(st);
}

void
session_open(struct session *ss)
{
	char err[POLICY_ERR_MAX + 256];

	memset(&ss->pol, 0, sizeof(ss->pol));
	cr_assert_eq(policy_load_default(&ss->pol, err, sizeof(err)), 0, "%s",
	    err);
	cr_assert_eq(supervisor_init_path(&ss->sup, harness_launcher(), err,
			 sizeof(err)),
	    0, "%s", err);
	ss->wsfd = open(harness_workspace(),
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(ss->wsfd, 0);
}

void
session_close(struct session *ss)
{
	supervisor_free(&ss->sup);
	policy_clear(&ss->pol);
	close(ss->wsfd);
}

/*
 * Runs ARGV (NULL-terminated) as one job with a wall-clock limit of
 * WALL_MS (0: the policy's); fills RES and C.
 */
void
run_job(struct session *ss, char **argv, uint64_t wall_ms, struct captured *c,
    struct job_result *res)
{
	struct job_spec spec;
	int argc = 0, e;

	while (argv[argc] != NULL)
		argc++;
	memset(&spec, 0, sizeof(spec));
	cr_assert_eq(jobspec_from_policy(&spec, &ss->pol, argc, argv), 0);
	if (wall_ms != 0)
		spec.limits.wall_ms = wall_ms;
	e = supervisor_run(&ss->sup, &spec, ss->wsfd, on_output, c, res);
	cr_assert_eq(e, 0, "supervisor_run: %s", strerror(-e));
	cr_assert_eq(res->job_id, spec.job_id);
	job_spec_clear(&spec);
}

/* Waits until the process behind PIDFD has died (not reaped). */
void
wait_dead(int pidfd)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};

	cr_assert_eq(poll(&p, 1, 5000), 1, "the launcher did not die");
}

/* The jails waiting in launcher PID's pool: its children named
 * stockade-init (its other child is the zygote), up to MAX, into PIDS.
 * Waits up to 5 s for WANT of them (the pool refills in the
 * background); returns how many there are then. */
int
waiting_jails(pid_t launcher, int want, pid_t *pids, int max)
{
	long deadline = harness_now_ms() + 5000;
	int n;

	do {
		char *children = launcher_children(launcher), *save = NULL;

		n = 0;
		for (char *t = strtok_r(children, " \n", &save); t != NULL;
		     t = strtok_r(NULL, " \n", &save)) {
			char path[64], *comm;

			snprintf(path, sizeof(path), "/proc/%s/comm", t);
			comm = harness_read_file(path, NULL);
			if (comm != NULL &&
			    strcmp(comm, "stockade-init\n") == 0 && n < max)
				pids[n++] = (pid_t)atoi(t);
			free(comm);
		}
		free(children);
		if (n == want)
			break;
		usleep(20 * 1000);
	} while (harness_now_ms() < deadline);
	return n;
}

/* Runs the shell command CMD as a job that must end ok; its stdout in C. */
void
run_sh(struct session *ss, const char *cmd, struct captured *c)
{
	char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t)cmd, NULL};
	struct job_result res;

	memset(c, 0, sizeof(*c));
	memset(&res, 0, sizeof(res));
	run_job(ss, argv, 0, c, &res);
	cr_assert_eq(res.status, JOB_OK, "%s (%s): %s",
	    job_status_name(res.status), res.detail, c->data[2]);
	job_result_clear(&res);
}
