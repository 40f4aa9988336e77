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
#include "enforce_internal.h"

/* Sampling periods, ms: fast once the jail is past half of its memory
 * limit (a C program touches a few GB/s), slow otherwise. */
#define TICK_FAST_MS 10u
#define TICK_SLOW_MS 40u
#define TICK_FIRST_MS 2u /* the first sample, after the job's start */
#define WS_STATFS_MS 50u
/* Processes one walk lists with layer limits off (no process limit to
 * size it by); past it the figures are a lower bound. */
#define UNLIMITED_WALK 4096u

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
	e->pte_walk += enf_read_vmpte(e->proc_fd, st->pid);
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

int
enforcer_init(struct enforcer *e, const struct job_limits *lim,
    enum job_enforcement mode, int cg_leaf, pid_t init_pid, int proc_fd,
    int wsfd, uint64_t ws_allow, uint64_t now_ms, bool unlimited)
{
	size_t procs = (unlimited && lim->nproc < UNLIMITED_WALK
			       ? UNLIMITED_WALK
			       : (size_t)lim->nproc) +
	    16;

	memset(e, 0, sizeof(*e));
	e->unlimited = unlimited;
	e->lim = lim;
	e->mode = mode;
	e->cg_leaf = mode == ENFORCE_CGROUP2 ? cg_leaf : -1;
	e->init_pid = init_pid;
	e->proc_fd = proc_fd;
	e->ws_allow = ws_allow;
	e->ws_fd = wsfd < 0 ? -1 : fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
	if (wsfd >= 0 && e->ws_fd < 0)
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
		e->sock_bytes = enf_socket_charge(proc_fd, init_pid);
	}
	if (e->ws_fd >= 0 && enf_fs_used(e->ws_fd, &e->ws_used0) < 0)
		e->ws_used0 = 0;
	/* The first look a little after the job's start, not at once:
	 * the jail's init is woken on this CPU (a socket's wake-up is a
	 * synchronous one), and a sample taken now would hold it off its
	 * CPU while there is nothing to see but init and a payload that
	 * has not exec'd (0.4 ms of a 3 ms warm job, traced; issue 27).
	 * Every later look is TICK_FAST_MS or TICK_SLOW_MS apart. */
	e->next_tick_ms = now_ms + TICK_FIRST_MS;
	e->next_ws_ms = now_ms + WS_STATFS_MS;
	e->next_walk_ms = now_ms;
	return 0;
}

int
enforcer_wait_ms(const struct enforcer *e, uint64_t now_ms)
{
	uint64_t next = e->next_tick_ms < e->next_ws_ms ? e->next_tick_ms
							: e->next_ws_ms;

	return next <= now_ms ? 0 : (int)(next - now_ms);
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
	} else
		e->pids_at = false;
	if (e->pids_since_ms == 0)
		return ENF_NONE;
	if ((uint64_t)tasks * 4 < (uint64_t)max * 3) {
		e->pids_since_ms = 0;
		return ENF_NONE;
	}
	if (now - e->pids_since_ms < ENFORCE_PIDS_HOLD_MS)
		return ENF_NONE;
	fmt_words(e->detail, sizeof(e->detail),
	    "held at its limit of %u "
	    "processes and threads for %u ms",
	    max, ENFORCE_PIDS_HOLD_MS);
	return enf_stop(e, ENF_PROCESSES);
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
		fmt_words(e->detail, sizeof(e->detail),
		    "memory %.1f MiB over "
		    "the limit of %.1f MiB (proportional set sizes summed, "
		    "a shared page once; resident sets summed: %.1f MiB)",
		    mib(mem), mib(e->lim->memory_bytes), mib(rss_sum));
		return enf_stop(e, ENF_MEMORY);
	}
	if (mem > e->lim->memory_bytes) {
		fmt_words(e->detail, sizeof(e->detail),
		    "memory %.1f MiB over "
		    "the limit of %.1f MiB (%s)",
		    mib(mem), mib(e->lim->memory_bytes),
		    measure == MEASURE_CGROUP ? "the cgroup's memory.peak"
					      : "resident sets summed");
		return enf_stop(e, ENF_MEMORY);
	}
	if (cpu_ms >= e->lim->cpu_ms) {
		fmt_words(e->detail, sizeof(e->detail),
		    "%llu ms of CPU time "
		    "reached the limit of %llu ms",
		    (unsigned long long)cpu_ms,
		    (unsigned long long)e->lim->cpu_ms);
		return enf_stop(e, ENF_CPU);
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
		grown = u->rss_bytes > e->pss_rss_at
		    ? u->rss_bytes - e->pss_rss_at
		    : 0;
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
	e->pss_next_ms = now +
	    (4 * cost_ms > TICK_FAST_MS ? 4 * cost_ms : TICK_FAST_MS);
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
 * One sample of a jail held by its cgroup v2 leaf at NOW (job ms):
 * memory.events' OOM kills (memory.max holds memory itself), CPU time
 * and the process count against E's limits. Returns E's reason, or
 * ENF_NONE.
 */
static enum enforce_reason
sample_cgroup(struct enforcer *e, uint64_t now)
{
	enum enforce_reason r;
	struct cg_stats cs;

	if (cg_leaf_stats(e->cg_leaf, &cs) < 0)
		return ENF_NONE;
	if (cs.oom_kill > 0) {
		fmt_words(e->detail, sizeof(e->detail),
		    "the kernel's OOM "
		    "killer ran in the job's cgroup (memory.max "
		    "%.1f MiB)",
		    mib(e->lim->memory_bytes));
		return enf_stop(e, ENF_MEMORY);
	}
	uint64_t m = cs.memory_peak > cs.memory_current ? cs.memory_peak
							: cs.memory_current;

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
	return check_tasks(e, (uint32_t)cs.pids_current, cs.pids_max_events > 0,
	    now);
}

/*
 * Writes to E's detail why the jail whose walk gave U is over its memory
 * limit when a charge beside its resident memory explains it: a form of
 * kernel object, descriptors, sockets, page tables (in that order). MEM
 * is the memory figure the limit was held against (the resident sum, or
 * the measure counting a shared page once), CHARGE the bytes charged
 * beside it. Page tables are named when they outweigh MEM, or make most
 * of a CHARGE that alone reaches the limit: a page mapped at many
 * addresses counts in every resident set that maps it, so the resident
 * sum can be as large as the page tables themselves.
 */
static void
memory_detail(struct enforcer *e, const struct jail_usage *u, uint64_t mem,
    uint64_t charge)
{
	if (enf_kobj_detail(e, u->rss_bytes))
		return;
	if (e->fds.bytes > 0)
		fmt_words(e->detail, sizeof(e->detail),
		    "resident memory "
		    "%.1f MiB and %llu open descriptors (%.1f MiB "
		    "of pipe buffers they can pin) over the limit "
		    "of %.1f MiB",
		    mib(u->rss_bytes), (unsigned long long)e->fds.descriptors,
		    mib(e->fds.bytes), mib(e->lim->memory_bytes));
	else if (e->sockets > 0)
		fmt_words(e->detail, sizeof(e->detail),
		    "resident memory, "
		    "%.1f MiB of page tables and the buffers of %u "
		    "sockets (%.0f KiB each) over the limit of %.1f "
		    "MiB",
		    mib(e->pte_bytes), e->sockets,
		    (double)e->sock_bytes / 1024.0, mib(e->lim->memory_bytes));
	else if (e->pte_bytes > mem ||
	    (charge >= e->lim->memory_bytes && e->pte_bytes >= charge / 2))
		fmt_words(e->detail, sizeof(e->detail),
		    "resident memory "
		    "%.1f MiB and %.1f MiB of page tables over the "
		    "limit of %.1f MiB",
		    mib(mem), mib(e->pte_bytes), mib(e->lim->memory_bytes));
}

/*
 * One sample of a jail held by the monitor at NOW (job ms): a walk of
 * its process tree (CPU banked by process, page tables, descriptors),
 * its sockets and kernel objects charged, memory measured again counting
 * shared pages once when the cheap sum is past the limit, then memory,
 * CPU and processes against E's limits. Returns E's reason, or ENF_NONE.
 */
static enum enforce_reason
sample_monitor(struct enforcer *e, uint64_t now)
{
	enum enforce_reason r;
	struct jail_usage u;
	uint64_t hz = e->walker.clk_tck, banked, charge, mem;
	uint8_t measure = MEASURE_RSS_SUM;
	int x;

	e->new_procs = 0;
	e->pte_walk = 0;
	fdcharge_begin(&e->fds);
	x = usage_walk(&e->walker, e->proc_fd, e->init_pid, &u);

	if (x < 0 && x != -E2BIG) {
		memset(e->seen_next, 0, e->seen_cap * sizeof(*e->seen_next));
		return ENF_NONE;
	}
	/* What is banked for vanished processes stays banked; the
	 * table now holds only the living. */
	swap_seen(e);
	banked = e->cpu_ticks / hz * 1000 + e->cpu_ticks % hz * 1000 / hz;
	/* Socket buffers and page tables, which no resident set
	 * holds: sockets charged at their bound (enf_socket_charge). */
	e->pte_bytes = e->pte_walk;
	e->sockets = e->sock_bytes > 0
	    ? enf_jail_sockets(e->proc_fd, e->init_pid)
	    : 0;
	enf_count_kobj(e, now);
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
	    u.rss_bytes > e->lim->memory_bytes - charge)
		mem = shared_once(e, &u, e->lim->memory_bytes - charge, now,
		    &measure);
	r = check_memory_cpu(e,
	    mem > UINT64_MAX - charge ? UINT64_MAX : mem + charge, measure,
	    u.rss_bytes, banked > u.cpu_ms ? banked : u.cpu_ms);
	if (r == ENF_MEMORY)
		memory_detail(e, &u, mem, charge);
	if (r != ENF_NONE)
		return r;
	return check_tasks(e,
	    x == -E2BIG && !e->unlimited ? e->lim->nproc : u.tasks, false, now);
}

static enum enforce_reason
sample(struct enforcer *e, uint64_t now)
{
	if (e->mode == ENFORCE_CGROUP2)
		return sample_cgroup(e, now);
	return sample_monitor(e, now);
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
				e->pids_since_ms != 0 || e->new_procs > 0
			    ? TICK_FAST_MS
			    : TICK_SLOW_MS);
	}
	if (r == ENF_NONE && now_ms >= e->next_ws_ms) {
		r = enf_check_workspace(e, now_ms);
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
	    (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000u;
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
					UINT32_MAX
				    ? UINT32_MAX
				    : (uint32_t)cs.pids_max_events;
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
	 * at the limit, which backs its "MemoryError" (broker/jobs/jobrun.c). */
	if (e->pss_overstated > 0) {
		maxrss = maxrss > e->pss_overstated ? maxrss - e->pss_overstated
						    : 0;
		if (maxrss > e->lim->memory_bytes)
			maxrss = e->lim->memory_bytes;
	}
	if (maxrss > e->peak_rss_bytes) {
		e->peak_rss_bytes = maxrss;
		if (e->peak_measure == 0)
			e->peak_measure = MEASURE_RSS_SUM;
	}
	if (e->peak_measure == 0)
		e->peak_measure = e->mode == ENFORCE_CGROUP2 ? MEASURE_CGROUP
							     : MEASURE_RSS_SUM;
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
