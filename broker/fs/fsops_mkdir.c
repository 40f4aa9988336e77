/*
 * fsops_mkdir.c: mkdir in the host file API under a session's quotas
 * (fsapi.h: fsapi_mkdir, fsapi_mkdir_parents_of). Each component is
 * opened with openat2 beneath the descriptor of the one before it, never
 * through a symlink, and a directory made here is the broker's (0700)
 * until it has the mode asked for and the workspace's owner. The other
 * operations are in fsops.c.
 */
#include "fsapi.h"
#include "fsapi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "wspath.h"

/*
 * Sets the permission bits of the directory FD (O_PATH) to MODE exactly
 * (no umask), then, when OWN, gives it the owner of the workspace root
 * ROOT. Through a real descriptor of that very directory ("." beneath
 * FD, which cannot be swapped; it needs u+rx, which a directory the
 * broker made 0700 has unless the umask takes them away - then a broker
 * that is not root gets EACCES): fchmod and fchown refuse O_PATH
 * descriptors, and the confined broker may not chmod or chown a path
 * (confine.h), /proc/self/fd links included. The mode goes first, while
 * the broker still owns the directory, so that no CAP_FOWNER is needed.
 * Returns 0 or -errno.
 */
static int
set_dir_mode(int root, int fd, mode_t mode, bool own)
{
	_cleanup_close_ int rfd = -1;
	struct stat rs;

	do /* EINTR retried, as fsapi_openat2 does */
		rfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (rfd < 0 && errno == EINTR);
	if (rfd < 0 || fchmod(rfd, mode) < 0)
		return -errno;
	if (own &&
	    (fstat(root, &rs) < 0 || fchown(rfd, rs.st_uid, rs.st_gid) < 0))
		return -errno;
	return 0;
}

/* Sets the mode of the directory FD (O_PATH) to MODE (set_dir_mode). */
static int
set_mode(int fd, mode_t mode)
{
	return set_dir_mode(-1, fd, mode, false);
}

/*
 * Makes the directory just created at FD (O_PATH) the workspace's: mode
 * MODE whatever the umask, then owned by the workspace's owner when the
 * broker is root (the job runs as that owner, workspace.h). Returns 0 or
 * -errno.
 */
static int
claim_dir(const struct fs_ctx *ctx, int fd, mode_t mode)
{
	return set_dir_mode(ctx->root, fd, mode, geteuid() == 0);
}

/*
 * Opens the directory NAME (one component) beneath DIRFD, O_PATH: never
 * through a symlink (RESOLVE_NO_SYMLINKS: ELOOP, so that a link is named
 * as one; O_NOFOLLOW would make it ENOTDIR), never anything but a
 * directory (ENOTDIR). O_PATH needs no permission on the directory
 * itself, so a mode the umask emptied does not stop us. Returns an fd or
 * -errno.
 */
static int
open_subdir(int dirfd, const char *name)
{
	return fsapi_openat2(dirfd, name, O_PATH | O_DIRECTORY, 0);
}

/* mkdir without PARENTS: PATH, whose last component is NAME, in the
 * resolved parent DIRFD. An entry there already is exists before the
 * before_change hook hears of it: nothing is to change. */
static int
mkdir_one(struct fs_ctx *ctx, const char *path, int dirfd, const char *name,
    mode_t mode, enum fs_error *why)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int e;

	if (ctx->used_entries >= ctx->quota.max_files)
		return fsapi_fail(why, FS_QUOTA_EXCEEDED, -EDQUOT);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return fsapi_fail(why, FS_EXISTS, -EEXIST);
	if ((e = fsapi_before_change(ctx, path, why)) < 0)
		return e;
	/* 0700 (less the umask) until claim_dir: nobody else gets in before
	 * the mode is what was asked. */
	if (mkdirat(dirfd, name, 0700) < 0)
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	ctx->used_entries++;
	/* The directory just made, opened by name once more beneath the
	 * same parent: a symlink swapped in meanwhile is refused. */
	if ((fd = open_subdir(dirfd, name)) < 0)
		return fsapi_fail(why, fs_error_from_errno(-fd), fd);
	if ((e = claim_dir(ctx, fd, mode)) < 0)
		return fsapi_fail(why, FS_IO_ERROR, e);
	return 0;
}

/* The before_change hook for the first LEN bytes of PATH (a directory
 * mkdir -p is about to make). */
static int
before_prefix(struct fs_ctx *ctx, const char *path, size_t len,
    enum fs_error *why)
{
	char pre[WSPATH_MAX_PATH + 1];

	if (ctx->before_change == NULL)
		return 0;
	if (len >= sizeof(pre))
		return fsapi_fail(why, FS_INVALID_PATH, -EINVAL);
	memcpy(pre, path, len);
	pre[len] = '\0';
	return fsapi_before_change(ctx, pre, why);
}

/*
 * The component COMP of mkdir -p, missing in CUR (the first PLEN bytes
 * of PATH): the before_change hook told, then made (0700; one another
 * made meanwhile will do), then opened with open_subdir. *MADE says
 * whether this call made it. Returns its descriptor (O_PATH), or a
 * negative errno: with *WHY set when the quota, the hook or mkdirat
 * refused, else (*WHY left FS_OK) open_subdir's, for the caller to name.
 */
static int
make_missing(struct fs_ctx *ctx, int cur, const char *comp, const char *path,
    size_t plen, bool *made, enum fs_error *why)
{
	int e;

	if (ctx->used_entries >= ctx->quota.max_files)
		return fsapi_fail(why, FS_QUOTA_EXCEEDED, -EDQUOT);
	if ((e = before_prefix(ctx, path, plen, why)) < 0)
		return e;
	if (mkdirat(cur, comp, 0700) == 0) {
		*made = true;
		ctx->used_entries++;
	} else if (errno != EEXIST) {
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	}
	return open_subdir(cur, comp);
}

/*
 * mkdir -p: one component at a time from the workspace, each opened
 * beneath the previous one's descriptor, made first when missing. A
 * directory made here stays 0700 until its child is made (so that MODE
 * without u+wx still lets the chain go on), then gets MODE.
 */
static int
mkdir_parents(struct fs_ctx *ctx, const char *path, mode_t mode,
    enum fs_error *why)
{
	char comp[WSPATH_MAX_NAME + 1];
	_cleanup_close_ int cur = -1;
	const char *s = path, *slash;
	bool cur_made = false;
	int fd, e;

	cur = fsapi_openat2(ctx->root, ".", O_PATH | O_DIRECTORY, 0);
	if (cur < 0)
		return fsapi_fail(why, FS_IO_ERROR, cur);
	for (;;) {
		size_t n;
		bool last, made = false;

		slash = strchr(s, '/');
		n = slash ? (size_t)(slash - s) : strlen(s);
		last = slash == NULL;
		memcpy(comp, s, n);
		comp[n] = '\0';

		fd = open_subdir(cur, comp);
		if (fd == -ENOENT &&
		    (fd = make_missing(ctx, cur, comp, path,
			 (size_t)(s - path) + n, &made, why)) < 0 &&
		    *why != FS_OK)
			return fd;
		if (fd == -ENOTDIR && last)
			/* Something that is not a directory holds the
			 * name: mkdir -p says "File exists". */
			return fsapi_fail(why, FS_EXISTS, -EEXIST);
		if (fd < 0)
			return fsapi_fail(why, fs_error_from_errno(-fd), fd);
		if ((made && (e = claim_dir(ctx, fd, 0700)) < 0) ||
		    (cur_made && (e = set_mode(cur, mode)) < 0)) {
			close(fd);
			return fsapi_fail(why, FS_IO_ERROR, e);
		}
		close(cur);
		cur = fd;
		cur_made = made;
		if (last)
			break;
		s = slash + 1;
	}
	if (cur_made && (e = set_mode(cur, mode)) < 0)
		return fsapi_fail(why, FS_IO_ERROR, e);
	return 0;
}

int
fsapi_mkdir(struct fs_ctx *ctx, const char *path, mode_t mode, bool parents,
    enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	const mode_t m = mode & ctx->quota.mode_mask & 0777;
	_cleanup_close_ int dirfd = -1;
	const char *name;
	int e;

	*why = FS_OK;
	if ((e = fsapi_may_add(ctx, path, &lim, why)) < 0)
		return e;
	if (parents)
		return mkdir_parents(ctx, path, m, why);
	dirfd = fsapi_open_parent(ctx->root, path, &lim, &name, why);
	if (dirfd < 0)
		return dirfd;
	return mkdir_one(ctx, path, dirfd, name, m, why);
}

int
fsapi_mkdir_parents_of(struct fs_ctx *ctx, const char *path, enum fs_error *why)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *parent = NULL;
	int e;

	*why = FS_OK;
	if (slash == NULL || slash == path)
		return 0;
	parent = strndup(path, (size_t)(slash - path));
	if (parent == NULL)
		return fsapi_fail(why, FS_IO_ERROR, -ENOMEM);
	if ((e = fsapi_mkdir(ctx, parent, 0755, true, why)) < 0 &&
	    *why == FS_EXISTS)
		/* Something not a directory stands where a parent must. */
		*why = FS_NOT_A_DIRECTORY;
	return e;
}
