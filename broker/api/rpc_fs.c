/*
 * rpc_fs.c: the fs.* methods of `stockade serve` (docs/protocol.md), on
 * the host file API (fsapi.h); the envelope is rpc.c's, the parameters
 * rpc_params.c's.
 */
#include "rpc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsreport.h"
#include "fsutil.h"
#include "snapshot.h"
#include "utf8.h"
#include "wspath.h"

/*
 * How long a write from a pipe without "size" waits, once the pipe has
 * ended, for a sign that the client died, milliseconds. A killed client
 * releases its descriptors one by one (task_work_run, which may
 * reschedule between them), its pipe's write end possibly before its
 * connection: the pipe's end of file can come first. A live client is
 * waiting for the answer and never hangs up, so it pays this once per
 * such write; "size" makes the check exact and the wait unnecessary.
 */
#define CLIENT_SETTLE_MS 50

/* Whether the client's connection is closed, or closes within WAIT_MS
 * (POLLHUP: both directions; a client that only shut down its writing
 * still reads its answers and has not gone). */
static bool
client_gone(const struct rpc_session *s, int wait_ms)
{
	struct pollfd p = {.fd = s->client_fd, .events = 0};
	int n;

	if (s->client_fd < 0)
		return false;
	do
		n = poll(&p, 1, wait_ms);
	while (n < 0 && errno == EINTR);
	return n == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/*
 * fs.write from the descriptor "fd": a regular file is read from its
 * offset as it is (and must then hold SIZE bytes, unless SIZE is
 * UINT64_MAX); anything else is staged first into a memory file (*MFD,
 * the caller's to close), at most the quota's file size or SIZE. Sets
 * *IN to the descriptor to write from; returns false with C's error set.
 */
static bool
write_source_fd(struct call *c, struct rawpath *p, uint64_t size, int *in,
    int *mfd)
{
	uint64_t got, limit = c->s->fs.quota.file_bytes;
	enum fs_error why;
	struct stat st;

	if (!rpc_get_fd(c, true, in))
		return false;
	if (fstat(*in, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t off = lseek(*in, 0, SEEK_CUR);

		if (size != UINT64_MAX && off >= 0 &&
		    (uint64_t)(st.st_size > off ? st.st_size - off : 0) !=
			size) {
			rpc_file_error(c, FS_IO_ERROR, p, NULL,
			    "the file does "
			    "not hold size bytes from its offset");
			return false;
		}
		return true;
	}
	if (size != UINT64_MAX && size < limit)
		limit = size;
	/* Staged (fsapi_stage): nothing is named before the data has ended
	 * and its size and the client are checked. A regular file needs no
	 * staging: its content is all there. */
	if ((*mfd = fsapi_stage(c->s->fs.root, *in, limit, &got, &why)) < 0) {
		rpc_file_error(c, why, p, NULL, NULL);
		return false;
	}
	if (size != UINT64_MAX && got != size) {
		rpc_file_error(c, got > size ? FS_TOO_LARGE : FS_IO_ERROR, p,
		    NULL,
		    "the descriptor did not give size bytes: "
		    "nothing written");
		return false;
	}
	if (got > limit) {
		rpc_file_error(c, FS_TOO_LARGE, p, NULL, NULL);
		return false;
	}
	if (client_gone(c->s, size != UINT64_MAX ? 0 : CLIENT_SETTLE_MS)) {
		rpc_file_error(c, FS_IO_ERROR, p, NULL,
		    "the client went away "
		    "before the data ended: nothing written");
		return false;
	}
	*in = *mfd;
	return true;
}

/*
 * fs.write from the inline parameter SOURCE ("data", base64, or "text",
 * the string's bytes), at most the quota's inline size, put in a memory
 * file: *MFD (the caller's to close). Returns false with C's error set.
 */
static bool
write_source_inline(struct call *c, struct rawpath *p, const char *source,
    int *mfd)
{
	uint64_t inline_max = c->s->fs.quota.inline_bytes;
	json_t *v = json_object_get(c->params, source);
	_cleanup_free_ uint8_t *raw = NULL;
	const void *bytes;
	size_t len = 0;
	int e;

	if (!json_is_string(v)) {
		rpc_bad_param(c, source, "expected a string");
		return false;
	}
	if (strcmp(source, "data") == 0) {
		e = rpc_b64_decode(json_string_value(v), json_string_length(v),
		    inline_max, &raw, &len);
		if (e == -ENOMEM) {
			rpc_out_of_memory(c);
			return false;
		}
		if (e == -EINVAL) {
			rpc_bad_param(c, "data", "not base64");
			return false;
		}
		bytes = raw;
	} else {
		len = json_string_length(v);
		e = len > inline_max ? -EFBIG : 0;
		bytes = json_string_value(v);
	}
	if (e == -EFBIG) {
		rpc_file_error(c, FS_TOO_LARGE, p, NULL,
		    "an inline payload is "
		    "at most inline_kb: pass a descriptor");
		return false;
	}
	if ((*mfd = rpc_memfd_with(bytes, len)) < 0) {
		rpc_fail(c, RPC_INTERNAL_ERROR, NULL,
		    "cannot buffer the data: "
		    "%s",
		    strerror(-*mfd));
		return false;
	}
	return true;
}

json_t *
rpc_fs_write(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "data", "text",
	    "fd", "size", "mode", "overwrite", NULL};
	static const char *const sources[] = {"data", "text", "fd"};
	const char *source = NULL;
	uint64_t mode, written = 0, size;
	_cleanup_close_ int mfd = -1;
	enum fs_error why;
	bool overwrite;
	int in = -1;

	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", NULL, p) ||
	    !rpc_opt_uint(c, "mode", 0644, 0, 07777, &mode) ||
	    !rpc_opt_bool(c, "overwrite", false, &overwrite) ||
	    !rpc_opt_uint(c, "size", UINT64_MAX, 0, INT64_MAX, &size))
		return NULL;
	for (size_t i = 0; i < 3; i++) {
		if (json_object_get(c->params, sources[i]) == NULL)
			continue;
		if (source != NULL)
			return rpc_bad_param(c, sources[i],
			    "give only one of data, "
			    "text and fd");
		source = sources[i];
	}
	if (source == NULL)
		return rpc_bad_param(c, "data",
		    "missing (give data, text or fd)");
	if (size != UINT64_MAX && strcmp(source, "fd") != 0)
		return rpc_bad_param(c, "size", "only with fd");
	if (strcmp(source, "fd") == 0) {
		if (!write_source_fd(c, p, size, &in, &mfd))
			return NULL;
	} else {
		if (!write_source_inline(c, p, source, &mfd))
			return NULL;
		in = mfd;
	}
	if (fsapi_put(&c->s->fs, p->p, in, (mode_t)mode, overwrite, &written,
		&why) < 0)
		return rpc_file_error(c, why, p, NULL, NULL);
	return rpc_path_size(c, p, written);
}

json_t *
rpc_fs_read(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "offset",
	    "length", "fd", NULL};
	uint64_t offset, length, copied = 0;
	uint64_t inline_max = c->s->fs.quota.inline_bytes;
	_cleanup_close_ int mfd = -1;
	_cleanup_free_ char *b64 = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	enum fs_error why;
	ssize_t n;
	json_t *o;
	int out;

	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", NULL, p) ||
	    !rpc_opt_uint(c, "offset", 0, 0, INT64_MAX, &offset) ||
	    !rpc_opt_uint(c, "length", UINT64_MAX, 0, INT64_MAX, &length))
		return NULL;
	if (json_object_get(c->params, "fd") != NULL) {
		if (!rpc_get_fd(c, false, &out))
			return NULL;
		if (fsapi_get(&c->s->fs, p->p, offset, length, out, &copied,
			&why) < 0)
			return rpc_file_error(c, why, p, NULL, NULL);
		return rpc_path_size(c, p, copied);
	}
	/* Inline: at most inline_max bytes, decided on what is copied (one
	 * byte more than allowed means too large), never on a size read
	 * before: the file may grow meanwhile. */
	if ((mfd = memfd_create("stockade-rpc", MFD_CLOEXEC)) < 0)
		return rpc_fail(c, RPC_INTERNAL_ERROR, NULL,
		    "cannot buffer the "
		    "data: %s",
		    strerror(errno));
	if (inline_max < UINT64_MAX && length > inline_max + 1)
		length = inline_max + 1;
	if (fsapi_get(&c->s->fs, p->p, offset, length, mfd, &copied, &why) < 0)
		return rpc_file_error(c, why, p, NULL, NULL);
	if (copied > inline_max)
		return rpc_file_error(c, FS_TOO_LARGE, p, NULL,
		    "over inline_kb: "
		    "pass a descriptor, or an offset and length");
	if ((buf = malloc(copied + 1)) == NULL)
		return rpc_out_of_memory(c);
	do /* EINTR retried, as every copy does (fsapi.c) */
		n = pread(mfd, buf, copied, 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)copied)
		return rpc_file_error(c, FS_IO_ERROR, p, NULL, NULL);
	if ((b64 = fsreport_base64(buf, copied)) == NULL ||
	    (o = rpc_path_size(c, p, copied)) == NULL)
		return rpc_out_of_memory(c);
	if (json_object_set_new(o, "data", json_string(b64)) < 0) {
		json_decref(o);
		return rpc_out_of_memory(c);
	}
	return o;
}

/* The most bytes of entries one fs.list reply holds (compact JSON): the
 * broker builds the whole reply in memory, and a client reads it as one
 * line (docs/protocol.md). */
#define LIST_MAX_BYTES (16u << 20)

struct list_reply {
	json_t *entries;
	size_t bytes; /* their compact JSON, with commas */
};

static int
list_one(void *arg, const struct fs_entry *e)
{
	struct list_reply *l = arg;
	json_t *o = fsreport_entry(e, false);
	size_t n;

	if (o == NULL)
		return -ENOMEM;
	/* json_dumpb with no buffer: the size it would write. */
	n = json_dumpb(o, NULL, 0, JSON_COMPACT) + 1;
	if (n > LIST_MAX_BYTES - l->bytes) {
		json_decref(o);
		return 1; /* truncated */
	}
	l->bytes += n;
	/* json_array_append_new takes O even when it fails. */
	if (json_array_append_new(l->entries, o) < 0)
		return -ENOMEM;
	return 0;
}

json_t *
rpc_fs_list(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "recursive",
	    "limit", NULL};
	uint64_t max = c->s->fs.quota.max_files, limit;
	enum fs_error why;
	bool recursive, truncated = false;
	struct list_reply l = {NULL, 0};

	if (max == 0 || max > INT64_MAX)
		max = INT64_MAX;
	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", ".", p) ||
	    !rpc_opt_bool(c, "recursive", false, &recursive) ||
	    !rpc_opt_uint(c, "limit", max, 1, INT64_MAX, &limit))
		return NULL;
	if (limit > max)
		limit = max;
	if ((l.entries = json_array()) == NULL)
		return rpc_out_of_memory(c);
	if (fsapi_list(&c->s->fs, p->p, recursive, (size_t)limit, list_one, &l,
		&truncated, &why) < 0) {
		json_decref(l.entries);
		return rpc_file_error(c, why, p, NULL, NULL);
	}
	return json_pack("{s:o,s:b}", "entries", l.entries, "truncated",
	    truncated);
}

json_t *
rpc_fs_stat(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", NULL};
	struct fs_entry e;
	enum fs_error why;
	json_t *o;

	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", NULL, p))
		return NULL;
	if (fsapi_stat(&c->s->fs, p->p, &e, &why) < 0)
		return rpc_file_error(c, why, p, NULL, NULL);
	if ((o = fsreport_entry(&e, true)) == NULL)
		return rpc_out_of_memory(c);
	return o;
}

json_t *
rpc_fs_mkdir(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "parents",
	    "mode", NULL};
	enum fs_error why;
	uint64_t mode;
	bool parents;

	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", NULL, p) ||
	    !rpc_opt_bool(c, "parents", false, &parents) ||
	    !rpc_opt_uint(c, "mode", 0755, 0, 07777, &mode))
		return NULL;
	if (fsapi_mkdir(&c->s->fs, p->p, (mode_t)mode, parents, &why) < 0)
		return rpc_file_error(c, why, p, NULL, NULL);
	return json_object();
}

json_t *
rpc_fs_remove(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "recursive",
	    NULL};
	enum fs_error why;
	bool recursive;

	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", NULL, p) ||
	    !rpc_opt_bool(c, "recursive", false, &recursive))
		return NULL;
	if (fsapi_remove(&c->s->fs, p->p, recursive, &why) < 0)
		return rpc_file_error(c, why, p, NULL, NULL);
	return json_object();
}

json_t *
rpc_fs_rename(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"from", "from_b64", "to", "to_b64",
	    "overwrite", NULL};
	struct rawpath to = {NULL, 0};
	enum fs_error why;
	bool overwrite;
	json_t *r = NULL;

	if (rpc_known_params(c, names) &&
	    rpc_get_path(c, "from", "from_b64", NULL, p) &&
	    rpc_get_path(c, "to", "to_b64", NULL, &to) &&
	    rpc_opt_bool(c, "overwrite", false, &overwrite)) {
		if (fsapi_rename(&c->s->fs, p->p, to.p, overwrite, &why) < 0)
			rpc_file_error(c, why, p, &to, NULL);
		else if ((r = json_object()) == NULL)
			rpc_out_of_memory(c);
	}
	free(to.p);
	return r;
}

json_t *
rpc_fs_changes(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {NULL};

	(void)p;
	if (!rpc_known_params(c, names))
		return NULL;
	return rpc_stage_changes(c);
}
