/*
 * test_usage.c: the /proc sampler (launcher/common/usage.c).
 *
 * The parser on hostile and broken stat lines; the walk on real process
 * trees the test forks: threads (one of which forks), zombies, 64 MiB of
 * touched memory, a grandchild, processes that come and go, CPU spent by
 * a living process and by an orphan reaped by the tree's root (a
 * subreaper, as the jail's init is). The test process is a subreaper too,
 * and every tree is a process group killed and reaped by the suite's .fini,
 * whatever an assertion did. Passes as root and as an ordinary user.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "usage.h"

/* Fields 3 to 24 and two more; field 2 is put in front by line(). */
#define TAIL                                                        \
	" S 1 1234 1234 34816 -1 4194560 1500 3000 2 5 11 22 33 44" \
	" -100 -20 3 0 12345 10000000 555 18446744073709551615 0\n"

static char text[512];

static const char *
line(const char *comm)
{
	snprintf(text, sizeof(text), "1234 (%s)%s", comm, TAIL);
	return text;
}

static int
parse(const char *s, struct proc_stat *st)
{
	memset(st, 0xa5, sizeof(*st)); /* an error must clear it */
	return usage_parse_stat(s, strlen(s), st);
}

static void
expect_tail_values(const struct proc_stat *st)
{
	cr_assert_eq(st->pid, 1234);
	cr_assert_eq(st->ppid, 1);
	cr_assert_eq(st->state, 'S');
	cr_assert_eq(st->utime_ticks, 11);
	cr_assert_eq(st->stime_ticks, 22);
	cr_assert_eq(st->cutime_ticks, 33);
	cr_assert_eq(st->cstime_ticks, 44);
	cr_assert_eq(st->num_threads, 3);
	cr_assert_eq(st->rss_pages, 555);
}

static void
expect_invalid(const char *s)
{
	struct proc_stat st, zero = {0};

	cr_assert_eq(parse(s, &st), -EINVAL, "accepted: %s", s);
	cr_assert(memcmp(&st, &zero, sizeof(st)) == 0, "not cleared: %s", s);
}

Test(parse, plain_line)
{
	struct proc_stat st;

	cr_assert_eq(parse(line("bash"), &st), 0);
	expect_tail_values(&st);
}

/* proc(5): the name may hold anything but NUL; it ends at the last ')'. */
Test(parse, hostile_names)
{
	static const char *names[] = {
	    "a b",
	    "x) R 99 99 99",
	    ") Z 7 7 (",
	    ")))",
	    "((",
	    "",
	    "new\nline",
	    "x) S 1 1 1 1 1 1 1 1 1 1 1 999 999 999 999",
	    " ",
	    "\t)\n)",
	};
	struct proc_stat st;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_assert_eq(parse(line(names[i]), &st), 0, "%s", names[i]);
		expect_tail_values(&st);
	}
}

/* Every prefix that stops before the separator after field 24 is
 * refused; every longer one is enough. */
Test(parse, every_truncation)
{
	struct proc_stat st;
	const char *s = line("a) b");
	size_t need = (size_t)(strstr(s, " 555 ") - s) + 5;

	for (size_t len = 0; len <= strlen(s); len++) {
		int r = usage_parse_stat(s, len, &st);

		if (len < need)
			cr_assert_eq(r, -EINVAL, "prefix of %zu accepted", len);
		else {
			cr_assert_eq(r, 0, "prefix of %zu refused", len);
			expect_tail_values(&st);
		}
	}
	cr_assert_eq(usage_parse_stat(NULL, 10, &st), -EINVAL);
}

/* Bytes past LEN are never read, a ')' there included. */
Test(parse, stops_at_len)
{
	char buf[600];
	struct proc_stat st;
	size_t len;

	snprintf(buf, sizeof(buf), "%s", line("n"));
	len = strlen(buf);
	snprintf(buf + len, sizeof(buf) - len, ") Z 9 9 9 9 9 9 9 9 9 9 9 9");
	cr_assert_eq(usage_parse_stat(buf, len, &st), 0);
	expect_tail_values(&st);
	/* The same line ending exactly after field 24, with a newline. */
	snprintf(buf, sizeof(buf),
	    "1234 (n) S 1 0 0 0 0 0 0 0 0 0 11 22 33 44 0 0 3 0 0 0 "
	    "555\n");
	cr_assert_eq(parse(buf, &st), 0);
	expect_tail_values(&st);
}

Test(parse, number_bounds)
{
	struct proc_stat st;

	cr_assert_eq(parse("7 (x) R 1 0 0 0 0 0 0 0 0 0 18446744073709551615 "
			   "0 0 0 0 0 4294967295 0 0 0 18446744073709551615 0",
			 &st),
	    0);
	cr_assert_eq(st.utime_ticks, UINT64_MAX);
	cr_assert_eq(st.num_threads, UINT32_MAX);
	cr_assert_eq(st.rss_pages, UINT64_MAX);
	cr_assert_eq(st.state, 'R');
	/* Skipped fields may be longer than any integer. */
	cr_assert_eq(parse("7 (x) R 1 0 0 0 -99999999999999999999999 0 0 0 "
			   "0 0 1 1 1 1 0 0 1 0 0 0 1 0",
			 &st),
	    0);
	expect_invalid("7 (x) R 1 0 0 0 0 0 0 0 0 0 18446744073709551616 "
		       "0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 (x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 4294967296 "
		       "0 0 0 1 0");
	expect_invalid("2147483648 (x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 "
		       "0 0 0 1 0");
	expect_invalid("7 (x) R 2147483648 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 "
		       "0 0 0 1 0");
	expect_invalid("0 (x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 (x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 "
		       "99999999999999999999999 0");
}

Test(parse, malformed)
{
	/* A kept field with a sign, one field missing, two spaces, a
	 * letter, no state, no parentheses, a leading space. */
	expect_invalid("7 (x) R 1 0 0 0 0 0 0 0 0 0 -1 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 (x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 (x) R 1 0 0 0 0 0 0 0 0  0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 (x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 x 0 0 0 1 0");
	expect_invalid("7 (x)  1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 (x) 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 x R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7 (x R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid(" 7 (x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("7(x) R 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0");
	expect_invalid("");
	expect_invalid("\n");
}

Test(parse, own_stat)
{
	char buf[1024];
	struct proc_stat st;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_gt(n, 0);
	cr_assert_eq(usage_parse_stat(buf, (size_t)n, &st), 0);
	cr_assert_eq(st.pid, getpid());
	cr_assert_eq(st.ppid, getppid());
	cr_assert_eq(st.state, 'R');
	cr_assert_geq(st.num_threads, 1);
	cr_assert_gt(st.rss_pages, 0);
}

/* ---- process trees ---- */

static pid_t tree = -1; /* the root of the test's tree, a group leader */
static int proc_fd = -1;

/* Pipes between the test and its tree: in the tree, where to say "ready"
 * and where the root reads orders; in the test, the other two ends. */
static int tree_out = -1, tree_in = -1;
static int test_reports = -1, test_orders = -1;

static void
tree_setup(void)
{
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(proc_fd, 0);
}

/* Kills the whole tree and reaps every process of it (the test is their
 * subreaper, so orphans come back here). */
static void
tree_teardown(void)
{
	if (tree > 0)
		kill(-tree, SIGKILL);
	tree = -1;
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	if (proc_fd >= 0)
		close(proc_fd);
	if (test_reports >= 0)
		close(test_reports);
	if (test_orders >= 0)
		close(test_orders);
}

TestSuite(sample, .init = tree_setup, .fini = tree_teardown, .timeout = 60);

static void
say(char c)
{
	if (write(tree_out, &c, 1) != 1)
		_exit(90);
}

static void
hang(void)
{
	for (;;)
		pause();
}

/* In a new process of the tree: dies with its parent. */
static pid_t
spawn(void)
{
	pid_t p = fork();

	if (p == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		_exit(91);
	return p;
}

static void *
thread_hang(void *arg)
{
	hang();
	return arg;
}

/* A thread that forks: its child is in THIS thread's children file. */
static void *
thread_fork(void *arg)
{
	if (spawn() == 0) {
		say('t');
		hang();
	}
	hang();
	return arg;
}

static void
threads(int n, bool with_fork)
{
	pthread_t t;

	for (int i = 0; i < n; i++) {
		void *(*fn)(void *) = with_fork && i == 0 ? thread_fork
							  : thread_hang;

		if (pthread_create(&t, NULL, fn, NULL) != 0)
			_exit(92);
	}
}

/* Spins for MS of this process's CPU time, nearly all of it in user mode
 * (the clock is read by a system call: not too often). */
static void
spin(long ms)
{
	struct timespec ts;

	do {
		for (volatile unsigned i = 0; i < 1000000; i++)
			;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec * 1000 + ts.tv_nsec / 1000000 < ms);
}

/* Forks the root of a tree that runs BODY, then waits for N "ready"
 * bytes from the tree. */
static void
start_tree(void (*body)(void), int n)
{
	int rp[2], cp[2];
	char buf[64];

	cr_assert_eq(pipe2(rp, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(cp, O_CLOEXEC), 0);
	tree = fork();
	cr_assert_geq(tree, 0);
	if (tree == 0) {
		setpgid(0, 0);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
			_exit(91);
		close(rp[0]);
		close(cp[1]);
		tree_out = rp[1];
		tree_in = cp[0];
		body();
		_exit(93);
	}
	setpgid(tree, tree);
	close(rp[1]);
	close(cp[0]);
	test_reports = rp[0];
	test_orders = cp[1];
	for (int got = 0; got < n;) {
		struct pollfd pfd = {.fd = test_reports, .events = POLLIN};
		ssize_t k;

		cr_assert_eq(poll(&pfd, 1, 20000), 1, "tree not ready: %d/%d",
		    got, n);
		k = read(test_reports, buf, sizeof(buf));
		cr_assert_gt(k, 0, "tree died: %d/%d ready", got, n);
		got += (int)k;
	}
}

/* Sends C to the tree's root, then waits for one more "ready" byte. */
static void
order(char c)
{
	char b;

	cr_assert_eq(write(test_orders, &c, 1), 1);
	cr_assert_eq(read(test_reports, &b, 1), 1);
}

/* Waits in the tree's root for an order from the test. */
static void
await_order(void)
{
	char b;

	if (read(tree_in, &b, 1) != 1)
		_exit(94);
}

/*
 * The tree of the main test; 9 processes, 14 tasks:
 *   root                    1 thread
 *    +- g1                  4 threads; the first one forks gg2
 *    |   +- gg2             (child of a thread that is not the leader)
 *    +- g2                  3 threads
 *    +- g3, g4              zombies (1 task each, rss 0)
 *    +- g5                  64 MiB touched
 *    +- g6
 *        +- gg1
 */
static void
big_tree(void)
{
	siginfo_t si;
	pid_t z;
	void *m;

	if (spawn() == 0) {
		threads(3, true);
		say('1');
		hang();
	}
	if (spawn() == 0) {
		threads(2, false);
		say('2');
		hang();
	}
	for (int i = 0; i < 2; i++) {
		if ((z = spawn()) == 0)
			_exit(0);
		if (waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT) != 0)
			_exit(95);
		say('z');
	}
	if (spawn() == 0) {
		m = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			_exit(96);
		memset(m, 1, 64 << 20);
		say('5');
		hang();
	}
	if (spawn() == 0) {
		if (spawn() == 0) {
			say('g');
			hang();
		}
		say('6');
		hang();
	}
	say('r');
	hang();
}

/* A pool: the root touches 64 MiB, then 5 children share those pages
 * without writing them (issue 23, point 8). */
static void
pool_tree(void)
{
	char *m = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		_exit(96);
	memset(m, 1, 64 << 20);
	for (int i = 0; i < 5; i++)
		if (spawn() == 0) {
			say('c');
			hang();
		}
	say('r');
	hang();
}

/* The resident sum counts the shared 64 MiB six times; the Pss sum once
 * (within the few MiB of the processes' own pages), never more than the
 * resident sum, from a walk the still tree lets settle at once. */
Test(sample, pss_counts_a_shared_page_once)
{
	struct usage_walker w;
	struct jail_usage u, p;

	start_tree(pool_tree, 6);
	cr_assert_eq(usage_walker_init(&w, 16), 0);
	cr_assert_eq(usage_walk(&w, proc_fd, tree, &u), 0);
	cr_assert_eq(u.processes, 6);
	cr_assert_geq(u.rss_bytes, (uint64_t)6 * (64 << 20), "rss %llu",
	    (unsigned long long)u.rss_bytes);
	cr_assert_eq(usage_pss_settled(&w, proc_fd, tree, 3, 1000, &p), 0);
	cr_assert_eq(p.processes, 6);
	cr_assert_eq(p.pss_fallbacks, 0);
	cr_assert_eq(p.vanished, 0);
	cr_assert_geq(p.rss_bytes, (uint64_t)64 << 20, "pss %llu",
	    (unsigned long long)p.rss_bytes);
	/* Six sharers of 64 MiB: the resident sum counts it six times, the
	 * Pss sum once, plus each process's own pages (more of them under
	 * valgrind, whose every process carries its own runtime): at most
	 * half the resident sum either way. */
	cr_assert_leq(p.rss_bytes, u.rss_bytes / 2, "pss %llu, rss %llu",
	    (unsigned long long)p.rss_bytes, (unsigned long long)u.rss_bytes);
	usage_walker_free(&w);
}

Test(sample, counts_a_real_tree)
{
	struct usage_walker w;
	struct jail_usage u;

	start_tree(big_tree, 9);
	cr_assert_eq(usage_sample(proc_fd, tree, 64, &u), 0);
	cr_assert_eq(u.processes, 9);
	cr_assert_eq(u.tasks, 14);
	cr_assert_geq(u.rss_bytes, (uint64_t)64 << 20, "rss %llu",
	    (unsigned long long)u.rss_bytes);
	/* A kept walker gives the same figures, sample after sample. */
	cr_assert_eq(usage_walker_init(&w, 9), 0);
	for (int i = 0; i < 50; i++) {
		cr_assert_eq(usage_walk(&w, proc_fd, tree, &u), 0);
		cr_assert_eq(u.processes, 9);
		cr_assert_eq(u.tasks, 14);
	}
	usage_walker_free(&w);
	usage_walker_free(&w);
}

Test(sample, stops_past_max_procs)
{
	struct jail_usage u;

	start_tree(big_tree, 9);
	cr_assert_eq(usage_sample(proc_fd, tree, 8, &u), -E2BIG);
	cr_assert_eq(u.processes, 8);
	cr_assert_eq(usage_sample(proc_fd, tree, 4, &u), -E2BIG);
	cr_assert_eq(u.processes, 4);
	cr_assert_eq(usage_sample(proc_fd, tree, 1, &u), -E2BIG);
	cr_assert_eq(u.processes, 1);
	cr_assert_eq(u.tasks, 1);
	cr_assert_eq(usage_sample(proc_fd, tree, 9, &u), 0);
	cr_assert_eq(u.processes, 9);
	cr_assert_eq(usage_sample(proc_fd, tree, 0, &u), -EINVAL);
}

Test(sample, reaped_root_is_esrch)
{
	struct jail_usage u;
	pid_t p = fork();

	cr_assert_geq(p, 0);
	if (p == 0)
		_exit(0);
	cr_assert_eq(waitpid(p, NULL, 0), p);
	cr_assert_eq(usage_sample(proc_fd, p, 16, &u), -ESRCH);
	cr_assert_eq(u.processes, 0);
	cr_assert_eq(usage_sample(proc_fd, 0, 16, &u), -EINVAL);
}

static void
zombie_root(void)
{
	_exit(0);
}

/* A root that exited but is not reaped is still a process. */
Test(sample, zombie_root_counts)
{
	struct jail_usage u;
	siginfo_t si;

	start_tree(zombie_root, 0);
	cr_assert_eq(waitid(P_PID, (id_t)tree, &si, WEXITED | WNOWAIT), 0);
	cr_assert_eq(usage_sample(proc_fd, tree, 4, &u), 0);
	cr_assert_eq(u.processes, 1);
	cr_assert_eq(u.rss_bytes, 0);
}

static void
spinner(void)
{
	if (spawn() == 0) {
		spin(300);
		say('s');
		hang();
	}
	hang();
}

Test(sample, cpu_of_a_living_process)
{
	struct jail_usage u;

	start_tree(spinner, 1);
	cr_assert_eq(usage_sample(proc_fd, tree, 4, &u), 0);
	cr_assert_eq(u.processes, 2);
	cr_assert_geq(u.cpu_ms, 200, "cpu_ms %llu",
	    (unsigned long long)u.cpu_ms);
}

/* The root is a subreaper, like the jail's init; an orphan spins, ends,
 * is a zombie of the root, then is reaped by it. */
static void
reaper(void)
{
	siginfo_t si;
	pid_t g;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		_exit(97);
	if ((g = spawn()) == 0) {
		if (fork() == 0) {
			spin(300);
			_exit(0);
		}
		_exit(0);
	}
	if (waitpid(g, NULL, 0) != g) /* the orphan comes to the root */
		_exit(98);
	if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) != 0)
		_exit(99);
	say('z');
	await_order();
	if (waitpid(-1, NULL, 0) <= 0)
		_exit(100);
	say('r');
	hang();
}

/* usage.c: a dead process is counted once, in its own stat while a
 * zombie and in its reaper's cutime after. */
Test(sample, cpu_of_a_reaped_orphan_counts_once)
{
	struct jail_usage zombie, reaped;

	start_tree(reaper, 1);
	cr_assert_eq(usage_sample(proc_fd, tree, 4, &zombie), 0);
	cr_assert_eq(zombie.processes, 2);
	cr_assert_geq(zombie.cpu_ms, 200, "cpu_ms %llu",
	    (unsigned long long)zombie.cpu_ms);
	order('w');
	cr_assert_eq(usage_sample(proc_fd, tree, 4, &reaped), 0);
	cr_assert_eq(reaped.processes, 1);
	cr_assert_geq(reaped.cpu_ms, 200);
	/* Not lost and not counted twice (a tick or two of rounding). */
	cr_assert_lt(reaped.cpu_ms, zombie.cpu_ms + 100, "%llu then %llu",
	    (unsigned long long)zombie.cpu_ms,
	    (unsigned long long)reaped.cpu_ms);
	cr_assert_lt(zombie.cpu_ms, reaped.cpu_ms + 100);
}

static void *
nothing(void *arg)
{
	return arg;
}

static void *
thread_churn(void *arg)
{
	for (;;) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) == 0)
			pthread_join(t, NULL);
	}
	return arg;
}

/* Processes and threads appear and vanish all the time. */
static void
churner(void)
{
	pthread_t t;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		_exit(97);
	if (pthread_create(&t, NULL, thread_churn, NULL) != 0)
		_exit(92);
	say('c');
	for (;;) {
		pid_t p = fork();

		if (p == 0) {
			if (fork() == 0)
				_exit(0);
			_exit(0);
		}
		waitpid(p, NULL, 0);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			; /* orphans: this root is their subreaper */
	}
}

Test(sample, vanishing_processes_are_skipped)
{
	struct usage_walker w;
	struct jail_usage u;

	start_tree(churner, 1);
	cr_assert_eq(usage_walker_init(&w, 64), 0);
	/* About 0.5 s; some hundred processes and threads vanish between
	 * being listed and being read. */
	for (int i = 0; i < 20000; i++) {
		int r = usage_walk(&w, proc_fd, tree, &u);

		cr_assert_eq(r, 0, "sample %d: %s", i, strerror(-r));
		cr_assert_geq(u.processes, 1);
		cr_assert_geq(u.tasks, 1);
	}
	usage_walker_free(&w);
}

static void *
thread_grow(void *arg)
{
	void *m = mmap(NULL, 64 << 20, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		_exit(96);
	/* The child first, so that it does not share the touched pages. */
	if (spawn() == 0) {
		say('c');
		hang();
	}
	memset(m, 1, 64 << 20);
	say('t');
	hang();
	return arg;
}

/* The leader calls pthread_exit: /proc/PID/stat then shows a zombie
 * without memory, while a thread of it holds 64 MiB and has a child. */
static void
dead_leader(void)
{
	pthread_t t;

	if (spawn() == 0) {
		if (pthread_create(&t, NULL, thread_grow, NULL) != 0)
			_exit(92);
		pthread_exit(NULL);
	}
	say('r');
	hang();
}

Test(sample, leader_gone_threads_running)
{
	struct jail_usage u;

	start_tree(dead_leader, 3);
	cr_assert_eq(usage_sample(proc_fd, tree, 8, &u), 0);
	cr_assert_eq(u.processes, 3);
	cr_assert_eq(u.tasks, 4); /* root, the zombie leader, its thread,
				    * the thread's child */
	cr_assert_geq(u.rss_bytes, (uint64_t)64 << 20, "rss %llu",
	    (unsigned long long)u.rss_bytes);
}

/*
 * usage_kernel_objects (issue 23, point 1): the root of the tree (not
 * counted: the jail's init) forks one holder of
 *   1,000 maps more than it had (one mapping split by mprotect),
 *   10 POSIX locks on every other byte of an unlinked file of /tmp,
 *   1 flock (a lock of the open file, shown under its descriptor),
 *   an epoll instance watching 3 pipe ends,
 *   2 files in flight in a unix socket (SCM_RIGHTS) and closed here.
 */
static void
kobj_holder(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char path[] = "/tmp/stockade-test-lock-XXXXXX", *m, one = 'x';
	char ctl[CMSG_SPACE(2 * sizeof(int))];
	struct epoll_event ev = {.events = EPOLLIN};
	struct iovec iov = {.iov_base = &one, .iov_len = 1};
	struct msghdr msg = {.msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = ctl,
	    .msg_controllen = sizeof(ctl)};
	struct cmsghdr *cm;
	int fd, fd2, ep, p[2], sv[2];

	if (spawn() != 0)
		hang();
	/* Only its own objects: what the test's runner left open (epoll
	 * instances among them) is closed. */
	if (dup2(tree_out, 3) != 3 || close_range(4, ~0u, 0) != 0)
		_exit(95);
	tree_out = 3;
	m = mmap(NULL, 1001 * (size_t)page, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(96);
	for (int i = 1; i < 1000; i += 2)
		if (mprotect(m + i * page, (size_t)page, PROT_READ) != 0)
			_exit(96);
	if ((fd = mkstemp(path)) < 0 || unlink(path) != 0)
		_exit(97);
	for (int i = 0; i < 10; i++) {
		struct flock l = {.l_type = F_WRLCK,
		    .l_whence = SEEK_SET,
		    .l_start = 2 * i,
		    .l_len = 1};

		if (fcntl(fd, F_SETLK, &l) != 0)
			_exit(97);
	}
	memcpy(path + strlen(path) - 6, "XXXXXX", 6);
	if ((fd2 = mkstemp(path)) < 0 || unlink(path) != 0 ||
	    flock(fd2, LOCK_EX) != 0)
		_exit(97);
	if (pipe(p) != 0 || (ep = epoll_create1(0)) < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) != 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0 || /* EPERM: a file */
	    epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &ev) != 0)
		_exit(98);
	if ((fd = dup(p[0])) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		_exit(98);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(p) != 0)
		_exit(99);
	if ((cm = CMSG_FIRSTHDR(&msg)) == NULL)
		_exit(99);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
	memcpy(CMSG_DATA(cm), p, sizeof(p));
	if (sendmsg(sv[0], &msg, 0) != 1)
		_exit(99);
	close(p[0]);
	close(p[1]);
	say('k');
	hang();
}

/* The maps of the process PID, counted here (lines of its maps file). */
static uint64_t
maps_of(pid_t pid)
{
	char path[64], buf[65536];
	uint64_t n = 0;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%d/maps", (int)pid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			n += buf[i] == '\n';
	close(fd);
	return n;
}

TestSuite(kobj, .init = tree_setup, .fini = tree_teardown, .timeout = 60);

Test(kobj, counts_every_form)
{
	struct usage_walker w;
	struct kernel_objects k;
	pid_t holder = -1;
	char path[64];
	FILE *f;

	start_tree(kobj_holder, 1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)tree,
	    (int)tree);
	cr_assert_not_null(f = fopen(path, "re"));
	cr_assert_eq(fscanf(f, "%d", &holder), 1);
	fclose(f);
	cr_assert_eq(usage_walker_init(&w, 16), 0);
	cr_assert_eq(usage_kernel_objects(&w, proc_fd, tree, UINT64_MAX, &k),
	    0);
	cr_assert_eq(k.watches, 3, "watches %llu",
	    (unsigned long long)k.watches);
	cr_assert_eq(k.locks, 11, "locks %llu", (unsigned long long)k.locks);
	cr_assert_eq(k.inflight, 2, "in flight %llu",
	    (unsigned long long)k.inflight);
	/* The holder's maps, not the root's (init is not counted). */
	cr_assert_geq(k.maps, 1000);
	cr_assert_eq(k.maps, maps_of(holder), "maps %llu",
	    (unsigned long long)k.maps);
	cr_assert_eq(k.unreadable, 0);
	cr_assert_eq(usage_kobj_bytes(&k),
	    3 * EPOLL_WATCH_BYTES + k.maps * KOBJ_VMA_BYTES +
		11 * KOBJ_LOCK_BYTES + 2 * KOBJ_INFLIGHT_BYTES);
	/* The cap stops the count with a lower bound: a fifth of the
	 * holder's maps' worth. */
	cr_assert_eq(usage_kernel_objects(&w, proc_fd, tree,
			 200 * KOBJ_VMA_BYTES, &k),
	    -E2BIG);
	cr_assert_geq(usage_kobj_bytes(&k), 200 * KOBJ_VMA_BYTES);
	usage_walker_free(&w);
}

/* A holder that makes itself non-dumpable: a reader of its uid without
 * CAP_SYS_PTRACE may not open its maps (proc(5), ptrace access mode
 * checking). A grandchild of the tree's root: a child of the root that
 * cannot be read is the jail's payload before its exec, not charged
 * (usage_kobj.c). */
static void
undumpable_holder(void)
{
	if (spawn() != 0)
		hang();
	if (spawn() != 0)
		hang();
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		_exit(96);
	say('u');
	hang();
}

/* A process whose maps cannot be read is charged vm.max_map_count maps,
 * not skipped (fail closed); a child of the root that cannot be read
 * (the payload before its exec) is not. As root, the test first becomes
 * 65534 (a reader without CAP_SYS_PTRACE). */
Test(kobj, unreadable_process_charged)
{
	struct usage_walker w;
	struct kernel_objects k;
	unsigned long max = 0;
	FILE *f;

	if (geteuid() == 0) {
		cr_assert_eq(setgroups(0, NULL), 0);
		cr_assert_eq(setresgid(65534, 65534, 65534), 0);
		cr_assert_eq(setresuid(65534, 65534, 65534), 0);
		cr_assert_eq(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
	}
	cr_assert_not_null(f = fopen("/proc/sys/vm/max_map_count", "re"));
	cr_assert_eq(fscanf(f, "%lu", &max), 1);
	fclose(f);
	start_tree(undumpable_holder, 1);
	cr_assert_eq(usage_walker_init(&w, 16), 0);
	cr_assert_eq(usage_kernel_objects(&w, proc_fd, tree, UINT64_MAX, &k),
	    0);
	cr_assert_eq(k.unreadable, 1);
	cr_assert_geq(k.maps, max, "maps %llu", (unsigned long long)k.maps);
	/* And the charge stops a job at any limit under it. */
	cr_assert_eq(usage_kernel_objects(&w, proc_fd, tree,
			 max * KOBJ_VMA_BYTES, &k),
	    -E2BIG);
	usage_walker_free(&w);
}

/* The root's own child made non-dumpable, as the payload is before its
 * exec (init's memory). */
static void
undumpable_child(void)
{
	if (spawn() != 0)
		hang();
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		_exit(96);
	say('u');
	hang();
}

/* An unreadable child of the root is the payload before its exec: not
 * charged, so an unprivileged launcher's job is not charged 13.7 MiB of
 * maps it never made. As root, the test first becomes 65534. */
Test(kobj, unreadable_child_of_root_not_charged)
{
	struct usage_walker w;
	struct kernel_objects k;

	if (geteuid() == 0) {
		cr_assert_eq(setgroups(0, NULL), 0);
		cr_assert_eq(setresgid(65534, 65534, 65534), 0);
		cr_assert_eq(setresuid(65534, 65534, 65534), 0);
		cr_assert_eq(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
	}
	start_tree(undumpable_child, 1);
	cr_assert_eq(usage_walker_init(&w, 16), 0);
	cr_assert_eq(usage_kernel_objects(&w, proc_fd, tree, UINT64_MAX, &k),
	    0);
	cr_assert_eq(k.unreadable, 0);
	cr_assert_lt(k.maps, 65530u, "maps %llu", (unsigned long long)k.maps);
	usage_walker_free(&w);
}

/* A holder of 1,000 maps whose leader ends before its thread: its own
 * maps file is then empty, its thread's is not (proc(5)). */
static void
leader_gone_holder(void)
{
	long page = sysconf(_SC_PAGESIZE);
	pthread_t t;
	char *m;

	if (spawn() != 0)
		hang();
	m = mmap(NULL, 1001 * (size_t)page, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		_exit(96);
	for (int i = 1; i < 1000; i += 2)
		if (mprotect(m + i * page, (size_t)page, PROT_READ) != 0)
			_exit(96);
	if (pthread_create(&t, NULL, thread_hang, NULL) != 0)
		_exit(92);
	say('l');
	pthread_exit(NULL);
}

Test(kobj, leader_gone_read_through_a_thread)
{
	struct usage_walker w;
	struct kernel_objects k;
	struct timespec pause_ms = {.tv_nsec = 10 * 1000 * 1000};
	pid_t holder = -1;
	char path[64], state = '?';
	FILE *f;

	start_tree(leader_gone_holder, 1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)tree,
	    (int)tree);
	cr_assert_not_null(f = fopen(path, "re"));
	cr_assert_eq(fscanf(f, "%d", &holder), 1);
	fclose(f);
	/* Wait for the leader to be a zombie (pthread_exit after say). */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)holder);
	for (int i = 0; i < 500 && state != 'Z'; i++) {
		cr_assert_not_null(f = fopen(path, "re"));
		cr_assert_eq(fscanf(f, "%*d (%*[^)]) %c", &state), 1);
		fclose(f);
		if (state != 'Z')
			nanosleep(&pause_ms, NULL);
	}
	cr_assert_eq(state, 'Z');
	cr_assert_eq(maps_of(holder), 0);
	cr_assert_eq(usage_walker_init(&w, 16), 0);
	cr_assert_eq(usage_kernel_objects(&w, proc_fd, tree, UINT64_MAX, &k),
	    0);
	cr_assert_geq(k.maps, 1000, "maps %llu", (unsigned long long)k.maps);
	usage_walker_free(&w);
}
