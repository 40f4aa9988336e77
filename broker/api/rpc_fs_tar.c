/*
 * rpc_fs_tar.c: fs.unpack and fs.pack of `stockade serve`
 * (docs/protocol.md): many files in one request, as a tar stream on a
 * descriptor or inline; the work is fs_tar.h's.
 */
#include "rpc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fs_tar.h"
#include "fsreport.h"
#include "fsutil.h"

/* {"files", "directories", "bytes"} (and "skipped" for a pack). */
static json_t *
counts_json(const struct fstar_counts *n, bool pack)
{
	json_t *o = json_pack("{s:I,s:I,s:I}", "files", (json_int_t)n->files,
	    "directories", (json_int_t)n->directories, "bytes",
	    (json_int_t)n->bytes);

	if (o != NULL && pack &&
	    json_object_set_new(o, "skipped",
		json_integer((json_int_t)n->skipped)) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

/*
 * -32001 for F on the request's path P, or on the entry F names: data
 * {"error", "path" (the entry's name, escaped; else P), "done" (entries
 * completed before it)}.
 */
static json_t *
tar_error(struct call *c, struct rawpath *p, struct fstar_fail *f,
    const struct fstar_counts *n)
{
	struct rawpath entry = {f->entry, f->entry_len};

	rpc_file_error(c, f->why, f->entry != NULL ? &entry : p, NULL,
	    f->text[0] != '\0' ? f->text : NULL);
	if (c->data != NULL)
		json_object_set_new(c->data, "done",
		    json_integer((json_int_t)(n->files + n->directories)));
	fstar_fail_free(f);
	return NULL;
}

json_t *
rpc_fs_unpack(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "data", "fd",
	    "overwrite", NULL};
	_cleanup_free_ uint8_t *raw = NULL;
	struct fstar_counts n;
	struct fstar_fail f;
	json_t *v = json_object_get(c->params, "data"), *o;
	bool overwrite;
	size_t len = 0;
	int in = -1, e;

	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", NULL, p) ||
	    !rpc_opt_bool(c, "overwrite", false, &overwrite))
		return NULL;
	if ((v == NULL) == (json_object_get(c->params, "fd") == NULL))
		return rpc_bad_param(c, "data",
		    "give exactly one of data and "
		    "fd");
	if (v == NULL) {
		if (!rpc_get_fd(c, true, &in))
			return NULL;
	} else {
		if (!json_is_string(v))
			return rpc_bad_param(c, "data", "expected a string");
		e = rpc_b64_decode(json_string_value(v), json_string_length(v),
		    c->s->fs.quota.inline_bytes, &raw, &len);
		if (e == -ENOMEM)
			return rpc_out_of_memory(c);
		if (e == -EINVAL)
			return rpc_bad_param(c, "data", "not base64");
		if (e == -EFBIG)
			return rpc_file_error(c, FS_TOO_LARGE, p, NULL,
			    "an inline archive is at most "
			    "inline_kb: pass a descriptor");
	}
	if (fstar_unpack(&c->s->fs, p->p, in, raw, len, overwrite, &n, &f) < 0)
		return tar_error(c, p, &f, &n);
	if ((o = counts_json(&n, false)) == NULL)
		return rpc_out_of_memory(c);
	return o;
}

json_t *
rpc_fs_pack(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "fd", NULL};
	uint64_t inline_max = c->s->fs.quota.inline_bytes;
	_cleanup_close_ int mfd = -1;
	_cleanup_free_ char *b64 = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	struct fstar_counts n;
	struct fstar_fail f;
	off_t size;
	ssize_t got;
	json_t *o;
	int out;

	if (!rpc_known_params(c, names) ||
	    !rpc_get_path(c, "path", "path_b64", ".", p))
		return NULL;
	if (json_object_get(c->params, "fd") != NULL) {
		if (!rpc_get_fd(c, false, &out))
			return NULL;
		if (fstar_pack(&c->s->fs, p->p, out, UINT64_MAX, &n, &f) < 0)
			return tar_error(c, p, &f, &n);
		if ((o = counts_json(&n, true)) == NULL)
			return rpc_out_of_memory(c);
		return o;
	}
	/* Inline: the archive into memory, at most inline_kb of it. */
	if ((mfd = memfd_create("stockade-pack", MFD_CLOEXEC)) < 0)
		return rpc_fail(c, RPC_INTERNAL_ERROR, NULL,
		    "cannot buffer the "
		    "archive: %s",
		    strerror(errno));
	if (fstar_pack(&c->s->fs, p->p, mfd, inline_max, &n, &f) < 0)
		return tar_error(c, p, &f, &n);
	if ((size = lseek(mfd, 0, SEEK_CUR)) < 0)
		return rpc_file_error(c, FS_IO_ERROR, p, NULL, NULL);
	if ((buf = malloc((size_t)size + 1)) == NULL)
		return rpc_out_of_memory(c);
	do /* EINTR retried, as every copy does (fsapi.c) */
		got = pread(mfd, buf, (size_t)size, 0);
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)size)
		return rpc_file_error(c, FS_IO_ERROR, p, NULL, NULL);
	if ((b64 = fsreport_base64(buf, (size_t)size)) == NULL ||
	    (o = counts_json(&n, true)) == NULL)
		return rpc_out_of_memory(c);
	if (json_object_set_new(o, "data", json_string(b64)) < 0) {
		json_decref(o);
		return rpc_out_of_memory(c);
	}
	return o;
}
