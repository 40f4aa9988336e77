/* enforce.c: see enforce.h. */
#include "enforce.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "fdcharge.h"
#include "launcher.h"
#include "usage.h"
#include "utf8.h"
#include "plant.h"

/* Sampling periods, ms: fast once the jail is past half of its memory
 * limit (a C program touches a few GB/s), slow otherwise. */
#define TICK_FAST_MS 10u
#define TICK_SLOW_MS 40u
/* The least time between two counts of kernel objects, ms (count_kobj). */
#define ENFORCE_KOBJ_MS 250u
#define WS_STATFS_MS 50u
#define WS_WALK_MS 250u
/* Processes one walk lists with layer limits off (no process limit to
 * size it by); past it the figures are a lower bound. */
#define UNLIMITED_WALK 4096u
/* Bounds of the exact count of the workspace. */
#define WALK_MAX_DEPTH 256u
#define WALK_MAX_ENTRIES 10000000u

static double
mib(uint64_t bytes)
{
	return (double)bytes / 1048576.0;
}

/* Used bytes of the file system holding FD, or -errno. */
static int
fs_used(int fd, uint64_t *used)
{
	struct statfs sf;
	uint64_t unit;

	if (fstatfs(fd, &sf) < 0)
		return -errno;
	unit = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
	*used = ((uint64_t)sf.f_blocks - (uint64_t)sf.f_bfree) * unit;
	return 0;
}

/*
 * Disk space of every entry beneath ROOT (st_blocks * 512, bytes; 1/n of
 * a file with n hard links at each), never following a link, as the
 * broker counts a job's use of the quota (fsapi.h used_disk; a sparse
 * file costs its blocks, an empty directory its block). -E2BIG past the walk's
 * bounds and -EACCES for a directory that cannot be read: what it holds
 * is unknown, and the caller counts the workspace as full (fail closed).
 */
static int
workspace_bytes(int root, uint64_t *total)
{
	DIR *stack[WALK_MAX_DEPTH];
	size_t depth = 0;
	uint64_t entries = 0;
	int fd, e = 0;

	*total = 0;
	fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (stack[0] = fdopendir(fd)) == NULL) {
		e = -errno;
		if (fd >= 0)
			close(fd);
		return e;
	}
	depth = 1;
	while (depth > 0) {
		DIR *d = stack[depth - 1];
		struct dirent *de;
		struct stat st;
		int sub;

		errno = 0;
		de = readdir(d);
		if (de == NULL) {
			if (errno != 0 && e == 0)
				e = -errno;
			closedir(stack[--depth]);
			continue;
		}
		if (e < 0 || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++entries > WALK_MAX_ENTRIES) {
			e = -E2BIG;
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		/* Every entry costs its blocks (empty directories, long
		 * symlinks too); hard links share theirs. */
		if (S_ISDIR(st.st_mode) || st.st_nlink <= 1)
			*total += (uint64_t)st.st_blocks * 512u;
		else
			*total += (uint64_t)st.st_blocks * 512u /
				  (uint64_t)st.st_nlink;
		if (!S_ISDIR(st.st_mode))
			continue;
		if (depth == WALK_MAX_DEPTH) {
			e = -E2BIG;
			continue;
		}
		sub = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			if (errno != ENOENT)
				e = errno == EACCES || errno == EPERM ? -EACCES :
									-errno;
			continue;
		}
		if ((stack[depth] = fdopendir(sub)) == NULL) {
			e = -errno;
			close(sub);
			continue;
		}
		depth++;
	}
	return e;
}

/* The slot of PID in TABLE (CAP slots, a power of two): its own, or the
 * empty one where it goes. Never full: CAP is twice the processes. */
static struct cpu_seen *
slot_of(struct cpu_seen *table, size_t cap, pid_t pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (cap - 1);

	while (table[i].pid != 0 && table[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &table[i];
}

/*
 * The first LEN - 1 bytes at most of the file PATH under DIRFD into BUF,
 * NUL-terminated. Returns the bytes read, or -1 when the file cannot be
 * opened or read (a process gone, a file the kernel lacks).
 */
static ssize_t
read_small(int dirfd, const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/*
 * The number that follows KEY in /proc/PID/FILE (the first 2 KiB of it),
 * read through PROC_FD; 0 when the file is gone or unreadable or has no
 * KEY. For the one-line figures of proc(5) files (status, net/sockstat).
 */
static uint64_t
proc_number(int proc_fd, pid_t pid, const char *file, const char *key)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, file);
	if (read_small(proc_fd, path, buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, key)) == NULL)
		return 0;
	return (uint64_t)strtoull(p + strlen(key), NULL, 10);
}

/*
 * Bytes of page tables of process PID: "VmPTE:" of /proc/PID/status
 * (proc(5), kB), or 0 when it is gone or unreadable. Page tables are
 * kernel memory that no resident set includes: a read-only anonymous
 * mapping touched once every 2 MiB costs a 4 KiB page table for each
 * touch and no resident page (the zero page), and RLIMIT_AS, the only
 * other bound, is not set (docs/layers.md, "Memory the monitor cannot
 * see").
 */
static uint64_t
read_vmpte(int proc_fd, pid_t pid)
{
	return proc_number(proc_fd, pid, "status", "\nVmPTE:") * 1024u;
}

/* usage_walker's hook: banks what each process ran since the last walk
 * (all of it for a process not seen before) and keeps it for the next.
 * A pid reused within the job shows less time than before: it counts as
 * new. The CPU a process spends after the last walk that saw it alive is
 * lost to this count (the live sum of enforcer_tick still has it when
 * its parent waited for it). */
static void
follow_cpu(void *arg, const struct proc_stat *st)
{
	struct enforcer *e = arg;
	uint64_t own = st->utime_ticks + st->stime_ticks;
	struct cpu_seen *was = slot_of(e->seen, e->seen_cap, st->pid);
	struct cpu_seen *now = slot_of(e->seen_next, e->seen_cap, st->pid);

	if (was->pid == st->pid && own >= was->ticks) {
		e->cpu_ticks += own - was->ticks;
	} else {
		e->cpu_ticks += own;
		e->new_procs++;
	}
	now->pid = st->pid;
	now->ticks = own;
	if (!PLANTED(monitor_page_tables_uncounted))
		e->pte_walk += read_vmpte(e->proc_fd, st->pid);
	if (!PLANTED(monitor_descriptors_uncharged))
		fdcharge_process(&e->fds, st->pid);
}

/* After a walk: the processes it saw become the ones to compare with. */
static void
swap_seen(struct enforcer *e)
{
	struct cpu_seen *t = e->seen;

	e->seen = e->seen_next;
	e->seen_next = t;
	memset(e->seen_next, 0, e->seen_cap * sizeof(*e->seen_next));
}

/* A whole decimal number read from the file PATH under DIRFD, or -1. */
static long long
read_number(int dirfd, const char *path)
{
	char buf[64];

	if (read_small(dirfd, path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/*
 * The monitor's charge per socket of the jail (docs/layers.md, "Memory
 * the monitor cannot see"): socket buffers are kernel memory no process
 * maps. A socket's queues hold at most its send buffer plus one skb of
 * up to half of it (unix_stream_sendmsg: the sender's sk_wmem_alloc
 * below sk_sndbuf before each skb) and as much again in its receive
 * buffer (TCP, UDP), with SO_SNDBUF and SO_RCVBUF refused under the
 * monitor (seccomp.c) and TCP's autotuning capped at the defaults by
 * jail init (init/jail_init.c): 3/2 of wmem_default plus rmem_default
 * (socket(7); 624 KiB with the kernel's defaults). Returns 0 when INIT
 * shares the launcher's network namespace (layer network_ns off: its
 * count is the host's) or its sockstat cannot be seen, else the charge
 * in bytes.
 */
static uint64_t
socket_charge(int proc_fd, pid_t init)
{
	struct stat jail, own;
	char path[64];
	long long w, r;

	/* /proc/PID/ns/net needs ptrace access, which the confined
	 * launcher lacks; each network namespace's /proc/net entries have
	 * inode numbers of their own (proc_alloc_inum). */
	snprintf(path, sizeof(path), "%d/net/sockstat", (int)init);
	if (fstatat(proc_fd, path, &jail, 0) < 0 ||
	    fstatat(proc_fd, "self/net/sockstat", &own, 0) < 0 ||
	    (jail.st_dev == own.st_dev && jail.st_ino == own.st_ino))
		return 0;
	w = read_number(proc_fd, "sys/net/core/wmem_default");
	r = read_number(proc_fd, "sys/net/core/rmem_default");
	if (w <= 0)
		w = 212992; /* the kernel's default, SK_WMEM_MAX */
	if (r <= 0)
		r = 212992;
	return (uint64_t)(w + r) * 3 / 2;
}

/*
 * Sockets of the jail's network namespace now: "sockets: used N" of
 * /proc/INIT/net/sockstat, a count per network namespace (every socket
 * made there, unix ones included; sock_inuse_get, Linux 4.16). 0 when it
 * cannot be read (the jail is gone).
 */
static uint32_t
jail_sockets(int proc_fd, pid_t init)
{
	uint64_t n = proc_number(proc_fd, init, "net/sockstat",
				 "sockets: used ");

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

int
enforcer_init(struct enforcer *e, const struct job_limits *lim,
	      enum job_enforcement mode, int cg_leaf, pid_t init_pid,
	      int proc_fd, int wsfd, uint64_t ws_allow, uint64_t now_ms,
	      bool unlimited)
{
	size_t procs = (unlimited && lim->nproc < UNLIMITED_WALK ?
			UNLIMITED_WALK : (size_t)lim->nproc) + 16;

	memset(e, 0, sizeof(*e));
	e->unlimited = unlimited;
	e->lim = lim;
	e->mode = mode;
	e->cg_leaf = mode == ENFORCE_CGROUP2 ? cg_leaf : -1;
	e->init_pid = init_pid;
	e->proc_fd = proc_fd;
	e->ws_allow = ws_allow;
	e->ws_fd = fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
	if (e->ws_fd < 0)
		return -errno;
	/* The process limit bounds the tasks, so the processes too; a tree
	 * past it is -E2BIG, which counts as at the limit. */
	if (mode == ENFORCE_MONITOR) {
		if (usage_walker_init(&e->walker, procs) < 0)
			return -ENOMEM;
		for (e->seen_cap = 64; e->seen_cap < 2 * procs;)
			e->seen_cap *= 2;
		e->seen = calloc(e->seen_cap, sizeof(*e->seen));
		e->seen_next = calloc(e->seen_cap, sizeof(*e->seen_next));
		if (e->seen == NULL || e->seen_next == NULL)
			return -ENOMEM;
		e->walker.each = follow_cpu;
		e->walker.each_arg = e;
		fdcharge_init(&e->fds, proc_fd);
		if (!PLANTED(monitor_sockets_uncharged))
			e->sock_bytes = socket_charge(proc_fd, init_pid);
	}
	if (fs_used(e->ws_fd, &e->ws_used0) < 0)
		e->ws_used0 = 0;
	e->next_tick_ms = now_ms; /* a first look at once */
	e->next_ws_ms = now_ms + WS_STATFS_MS;
	e->next_walk_ms = now_ms;
	return 0;
}

int
enforcer_wait_ms(const struct enforcer *e, uint64_t now_ms)
{
	uint64_t next = e->next_tick_ms < e->next_ws_ms ? e->next_tick_ms :
							  e->next_ws_ms;

	return next <= now_ms ? 0 : (int)(next - now_ms);
}

static enum enforce_reason
stop(struct enforcer *e, enum enforce_reason why)
{
	if (e->reason == ENF_NONE)
		e->reason = why;
	return e->reason;
}

/* The process rule of enforce.h, for TASKS seen now. */
static enum enforce_reason
check_tasks(struct enforcer *e, uint32_t tasks, bool refused, uint64_t now)
{
	uint32_t max = e->lim->nproc;

	if (tasks > e->peak_tasks)
		e->peak_tasks = tasks;
	if (e->unlimited)
		return ENF_NONE;
	if (tasks >= max || refused) {
		if (!e->pids_at)
			e->pids_episodes++;
		e->pids_at = true;
		e->pids_hit = true;
		if (e->pids_since_ms == 0)
			e->pids_since_ms = now ? now : 1;
	}
	else
		e->pids_at = false;
	if (e->pids_since_ms == 0)
		return ENF_NONE;
	if ((uint64_t)tasks * 4 < (uint64_t)max * 3) {
		e->pids_since_ms = 0;
		return ENF_NONE;
	}
	if (now - e->pids_since_ms < ENFORCE_PIDS_HOLD_MS)
		return ENF_NONE;
	fmt_words(e->detail, sizeof(e->detail), "held at its limit of %u "
		 "processes and threads for %u ms", max, ENFORCE_PIDS_HOLD_MS);
	return stop(e, ENF_PROCESSES);
}

/* The memory rule: MEM, measured by MEASURE (enum job_memory_measure;
 * RSS_SUM is the summed resident sets, which the Pss sum replaced when
 * it was past the limit), against the limit; CPU_MS against cpu_ms. */
static enum enforce_reason
check_memory_cpu(struct enforcer *e, uint64_t mem, uint8_t measure,
		 uint64_t rss_sum, uint64_t cpu_ms)
{
	/* No measure this time (MEASURE 0): CPU only. */
	if (measure != 0 && (mem > e->peak_rss_bytes || e->peak_measure == 0)) {
		e->peak_rss_bytes = mem;
		e->peak_measure = measure;
	}
	if (cpu_ms > e->cpu_ms)
		e->cpu_ms = cpu_ms;
	if (e->unlimited)
		return ENF_NONE;
	if (measure == 0)
		mem = 0;
	if (mem > e->lim->memory_bytes && measure == MEASURE_PSS_SUM) {
		fmt_words(e->detail, sizeof(e->detail), "memory %.1f MiB over "
			 "the limit of %.1f MiB (proportional set sizes summed, "
			 "a shared page once; resident sets summed: %.1f MiB)",
			 mib(mem), mib(e->lim->memory_bytes), mib(rss_sum));
		return stop(e, ENF_MEMORY);
	}
	if (mem > e->lim->memory_bytes) {
		fmt_words(e->detail, sizeof(e->detail), "memory %.1f MiB over "
			 "the limit of %.1f MiB (%s)", mib(mem),
			 mib(e->lim->memory_bytes),
			 measure == MEASURE_CGROUP ? "the cgroup's memory.peak" :
						     "resident sets summed");
		return stop(e, ENF_MEMORY);
	}
	if (cpu_ms >= e->lim->cpu_ms) {
		fmt_words(e->detail, sizeof(e->detail), "%llu ms of CPU time "
			 "reached the limit of %llu ms",
			 (unsigned long long)cpu_ms,
			 (unsigned long long)e->lim->cpu_ms);
		return stop(e, ENF_CPU);
	}
	return ENF_NONE;
}

/*
 * The jail's memory with each shared page once, for a sample U whose
 * resident sum passed LIMIT (bytes: the memory limit less what the
 * monitor charges beside resident memory) at NOW (job ms); sets *MEASURE. A Pss
 * walk costs about 0.5 us per page mapped per process (docs/benchmarks.md),
 * so it runs at most once per 4 times its own last cost (the monitor
 * spends at most a fifth of its time on it); between walks the figure is
 * the last walk's plus what the resident sum grew since, and a figure
 * past the limit calls a walk at once: a job is never stopped on the
 * estimate. What the estimate misses (a page shared at the last walk
 * that a process has since written, its copy now its own) waits for the
 * next walk, and is bounded by the resident sum. A walk that found no
 * still moment gives no figure (*MEASURE 0) up to ENFORCE_PSS_UNSETTLED
 * times in a row; any other failure leaves the resident sum (fail
 * closed).
 */
static uint64_t
shared_once(struct enforcer *e, const struct jail_usage *u, uint64_t limit,
	    uint64_t now, uint8_t *measure)
{
	struct jail_usage p;
	struct timespec t0, t1;
	uint64_t cost_ms, grown;
	int y;

	*measure = MEASURE_RSS_SUM;
	if (e->pss_valid && now < e->pss_next_ms) {
		grown = u->rss_bytes > e->pss_rss_at ?
				u->rss_bytes - e->pss_rss_at : 0;
		if (e->pss_last + grown <= limit) {
			*measure = MEASURE_PSS_SUM;
			return e->pss_last + grown;
		}
	}
	memset(&p, 0, sizeof(p));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (e->measure_pss != NULL)
		y = e->measure_pss(e->measure_arg,
				   (uint32_t)e->walker.max_procs, &p.rss_bytes,
				   &p.resident_bytes);
	else
		y = usage_pss_settled(&e->walker, e->proc_fd, e->init_pid, 3,
				      2000, &p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cost_ms = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000u +
		  (uint64_t)((t1.tv_nsec - t0.tv_nsec) / 1000000);
	e->pss_walks++;
	e->pss_next_ms = now + (4 * cost_ms > TICK_FAST_MS ? 4 * cost_ms :
							      TICK_FAST_MS);
	if (y == 0 && p.rss_bytes <= u->rss_bytes) {
		/* Pages counted once per mapping of them (a fork's shared
		 * pages, a file mapped many times, a library's pages
		 * shared with the host's processes): by this much resident
		 * sets, the kernel's ru_maxrss among them, overstate the
		 * jail (enforcer_finish). The resident sum of the same walk,
		 * not the sample's before it: a process that ended in
		 * between is no sharing. */
		if (p.resident_bytes > p.rss_bytes &&
		    p.resident_bytes - p.rss_bytes > e->pss_overstated)
			e->pss_overstated = p.resident_bytes - p.rss_bytes;
		e->pss_unsettled = 0;
		e->pss_valid = true;
		e->pss_last = p.rss_bytes;
		e->pss_rss_at = u->rss_bytes;
		*measure = MEASURE_PSS_SUM;
		return p.rss_bytes;
	}
	e->pss_valid = false;
	if (y == -ETIME) {
		/* The wall clock ran out while the zygote walked: the job
		 * ends by its timeout, not on a figure never measured. */
		*measure = 0;
		return 0;
	}
	if (y == -EAGAIN && ++e->pss_unsettled <= ENFORCE_PSS_UNSETTLED) {
		/* Processes came and went through every walk (a pool
		 * ending its workers): no figure this time, the next
		 * sample decides; a job that keeps it up gets the
		 * resident sum. */
		*measure = 0;
		return 0;
	}
	return u->rss_bytes;
}

/*
 * The kernel objects of the jail no resident set holds (e->kobj: epoll
 * watches, memory maps, file locks, files in flight in unix sockets),
 * counted again when NOW (job ms) has reached e->kobj_next_ms. A watch
 * outlives the descriptor it was added under while its file stays open
 * (epoll(7)): one process limited to 256 descriptors held 461,280 of
 * them (88 MiB); a process may have vm.max_map_count (65,530) maps, 6
 * of them held 79 MiB under --memory 32; no rlimit bounds locks
 * (RLIMIT_LOCKS is not enforced, getrlimit(2)): 126,000 in 9 s held 23
 * MiB (docs/layers.md). Only a count bounds them. The count reads every
 * process's maps and every descriptor's fdinfo, so it runs every
 * ENFORCE_KOBJ_MS and never more often than once per 4 times its own
 * last cost (a fifth of the monitor's time at most). It stops at the
 * objects the whole limit would buy (a larger count changes nothing). A
 * count that fails keeps the last figures; a lower bound (-E2BIG) is
 * taken as it is, the cap itself being over the limit.
 */
static void
count_kobj(struct enforcer *e, uint64_t now)
{
	struct timespec t0, t1;
	struct kernel_objects k;
	uint64_t cost_ms;
	int y;

	if (now < e->kobj_next_ms)
		return;
	memset(&k, 0, sizeof(k));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (e->measure_kobj != NULL)
		y = e->measure_kobj(e->measure_arg,
				    (uint32_t)e->walker.max_procs,
				    e->lim->memory_bytes + 1, &k);
	else
		y = usage_kernel_objects(&e->walker, e->proc_fd, e->init_pid,
					 e->lim->memory_bytes + 1, &k);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cost_ms = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000u +
		  (uint64_t)((t1.tv_nsec - t0.tv_nsec) / 1000000);
	e->kobj_next_ms = now + (4 * cost_ms > ENFORCE_KOBJ_MS ?
					 4 * cost_ms : ENFORCE_KOBJ_MS);
	if (y != 0 && y != -E2BIG)
		return;
	if (PLANTED(monitor_epoll_uncharged))
		k.watches = 0;
	if (PLANTED(monitor_maps_uncharged))
		k.maps = 0;
	if (PLANTED(monitor_locks_uncharged))
		k.locks = 0;
	e->kobj = k;
}

/*
 * Writes to E's detail why the job is over its memory limit when one
 * form of kernel object counted by count_kobj is an eighth of the limit
 * or more (the largest such form), with RSS the resident sum; returns
 * whether it wrote.
 */
static bool
kobj_detail(struct enforcer *e, uint64_t rss)
{
	const struct kernel_objects *k = &e->kobj;
	const struct {
		uint64_t n;
		unsigned each;
		const char *what;
	} f[] = {
		{k->watches, EPOLL_WATCH_BYTES, "epoll watches"},
		{k->maps, KOBJ_VMA_BYTES, "memory maps"},
		{k->locks, KOBJ_LOCK_BYTES, "file locks"},
		{k->inflight, KOBJ_INFLIGHT_BYTES,
		 "files in flight in unix sockets"},
	};
	size_t best = 0;

	for (size_t i = 1; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].n * f[i].each > f[best].n * f[best].each)
			best = i;
	if (f[best].n * f[best].each * 8 < e->lim->memory_bytes)
		return false;
	fmt_words(e->detail, sizeof(e->detail), "resident memory %.1f MiB "
		  "and %llu %s (%.1f MiB of kernel memory, %u bytes each) "
		  "over the limit of %.1f MiB", mib(rss),
		  (unsigned long long)f[best].n, f[best].what,
		  mib(f[best].n * f[best].each), f[best].each,
		  mib(e->lim->memory_bytes));
	return true;
}

static enum enforce_reason
sample(struct enforcer *e, uint64_t now)
{
	enum enforce_reason r;

	if (e->mode == ENFORCE_CGROUP2) {
		struct cg_stats cs;

		if (cg_leaf_stats(e->cg_leaf, &cs) < 0)
			return ENF_NONE;
		if (cs.oom_kill > 0) {
			fmt_words(e->detail, sizeof(e->detail), "the kernel's OOM "
				 "killer ran in the job's cgroup (memory.max "
				 "%.1f MiB)", mib(e->lim->memory_bytes));
			return stop(e, ENF_MEMORY);
		}
		uint64_t m = cs.memory_peak > cs.memory_current ?
				     cs.memory_peak : cs.memory_current;

		r = check_memory_cpu(e, m, MEASURE_CGROUP, m,
				     cs.cpu_usage_usec / 1000u);
		/* memory.max holds memory itself; only CPU is ours. */
		if (r == ENF_MEMORY) {
			e->reason = ENF_NONE;
			e->detail[0] = '\0';
			r = ENF_NONE;
		}
		if (r != ENF_NONE)
			return r;
		return check_tasks(e, (uint32_t)cs.pids_current,
				   cs.pids_max_events > 0, now);
	} else {
		struct jail_usage u;
		uint64_t hz = e->walker.clk_tck, banked, charge, mem;
		uint8_t measure = MEASURE_RSS_SUM;
		int x;

		e->new_procs = 0;
		e->pte_walk = 0;
		fdcharge_begin(&e->fds);
		x = usage_walk(&e->walker, e->proc_fd, e->init_pid, &u);

		if (x < 0 && x != -E2BIG) {
			memset(e->seen_next, 0,
			       e->seen_cap * sizeof(*e->seen_next));
			return ENF_NONE;
		}
		/* What is banked for vanished processes stays banked; the
		 * table now holds only the living. */
		swap_seen(e);
		banked = e->cpu_ticks / hz * 1000 + e->cpu_ticks % hz * 1000 / hz;
		/* Socket buffers and page tables, which no resident set
		 * holds: sockets charged at their bound (socket_charge). */
		e->pte_bytes = e->pte_walk;
		e->sockets = e->sock_bytes > 0 ?
				     jail_sockets(e->proc_fd, e->init_pid) : 0;
		count_kobj(e, now);
		charge = (uint64_t)e->sockets * e->sock_bytes + e->pte_bytes +
			 usage_kobj_bytes(&e->kobj);
		charge += fdcharge_end(&e->fds);
		/* Past the limit by the cheap sum, which counts a page once
		 * per process mapping it: measure again counting it once
		 * (usage.h), against what the charge leaves of the limit. A
		 * walk that cannot be done leaves the resident sum, an upper
		 * bound, to decide (fail closed). */
		mem = u.rss_bytes;
		if (charge < e->lim->memory_bytes &&
		    u.rss_bytes > e->lim->memory_bytes - charge &&
		    !PLANTED(shared_pages_counted_per_process))
			mem = shared_once(e, &u, e->lim->memory_bytes - charge,
					  now, &measure);
		r = check_memory_cpu(e, mem > UINT64_MAX - charge ? UINT64_MAX :
					 mem + charge, measure, u.rss_bytes,
				     banked > u.cpu_ms ? banked : u.cpu_ms);
		if (r == ENF_MEMORY && kobj_detail(e, u.rss_bytes))
			;
		else if (r == ENF_MEMORY && e->fds.bytes > 0)
			fmt_words(e->detail, sizeof(e->detail), "resident memory "
				 "%.1f MiB and %llu open descriptors (%.1f MiB "
				 "of pipe buffers they can pin) over the limit "
				 "of %.1f MiB", mib(u.rss_bytes),
				 (unsigned long long)e->fds.descriptors,
				 mib(e->fds.bytes), mib(e->lim->memory_bytes));
		else if (r == ENF_MEMORY && e->sockets > 0)
			fmt_words(e->detail, sizeof(e->detail), "resident memory, "
				 "%.1f MiB of page tables and the buffers of %u "
				 "sockets (%.0f KiB each) over the limit of %.1f "
				 "MiB", mib(e->pte_bytes), e->sockets,
				 (double)e->sock_bytes / 1024.0,
				 mib(e->lim->memory_bytes));
		else if (r == ENF_MEMORY && e->pte_bytes > u.rss_bytes)
			fmt_words(e->detail, sizeof(e->detail), "resident memory "
				 "%.1f MiB and %.1f MiB of page tables over the "
				 "limit of %.1f MiB", mib(u.rss_bytes),
				 mib(e->pte_bytes), mib(e->lim->memory_bytes));
		if (r != ENF_NONE)
			return r;
		return check_tasks(e, x == -E2BIG && !e->unlimited ?
					   e->lim->nproc : u.tasks,
				   false, now);
	}
}

static enum enforce_reason
check_workspace(struct enforcer *e, uint64_t now)
{
	/* Both are set by the calls below before use; zeroed because gcc
	 * -O2 cannot see it (-Wmaybe-uninitialized in a release build). */
	uint64_t used = 0, total = 0;
	int x;

	if (e->unlimited || fs_used(e->ws_fd, &used) < 0 ||
	    used <= e->ws_used0 || used - e->ws_used0 <= e->ws_allow ||
	    now < e->next_walk_ms)
		return ENF_NONE;
	/* The file system grew by more than the job may add: count. Others
	 * may write to the same file system; only the count decides. */
	e->next_walk_ms = now + WS_WALK_MS;
	x = workspace_bytes(e->ws_fd, &total);
	if (x == 0 && total <= e->lim->workspace_bytes)
		return ENF_NONE;
	if (x < 0)
		fmt_words(e->detail, sizeof(e->detail), "the workspace grew by "
			 "%.1f MiB and could not be counted (%s): counted as "
			 "full", mib(used - e->ws_used0), strerror(-x));
	else
		fmt_words(e->detail, sizeof(e->detail), "/work takes "
			 "%.1f MiB of disk, over its quota of %.1f MiB", mib(total),
			 mib(e->lim->workspace_bytes));
	return stop(e, ENF_WORKSPACE);
}

enum enforce_reason
enforcer_tick(struct enforcer *e, uint64_t now_ms)
{
	enum enforce_reason r = ENF_NONE;

	if (e->reason != ENF_NONE)
		return e->reason;
	if (now_ms >= e->next_tick_ms) {
		r = sample(e, now_ms);
		/* Fast while memory is past half its limit, while the jail
		 * is at its process limit, and while processes come and go
		 * (short-lived ones are what a slow sample misses). */
		e->next_tick_ms = now_ms +
			(e->peak_rss_bytes * 2 >= e->lim->memory_bytes ||
			 e->pids_since_ms != 0 || e->new_procs > 0 ?
				 TICK_FAST_MS : TICK_SLOW_MS);
	}
	if (r == ENF_NONE && now_ms >= e->next_ws_ms) {
		r = check_workspace(e, now_ms);
		e->next_ws_ms = now_ms + WS_STATFS_MS;
	}
	return r;
}

void
enforcer_tasks_at_exit(struct enforcer *e, uint32_t tasks)
{
	if (tasks > e->peak_tasks)
		e->peak_tasks = tasks;
	if (e->unlimited || tasks < e->lim->nproc)
		return;
	if (!e->pids_at)
		e->pids_episodes++;
	e->pids_at = true;
	e->pids_hit = true;
}

void
enforcer_finish(struct enforcer *e, const struct rusage *ru)
{
	uint64_t cpu = (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) *
			       1000u +
		       (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) /
			       1000u;
	uint64_t maxrss = (uint64_t)ru->ru_maxrss * 1024u;

	if (e->mode == ENFORCE_CGROUP2) {
		struct cg_stats cs;

		if (cg_leaf_stats(e->cg_leaf, &cs) == 0) {
			if (cs.memory_peak > e->peak_rss_bytes)
				e->peak_rss_bytes = cs.memory_peak;
			if (cs.cpu_usage_usec / 1000u > cpu)
				cpu = cs.cpu_usage_usec / 1000u;
			if (cs.pids_max_events > 0) {
				e->pids_hit = true;
				e->pids_episodes = cs.pids_max_events >
							   UINT32_MAX ?
					UINT32_MAX : (uint32_t)cs.pids_max_events;
			}
			if (cs.oom_kill > 0 && e->reason == ENF_NONE) {
				fmt_words(e->detail, sizeof(e->detail),
					 "the kernel's OOM killer ran in the "
					 "job's cgroup (memory.max %.1f MiB)",
					 mib(e->lim->memory_bytes));
				e->reason = ENF_MEMORY;
			}
		}
	}
	if (cpu > e->cpu_ms)
		e->cpu_ms = cpu;
	/* The largest resident set of one process (init's children, the
	 * kernel's own peak): a floor for the resident sum, the limit
	 * passed between two samples. Once a Pss walk found resident sets
	 * over the shares (a page counted once per mapping of it: a
	 * process mapping a 4 MiB file 1000 times has 4 GiB of it), the
	 * floor is taken less that excess and at most at the limit: a
	 * resident set past the limit is then no proof of a limit passed
	 * (it was a memory_limit the job never held), while a single
	 * process that grew past the limit between two samples until
	 * RLIMIT_DATA stopped it (a Python memory bomb under load, its
	 * libraries shared with the host's processes) still shows memory
	 * at the limit, which backs its "MemoryError" (broker/jobrun.c). */
	if (e->pss_overstated > 0) {
		maxrss = maxrss > e->pss_overstated ?
				 maxrss - e->pss_overstated : 0;
		if (maxrss > e->lim->memory_bytes)
			maxrss = e->lim->memory_bytes;
	}
	if (maxrss > e->peak_rss_bytes) {
		e->peak_rss_bytes = maxrss;
		if (e->peak_measure == 0)
			e->peak_measure = MEASURE_RSS_SUM;
	}
	if (e->peak_measure == 0)
		e->peak_measure = e->mode == ENFORCE_CGROUP2 ? MEASURE_CGROUP :
							       MEASURE_RSS_SUM;
}

void
enforcer_free(struct enforcer *e)
{
	if (e->ws_fd >= 0)
		close(e->ws_fd);
	e->ws_fd = -1;
	usage_walker_free(&e->walker);
	free(e->seen);
	free(e->seen_next);
	e->seen = e->seen_next = NULL;
}

/*
 * Makes the launcher's own cgroup DIR, a delegated scope, usable for job
 * leaves: our processes move to a leaf of it and the controllers are
 * enabled for its children (cg_claim_own; cgroup-v2.rst, "No Internal
 * Process Constraint"). Sets L->cg_why and returns -errno when it cannot.
 */
static int
claim_own(struct launcher *l, const char *dir)
{
	char why[256];
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), e;

	if (fd < 0) {
		e = -errno;
		snprintf(l->cg_why, sizeof(l->cg_why), "cgroup %.200s: %.250s", dir,
			 strerror(-e));
		return e;
	}
	e = cg_claim_own(fd, getppid(), getpid(), l->zygote.pid, true, why,
			 sizeof(why));
	if (e == -EOPNOTSUPP)
		e = cg_claim_own(fd, getppid(), getpid(), l->zygote.pid, false,
				 why, sizeof(why));
	close(fd);
	if (e < 0)
		snprintf(l->cg_why, sizeof(l->cg_why), "cgroup %.200s: %.250s", dir,
			 why);
	return e;
}

/* Looks up (once per path) the delegated cgroup for SPEC into L. */
static void
lookup_parent(struct launcher *l, const struct job_spec *spec)
{
	char own[PATH_MAX];
	const char *path = spec->cgroup != NULL ? spec->cgroup : "";
	char *slash;
	int e;

	if (l->cg_path != NULL && strcmp(l->cg_path, path) == 0)
		return;
	if (l->cg_parent >= 0)
		close(l->cg_parent);
	l->cg_parent = -1;
	free(l->cg_path);
	l->cg_path = strdup(path);
	l->cg_why[0] = '\0';
	if (path[0] == '\0') {
		if ((e = cg_own_path_self(own, sizeof(own))) < 0) {
			snprintf(l->cg_why, sizeof(l->cg_why), "the launcher is "
				 "in no cgroup v2 (%s): name a delegated one with "
				 "[limits] cgroup", strerror(-e));
			return;
		}
		/* A launcher the broker restarted was born in the leaf its
		 * predecessor moved them to: the scope is the parent. */
		slash = strrchr(own, '/');
		if (slash != NULL && slash != own &&
		    strcmp(slash + 1, CG_SUPERVISOR) == 0)
			*slash = '\0';
		if (claim_own(l, own) < 0)
			return;
		path = own;
	}
	l->cg_parent = cg_open_parent(path, true, l->cg_why,
				      sizeof(l->cg_why));
	if (l->cg_parent < 0) {
		l->cg_parent = -1;
		/* Without cpu it may still serve jobs that need no cpu.max. */
		l->cg_parent = cg_open_parent(path, false, l->cg_why,
					      sizeof(l->cg_why));
		if (l->cg_parent < 0)
			l->cg_parent = -1;
	}
}

int
enforce_choose(struct launcher *l, const struct job_spec *spec,
	       const char *name, enum job_enforcement *mode, int *leaf,
	       char *why, size_t whylen)
{
	struct cg_limits cl = {
		.memory_max = spec->limits.memory_bytes,
		.pids_max = spec->limits.nproc,
		.cpu_percent = spec->limits.cpu_percent,
	};

	*leaf = -1;
	*mode = ENFORCE_MONITOR;
	if (job_spec_layer_off(spec, JOB_LAYER_LIMITS))
		return 0;
	if (spec->enforcement != ENFORCE_MONITOR) {
		lookup_parent(l, spec);
		if (l->cg_parent >= 0) {
			*leaf = cg_leaf_create(l->cg_parent, name, &cl);
			if (*leaf >= 0) {
				*mode = ENFORCE_CGROUP2;
				return 0;
			}
			snprintf(l->cg_why, sizeof(l->cg_why), "cannot make the "
				 "job's cgroup leaf %s: %s (cpu.max needs the cpu "
				 "controller in cgroup.subtree_control)", name,
				 strerror(-*leaf));
			*leaf = -1;
		}
	}
	if (spec->enforcement == ENFORCE_CGROUP2) {
		fmt_words(why, whylen, "the policy asks for cgroup2 enforcement "
			 "and there is no usable delegated cgroup v2: %s",
			 l->cg_why);
		return -EPERM;
	}
	if (spec->limits.cpu_percent > 0) {
		if (spec->enforcement == ENFORCE_MONITOR)
			fmt_words(why, whylen, "the policy sets cpu_percent = %u, "
				 "which needs cgroup2 enforcement (cpu.max), and "
				 "enforcement = monitor", spec->limits.cpu_percent);
		else
			fmt_words(why, whylen, "the policy sets cpu_percent = %u, "
				 "which needs a delegated cgroup v2 (cpu.max), and "
				 "there is none: %s", spec->limits.cpu_percent,
				 l->cg_why);
		return -EPERM;
	}
	return 0;
}
