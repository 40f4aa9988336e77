/*
 * usage.c: the /proc sampler of the monitor enforcement (usage.h).
 *
 * CPU time. A sample sums utime+stime+cutime+cstime of every process alive
 * (zombies included) in the tree. A thread that ended is already in its
 * process's utime/stime (the kernel folds it into the signal struct). A
 * process that ended stays in the sum through its own stat while it is a
 * zombie, and from the wait(2) that reaps it on, through the cutime/cstime
 * of its reaper, which then includes the reaped child's own cutime/cstime
 * (proc(5): "waited-for children"; getrusage(2) RUSAGE_CHILDREN). In the
 * jail the reaper is always in the tree: the parent, or the jail's init,
 * which reaps every orphan. So each dead process is counted once, by
 * exactly one process of the tree, and the sum only grows.
 * The walk reads a parent before its children, so a child reaped between
 * the two reads is missed in that sample (neither in the parent's cutime
 * read before nor in its own vanished stat), never counted twice; the next
 * sample counts it again.
 * What this cannot see (times(2), wait(2)): a child that is never waited
 * for, because its parent set SIGCHLD to SIG_IGN or SA_NOCLDWAIT, is
 * released by the kernel without adding to anyone's cutime, so its CPU
 * leaves the sum when it ends. RLIMIT_CPU per process is the backstop for
 * that, and a cgroup's cpu.stat has no such gap.
 *
 * Memory is the sum of each process's resident set (stat field 24). Pages
 * shared between processes (a library, memory inherited through fork and
 * not yet written) are counted once per process that maps them, so the
 * sum is an upper bound of what the jail holds; memory.current of a cgroup
 * charges each page once. usage_walk_pss sums the proportional set sizes
 * instead (smaps_rollup's Pss: a page mapped by n processes counts 1/n in
 * each, so once in the sum), at the price of a walk of every process's
 * page tables; the enforcer asks for it only when the resident sum is
 * past the limit (enforce.c). Pss <= Rss for every process, so the
 * proportional sum never exceeds the resident one. A share depends on
 * the other processes mapping the page, so a walk is only a measure
 * when the tree held still during it: a sharer that exits after one
 * process was read and before another leaves the first one's share too
 * small (and one forked after its parent was read is not seen): a job
 * forking and ending processes through every walk could hide memory.
 * usage_pss_settled keeps a walk only when no process it listed vanished
 * and a walk right after it counts the same processes; else the caller
 * keeps the resident sum, an upper bound (fail closed).
 *
 * Pids: each pid read from a children file is checked when its stat is
 * read: its parent (field 4) must be the process it was listed under, or
 * the root (an orphan reparented to the jail's init meanwhile). A pid that
 * ended and was reused by an unrelated process between the two reads is
 * thereby not counted, nor walked into.
 *
 * System calls per process: openat, read, close of PID/stat; openat, read
 * (a second read only when it listed children), close of
 * PID/task/TID/children per thread; and, for a process with more than one
 * thread, openat, getdents64 and close of PID/task. Zombies are not
 * listed: a zombie has no children (they were reparented when it exited);
 * but see usage_walk for a leader that exited before its threads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "usage.h"
#include "usage_internal.h"

/* Fields 1 to 24 take at most 7 + 2 + 64 + 22 * 21 bytes (a kernel
 * thread's name may be longer than TASK_COMM_LEN); one read of this much
 * always holds them, whatever follows. */
#define STAT_BUF 1024
/* One children or task listing read; a seq_file returns at most a page. */
#define LIST_BUF 4096
/* No pid namespace has more pids than this (PID_MAX_LIMIT, linux/threads.h). */
#define PIDS_MAX (4 * 1024 * 1024)
/* What of smaps_rollup is read: its header line and the first counters
 * (Rss, Pss) fit in far less. */
#define PSS_BUF 1024

static int
parse_u64(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t n = 0;

	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (n > (UINT64_MAX - d) / 10)
			return -EINVAL;
		n = n * 10 + d;
	}
	*pp = p;
	*v = n;
	return 0;
}

/* A field we do not keep: an optional '-' then digits, of any length. */
static int
skip_num(const char **pp, const char *end)
{
	const char *p = *pp;

	if (p < end && *p == '-')
		p++;
	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	*pp = p;
	return 0;
}

static int
parse_stat(const char *buf, size_t len, struct proc_stat *st)
{
	const char *p = buf, *end = buf + len, *close;
	uint64_t v;

	/* "PID (COMM) S": the name ends at the last ')' (proc(5)). */
	if (parse_u64(&p, end, &v) < 0 || v == 0 || v > INT_MAX)
		return -EINVAL;
	st->pid = (pid_t)v;
	if (end - p < 2 || p[0] != ' ' || p[1] != '(')
		return -EINVAL;
	close = memrchr(p + 2, ')', (size_t)(end - p - 2));
	if (close == NULL)
		return -EINVAL;
	p = close + 1;
	if (end - p < 3 || p[0] != ' ' ||
	    !((p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' && p[1] <= 'z')))
		return -EINVAL;
	st->state = p[1];
	p += 2;

	for (int field = 4; field <= 24; field++) {
		if (p == end || *p != ' ')
			return -EINVAL;
		p++;
		if (field == 4 || field == 20 || field == 24 ||
		    (field >= 14 && field <= 17)) {
			if (parse_u64(&p, end, &v) < 0)
				return -EINVAL;
		} else {
			if (skip_num(&p, end) < 0)
				return -EINVAL;
			continue;
		}
		switch (field) {
		case 4:
			if (v > INT_MAX)
				return -EINVAL;
			st->ppid = (pid_t)v;
			break;
		case 14:
			st->utime_ticks = v;
			break;
		case 15:
			st->stime_ticks = v;
			break;
		case 16:
			st->cutime_ticks = v;
			break;
		case 17:
			st->cstime_ticks = v;
			break;
		case 20:
			if (v > UINT32_MAX)
				return -EINVAL;
			st->num_threads = (uint32_t)v;
			break;
		default:
			st->rss_pages = v;
			break;
		}
	}
	/* Field 24 must be whole: a separator follows it. */
	if (p == end || (*p != ' ' && *p != '\n'))
		return -EINVAL;
	return 0;
}

int
usage_parse_stat(const char *buf, size_t len, struct proc_stat *st)
{
	int r;

	memset(st, 0, sizeof(*st));
	if (buf == NULL || len == 0)
		return -EINVAL;
	r = parse_stat(buf, len, st);
	if (r < 0)
		memset(st, 0, sizeof(*st));
	return r;
}

int
usage_walker_init(struct usage_walker *w, size_t max_procs)
{
	long ps = sysconf(_SC_PAGESIZE), hz = sysconf(_SC_CLK_TCK);

	memset(w, 0, sizeof(*w));
	if (max_procs == 0 || max_procs > PIDS_MAX || ps <= 0 || hz <= 0)
		return -EINVAL;
	w->queue = calloc(max_procs * 2, sizeof(pid_t));
	if (w->queue == NULL)
		return -ENOMEM;
	w->max_procs = max_procs;
	w->page_size = (uint64_t)ps;
	w->clk_tck = (uint64_t)hz;
	return 0;
}

void
usage_walker_free(struct usage_walker *w)
{
	free(w->queue);
	w->queue = NULL;
	w->max_procs = 0;
}

/* One walk: queue[2i] is a pid, queue[2i+1] the process it was listed
 * under. With PSS, memory is each process's proportional set size. */
struct walk {
	struct usage_walker *w;
	int proc_fd;
	size_t tail;
	bool full;
	bool pss;
	uint64_t ticks;
};

static int
enqueue(struct walk *k, pid_t pid, pid_t parent)
{
	if (k->tail == k->w->max_procs) {
		k->full = true;
		return -E2BIG;
	}
	k->w->queue[2 * k->tail] = pid;
	k->w->queue[2 * k->tail + 1] = parent;
	k->tail++;
	return 0;
}

static ssize_t
read_retry(int fd, char *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Reads PID/stat, or PID/task/TID/stat when TID > 0. */
static int
read_stat(int proc_fd, pid_t pid, pid_t tid, struct proc_stat *st)
{
	char path[48], buf[STAT_BUF];
	ssize_t n;
	int fd;

	if (tid > 0)
		snprintf(path, sizeof(path), "%d/task/%d/stat", (int)pid,
		    (int)tid);
	else
		snprintf(path, sizeof(path), "%d/stat", (int)pid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = read_retry(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ESRCH;
	return usage_parse_stat(buf, (size_t)n, st);
}

/* Queues the pids listed in PID/task/TID/children ("%d " each). */
static int
read_children(struct walk *k, pid_t pid, pid_t tid)
{
	char path[48], buf[LIST_BUF];
	uint64_t cur = 0;
	bool digits = false;
	ssize_t n = 0;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%d/task/%d/children", (int)pid, (int)tid);
	fd = openat(k->proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	while (r == 0 && (n = read_retry(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && r == 0; i++) {
			char c = buf[i];

			if (c >= '0' && c <= '9') {
				cur = cur * 10 + (uint64_t)(c - '0');
				digits = true;
				if (cur > INT_MAX)
					r = -EINVAL;
			} else if ((c == ' ' || c == '\n') && digits) {
				r = enqueue(k, (pid_t)cur, pid);
				cur = 0;
				digits = false;
			} else if (c != ' ' && c != '\n') {
				r = -EINVAL;
			}
		}
	}
	if (r == 0 && n < 0)
		r = (int)n;
	if (r == 0 && digits)
		r = enqueue(k, (pid_t)cur, pid);
	close(fd);
	return r;
}

/* Queues the children of every thread of PID. With RSS, also sets *RSS
 * to the resident set read from the first living thread other than the
 * leader (see usage_walk). */
static int
list_children(struct walk *k, pid_t pid, uint32_t num_threads, uint64_t *rss)
{
	/* 8-aligned for struct dirent64. */
	union {
		char b[LIST_BUF];
		struct dirent64 d;
	} u;
	struct proc_stat st;
	char path[32];
	ssize_t n = 0;
	int fd, r = 0;

	/* One thread: its tid is the pid; no need to list PID/task. */
	if (num_threads <= 1)
		return read_children(k, pid, pid);
	snprintf(path, sizeof(path), "%d/task", (int)pid);
	fd = openat(k->proc_fd, path,
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	while (r == 0 && (n = getdents64(fd, u.b, sizeof(u.b))) > 0) {
		for (ssize_t off = 0; off < n && r == 0;) {
			const struct dirent64 *d =
			    (const struct dirent64 *)(const void *)(u.b + off);
			char *e;
			long tid;

			off += d->d_reclen;
			if (d->d_name[0] < '1' || d->d_name[0] > '9')
				continue;
			tid = strtol(d->d_name, &e, 10);
			if (*e != '\0' || tid > INT_MAX)
				continue;
			if (rss != NULL && tid != pid &&
			    read_stat(k->proc_fd, pid, (pid_t)tid, &st) == 0 &&
			    st.state != 'Z' && st.state != 'X') {
				*rss = st.rss_pages;
				rss = NULL;
			}
			r = read_children(k, pid, (pid_t)tid);
			if (vanished(r))
				r = 0; /* the thread ended */
		}
	}
	if (r == 0 && n < 0)
		r = -errno;
	close(fd);
	return r;
}

/*
 * Reads the "Pss:" line of PID/smaps_rollup (proc(5), Linux 4.14:
 * kB, the process's share of every page it maps, a page mapped by n
 * processes counting 1/n in each; shmem and tmpfs pages it maps are in
 * it, as Pss_Shmem) into *BYTES. Returns 0, -ENODATA when the file holds
 * no Pss line (a process with no mm any more: a zombie, a kernel
 * thread; smaps_rollup is then empty), or -errno of open/read (EACCES
 * when the process is not ours to inspect, ptrace access mode read).
 */
static int
read_pss(int proc_fd, pid_t pid, uint64_t *bytes)
{
	char path[48], buf[PSS_BUF];
	const char *p, *end;
	uint64_t kb;
	size_t len = 0;
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "%d/smaps_rollup", (int)pid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* The Pss line is the third of a short file: one buffer holds it. */
	while (len < sizeof(buf) - 1 &&
	    (n = read_retry(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (len == 0)
		return n < 0 ? (int)n : -ENODATA;
	buf[len] = '\0';
	p = strstr(buf, "\nPss:");
	if (p == NULL)
		return -ENODATA;
	p += 5;
	end = buf + len;
	while (p < end && *p == ' ')
		p++;
	if (parse_u64(&p, end, &kb) < 0 || kb > UINT64_MAX / 1024)
		return -EINVAL;
	*bytes = kb * 1024;
	return 0;
}

static int
finish(const struct walk *k, struct jail_usage *u, int r)
{
	uint64_t hz = k->w->clk_tck;

	u->cpu_ms = k->ticks / hz * 1000 + k->ticks % hz * 1000 / hz;
	return r;
}

/*
 * The memory walk K charges process PID, whose resident set is RSS bytes
 * (DEAD: a zombie leader, read through a living thread): RSS itself, or
 * with K->pss its proportional set size. A process whose share cannot be
 * read counts whole (fail closed: its resident set bounds its share;
 * U->pss_fallbacks counts it); one that let its memory go or is gone
 * counts nothing (U->vanished counts it).
 */
static uint64_t
charged_rss(const struct walk *k, struct jail_usage *u, pid_t pid, bool dead,
    uint64_t rss)
{
	/* A leader that exited before its threads has no mm of its own to
	 * read. */
	if (k->pss && !dead) {
		uint64_t share = 0;
		int y = read_pss(k->proc_fd, pid, &share);

		/* No Pss line, or no process: it has let its memory
		 * go (exit_mm) or is gone since its stat. It counts
		 * nothing, and the walk is no measure of the tree
		 * (usage_pss_settled): its parent's share of what
		 * they shared was read smaller, or will be larger. */
		if (y == -ENODATA || vanished(y)) {
			u->vanished++;
			return 0;
		}
		if (y == 0 && share <= rss)
			return share;
		u->pss_fallbacks++;
	} else if (k->pss) {
		u->pss_fallbacks += rss > 0;
	}
	return rss;
}

int
usage_walk_tree(struct usage_walker *w, int proc_fd, pid_t root_pid,
    struct jail_usage *u, bool pss)
{
	struct walk k = {.w = w, .proc_fd = proc_fd, .pss = pss};
	struct proc_stat st;
	uint64_t rss;
	bool dead;
	int r;

	memset(u, 0, sizeof(*u));
	if (w->queue == NULL || root_pid <= 0)
		return -EINVAL;
	enqueue(&k, root_pid, 0);
	for (size_t head = 0; head < k.tail; head++) {
		pid_t pid = w->queue[2 * head], parent = w->queue[2 * head + 1];

		r = read_stat(proc_fd, pid, 0, &st);
		if (vanished(r) && head == 0)
			return finish(&k, u, -ESRCH);
		if (vanished(r)) {
			u->vanished++;
			continue;
		}
		if (r < 0)
			return finish(&k, u, r);
		/* Not the child it was listed as: the pid was reused. */
		if (head > 0 && st.ppid != parent && st.ppid != root_pid)
			continue;
		u->processes++;
		u->pid_sum += (uint64_t)pid;
		u->pid_xor ^= (uint64_t)pid;
		if (w->each != NULL)
			w->each(w->each_arg, &st);
		u->tasks = u->tasks > UINT32_MAX - st.num_threads
		    ? UINT32_MAX
		    : u->tasks + st.num_threads;
		k.ticks = sat_add(k.ticks, st.utime_ticks);
		k.ticks = sat_add(k.ticks, st.stime_ticks);
		k.ticks = sat_add(k.ticks, st.cutime_ticks);
		k.ticks = sat_add(k.ticks, st.cstime_ticks);
		/*
		 * A zombie has no children (they were reparented when it
		 * exited). But a leader that called pthread_exit while other
		 * threads run is shown as a zombie too, with no memory (its
		 * task has no mm any more) while the process holds all of
		 * it: its threads are listed and a living one gives the rss.
		 */
		dead = st.state == 'Z' || st.state == 'X';
		rss = st.rss_pages;
		if (!k.full && (!dead || st.num_threads > 1)) {
			r = list_children(&k, pid, st.num_threads,
			    dead ? &rss : NULL);
			if (r < 0 && r != -E2BIG && !vanished(r))
				return finish(&k, u, r);
		}
		rss = rss > UINT64_MAX / w->page_size ? UINT64_MAX
						      : rss * w->page_size;
		u->resident_bytes = sat_add(u->resident_bytes, rss);
		rss = charged_rss(&k, u, pid, dead, rss);
		u->rss_bytes = sat_add(u->rss_bytes, rss);
	}
	return finish(&k, u, k.full ? -E2BIG : 0);
}

int
usage_walk(struct usage_walker *w, int proc_fd, pid_t root_pid,
    struct jail_usage *u)
{
	return usage_walk_tree(w, proc_fd, root_pid, u, false);
}

int
usage_walk_pss(struct usage_walker *w, int proc_fd, pid_t root_pid,
    struct jail_usage *u)
{
	void (*each)(void *, const struct proc_stat *) = w->each;
	int r;

	/* The caller's hook saw this tree in the usage_walk before. */
	w->each = NULL;
	r = usage_walk_tree(w, proc_fd, root_pid, u, true);
	w->each = each;
	return r;
}

int
usage_pss_settled(struct usage_walker *w, int proc_fd, pid_t root_pid,
    unsigned tries, unsigned gap_us, struct jail_usage *u)
{
	struct jail_usage after;
	int r = -EAGAIN, a;

	for (unsigned i = 0; i < tries; i++) {
		if (i > 0 && gap_us > 0)
			usleep(gap_us);
		r = usage_walk_pss(w, proc_fd, root_pid, u);
		if (r < 0 && r != -E2BIG)
			return r;
		a = usage_walk_tree(w, proc_fd, root_pid, &after, false);
		if (u->vanished == 0 && a == r &&
		    after.processes == u->processes &&
		    after.pid_sum == u->pid_sum && after.pid_xor == u->pid_xor)
			return r;
		r = -EAGAIN;
	}
	return r;
}

int
usage_sample(int proc_fd, pid_t root_pid, size_t max_procs,
    struct jail_usage *u)
{
	struct usage_walker w;
	int r;

	memset(u, 0, sizeof(*u));
	r = usage_walker_init(&w, max_procs);
	if (r < 0)
		return r;
	r = usage_walk(&w, proc_fd, root_pid, u);
	usage_walker_free(&w);
	return r;
}
