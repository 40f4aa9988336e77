/*
 * enforce_internal.h: what enforce.c shares with the enforcer's other
 * files (enforce_ws.c, enforce_proc.c). Not for other callers.
 */
#ifndef STOCKADE_ENFORCE_INTERNAL_H
#define STOCKADE_ENFORCE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "enforce.h"

/* BYTES in MiB, for details. */
static inline double
mib(uint64_t bytes)
{
	return (double)bytes / 1048576.0;
}

/* Records WHY as E's reason unless one is recorded; returns E's reason. */
static inline enum enforce_reason
enf_stop(struct enforcer *e, enum enforce_reason why)
{
	if (e->reason == ENF_NONE)
		e->reason = why;
	return e->reason;
}

/* Used bytes of the file system holding FD into *USED (enforce_ws.c).
 * Returns 0 or -errno. */
int enf_fs_used(int fd, uint64_t *used);

/*
 * The workspace quota at NOW (job ms; enforce_ws.c): when the file
 * system grew by more than E's allowance, and no count was made in the
 * last WS_WALK_MS, counts the workspace's disk use; over its quota, or
 * not countable (fail closed), E stops with ENF_WORKSPACE and a detail.
 * Returns E's reason, or ENF_NONE.
 */
enum enforce_reason enf_check_workspace(struct enforcer *e, uint64_t now);

/*
 * Bytes of page tables of process PID, read through PROC_FD
 * (enforce_proc.c), or 0 when it is gone or unreadable.
 */
uint64_t enf_read_vmpte(int proc_fd, pid_t pid);

/*
 * The monitor's charge per socket of the jail whose init is INIT, bytes
 * (enforce_proc.c), or 0 when INIT shares the launcher's network
 * namespace or its sockstat cannot be seen.
 */
uint64_t enf_socket_charge(int proc_fd, pid_t init);

/* Sockets of INIT's network namespace now (enforce_proc.c), or 0 when
 * they cannot be read. */
uint32_t enf_jail_sockets(int proc_fd, pid_t init);

/*
 * Counts E's kernel objects (epoll watches, maps, locks, files in
 * flight) into e->kobj when NOW (job ms) has reached e->kobj_next_ms
 * (enforce_kobj.c), through e->measure_kobj (the zygote) when set; a
 * failed count keeps the last figures.
 */
void enf_count_kobj(struct enforcer *e, uint64_t now);

/*
 * Writes to E's detail why the job is over its memory limit when one
 * form of kernel object is an eighth of the limit or more, with RSS the
 * resident sum (enforce_kobj.c); returns whether it wrote.
 */
bool enf_kobj_detail(struct enforcer *e, uint64_t rss);

#endif
