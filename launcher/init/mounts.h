/* mounts.h: the jail's root file system, built by jail init (mounts.c). */
#ifndef STOCKADE_MOUNTS_H
#define STOCKADE_MOUNTS_H

#include <sys/types.h>

#include "proto.h"

/*
 * In a fresh mount namespace, builds the jail's root on a tmpfs and pivots
 * into it (order in mounts.c). The workspace is WORK_TREE_FD, a detached
 * mount, or when that is -1 the current directory: the lower layer of the
 * overlay at /work, whose upper layer is the job's stage (stage.c, issue
 * 26), a tmpfs attached nowhere; *STAGE_FD gets an O_RDONLY directory
 * descriptor of the stage's root (close-on-exec, the caller's; -1 on
 * failure). OWNER_UID and OWNER_GID are the payload's ids when the jail
 * has no user namespace of its own (layer user_ns off): the tmpfs are
 * made theirs (uid=, gid=) and /etc/passwd names them; (uid_t)-1 and
 * (gid_t)-1 otherwise (the tmpfs belong to their mounter, the payload's
 * ids inside). Layers off change what is mounted (docs/layers.md):
 * pid_ns off binds the host's /proc instead of a new one; private_cwd
 * off binds the host's /tmp read-write and makes no home tmpfs; limits
 * off gives the tmpfs no size. On failure returns a negative errno and
 * sets *STAGE to the failed jail_stage, and *BIND to the index in
 * SPEC->mounts of the bind that failed (-1 when no bind did); the
 * namespace is then unusable and the job must end.
 */
int mounts_build_root(const struct job_spec *spec, int work_tree_fd,
    uid_t owner_uid, gid_t owner_gid, int *stage, int *bind, int *stage_fd);

#endif
