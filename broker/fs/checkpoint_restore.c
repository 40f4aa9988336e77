/*
 * checkpoint_restore.c: merging intervals (ckpt_drop) and putting a
 * checkpoint's state back (ckpt_restore), through the file API only:
 * fsapi_remove, fsapi_put, fsapi_mkdir, fsapi_symlink on the session's
 * struct fs_ctx, so RESOLVE_BENEATH and the names' rules hold; the modes
 * and mtimes the API does not set are set with fchmod and futimens on
 * descriptors opened beneath the workspace.
 */
#include "checkpoint.h"
#include "checkpoint_internal.h"
#include "fsapi_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

int
ckpt_iv_merge(struct ckpt_store *st, struct ckpt_iv *dst, struct ckpt_iv *src)
{
	size_t i, kept = 0;
	int r = 0;

	/* In the order saved: a record that covers another was saved after
	 * it (the other would have been covered, so never saved), so no
	 * record of SRC is dropped for one of SRC's own. */
	for (i = 0; i < src->nrecs; i++) {
		struct ckpt_rec *rec = src->recs[i];

		if (r == 0 && ckpt_iv_covers(dst, rec->path))
			ckpt_rec_free(st, rec);
		else if (r == 0 && (r = ckpt_iv_add(dst, rec)) == 0)
			continue;
		else
			src->recs[kept++] = rec;
	}
	src->nrecs = kept;
	free(src->hash);
	src->hash = NULL;
	src->nbuckets = 0;
	src->paths = src->bytes = 0;
	if (kept == 0) {
		free(src->recs);
		src->recs = NULL;
		src->cap = 0;
	}
	return r;
}

/* A restore under way. */
struct restorer {
	struct ckpt_store *st;
	struct fs_ctx *ctx;
	struct ckpt_restore_report *rep;
	bool walked; /* a recursive removal made the usage figures stale */
};

/* Records the failure WHY at PATH in R's report; returns -1. */
static int
fail_at(struct restorer *r, enum fs_error why, const char *path)
{
	r->rep->err = CKPT_FILE;
	r->rep->why = why;
	snprintf(r->rep->path, sizeof(r->rep->path), "%s", path);
	return -1;
}

/* Removes what is at PATH now, recursively; nothing there is fine. */
static int
clear_path(struct restorer *r, const char *path)
{
	enum fs_error why;

	r->ctx->usage_valid = true;
	if (fsapi_remove(r->ctx, path, true, &why) < 0 && why != FS_NOT_FOUND &&
	    why != FS_NOT_A_DIRECTORY)
		return fail_at(r, why, path);
	if (!r->ctx->usage_valid)
		r->walked = true;
	return 0;
}

/* Sets the mtime of the regular file PATH to T (futimens on a descriptor
 * opened beneath the workspace; the atime left as it is). */
static int
set_mtime(struct restorer *r, const char *path, struct timespec t)
{
	const struct timespec ts[2] = {{.tv_nsec = UTIME_OMIT}, t};
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;
	enum fs_error why;
	const char *name;
	struct stat s;

	dirfd = fsapi_open_parent(r->ctx->root, path, NULL, &name, &why);
	if (dirfd < 0)
		return fail_at(r, why, path);
	fd = fsapi_open_regular_at(dirfd, name, true, &s, &why);
	if (fd < 0)
		return fail_at(r, why, path);
	if (futimens(fd, ts) < 0)
		return fail_at(r, FS_IO_ERROR, path);
	return 0;
}

/* Puts the file IT back at PATH from its store copy. */
static int
put_file(struct restorer *r, const char *path, const struct ckpt_item *it)
{
	_cleanup_close_ int in = -1;
	enum fs_error why;
	uint64_t written = 0;
	char bname[24];

	snprintf(bname, sizeof(bname), "%016llx", (unsigned long long)it->blob);
	in = openat(r->st->dirfd, bname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return fail_at(r, FS_IO_ERROR, path);
	r->ctx->usage_valid = true;
	if (fsapi_put(r->ctx, path, in, it->mode, true, &written, &why) < 0)
		return fail_at(r, why, path);
	r->rep->bytes += written;
	return set_mtime(r, path, it->mtime);
}

/* Sets the permission bits of the directory PATH (fchmod on a real
 * descriptor of it, opened beneath the workspace). */
static int
set_dir_mode(struct restorer *r, const char *path, mode_t mode)
{
	_cleanup_close_ int fd = -1;

	fd = fsapi_openat2(r->ctx->root, path, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fail_at(r, fs_error_from_errno(-fd), path);
	if (fchmod(fd, mode & 0777) < 0)
		return fail_at(r, FS_IO_ERROR, path);
	return 0;
}

/* Makes the item IT at PATH again (its directory 0700 for now). */
static int
make_item(struct restorer *r, const char *path, const struct ckpt_item *it)
{
	enum fs_error why;

	r->ctx->usage_valid = true;
	switch (it->kind) {
	case CK_FILE:
		if (put_file(r, path, it) < 0)
			return -1;
		break;
	case CK_DIR:
		if (fsapi_mkdir(r->ctx, path, 0700, false, &why) < 0)
			return fail_at(r, why, path);
		break;
	case CK_SYMLINK:
		if (fsapi_symlink(r->ctx, path, it->target, &why) < 0)
			return fail_at(r, why, path);
		break;
	case CK_SKIPPED:
		r->rep->skipped++;
		return 0;
	case CK_ABSENT:
		break;
	}
	r->rep->paths++;
	return 0;
}

/* The workspace path of REC's item IT into a new string (*OUT). */
static int
item_path(const struct ckpt_rec *rec, const struct ckpt_item *it, char **out)
{
	if (asprintf(out, "%s%s%s", rec->path, it->rel[0] ? "/" : "", it->rel) <
	    0) {
		*out = NULL;
		return -1;
	}
	return 0;
}

/* Puts REC's old state back: what is there now removed, then each item
 * made, shallowest first; directory modes last, deepest first (so that a
 * mode without u+w still let their content be made). */
static int
apply_rec(struct restorer *r, const struct ckpt_rec *rec)
{
	size_t i;

	if (clear_path(r, rec->path) < 0)
		return -1;
	if (rec->items[0].kind == CK_ABSENT) {
		r->rep->paths++;
		return 0;
	}
	for (i = 0; i < rec->nitems; i++) {
		_cleanup_free_ char *p = NULL;

		if (item_path(rec, &rec->items[i], &p) < 0)
			return fail_at(r, FS_IO_ERROR, rec->path);
		if (make_item(r, p, &rec->items[i]) < 0)
			return -1;
	}
	for (i = rec->nitems; i-- > 0;) {
		_cleanup_free_ char *p = NULL;

		if (rec->items[i].kind != CK_DIR)
			continue;
		if (item_path(rec, &rec->items[i], &p) < 0)
			return fail_at(r, FS_IO_ERROR, rec->path);
		if (set_dir_mode(r, p, rec->items[i].mode) < 0)
			return -1;
	}
	return 0;
}

static int
cmp_rec(const void *a, const void *b)
{
	const struct ckpt_rec *const *x = a, *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/* Applies IV's records in path order: an ancestor (a prefix) before
 * what is below it, so that an older record of a path inside a saved
 * directory wins over the directory's copy of it. */
static int
apply_iv(struct restorer *r, const struct ckpt_iv *iv)
{
	struct ckpt_rec **sorted;
	int e = 0;

	if (iv->nrecs == 0)
		return 0;
	sorted = malloc(iv->nrecs * sizeof(*sorted));
	if (sorted == NULL)
		return fail_at(r, FS_IO_ERROR, "");
	memcpy(sorted, iv->recs, iv->nrecs * sizeof(*sorted));
	qsort(sorted, iv->nrecs, sizeof(*sorted), cmp_rec);
	for (size_t i = 0; i < iv->nrecs && e == 0; i++)
		e = apply_rec(r, sorted[i]);
	free(sorted);
	return e;
}

/* Merges every interval after K into K, newest first. Returns 0 or -1
 * with REP set (out of memory: the intervals kept what did not move). */
static int
merge_down(struct ckpt_store *st, size_t k, struct ckpt_restore_report *rep)
{
	for (size_t j = st->nivs - 1; j > k; j--)
		if (ckpt_iv_merge(st, &st->ivs[j - 1], &st->ivs[j]) < 0) {
			rep->err = CKPT_FILE;
			rep->why = FS_IO_ERROR;
			return -1;
		}
	return 0;
}

/* Runs the restore of interval K of R's store with the hook off and the
 * quotas lifted; puts CTX back as it was, the usage figures invalid when
 * a recursive removal made them stale. */
static int
restore_k(struct restorer *r, size_t k)
{
	struct fs_ctx *ctx = r->ctx;
	const struct fs_quota q = ctx->quota;
	int (*hook)(void *, int, const char *) = ctx->before_change;
	bool valid = ctx->usage_valid;
	int e;

	ctx->before_change = NULL;
	ctx->quota.workspace_bytes = UINT64_MAX;
	ctx->quota.file_bytes = UINT64_MAX;
	ctx->quota.max_files = UINT64_MAX;
	ctx->quota.mode_mask = 0777;
	e = apply_iv(r, &r->st->ivs[k]);
	ctx->quota = q;
	ctx->before_change = hook;
	ctx->usage_valid = valid && !r->walked;
	return e;
}

int
ckpt_restore(struct ckpt_store *st, struct fs_ctx *ctx, const char *name,
    size_t len, struct ckpt_restore_report *rep)
{
	struct restorer r = {st, ctx, rep, false};
	long k = -1;

	memset(rep, 0, sizeof(*rep));
	if (!ckpt_name_valid(name, len))
		rep->err = CKPT_INVALID_NAME;
	else if ((k = ckpt_find(st, name, len)) < 0)
		rep->err = CKPT_NO_SUCH;
	else if (st->ivs[k].broken)
		rep->err = CKPT_BROKEN;
	if (rep->err != CKPT_OK)
		return -1;
	if (merge_down(st, (size_t)k, rep) < 0 ||
	    restore_k(&r, (size_t)k) < 0) {
		/* K's records are whole (a second restore redoes it); the
		 * newer checkpoints' are not: their paths changed unseen. */
		for (size_t j = (size_t)k + 1; j < st->nivs; j++)
			st->ivs[j].broken = true;
		return -1;
	}
	for (size_t j = st->nivs; j-- > (size_t)k;)
		ckpt_iv_clear(st, &st->ivs[j]);
	st->nivs = (size_t)k + 1;
	return 0;
}
