/*
 * binds.c: step 4 of mounts.c, the policy's read-only binds
 * (mounts_internal.h): every source opened before the root tmpfs hides
 * the host's /tmp, then each bound at its target, recursive, read-only,
 * nosuid, nodev; a symlink recreated as the same symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail.h"
#include "mounts_internal.h"

/*
 * Opens the host path SRC of a bind into *FD as an O_PATH descriptor, not
 * following a final symlink. Done for every bind before the root tmpfs is
 * mounted over /tmp, which would otherwise hide a source under /tmp.
 * Returns 0 (*FD is -1 for a missing ro_bind_try source, to skip) or a
 * negative errno.
 */
static int
open_source(const char *src, bool try, int *fd)
{
	*fd = open(src, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
	if (try && (errno == ENOENT || errno == ENOTDIR))
		return 0; /* *fd stays -1: skipped */
	return -errno;
}

/* Binds the host object SRC_FD (O_PATH) at jail path TARGET read-only,
 * nosuid, nodev; a symlink is recreated as the same symlink. */
static int
ro_bind(int src_fd, const char *target)
{
	char dst[PATH_MAX], src[64];
	struct stat st;
	int e;

	if ((e = mnt_in_root(dst, sizeof(dst), target)) < 0)
		return e;
	if (fstatat(src_fd, "", &st, AT_EMPTY_PATH) < 0)
		return -errno;
	if ((e = mnt_mkdir_parent(dst)) < 0)
		return e;
	if (S_ISLNK(st.st_mode)) {
		char link[PATH_MAX];
		ssize_t n = readlinkat(src_fd, "", link, sizeof(link) - 1);

		if (n < 0)
			return -errno;
		link[n] = '\0';
		if (symlink(link, dst) < 0 && errno != EEXIST)
			return -errno;
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		e = mnt_mkdir_p(dst, 0755);
	else
		e = mnt_touch(dst);
	if (e < 0)
		return e;
	/* The host's /proc is still mounted: bind what the descriptor holds. */
	snprintf(src, sizeof(src), "/proc/self/fd/%d", src_fd);
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -errno;
	return mnt_setattr(AT_FDCWD, dst, AT_RECURSIVE,
	    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0);
}

/*
 * Steps 4 and 7's sources, opened before the root tmpfs hides the host's
 * /tmp: every bind source of SPEC into SRC_FDS (-1 for a missing
 * ro_bind_try), and with layer private_cwd off (!PRIVATE_DIRS) a
 * detached copy of the host's /tmp into *HOST_TMP. Returns 0, or a
 * negative errno with *STAGE (and *BIND, the failed bind's index).
 */
int
mounts_open_sources(const struct job_spec *spec, int *src_fds,
    bool private_dirs, int *host_tmp, int *stage, int *bind)
{
	int e;

	/* Every bind source, before the root tmpfs hides the host's /tmp.
	 * Init exits on failure, which closes whatever is open. */
	for (uint32_t i = 0; i < spec->nmounts; i++) {
		const struct mount_entry *m = &spec->mounts[i];

		e = open_source(m->source, m->kind == MOUNT_RO_BIND_TRY,
		    &src_fds[i]);
		if (e < 0) {
			/* A source gone since `stockade policy check`: the
			 * result names it. */
			*bind = (int)i;
			return mnt_fail(stage, STAGE_BIND, e);
		}
	}
	/* Layer private_cwd off: a detached copy of the host's /tmp, taken
	 * before the root tmpfs covers it (a bind made later would copy
	 * that tmpfs too); recursive, since a user namespace may copy a
	 * subtree with locked mounts only whole (mount_namespaces(7)). */
	if (!private_dirs) {
		*host_tmp = (int)syscall(SYS_open_tree, AT_FDCWD, "/tmp",
		    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (*host_tmp < 0)
			return mnt_fail(stage, STAGE_TMP, -errno);
	}
	return 0;
}

/*
 * Step 4: binds each open source of SRC_FDS at its target, read-only
 * (ro_bind), closing it. Returns 0, or a negative errno with *STAGE
 * STAGE_BIND and *BIND the index of the bind that failed.
 */
int
mounts_bind_sources(const struct job_spec *spec, int *src_fds, int *stage,
    int *bind)
{
	int e;

	for (uint32_t i = 0; i < spec->nmounts; i++) {
		if (src_fds[i] < 0)
			continue;
		e = ro_bind(src_fds[i], spec->mounts[i].target);
		close(src_fds[i]);
		src_fds[i] = -1;
		if (e < 0) {
			*bind = (int)i;
			return mnt_fail(stage, STAGE_BIND, e);
		}
	}
	return 0;
}
