/*
 * mcp_files.c: the file tools of `stockade mcp` (docs/mcp.md):
 * write_file, read_file, list_files and changes, each on the serve
 * session's fs.* methods (docs/protocol.md), so every path is resolved
 * with openat2 beneath the workspace and every quota holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsreport.h"
#include "mcp_internal.h"
#include "rpc_internal.h"
#include "utf8.h"

/* Makes the missing parent directories of PATH in the workspace
 * (fs.mkdir with parents). Returns true, or false with the tool's error
 * result in *ERR (NULL when out of memory). */
static bool
make_parents(struct mcp_session *m, const char *path, json_t **err)
{
	const char *slash = strrchr(path, '/');
	json_t *p, *r;

	if (slash == NULL || slash == path || slash[1] == '\0')
		return true;
	p = json_pack("{s:s%,s:b}", "path", path, (size_t)(slash - path),
	    "parents", 1);
	r = p != NULL ? mcp_rpc(m, "fs.mkdir", p, err) : NULL;
	json_decref(p);
	if (r == NULL)
		return false;
	json_decref(r);
	return true;
}

/* Sends a progress notification for a transfer of TOTAL bytes, DONE of
 * them (MCP "Progress": the value increases with each notification). */
static void
transfer_progress(struct mcp_session *m, json_t *token, uint64_t done,
    uint64_t total, const char *what)
{
	char msg[96];
	json_t *n;

	if (token == NULL || m->hooks.notify == NULL)
		return;
	snprintf(msg, sizeof(msg), "%s: %llu of %llu bytes", what,
	    (unsigned long long)done, (unsigned long long)total);
	n = json_pack("{s:s,s:s,s:{s:O,s:I,s:I,s:s}}", "jsonrpc", "2.0",
	    "method", "notifications/progress", "params", "progressToken",
	    token, "progress", (json_int_t)done, "total", (json_int_t)total,
	    "message", msg);
	if (n != NULL)
		m->hooks.notify(m->hooks.arg, n);
	json_decref(n);
}

json_t *
mcp_write_file(struct mcp_session *m, json_t *args, json_t *token)
{
	static const char *const names[] = {"path", "content", "encoding",
	    NULL};
	const char *path, *enc, *bad = NULL, *msg;
	bool badtype = false, b64;
	json_t *p, *r, *err = NULL, *s;
	uint64_t size;
	char *text;

	if (!mcp_known_args(args, names, &bad))
		return mcp_tool_error(m,
		    "invalid arguments: write_file takes "
		    "no \"%s\"",
		    bad);
	path = mcp_str_arg(args, "path", &badtype);
	enc = mcp_str_arg(args, "encoding", &badtype);
	s = json_object_get(args, "content");
	if (badtype || path == NULL || !json_is_string(s))
		return mcp_tool_error(m,
		    "invalid arguments: path and content "
		    "are required strings");
	if (enc != NULL && strcmp(enc, "utf-8") != 0 &&
	    strcmp(enc, "base64") != 0)
		return mcp_tool_error(m,
		    "invalid arguments: encoding must be "
		    "\"utf-8\" or \"base64\"");
	b64 = enc != NULL && strcmp(enc, "base64") == 0;
	if (!b64 && strlen(json_string_value(s)) != json_string_length(s))
		return mcp_tool_error(m,
		    "invalid arguments: content holds a "
		    "NUL character: send it with "
		    "\"encoding\": \"base64\"");
	/* Missing parent directories are made, as a model expects of
	 * "write src/main.py"; each is checked like any other path. */
	if (!make_parents(m, path, &err))
		return err;
	size = b64 ? json_string_length(s) / 4 * 3 : json_string_length(s);
	/* fs.write's own too_large says to pass a descriptor, which an MCP
	 * client cannot: say what the model can do instead. */
	if (size > m->policy->files.inline_bytes + (b64 ? 2 : 0))
		return mcp_tool_error(m,
		    "too_large: write_file takes at most "
		    "%llu bytes per call (the policy's "
		    "inline_kb); write the file in parts and "
		    "join them with run_code (cat part1 part2 "
		    "> file)",
		    (unsigned long long)m->policy->files.inline_bytes);
	transfer_progress(m, token, 0, size, "write_file");
	p = json_pack("{s:s,s:O,s:b}", "path", path, b64 ? "data" : "text", s,
	    "overwrite", 1);
	r = p != NULL ? mcp_rpc(m, "fs.write", p, &err) : NULL;
	json_decref(p);
	msg = json_string_value(
	    json_object_get(json_array_get(json_object_get(err, "content"), 0),
		"text"));
	if (r == NULL && b64 && msg != NULL &&
	    strstr(msg, "not base64") != NULL) {
		json_decref(err);
		return mcp_tool_error(m,
		    "invalid arguments: content is not "
		    "base64 (RFC 4648, with padding)");
	}
	if (r == NULL)
		return err;
	size = (uint64_t)json_integer_value(json_object_get(r, "size"));
	transfer_progress(m, token, size, size, "write_file");
	if (asprintf(&text, "wrote %llu bytes to %s", (unsigned long long)size,
		json_string_value(json_object_get(r, "path"))) < 0) {
		json_decref(r);
		return NULL;
	}
	s = mcp_result(m, text, r, false);
	free(text);
	return s;
}

/*
 * The length of the longest prefix of P (LEN bytes) made of whole UTF-8
 * characters without NUL when only a character cut at the very end
 * spoils it (a read that stopped mid-character); (size_t)-1 when P is
 * not text (an invalid sequence or a NUL before that).
 */
static size_t
text_prefix(const uint8_t *p, size_t len)
{
	size_t i = 0, n;
	uint32_t cp = 1;

	while (i < len) {
		n = utf8_decode(p + i, len - i, &cp);
		if (n == 0)
			return len - i < 4 && p[i] >= 0xc2 && p[i] <= 0xf4
			    ? i
			    : (size_t)-1;
		if (cp == 0)
			return (size_t)-1;
		i += n;
	}
	return i;
}

/*
 * read_file's answer for the N bytes DATA read at OFFSET of a file of
 * FSIZE bytes (WANT asked for) by fs.read, whose result R (borrowed)
 * holds the path and the bytes in base64: text when they are UTF-8 (cut
 * at a character split by the end of the part), else base64, in the
 * structured content and, control characters escaped, in the text.
 * Returns the tool result or NULL on ENOMEM.
 */
static json_t *
read_result(struct mcp_session *m, json_t *token, json_t *r,
    const uint8_t *data, size_t n, uint64_t offset, uint64_t fsize,
    uint64_t want)
{
	const char *b64 = json_string_value(json_object_get(r, "data"));
	char *out = NULL, *shown;
	size_t keep;
	json_t *o, *res;
	bool text;

	keep = text_prefix(data, n);
	text = keep != (size_t)-1 && (keep == n || offset + n < fsize);
	if (text)
		n = keep;
	o = json_pack("{s:O,s:I,s:I,s:I,s:s,s:o,s:b}", "path",
	    json_object_get(r, "path"), "offset", (json_int_t)offset, "size",
	    (json_int_t)n, "file_size", (json_int_t)fsize, "encoding",
	    text ? "utf-8" : "base64", "content",
	    text ? json_stringn((const char *)data, n) : json_string(b64),
	    "truncated", offset + n < fsize);
	transfer_progress(m, token, n, n > want ? n : want, "read_file");
	/* The text a host shows (a terminal, perhaps) has the file's
	 * control characters in caret notation, as a job's output has;
	 * structuredContent keeps the bytes as they are. */
	shown = text ? malloc(4 * n + 1) : NULL;
	if (shown != NULL)
		shown[term_escape(data, n, shown)] = '\0';
	if (o != NULL && (shown != NULL || !text) &&
	    asprintf(&out, "%s%s%s",
		text ? ""
		     : "[the file is not UTF-8 "
		       "text: its bytes as base64]\n",
		text ? shown : b64,
		offset + n < fsize ? "\n[stockade: more of the file "
				     "follows; read on with offset]"
				   : "") < 0)
		out = NULL;
	free(shown);
	res = out != NULL ? mcp_result(m, out, o, false) : NULL;
	if (out == NULL)
		json_decref(o);
	free(out);
	return res;
}

json_t *
mcp_read_file(struct mcp_session *m, json_t *args, json_t *token)
{
	static const char *const names[] = {"path", "offset", "length", NULL};
	const uint64_t max = m->policy->files.inline_bytes;
	const char *path, *bad = NULL, *b64;
	bool badtype = false;
	uint64_t offset, length, fsize, want;
	json_t *p, *st, *r, *err = NULL, *res;
	uint8_t *data = NULL;
	size_t n = 0;
	int e;

	if (!mcp_known_args(args, names, &bad))
		return mcp_tool_error(m,
		    "invalid arguments: read_file takes no "
		    "\"%s\"",
		    bad);
	path = mcp_str_arg(args, "path", &badtype);
	if (badtype || path == NULL)
		return mcp_tool_error(m,
		    "invalid arguments: path is a required "
		    "string");
	if (!mcp_uint_arg(args, "offset", 0, 0, INT64_MAX, &offset) ||
	    !mcp_uint_arg(args, "length", max, 1, INT64_MAX, &length))
		return mcp_tool_error(m,
		    "invalid arguments: offset and length "
		    "are byte counts (length at least 1)");
	p = json_pack("{s:s}", "path", path);
	st = p != NULL ? mcp_rpc(m, "fs.stat", p, &err) : NULL;
	json_decref(p);
	if (st == NULL)
		return err;
	fsize = (uint64_t)json_integer_value(json_object_get(st, "size"));
	json_decref(st);
	/* At most the policy's inline limit per call: a longer file is read
	 * on with offset (the reply says where). */
	want = length < max ? length : max;
	if (offset >= fsize)
		want = 0;
	else if (want > fsize - offset)
		want = fsize - offset;
	transfer_progress(m, token, 0, want, "read_file");
	p = json_pack("{s:s,s:I,s:I}", "path", path, "offset",
	    (json_int_t)offset, "length", (json_int_t)want);
	r = p != NULL ? mcp_rpc(m, "fs.read", p, &err) : NULL;
	json_decref(p);
	if (r == NULL)
		return err;
	b64 = json_string_value(json_object_get(r, "data"));
	e = b64 != NULL ? rpc_b64_decode(b64, strlen(b64), max, &data, &n)
			: -EINVAL;
	if (e < 0) {
		json_decref(r);
		return e == -ENOMEM ? NULL
				    : mcp_tool_error(m,
					  "io_error: the "
					  "file could not be read");
	}
	res = read_result(m, token, r, data, n, offset, fsize, want);
	json_decref(r);
	free(data);
	return res;
}

/* One line of list_files' text: "TYPE SIZE PATH". */
static void
print_entry(FILE *f, json_t *e)
{
	fprintf(f, "%-9s %12lld %s\n",
	    json_string_value(json_object_get(e, "type")),
	    (long long)json_integer_value(json_object_get(e, "size")),
	    json_string_value(json_object_get(e, "path")));
}

json_t *
mcp_list_files(struct mcp_session *m, json_t *args, json_t *token)
{
	static const char *const names[] = {"path", "recursive", NULL};
	const char *path, *bad = NULL;
	bool badtype = false;
	json_t *p, *r, *err = NULL, *rec, *e;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)token;
	if (!mcp_known_args(args, names, &bad))
		return mcp_tool_error(m,
		    "invalid arguments: list_files takes "
		    "no \"%s\"",
		    bad);
	path = mcp_str_arg(args, "path", &badtype);
	rec = json_object_get(args, "recursive");
	if (badtype || (rec != NULL && !json_is_boolean(rec)))
		return mcp_tool_error(m,
		    "invalid arguments: path is a string "
		    "and recursive a boolean");
	p = json_pack("{s:s,s:b}", "path", path != NULL ? path : ".",
	    "recursive", json_is_true(rec));
	r = p != NULL ? mcp_rpc(m, "fs.list", p, &err) : NULL;
	json_decref(p);
	if (r == NULL)
		return err;
	if ((f = open_memstream(&text, &len)) == NULL) {
		json_decref(r);
		return NULL;
	}
	json_array_foreach(json_object_get(r, "entries"), i, e)
	    print_entry(f, e);
	if (i == 0)
		fprintf(f, "(empty)\n");
	if (json_is_true(json_object_get(r, "truncated")))
		fprintf(f,
		    "[stockade: the listing is cut short; list a "
		    "subdirectory]\n");
	if (fclose(f) != 0) {
		free(text);
		json_decref(r);
		return NULL;
	}
	p = mcp_result(m, text, r, false);
	free(text);
	return p;
}

/* Takes out of the array DELETED the regular files at the paths of the
 * helper files of the last job (its stdin and long code: not the
 * model's), which existed before the job and were unlinked by its
 * wrapper. Only those: whatever the job itself made at such a name (it
 * can learn it from /proc/self/fd) is reported as any other change. */
static void
hide_helpers(struct mcp_session *m, json_t *deleted)
{
	for (size_t i = json_array_size(deleted); i-- > 0;) {
		json_t *e = json_array_get(deleted, i);
		const char *p = json_string_value(json_object_get(e, "path"));
		const char *t = json_string_value(json_object_get(e, "type"));

		if (p == NULL || t == NULL || strcmp(t, "file") != 0)
			continue;
		for (size_t k = 0; k < 2; k++)
			if (m->helpers[k] != NULL &&
			    strcmp(p, m->helpers[k]) == 0) {
				json_array_remove(deleted, i);
				break;
			}
	}
}

json_t *
mcp_changes(struct mcp_session *m, json_t *args, json_t *token)
{
	static const char *const names[] = {NULL};
	static const char *const kinds[] = {"created", "modified", "deleted"};
	const char *bad = NULL;
	json_t *r, *err = NULL, *e;
	char *text = NULL;
	size_t len = 0, i, total = 0;
	FILE *f;

	(void)token;
	if (!mcp_known_args(args, names, &bad))
		return mcp_tool_error(m,
		    "invalid arguments: changes takes no "
		    "arguments (\"%s\")",
		    bad);
	if ((r = mcp_rpc(m, "fs.changes", NULL, &err)) == NULL)
		return err;
	if ((f = open_memstream(&text, &len)) == NULL) {
		json_decref(r);
		return NULL;
	}
	for (size_t k = 0; k < 3; k++) {
		json_t *list = json_object_get(r, kinds[k]);

		if (k == 2)
			hide_helpers(m, list);
		json_array_foreach(list, i, e)
		{
			fprintf(f, "%s %s %s (%lld bytes)\n", kinds[k],
			    json_string_value(json_object_get(e, "type")),
			    json_string_value(json_object_get(e, "path")),
			    (long long)json_integer_value(
				json_object_get(e, "size")));
			total++;
		}
	}
	if (total == 0)
		fprintf(f, "no changes by the last run\n");
	if (json_is_true(json_object_get(r, "truncated")))
		fprintf(f,
		    "[stockade: the list is partial: the workspace is "
		    "over a limit of the policy]\n");
	if (fclose(f) != 0) {
		free(text);
		json_decref(r);
		return NULL;
	}
	e = mcp_result(m, text, r, false);
	free(text);
	return e;
}
