/*
 * fs_tar_submit.c: fs.unpack's small files handed to the writer threads
 * and collected back in the archive's order (fs_tar_internal.h,
 * fs_tar_pool.h); the rest of the unpack is fs_tar_unpack.c's.
 */
#include "fs_tar_internal.h"

#include <archive.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsreport.h"

void
fstar_pdir_put(struct pdir *d)
{
	if (d != NULL && --d->refs == 0) {
		close(d->fd);
		free(d);
	}
}

/*
 * Takes the files the writers finished, oldest first: those done now,
 * at least the oldest (ONE), or every one in flight (ALL). A file
 * written is counted in the quota figures, and in N when it comes before
 * any failure; the first failure in the archive's order becomes *F (it
 * replaces one of a later entry) and cancels what has not started.
 * Returns 0, or -EIO once a failure is known.
 */
int
fstar_collect(struct unpack *u, struct fstar_counts *n, struct fstar_fail *f,
    enum collect_wait wait)
{
	struct fstar_job *j;

	while (u->pool != NULL &&
	    (j = fstar_pool_done(u->pool, wait != COLLECT_NOW)) != NULL) {
		u->pending_entries--;
		u->pending_bytes -= j->len;
		if (j->err == 0) {
			fsapi_put_end(u->ctx, &j->w);
			if (j->seq < u->fail_seq) {
				n->files++;
				n->bytes += j->w.written;
			}
		} else if (j->err != -ECANCELED && j->seq < u->fail_seq) {
			fstar_fail_entry(f, j->why, j->entry, j->entry_len,
			    fsreport_explain(u->ctx, j->why, j->path,
				strlen(j->path), NULL, 0),
			    -j->err);
			u->fail_seq = j->seq;
			fstar_pool_cancel(u->pool);
		}
		fstar_pdir_put(j->owner);
		fstar_pool_release(u->pool, j);
		if (wait == COLLECT_ONE)
			wait = COLLECT_NOW;
	}
	return u->fail_seq != UINT64_MAX ? -EIO : 0;
}

/* W's new file's owner (fsapi_root_owner), looked up once per request,
 * not per file; after a failure, per file by the writer. */
static void
job_owner(struct unpack *u, struct fsapi_wreq *w)
{
	if (u->owner.owner_known == 0)
		(void)fsapi_root_owner(u->ctx->root, &u->owner);
	w->owner_known = u->owner.owner_known;
	w->uid = u->owner.uid;
	w->gid = u->owner.gid;
}

/*
 * The file entry NAME (LEN bytes; U->path its workspace path, its last
 * component at OFF, its parent U->cur, U->size bytes, at most
 * FSTAR_JOB_MAX) to a writer: checked and its quotas figured here as
 * fsapi_put does (less what is in flight), its data copied out of the
 * stream, then written by the pool. Returns 0 or a negative errno with
 * *F set.
 */
int
fstar_submit_file(struct unpack *u, const char *name, size_t len, size_t off,
    mode_t perm, struct fstar_counts *n, struct fstar_fail *f)
{
	const struct fs_quota *q = &u->ctx->quota;
	struct fstar_job *j;
	enum fs_error why;
	la_ssize_t got = 0;
	size_t have = 0;
	int r;

	while ((j = fstar_pool_next(u->pool)) == NULL)
		if ((r = fstar_collect(u, n, f, COLLECT_ONE)) < 0)
			return r;
	memcpy(j->path, u->path, strlen(u->path) + 1);
	j->lim = fsapi_path_limits(u->ctx);
	if ((r = fsapi_put_begin(u->ctx, j->path, &j->lim, perm, false, &j->w,
		 &why)) < 0)
		return fstar_fail_entry(f, why, name, len,
		    fsreport_explain(u->ctx, why, u->path, strlen(u->path),
			NULL, 0),
		    -r);
	/* What is in flight is not counted yet, but will be. */
	j->w.space_left = j->w.space_left > u->pending_bytes
	    ? j->w.space_left - u->pending_bytes
	    : 0;
	if (u->ctx->used_entries + u->pending_entries >= q->max_files)
		j->w.entry_room = false;
	j->w.name = j->path + off;
	j->w.dirfd = u->cur->fd;
	job_owner(u, &j->w);
	/* The data (a sparse entry's holes as zeros), before the file:
	 * one cut short is this entry's error and makes nothing. */
	while (have < u->size &&
	    (got = archive_read_data(u->a, j->data + have, u->size - have)) > 0)
		have += (size_t)got;
	if (have < u->size)
		return fstar_fail_entry(f, FS_IO_ERROR, name, len,
		    archive_error_string(u->a) != NULL
			? archive_error_string(u->a)
			: "the archive's data ended early",
		    u->read_err < 0 ? -u->read_err : EIO);
	/* Past the entry's padding too, as the sequential path reads to
	 * the end of its data: the end-of-archive check counts from there.
	 * A stream cut inside the padding fails at the next header. */
	(void)archive_read_data_skip(u->a);
	if (len > FSTAR_ENTRY_MAX) /* one_entry never sends one */
		return fstar_fail_entry(f, FS_INVALID_PATH, name, len, NULL,
		    EINVAL);
	memcpy(j->entry, name, len);
	j->entry[len] = '\0';
	j->entry_len = len;
	j->len = have;
	j->seq = u->seq;
	j->owner = u->cur;
	u->cur->refs++;
	u->pending_entries++;
	u->pending_bytes += have;
	(void)fstar_pool_submit(u->pool, j);
	return 0;
}
