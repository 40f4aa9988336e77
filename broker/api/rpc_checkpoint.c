/*
 * rpc_checkpoint.c: the checkpoint methods of `stockade serve`
 * (docs/protocol.md, "fs.checkpoint"; issue 26 point 5): fs.checkpoint,
 * fs.restore, fs.checkpoints and fs.drop_checkpoint, on the session's
 * checkpoint store (broker/fs/checkpoint.h), made at the first
 * fs.checkpoint and hooked into the session's struct fs_ctx so that every
 * fs.* change saves what it replaces.
 */
#include "rpc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "fsreport.h"
#include "snapshot.h"

/* One sentence for each named error. */
static const char *
explain(enum ckpt_error err)
{
	switch (err) {
	case CKPT_INVALID_NAME:
		return "a checkpoint's name is 1 to 64 bytes of letters, "
		       "digits, '.', '_' and '-'";
	case CKPT_EXISTS:
		return "a checkpoint of that name exists: drop it first or "
		       "choose another name";
	case CKPT_NO_SUCH:
		return "no checkpoint of that name in this session "
		       "(fs.checkpoints lists them)";
	case CKPT_TOO_MANY:
		return "the session holds max_checkpoints checkpoints: drop "
		       "one first (fs.drop_checkpoint)";
	case CKPT_OFF:
		return "the policy turns checkpoints off "
		       "([files] max_checkpoints = 0)";
	case CKPT_BROKEN:
		return "the workspace changed in a way the checkpoint did not "
		       "see (a job that wrote it directly, or a restore that "
		       "failed half way): restoring it would not give back "
		       "its state";
	case CKPT_OK:
	case CKPT_FILE:
		break;
	}
	return "the checkpoint store failed";
}

/* -32001 with data {"error": ERR's name, "name": NAME when valid}. */
static json_t *
ckpt_fail(struct call *c, enum ckpt_error err, const char *name, size_t len)
{
	json_t *data = json_pack("{s:s}", "error", ckpt_error_name(err));

	if (data == NULL ||
	    (ckpt_name_valid(name, len) &&
		json_object_set_new(data, "name", json_stringn(name, len)) <
		    0)) {
		json_decref(data);
		return rpc_out_of_memory(c);
	}
	return rpc_fail(c, RPC_FILE_ERROR, data, "%s: %s", ckpt_error_name(err),
	    explain(err));
}

/* The required "name" (and nothing else) of C into *NAME, *LEN
 * (borrowed from the request); false with C's error set: -32602 when
 * absent or not a string, invalid_checkpoint_name when it breaks the
 * rule. */
static bool
get_name(struct call *c, const char **name, size_t *len)
{
	static const char *const names[] = {"name", NULL};
	json_t *v = json_object_get(c->params, "name");

	if (!rpc_known_params(c, names))
		return false;
	if (!json_is_string(v)) {
		rpc_bad_param(c, "name", "expected the checkpoint's name");
		return false;
	}
	*name = json_string_value(v);
	*len = json_string_length(v);
	if (!ckpt_name_valid(*name, *len)) {
		ckpt_fail(c, CKPT_INVALID_NAME, *name, *len);
		return false;
	}
	return true;
}

/* The session's store, made (and hooked into its fs_ctx) when missing.
 * NULL with C's error set: checkpoints_off, or the store's failure. */
static struct ckpt_store *
session_store(struct call *c)
{
	struct rpc_session *s = c->s;
	const struct fs_quota *q = &s->fs.quota;
	const struct ckpt_limits lim = {
	    .max = q->max_checkpoints,
	    .max_bytes = q->workspace_bytes,
	    .max_entries = q->max_files,
	    .allow_hardlinks = q->allow_hardlinks,
	};
	int e;

	if (s->checkpoints != NULL)
		return s->checkpoints;
	if (q->max_checkpoints == 0) {
		ckpt_fail(c, CKPT_OFF, NULL, 0);
		return NULL;
	}
	/* The directory the front made (the store's now, or removed), or
	 * one made here. */
	e = ckpt_store_new(&lim, &s->ckpt_dir, NULL, &s->checkpoints);
	if (e < 0) {
		if (e == -ENOMEM) {
			rpc_out_of_memory(c);
			return NULL;
		}
		rpc_fail(c, RPC_FILE_ERROR,
		    json_pack("{s:s}", "error", fs_error_name(FS_IO_ERROR)),
		    "io_error: cannot make the checkpoint store: %s",
		    strerror(-e));
		return NULL;
	}
	ckpt_attach(s->checkpoints, &s->fs);
	return s->checkpoints;
}

json_t *
rpc_fs_checkpoint(struct call *c, struct rawpath *p)
{
	struct ckpt_store *st;
	enum ckpt_error err;
	const char *name;
	size_t len;

	(void)p;
	if (!get_name(c, &name, &len) || (st = session_store(c)) == NULL)
		return NULL;
	if (ckpt_create(st, name, len, &err) < 0)
		return err == CKPT_FILE ? rpc_out_of_memory(c)
					: ckpt_fail(c, err, name, len);
	return json_pack("{s:s%,s:I}", "name", name, len, "checkpoints",
	    (json_int_t)ckpt_count(st));
}

json_t *
rpc_fs_restore(struct call *c, struct rawpath *p)
{
	struct ckpt_restore_report rep;
	struct rawpath at;
	const char *name;
	size_t len;

	if (!get_name(c, &name, &len))
		return NULL;
	if (c->s->checkpoints == NULL)
		return ckpt_fail(c,
		    c->s->fs.quota.max_checkpoints ? CKPT_NO_SUCH : CKPT_OFF,
		    name, len);
	if (ckpt_restore(c->s->checkpoints, &c->s->fs, name, len, &rep) < 0) {
		if (rep.err != CKPT_FILE)
			return ckpt_fail(c, rep.err, name, len);
		/* The path that failed is the error's, as any file error. */
		at.len = strlen(rep.path);
		if ((at.p = strdup(rep.path)) == NULL)
			return rpc_out_of_memory(c);
		free(p->p);
		*p = at;
		return rpc_file_error(c, rep.why, p, NULL, NULL);
	}
	return json_pack("{s:s%,s:I,s:I,s:I}", "name", name, len, "restored",
	    (json_int_t)rep.paths, "bytes", (json_int_t)rep.bytes, "skipped",
	    (json_int_t)rep.skipped);
}

json_t *
rpc_fs_checkpoints(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {NULL};
	const struct ckpt_store *st = c->s->checkpoints;
	json_t *list, *o;

	(void)p;
	if (!rpc_known_params(c, names))
		return NULL;
	if ((list = json_array()) == NULL)
		return rpc_out_of_memory(c);
	for (size_t i = 0; i < ckpt_count(st); i++) {
		struct ckpt_info in;

		ckpt_info(st, i, &in);
		o = json_pack("{s:s,s:I,s:I,s:I,s:b}", "name", in.name,
		    "created", (json_int_t)in.created, "paths",
		    (json_int_t)in.paths, "bytes", (json_int_t)in.bytes,
		    "broken", in.broken);
		if (o == NULL || json_array_append_new(list, o) < 0) {
			json_decref(list);
			return rpc_out_of_memory(c);
		}
	}
	o = json_pack("{s:o,s:I}", "checkpoints", list, "max",
	    (json_int_t)c->s->fs.quota.max_checkpoints);
	return o != NULL ? o : rpc_out_of_memory(c);
}

json_t *
rpc_fs_drop_checkpoint(struct call *c, struct rawpath *p)
{
	enum ckpt_error err = CKPT_NO_SUCH;
	const char *name;
	size_t len;

	(void)p;
	if (!get_name(c, &name, &len))
		return NULL;
	if (c->s->checkpoints == NULL ||
	    ckpt_drop(c->s->checkpoints, name, len, &err) < 0)
		return err == CKPT_FILE ? rpc_out_of_memory(c)
					: ckpt_fail(c, err, name, len);
	return json_pack("{s:s%,s:I}", "name", name, len, "checkpoints",
	    (json_int_t)ckpt_count(c->s->checkpoints));
}

void
rpc_session_take_ckpt_dir(struct rpc_session *s, struct ckpt_dir *cd)
{
	ckpt_dir_remove(&s->ckpt_dir);
	s->ckpt_dir = *cd;
	ckpt_dir_clear(cd);
}

void
rpc_checkpoint_free(struct rpc_session *s)
{
	if (s->checkpoints != NULL) {
		s->fs.before_change = NULL;
		s->fs.change_arg = NULL;
		ckpt_store_free(s->checkpoints);
		s->checkpoints = NULL;
	}
	/* Made for the session but never used: removed. */
	ckpt_dir_remove(&s->ckpt_dir);
}
