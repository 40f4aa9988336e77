/*
 * jobbench.c: latency of jobs in `stockade serve` sessions (docs/
 * protocol.md, `exec`), timed at the client from the request written to
 * the result read. Run by bench/run, not by the tests.
 *
 *   jobbench --stockade BROKER --workspace DIR [--policy FILE]
 *            [--sessions N] [--warmup N] [--jobs N] [--settle-ms N]
 *            [--gap MS] [--memory] [--log FILE] -- PROGRAM [ARGS...]
 *
 * One session (the default): `BROKER serve --workspace DIR` on pipes,
 * WARMUP jobs (the first one starts the launcher), then JOBS jobs one
 * after another. With --sessions N (N > 1) the workspaces are DIR/000 to
 * DIR/N-1 (made by the caller, owned as the broker needs); all N sessions
 * are started and warmed up (one job each), then each runs JOBS jobs in
 * its own thread, all at once. With --gap MS each session sleeps MS
 * milliseconds between a result and its next request (the pace of an agent
 * that thinks between jobs; a pool has that long to refill); 0, the
 * default, sends them back to back. The sleep is not in the latency.
 *
 * Prints one JSON object on stdout: the latency figures in milliseconds
 * (median, p10, p90, p99, max, mean), jobs per second, failures (an
 * answer that is an error, a status other than "ok", a non-zero exit
 * code, a session that did not exit 0), the results' wall_ms and
 * peak_memory_kb, and what a session left behind: each broker's and
 * launcher's descriptor count before and after its jobs, the mount
 * count of /proc/self/mountinfo before and after,
 * and the processes still alive 2 s after every session exited (jobbench
 * is a child subreaper, PR_SET_CHILD_SUBREAPER in prctl(2), so every
 * orphan of a session becomes its child). With --memory (one session), the
 * session's processes (broker, spawner, launcher, zygote, waiting jails)
 * with VmRSS (/proc/PID/status) and Pss (/proc/PID/smaps_rollup) in KiB,
 * after the warm-up and again after the jobs, each SETTLE-MS after the
 * last job. Exit status 0 when every job succeeded and nothing leaked, 1
 * otherwise, 2 for usage or set-up errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "procstat.h"

#define MAX_SESSIONS 1000
#define MAX_LINE (16 << 20)

struct session {
	pid_t pid;
	int in, out; /* the broker's stdin (we write), stdout */
	char *buf;
	size_t len, cap;
	long id;
	double *lat; /* JOBS latencies, ms */
	double *peak; /* JOBS peak_memory_kb of the results */
	double *wall; /* JOBS wall_ms of the results */
	long done, failed;
	int fds_before, fds_after; /* the broker's */
	int lfds_before, lfds_after; /* its launcher's */
	double end_ms; /* when its last job was answered */
};

static const char *broker, *policy, *logpath, *wsroot;
static char *argv_json;
static long jobs = 100, warmup = 5, nsessions = 1, settle_ms = 300, gap_ms;
static bool memory;
static pthread_barrier_t barrier;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
fatal(const char *what)
{
	fprintf(stderr, "jobbench: %s: %s\n", what, strerror(errno));
	exit(2);
}

/*
 * Starts `broker serve --workspace WS [--policy P]` with its standard input
 * and output on pipes (close-on-exec here), standard error appended to
 * --log or inherited. Fills S->pid, S->in, S->out; exits 2 on failure.
 */
static void
session_start(struct session *s, const char *ws)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		fatal("pipe2");
	if ((pid = fork()) < 0)
		fatal("fork");
	if (pid == 0) {
		const char *av[] = {broker, "serve", "--workspace", ws,
		    policy ? "--policy" : NULL, policy, NULL};

		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(127);
		if (logpath != NULL) {
			int fd = open(logpath,
			    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

			if (fd < 0 || dup2(fd, 2) < 0)
				_exit(127);
		}
		execv(broker, (char *const *)(void *)av);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->pid = pid;
	s->in = in[1];
	s->out = out[0];
}

/* Reads one line from S into a fresh string (NUL-terminated, no '\n');
 * NULL at end of file or on error. The caller frees it. */
static char *
read_line(struct session *s)
{
	for (;;) {
		char *nl = s->len ? memchr(s->buf, '\n', s->len) : NULL;
		ssize_t n;

		if (nl != NULL) {
			size_t l = (size_t)(nl - s->buf);
			char *line = malloc(l + 1);

			if (line == NULL)
				fatal("malloc");
			memcpy(line, s->buf, l);
			line[l] = '\0';
			memmove(s->buf, nl + 1, s->len - l - 1);
			s->len -= l + 1;
			return line;
		}
		if (s->len == s->cap) {
			if (s->cap >= MAX_LINE)
				return NULL;
			s->cap = s->cap ? s->cap * 2 : 65536;
			if ((s->buf = realloc(s->buf, s->cap)) == NULL)
				fatal("realloc");
		}
		n = read(s->out, s->buf + s->len, s->cap - s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		s->len += (size_t)n;
	}
}

/*
 * Runs one job in S: writes the exec request, reads its answer. Returns
 * the latency in ms, *PEAK the result's peak_memory_kb (-1 if none), and
 * *OK whether it was a result with status "ok" and exit code 0.
 */
static double
job(struct session *s, double *peak, double *wall, bool *ok)
{
	char req[16384];
	json_t *ans, *res;
	char *line;
	double t0, t;
	int n;

	n = snprintf(req, sizeof(req),
	    "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
	    "\"method\":\"exec\",\"params\":{\"argv\":%s}}\n",
	    ++s->id, argv_json);
	if (n < 0 || (size_t)n >= sizeof(req)) {
		fprintf(stderr, "jobbench: argv too long\n");
		exit(2);
	}
	t0 = now_ms();
	for (int off = 0; off < n;) {
		ssize_t w = write(s->in, req + off, (size_t)(n - off));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*ok = false;
			*peak = *wall = -1;
			return now_ms() - t0;
		}
		off += (int)w;
	}
	line = read_line(s);
	t = now_ms() - t0;
	*ok = false;
	*peak = -1;
	*wall = -1;
	if (line == NULL)
		return t;
	ans = json_loads(line, 0, NULL);
	res = json_object_get(ans, "result");
	if (res != NULL) {
		json_t *st = json_object_get(res, "status");
		json_t *code = json_object_get(res, "exit_code");
		json_t *pk = json_object_get(res, "peak_memory_kb");
		json_t *wl = json_object_get(res, "wall_ms");

		*ok = json_is_string(st) &&
		    strcmp(json_string_value(st), "ok") == 0 &&
		    json_integer_value(code) == 0;
		if (json_is_integer(pk))
			*peak = (double)json_integer_value(pk);
		if (json_is_number(wl))
			*wall = json_number_value(wl);
	}
	if (!*ok)
		fprintf(stderr, "jobbench: session %d: %.500s\n", (int)s->pid,
		    line);
	json_decref(ans);
	free(line);
	return t;
}

/* Sleeps MS milliseconds (resumed after a signal). */
static void
sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
settle(void)
{
	sleep_ms(settle_ms);
}

static void *
session_thread(void *arg)
{
	struct session *s = arg;

	pthread_barrier_wait(&barrier);
	s->fds_before = count_fds(s->pid);
	s->lfds_before = count_fds(proc_child(s->pid, "stockade-launch"));
	for (long i = 0; i < jobs; i++) {
		bool ok;

		s->lat[i] = job(s, &s->peak[i], &s->wall[i], &ok);
		s->failed += !ok;
		s->done++;
		if (gap_ms > 0 && i + 1 < jobs)
			sleep_ms(gap_ms);
	}
	s->end_ms = now_ms();
	/* A pool refilling holds descriptors for a while: wait (at most 5 s)
	 * for the counts to come back; a leak never does. */
	for (int tries = 0; tries < 100; tries++) {
		s->fds_after = count_fds(s->pid);
		s->lfds_after = count_fds(
		    proc_child(s->pid, "stockade-launch"));
		if (s->fds_after == s->fds_before &&
		    s->lfds_after == s->lfds_before)
			break;
		usleep(50000);
	}
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The Q quantile (0..1) of the sorted V[0..N-1], linear between ranks. */
static double
quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;

	if (n == 0)
		return -1;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (v[i + 1] - v[i]) * (pos - (double)i);
}

static json_t *
stats(double *v, size_t n)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "median",
	    quantile(v, n, 0.5), "p10", quantile(v, n, 0.1), "p90",
	    quantile(v, n, 0.9), "p99", quantile(v, n, 0.99), "min",
	    n ? v[0] : -1.0, "max", n ? v[n - 1] : -1.0, "mean",
	    n ? sum / (double)n : -1.0);
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: jobbench --stockade BROKER --workspace DIR "
	    "[--policy FILE] [--sessions N] [--warmup N] [--jobs N] "
	    "[--settle-ms N] [--gap MS] [--memory] [--log FILE] "
	    "-- PROGRAM [ARGS...]\n");
	exit(2);
}

/* Parses a whole decimal number from MIN to MAX, or exits with usage. */
static long
number(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < min || v > max)
		usage();
	return v;
}

static void
parse_args(int argc, char **argv)
{
	json_t *av = json_array();
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "--memory") == 0) {
			memory = true;
			continue;
		}
		if (v == NULL)
			usage();
		i++;
		if (strcmp(o, "--stockade") == 0)
			broker = v;
		else if (strcmp(o, "--workspace") == 0)
			wsroot = v;
		else if (strcmp(o, "--policy") == 0)
			policy = v;
		else if (strcmp(o, "--log") == 0)
			logpath = v;
		else if (strcmp(o, "--sessions") == 0)
			nsessions = number(v, 1, MAX_SESSIONS);
		else if (strcmp(o, "--warmup") == 0)
			warmup = number(v, 1, 1000000);
		else if (strcmp(o, "--jobs") == 0)
			jobs = number(v, 1, 1000000);
		else if (strcmp(o, "--settle-ms") == 0)
			settle_ms = number(v, 0, 60000);
		else if (strcmp(o, "--gap") == 0)
			gap_ms = number(v, 0, 60000);
		else
			usage();
	}
	if (broker == NULL || wsroot == NULL || i + 1 >= argc ||
	    (memory && nsessions > 1))
		usage();
	for (i++; i < argc; i++)
		json_array_append_new(av, json_string(argv[i]));
	if ((argv_json = json_dumps(av, JSON_COMPACT)) == NULL)
		fatal("json_dumps");
	json_decref(av);
}

int
main(int argc, char **argv)
{
	struct session *ss;
	json_t *out, *idle = NULL, *after = NULL, *left;
	double *all, *peaks, *walls, t0, wall, start_ms;
	long failures = 0, bad_exit = 0, fd_changed = 0;
	long fds_before = 0, fds_after = 0, mounts_before, mounts_after;
	long lfds_before = 0, lfds_after = 0;
	size_t n = 0, np = 0, nw = 0;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		fatal("PR_SET_CHILD_SUBREAPER");
	if ((ss = calloc((size_t)nsessions, sizeof(*ss))) == NULL ||
	    (all = calloc((size_t)(nsessions * jobs), sizeof(*all))) == NULL ||
	    (peaks = calloc((size_t)(nsessions * jobs), sizeof(*peaks))) ==
		NULL ||
	    (walls = calloc((size_t)(nsessions * jobs), sizeof(*walls))) ==
		NULL)
		fatal("calloc");
	mounts_before = count_mounts();

	/* Start and warm up every session (its first job starts the launcher). */
	t0 = now_ms();
	for (long i = 0; i < nsessions; i++) {
		char ws[4096];

		if (nsessions == 1)
			snprintf(ws, sizeof(ws), "%s", wsroot);
		else
			snprintf(ws, sizeof(ws), "%s/%03ld", wsroot, i);
		session_start(&ss[i], ws);
		ss[i].lat = all + i * jobs;
		ss[i].peak = peaks + i * jobs;
		ss[i].wall = walls + i * jobs;
	}
	for (long i = 0; i < nsessions; i++)
		for (long w = 0; w < (nsessions == 1 ? warmup : 1); w++) {
			double pk, wl;
			bool ok;

			job(&ss[i], &pk, &wl, &ok);
			failures += !ok;
		}
	start_ms = now_ms() - t0;
	settle(); /* the pools refill (and the counts taken next settle) */
	if (memory)
		idle = proc_tree(ss[0].pid, true);

	/* The measured jobs: all sessions at once, one thread each. */
	if (pthread_barrier_init(&barrier, NULL, (unsigned)nsessions + 1) != 0)
		fatal("pthread_barrier_init");
	{
		pthread_t *th = calloc((size_t)nsessions, sizeof(*th));

		if (th == NULL)
			fatal("calloc");
		for (long i = 0; i < nsessions; i++)
			if ((errno = pthread_create(&th[i], NULL,
				 session_thread, &ss[i])) != 0)
				fatal("pthread_create");
		pthread_barrier_wait(&barrier);
		t0 = now_ms();
		wall = 0; /* to the last answer, not the checks after it */
		for (long i = 0; i < nsessions; i++) {
			pthread_join(th[i], NULL);
			if (ss[i].end_ms - t0 > wall)
				wall = ss[i].end_ms - t0;
		}
		free(th);
	}
	if (memory) {
		settle();
		after = proc_tree(ss[0].pid, true);
	}
	for (long i = 0; i < nsessions; i++) {
		failures += ss[i].failed;
		fds_before += ss[i].fds_before;
		fds_after += ss[i].fds_after;
		lfds_before += ss[i].lfds_before;
		lfds_after += ss[i].lfds_after;
		fd_changed += ss[i].fds_before != ss[i].fds_after ||
		    ss[i].fds_before < 0 ||
		    ss[i].lfds_before != ss[i].lfds_after;
		for (long j = 0; j < ss[i].done; j++) {
			all[n++] = ss[i].lat[j];
			if (ss[i].peak[j] >= 0) /* compacted in place */
				peaks[np++] = ss[i].peak[j];
			if (ss[i].wall[j] >= 0)
				walls[nw++] = ss[i].wall[j];
		}
	}

	/*
	 * End every session (end of input); each must exit 0 within 10 s
	 * (else it is killed and counted). Its output is not drained: a
	 * process it left behind may hold that pipe open.
	 */
	for (long i = 0; i < nsessions; i++)
		close(ss[i].in);
	t0 = now_ms();
	for (long i = 0; i < nsessions; i++) {
		int st;
		pid_t r;

		while ((r = waitpid(ss[i].pid, &st, WNOHANG)) == 0 &&
		    now_ms() - t0 < 10000)
			usleep(10000);
		if (r == 0) {
			kill(ss[i].pid, SIGKILL);
			r = waitpid(ss[i].pid, &st, 0);
		}
		if (r < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad_exit++;
		close(ss[i].out);
	}
	for (int tries = 0;; tries++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			; /* orphans that ended: reaped, not leaked */
		left = proc_tree(getpid(), false);
		if (json_array_size(left) == 0 || tries == 40)
			break;
		json_decref(left);
		usleep(50000);
	}
	mounts_after = count_mounts();
	for (size_t i = 0; i < json_array_size(left);
	     i++) /* reported; end them */
		kill((pid_t)json_integer_value(
			 json_object_get(json_array_get(left, i), "pid")),
		    SIGKILL);

	out = json_pack("{s:o,s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:o,s:o,s:o,"
			"s:{s:I,s:I,s:I,s:I,s:i},s:{s:i,s:i},s:o}",
	    "argv", json_loads(argv_json, 0, NULL), "sessions", (int)nsessions,
	    "jobs_per_session", (int)jobs, "jobs", (int)n, "failures",
	    (int)failures, "bad_exits", (int)bad_exit, "start_ms", start_ms,
	    "wall_ms", wall, "jobs_per_s",
	    wall > 0 ? (double)n / wall * 1e3 : 0.0, "latency_ms",
	    stats(all, n), "job_wall_ms", stats(walls, nw), "peak_memory_kb",
	    stats(peaks, np), "fds", "before", (json_int_t)fds_before, "after",
	    (json_int_t)fds_after, "launcher_before", (json_int_t)lfds_before,
	    "launcher_after", (json_int_t)lfds_after, "sessions_changed",
	    (int)fd_changed, "mounts", "before", (int)mounts_before, "after",
	    (int)mounts_after, "leaked", left);
	if (memory)
		json_object_set_new(out, "memory",
		    json_pack("{s:o,s:o}", "idle", idle, "after_jobs", after));
	json_dumpf(out, stdout, JSON_COMPACT);
	putchar('\n');
	return failures || bad_exit || fd_changed ||
	    json_array_size(json_object_get(out, "leaked")) ||
	    mounts_after != mounts_before;
}
