/*
 * check_broker_death.c: boundary.broker_death_kills_jail (check.h,
 * check_boundary.h; its entry is in check_broker_side.c's table): what
 * becomes of a jail whose broker, the real `stockade run`, is killed
 * with SIGKILL in the middle of a job. Every process under it is noted
 * from /proc first, and whatever a defect leaves alive is killed.
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

/* ---- a broker that dies ------------------------------------------------ */

/* The heartbeat job's period, ms, and its number of beats (5 s of them:
 * the job's own end, should everything else fail). */
#define BEAT_MS 20
#define BEATS "250"
/* How soon after the broker's death its jail must be gone, ms. */
#define BROKER_DEATH_MS 1000
/* At most this many processes under one `stockade run` are followed. */
#define TREE_MAX 64

/* A process, by pid and start time (a pid may be reused). */
struct proc_id {
	pid_t pid, ppid;
	unsigned long long start;
	char comm[20];
};

/* Reads /proc/PID/stat into P; returns false when PID is gone or a
 * zombie (dead: its jail, if it had one, with it). */
static bool
proc_read(pid_t pid, struct proc_id *p)
{
	char path[64], st[1024], state, *rp, *lp;
	long ppid;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, st, sizeof(st) - 1);
	close(fd);
	if (n <= 0)
		return false;
	st[n] = '\0';
	/* "pid (comm) state ppid ... starttime(22) ...": comm holds anything */
	if ((lp = strchr(st, '(')) == NULL || (rp = strrchr(st, ')')) == NULL ||
	    sscanf(rp + 1,
		" %c %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
		"%*s %*s %*s %*s %*s %*s %*s %llu",
		&state, &ppid, &p->start) != 3)
		return false;
	p->pid = pid;
	p->ppid = (pid_t)ppid;
	snprintf(p->comm, sizeof(p->comm), "%.*s", (int)(rp - lp - 1), lp + 1);
	return state != 'Z' && state != 'X';
}

/* Every live descendant of ROOT into T (at most TREE_MAX, parents before
 * their children); returns how many. */
static size_t
proc_tree(pid_t root, struct proc_id *t)
{
	struct proc_id *all = NULL, *grown, p;
	size_t nall = 0, cap = 0, n = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    !proc_read((pid_t)atol(de->d_name), &p))
			continue;
		if (nall == cap) {
			cap = cap == 0 ? 512 : cap * 2;
			if ((grown = reallocarray(all, cap, sizeof(*all))) ==
			    NULL)
				break;
			all = grown;
		}
		all[nall++] = p;
	}
	if (d != NULL)
		closedir(d);
	/* Breadth first: each pid's children, the root's first. */
	for (size_t k = 0; k <= n && n < TREE_MAX; k++) {
		pid_t parent = k == 0 ? root : t[k - 1].pid;

		for (size_t i = 0; i < nall && n < TREE_MAX; i++)
			if (all[i].ppid == parent)
				t[n++] = all[i];
	}
	free(all);
	return n;
}

/* How many of T's N processes still live; the first into *FIRST. */
static size_t
proc_alive(const struct proc_id *t, size_t n, size_t *first)
{
	struct proc_id p;
	size_t alive = 0;

	for (size_t i = n; i-- > 0;)
		if (proc_read(t[i].pid, &p) && p.start == t[i].start) {
			alive++;
			*first = i;
		}
	return alive;
}

/* Kills those of T's N processes still alive (what a defect left). */
static void
proc_kill(const struct proc_id *t, size_t n)
{
	struct proc_id p;

	for (size_t i = 0; i < n; i++)
		if (proc_read(t[i].pid, &p) && p.start == t[i].start)
			kill(t[i].pid, SIGKILL);
}

/*
 * Starts broker_death's job into B: a real `stockade run --json` in the
 * workspace WS whose probe appends a byte to MARK every BEAT_MS ms;
 * returns once the probe has run for two beats (its command line holds
 * MARK: a job's files are staged until it ends, issue 26, so the beats
 * themselves are not seen from the host while it runs). Returns false
 * when it could not start or never ran within 5 s (R failed, B ended).
 */
static bool
start_beating_job(struct check_ctx *c, struct check_result *r, const char *ws,
    const char *mark, struct bgrun *b)
{
	char put[4200], ms[16];
	int64_t t0;
	int e;

	snprintf(put, sizeof(put), "%s:stockade-probe", c->probe);
	snprintf(ms, sizeof(ms), "%d", BEAT_MS);
	const char *argv[] = {c->stockade, "run", "--json", "--workspace", ws,
	    "--put", put, "--", "./stockade-probe", "heartbeat", mark, ms,
	    BEATS, NULL};
	if ((e = bgrun_start(c, argv, b)) < 0) {
		check_fail(r, "cannot run %s: %s", c->stockade, strerror(-e));
		return false;
	}
	t0 = check_now_ms();
	while (!check_marked_process(mark)) {
		if (bgrun_poll(b, 5) || check_now_ms() - t0 > 5000) {
			bgrun_end(b);
			check_fail(r,
			    "the job never beat (stockade exit %d, "
			    "stdout %.150s, stderr %.150s)",
			    b->status, b->obuf, b->ebuf);
			return false;
		}
	}
	usleep(2 * BEAT_MS * 1000);
	return true;
}

/*
 * boundary.broker_death_kills_jail: a real `stockade run` whose job
 * appends a byte to "beat" every BEAT_MS ms; once it beats, every process
 * under stockade run (launcher, zygote, jail) is noted and stockade run,
 * the broker, is killed with SIGKILL. Within BROKER_DEATH_MS none of
 * them may remain and the heartbeat must have stopped: a jail that
 * outlives its broker runs on unwatched, its result never collected
 * (launcher/supervisor/main.c: PR_SET_PDEATHSIG, prctl(2); the launcher ends its
 * session, and kills the job, when the broker hangs up).
 */
void
boundary_broker_death(struct check_ctx *c, struct check_result *r)
{
	char ws[4096], names[120] = "", mark[64];
	struct proc_id tree[TREE_MAX];
	struct bgrun b;
	size_t n, alive = 0, first = 0;
	long long at_kill, at_end, later;
	int64_t t_kill, t_gone = 0;
	pid_t broker;
	int wsfd = -1, e, st;

	if ((e = check_workspace(c, ws, sizeof(ws))) < 0 ||
	    (wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		check_fail(r, "cannot make a workspace: %s",
		    strerror(e < 0 ? -e : errno));
		return;
	}
	snprintf(mark, sizeof(mark), "beat-%d-%lld", (int)getpid(),
	    (long long)check_now_ms());
	if (!start_beating_job(c, r, ws, mark, &b)) {
		close(wsfd);
		return;
	}
	n = proc_tree(b.pid, tree);
	broker = b.pid;
	/* The broker alone: its process group holds the launcher too. */
	kill(broker, SIGKILL);
	t_kill = check_now_ms();
	at_kill = check_marked_process(mark);
	while (waitpid(broker, &st, 0) < 0 && errno == EINTR)
		;
	b.pid = 0;
	while ((alive = proc_alive(tree, n, &first)) > 0 &&
	    check_now_ms() - t_kill < BROKER_DEATH_MS)
		usleep(10000);
	if (alive == 0)
		t_gone = check_now_ms();
	at_end = check_marked_process(mark);
	usleep(5 * BEAT_MS * 1000);
	later = check_marked_process(mark);
	proc_kill(tree, n);
	bgrun_end(&b);
	close(wsfd);
	for (size_t i = 0; i < n && i < 4; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names),
		    "%s%s", i > 0 ? ", " : "", tree[i].comm);
	if (n == 0)
		check_fail(r,
		    "stockade run (pid %d) had no process under it in "
		    "/proc while its job ran",
		    (int)broker);
	else if (alive > 0)
		check_fail(r,
		    "%zu of the %zu processes under the broker (%s) "
		    "alive %d ms after its SIGKILL mid-job, pid %d (%s) "
		    "among them; the beating probe ran at the kill (%lld), "
		    "at the end (%lld) and %d ms later (%lld): the jail "
		    "outlived its broker",
		    alive, n, names, BROKER_DEATH_MS, (int)tree[first].pid,
		    tree[first].comm, at_kill, at_end, 5 * BEAT_MS, later);
	else if (later || at_end)
		check_fail(r,
		    "every process under the broker gone, yet the "
		    "beating probe still ran (%lld at the end, %lld %d ms "
		    "later)",
		    at_end, later, 5 * BEAT_MS);
	else
		check_pass(r,
		    "the %zu processes under the broker (%s) gone "
		    "%lld ms after its SIGKILL mid-job; the beating "
		    "probe, running at the kill (%lld), gone with them",
		    n, names, (long long)(t_gone - t_kill), at_kill);
}
