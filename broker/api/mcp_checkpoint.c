/*
 * mcp_checkpoint.c: the checkpoint tools of `stockade mcp` (docs/mcp.md;
 * issue 26 point 5): checkpoint, restore_checkpoint, list_checkpoints
 * and drop_checkpoint, each a thin front over the serve session's
 * methods (fs.checkpoint, fs.restore, fs.checkpoints,
 * fs.drop_checkpoint; docs/protocol.md), as the file tools are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_internal.h"

/* The one argument "name" of ARGS into *NAME (borrowed); NULL, or the
 * tool error to answer (TOOL names the tool). */
static json_t *
name_arg(struct mcp_session *m, json_t *args, const char *tool,
    const char **name)
{
	static const char *const names[] = {"name", NULL};
	const char *bad = NULL;
	bool badtype = false;

	if (!mcp_known_args(args, names, &bad))
		return mcp_tool_error(m,
		    "invalid arguments: %s takes only \"name\" (not \"%s\")",
		    tool, bad);
	*name = mcp_str_arg(args, "name", &badtype);
	if (badtype || *name == NULL)
		return mcp_tool_error(m,
		    "invalid arguments: name is a required string: 1 to 64 "
		    "letters, digits, '.', '_' or '-'");
	return NULL;
}

/* Calls METHOD with {"name": NAME}; the result or NULL with *ERR set. */
static json_t *
by_name(struct mcp_session *m, const char *method, const char *name,
    json_t **err)
{
	json_t *p = json_pack("{s:s}", "name", name), *r;

	*err = NULL;
	if (p == NULL)
		return NULL;
	r = mcp_rpc(m, method, p, err);
	json_decref(p);
	return r;
}

json_t *
mcp_checkpoint(struct mcp_session *m, json_t *args, json_t *token)
{
	const char *name;
	json_t *r, *err;
	char text[256];

	(void)token;
	if ((err = name_arg(m, args, "checkpoint", &name)) != NULL)
		return err;
	if ((r = by_name(m, "fs.checkpoint", name, &err)) == NULL)
		return err;
	snprintf(text, sizeof(text),
	    "checkpoint %s made (%lld in this session). Changes from now on "
	    "can be undone with restore_checkpoint.",
	    name,
	    (long long)json_integer_value(json_object_get(r, "checkpoints")));
	return mcp_result(m, text, r, false);
}

json_t *
mcp_restore_checkpoint(struct mcp_session *m, json_t *args, json_t *token)
{
	const char *name;
	json_t *r, *err;
	char text[320];

	(void)token;
	if ((err = name_arg(m, args, "restore_checkpoint", &name)) != NULL)
		return err;
	if ((r = by_name(m, "fs.restore", name, &err)) == NULL)
		return err;
	snprintf(text, sizeof(text),
	    "the workspace is back as it was at checkpoint %s (%lld paths "
	    "put back, %lld bytes). Later checkpoints are gone; %s stays.",
	    name, (long long)json_integer_value(json_object_get(r, "restored")),
	    (long long)json_integer_value(json_object_get(r, "bytes")), name);
	return mcp_result(m, text, r, false);
}

json_t *
mcp_drop_checkpoint(struct mcp_session *m, json_t *args, json_t *token)
{
	const char *name;
	json_t *r, *err;
	char text[256];

	(void)token;
	if ((err = name_arg(m, args, "drop_checkpoint", &name)) != NULL)
		return err;
	if ((r = by_name(m, "fs.drop_checkpoint", name, &err)) == NULL)
		return err;
	snprintf(text, sizeof(text), "checkpoint %s dropped (%lld left).", name,
	    (long long)json_integer_value(json_object_get(r, "checkpoints")));
	return mcp_result(m, text, r, false);
}

json_t *
mcp_list_checkpoints(struct mcp_session *m, json_t *args, json_t *token)
{
	static const char *const names[] = {NULL};
	const char *bad = NULL;
	json_t *r, *err = NULL, *e;
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)token;
	if (!mcp_known_args(args, names, &bad))
		return mcp_tool_error(m,
		    "invalid arguments: list_checkpoints takes no arguments "
		    "(\"%s\")",
		    bad);
	if ((r = mcp_rpc(m, "fs.checkpoints", NULL, &err)) == NULL)
		return err;
	if ((f = open_memstream(&text, &len)) == NULL) {
		json_decref(r);
		return NULL;
	}
	json_array_foreach(json_object_get(r, "checkpoints"), i, e)
	{
		fprintf(f, "%s: %lld paths, %lld bytes saved%s\n",
		    json_string_value(json_object_get(e, "name")),
		    (long long)json_integer_value(json_object_get(e, "paths")),
		    (long long)json_integer_value(json_object_get(e, "bytes")),
		    json_is_true(json_object_get(e, "broken"))
			? " (broken: cannot be restored)"
			: "");
	}
	fprintf(f, "%zu of at most %lld checkpoints\n",
	    json_array_size(json_object_get(r, "checkpoints")),
	    (long long)json_integer_value(json_object_get(r, "max")));
	if (fclose(f) != 0) {
		free(text);
		json_decref(r);
		return NULL;
	}
	e = mcp_result(m, text, r, false);
	free(text);
	return e;
}
