/*
 * fdcharge.h: the monitor's charge for kernel memory held through open
 * descriptors (issue 23, point 1; docs/layers.md, "Memory the monitor
 * cannot see"): pipe buffers, which no resident set holds.
 *
 * Every sample counts each process's descriptors: one stat of
 * /proc/PID/fd on Linux >= 6.2, whose st_size is the count ("proc:
 * report open files as size in stat() for /proc/pid/fd"), else the
 * directory's entries. Each descriptor of the jail past the first
 * FDCHARGE_FREE of the jail is charged FDCHARGE_PIPE_BYTES, the most one
 * descriptor can pin as a pipe: 16 pages (pipe(7)), with F_SETPIPE_SZ
 * refused by seccomp; a pipe shared after fork is charged once per
 * descriptor (over, never under). The kind of a descriptor cannot be
 * read by the launcher: its links and fdinfo need ptrace access
 * (proc(5)), which its Landlock domain denies over processes outside it
 * (landlock(7), ptrace restrictions; measured: EACCES) and which a root
 * launcher lacks anyway (the jail runs as nobody, CAP_SYS_PTRACE is
 * dropped, confine.h), so the charge is uniform; the directory's stat
 * needs none. On kernels before 6.2 the listing is the count, and a
 * non-dumpable process's fd directory is owned by root (proc(5)): then
 * the table's size (FDSize) is charged, never 0.
 */
#ifndef STOCKADE_FDCHARGE_H
#define STOCKADE_FDCHARGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FDCHARGE_PIPE_BYTES (64u * 1024u) /* 16 pages, pipe(7) */
#define FDCHARGE_FREE 512u /* descriptors of a jail */

struct fd_charge {
	int proc_fd; /* /proc (borrowed) */
	bool by_size; /* st_size of /proc/PID/fd is the count */
	uint64_t walk; /* descriptors the walk in progress counted */
	/* Figures of the last whole walk. */
	uint64_t descriptors; /* descriptors of the jail */
	uint64_t bytes; /* the charge, bytes */
};

/*
 * Sets C up to count through /proc at PROC_FD (borrowed for C's life).
 * Asks the kernel once, on the launcher's own /proc/self/fd, whether
 * the directory's st_size is the count (Linux >= 6.2; older kernels say
 * 0). Never fails.
 */
void fdcharge_init(struct fd_charge *c, int proc_fd);

/* Starts a walk: the count starts from 0. */
void fdcharge_begin(struct fd_charge *c);

/*
 * The walk's hook: adds the descriptors of process PID (gone: 0). The
 * stat needs only search permission on /proc/PID; where the listing is
 * the count (before Linux 6.2) and is refused for any reason but the
 * process being gone (ENOENT, ESRCH), the "FDSize:" of its
 * /proc/PID/status, its descriptor table's slots, is added instead: an
 * upper bound, so a process cannot hide its descriptors (fail closed).
 */
void fdcharge_process(struct fd_charge *c, pid_t pid);

/* Ends a walk; returns the charge in bytes (also C->bytes): the
 * descriptors past FDCHARGE_FREE times FDCHARGE_PIPE_BYTES. */
uint64_t fdcharge_end(struct fd_charge *c);

#endif
