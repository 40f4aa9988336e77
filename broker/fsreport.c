/*
 * fsreport.c: the file API's results as the fronts show them
 * (fsreport.h). Pure but for allocation.
 */
#include "fsreport.h"

#include <resolv.h>
#include <stdlib.h>
#include <string.h>

#include "fsname.h"
#include "fsutil.h"
#include "wspath.h"

const char *
fsreport_explain(const struct fs_ctx *ctx, enum fs_error why,
		 const char *path, size_t len, const char *to, size_t tolen)
{
	if (why == FS_INVALID_PATH) {
		struct wspath_limits lim = fsapi_path_limits(ctx);
		enum wspath_rule r = wspath_why(path, len, &lim);

		if (r == WSPATH_OK && to != NULL)
			r = wspath_why(to, tolen, &lim);
		if (r != WSPATH_OK)
			return wspath_rule_text(r);
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
	    json_object_set_new(o, "type",
				json_string(fs_type_name(e->type))) < 0 ||
	    json_object_set_new(o, "size",
				json_integer((json_int_t)e->size)) < 0 ||
	    json_object_set_new(o, "mode",
				json_integer((json_int_t)e->mode)) < 0 ||
	    json_object_set_new(o, "mtime",
				json_real((double)e->mtime_ns / 1e9)) < 0 ||
	    (nlink && json_object_set_new(o, "nlink",
					  json_integer((json_int_t)e->nlink)) <
			      0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}
