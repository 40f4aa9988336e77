/*
 * test_pool.c: the warm jail pool of a session (launcher/supervisor/pool.h,
 * issue 9).
 *
 * The test is the broker, as in test_session.c, with a pool of POOL jails
 * (what `stockade serve` sends from [jail] pool_size): every job still
 * gets a jail of its own (an empty /tmp, namespaces no other job had),
 * the waiting jails spend no CPU, limits hold in a warm jail, a restarted
 * launcher keeps the session's pool, and nothing of the pool outlives
 * the session. Then the launcher's side of the POOL message, driven raw:
 * a size over PROTO_MAX_POOL, a second POOL, or one after the first RUN
 * ends the session.
 *
 * Registered twice, as the invoking user and as 65534 (tests/meson.build).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "jobspec.h"
#include "session_util.h"

TestSuite(pool, .init = harness_setup, .fini = harness_cleanup, .timeout = 120);

#define POOL 2u

/* Waits up to 10 s until the mount table of jail PID (its
 * /proc/PID/mountinfo) names PATH: the jail has made that bind. Where
 * the table cannot be read (as an unprivileged user: the jail's init is
 * not dumpable), waits 2 s instead. */
static void
wait_bound(pid_t pid, const char *path)
{
	long deadline = harness_now_ms() + 10000;
	char file[64];

	snprintf(file, sizeof(file), "/proc/%d/mountinfo", (int)pid);
	while (harness_now_ms() < deadline) {
		char *t = harness_read_file(file, NULL);
		bool found = t != NULL && strstr(t, path) != NULL;

		if (t == NULL) {
			usleep(2000 * 1000);
			return;
		}
		free(t);
		if (found)
			return;
		usleep(20 * 1000);
	}
}

/* The number of descriptors of PID once it is WANT, or after 3 s. */
static int
settled_fds(pid_t pid, int want)
{
	long deadline = harness_now_ms() + 3000;
	int n;

	while ((n = launcher_fds(pid)) != want && harness_now_ms() < deadline)
		usleep(20 * 1000);
	return n;
}

/* The number of descriptors of PID once it has not changed for 300 ms
 * (at most 5 s). */
static int
stable_fds(pid_t pid)
{
	long deadline = harness_now_ms() + 5000, since = harness_now_ms();
	int n = launcher_fds(pid), m;

	while (harness_now_ms() - since < 300 && harness_now_ms() < deadline) {
		usleep(50 * 1000);
		if ((m = launcher_fds(pid)) != n) {
			n = m;
			since = harness_now_ms();
		}
	}
	return n;
}

static void
pool_open(struct session *ss)
{
	session_open(ss);
	ss->sup.pool_size = POOL;
}

Test(pool, every_job_gets_a_jail_of_its_own)
{
	enum { NJOBS = 6 };
	pid_t pids[8];
	struct captured c;
	struct session ss;
	int fds_after_first = 0;

	pool_open(&ss);
	for (int i = 0; i < NJOBS; i++) {
		/* Every job leaves a file in /tmp and /dev/shm and a process
		 * behind; no job finds any: only its init (1) and itself (2)
		 * in its pid namespace. Namespace inode numbers cannot tell
		 * (the kernel reuses them once a namespace is gone). */
		run_sh(&ss,
		    "ls -A /tmp /dev/shm; echo /proc/[0-9]*; "
		    "touch /tmp/left /dev/shm/left; "
		    "(sleep 100 >/dev/null 2>&1 &)",
		    &c);
		cr_assert_str_eq(c.data[1],
		    "/dev/shm:\n\n/tmp:\n/proc/1 /proc/2\n", "job %d", i);
		/* The pool is full again between jobs, and the launcher
		 * holds no more descriptors than after the first job. */
		cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8),
		    (int)POOL);
		if (i == 0) {
			/* A jail is a child (named stockade-init) as soon
			 * as it is cloned, a moment before the zygote's
			 * reply hands the launcher its descriptors. */
			fds_after_first = stable_fds(ss.sup.pid);
		} else {
			cr_assert_eq(settled_fds(ss.sup.pid, fds_after_first),
			    fds_after_first, "the launcher's descriptors: %s",
			    launcher_fd_list(ss.sup.pid));
		}
	}
	session_close(&ss);
}

/*
 * A job with a standard input (JOB_F_STDIN, issue 22) takes a waiting
 * jail too: its pipe goes to that jail's init with the RUN, and the
 * program reads it. One of the jails that waited before the job is gone
 * after it (taken), which a cold jail would not do.
 */
Test(pool, a_job_with_stdin_takes_a_waiting_jail)
{
	char *argv[] = {(char *)(uintptr_t) "cat", NULL};
	pid_t before[8], after[8];
	struct stdin_feed feed;
	struct job_result res;
	struct captured c;
	struct session ss;
	int left = 0;

	pool_open(&ss);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, before, 8), (int)POOL);
	stdin_feed_init_data(&feed, "warm\n", 5);
	ss.sup.feed = &feed;
	memset(&c, 0, sizeof(c));
	memset(&res, 0, sizeof(res));
	run_job(&ss, argv, 0, &c, &res);
	ss.sup.feed = NULL;
	cr_assert_eq(res.status, JOB_OK, "%s: %s", res.detail, c.data[2]);
	cr_assert_str_eq(c.data[1], "warm\n");
	job_result_clear(&res);
	stdin_feed_free(&feed);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, after, 8), (int)POOL);
	for (unsigned i = 0; i < POOL; i++)
		for (unsigned k = 0; k < POOL; k++)
			left += before[i] == after[k];
	cr_assert_eq(left, (int)POOL - 1, "the waiting jails did not serve it");
	session_close(&ss);
}

Test(pool, waiting_jails_spend_no_cpu)
{
	unsigned long long before[POOL], after;
	pid_t pids[8];
	struct captured c;
	struct session ss;
	char state;

	pool_open(&ss);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	usleep(200 * 1000);
	for (unsigned i = 0; i < POOL; i++)
		harness_proc_ticks(pids[i], &state, &before[i]);
	sleep(1);
	for (unsigned i = 0; i < POOL; i++) {
		harness_proc_ticks(pids[i], &state, &after);
		cr_assert_eq(state, 'S', "jail %d is %c", (int)pids[i], state);
		cr_assert_eq(after, before[i], "waiting jail %d spent CPU",
		    (int)pids[i]);
	}
	session_close(&ss);
}

Test(pool, limits_hold_in_a_warm_jail)
{
	char *sleeper[] = {(char *)(uintptr_t) "sleep",
	    (char *)(uintptr_t) "10", NULL};
	struct captured c;
	struct job_result res;
	struct session ss;
	pid_t pids[8];
	long start;

	pool_open(&ss);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	memset(&c, 0, sizeof(c));
	memset(&res, 0, sizeof(res));
	start = harness_now_ms();
	run_job(&ss, sleeper, 300, &c, &res);
	cr_assert_eq(res.status, JOB_TIMEOUT, "%s (%s)",
	    job_status_name(res.status), res.detail);
	/* The clock started when the warm jail got the job. */
	cr_assert_geq(res.wall_ms, 300u);
	cr_assert_lt(harness_now_ms() - start, 2500);
	job_result_clear(&res);
	session_close(&ss);
}

Test(pool, a_restarted_launcher_keeps_the_pool)
{
	struct captured c;
	struct session ss;
	pid_t pids[8], first;

	pool_open(&ss);
	run_sh(&ss, "true", &c);
	first = ss.sup.pid;
	cr_assert_eq(waiting_jails(first, POOL, pids, 8), (int)POOL);
	cr_assert_eq(kill(first, SIGKILL), 0);
	wait_dead(ss.sup.pidfd);
	run_sh(&ss, "echo again", &c);
	cr_assert_str_eq(c.data[1], "again\n");
	cr_assert_eq(ss.sup.restarts, 1u);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	session_close(&ss);
}

Test(pool, nothing_of_the_pool_outlives_the_session)
{
	struct captured c;
	struct session ss;
	pid_t pids[8];
	int pidfds[POOL];

	pool_open(&ss);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	for (unsigned i = 0; i < POOL; i++) {
		pidfds[i] = (int)syscall(SYS_pidfd_open, pids[i], 0);
		cr_assert_geq(pidfds[i], 0);
	}
	session_close(&ss);
	for (unsigned i = 0; i < POOL; i++) {
		wait_dead(pidfds[i]);
		close(pidfds[i]);
	}
}

Test(pool, size_zero_keeps_no_jail)
{
	struct captured c;
	struct session ss;
	pid_t pids[8];

	session_open(&ss);
	run_sh(&ss, "true", &c);
	usleep(300 * 1000);
	cr_assert_eq(waiting_jails(ss.sup.pid, 0, pids, 8), 0);
	session_close(&ss);
}

/* ---- the launcher's side of POOL, driven raw ---- */

/* Starts the launcher on a fresh socketpair, says HELLO, and returns
 * its pid; *SOCK is our end. */
static pid_t
raw_launcher(int *sock)
{
	uint8_t buf[PROTO_MAX_MSG];
	int sv[2], fd = -1, n;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
	    0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* dup2 clears close-on-exec on the copy. */
		if (dup2(sv[1], 3) < 0)
			_exit(127);
		execl(harness_launcher(), "stockade-launcher", "--ipc-fd", "3",
		    (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	*sock = sv[0];
	n = proto_encode_hello(buf, sizeof(buf), PROTO_VERSION);
	cr_assert_eq(proto_send(*sock, buf, (size_t)n, -1), 0);
	n = proto_recv(*sock, buf, sizeof(buf), &fd);
	cr_assert_gt(n, 0, "no HELLO_REPLY: %d", n);
	cr_assert_eq(buf[0], PROTO_HELLO_REPLY);
	return pid;
}

/* Sends a POOL of JAILS, encoded by hand (the encoder refuses a size
 * over the bound). */
static void
send_pool(int sock, uint32_t jails)
{
	uint8_t m[12] = {PROTO_POOL, 0, 0, 0, 4, 0, 0, 0, (uint8_t)jails,
	    (uint8_t)(jails >> 8), (uint8_t)(jails >> 16),
	    (uint8_t)(jails >> 24)};

	cr_assert_eq(proto_send(sock, m, sizeof(m), -1), 0);
}

/* The launcher ended the session: EOF on the socket, exit status 1. */
static void
assert_session_ended(pid_t pid, int sock)
{
	uint8_t buf[PROTO_MAX_MSG];
	int st, fd = -1;

	cr_assert_eq(proto_recv(sock, buf, sizeof(buf), &fd), 0,
	    "the launcher answered instead of ending the session");
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status 0x%x",
	    (unsigned)st);
	close(sock);
}

Test(pool, the_launcher_refuses_a_pool_over_the_bound)
{
	int sock;
	pid_t pid = raw_launcher(&sock);

	send_pool(sock, PROTO_MAX_POOL + 1);
	assert_session_ended(pid, sock);
}

Test(pool, the_launcher_refuses_a_second_pool)
{
	int sock;
	pid_t pid = raw_launcher(&sock);

	send_pool(sock, 1);
	send_pool(sock, 1);
	assert_session_ended(pid, sock);
}

Test(pool, the_launcher_refuses_a_pool_after_the_first_run)
{
	char *argv[] = {(char *)(uintptr_t) "true", NULL};
	char err[POLICY_ERR_MAX + 64];
	uint8_t buf[PROTO_MAX_MSG];
	struct policy pol;
	struct job_spec spec;
	int sock, wsfd, n, fd = -1;
	pid_t pid = raw_launcher(&sock);

	memset(&pol, 0, sizeof(pol));
	cr_assert_eq(policy_load_default(&pol, err, sizeof(err)), 0, "%s", err);
	memset(&spec, 0, sizeof(spec));
	cr_assert_eq(jobspec_from_policy(&spec, &pol, 1, argv), 0);
	spec.job_id = 1;
	wsfd = open(harness_workspace(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(wsfd, 0);
	n = proto_encode_run(buf, sizeof(buf), &spec);
	cr_assert_gt(n, 0);
	cr_assert_eq(proto_send(sock, buf, (size_t)n, wsfd), 0);
	do
		n = proto_recv(sock, buf, sizeof(buf), &fd);
	while (n > 0 && buf[0] != PROTO_RESULT);
	cr_assert_gt(n, 0, "no RESULT");
	send_pool(sock, 1);
	assert_session_ended(pid, sock);
	close(wsfd);
	job_spec_clear(&spec);
	policy_clear(&pol);
}

/* What a job sees of its own confinement, in lines that do not depend on
 * pids, mount ids or namespace numbers. */
static const char probe_script[] =
    "grep -E '^(Uid|Gid|Groups|NoNewPrivs|Seccomp|Seccomp_filters|"
    "Cap(Inh|Prm|Eff|Bnd|Amb)):' /proc/self/status; "
    "ulimit -a; id; hostname; pwd; echo \"$HOME $TMPDIR $PATH\"; "
    "cut -d' ' -f5,6 /proc/self/mountinfo | sort; "
    "ls / 2>&1 | head -1; touch /usr/x 2>&1 | head -1; "
    "ls -A /tmp /dev/shm $HOME; cat /proc/sys/kernel/ostype";

Test(pool, a_warm_jail_is_the_same_jail_as_a_cold_one)
{
	char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t)probe_script, NULL};
	char *denied[] = {(char *)(uintptr_t) "unshare",
	    (char *)(uintptr_t) "-U", (char *)(uintptr_t) "true", NULL};
	struct captured cold, warm, dc, dw;
	struct job_result rc, rw, rdc, rdw;
	struct session ss;
	pid_t pids[8];

	/* Cold: a session without a pool. */
	session_open(&ss);
	memset(&cold, 0, sizeof(cold));
	memset(&rc, 0, sizeof(rc));
	run_job(&ss, argv, 0, &cold, &rc);
	memset(&dc, 0, sizeof(dc));
	memset(&rdc, 0, sizeof(rdc));
	run_job(&ss, denied, 0, &dc, &rdc);
	session_close(&ss);
	/* Warm: the second job of a pooled session. */
	pool_open(&ss);
	run_sh(&ss, "true", &warm);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	memset(&warm, 0, sizeof(warm));
	memset(&rw, 0, sizeof(rw));
	run_job(&ss, argv, 0, &warm, &rw);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	memset(&dw, 0, sizeof(dw));
	memset(&rdw, 0, sizeof(rdw));
	run_job(&ss, denied, 0, &dw, &rdw);
	session_close(&ss);

	cr_assert_eq(rc.status, JOB_OK, "cold: %s", cold.data[2]);
	cr_assert_eq(rw.status, JOB_OK, "warm: %s", warm.data[2]);
	cr_assert_str_eq(warm.data[1], cold.data[1]);
	cr_assert_str_eq(warm.data[2], cold.data[2]);
	cr_assert_not_null(strstr(warm.data[1], "Seccomp:\t2\n"), "%s",
	    warm.data[1]);
	cr_assert_not_null(strstr(warm.data[1], "CapBnd:\t0000000000000000\n"),
	    "%s", warm.data[1]);
	cr_assert_gt(rw.landlock_abi, 0);
	cr_assert_eq(rw.landlock_abi, rc.landlock_abi);
	/* The seccomp filter's refusal is seen and named the same way. */
	cr_assert_eq(rdw.status, rdc.status, "%s / %s",
	    job_status_name(rdw.status), job_status_name(rdc.status));
	cr_assert_gt(rdw.ndenials, 0);
	cr_assert_eq(rdw.ndenials, rdc.ndenials);
	cr_assert_str_eq(rdw.denials[0].syscall, rdc.denials[0].syscall);
	job_result_clear(&rc);
	job_result_clear(&rw);
	job_result_clear(&rdc);
	job_result_clear(&rdw);
}

Test(pool, a_waiting_jail_that_fails_is_reaped_and_the_pool_stalls)
{
	/* Not under /tmp, which the jail mounts itself. */
	char dir[] = "/var/tmp/stockade-pool-bind-XXXXXX";
	char text[1024], err[POLICY_ERR_MAX + 64], src[600];
	char *argv[] = {(char *)(uintptr_t) "true", NULL};
	struct captured c;
	struct job_result res;
	struct session ss;
	pid_t pids[8];

	/* A policy that binds a directory the test removes later, added to
	 * the default's binds. */
	cr_assert_not_null(mkdtemp(dir), "%s", strerror(errno));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(src, sizeof(src), "%s/src", dir);
	cr_assert_eq(mkdir(src, 0755), 0, "%s: %s", src, strerror(errno));
	snprintf(text, sizeof(text), "[filesystem]\nro_bind = %s\n", src);
	pool_open(&ss);
	policy_clear(&ss.pol);
	memset(&ss.pol, 0, sizeof(ss.pol));
	cr_assert_eq(policy_load_string(&ss.pol, text, "test", err,
			 sizeof(err)),
	    0, "%s", err);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL, pids, 8), (int)POOL);
	/* A waiting jail is named stockade-init while it is still being
	 * set up: each must have made its bind of SRC before the source
	 * goes, or it fails too (a race of the test, not of the pool). */
	for (unsigned i = 0; i < POOL; i++)
		wait_bound(pids[i], src);
	/* Jails built before the source went keep their bind; the one
	 * built after fails its set-up: reaped at once, no zombie left,
	 * and no refill until the next job. */
	cr_assert_eq(rmdir(src), 0);
	run_sh(&ss, "true", &c);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL - 1, pids, 8),
	    (int)POOL - 1, "children: %s", launcher_children(ss.sup.pid));
	usleep(300 * 1000);
	cr_assert_eq(waiting_jails(ss.sup.pid, POOL - 1, pids, 8),
	    (int)POOL - 1, "children: %s", launcher_children(ss.sup.pid));
	run_sh(&ss, "true", &c);
	/* The pool is empty: the next job is built cold, and says why. */
	memset(&c, 0, sizeof(c));
	memset(&res, 0, sizeof(res));
	run_job(&ss, argv, 0, &c, &res);
	cr_assert_eq(res.status, JOB_SANDBOX_ERROR, "%s",
	    job_status_name(res.status));
	cr_assert_not_null(strstr(res.detail, "bind mounts"), "%s", res.detail);
	/* Issue 22: and names the bind that vanished. */
	snprintf(text, sizeof(text), "ro_bind %s: No such file or directory",
	    src);
	cr_assert_not_null(strstr(res.detail, text), "%s", res.detail);
	job_result_clear(&res);
	session_close(&ss);
	cr_assert_eq(rmdir(dir), 0);
}

/*
 * The broker may be pid 1 (a container's entry point, deploy/): its
 * launcher took a parent of pid 1 for a dead broker, and no job ran. As
 * root only: an ordinary user is pid 1 of a pid namespace only inside a
 * user namespace of its own, where stockade would take itself for root.
 */
Test(pool, a_broker_that_is_pid_1_runs_jobs)
{
	const char *const argv[] = {"unshare", "--pid", "--fork",
	    "--kill-child", "--mount-proc", harness_stockade(), "run",
	    "--workspace", harness_workspace(), "--", "echo", "pid1", NULL};
	struct run_out o;

	if (geteuid() != 0)
		return;
	harness_spawn(argv, &o);
	cr_assert_eq(o.status, 0, "exit %d: %s", o.status, o.err);
	cr_assert_str_eq(o.out, "pid1\n");
	run_out_free(&o);
}
