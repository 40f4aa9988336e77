/* mounts.h: the jail's root file system, built by jail init (mounts.c). */
#ifndef STOCKADE_MOUNTS_H
#define STOCKADE_MOUNTS_H

#include "proto.h"

/*
 * In a fresh mount namespace whose current directory is the workspace,
 * builds the jail's root on a tmpfs and pivots into it (order in mounts.c).
 * On failure returns a negative errno and sets *STAGE to the failed
 * jail_stage; the namespace is then unusable and the job must end.
 */
int mounts_build_root(const struct job_spec *spec, int *stage);

#endif
