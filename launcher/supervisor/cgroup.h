/*
 * cgroup.h: one cgroup v2 leaf per job, under a delegated parent (the
 * "cgroup2" enforcement). The rules are those of the kernel's
 * Documentation/admin-guide/cgroup-v2.rst ("Delegation", "Interface
 * Files", "Memory", "PID", "CPU"); section names below refer to it.
 *
 * Every function works on descriptors: the parent is opened once, and a
 * leaf's files are opened relative to its directory descriptor, which is
 * also what clone3's CLONE_INTO_CGROUP takes. Nothing logs or exits.
 */
#ifndef STOCKADE_CGROUP_H
#define STOCKADE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgpath.h"

/*
 * Opens DIR (O_RDONLY|O_DIRECTORY|O_CLOEXEC, so that files can be opened
 * for writing below it) and checks that job leaves can be made under it:
 * it is on a cgroup2 file system (fstatfs f_type CGROUP2_SUPER_MAGIC),
 * then everything cg_check_parent checks.
 * Returns the descriptor (the caller owns it), or a negative errno with
 * WHY (WHYLEN bytes, NUL-terminated, may be truncated) set to one
 * sentence naming DIR and what a deployer can do about it.
 */
int cg_open_parent(const char *dir, bool need_cpu, char *why, size_t whylen);

/*
 * The checks of cg_open_parent after the file-system type, on FD (a
 * directory descriptor, borrowed); DIR is only used in WHY. In order:
 *   - "memory" and "pids" (and "cpu" when NEED_CPU) are listed in its
 *     cgroup.controllers ("Enabling and Disabling": a controller the
 *     parent does not grant, or one bound to cgroup v1 on a hybrid
 *     system, is absent) -> -EOPNOTSUPP;
 *   - and in its cgroup.subtree_control, so that its children get the
 *     interface files -> -EOPNOTSUPP;
 *   - the caller may make directories in it and write its cgroup.procs
 *     (faccessat W_OK|X_OK with AT_EACCESS: "Delegation Containment": a
 *     process moved into a leaf needs write access to cgroup.procs of
 *     the common ancestor) -> -EACCES;
 *   - a missing or unreadable interface file -> that errno (-ENOENT: not
 *     a cgroup v2 directory).
 * Returns 0, or the negative errno with WHY set.
 */
int cg_check_parent(int fd, const char *dir, bool need_cpu, char *why,
    size_t whylen);

/* The leaf of the launcher's own cgroup that cg_claim_own moves the broker
 * and the launcher into. */
#define CG_SUPERVISOR "stockade-supervisor"

/*
 * Makes the launcher's own cgroup OWN usable as a parent of job leaves.
 * By the "No Internal Process Constraint" (cgroup-v2.rst), a non-root
 * cgroup that holds processes cannot enable domain controllers in its
 * cgroup.subtree_control; in a delegated scope that holds the broker and
 * the launcher (systemd-run --user --scope -p Delegate=yes stockade ...)
 * the way out is to move one's own processes into a leaf first, then
 * enable the controllers for the children (cgroup-v2.rst "Delegation";
 * systemd.io/CGROUP_DELEGATION, "Control Group APIs and Delegation").
 *
 * OWN is a directory descriptor of that cgroup (borrowed; opened
 * O_RDONLY|O_DIRECTORY by the caller). BROKER and LAUNCHER are pids as
 * seen in the caller's pid namespace (that of cgroup.procs' reader);
 * BROKER may be 0 (none). In order, each step failing closed:
 *   1. cgroup.subtree_control lists memory and pids: returns 0, nothing
 *      done (already claimed; or the root cgroup). A missing cpu there is
 *      not added.
 *   2. cgroup.controllers lists memory and pids, and cpu when WANT_CPU,
 *      else -EOPNOTSUPP (not delegated). cpu is enabled below only when
 *      WANT_CPU.
 *   3. cgroup.procs (read whole, at most 1 MiB) lists LAUNCHER (else
 *      -ESRCH: OWN is not its cgroup), BROKER and ZYGOTE (the launcher's
 *      zygote, zygote.h; 0 when there is none) or not (when not, that
 *      process is elsewhere and is not moved), and no other line (else
 *      -EBUSY, the count in WHY, also for a file over 1 MiB; nothing is
 *      touched: processes that are not ours are never moved).
 *   4. Makes OWN/CG_SUPERVISOR, mode 0755 (an existing directory is
 *      reused: a launcher before this one made it; a non-directory there:
 *      -ENOTDIR), and writes BROKER (when listed), LAUNCHER, then ZYGOTE
 *      (when listed) into its
 *      cgroup.procs, opened once (O_WRONLY|O_TRUNC, never created), one
 *      write(2) each, as the kernel takes one pid a write.
 *   5. Writes "+memory +pids" (" +cpu" appended when WANT_CPU) into OWN's
 *      cgroup.subtree_control in one write(2) (-EBUSY from the kernel when
 *      another process joined OWN meanwhile).
 * When step 4 or 5 fails, what was done is undone: the pids moved are
 * written back into OWN's cgroup.procs, and the leaf, if this call made
 * it, is removed (cg_leaf_remove).
 * Returns 0, or a negative errno (-EINVAL for LAUNCHER <= 0, BROKER < 0,
 * ZYGOTE < 0, or two of them equal; otherwise the errno of the failed system
 * call, -EIO for a short write) with WHY (WHYLEN bytes, NUL-terminated)
 * set to one sentence a deployer can act on. WHY does not name OWN's path
 * (only its descriptor is known here): the caller prefixes it.
 *
 * A launcher the broker starts later is born in OWN/CG_SUPERVISOR (a
 * child starts in its parent's cgroup), so cg_own_path gives that leaf:
 * a caller whose own cgroup is named CG_SUPERVISOR should pass its parent
 * as OWN (step 1 then returns 0) rather than nest another leaf in it.
 */
int cg_claim_own(int own, pid_t broker, pid_t launcher, pid_t zygote,
    bool want_cpu, char *why, size_t whylen);

/* The limits of one leaf. */
struct cg_limits {
	uint64_t memory_max; /* bytes, memory.max; 0 = "max" (none) */
	uint32_t pids_max; /* tasks, pids.max; 0 = "max" (none) */
	uint32_t cpu_percent; /* % of one CPU, cpu.max; 0 = leave it */
};

/*
 * Writes L into the existing leaf LEAF (a directory descriptor, borrowed):
 * memory.max, memory.swap.max = 0 (no swap: the memory limit is the
 * whole limit; skipped when the file is absent, i.e. swap accounting is
 * off), memory.oom.group = 1 (an OOM kill takes the whole leaf: the jail
 * never runs on with a part of it killed), pids.max, and cpu.max as
 * "QUOTA 100000" with QUOTA = cpu_percent * 1000 microseconds per 100 ms
 * period (only when cpu_percent > 0). Files are opened O_WRONLY|O_TRUNC,
 * never created: a missing file is an error (-ENOENT).
 * Returns 0 or the negative errno of the first failure.
 */
int cg_leaf_configure(int leaf, const struct cg_limits *l);

/*
 * Makes the leaf NAME (a single path component) under PARENT (borrowed),
 * mode 0755, and configures it with L. Returns the leaf's directory
 * descriptor (O_RDONLY|O_DIRECTORY|O_CLOEXEC; the caller owns it; pass it
 * to clone3 as CLONE_INTO_CGROUP's cgroup), or a negative errno: -EEXIST
 * when NAME exists (left alone), otherwise the leaf this call made is
 * removed again before returning.
 */
int cg_leaf_create(int parent, const char *name, const struct cg_limits *l);

/* What a leaf has used and suffered; 0 where the kernel has no file. */
struct cg_stats {
	uint64_t memory_current; /* bytes, memory.current */
	uint64_t memory_peak; /* bytes, memory.peak (Linux 5.19+) */
	uint64_t oom_kill; /* memory.events "oom_kill" */
	uint64_t memory_max_events; /* memory.events "max" */
	uint64_t pids_current; /* tasks, pids.current */
	uint64_t pids_max_events; /* pids.events "max": forks refused */
	uint64_t cpu_usage_usec; /* cpu.stat "usage_usec" */
};

/*
 * Reads the figures of LEAF (borrowed) into *S. memory.current,
 * memory.events, pids.current and pids.events are required (the memory
 * and pids controllers are enabled on every leaf); memory.peak and
 * cpu.stat may be absent (0). Flat keyed files ("key value" lines) and
 * single values ("Interface Files", "Conventions") are parsed strictly.
 * Returns 0, or a negative errno (-EINVAL: a file that does not parse)
 * with *S zeroed.
 */
int cg_leaf_stats(int leaf, struct cg_stats *s);

/*
 * Kills every process in LEAF (borrowed) at once: writes "1" to
 * cgroup.kill (Linux 5.14+, "Core Interface Files").
 * Returns 0, -ENOENT when the kernel has no cgroup.kill, or another
 * negative errno.
 */
int cg_leaf_kill(int leaf);

/*
 * Removes the leaf NAME under PARENT (borrowed). A leaf whose last tasks
 * are still exiting is busy (EBUSY) for a moment: retried every 10 ms for
 * up to 200 ms. Returns 0 or the negative errno of the last rmdir.
 */
int cg_leaf_remove(int parent, const char *name);

#endif
