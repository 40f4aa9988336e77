/*
 * enforce_kobj.c: the kernel objects the enforcer charges against a
 * monitored jail's memory limit (enforce_internal.h): counted at most as
 * often as their cost allows, and named when they explain a stop.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "enforce_internal.h"
#include "usage.h"
#include "utf8.h"

/* The least time between two counts of kernel objects, ms. */
#define ENFORCE_KOBJ_MS 250u

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
void
enf_count_kobj(struct enforcer *e, uint64_t now)
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
		    (uint32_t)e->walker.max_procs, e->lim->memory_bytes + 1,
		    &k);
	else
		y = usage_kernel_objects(&e->walker, e->proc_fd, e->init_pid,
		    e->lim->memory_bytes + 1, &k);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cost_ms = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000u +
	    (uint64_t)((t1.tv_nsec - t0.tv_nsec) / 1000000);
	e->kobj_next_ms = now +
	    (4 * cost_ms > ENFORCE_KOBJ_MS ? 4 * cost_ms : ENFORCE_KOBJ_MS);
	if (y != 0 && y != -E2BIG)
		return;
	e->kobj = k;
}

/*
 * Writes to E's detail why the job is over its memory limit when one
 * form of kernel object counted by enf_count_kobj is an eighth of the
 * limit or more (the largest such form), with RSS the resident sum;
 * returns whether it wrote.
 */
bool
enf_kobj_detail(struct enforcer *e, uint64_t rss)
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
	fmt_words(e->detail, sizeof(e->detail),
	    "resident memory %.1f MiB "
	    "and %llu %s (%.1f MiB of kernel memory, %u bytes each) "
	    "over the limit of %.1f MiB",
	    mib(rss), (unsigned long long)f[best].n, f[best].what,
	    mib(f[best].n * f[best].each), f[best].each,
	    mib(e->lim->memory_bytes));
	return true;
}
