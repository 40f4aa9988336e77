/*
 * enforce_ws.c: the workspace quota of the enforcer (enforce_internal.h)
 * for a job that writes the workspace itself, i.e. without a stage
 * (job_spec_staged: layer mount_ns or user_ns off; docs/layers.md): the
 * file system's growth watched cheaply, and past what the job may add
 * the workspace's own disk use counted. A job with a stage writes to it
 * instead (issue 26; launcher/init/stage.c), a tmpfs whose size and
 * inodes are the allowance, which the kernel holds (ENOSPC): it is not
 * walked here (enforcer_init without a workspace descriptor), and
 * nothing a job does below /work can make the launcher walk a tree of
 * its making.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "enforce.h"
#include "enforce_internal.h"
#include "utf8.h"

/* The least time between two counts of the workspace, ms. */
#define WS_WALK_MS 250u
/* Bounds of the exact count of the workspace. */
#define WALK_MAX_DEPTH 256u
#define WALK_MAX_ENTRIES 10000000u

/* Used bytes of the file system holding FD, or -errno. */
int
enf_fs_used(int fd, uint64_t *used)
{
	struct statfs sf;
	uint64_t unit;

	if (fstatfs(fd, &sf) < 0)
		return -errno;
	unit = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
	*used = ((uint64_t)sf.f_blocks - (uint64_t)sf.f_bfree) * unit;
	return 0;
}

/*
 * Disk space of every entry beneath ROOT (st_blocks * 512, bytes; 1/n of
 * a file with n hard links at each), never following a link, as the
 * broker counts a job's use of the quota (fsapi.h used_disk; a sparse
 * file costs its blocks, an empty directory its block). -E2BIG past the walk's
 * bounds and -EACCES for a directory that cannot be read: what it holds
 * is unknown, and the caller counts the workspace as full (fail closed).
 */
static int
workspace_bytes(int root, uint64_t *total)
{
	DIR *stack[WALK_MAX_DEPTH];
	size_t depth = 0;
	uint64_t entries = 0;
	int fd, e = 0;

	*total = 0;
	fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (stack[0] = fdopendir(fd)) == NULL) {
		e = -errno;
		if (fd >= 0)
			close(fd);
		return e;
	}
	depth = 1;
	while (depth > 0) {
		DIR *d = stack[depth - 1];
		struct dirent *de;
		struct stat st;
		int sub;

		errno = 0;
		de = readdir(d);
		if (de == NULL) {
			if (errno != 0 && e == 0)
				e = -errno;
			closedir(stack[--depth]);
			continue;
		}
		if (e < 0 || strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++entries > WALK_MAX_ENTRIES) {
			e = -E2BIG;
			continue;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* gone meanwhile */
		/* Every entry costs its blocks (empty directories, long
		 * symlinks too); hard links share theirs. */
		if (S_ISDIR(st.st_mode) || st.st_nlink <= 1)
			*total += (uint64_t)st.st_blocks * 512u;
		else
			*total += (uint64_t)st.st_blocks * 512u /
			    (uint64_t)st.st_nlink;
		if (!S_ISDIR(st.st_mode))
			continue;
		if (depth == WALK_MAX_DEPTH) {
			e = -E2BIG;
			continue;
		}
		sub = openat(dirfd(d), de->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			if (errno != ENOENT)
				e = errno == EACCES || errno == EPERM ? -EACCES
								      : -errno;
			continue;
		}
		if ((stack[depth] = fdopendir(sub)) == NULL) {
			e = -errno;
			close(sub);
			continue;
		}
		depth++;
	}
	return e;
}

enum enforce_reason
enf_check_workspace(struct enforcer *e, uint64_t now)
{
	/* Both are set by the calls below before use; zeroed because gcc
	 * -O2 cannot see it (-Wmaybe-uninitialized in a release build). */
	uint64_t used = 0, total = 0;
	int x;

	if (e->unlimited || e->ws_fd < 0 || enf_fs_used(e->ws_fd, &used) < 0 ||
	    used <= e->ws_used0 || used - e->ws_used0 <= e->ws_allow ||
	    now < e->next_walk_ms)
		return ENF_NONE;
	/* The file system grew by more than the job may add: count. Others
	 * may write to the same file system; only the count decides. */
	e->next_walk_ms = now + WS_WALK_MS;
	x = workspace_bytes(e->ws_fd, &total);
	if (x == 0 && total <= e->lim->workspace_bytes)
		return ENF_NONE;
	if (x < 0)
		fmt_words(e->detail, sizeof(e->detail),
		    "the workspace grew by "
		    "%.1f MiB and could not be counted (%s): counted as "
		    "full",
		    mib(used - e->ws_used0), strerror(-x));
	else
		fmt_words(e->detail, sizeof(e->detail),
		    "/work takes "
		    "%.1f MiB of disk, over its quota of %.1f MiB",
		    mib(total), mib(e->lim->workspace_bytes));
	return enf_stop(e, ENF_WORKSPACE);
}
