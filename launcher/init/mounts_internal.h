/*
 * mounts_internal.h: the helpers of the jail's root file system that
 * mounts.c and proc_mount.c share, run by jail init in its own mount
 * namespace. Not for other callers.
 */
#ifndef STOCKADE_MOUNTS_INTERNAL_H
#define STOCKADE_MOUNTS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/* The new root R while it is built: a tmpfs over /tmp of the namespace
 * (mounts.c, step 2). */
#define ROOT "/tmp"

/* mount_setattr(2) of PATH (relative to DFD, FLAGS such as AT_RECURSIVE)
 * setting the MOUNT_ATTR_* bits SET and clearing CLR. Returns 0 or a
 * negative errno. */
int mnt_setattr(int dfd, const char *path, unsigned flags, uint64_t set,
    uint64_t clr);

/* mkdir -p of PATH (absolute) with MODE; existing directories are fine.
 * Returns 0 or a negative errno. */
int mnt_mkdir_p(const char *path, mode_t mode);

/* Creates the file PATH (it must not exist, nor be a symlink) with MODE
 * and the text TEXT. Returns 0 or a negative errno. */
int mnt_write_file(const char *path, const char *text, mode_t mode);

/* The jail path TARGET under ROOT into BUF (SIZE bytes). Returns 0 or
 * -ENAMETOOLONG. */
int mnt_in_root(char *buf, size_t size, const char *target);

/* mkdir -p of PATH's parent directory. Returns 0 or a negative errno. */
int mnt_mkdir_parent(const char *path);

/* An empty regular file PATH to bind a file over. Returns 0 or a
 * negative errno. */
int mnt_touch(const char *path);

/* Sets *STAGE to S (enum jail_stage) and returns E: a failed step. */
static inline int
mnt_fail(int *stage, int s, int e)
{
	*stage = s;
	return e;
}

/*
 * Before the root tmpfs hides the host's /tmp (binds.c): every bind
 * source of SPEC opened into SRC_FDS (JOB_MAX_MOUNTS entries; -1 for a
 * missing ro_bind_try), and with layer private_cwd off (!PRIVATE_DIRS) a
 * detached copy of the host's /tmp into *HOST_TMP. The descriptors are
 * the caller's. Returns 0, or a negative errno with *STAGE (and *BIND,
 * the failed bind's index).
 */
int mounts_open_sources(const struct job_spec *spec, int *src_fds,
    bool private_dirs, int *host_tmp, int *stage, int *bind);

/*
 * Step 4 (binds.c): binds each open source of SRC_FDS at its target
 * under ROOT, read-only, closing it. Returns 0, or a negative errno with
 * *STAGE STAGE_BIND and *BIND the index of the bind that failed.
 */
int mounts_bind_sources(const struct job_spec *spec, int *src_fds, int *stage,
    int *bind);

/*
 * Step 6 of mounts.c (proc_mount.c): the jail's /proc under ROOT, a
 * fresh procfs when init is pid 1 of its own pid namespace, else the
 * host's bound; the jail user namespace's quotas set through it (unless
 * OWNER_SET, i.e. no user namespace of the jail's own, or layer limits
 * is off); /proc/sys and the other kernel knobs bound read-only; the
 * host facts masked. Returns 0, or a negative errno with *STAGE the step
 * that failed (STAGE_PROC, STAGE_USER_QUOTAS, STAGE_PROC_MASK).
 */
int mounts_build_proc(const struct job_spec *spec, bool owner_set, int *stage);

/*
 * Step 8's overlay (stage.c; issue 26): the stage tmpfs of SPEC's
 * allowance (workspace_allow bytes, stage_files inodes and a fixed
 * slack; read-only overlay for an allowance of 0) with PROTO_STAGE_UPPER
 * (owned and moded as LOWER's root shows) and PROTO_STAGE_WORK in it,
 * and the overlay of LOWER (borrowed: a directory of this mount
 * namespace, or a detached mount the caller may use) with the option
 * userxattr. Neither is attached anywhere. In the jail's user namespace
 * only (job_spec_staged). Returns the overlay's
 * detached mount (an O_PATH descriptor the caller attaches with
 * move_mount(2) and closes) and sets *STAGE_ROOT to an O_RDONLY
 * directory descriptor of the stage's root (the caller's; close-on-exec);
 * or returns a negative errno with *STAGE_ROOT -1 and *STAGE
 * STAGE_WORK_STAGE (the tmpfs) or STAGE_WORK_OVERLAY (the overlay).
 */
int jail_stage_build(const struct job_spec *spec, int lower, int *stage_root,
    int *stage);


#endif
