/*
 * test_session.c: one broker/launcher pair serves many jobs (issue 2).
 *
 * The test is the broker: it builds a struct supervisor on the launcher
 * the harness names (supervisor_init_path: the test binary does not sit
 * beside stockade-launcher), loads the embedded default policy, and runs
 * jobs through supervisor_run. After every job it checks that nothing of
 * the job remains: no process carrying the job's marker on the host, no
 * child of the launcher, no new descriptor in the launcher, no new mount
 * on the host.
 *
 * Registered twice in tests/meson.build, like test_jail.c: as the
 * invoking user and as 65534 (the whole process drops privileges, so the
 * launcher it forks runs unprivileged too).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "jobspec.h"
#include "policy.h"
#include "session_util.h"
#include "supervisor.h"

TestSuite(session, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 120);

#define NJOBS 50
#define TIMEOUT_JOB 17 /* the one job with a short wall-clock limit */
#define SHORT_WALL_MS 300

/*
 * The launcher is confined (launcher/supervisor/confine.h: no_new_privs and a
 * seccomp filter; its Landlock domain is observed in
 * test_launcher_confine.c), and its zygote (launcher/zygote/zygote.h) is not,
 * on purpose: it holds nothing but its standard streams, its socket to
 * the launcher, the launcher's pidfd and the host's /proc (for the
 * launcher's Pss measure, which the launcher's Landlock domain may not
 * take; each jail's init closes it) (never the broker's socket, the
 * launcher's descriptor 3), and not even no_new_privs, which it would
 * pass to every jail: each payload sets it itself (issue 6, layer
 * caps_nnp; test_jail.c checks the payload's).
 */
static void
check_helpers(pid_t launcher, pid_t zygote)
{
	char path[64], sock[256], *zfds;
	ssize_t n;

	assert_status_line(launcher, "NoNewPrivs:\t1");
	assert_status_line(launcher, "Seccomp:\t2");
	assert_status_line(zygote, "NoNewPrivs:\t0");
	assert_status_line(zygote, "Seccomp:\t0");
	snprintf(path, sizeof(path), "/proc/%d/fd/3", (int)launcher);
	n = readlink(path, sock, sizeof(sock) - 1);
	cr_assert_gt(n, 0, "%s: %s", path, strerror(errno));
	sock[n] = '\0';
	cr_assert(strncmp(sock, "socket:", 7) == 0, "%s -> %s", path, sock);
	/* The zygote opens descriptors for a moment while it answers the
	 * launcher (a count of a job's kernel objects walks /proc): look
	 * until it holds its six, for up to a second. */
	zfds = NULL;
	for (int i = 0; i < 50; i++) {
		free(zfds);
		zfds = launcher_fd_list(zygote);
		if (launcher_fds(zygote) == 6 &&
		    strstr(zfds, "->/proc ") != NULL)
			break;
		usleep(20000);
	}
	cr_assert_eq(launcher_fds(zygote), 6, "zygote's descriptors: %s", zfds);
	cr_assert_not_null(strstr(zfds, "->/proc "), "the zygote's /proc: %s",
	    zfds);
	cr_assert_null(strstr(zfds, sock),
	    "the zygote holds the broker's "
	    "socket %s: %s",
	    sock, zfds);
	free(zfds);
}

static const char ok_script[] =
    "import subprocess, sys\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)',"
    " sys.argv[1]])\n"
    "print('job', sys.argv[2])\n";

Test(session, fifty_jobs_on_one_launcher)
{
	struct session ss;
	pid_t launcher;
	int mounts, fds;
	char hex[13], *idle_fds, *now_fds, *idle_children;

	session_open(&ss);
	harness_random_hex(hex, sizeof(hex));
	mounts = count_lines("/proc/self/mountinfo");
	cr_assert_eq(supervisor_start(&ss.sup), 0);
	launcher = ss.sup.pid;
	cr_assert_gt(launcher, 0);
	/* The launcher runs as this process does: 65534 in that variant. */
	{
		char path[64], want[64], *st;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)launcher);
		st = harness_read_file(path, NULL);
		cr_assert_not_null(st);
		snprintf(want, sizeof(want), "\nUid:\t%u\t%u\t%u\t%u\n",
		    (unsigned)getuid(), (unsigned)getuid(), (unsigned)getuid(),
		    (unsigned)getuid());
		cr_assert_not_null(strstr(st, want), "%s", st);
		free(st);
		if (harness_unprivileged())
			cr_assert_neq(getuid(), 0);
	}
	/* Every job must leave the launcher with exactly these: its
	 * descriptors, and one child, its zygote (launcher/zygote/zygote.h). */
	fds = launcher_fds(launcher);
	idle_fds = launcher_fd_list(launcher);
	idle_children = launcher_children(launcher);
	{
		char path[64], *comm;
		int zygote = atoi(idle_children);

		/* It names itself just after the fork: give it a second. */
		snprintf(path, sizeof(path), "/proc/%d/comm", zygote);
		for (long end = harness_now_ms() + 1000;; usleep(5000)) {
			comm = harness_read_file(path, NULL);
			cr_assert_not_null(comm, "launcher children: %s",
			    idle_children);
			if (strcmp(comm, "stockade-zygote\n") == 0 ||
			    harness_now_ms() >= end)
				break;
			free(comm);
		}
		cr_assert_str_eq(comm, "stockade-zygote\n");
		free(comm);
		snprintf(path, sizeof(path), "%d ", zygote);
		cr_assert_str_eq(idle_children, path);
		check_helpers(launcher, zygote);
	}

	for (int i = 0; i < NJOBS; i++) {
		char mark[64], num[16], want[64], *children;
		char *argv[6];
		struct captured c;
		struct job_result res;
		uint64_t wall = 0;

		snprintf(mark, sizeof(mark), "sessmark-%s-%d", hex, i);
		snprintf(num, sizeof(num), "%d", i);
		memset(&c, 0, sizeof(c));
		argv[0] = (char *)(uintptr_t) "python3";
		argv[1] = (char *)(uintptr_t) "-c";
		argv[3] = mark;
		argv[4] = num;
		argv[5] = NULL;
		if (i == TIMEOUT_JOB) {
			argv[2] = (char *)(uintptr_t) "while True: pass";
			wall = SHORT_WALL_MS;
		} else if (i % 10 == 9) {
			argv[2] = (char *)(uintptr_t) "import os, signal\n"
						      "os.kill(os.getpid(), "
						      "signal.SIGSEGV)\n";
		} else if (i % 3 == 1) {
			argv[2] =
			    (char *)(uintptr_t) "import sys; print('bye', "
						"file=sys.stderr);"
						" sys.exit(int(sys.argv[2]) % "
						"100 + 1)";
		} else {
			argv[2] = (char *)(uintptr_t)ok_script;
		}

		run_job(&ss, argv, wall, &c, &res);
		if (i == TIMEOUT_JOB) {
			cr_assert_eq(res.status, JOB_TIMEOUT, "job %d: %s (%s)",
			    i, job_status_name(res.status), res.detail);
			cr_assert_eq(res.signal, SIGKILL);
			cr_assert_eq(res.exit_code, -1);
			cr_assert(res.wall_ms >= SHORT_WALL_MS &&
				res.wall_ms < SHORT_WALL_MS + 1000,
			    "job %d: wall %llu ms", i,
			    (unsigned long long)res.wall_ms);
		} else if (i % 10 == 9) {
			cr_assert_eq(res.status, JOB_CRASH, "job %d: %s (%s)",
			    i, job_status_name(res.status), res.detail);
			cr_assert_eq(res.signal, SIGSEGV);
			cr_assert_eq(res.exit_code, -1);
		} else if (i % 3 == 1) {
			cr_assert_eq(res.status, JOB_EXIT_NONZERO,
			    "job %d: %s (%s)", i, job_status_name(res.status),
			    res.detail);
			cr_assert_eq(res.exit_code, i % 100 + 1);
			cr_assert_eq(res.signal, 0);
			cr_assert_str_eq(c.data[1], "");
			cr_assert_str_eq(c.data[2], "bye\n");
			cr_assert_eq(res.stderr_bytes, 4);
		} else {
			cr_assert_eq(res.status, JOB_OK, "job %d: %s (%s) %s",
			    i, job_status_name(res.status), res.detail,
			    c.data[2]);
			cr_assert_eq(res.exit_code, 0);
			cr_assert_eq(res.signal, 0);
			snprintf(want, sizeof(want), "job %d\n", i);
			cr_assert_str_eq(c.data[1], want);
			cr_assert_eq(res.stdout_bytes, strlen(want));
			cr_assert_str_eq(c.data[2], "");
		}
		job_result_clear(&res);

		/* The same launcher, never restarted. */
		cr_assert_eq(ss.sup.pid, launcher, "job %d: launcher replaced",
		    i);
		cr_assert_eq(ss.sup.restarts, 0u);
		/* Nothing of the job remains. */
		cr_assert_eq(harness_count_marked(mark, 1000, NULL, 0), 0,
		    "job %d: a process with its marker survived", i);
		children = launcher_children(launcher);
		cr_assert_str_eq(children, idle_children,
		    "job %d: launcher children: %s", i, children);
		free(children);
		/* The launcher closes the job's workspace descriptor just
		 * after sending RESULT: give it up to 1 s to get there. */
		for (long end = harness_now_ms() + 1000;
		     launcher_fds(launcher) != fds && harness_now_ms() < end;)
			usleep(5000);
		now_fds = launcher_fd_list(launcher);
		cr_assert_str_eq(now_fds, idle_fds,
		    "job %d: the launcher's "
		    "descriptors changed: idle: %s; now: %s",
		    i, idle_fds, now_fds);
		free(now_fds);
		cr_assert_eq(count_lines("/proc/self/mountinfo"), mounts,
		    "job %d: the host's mount table changed", i);
	}
	free(idle_fds);
	free(idle_children);
	session_close(&ss);
}

static void
run_ok_job(struct session *ss, const char *text)
{
	char *argv[] = {(char *)(uintptr_t) "echo", (char *)(uintptr_t)text,
	    NULL};
	struct captured c;
	struct job_result res;
	char want[128];

	memset(&c, 0, sizeof(c));
	run_job(ss, argv, 0, &c, &res);
	cr_assert_eq(res.status, JOB_OK, "%s (%s)", job_status_name(res.status),
	    res.detail);
	snprintf(want, sizeof(want), "%s\n", text);
	cr_assert_str_eq(c.data[1], want);
	job_result_clear(&res);
}

Test(session, launcher_killed_between_jobs_is_restarted)
{
	struct session ss;
	char *children;
	pid_t first;
	int zygote;

	session_open(&ss);
	run_ok_job(&ss, "before");
	first = ss.sup.pid;
	cr_assert_gt(first, 0);
	cr_assert_eq(ss.sup.restarts, 0u);
	children = launcher_children(first);
	zygote = (int)syscall(SYS_pidfd_open, atoi(children), 0);
	cr_assert_geq(zygote, 0, "zygote %s: %s", children, strerror(errno));
	free(children);

	cr_assert_eq(kill(first, SIGKILL), 0);
	wait_dead(ss.sup.pidfd);
	/* Its zygote dies with it (PR_SET_PDEATHSIG): nothing that can
	 * make jails outlives the launcher. */
	wait_dead(zygote);
	close(zygote);

	/* The next job starts a new launcher and runs normally. */
	run_ok_job(&ss, "after");
	cr_assert_eq(ss.sup.restarts, 1u);
	cr_assert_gt(ss.sup.pid, 0);
	cr_assert_neq(ss.sup.pid, first);
	/* The dead launcher was reaped, not left a zombie. */
	cr_assert_eq(waitpid(first, NULL, WNOHANG), -1);
	cr_assert_eq(errno, ECHILD);
	run_ok_job(&ss, "again");
	cr_assert_eq(ss.sup.restarts, 1u);
	session_close(&ss);
}

Test(session, launcher_killed_during_a_job_is_sandbox_error)
{
	static const char script[] =
	    "import os, subprocess, sys, time\n"
	    "subprocess.Popen([sys.executable, '-c',"
	    " 'import time; time.sleep(300)', sys.argv[1]])\n"
	    "print('started', flush=True)\n"
	    "time.sleep(300)\n";
	struct session ss;
	struct captured c;
	struct job_result res;
	char hex[13], mark[64];
	char *argv[5];
	pid_t first;

	session_open(&ss);
	harness_random_hex(hex, sizeof(hex));
	snprintf(mark, sizeof(mark), "sessmark-%s-killed", hex);
	argv[0] = (char *)(uintptr_t) "python3";
	argv[1] = (char *)(uintptr_t) "-c";
	argv[2] = (char *)(uintptr_t)script;
	argv[3] = mark;
	argv[4] = NULL;
	cr_assert_eq(supervisor_start(&ss.sup), 0);
	first = ss.sup.pid;

	memset(&c, 0, sizeof(c));
	c.kill_on_output = &ss.sup;
	run_job(&ss, argv, 0, &c, &res);
	cr_assert_eq(res.status, JOB_SANDBOX_ERROR, "%s (%s)",
	    job_status_name(res.status), res.detail);
	cr_assert_str_eq(c.data[1], "started\n");
	cr_assert_not_null(strstr(res.detail, "launcher"), "%s", res.detail);
	job_result_clear(&res);
	/* The jail died with its launcher. */
	cr_assert_eq(harness_count_marked(mark, 1000, NULL, 0), 0,
	    "a process of the job survived its launcher");
	cr_assert_eq(waitpid(first, NULL, WNOHANG), -1);
	cr_assert_eq(errno, ECHILD);

	run_ok_job(&ss, "after");
	cr_assert_eq(ss.sup.restarts, 1u);
	session_close(&ss);
}

/* ---- a launcher that stops answering ------------------------------------ */

/* No child of this process is left, running or zombie. */
static void
assert_no_child(void)
{
	cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1, "a child is left");
	cr_assert_eq(errno, ECHILD);
}

/*
 * A launcher that never answers HELLO (fake-launcher-silent, built from
 * tests/lib/fake_launcher.c): supervisor_start gives up SUPERVISOR_HELLO_MS
 * (5 s) after the exec instead of waiting forever, and the launcher is
 * killed and reaped.
 */
Test(session, launcher_silent_at_hello_times_out, .timeout = 30)
{
	struct supervisor sup;
	char err[512];
	long start, took;
	int e;

	cr_assert_eq(supervisor_init_path(&sup,
			 harness_helper("fake-launcher-silent"), err,
			 sizeof(err)),
	    0, "%s", err);
	start = harness_now_ms();
	e = supervisor_start(&sup);
	took = harness_now_ms() - start;
	cr_assert_eq(e, -ETIMEDOUT, "supervisor_start: %d (%s)", e,
	    strerror(-e));
	cr_assert(took >= (long)SUPERVISOR_HELLO_MS &&
		took < (long)SUPERVISOR_HELLO_MS + 1000,
	    "gave up after %ld ms", took);
	cr_assert_eq(sup.pid, 0);
	cr_assert_eq(sup.sock, -1);
	cr_assert_eq(sup.pidfd, -1);
	assert_no_child();
	supervisor_free(&sup);
}

/*
 * A launcher that answers HELLO, then never answers RUN
 * (fake-launcher-hang): the job ends as sandbox_error wall_ms +
 * SUPERVISOR_GRACE_MS after RUN, naming the wait, and the launcher is
 * killed and reaped; the next job would start a new one.
 */
Test(session, launcher_silent_during_a_job_is_sandbox_error, .timeout = 40)
{
	char *argv[] = {(char *)(uintptr_t) "true", NULL};
	struct session ss;
	struct job_spec spec;
	struct job_result res;
	struct captured c;
	char err[POLICY_ERR_MAX + 256], want[128];
	long start, took, allowed;
	pid_t launcher;
	int e;

	memset(&ss.pol, 0, sizeof(ss.pol));
	cr_assert_eq(policy_load_default(&ss.pol, err, sizeof(err)), 0, "%s",
	    err);
	cr_assert_eq(supervisor_init_path(&ss.sup,
			 harness_helper("fake-launcher-hang"), err,
			 sizeof(err)),
	    0, "%s", err);
	ss.wsfd = open(harness_workspace(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(ss.wsfd, 0);
	cr_assert_eq(supervisor_start(&ss.sup), 0);
	launcher = ss.sup.pid;
	cr_assert_gt(launcher, 0);

	cr_assert_eq(jobspec_from_policy(&spec, &ss.pol, 1, argv), 0);
	spec.limits.wall_ms = SHORT_WALL_MS;
	allowed = SHORT_WALL_MS + (long)SUPERVISOR_GRACE_MS;
	memset(&c, 0, sizeof(c));
	start = harness_now_ms();
	e = supervisor_run(&ss.sup, &spec, ss.wsfd, on_output, &c, &res);
	took = harness_now_ms() - start;
	cr_assert_eq(e, 0, "supervisor_run: %s", strerror(-e));
	cr_assert_eq(res.job_id, spec.job_id);
	cr_assert_eq(res.status, JOB_SANDBOX_ERROR, "%s (%s)",
	    job_status_name(res.status), res.detail);
	cr_assert_eq(res.exit_code, -1);
	cr_assert_eq(res.signal, 0);
	snprintf(want, sizeof(want),
	    "the launcher did not answer within %ld ms", allowed);
	cr_assert_str_eq(res.detail, want);
	cr_assert(took >= allowed && took < allowed + 1000,
	    "gave up after %ld ms", took);
	/* Killed and reaped; counted as a restart for the next job. */
	cr_assert_eq(ss.sup.pid, 0);
	cr_assert_eq(ss.sup.restarts, 1u);
	cr_assert_eq(waitpid(launcher, NULL, WNOHANG), -1);
	cr_assert_eq(errno, ECHILD);
	assert_no_child();
	job_result_clear(&res);
	job_spec_clear(&spec);
	session_close(&ss);
}
