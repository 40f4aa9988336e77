/*
 * usage_internal.h: what usage.c shares with usage_kobj.c. Not for other
 * callers.
 */
#ifndef STOCKADE_USAGE_INTERNAL_H
#define STOCKADE_USAGE_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "usage.h"

/* Whether R, a read's negative errno, says the process is gone. */
static inline bool
vanished(int r)
{
	return r == -ENOENT || r == -ESRCH;
}

/* A + B, saturated at UINT64_MAX. */
static inline uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * One walk of the process tree under ROOT_PID through PROC_FD with W
 * (usage.c): usage_walk's figures into U, with PSS each process's
 * proportional set size instead of its resident set (usage_walk_pss);
 * W's hook called for each process. Returns as usage_walk does.
 */
int usage_walk_tree(struct usage_walker *w, int proc_fd, pid_t root_pid,
    struct jail_usage *u, bool pss);

#endif
