/*
 * fsreport.c: the file API's results as the fronts show them
 * (fsreport.h). Pure but for allocation.
 */
#include <inttypes.h>
#include <stdio.h>
#include "fsreport.h"

#include <resolv.h>
#include <stdlib.h>
#include <string.h>

#include "fsname.h"
#include "fsutil.h"
#include "wspath.h"

const char *
fsreport_explain(const struct fs_ctx *ctx, enum fs_error why, const char *path,
    size_t len, const char *to, size_t tolen)
{
	/* One thread per front calls this at a time (the tar writers
	 * report through their caller): a thread-local buffer keeps the
	 * returned string valid until this thread's next call. */
	static _Thread_local char text[320];

	if (why == FS_INVALID_PATH) {
		struct wspath_limits lim = fsapi_path_limits(ctx);
		enum wspath_rule r = wspath_why(path, len, &lim);

		if (r == WSPATH_OK && to != NULL)
			r = wspath_why(to, tolen, &lim);
		if (r != WSPATH_OK)
			return wspath_rule_text(r);
	}
	if (why == FS_TOO_LARGE && ctx != NULL) {
		snprintf(text, sizeof(text),
		    "the file is larger than the "
		    "per-file limit of %" PRIu64 " bytes (%" PRIu64 " MiB, "
		    "the policy's [files] max_file_mb; a policy with a "
		    "larger max_file_mb raises it)",
		    ctx->quota.file_bytes, ctx->quota.file_bytes >> 20);
		return text;
	}
	if (why == FS_QUOTA_EXCEEDED && ctx != NULL) {
		snprintf(text, sizeof(text),
		    "the workspace is full: its "
		    "limits are %" PRIu64 " bytes of files (%" PRIu64
		    " MiB, [files] workspace_mb) and %" PRIu64 " entries "
		    "([files] max_files); remove files, or raise those "
		    "keys in a policy",
		    ctx->quota.workspace_bytes,
		    ctx->quota.workspace_bytes >> 20, ctx->quota.max_files);
		return text;
	}
	return fs_error_text(why);
}

char *
fsreport_base64(const void *data, size_t len)
{
	size_t size = (len + 2) / 3 * 4 + 1;
	char *out = malloc(size);

	if (out == NULL)
		return NULL;
	if (b64_ntop(data, len, out, size) < 0) {
		free(out);
		return NULL;
	}
	return out;
}

bool
fsreport_set_name(json_t *o, const char *key, const char *key_b64,
    const char *p, size_t len)
{
	_cleanup_free_ char *esc = NULL, *b64 = NULL;

	if (fsname_is_plain(p, len))
		return json_object_set_new(o, key, json_stringn(p, len)) == 0;
	esc = fsname_escape(p, len);
	b64 = fsreport_base64(p, len);
	return esc != NULL && b64 != NULL &&
	    json_object_set_new(o, key, json_string(esc)) == 0 &&
	    json_object_set_new(o, key_b64, json_string(b64)) == 0;
}

json_t *
fsreport_entry(const struct fs_entry *e, bool nlink)
{
	json_t *o = json_object();

	if (o == NULL ||
	    !fsreport_set_name(o, "path", "path_b64", e->path,
		strlen(e->path)) ||
	    json_object_set_new(o, "type", json_string(fs_type_name(e->type))) <
		0 ||
	    json_object_set_new(o, "size", json_integer((json_int_t)e->size)) <
		0 ||
	    json_object_set_new(o, "mode", json_integer((json_int_t)e->mode)) <
		0 ||
	    json_object_set_new(o, "mtime",
		json_real((double)e->mtime_ns / 1e9)) < 0 ||
	    (nlink &&
		json_object_set_new(o, "nlink",
		    json_integer((json_int_t)e->nlink)) < 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}
