/*
 * test_warm_payload.c: a warm jail's payload, confined before its job
 * comes (issue 27; docs/layers.md, "A warm jail's payload";
 * launcher/init/payload_start.c, launcher/payload/handover.h): what it
 * has applied while it waits, the limits a jail may be given a job with,
 * and the hand-over under the strict seccomp profile.
 *
 * The test is the broker, as in test_pool.c. Registered twice, as the
 * invoking user and as 65534 (tests/meson.build).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jobspec.h"
#include "session_util.h"
#include "stdin_feed.h"

TestSuite(warm_payload, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 120);

#define POOL 2u

static void
pool_open(struct session *ss)
{
	session_open(ss);
	ss->sup.pool_size = POOL;
}

/* ---- a warm jail's payload waits confined (issue 27) ---------------- */

/* The first child of jail init INIT (its payload), or 0 after 5 s. */
static pid_t
payload_of(pid_t init)
{
	long deadline = harness_now_ms() + 5000;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)init,
	    (int)init);
	do {
		char *t = harness_read_file(path, NULL);
		pid_t p = t != NULL ? (pid_t)atoi(t) : 0;

		free(t);
		if (p > 0)
			return p;
		usleep(20 * 1000);
	} while (harness_now_ms() < deadline);
	return 0;
}

/* The soft limit on the line of /proc/PID/limits that starts with WHAT
 * ("Max processes"), or -1. */
static long long
soft_limit(pid_t pid, const char *what)
{
	char path[64], *t, *line;
	long long v = -1;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	t = harness_read_file(path, NULL);
	cr_assert_not_null(t, "%s: %s", path, strerror(errno));
	line = strstr(t, what);
	if (line != NULL)
		v = strtoll(line + strlen(what), NULL, 10);
	free(t);
	return v;
}

/* A waiting jail's payload has applied everything but its program before
 * the job comes (jail_wait_payload): no_new_privs, the seccomp filter, no
 * capability at all, the job's rlimits but RLIMIT_NOFILE (set once its
 * listener is sent, when the job has come: payload.c); and it sleeps. */
Test(warm_payload, a_waiting_payload_is_confined_before_its_job)
{
	long deadline = harness_now_ms() + 5000;
	struct captured c;
	struct session ss;
	pid_t pids[8], payload;
	char path[64], *st = NULL, state;
	unsigned long long ticks;

	pool_open(&ss);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	payload = payload_of(pids[0]);
	cr_assert_gt(payload, 0, "the waiting jail has no payload");
	snprintf(path, sizeof(path), "/proc/%d/status", (int)payload);
	do {
		free(st);
		st = harness_read_file(path, NULL);
		cr_assert_not_null(st, "%s: %s", path, strerror(errno));
		if (strstr(st, "\nSeccomp:\t2\n") != NULL)
			break;
		usleep(20 * 1000);
	} while (harness_now_ms() < deadline);
	cr_assert_not_null(strstr(st, "\nSeccomp:\t2\n"), "%s", st);
	cr_assert_not_null(strstr(st, "\nNoNewPrivs:\t1\n"), "%s", st);
	cr_assert_not_null(strstr(st, "\nCapEff:\t0000000000000000\n"), "%s",
	    st);
	cr_assert_not_null(strstr(st, "\nCapBnd:\t0000000000000000\n"), "%s",
	    st);
	free(st);
	cr_assert_eq(soft_limit(payload, "Max processes"),
	    (long long)ss.pol.limits.nproc);
	cr_assert_eq(soft_limit(payload, "Max data size"),
	    (long long)(2 * ss.pol.limits.memory_bytes));
	/* Seccomp is set just before the payload blocks: asleep soon. */
	deadline = harness_now_ms() + 5000;
	do
		harness_proc_ticks(payload, &state, &ticks);
	while (state != 'S' && harness_now_ms() < deadline &&
	    usleep(10 * 1000) == 0);
	cr_assert_eq(state, 'S', "the waiting payload is %c", state);
	session_close(&ss);
}

/* A job whose limits differ from the jails waiting (their payloads set
 * their rlimits already) is not given one: it runs with its own. */
Test(warm_payload, a_job_with_other_limits_runs_with_its_own)
{
	char *argv[] = {(char *)(uintptr_t) "cat",
	    (char *)(uintptr_t) "/proc/self/limits", NULL};
	struct job_result res;
	struct captured c;
	struct session ss;
	pid_t pids[8];
	char want[64], *line;

	pool_open(&ss);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	ss.pol.limits.memory_bytes /= 2;
	memset(&c, 0, sizeof(c));
	memset(&res, 0, sizeof(res));
	run_job(&ss, argv, 0, &c, &res);
	cr_assert_eq(res.status, JOB_OK, "%s: %s", res.detail, c.data[2]);
	line = strstr(c.data[1], "Max data size");
	cr_assert_not_null(line, "%s", c.data[1]);
	snprintf(want, sizeof(want), "%llu",
	    (unsigned long long)(2 * ss.pol.limits.memory_bytes));
	cr_assert_eq(strncmp(line + strspn(line + 13, " ") + 13, want,
			 strlen(want)),
	    0, "RLIMIT_DATA is not twice the job's memory limit: %s", line);
	job_result_clear(&res);
	session_close(&ss);
}

/* try-syscall's bytes (tests/lib/try_syscall.c, static), read before
 * harness_setup drops privileges (as test_seccomp.c does: the build tree
 * may be closed to 65534), or NULL. */
static char *try_bytes;
static size_t try_len;

static void
strict_init(void)
{
	const char *bin = getenv("STOCKADE_BIN");
	char path[PATH_MAX];

	if (bin != NULL && strlen(bin) < sizeof(path) - 32) {
		snprintf(path, sizeof(path), "%s", bin);
		*strrchr(path, '/') = '\0';
		strcat(path, "/tests/try-syscall");
		try_bytes = harness_read_file(path, &try_len);
	}
	harness_setup();
}

static void
strict_fini(void)
{
	free(try_bytes);
	try_bytes = NULL;
	harness_cleanup();
}

/* Under the strict profile (no recvmsg of its own, denied = kill) a warm
 * jail's payload still takes its job and its stdin pipe: the filter lets
 * the hand-over's recvmsg through (seccomp.c), and nothing else it does
 * between the filter and the exec is refused. */
Test(warm_payload, a_warm_jail_takes_its_job_under_the_strict_profile,
    .init = strict_init, .fini = strict_fini)
{
	char *argv[] = {(char *)(uintptr_t) "/work/try-syscall",
	    (char *)(uintptr_t) "getpid", NULL};
	pid_t before[8], after[8];
	struct stdin_feed feed;
	struct job_result res;
	struct captured c;
	struct session ss;
	int fd, left = 0;

	cr_assert_not_null(try_bytes, "tests/try-syscall could not be read");
	pool_open(&ss);
	fd = openat(ss.wsfd, "try-syscall",
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_geq(fd, 0, "try-syscall: %s", strerror(errno));
	cr_assert_eq(write(fd, try_bytes, try_len), (ssize_t)try_len);
	cr_assert_eq(close(fd), 0);
	free(ss.pol.seccomp_profile);
	ss.pol.seccomp_profile = strdup("strict");
	for (int i = 0; i < 2; i++) {
		if (i == 1) {
			cr_assert_eq(waiting_jails(ss.sup.pid, POOL, before, 8),
			    (int)POOL);
			stdin_feed_init_data(&feed, "warm\n", 5);
			ss.sup.feed = &feed;
		}
		memset(&c, 0, sizeof(c));
		memset(&res, 0, sizeof(res));
		run_job(&ss, argv, 0, &c, &res);
		cr_assert_eq(res.status, JOB_OK, "job %d: %s (%s): %s", i,
		    job_status_name(res.status), res.detail, c.data[2]);
		cr_assert_eq(strncmp(c.data[1], "getpid ret=", 11), 0, "%s",
		    c.data[1]);
		job_result_clear(&res);
	}
	ss.sup.feed = NULL;
	stdin_feed_free(&feed);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, after, 8), (int)POOL);
	for (unsigned i = 0; i < POOL; i++)
		for (unsigned k = 0; k < POOL; k++)
			left += before[i] == after[k];
	cr_assert_eq(left, (int)POOL - 1, "the waiting jails did not serve it");
	session_close(&ss);
}
