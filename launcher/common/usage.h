/*
 * usage.h: what a jail uses, read from the host's /proc (the "monitor"
 * enforcement, used when no delegated cgroup v2 is available).
 *
 * The launcher samples the process tree under the jail's init every few
 * tens of milliseconds (launcher/supervisor/enforce.c) and compares the sums
 * with the job's limits. Everything here reads /proc relative to a descriptor
 * the caller opened; nothing logs, exits or keeps global state.
 */
#ifndef STOCKADE_USAGE_H
#define STOCKADE_USAGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fdcharge.h"

/* The fields of one /proc/PID/stat line the monitor needs (proc(5)). */
struct proc_stat {
	pid_t pid; /* field 1 */
	pid_t ppid; /* field 4 */
	char state; /* field 3: R, S, D, Z, T, t, X, I, ... */
	uint64_t utime_ticks; /* fields 14-17, clock ticks (_SC_CLK_TCK) */
	uint64_t stime_ticks;
	uint64_t cutime_ticks; /* children this process waited for */
	uint64_t cstime_ticks;
	uint32_t num_threads; /* field 20 */
	uint64_t rss_pages; /* field 24, pages (_SC_PAGESIZE) */
};

/*
 * Parses the first LEN bytes of BUF, the text of one /proc/PID/stat
 * (proc(5)), into *ST. BUF need not be NUL-terminated and may stop
 * anywhere after field 24 (rss); the fields after it are ignored.
 *
 * The command name (field 2) is whatever the process chose with prctl
 * PR_SET_NAME or exec: it may hold spaces, parentheses and newlines, so the
 * name ends at the LAST ')' of BUF (the fields after it are numbers and a
 * state letter, never a ')').
 *
 * Strict: fields are separated by exactly one space, the fields read are
 * unsigned decimal without a sign (the skipped ones may have a '-'), and a
 * value too large for its field (pid > INT_MAX, num_threads > UINT32_MAX,
 * anything > UINT64_MAX) is an error.
 * Pure. Returns 0, or -EINVAL with *ST zeroed.
 */
int usage_parse_stat(const char *buf, size_t len, struct proc_stat *st);

/* What a jail uses at one instant, summed over its process tree. */
struct jail_usage {
	uint64_t rss_bytes; /* sum of every process's resident set */
	uint64_t cpu_ms; /* CPU of the jail since it started, all threads,
			      * living and dead processes (usage.c says how) */
	uint32_t processes; /* processes found, zombies included */
	uint32_t tasks; /* threads of those processes (num_threads) */
	uint64_t resident_bytes; /* usage_walk_pss: the resident sum of
				  * the same walk, beside the shares */
	uint32_t pss_fallbacks; /* usage_walk_pss: processes counted by
				 * their resident set, their share being
				 * unreadable (0 for usage_walk) */
	uint32_t vanished; /* listed processes gone before they were
			      * read, or that let their memory go */
	uint64_t pid_sum; /* the set of processes counted, as the sum */
	uint64_t pid_xor; /* and the xor of their pids */
};

/*
 * A sampler: the pid queue of one walk, allocated once so that a sample
 * makes no allocation. Owned by whoever called usage_walker_init; one
 * walker serves one thread at a time. The fields are private.
 */
struct usage_walker {
	pid_t *queue; /* 2 x max_procs: pid, listed under; malloc'd */
	size_t max_procs;
	uint64_t page_size; /* bytes */
	uint64_t clk_tck; /* ticks per second */
	/* Public, optional (NULL after usage_walker_init): called with
	 * EACH_ARG and the stat of every process a walk counts, so that a
	 * caller can follow processes from one walk to the next. */
	void (*each)(void *each_arg, const struct proc_stat *st);
	void *each_arg;
};

/*
 * Prepares W for walks of at most MAX_PROCS (>= 1, <= 4194304, the most
 * pids a system can have) processes: one allocation of 2 x MAX_PROCS
 * pids. Returns 0, -EINVAL or -ENOMEM. Release with usage_walker_free.
 */
int usage_walker_init(struct usage_walker *w, size_t max_procs);

/* Frees what usage_walker_init allocated; W may be zeroed or freed twice. */
void usage_walker_free(struct usage_walker *w);

/*
 * Sums the usage of ROOT_PID and every descendant of it into *U.
 *
 * PROC_FD is an O_DIRECTORY descriptor of a /proc mounted for the caller's
 * own pid namespace (borrowed, not closed); ROOT_PID a pid in that
 * namespace (for the launcher: the jail init's host pid). Every file is
 * opened with openat relative to PROC_FD.
 *
 * The tree is walked breadth-first through /proc/PID/task/TID/children of
 * every thread (proc(5); needs CONFIG_PROC_CHILDREN), reading
 * /proc/PID/stat of each process with one read. A process that vanishes
 * mid-walk (ENOENT, ESRCH) is skipped. A sample is not atomic: a process
 * forked or reaped during the walk may be missed in it (never counted
 * twice, see usage.c), which the next sample corrects.
 *
 * Returns 0; -ESRCH when ROOT_PID does not exist (a zombie ROOT_PID still
 * counts); -E2BIG when the tree holds more than the walker's max_procs
 * processes: the walk then stops listing children and *U holds the sums of
 * the max_procs processes already found (a lower bound); another negative
 * errno of open/read/getdents64 (then *U holds the sums so far).
 */
int usage_walk(struct usage_walker *w, int proc_fd, pid_t root_pid,
    struct jail_usage *u);

/*
 * usage_walk, with memory measured so that a page shared by several
 * processes of the tree counts once: U->rss_bytes is then the sum of
 * each process's proportional set size, the "Pss:" line of
 * /proc/PID/smaps_rollup (proc(5); kernel doc filesystems/proc.rst; Linux
 * 4.14), which charges a page mapped by n processes 1/n to each, shared
 * memory and mapped tmpfs pages included. A process whose smaps_rollup
 * cannot be read (EACCES, a leader gone before its threads) counts its
 * resident set, and U->pss_fallbacks counts it: the sum stays an upper
 * bound of what the tree maps. Never larger than usage_walk's sum of the
 * same instant. Costs what usage_walk does, plus, per process, one read
 * of smaps_rollup, which walks its page tables: time grows with the
 * memory it maps (docs/benchmarks.md gives the figures). W's each hook
 * is not called. Same arguments, results and errors as usage_walk.
 */
int usage_walk_pss(struct usage_walker *w, int proc_fd, pid_t root_pid,
    struct jail_usage *u);

/*
 * usage_walk_pss until it sees the tree hold still (usage.c says why a
 * share is only right then): at most TRIES (>= 1) walks, GAP_US apart,
 * each followed by a usage_walk; a walk is kept when no process it
 * listed vanished before its read and the next walk counts the same
 * processes (pid_sum, pid_xor, processes). Returns as usage_walk_pss,
 * or -EAGAIN when no walk was kept (then *U is the last one's, which
 * may be below what the tree holds: do not use it as a bound).
 */
int usage_pss_settled(struct usage_walker *w, int proc_fd, pid_t root_pid,
    unsigned tries, unsigned gap_us, struct jail_usage *u);

/*
 * usage_walk with a walker of MAX_PROCS made and freed for this one call
 * (one malloc per call; loops that sample often should keep a walker).
 * Same arguments, results and errors, and -ENOMEM.
 */
int usage_sample(int proc_fd, pid_t root_pid, size_t max_procs,
    struct jail_usage *u);

/*
 * Kernel memory one epoll watch holds, bytes: a struct epitem (the slab
 * eventpoll_epi, 128-byte objects on x86_64 Linux 6.x, /proc/slabinfo)
 * and its struct eppoll_entry (eventpoll_pwq, 64 bytes), fs/eventpoll.c;
 * rounded up to 200.
 */
#define EPOLL_WATCH_BYTES 200u
/*
 * Kernel memory one memory map (VMA) holds, bytes: a struct
 * vm_area_struct (192-byte objects of the slab vm_area_struct, Linux
 * 6.18 x86_64, /proc/slabinfo) and its share of the maple tree that
 * indexes them (maple_node, 256-byte nodes). Measured: Slab in
 * /proc/meminfo grew 75,296 KiB for 6 processes of 60,000 anonymous
 * maps each (214 bytes a map; maple_node +27,101 objects, 19 bytes a
 * map); rounded up to 220. A map of a file or one written to adds an
 * anon_vma_chain (64 bytes), which the resident set it needs outweighs.
 */
#define KOBJ_VMA_BYTES 220u
/*
 * Kernel memory one byte-range lock holds, bytes: a struct file_lock
 * (192-byte objects of the slab file_lock_cache, Linux 6.18 x86_64,
 * /proc/slabinfo; fs/locks.c). Measured: Slab grew 45,484 KiB for
 * 240,000 POSIX locks (194 bytes a lock, the file_lock_ctx of the 600
 * files included); rounded up to 200.
 */
#define KOBJ_LOCK_BYTES 200u
/*
 * Charged for one file in flight in a unix socket's receive queue
 * (SCM_RIGHTS, unix(7)), bytes: what a pipe can hold, 16 pages
 * (pipe(7), fdcharge.h, with F_SETPIPE_SZ refused by the monitor's
 * filter), the most one open file of the jail pins.
 */
#define KOBJ_INFLIGHT_BYTES FDCHARGE_PIPE_BYTES

/* The kernel objects of a jail that no resident set holds and that the
 * monitor charges by count (usage_kernel_objects). */
struct kernel_objects {
	uint64_t watches; /* epoll watches: "tfd:" lines of fdinfo */
	uint64_t maps; /* memory maps: lines of /proc/PID/maps */
	uint64_t locks; /* file locks: "lock:" lines of fdinfo */
	uint64_t inflight; /* files in flight: "scm_fds:" of fdinfo */
	uint32_t unreadable; /* processes whose maps could not be read,
			      * each counted as vm.max_map_count maps */
};

/*
 * The kernel memory K stands for, bytes: each watch EPOLL_WATCH_BYTES,
 * map KOBJ_VMA_BYTES, lock KOBJ_LOCK_BYTES, file in flight
 * KOBJ_INFLIGHT_BYTES; saturates at UINT64_MAX. Pure.
 */
uint64_t usage_kobj_bytes(const struct kernel_objects *k);

/*
 * Counts, in one pass over ROOT_PID and every descendant (the tree
 * usage_walk finds with W), the kernel objects of struct
 * kernel_objects into *K (zeroed first):
 *  - memory maps: the lines of /proc/PID/maps, one a VMA (proc(5)), at
 *    most vm.max_map_count (sysctl vm, 65,530 by default) a process;
 *  - in every /proc/PID/fdinfo/N: the lines beginning "tfd:", one per
 *    watch of an epoll instance (proc(5), "/proc/pid/fdinfo"); the
 *    lines beginning "lock:", one per lock the file holds for that
 *    descriptor (fs/locks.c show_fd_locks: POSIX locks of the
 *    process's descriptor table, flock and OFD locks of the open
 *    file); and the number of "scm_fds:", the files in flight in a
 *    unix socket's receive queue (net/unix/af_unix.c,
 *    unix_show_fdinfo, Linux 5.5).
 * Both files need ptrace read access (proc(5)): the zygote has it, the
 * confined launcher not. A watch outlives the descriptor it was added
 * under while its file stays open (epoll(7)), so no count of
 * descriptors bounds it; this count does. An object reached by k
 * descriptors (dup, fork: an epoll instance, an OFD lock) or by k
 * processes sharing one descriptor table or address space (CLONE_FILES,
 * CLONE_VM without CLONE_THREAD) counts k times: an over-count, which
 * fails closed. ROOT_PID (jail init, stockade's own, unreadable to the
 * zygote) is not read. A process whose maps cannot be read for a reason
 * other than its end counts vm.max_map_count maps (read from PROC_FD's
 * sys/vm/max_map_count; unreadable too: CAP's worth) and K->unreadable
 * counts it; its fdinfo, guarded by the same access check, is then not
 * read. Stops once usage_kobj_bytes(K) reaches CAP (bytes: the
 * caller's limit; reading further changes no decision). Costs about
 * 10 us a descriptor and 1 us a map (docs/benchmarks.md). Returns 0,
 * -E2BIG (more than W's max_procs processes, or CAP reached: *K is a
 * lower bound), -ESRCH (ROOT_PID gone), or another negative errno of an
 * fdinfo read (*K then the count so far).
 */
int usage_kernel_objects(struct usage_walker *w, int proc_fd, pid_t root_pid,
    uint64_t cap, struct kernel_objects *k);

#endif
