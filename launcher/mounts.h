/* mounts.h: the jail's root file system, built by jail init (mounts.c). */
#ifndef STOCKADE_MOUNTS_H
#define STOCKADE_MOUNTS_H

#include "proto.h"

/*
 * In a fresh mount namespace, builds the jail's root on a tmpfs and pivots
 * into it (order in mounts.c). The workspace is WORK_TREE_FD, a detached
 * mount moved to /work, or when that is -1 the current directory, bound
 * at /work. On failure returns a negative errno and sets *STAGE to the
 * failed jail_stage; the namespace is then unusable and the job must end.
 */
int mounts_build_root(const struct job_spec *spec, int work_tree_fd,
		      int *stage);

#endif
