/*
 * enforce.h: holding one jail to its memory, CPU, process and workspace
 * limits while it runs, and the figures of its result (issue 4).
 *
 * Two ways, chosen per job and named in the result ("enforcement"):
 *   - cgroup2: the jail is cloned into a leaf of a delegated cgroup v2
 *     (cgroup.c) with memory.max, memory.swap.max = 0, pids.max and
 *     cpu.max; the kernel holds memory and processes, and the enforcer
 *     reads memory.events, pids.events and cpu.stat;
 *   - monitor: without one, the enforcer samples the jail's process tree
 *     in /proc (usage.c) every 10 to 40 ms: the sum of resident sets
 *     plus each process's page tables (VmPTE) plus 64 KiB
 *     for each descriptor past the jail's first 512 (pipe buffers:
 *     fdcharge.h) plus a charge per socket of
 *     the jail's network namespace (kernel memory no resident set holds;
 *     docs/layers.md, "Memory the monitor cannot see"), the CPU time of
 *     every process and thread, the tasks. A resident sum past what the
 *     charges leave of the memory limit is measured again as the sum of
 *     proportional set sizes (usage_walk_pss: a page shared after fork or
 *     by a library counts once), and only that sum is held to the limit;
 *     below it the cheap sum decides alone (Pss <= Rss). rlimits stay as a
 *     per-process backstop (payload.c): RLIMIT_NPROC (counted per user
 *     namespace, so per jail, since Linux 5.14's ucounts), RLIMIT_DATA
 *     of twice the memory limit, RLIMIT_CPU a second past the limit.
 * Either way the workspace is watched: its file system's used blocks
 * every 50 ms, and when they grew by more than the job may add, an exact
 * count of the workspace's regular files (at most every 250 ms) decides.
 *
 * With layer limits off (docs/layers.md) the enforcer only measures: the
 * monitor samples the tree for the result's figures, and nothing is held
 * to a limit (no cgroup leaf either).
 */
#ifndef STOCKADE_ENFORCE_H
#define STOCKADE_ENFORCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "proto.h"
#include "fdcharge.h"
#include "usage.h"

/* Why the enforcer wants the jail killed. */
enum enforce_reason {
	ENF_NONE = 0,
	ENF_MEMORY, /* resident memory over memory_bytes (or OOM kill) */
	ENF_CPU, /* CPU time over cpu_ms */
	ENF_PROCESSES, /* held at the process limit for ENFORCE_PIDS_HOLD_MS */
	ENF_WORKSPACE, /* the workspace over its quota */
};

/* Samples in a row whose Pss walks found no still moment (processes
 * coming and going: usage_pss_settled) that are let pass without a
 * memory figure; the next one is held to the resident sum. At 10 ms a
 * sample plus the walks, about 60 ms of memory unmeasured at most. */
#define ENFORCE_PSS_UNSETTLED 3u

/* A jail at its process limit this long, and still at 3/4 of it, is
 * stopped: its forks are failing and it is not getting out of it. */
#define ENFORCE_PIDS_HOLD_MS 1000u

struct enforcer {
	const struct job_limits *lim; /* borrowed, the job's */
	enum job_enforcement mode; /* MONITOR or CGROUP2 */
	int proc_fd; /* /proc of the launcher (borrowed) */
	pid_t init_pid; /* jail init, host pid (monitor) */
	int cg_leaf; /* the job's cgroup leaf (borrowed), or -1 */
	int ws_fd; /* the workspace directory (owned), or -1: not
			 * watched (a job with a stage, issue 26) */
	struct usage_walker walker; /* the monitor's pid queue (owned) */
	/* CPU followed process by process (monitor): a child whose parent
	 * ignores SIGCHLD is reaped by no one's wait, so its time never
	 * reaches a cutime; its own time seen from sample to sample is
	 * banked in cpu_ticks instead. Two tables of seen_cap slots
	 * (owned), the current one first. */
	struct cpu_seen {
		pid_t pid;
		uint64_t ticks;
	} * seen, *seen_next;
	size_t seen_cap; /* a power of two, at least twice the tasks */
	uint64_t cpu_ticks; /* own CPU of every process seen, ticks */
	uint32_t new_procs; /* processes the last walk saw first */
	uint64_t ws_allow; /* bytes the job may add to the workspace */
	uint64_t ws_used0; /* its file system's used bytes at the start */
	uint64_t next_tick_ms, next_ws_ms, next_walk_ms;
	uint64_t pids_since_ms; /* at the limit since (0 = not at it) */
	/* Monitor: the bytes charged per socket of the jail's own network
	 * namespace (ENFORCE_SOCKET_CHARGE), 0 when the jail has none of
	 * its own; and the sockets the last sample counted there. */
	uint64_t sock_bytes;
	uint32_t sockets;
	/* Monitor: the page tables (VmPTE) of every process the walk in
	 * progress saw, and of the last whole walk, bytes. */
	uint64_t pte_walk, pte_bytes;
	/* Monitor: the kernel objects the last count found in the jail
	 * (usage_kernel_objects: epoll watches, memory maps, file locks,
	 * files in flight), charged usage_kobj_bytes, and the job ms
	 * before which no count runs (every ENFORCE_KOBJ_MS, and at most
	 * a fifth of the time: 4 times a count's own cost). */
	struct kernel_objects kobj;
	uint64_t kobj_next_ms;
	/* Monitor: the descriptors of the last walk and the pipe buffers
	 * they can pin (fdcharge.h). */
	struct fd_charge fds;
	/* Figures for the result. */
	uint64_t peak_rss_bytes; /* peak memory, by peak_measure */
	uint8_t peak_measure; /* enum job_memory_measure of that peak */
	uint32_t pss_walks; /* samples that needed the Pss sum */
	uint64_t pss_overstated; /* most a kept walk found resident sets
				  * over the shares, bytes (shared_once) */
	uint32_t pss_unsettled; /* of them in a row without a measure */
	bool pss_valid; /* pss_last holds a walk's figure */
	uint64_t pss_last; /* the last Pss sum, bytes */
	uint64_t pss_rss_at; /* the resident sum at that walk, bytes */
	uint64_t pss_next_ms; /* no walk before (job ms) */
	uint64_t cpu_ms;
	uint32_t peak_tasks;
	bool pids_hit; /* the jail was seen at its process limit */
	bool pids_at; /* ... in the last sample */
	uint32_t pids_episodes; /* times it came to the limit (a sample at
				 * it after one below it; cgroup2:
				 * pids.events max) */
	bool unlimited; /* layer limits off: measure, never stop */
	/* Optional (NULL: usage_walk_pss in this process): measures the
	 * jail's memory with each shared page once into *BYTES (the Pss
	 * sum, usage.h), for a process that may not read smaps_rollup
	 * itself (the confined launcher asks its zygote, zygote_measure).
	 * Returns 0, -E2BIG (a lower bound), -ETIME when the job's wall
	 * clock ran out during the wait (no figure: the job is ending by
	 * its timeout) or another negative errno. */
	int (*measure_pss)(void *arg, uint32_t max_procs, uint64_t *bytes,
	    uint64_t *resident);
	/* Optional likewise (NULL: usage_kernel_objects here): counts the
	 * jail's kernel objects, up to CAP bytes' worth, into *K (the
	 * confined launcher asks its zygote, zygote_kernel_objects).
	 * Returns 0, -E2BIG (a lower bound), -ETIME as measure_pss, or
	 * another negative errno. Same ARG. */
	int (*measure_kobj)(void *arg, uint32_t max_procs, uint64_t cap,
	    struct kernel_objects *k);
	void *measure_arg;
	enum enforce_reason reason;
	char detail[160]; /* why, for the result's detail, or "" */
};

/*
 * Sets E up for a job with limits LIM (borrowed for E's life) held by MODE
 * (ENFORCE_MONITOR or ENFORCE_CGROUP2, with CG_LEAF the leaf descriptor,
 * borrowed), jail init INIT_PID, /proc at PROC_FD (borrowed) and the
 * workspace WSFD (borrowed; E keeps its own duplicate) of which the job
 * may add WS_ALLOW bytes, watched by enf_check_workspace; WSFD -1: no
 * watch (the job's writes go to its stage, a tmpfs of that size: issue
 * 26, launcher/init/stage.c). NOW_MS is the job's clock (ms since clone).
 * With UNLIMITED (layer limits off) E measures and never stops the jail.
 * Returns 0 or a negative errno (-EMFILE, -ENOMEM); enforcer_free is
 * needed either way.
 */
int enforcer_init(struct enforcer *e, const struct job_limits *lim,
    enum job_enforcement mode, int cg_leaf, pid_t init_pid, int proc_fd,
    int wsfd, uint64_t ws_allow, uint64_t now_ms, bool unlimited);

/* Milliseconds from NOW_MS until enforcer_tick wants to run (>= 0). */
int enforcer_wait_ms(const struct enforcer *e, uint64_t now_ms);

/*
 * Samples the jail if its time has come (NOW_MS) and updates the
 * figures. Returns the reason to kill the jail (E->reason is set, with
 * E->detail) or ENF_NONE. Never fails: a sample that cannot be taken is
 * skipped (the rlimit backstops still hold) and the next is tried.
 */
enum enforce_reason enforcer_tick(struct enforcer *e, uint64_t now_ms);

/*
 * The last figures once jail init is reaped: RU is init's rusage from
 * waitid, which holds every process of the jail (init reaped them, and
 * the kernel reaped the rest into it as init exited). Takes the larger of
 * what was sampled and what RU says; with cgroup2 reads the leaf's
 * counters a last time (an OOM kill seen there becomes ENF_MEMORY).
 */
void enforcer_finish(struct enforcer *e, const struct rusage *ru);

/*
 * TASKS, the tasks jail init counted in its pid namespace as the payload
 * ended (INIT_REC_TASKS), taken as a last sample of the process count: at
 * the process limit or past it, the jail reached that limit (pids_hit,
 * one more episode unless one was in progress) even when it got there and
 * ended between two samples. Never stops the job: it has ended.
 */
void enforcer_tasks_at_exit(struct enforcer *e, uint32_t tasks);

/* Closes what E owns. */
void enforcer_free(struct enforcer *e);

#endif

struct launcher;

/*
 * Decides how SPEC's limits are held (SPEC->enforcement, the policy's
 * [limits] enforcement and cgroup): with cgroup2 it makes the job's leaf
 * NAME under the delegated cgroup (looked up once per path and cached in
 * L: SPEC->cgroup, or the launcher's own cgroup from /proc/self/cgroup)
 * and sets *LEAF to its descriptor (the caller owns it and removes the
 * leaf with cg_leaf_remove(L->cg_parent, NAME) after the job); with the
 * monitor *LEAF is -1. "auto" takes cgroup2 when it is usable, the
 * monitor otherwise. Returns 0 with *MODE set, or -EPERM with WHY (WHYLEN
 * bytes) saying what to fix when the spec asks for what this host cannot
 * give: cgroup2 enforcement, or a cpu_percent (cpu.max), without a
 * usable delegated cgroup. Fail closed: never a weaker limit than asked.
 * With layer limits off: the monitor, no leaf, never a refusal.
 */
int enforce_choose(struct launcher *l, const struct job_spec *spec,
    const char *name, enum job_enforcement *mode, int *leaf, char *why,
    size_t whylen);
