/*
 * stage_commit.c: applying a job's staged changes to the workspace, all
 * or nothing (stage.h, stage_commit; issue 26). The journal it undoes
 * itself from, and stage_recover, are in stage_journal.c
 * (stage_internal.h says what the journal holds).
 *
 * A commit is a plan, then three steps: (1) every change to apply is
 * checked against the scan's BEFORE (a conflict stops everything); (2)
 * the journal is made: the old version of every file to replace linked
 * (or copied) into it, then the manifest of every operation written
 * whole; (3) the operations run in the manifest's order: deletions
 * (renamed into the journal whole, the deepest first), directories
 * (parents first, made 0700 so that what goes in them can), regular
 * files (fsapi_put from the upper file, opened beneath STAGE/upper, then
 * the job's mtime), symlinks (fsapi_symlink), the modes of directories
 * (the deepest first, last of all: a directory the job made read-only is
 * filled first). A failure undoes what ran, from the journal.
 *
 * A deletion is a rename into the journal rather than fsapi_remove: the
 * old entry must stay whole until the commit is done, and a rename is one
 * step an undo reverses, whatever the entry (a directory with its
 * subtree, a symlink, a FIFO).
 */
#include "stage.h"
#include "stage_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsapi_internal.h"
#include "fsutil.h"
#include "wspath.h"

/* The state of one stage_commit. */
struct commit {
	struct fs_ctx *ctx;
	const struct stage_ref *stage; /* borrowed */
	int upper; /* STAGE/upper, O_PATH */
	const struct changes *ch;
	const enum stage_pick *pick;
	struct stage_commit_report *rep;
	struct stage_op *op; /* the plan, in the order applied */
	size_t n, cap;
	unsigned long next_j; /* the next journal name */
	unsigned long *dj; /* per change: 1 + the J of its D, or 0 */
};

/* Sets REP's failure (WHY at PATH) and returns E. */
static int
fail(struct stage_commit_report *rep, const char *path, enum fs_error why,
    int e)
{
	rep->why = why;
	snprintf(rep->path, sizeof(rep->path), "%s", path ? path : "");
	return e;
}

static bool
picked(const struct commit *c, size_t i)
{
	return c->pick == NULL || c->pick[i] == STAGE_APPLY;
}

/* The entry the workspace had at change X's path (NULL: none). */
static const struct snap_entry *
old_of(const struct change *x)
{
	if (x->kind == CHANGE_CREATED)
		return NULL;
	return x->kind == CHANGE_MODIFIED ? x->old : x->entry;
}

/* Whether change X takes its old entry away whole (a D): a deletion, or
 * a modification that changes the type or is of a symlink. */
static bool
needs_del(const struct change *x)
{
	if (x->kind == CHANGE_DELETED)
		return true;
	if (x->kind == CHANGE_CREATED)
		return false;
	if (x->old->type == FS_T_DIR && x->entry->type == FS_T_DIR)
		return false;
	return x->old->type != FS_T_FILE || x->entry->type != FS_T_FILE;
}

static int
cmp_change(const void *key, const void *elt)
{
	return strcmp(key, ((const struct change *)elt)->entry->path);
}

/* Whether a picked D of an ancestor directory of PATH takes it away. */
static bool
covered(const struct commit *c, const char *path)
{
	char buf[WSPATH_MAX_PATH + 1];
	size_t len = strlen(path), k;

	if (len > WSPATH_MAX_PATH)
		return false;
	memcpy(buf, path, len + 1);
	for (k = len; k-- > 0;) {
		const struct change *x;

		if (buf[k] != '/')
			continue;
		buf[k] = '\0';
		x = bsearch(buf, c->ch->c, c->ch->n, sizeof(*c->ch->c),
		    cmp_change);
		if (x != NULL && picked(c, (size_t)(x - c->ch->c)) &&
		    needs_del(x) && old_of(x)->type == FS_T_DIR)
			return true;
	}
	return false;
}

/* Appends an operation to the plan. */
static int
plan_add(struct commit *c, enum stage_op_kind kind, const struct snap_entry *e,
    unsigned long j, uint32_t mode)
{
	struct stage_op *op;

	if (stage_grow(&c->op, c->n, &c->cap, sizeof(*c->op)) < 0)
		return -ENOMEM;
	op = &c->op[c->n++];
	op->kind = kind;
	op->path = e->path;
	op->e = e;
	op->j = j;
	op->mode = mode;
	return 0;
}

/* The plan's creations of entries of TYPE (C, and S for a file replaced
 * by a file), parents first. */
static int
plan_creates(struct commit *c, enum fs_type type)
{
	size_t i;
	int e = 0;

	for (i = 0; i < c->ch->n && e == 0; i++) {
		const struct change *x = &c->ch->c[i];

		if (!picked(c, i) || x->kind == CHANGE_DELETED ||
		    x->entry->type != type)
			continue;
		if (x->kind == CHANGE_CREATED || needs_del(x))
			e = plan_add(c, STAGE_OP_CREATE, x->entry, c->dj[i], 0);
		else if (type == FS_T_FILE)
			e = plan_add(c, STAGE_OP_SAVE, x->entry, c->next_j++,
			    0);
	}
	return e;
}

/* The plan (the file's head comment): C->op in the order applied. */
static int
plan(struct commit *c)
{
	size_t i;
	int e = 0;

	for (i = c->ch->n; i-- > 0 && e == 0;) {
		const struct change *x = &c->ch->c[i];

		if (!picked(c, i) || !needs_del(x) ||
		    covered(c, x->entry->path))
			continue;
		c->dj[i] = c->next_j + 1;
		e = plan_add(c, STAGE_OP_DEL, old_of(x), c->next_j++, 0);
	}
	if (e == 0)
		e = plan_creates(c, FS_T_DIR);
	if (e == 0)
		e = plan_creates(c, FS_T_FILE);
	if (e == 0)
		e = plan_creates(c, FS_T_SYMLINK);
	for (i = c->ch->n; i-- > 0 && e == 0;) {
		const struct change *x = &c->ch->c[i];

		if (picked(c, i) && x->kind == CHANGE_MODIFIED &&
		    x->old->type == FS_T_DIR && x->entry->type == FS_T_DIR)
			e = plan_add(c, STAGE_OP_MODE, x->entry, 0,
			    x->old->mode);
	}
	return e;
}

/* Whether ST is still the entry B of the scan's BEFORE. A directory
 * whose mode alone the change sets (MODE_ONLY) need only be the same
 * directory: an entry a client added in it since is no conflict of a
 * chmod. */
static bool
unchanged(const struct stat *st, const struct snap_entry *b, bool mode_only)
{
	struct snap_entry now;

	memset(&now, 0, sizeof(now));
	snap_entry_meta(&now, st);
	if (now.type != b->type || now.dev != b->dev || now.ino != b->ino)
		return false;
	return mode_only ||
	    (now.size == b->size && now.mtime_ns == b->mtime_ns &&
		now.ctime_ns == b->ctime_ns);
}

/*
 * Checks that the workspace still has at X's path what the scan saw
 * there (nothing, for a creation). A parent that is no longer a
 * directory, or is a symlink, is no conflict of a creation: the apply
 * refuses it with its own name (symlink_refused...). Returns 0, or
 * -ESTALE with the conflict in REP.
 */
static int
check(struct commit *c, const struct change *x)
{
	const struct wspath_limits lim = fsapi_path_limits(c->ctx);
	const struct snap_entry *b = old_of(x);
	_cleanup_close_ int dirfd = -1;
	const char *name;
	enum fs_error why;
	struct stat st;
	bool ok, gone = false;

	dirfd = fsapi_open_parent(c->ctx->root, x->entry->path, &lim, &name,
	    &why);
	if (dirfd < 0) {
		ok = b == NULL;
	} else if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		gone = errno == ENOENT;
		ok = b == NULL && gone;
	} else {
		ok = b != NULL &&
		    unchanged(&st, b,
			x->kind == CHANGE_MODIFIED && b->type == FS_T_DIR &&
			    x->entry->type == FS_T_DIR);
	}
	if (ok)
		return 0;
	c->rep->conflict = true;
	return fail(c->rep, x->entry->path, gone ? FS_NOT_FOUND : FS_EXISTS,
	    -ESTALE);
}

/* Takes out of CTX's usage what the plan's deletions moved into the
 * journal: every picked deletion, and all that lies below one. */
static void
forget_deleted(struct commit *c)
{
	struct fs_ctx *ctx = c->ctx;
	size_t i;

	if (!ctx->usage_valid)
		return;
	for (i = 0; i < c->ch->n; i++) {
		const struct change *x = &c->ch->c[i];
		const struct snap_entry *b = old_of(x);

		if (b == NULL ||
		    !((picked(c, i) && needs_del(x)) || covered(c, b->path)))
			continue;
		if (ctx->used_entries > 0)
			ctx->used_entries--;
		if (b->type == FS_T_FILE)
			ctx->used_bytes = ctx->used_bytes > b->size
			    ? ctx->used_bytes - b->size
			    : 0;
	}
}

/* D: renames OP's path into the journal J as jJ. */
static int
apply_del(struct commit *c, struct stage_journal *j, const struct stage_op *op)
{
	_cleanup_close_ int dirfd = -1;
	const char *name;
	enum fs_error why;
	char jn[24];

	if ((dirfd = stage_parent(c->ctx->root, op->path, &name, &why)) < 0)
		return fail(c->rep, op->path, why, dirfd);
	stage_jname(jn, op->j);
	if (renameat2(dirfd, name, j->dir, jn, RENAME_NOREPLACE) < 0)
		return fail(c->rep, op->path, fs_error_from_errno(errno),
		    -errno);
	return 0;
}

/* Sets the mtime of the file PATH in the workspace to MTIME: futimens on
 * a descriptor of it opened beneath the workspace, never through a link
 * (a confined broker may not set times by path: confine.h). */
static int
set_mtime(struct commit *c, const char *path, const struct timespec *mtime)
{
	const struct wspath_limits lim = fsapi_path_limits(c->ctx);
	_cleanup_close_ int dirfd = -1, fd = -1;
	struct timespec ts[2] = {{0, UTIME_OMIT}, *mtime};
	const char *name;
	enum fs_error why;
	struct stat st;

	dirfd = fsapi_open_parent(c->ctx->root, path, &lim, &name, &why);
	if (dirfd < 0)
		return fail(c->rep, path, why, dirfd);
	if ((fd = fsapi_open_regular_at(dirfd, name, true, &st, &why)) < 0)
		return fail(c->rep, path, why, fd);
	if (futimens(fd, ts) < 0)
		return fail(c->rep, path, FS_IO_ERROR, -errno);
	return 0;
}

/* C or S of a regular file: the upper file put at OP's path with the
 * job's mode (masked by the quota) and mtime. */
static int
apply_file(struct commit *c, const struct stage_op *op)
{
	const struct wspath_limits lim = fsapi_path_limits(c->ctx);
	_cleanup_close_ int up = -1, fd = -1;
	const char *name;
	enum fs_error why;
	uint64_t written = 0;
	struct stat st;
	int e;

	if ((up = fsapi_open_parent(c->upper, op->path, &lim, &name, &why)) < 0)
		return fail(c->rep, op->path, why, up);
	if ((fd = stage_open_at(c->stage, up, name, false)) < 0)
		return fail(c->rep, op->path, fs_error_from_errno(-fd), fd);
	if (fstat(fd, &st) < 0)
		return fail(c->rep, op->path, FS_IO_ERROR, -errno);
	if (st.st_nlink != 1)
		return fail(c->rep, op->path, FS_HARDLINKED_FILE, -EMLINK);
	/* The stage is the job's no more, but it must be what was scanned. */
	if (st.st_dev != (dev_t)op->e->dev || st.st_ino != (ino_t)op->e->ino ||
	    (uint64_t)st.st_size != op->e->size)
		return fail(c->rep, op->path, FS_IO_ERROR, -ESTALE);
	e = fsapi_put(c->ctx, op->path, fd, op->e->mode,
	    op->kind == STAGE_OP_SAVE, &written, &why);
	c->rep->bytes += written;
	if (e < 0)
		return fail(c->rep, op->path, why, e);
	return set_mtime(c, op->path, &st.st_mtim);
}

/* C of a symlink: the upper link's target, as it is. */
static int
apply_link(struct commit *c, const struct stage_op *op)
{
	const struct wspath_limits lim = fsapi_path_limits(c->ctx);
	_cleanup_close_ int up = -1;
	char target[PATH_MAX];
	const char *name;
	enum fs_error why;
	ssize_t n;
	int e;

	if ((up = fsapi_open_parent(c->upper, op->path, &lim, &name, &why)) < 0)
		return fail(c->rep, op->path, why, up);
	if ((n = readlinkat(up, name, target, sizeof(target))) < 0)
		return fail(c->rep, op->path, fs_error_from_errno(errno),
		    -errno);
	if ((size_t)n >= sizeof(target))
		return fail(c->rep, op->path, FS_INVALID_PATH, -ENAMETOOLONG);
	target[n] = '\0';
	if ((e = fsapi_symlink(c->ctx, op->path, target, &why)) < 0)
		return fail(c->rep, op->path, why, e);
	return 0;
}

/* Sets the directory PATH's mode to the job's MODE masked by the quota
 * (never through a link). */
static int
set_mode(struct commit *c, const char *path, uint32_t mode)
{
	const mode_t m = mode & c->ctx->quota.mode_mask & 0777;
	_cleanup_close_ int dirfd = -1;
	const char *name;
	enum fs_error why;

	int e;

	if ((dirfd = stage_parent(c->ctx->root, path, &name, &why)) < 0)
		return fail(c->rep, path, why, dirfd);
	if ((e = stage_chmod_dir(dirfd, name, m)) < 0)
		return fail(c->rep, path, fs_error_from_errno(-e), e);
	return 0;
}

/* Runs OP of the plan. */
static int
apply_one(struct commit *c, struct stage_journal *j, const struct stage_op *op)
{
	enum fs_error why;
	int e;

	switch (op->kind) {
	case STAGE_OP_DEL:
		return apply_del(c, j, op);
	case STAGE_OP_SAVE:
		return apply_file(c, op);
	case STAGE_OP_MODE:
		return set_mode(c, op->path, op->e->mode);
	case STAGE_OP_CREATE:
		break;
	}
	if (op->e->type == FS_T_FILE)
		return apply_file(c, op);
	if (op->e->type == FS_T_SYMLINK)
		return apply_link(c, op);
	if ((e = fsapi_mkdir(c->ctx, op->path, 0700, false, &why)) < 0)
		return fail(c->rep, op->path, why, e);
	return 0;
}

/* Runs the plan, then gives the directories it made their modes, the
 * deepest first. Returns 0, or the failure with *DONE the operations
 * that may have changed the workspace. */
static int
apply(struct commit *c, struct stage_journal *j, size_t *done)
{
	size_t i;
	int e;

	bool forgot = false;

	for (*done = 0; *done < c->n; (*done)++) {
		const struct stage_op *op = &c->op[*done];

		if (op->kind != STAGE_OP_DEL && !forgot) {
			forget_deleted(c);
			forgot = true;
		}
		if ((e = apply_one(c, j, op)) < 0) {
			/* A failed creation leaves nothing of its own but a
			 * directory it could not give its mode; a failed
			 * replacement, the old file or the new one. What
			 * was there already (exists) is not its to undo. */
			if (op->kind == STAGE_OP_SAVE ||
			    (op->kind == STAGE_OP_CREATE &&
				c->rep->why != FS_EXISTS))
				(*done)++;
			return e;
		}
	}
	if (!forgot)
		forget_deleted(c);
	for (i = c->n; i-- > 0;) {
		const struct stage_op *op = &c->op[i];

		if (op->kind == STAGE_OP_CREATE && op->e->type == FS_T_DIR &&
		    (e = set_mode(c, op->path, op->e->mode)) < 0)
			return e;
	}
	return 0;
}

/* Makes the journal of C's plan: the saves, then the manifest. *MADE
 * tells whether the journal directory is this commit's. */
static int
journal(struct commit *c, struct stage_journal *j, bool *made)
{
	enum fs_error why;
	size_t i;
	int e;

	*made = false;
	if ((e = stage_journal_open(j, c->ctx->root)) < 0)
		return fail(c->rep, STAGE_JOURNAL, fs_error_from_errno(-e), e);
	*made = true;
	j->op = c->op;
	j->n = c->n;
	for (i = 0; i < c->n; i++) {
		if (c->op[i].kind == STAGE_OP_SAVE &&
		    (e = stage_journal_save(j, &c->op[i], &why)) < 0)
			return fail(c->rep, c->op[i].path, why, e);
	}
	if ((e = stage_journal_write(j)) < 0)
		return fail(c->rep, STAGE_JOURNAL, fs_error_from_errno(-e), e);
	return 0;
}

/* Journals and applies C's plan; on a failure, undoes it. */
static int
run(struct commit *c)
{
	struct stage_journal j;
	size_t done = 0;
	bool made;
	int e;

	memset(&j, 0, sizeof(j));
	j.dir = -1;
	if ((e = journal(c, &j, &made)) < 0) {
		/* Nothing applied: the journal holds links and copies. */
		(void)stage_journal_close(&j, made);
		return e;
	}
	if ((e = apply(c, &j, &done)) == 0 &&
	    (e = stage_journal_done(&j)) == 0) {
		(void)stage_journal_close(&j, true);
		return 0;
	}
	if (c->rep->why == FS_OK)
		(void)fail(c->rep, STAGE_JOURNAL, fs_error_from_errno(-e), e);
	c->ctx->usage_valid = false;
	if (stage_journal_undo(&j, done, NULL) == 0) {
		c->rep->undone = true;
		(void)stage_journal_close(&j, true);
	} else {
		/* Left for stage_recover to try again. */
		(void)stage_journal_close(&j, false);
	}
	return e;
}

/* Checks every picked change against the scan, and the workspace's usage
 * figures valid (deletions are counted against them). */
static int
prepare(struct commit *c)
{
	size_t i;
	int e;

	if (c->ch->truncated)
		return fail(c->rep, "", FS_QUOTA_EXCEEDED, -E2BIG);
	for (i = 0; i < c->ch->n; i++)
		if (picked(c, i) && (e = check(c, &c->ch->c[i])) < 0)
			return e;
	if (!c->ctx->usage_valid && (e = fsapi_usage(c->ctx)) < 0 &&
	    e != -E2BIG)
		return fail(c->rep, "", FS_IO_ERROR, e);
	return 0;
}

/* Tells CTX's before_change hook (checkpoints, fsapi.h) of every picked
 * path before the journal links old files or moves deletions away (the
 * file API's own later calls find them saved). 0, or the hook's refusal
 * in C's report (nothing done). */
static int
tell_hook(struct commit *c)
{
	enum fs_error why = FS_OK;
	int e;

	for (size_t i = 0; i < c->ch->n; i++) {
		const char *path = c->ch->c[i].entry->path;

		if (picked(c, i) &&
		    (e = fsapi_before_change(c->ctx, path, &why)) < 0)
			return fail(c->rep, path, why, e);
	}
	return 0;
}

int
stage_commit(struct fs_ctx *ctx, const struct stage_ref *stage,
    const struct stage_scan *scan, const struct changes *ch,
    const enum stage_pick *pick, struct stage_commit_report *rep)
{
	struct commit c = {.ctx = ctx,
	    .stage = stage,
	    .upper = -1,
	    .ch = ch,
	    .pick = pick,
	    .rep = rep};
	size_t i;
	int e;

	(void)scan; /* ch borrows its entries */
	memset(rep, 0, sizeof(*rep));
	if ((e = prepare(&c)) < 0 || (e = tell_hook(&c)) < 0)
		return e;
	c.upper = fsapi_openat2(stage->fd, STAGE_UPPER, O_PATH | O_DIRECTORY,
	    0);
	if (c.upper < 0)
		return fail(rep, STAGE_UPPER, fs_error_from_errno(-c.upper),
		    c.upper);
	if ((c.dj = calloc(ch->n + 1, sizeof(*c.dj))) == NULL ||
	    (e = plan(&c)) < 0)
		e = fail(rep, "", FS_IO_ERROR, -ENOMEM);
	else if (c.n > 0)
		e = run(&c);
	if (e == 0)
		for (i = 0; i < ch->n; i++)
			rep->applied += picked(&c, i);
	close(c.upper);
	free(c.op);
	free(c.dj);
	return e;
}
