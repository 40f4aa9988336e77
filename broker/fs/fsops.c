/*
 * fsops.c: the host file API's operations under a session's quotas
 * (fsapi.h: struct fs_ctx and what follows it); mkdir is in
 * fsops_mkdir.c.
 *
 * Every path is checked as a string with the quota's limits, then its
 * parent (or, for a listing, the directory itself) is resolved once with
 * openat2 beneath the workspace (fsapi_internal.h), and the last
 * component is used only through *at calls on that descriptor. The usage
 * figures are bookkeeping, not security: the job can change the
 * workspace at any moment, so they are a close estimate that each job
 * invalidates, and the limits that matter for safety (where a file goes,
 * what is followed) never depend on them.
 */
#include "fsapi.h"
#include "fsapi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "wspath.h"
#include "wswalk.h"

void
fsapi_ctx_init(struct fs_ctx *ctx, int root, const struct fs_quota *q)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->root = root;
	ctx->quota = *q;
	ctx->usage_valid = false;
}

struct wspath_limits
fsapi_path_limits(const struct fs_ctx *ctx)
{
	struct wspath_limits lim = {
	    .max_path = ctx->quota.max_path,
	    .max_depth = ctx->quota.max_depth,
	};

	return lim;
}

const char *
fs_type_name(enum fs_type type)
{
	switch (type) {
	case FS_T_FILE:
		return "file";
	case FS_T_DIR:
		return "directory";
	case FS_T_SYMLINK:
		return "symlink";
	case FS_T_FIFO:
		return "fifo";
	case FS_T_SOCKET:
		return "socket";
	case FS_T_CHAR:
		return "char_device";
	case FS_T_BLOCK:
		return "block_device";
	}
	return "file";
}

/* A + B and A - B, saturating: the figures are estimates and must not
 * wrap when the job changed the workspace behind our back. */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t
sub_sat(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

enum fs_type
fs_type_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return FS_T_DIR;
	case S_IFLNK:
		return FS_T_SYMLINK;
	case S_IFIFO:
		return FS_T_FIFO;
	case S_IFSOCK:
		return FS_T_SOCKET;
	case S_IFCHR:
		return FS_T_CHAR;
	case S_IFBLK:
		return FS_T_BLOCK;
	default:
		return FS_T_FILE;
	}
}

/* Fills E from ST for PATH (borrowed). A job can set any mtime: one past
 * what int64 nanoseconds hold (the year 2262) is clamped. */
static void
fill_entry(struct fs_entry *e, const char *path, const struct stat *st)
{
	const int64_t max_sec = INT64_MAX / 1000000000 - 1;
	int64_t sec = (int64_t)st->st_mtim.tv_sec;

	if (sec > max_sec)
		sec = max_sec;
	if (sec < -max_sec)
		sec = -max_sec;
	e->path = path;
	e->type = fs_type_of(st->st_mode);
	e->size = st->st_size < 0 ? 0 : (uint64_t)st->st_size;
	e->mode = (uint32_t)(st->st_mode & 07777);
	e->mtime_ns = sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
	e->nlink = (uint64_t)st->st_nlink;
}

/* ---- Usage ------------------------------------------------------------ */

struct usage_acc {
	uint64_t bytes, entries, disk;
	const struct fsapi_walk_tee *tee; /* also told, or NULL */
};

/* The disk space ST costs: its blocks, shared among its hard links so
 * that a file linked ten times in the workspace counts once. */
static uint64_t
entry_disk(const struct stat *st)
{
	uint64_t bytes = (uint64_t)st->st_blocks * 512u;

	if (!S_ISDIR(st->st_mode) && st->st_nlink > 1)
		bytes /= (uint64_t)st->st_nlink;
	return bytes;
}

static int
usage_one(void *arg, const struct wswalk_entry *e)
{
	struct usage_acc *acc = arg;

	acc->entries++;
	if (S_ISREG(e->st->st_mode) && e->st->st_size > 0)
		acc->bytes = add_sat(acc->bytes, (uint64_t)e->st->st_size);
	acc->disk = add_sat(acc->disk, entry_disk(e->st));
	if (acc->tee != NULL && acc->tee->fn != NULL)
		return acc->tee->fn(acc->tee->arg, e);
	return 0;
}

/* wswalk's on_denied for the usage walk: passed on to the tee's. */
static void
usage_denied(void *arg, const char *path)
{
	struct usage_acc *acc = arg;

	acc->tee->on_denied(acc->tee->arg, path);
}

/* The quota's depth, or the wspath default when the quota leaves it 0. */
static unsigned
depth_limit(const struct fs_ctx *ctx)
{
	return ctx->quota.max_depth ? ctx->quota.max_depth : WSPATH_MAX_DEPTH;
}

int
fsapi_usage(struct fs_ctx *ctx)
{
	return fsapi_usage_walk(ctx, NULL, NULL);
}

int
fsapi_usage_walk(struct fs_ctx *ctx, const struct fsapi_walk_tee *tee,
    struct wswalk_stats *stats)
{
	struct usage_acc acc = {0, 0, 0, tee};
	struct wswalk_stats local;
	struct wswalk_opts opts = {
	    .max_depth = depth_limit(ctx),
	    /* One more than the quota tells "over" from "exactly". */
	    .max_entries = (size_t)add_sat(ctx->quota.max_files, 1),
	    .prefix = NULL,
	    .on_denied = tee != NULL && tee->on_denied != NULL ? usage_denied
							       : NULL,
	    .interrupted = tee != NULL ? tee->interrupted : NULL,
	};
	int r;

	if (stats == NULL)
		stats = &local;
	ctx->usage_valid = false;
	r = wswalk(ctx->root, &opts, usage_one, &acc, stats);
	if (r < 0)
		return r;
	ctx->used_bytes = acc.bytes;
	ctx->used_disk = acc.disk;
	ctx->used_entries = acc.entries;
	ctx->usage_valid = true;
	if (stats->truncated || stats->deeper || stats->denied > 0 ||
	    acc.entries > ctx->quota.max_files) {
		/* What lies past the bounds, or in a directory the walk
		 * was denied, is unknown, so the workspace counts as full
		 * (fail closed): at least max_files + 1 entries, which
		 * refuses every write and mkdir. */
		if (ctx->used_entries <= ctx->quota.max_files)
			ctx->used_entries = add_sat(ctx->quota.max_files, 1);
		return -E2BIG;
	}
	return 0;
}

/*
 * The checks before an operation that adds PATH to the workspace: PATH
 * valid under LIM, the usage figures made valid (fsapi_usage), and the
 * workspace not over its entry quota: one over it takes nothing more,
 * not even an overwrite, as its true size is unknown. Returns 0 or a
 * negative errno with *WHY set.
 */
int
fsapi_may_add(struct fs_ctx *ctx, const char *path,
    const struct wspath_limits *lim, enum fs_error *why)
{
	int r;

	if (path == NULL || wspath_check(path, strlen(path), lim) < 0)
		return fsapi_fail(why, FS_INVALID_PATH, -EINVAL);
	if (!ctx->usage_valid && (r = fsapi_usage(ctx)) < 0 && r != -E2BIG)
		return fsapi_fail(why, FS_IO_ERROR, r);
	if (ctx->used_entries > ctx->quota.max_files)
		return fsapi_fail(why, FS_QUOTA_EXCEEDED, -EDQUOT);
	return 0;
}

/* ---- stat and list ---------------------------------------------------- */

int
fsapi_stat(struct fs_ctx *ctx, const char *path, struct fs_entry *e,
    enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	_cleanup_close_ int dirfd = -1;
	const char *name;
	struct stat st;

	*why = FS_OK;
	if (path != NULL && strcmp(path, ".") == 0) {
		if (fstat(ctx->root, &st) < 0)
			return fsapi_fail(why, FS_IO_ERROR, -errno);
		fill_entry(e, path, &st);
		return 0;
	}
	dirfd = fsapi_open_parent(ctx->root, path, &lim, &name, why);
	if (dirfd < 0)
		return dirfd;
	/* lstat semantics: a symlink is described, never followed. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	fill_entry(e, path, &st);
	return 0;
}

struct list_acc {
	fs_list_fn fn;
	void *arg;
	bool recursive;
	bool fn_failed;
	bool fn_stopped; /* FN returned 1: truncated */
	bool overlong; /* paths over max_path left out */
	size_t max_path;
};

static int
list_one(void *arg, const struct wswalk_entry *w)
{
	struct list_acc *acc = arg;
	struct fs_entry e;
	int r;

	/* No client could name it back, nor anything below it: left out
	 * (and not entered), the listing truncated. */
	if (strlen(w->path) > acc->max_path) {
		acc->overlong = true;
		return 1;
	}
	fill_entry(&e, w->path, w->st);
	if ((r = acc->fn(acc->arg, &e)) < 0) {
		acc->fn_failed = true;
		return r;
	}
	if (r > 0) {
		acc->fn_stopped = true;
		return -ECANCELED;
	}
	/* One level only: report a directory, do not enter it. */
	return !acc->recursive && S_ISDIR(w->st->st_mode) ? 1 : 0;
}

int
fsapi_list(struct fs_ctx *ctx, const char *path, bool recursive, size_t limit,
    fs_list_fn fn, void *arg, bool *truncated, enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	_cleanup_close_ int dirfd = -1;
	struct list_acc acc = {
	    .fn = fn,
	    .arg = arg,
	    .recursive = recursive,
	    .max_path = lim.max_path ? lim.max_path : WSPATH_MAX_PATH,
	};
	struct wswalk_stats stats;
	struct wswalk_opts opts;
	unsigned depth = 0, max = depth_limit(ctx);
	int r;

	*why = FS_OK;
	*truncated = false;
	if (path == NULL)
		return fsapi_fail(why, FS_INVALID_PATH, -EINVAL);
	if (strcmp(path, ".") != 0) {
		if (wspath_check(path, strlen(path), &lim) < 0)
			return fsapi_fail(why, FS_INVALID_PATH, -EINVAL);
		/* The directory itself, resolved once: a symlink to a
		 * directory is refused, a file is not_a_directory. */
		dirfd = fsapi_openat2(ctx->root, path, O_PATH | O_DIRECTORY, 0);
		if (dirfd < 0)
			return fsapi_fail(why, fs_error_from_errno(-dirfd),
			    dirfd);
		depth = wspath_depth(path);
	}
	/* Every path reported can be named back: no deeper than the
	 * quota's depth, counted from the workspace. */
	memset(&opts, 0, sizeof(opts));
	opts.max_depth = depth < max ? max - depth : 0;
	if (!recursive && opts.max_depth > 1)
		opts.max_depth = 1;
	if (limit == 0 || limit > ctx->quota.max_files)
		limit = (size_t)ctx->quota.max_files;
	opts.max_entries = limit;
	opts.prefix = depth > 0 ? path : NULL;
	r = wswalk(dirfd >= 0 ? dirfd : ctx->root, &opts, list_one, &acc,
	    &stats);
	if (r == -ECANCELED && acc.fn_stopped) {
		*truncated = true;
		return 0;
	}
	if (r < 0)
		return fsapi_fail(why,
		    acc.fn_failed ? FS_IO_ERROR : fs_error_from_errno(-r), r);
	*truncated = stats.truncated || stats.deeper || stats.denied > 0 ||
	    acc.overlong;
	return 0;
}

/* ---- remove and rename ------------------------------------------------ */

/* Takes what ST describes out of the usage figures, when they are kept. */
static void
usage_forget(struct fs_ctx *ctx, const struct stat *st)
{
	if (!ctx->usage_valid)
		return;
	ctx->used_entries = sub_sat(ctx->used_entries, 1);
	if (S_ISREG(st->st_mode) && st->st_size > 0)
		ctx->used_bytes = sub_sat(ctx->used_bytes,
		    (uint64_t)st->st_size);
}

int
fsapi_remove(struct fs_ctx *ctx, const char *path, bool recursive,
    enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	_cleanup_close_ int dirfd = -1;
	const char *name;
	struct stat st;
	int e;

	*why = FS_OK;
	dirfd = fsapi_open_parent(ctx->root, path, &lim, &name, why);
	if (dirfd < 0)
		return dirfd;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	/* unlinkat removes the directory entry itself: a symlink goes, its
	 * target stays. The flag follows what fstatat saw; if the job
	 * swapped the entry's type since, the kernel refuses (EISDIR,
	 * ENOTDIR) and nothing else is touched. */
	if (unlinkat(dirfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) ==
	    0) {
		usage_forget(ctx, &st);
		return 0;
	}
	e = errno;
	if (!S_ISDIR(st.st_mode) || (e != ENOTEMPTY && e != EEXIST))
		return fsapi_fail(why, fs_error_from_errno(e), -e);
	if (!recursive)
		return fsapi_fail(why, FS_NOT_EMPTY, -ENOTEMPTY);
	/* Never follows a link, never leaves the mount (fsutil.h). What it
	 * removed is not counted: the figures are walked again. */
	ctx->usage_valid = false;
	if ((e = remove_tree_at(dirfd, name)) < 0)
		return fsapi_fail(why, fs_error_from_errno(-e), e);
	return 0;
}

int
fsapi_rename(struct fs_ctx *ctx, const char *from, const char *to,
    bool overwrite, enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	_cleanup_close_ int fdir = -1;
	_cleanup_close_ int tdir = -1;
	const char *fname, *tname;
	struct stat fst, tst;
	bool replacing = false;

	*why = FS_OK;
	fdir = fsapi_open_parent(ctx->root, from, &lim, &fname, why);
	if (fdir < 0)
		return fdir;
	tdir = fsapi_open_parent(ctx->root, to, &lim, &tname, why);
	if (tdir < 0)
		return tdir;
	/* For the usage figures only: what the rename will replace. */
	if (overwrite && ctx->usage_valid &&
	    fstatat(fdir, fname, &fst, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fstatat(tdir, tname, &tst, AT_SYMLINK_NOFOLLOW) == 0)
		replacing = fst.st_dev != tst.st_dev ||
		    fst.st_ino != tst.st_ino;
	/* The entries themselves are moved: a symlink is moved as a link,
	 * never followed. */
	if (renameat2(fdir, fname, tdir, tname,
		overwrite ? 0 : RENAME_NOREPLACE) < 0) {
		int e = errno;

		/* EINVAL: a directory moved into itself (rename(2)). */
		return fsapi_fail(why,
		    e == EINVAL ? FS_INVALID_PATH : fs_error_from_errno(e), -e);
	}
	if (replacing)
		usage_forget(ctx, &tst);
	return 0;
}

int
fsapi_symlink(struct fs_ctx *ctx, const char *path, const char *target,
    enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	_cleanup_close_ int dirfd = -1;
	const char *name;
	struct stat rs;
	int e;

	*why = FS_OK;
	if (target == NULL || target[0] == '\0' || strlen(target) >= PATH_MAX)
		return fsapi_fail(why, FS_INVALID_PATH, -EINVAL);
	if ((e = fsapi_may_add(ctx, path, &lim, why)) < 0)
		return e;
	if (ctx->used_entries >= ctx->quota.max_files)
		return fsapi_fail(why, FS_QUOTA_EXCEEDED, -EDQUOT);
	dirfd = fsapi_open_parent(ctx->root, path, &lim, &name, why);
	if (dirfd < 0)
		return dirfd;
	/* symlinkat never replaces: EEXIST for anything at NAME. */
	if (symlinkat(target, dirfd, name) < 0)
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	if (geteuid() == 0 &&
	    (fstat(ctx->root, &rs) < 0 ||
		fchownat(dirfd, name, rs.st_uid, rs.st_gid,
		    AT_SYMLINK_NOFOLLOW) < 0)) {
		e = -errno;
		(void)unlinkat(dirfd, name, 0);
		return fsapi_fail(why, FS_IO_ERROR, e);
	}
	ctx->used_entries = add_sat(ctx->used_entries, 1);
	return 0;
}

/* ---- put and get ------------------------------------------------------ */

int
fsapi_put(struct fs_ctx *ctx, const char *path, int in_fd, mode_t mode,
    bool overwrite, uint64_t *written, enum fs_error *why)
{
	const struct fsapi_wreq knobs = {.name = NULL, .fill = NULL};

	return fsapi_put_req(ctx, path, in_fd, &knobs, mode, overwrite, written,
	    why);
}

int
fsapi_put_begin(struct fs_ctx *ctx, const char *path,
    const struct wspath_limits *lim, mode_t mode, bool overwrite,
    struct fsapi_wreq *w, enum fs_error *why)
{
	int e;

	*why = FS_OK;
	memset(w, 0, sizeof(*w));
	if ((e = fsapi_may_add(ctx, path, lim, why)) < 0)
		return e;
	w->lim = lim;
	w->file_bytes = ctx->quota.file_bytes;
	w->space_left = sub_sat(ctx->quota.workspace_bytes, ctx->used_bytes);
	w->entry_room = ctx->used_entries < ctx->quota.max_files;
	w->mode = mode & ctx->quota.mode_mask;
	w->overwrite = overwrite;
	return 0;
}

void
fsapi_put_end(struct fs_ctx *ctx, const struct fsapi_wreq *w)
{
	if (w->replaced) {
		ctx->used_bytes = add_sat(sub_sat(ctx->used_bytes, w->old_size),
		    w->written);
	} else {
		ctx->used_entries = add_sat(ctx->used_entries, 1);
		ctx->used_bytes = add_sat(ctx->used_bytes, w->written);
	}
}

int
fsapi_put_req(struct fs_ctx *ctx, const char *path, int in_fd,
    const struct fsapi_wreq *knobs, mode_t mode, bool overwrite,
    uint64_t *written, enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	struct fsapi_wreq w;
	int e;

	if (written != NULL)
		*written = 0;
	if ((e = fsapi_put_begin(ctx, path, &lim, mode, overwrite, &w, why)) <
	    0)
		return e;
	w.name = knobs->name;
	w.dirfd = knobs->dirfd;
	w.fill = knobs->fill;
	w.fill_arg = knobs->fill_arg;
	if ((e = fsapi_write_req(ctx->root, path, in_fd, &w, why)) < 0)
		return e;
	fsapi_put_end(ctx, &w);
	if (written != NULL)
		*written = w.written;
	return 0;
}

int
fsapi_get(struct fs_ctx *ctx, const char *path, uint64_t offset,
    uint64_t length, int out_fd, uint64_t *copied, enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(ctx);
	const struct fsapi_rreq r = {
	    .lim = &lim,
	    .allow_hardlinks = ctx->quota.allow_hardlinks,
	    .offset = offset,
	    .length = length,
	    .max_bytes = ctx->quota.file_bytes,
	};

	return fsapi_read_req(ctx->root, path, &r, out_fd, copied, why);
}
