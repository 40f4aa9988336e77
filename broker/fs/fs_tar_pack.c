/*
 * fs_tar_pack.c: a workspace directory or file out as a pax tar stream
 * (fs_tar.h, fstar_pack). The tree is walked with wswalk and every file
 * opened with fsapi_open_regular_at, as fs.list and fs.read do;
 * libarchive only formats the stream, through our write callback.
 */
#include "fs_tar.h"
#include "fsapi_internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "wspath.h"
#include "wswalk.h"

/* A tar block (POSIX.1-2017, pax, "ustar Interchange Format"), bytes. */
#define TAR_BLOCK 512

/* One read of a file, bytes (one buffer per request). */
#define READ_BUF (1u << 20)
/* libarchive's output block: what each write(2) of the stream carries
 * (tar's own default is 10240); the last one is not padded. */
#define OUT_BLOCK (64u << 10)

struct pack {
	struct fs_ctx *ctx;
	struct archive *a;
	struct archive_entry *e; /* one, cleared for each entry */
	int out_fd;
	uint64_t out_bytes, max_bytes;
	int write_err; /* -errno of a failed write of OUT_FD */
	bool dead; /* failed: libarchive writes nothing more
				  * (no end blocks after a failure, which
				  * would make a cut archive look whole) */
	char *buf; /* READ_BUF bytes */
	struct fstar_counts *n;
	struct fstar_fail *f;
	size_t skip; /* bytes of the walked paths' prefix to
				  * drop (PATH and its '/') */
};

/*
 * libarchive's writer references this from the table of every output
 * format (archive_write_set_format.c), which would link all of them
 * (7-Zip, XAR, ZIP) and their compression libraries into the broker from
 * the static library: our own definition keeps that table out. It is
 * called only for an entry type the format cannot hold; we never give
 * one (files and directories only).
 */
int __archive_write_entry_filetype_unsupported(struct archive *a,
    struct archive_entry *e, const char *format);
int
__archive_write_entry_filetype_unsupported(struct archive *a,
    struct archive_entry *e, const char *format)
{
	(void)e;
	archive_set_error(a, EINVAL, "%s cannot hold this entry type", format);
	return ARCHIVE_FAILED;
}

/* libarchive's write callback: LEN bytes of the stream to OUT_FD. */
static la_ssize_t
dst_write(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct pack *p = arg;
	const char *q = buf;
	size_t left = len;

	if (p->dead) {
		archive_set_error(a, EIO, "the request failed");
		return -1;
	}
	if (p->max_bytes - p->out_bytes < len) {
		p->write_err = -EFBIG;
		archive_set_error(a, EFBIG, "over the inline limit");
		return -1;
	}
	while (left > 0) {
		ssize_t n;

		if (fsapi_copy_stopped()) {
			p->write_err = -EINTR;
			archive_set_error(a, EINTR, "interrupted");
			return -1;
		}
		n = write(p->out_fd, q, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			p->write_err = -errno;
			archive_set_error(a, errno,
			    "cannot write the stream: "
			    "%s",
			    strerror(errno));
			return -1;
		}
		q += n;
		left -= (size_t)n;
	}
	p->out_bytes += len;
	return (la_ssize_t)len;
}

/* Sets *P's failure to WHY on the workspace path NAME (NULL: the
 * request's PATH) with TEXT (NULL: the front's explanation). */
static int
pack_fail(struct pack *p, enum fs_error why, const char *name, const char *text,
    int err)
{
	struct fstar_fail *f = p->f;

	fstar_fail_set(f, why, text);
	if (name != NULL && (f->entry = strdup(name)) != NULL)
		f->entry_len = strlen(name);
	return -err;
}

/* A failure of libarchive's (the write callback's, or its own). */
static int
arc_fail(struct pack *p, const char *name)
{
	if (p->write_err == -EFBIG)
		return pack_fail(p, FS_TOO_LARGE, NULL,
		    "the archive is over "
		    "inline_kb: pass a descriptor",
		    EFBIG);
	return pack_fail(p, FS_IO_ERROR, name, archive_error_string(p->a),
	    p->write_err < 0 ? -p->write_err : EIO);
}

/* The header of the entry NAME described by ST (a file or directory). */
static int
put_header(struct pack *p, const char *name, const struct stat *st)
{
	struct archive_entry *e = p->e;

	archive_entry_clear(e);
	archive_entry_copy_pathname(e, name);
	archive_entry_set_filetype(e,
	    S_ISDIR(st->st_mode) ? AE_IFDIR : AE_IFREG);
	/* Never setuid, setgid or sticky: root may unpack it. */
	archive_entry_set_perm(e, st->st_mode & 0777);
	archive_entry_set_size(e, S_ISREG(st->st_mode) ? st->st_size : 0);
	archive_entry_set_mtime(e, st->st_mtim.tv_sec, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	/* A warning is a name that is not UTF-8 here: written as it is
	 * (pax hdrcharset=BINARY). */
	if (archive_write_header(p->a, e) < ARCHIVE_WARN)
		return arc_fail(p, name);
	return 0;
}

/* The regular file NAME in DIRFD (its archive name ARC) into the
 * stream, as fs.read opens one. In a walk (not ALONE), one fs.read would
 * refuse for what it is (a link, a FIFO, a hard-linked file) or that
 * vanished is skipped and counted; ALONE, that is the error. */
static int
put_file(struct pack *p, int dirfd, const char *name, const char *arc,
    bool alone)
{
	_cleanup_close_ int fd = -1;
	enum fs_error why;
	struct stat st;
	uint64_t left;
	int e;

	fd = fsapi_open_regular_at(dirfd, name, p->ctx->quota.allow_hardlinks,
	    &st, &why);
	if (fd < 0 && !alone &&
	    (why == FS_SYMLINK_REFUSED || why == FS_HARDLINKED_FILE ||
		why == FS_NOT_REGULAR_FILE || why == FS_NOT_FOUND)) {
		p->n->skipped++;
		return 0;
	}
	if (fd < 0)
		return pack_fail(p, why, alone ? NULL : arc, NULL, -fd);
	if ((uint64_t)st.st_size > p->ctx->quota.file_bytes)
		return pack_fail(p, FS_TOO_LARGE, arc, NULL, EFBIG);
	if ((e = put_header(p, arc, &st)) < 0)
		return e;
	for (left = (uint64_t)st.st_size; left > 0;) {
		size_t want = left < READ_BUF ? (size_t)left : READ_BUF;
		ssize_t n = read(fd, p->buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pack_fail(p, FS_IO_ERROR, arc, NULL, errno);
		if (n == 0)
			return pack_fail(p, FS_IO_ERROR, arc,
			    "the file shrank "
			    "while it was packed",
			    EIO);
		if (archive_write_data(p->a, p->buf, (size_t)n) != n)
			return arc_fail(p, arc);
		left -= (uint64_t)n;
	}
	p->n->files++;
	p->n->bytes += (uint64_t)st.st_size;
	return 0;
}

static int
pack_one(void *arg, const struct wswalk_entry *w)
{
	struct pack *p = arg;
	const char *arc = w->path + p->skip;
	int e;

	if (S_ISDIR(w->st->st_mode)) {
		if ((e = put_header(p, arc, w->st)) < 0)
			return e;
		p->n->directories++;
		return 0;
	}
	if (!S_ISREG(w->st->st_mode)) {
		p->n->skipped++;
		return 0;
	}
	return put_file(p, w->dirfd, w->name, arc, false);
}

/* Number of components of PATH (a path wspath accepted). */
static unsigned
depth_of(const char *path)
{
	unsigned d = 1;

	for (; *path != '\0'; path++)
		d += *path == '/';
	return d;
}

/* wswalk's stop check: the front's (fsapi_set_interrupted). */
static int
walk_stopped(void)
{
	return fsapi_copy_stopped() ? 1 : 0;
}

/* PATH, a directory (DIRFD, O_PATH) or else a file, into the stream. */
static int
pack_tree(struct pack *p, const char *path)
{
	const struct wspath_limits lim = fsapi_path_limits(p->ctx);
	const unsigned max = lim.max_depth ? lim.max_depth : WSPATH_MAX_DEPTH;
	_cleanup_close_ int dirfd = -1;
	struct wswalk_stats stats;
	struct wswalk_opts opts;
	enum fs_error why;
	const char *name;
	unsigned depth = 0;
	int r;

	if (strcmp(path, ".") != 0) {
		if (wspath_check(path, strlen(path), &lim) < 0)
			return pack_fail(p, FS_INVALID_PATH, NULL, NULL,
			    EINVAL);
		dirfd = fsapi_openat2(p->ctx->root, path, O_PATH | O_DIRECTORY,
		    0);
		if (dirfd == -ENOTDIR) {
			/* A file: packed alone, under its own name. */
			dirfd = fsapi_open_parent(p->ctx->root, path, &lim,
			    &name, &why);
			if (dirfd < 0)
				return pack_fail(p, why, NULL, NULL, -dirfd);
			return put_file(p, dirfd, name, name, true);
		}
		if (dirfd < 0)
			return pack_fail(p, fs_error_from_errno(-dirfd), NULL,
			    NULL, -dirfd);
		depth = depth_of(path);
		p->skip = strlen(path) + 1;
	}
	memset(&opts, 0, sizeof(opts));
	opts.max_depth = depth < max ? max - depth : 0;
	opts.max_entries = SIZE_MAX;
	opts.prefix = depth > 0 ? path : NULL;
	opts.interrupted = walk_stopped;
	r = wswalk(dirfd >= 0 ? dirfd : p->ctx->root, &opts, pack_one, p,
	    &stats);
	if (r < 0 && p->f->why != FS_OK)
		return r;
	if (r < 0)
		return pack_fail(p,
		    r == -EINTR ? FS_IO_ERROR : fs_error_from_errno(-r), NULL,
		    NULL, -r);
	p->n->skipped += stats.skipped + stats.denied + (stats.deeper ? 1 : 0);
	return 0;
}

int
fstar_pack(struct fs_ctx *ctx, const char *path, int out_fd, uint64_t max_bytes,
    struct fstar_counts *n, struct fstar_fail *f)
{
	struct pack p;
	int r;

	memset(n, 0, sizeof(*n));
	memset(f, 0, sizeof(*f));
	memset(&p, 0, sizeof(p));
	p.ctx = ctx;
	p.out_fd = out_fd;
	/* A pipe of 1 MiB: fewer waits between the broker and the reader
	 * (best effort, pipe(7); nothing for a file or socket). */
	(void)fcntl(out_fd, F_SETPIPE_SZ, 1 << 20);
	p.max_bytes = max_bytes;
	p.n = n;
	p.f = f;
	if ((p.buf = malloc(READ_BUF)) == NULL ||
	    (p.e = archive_entry_new()) == NULL ||
	    (p.a = archive_write_new()) == NULL ||
	    archive_write_set_format_pax_restricted(p.a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(p.a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(p.a, OUT_BLOCK) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(p.a, 1) != ARCHIVE_OK) {
		r = pack_fail(&p, FS_IO_ERROR, NULL, "out of memory", ENOMEM);
		goto out;
	}
	if (archive_write_open(p.a, &p, NULL, dst_write, NULL) != ARCHIVE_OK) {
		r = arc_fail(&p, NULL);
		goto out;
	}
	if ((r = pack_tree(&p, path)) == 0 &&
	    archive_write_close(p.a) != ARCHIVE_OK)
		r = arc_fail(&p, NULL);
out:
	p.dead = r < 0;
	if (p.a != NULL)
		archive_write_free(p.a);
	/* What went out so far may end on an entry's boundary, which a
	 * reader could take for a whole archive: a block whose checksum
	 * cannot match ends it, so `tar x` fails ("Skipping to next
	 * header") rather than believing it complete. Best effort. */
	if (r < 0 && out_fd >= 0 && p.out_bytes + TAR_BLOCK <= max_bytes) {
		char poison[TAR_BLOCK];

		memset(poison, 0xff, sizeof(poison));
		(void)write_all(out_fd, poison, sizeof(poison));
	}
	if (p.e != NULL)
		archive_entry_free(p.e);
	free(p.buf);
	return r;
}
