/*
 * fs_tar_unpack.c: a tar stream into the workspace (fs_tar.h,
 * fstar_unpack). libarchive reads the stream through our read callback
 * (or from memory); every entry is written through the file API
 * (fsapi_put_req, fsapi_mkdir), never by libarchive; small files go to
 * the writer threads (fs_tar_submit.c, fs_tar_pool.h).
 */
#include "fs_tar.h"
#include "fs_tar_internal.h"
#include "fs_tar_pool.h"
#include "fsapi_internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsreport.h"
#include "fsutil.h"
#include "wspath.h"

/* One read of the stream, bytes: one buffer per request, never per
 * entry (a pipe gives at most its capacity per read). */
#define READ_BUF (1u << 20)

/* libarchive's read callback: the next bytes of IN_FD into BUF. */
static la_ssize_t
src_read(struct archive *a, void *arg, const void **out)
{
	struct unpack *u = arg;
	ssize_t n;

	for (;;) {
		if (fsapi_copy_stopped()) {
			u->read_err = -EINTR;
			archive_set_error(a, EINTR, "interrupted");
			return -1;
		}
		if (u->pool != NULL) /* the read may wait for the writer */
			fstar_pool_kick(u->pool);
		n = read(u->in_fd, u->buf, READ_BUF);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		u->read_err = -errno;
		archive_set_error(a, errno, "cannot read the stream: %s",
		    strerror(errno));
		return -1;
	}
	if (u->nhead < sizeof(u->head)) {
		size_t k = sizeof(u->head) - u->nhead;

		k = (size_t)n < k ? (size_t)n : k;
		memcpy(u->head + u->nhead, u->buf, k);
		u->nhead += k;
	}
	*out = u->buf;
	return n;
}

/* An inline archive, handed to libarchive in one block. */
struct mem_src {
	const void *data;
	size_t len;
};

/* libarchive's read callback for a struct mem_src: all of it, once. */
static la_ssize_t
mem_read(struct archive *a, void *arg, const void **out)
{
	struct mem_src *m = arg;
	size_t n = m->len;

	*out = m->data;
	m->len = 0;
	return (la_ssize_t)n;
}

/*
 * Opens A on the read callback RD with ARG, checking every step:
 * libarchive 3.6's archive_read_open and archive_read_open_memory ignore
 * a failed allocation in archive_read_set_callback_data and then crash
 * in archive_read_open1 (found with tests/lib/faultshim.c). Returns an
 * ARCHIVE_* status.
 */
static int
open_checked(struct archive *a, archive_read_callback *rd, void *arg)
{
	if (archive_read_set_read_callback(a, rd) != ARCHIVE_OK ||
	    archive_read_set_callback_data(a, arg) != ARCHIVE_OK)
		return ARCHIVE_FATAL;
	return archive_read_open1(a);
}

/* What a stream that is not tar starts like, for the message; NULL when
 * it is none of the compressed formats people send by mistake. */
static const char *
compressed_name(const unsigned char *h, size_t n)
{
	if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
		return "gzip";
	if (n >= 3 && memcmp(h, "BZh", 3) == 0)
		return "bzip2";
	if (n >= 6 &&
	    memcmp(h,
		"\xfd"
		"7zXZ\0",
		6) == 0)
		return "xz";
	if (n >= 4 && memcmp(h, "\x28\xb5\x2f\xfd", 4) == 0)
		return "zstd";
	return NULL;
}

/*
 * The file API's fill (fsapi_internal.h, struct fsapi_wreq): the current
 * entry's data from libarchive into OUT. An entry declared over LIMIT - 1
 * bytes is claimed as LIMIT without reading (the file API then names
 * too_large or quota_exceeded). The blocks go where their offsets say
 * (a sparse entry keeps its holes) and the file is cut to the declared
 * size; libarchive never gives more than that, and a stream that ends
 * before it is its fatal error.
 */
static int
fill_entry(void *arg, int out, uint64_t limit, uint64_t *copied, bool *out_side)
{
	struct unpack *u = arg;
	const void *block;
	size_t len;
	la_int64_t off;
	uint64_t end = 0;
	int r, e;

	*out_side = false;
	if (u->size >= limit) {
		*copied = limit;
		return 0;
	}
	for (;;) {
		r = archive_read_data_block(u->a, &block, &len, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN || off < 0 ||
		    (uint64_t)off + len > u->size) {
			u->arc_failed = true;
			return u->read_err < 0 ? u->read_err : -EIO;
		}
		if (len == 0)
			continue;
		if ((e = fstar_pwrite_all(out, block, len, (off_t)off)) < 0) {
			*out_side = true;
			return e;
		}
		end = (uint64_t)off + len;
	}
	if (end < u->size && ftruncate(out, (off_t)u->size) < 0) {
		*out_side = true;
		return -errno;
	}
	*copied = u->size;
	return 0;
}

/* Whether U->cur is already the parent directory of U->path, whose last
 * component starts at NAME_OFF. */
static bool
current_parent(const struct unpack *u, size_t name_off)
{
	size_t plen = name_off > 0 ? name_off - 1 : 0;

	return u->cur != NULL && plen == u->parent_len &&
	    memcmp(u->parent, u->path, plen) == 0;
}

/*
 * Makes sure U's cached parent is the directory holding U->path, whose
 * last component starts at NAME_OFF: resolved once per run of entries
 * in the same directory, made (mkdir -p) when missing. Returns 0 or a
 * negative errno with *WHY set.
 */
static int
use_parent(struct unpack *u, size_t name_off, enum fs_error *why)
{
	const struct wspath_limits lim = fsapi_path_limits(u->ctx);
	size_t plen = name_off > 0 ? name_off - 1 : 0;
	const char *name;
	int fd;

	if (current_parent(u, name_off))
		return 0;
	fstar_pdir_put(u->cur);
	u->cur = NULL;
	fd = fsapi_open_parent(u->ctx->root, u->path, &lim, &name, why);
	if (fd == -ENOENT && plen > 0) {
		/* An archive need not hold its directories: made as tar
		 * makes them. */
		u->path[plen] = '\0';
		fd = fsapi_mkdir(u->ctx, u->path, 0755, true, why);
		u->path[plen] = '/';
		if (fd == 0)
			fd = fsapi_open_parent(u->ctx->root, u->path, &lim,
			    &name, why);
	}
	if (fd < 0)
		return fd;
	if ((u->cur = malloc(sizeof(*u->cur))) == NULL) {
		close(fd);
		return fsapi_fail(why, FS_IO_ERROR, -ENOMEM);
	}
	u->cur->fd = fd;
	u->cur->refs = 1;
	memcpy(u->parent, u->path, plen);
	u->parent[plen] = '\0';
	u->parent_len = plen;
	return 0;
}

/*
 * The workspace path of the entry named NAME (LEN bytes) into U->path:
 * "./" prefixes and trailing slashes dropped; *TOP set for the entry
 * that names DIR itself ("." or "./"). Returns 0 or -EINVAL with *F set
 * (invalid_path, the rule in the message: checked on the name alone
 * first, so that ".." or an absolute name is called that, then joined
 * under the quota's limits).
 */
static int
entry_path(struct unpack *u, const char *name, size_t len, bool *top,
    struct fstar_fail *f)
{
	const struct wspath_limits lim = fsapi_path_limits(u->ctx);
	const char *orig = name;
	size_t olen = len, dlen = strlen(u->dir);
	enum wspath_rule rule;

	*top = false;
	while (len >= 2 && name[0] == '.' && name[1] == '/') {
		name += 2;
		len -= 2;
	}
	while (len > 1 && name[len - 1] == '/')
		len--;
	if (len == 0 || (len == 1 && name[0] == '.')) {
		*top = true;
		return 0;
	}
	rule = wspath_why(name, len, NULL);
	if (rule != WSPATH_OK && rule != WSPATH_TOO_LONG &&
	    rule != WSPATH_TOO_DEEP)
		return fstar_fail_entry(f, FS_INVALID_PATH, orig, olen,
		    wspath_rule_text(rule), EINVAL);
	if (dlen + 1 + len >= sizeof(u->path))
		return fstar_fail_entry(f, FS_INVALID_PATH, orig, olen,
		    wspath_rule_text(WSPATH_TOO_LONG), EINVAL);
	if (dlen > 0) {
		memcpy(u->path, u->dir, dlen);
		u->path[dlen++] = '/';
	}
	memcpy(u->path + dlen, name, len);
	u->path[dlen + len] = '\0';
	rule = wspath_why(u->path, dlen + len, &lim);
	if (rule != WSPATH_OK)
		return fstar_fail_entry(f, FS_INVALID_PATH, orig, olen,
		    wspath_rule_text(rule), EINVAL);
	return 0;
}

/*
 * The name of the entry E into *NAME (E's, borrowed) and *LEN, and its
 * kind checked: only files and directories are unpacked. Returns 0 or a
 * negative errno with *F set (invalid_path, hardlinked_file,
 * symlink_refused, not_regular_file).
 */
static int
entry_name_kind(struct archive_entry *e, const char **name, size_t *len,
    struct fstar_fail *f)
{
	mode_t type = archive_entry_filetype(e);

	*name = archive_entry_pathname(e);
	if (*name == NULL)
		*name = archive_entry_pathname_utf8(e);
	if (*name == NULL)
		return fstar_fail_entry(f, FS_INVALID_PATH, "?", 1,
		    "an entry without a name the archive could give", EINVAL);
	*len = strlen(*name);
	if (archive_entry_hardlink(e) != NULL)
		return fstar_fail_entry(f, FS_HARDLINKED_FILE, *name, *len,
		    "a hard link in the archive: only files and "
		    "directories are unpacked",
		    EMLINK);
	if (type == AE_IFLNK)
		return fstar_fail_entry(f, FS_SYMLINK_REFUSED, *name, *len,
		    "a symbolic link in the archive: only files and "
		    "directories are unpacked",
		    ELOOP);
	if (type != AE_IFREG && type != AE_IFDIR)
		return fstar_fail_entry(f, FS_NOT_REGULAR_FILE, *name, *len,
		    "a device, FIFO or socket in the archive: only "
		    "files and directories are unpacked",
		    EINVAL);
	return 0;
}

/*
 * The file entry NAME (LEN bytes; U->path, its name at OFF) written by
 * this thread from the archive's data, with PERM, into the parent
 * use_parent opened, counted in *N. Returns 0 or a negative errno with
 * *F set.
 */
static int
put_file_entry(struct unpack *u, const char *name, size_t len, size_t off,
    mode_t perm, struct fstar_counts *n, struct fstar_fail *f)
{
	struct fsapi_wreq knobs;
	enum fs_error why;
	uint64_t written;
	int r;

	memset(&knobs, 0, sizeof(knobs));
	knobs.name = u->path + off;
	knobs.dirfd = u->cur->fd;
	knobs.fill = fill_entry;
	knobs.fill_arg = u;
	u->arc_failed = false;
	r = fsapi_put_req(u->ctx, u->path, -1, &knobs, perm, u->overwrite,
	    &written, &why);
	if (r < 0 && u->arc_failed)
		return fstar_fail_entry(f, FS_IO_ERROR, name, len,
		    archive_error_string(u->a) != NULL
			? archive_error_string(u->a)
			: "the archive's data ended early",
		    -r);
	if (r < 0)
		return fstar_fail_entry(f, why, name, len,
		    fsreport_explain(u->ctx, why, u->path, strlen(u->path),
			NULL, 0),
		    -r);
	n->files++;
	n->bytes += written;
	return 0;
}

/* One entry E (its data not read yet) into the workspace. */
static int
one_entry(struct unpack *u, struct archive_entry *e, struct fstar_counts *n,
    struct fstar_fail *f)
{
	mode_t type = archive_entry_filetype(e), perm;
	enum fs_error why;
	const char *name;
	size_t len = 0, off;
	bool top;
	int r;

	if ((r = entry_name_kind(e, &name, &len, f)) < 0)
		return r;
	if ((r = entry_path(u, name, len, &top, f)) < 0)
		return r;
	perm = archive_entry_perm(e) & 0777;
	u->size = archive_entry_size_is_set(e) && archive_entry_size(e) > 0
	    ? (uint64_t)archive_entry_size(e)
	    : 0;
	off = strrchr(u->path, '/') != NULL
	    ? (size_t)(strrchr(u->path, '/') - u->path) + 1
	    : 0;
	if (type == AE_IFREG && !top && u->pool != NULL &&
	    u->size <= FSTAR_JOB_MAX && len <= FSTAR_ENTRY_MAX) {
		/* Another directory, which may have to be made: only once
		 * the files in flight are written, so that an earlier file
		 * of that name is there to refuse it (not_a_directory), and
		 * the quota's entry count is exact. */
		if (!current_parent(u, off) &&
		    (r = fstar_collect(u, n, f, COLLECT_ALL)) < 0)
			return r;
		if ((r = use_parent(u, off, &why)) < 0)
			return fstar_fail_entry(f, why, name, len,
			    fsreport_explain(u->ctx, why, u->path,
				strlen(u->path), NULL, 0),
			    -r);
		return fstar_submit_file(u, name, len, off, perm, n, f);
	}
	/* Everything else here, in order, once the writers are done: the
	 * quotas and the error's order stay as one writer's. */
	if ((r = fstar_collect(u, n, f, COLLECT_ALL)) < 0)
		return r;
	if (type == AE_IFDIR) {
		if (!top &&
		    (r = fsapi_mkdir(u->ctx, u->path, perm | 0700, true,
			 &why)) < 0)
			return fstar_fail_entry(f, why, name, len,
			    fsreport_explain(u->ctx, why, u->path,
				strlen(u->path), NULL, 0),
			    -r);
		n->directories++;
		return 0;
	}
	if (top)
		return fstar_fail_entry(f, FS_INVALID_PATH, name, len,
		    "a file entry names "
		    "the directory unpacked into",
		    EINVAL);
	if ((r = use_parent(u, off, &why)) < 0)
		return fstar_fail_entry(f, why, name, len,
		    fsreport_explain(u->ctx, why, u->path, strlen(u->path),
			NULL, 0),
		    -r);
	return put_file_entry(u, name, len, off, perm, n, f);
}

/* The archive's error after next_header failed, as *F. */
static int
stream_error(struct unpack *u, const void *data, size_t len,
    struct fstar_fail *f, uint64_t done)
{
	const char *what = compressed_name(u->in_fd >= 0 ? u->head : data,
	    u->in_fd >= 0 ? u->nhead : len);
	char text[200];

	if (u->read_err < 0)
		return fstar_fail_entry(f, FS_IO_ERROR, NULL, 0,
		    archive_error_string(u->a), -u->read_err);
	if (what != NULL)
		snprintf(text, sizeof(text),
		    "a %s stream: stockade reads "
		    "uncompressed tar only (decompress it first)",
		    what);
	else if (done == 0)
		snprintf(text, sizeof(text), "not a tar archive (%s)",
		    archive_error_string(u->a) != NULL
			? archive_error_string(u->a)
			: "unknown");
	else
		snprintf(text, sizeof(text),
		    "a damaged archive after entry "
		    "%llu: %s",
		    (unsigned long long)done,
		    archive_error_string(u->a) != NULL
			? archive_error_string(u->a)
			: "unknown");
	return fstar_fail_entry(f, FS_IO_ERROR, NULL, 0, text, EIO);
}

/*
 * The entries of the archive U->a opened (E its entry to read headers
 * into; DATA and LEN the archive in memory, for stream_error) into the
 * workspace, one by one, then its end checked: both end-of-archive blocks
 * read. Counts in *N. Returns 0 or a negative errno with *F set (an
 * earlier entry's failure over a later one's).
 */
static int
unpack_entries(struct unpack *u, struct archive_entry *e, const void *data,
    size_t len, struct fstar_counts *n, struct fstar_fail *f)
{
	int64_t before;
	int r, rc;

	for (;;) {
		before = archive_filter_bytes(u->a, 0);
		rc = archive_read_next_header2(u->a, e);
		if (rc == ARCHIVE_EOF)
			break;
		/* ARCHIVE_RETRY (a header that does not check) is no
		 * entry either; ARCHIVE_WARN is one, with a remark. */
		if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
			/* The files in flight first: an earlier entry's
			 * failure wins, and the count is of entries done. */
			if ((r = fstar_collect(u, n, f, COLLECT_ALL)) < 0)
				goto failed;
			r = stream_error(u, data, len, f,
			    n->files + n->directories);
			goto failed;
		}
		if ((r = one_entry(u, e, n, f)) < 0)
			goto failed;
		u->seq++;
		if ((r = fstar_collect(u, n, f, COLLECT_NOW)) < 0)
			goto failed;
	}
	if ((r = fstar_collect(u, n, f, COLLECT_ALL)) < 0)
		return r;
	/*
	 * An archive ends with two zero blocks of 512 bytes (POSIX.1-2017,
	 * pax, "ustar Interchange Format"), which libarchive consumes; it
	 * accepts a stream that stops after an entry, after the first zero
	 * block, or inside the second (issue 23), each a producer that died
	 * before the end. Headers and data areas are whole blocks, and the
	 * last entry's data was read (fill_entry), so the first zero block
	 * starts where its padding ends: BEFORE rounded up to a block. Both
	 * blocks must have been consumed from there.
	 */
	if (archive_filter_bytes(u->a, 0) - ((before + 511) & ~(int64_t)511) <
	    1024)
		r = fstar_fail_entry(f, FS_IO_ERROR, NULL, 0,
		    "the stream ended without "
		    "the two end-of-archive blocks (cut short?)",
		    EIO);
	return r;
failed:
	/* This entry failed (or one in flight before it did): what the
	 * writers still hold is collected, and an earlier entry's failure
	 * replaces this one's. */
	if (u->fail_seq == UINT64_MAX)
		u->fail_seq = u->seq;
	(void)fstar_collect(u, n, f, COLLECT_ALL);
	return r;
}

int
fstar_unpack(struct fs_ctx *ctx, const char *dir, int in_fd, const void *data,
    size_t len, bool overwrite, struct fstar_counts *n, struct fstar_fail *f)
{
	struct mem_src mem = {data, len};
	struct unpack *u;
	struct archive_entry *e = NULL;
	enum fs_error why;
	int r = 0, rc;

	memset(n, 0, sizeof(*n));
	memset(f, 0, sizeof(*f));
	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (in_fd >= 0 && (u->buf = malloc(READ_BUF)) == NULL)) {
		free(u);
		return fstar_fail_entry(f, FS_IO_ERROR, NULL, 0,
		    "out of memory", ENOMEM);
	}
	u->ctx = ctx;
	u->in_fd = in_fd;
	/* A pipe of READ_BUF rather than 64 KiB: the producer (tar) and the
	 * broker each wait on the other less often. Best effort (EPERM
	 * past the user's pipe quota, pipe(7)). */
	if (in_fd >= 0)
		(void)fcntl(in_fd, F_SETPIPE_SZ, (int)READ_BUF);
	u->fail_seq = UINT64_MAX;
	u->overwrite = overwrite;
	/* Writers for small new files; without (no memory, or overwrite,
	 * whose replacements need the sequential path) one thread does all. */
	if (!overwrite)
		u->pool = fstar_pool_new(ctx->root);
	u->dir = strcmp(dir, ".") == 0 ? "" : dir;
	if (u->dir[0] != '\0' &&
	    (r = fsapi_mkdir(ctx, dir, 0755, true, &why)) < 0) {
		r = fstar_fail_entry(f, why, NULL, 0, NULL, -r);
		goto out;
	}
	/* Tar and nothing else: no filter but "none" (the *_all calls
	 * would add decompressors, some of them external programs). */
	if ((u->a = archive_read_new()) == NULL ||
	    /* Our own entry, checked: libarchive 3.6's archive_read_new
	     * does not check the one it allocates for
	     * archive_read_next_header, which then crashes on NULL (found
	     * with tests/lib/faultshim.c). */
	    (e = archive_entry_new2(u->a)) == NULL ||
	    archive_read_support_format_tar(u->a) != ARCHIVE_OK ||
	    archive_read_support_filter_none(u->a) != ARCHIVE_OK) {
		r = fstar_fail_entry(f, FS_IO_ERROR, NULL, 0, "out of memory",
		    ENOMEM);
		goto out;
	}
	rc = in_fd >= 0 ? open_checked(u->a, src_read, u)
			: open_checked(u->a, mem_read, &mem);
	if (rc != ARCHIVE_OK) {
		r = stream_error(u, data, len, f, 0);
		goto out;
	}
	r = unpack_entries(u, e, data, len, n, f);
out:
	fstar_pool_free(u->pool);
	archive_entry_free(e); /* before the archive it was made for */
	if (u->a != NULL)
		archive_read_free(u->a);
	fstar_pdir_put(u->cur);
	free(u->buf);
	free(u);
	return r;
}
