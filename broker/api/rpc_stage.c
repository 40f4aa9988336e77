/*
 * rpc_stage.c: a session's staged change sets (issue 26; staged.h):
 * exec's "commit" parameter, fs.changes of a staged job, fs.diff,
 * fs.commit and fs.rollback (docs/protocol.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobrun.h"
#include "rpc_internal.h"
#include "staged.h"

/* STATIC: the commit mode named NAME, or -1. */
static int
mode_of(const char *name)
{
	static const struct {
		const char *name;
		enum commit_mode m;
	} modes[] = {{"always", COMMIT_ALWAYS}, {"on_ok", COMMIT_ON_OK},
	    {"keep", COMMIT_KEEP}};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(name, modes[i].name) == 0)
			return (int)modes[i].m;
	return -1;
}

/* Drops the oldest of S's sets that holds nothing, when S has
 * RPC_MAX_STAGES: true when there is room for one more. */
static bool
make_room(struct rpc_session *s)
{
	if (s->nsets < RPC_MAX_STAGES)
		return true;
	for (size_t i = 0; i < s->nsets; i++) {
		if (staged_holds(s->sets[i]))
			continue;
		staged_free(s->sets[i]);
		free(s->sets[i]);
		memmove(&s->sets[i], &s->sets[i + 1],
		    (s->nsets - i - 1) * sizeof(s->sets[0]));
		s->nsets--;
		return true;
	}
	return false;
}

bool
rpc_exec_stage_begin(struct call *c, struct jobrun *jr)
{
	json_t *v = json_object_get(c->params, "commit");
	int m;

	if (v != NULL) {
		if (!json_is_string(v) ||
		    (m = mode_of(json_string_value(v))) < 0) {
			rpc_bad_param(c, "commit",
			    "commit must be \"always\", \"on_ok\" or \"keep\"");
			return false;
		}
		jr->commit = (enum commit_mode)m;
	}
	if (!make_room(c->s)) {
		rpc_fail(c, RPC_JOB_ERROR,
		    json_pack("{s:s}", "error", "too_many_stages"),
		    "%u change sets are kept staged: fs.commit or "
		    "fs.rollback one before the next exec",
		    (unsigned)RPC_MAX_STAGES);
		return false;
	}
	jr->stage_id = ++c->s->next_stage;
	return true;
}

void
rpc_exec_stage_end(struct rpc_session *s, struct jobrun *jr)
{
	struct staged *st;

	if (!jr->staged_valid || (st = malloc(sizeof(*st))) == NULL)
		return;
	*st = jr->staged;
	staged_init(&jr->staged);
	jr->staged_valid = false;
	s->sets[s->nsets++] = st;
}

void
rpc_stage_free_all(struct rpc_session *s)
{
	for (size_t i = 0; i < s->nsets; i++) {
		staged_free(s->sets[i]);
		free(s->sets[i]);
	}
	s->nsets = 0;
}

/* The set the request names ("stage": its id), or the newest that holds
 * changes (HOLDING) or the newest at all; NULL with C's error set. */
static struct staged *
named_set(struct call *c, bool holding)
{
	uint64_t id;

	if (!rpc_opt_uint(c, "stage", 0, 0, UINT32_MAX, &id))
		return NULL;
	for (size_t i = c->s->nsets; i-- > 0;) {
		struct staged *st = c->s->sets[i];

		if (id != 0 ? st->id == id : !holding || staged_holds(st))
			return st;
	}
	rpc_fail(c, RPC_INVALID_PARAMS,
	    json_pack("{s:s}", "error", "no_such_stage"),
	    id != 0 ? "no change set %llu in this session"
		    : "no change set is kept staged in this session",
	    (unsigned long long)id);
	return NULL;
}

json_t *
rpc_stage_changes(struct call *c)
{
	json_t *o;

	if (c->s->nsets == 0)
		return json_pack("{s:n,s:[],s:[],s:[],s:[],s:b,s:I}", "stage",
		    "created", "modified", "deleted", "refused", "truncated",
		    false, "unhashed", (json_int_t)0);
	o = staged_json(c->s->sets[c->s->nsets - 1]);
	return o != NULL ? o : rpc_out_of_memory(c);
}

json_t *
rpc_fs_diff(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"stage", NULL};
	struct staged *st;
	json_t *o;

	(void)p;
	if (!rpc_known_params(c, names) || (st = named_set(c, true)) == NULL)
		return NULL;
	o = staged_json(st);
	return o != NULL ? o : rpc_out_of_memory(c);
}

/* The "paths" parameter: an array of path strings, into *PATHS (owned
 * array of borrowed strings) and *N; absent: NULL. */
static bool
get_paths(struct call *c, const char ***paths, size_t *n)
{
	json_t *v = json_object_get(c->params, "paths"), *e;
	size_t i;

	*paths = NULL;
	*n = 0;
	if (v == NULL)
		return true;
	if (!json_is_array(v) || json_array_size(v) == 0) {
		rpc_bad_param(c, "paths", "paths must be a non-empty array");
		return false;
	}
	if ((*paths = calloc(json_array_size(v), sizeof(**paths))) == NULL) {
		rpc_out_of_memory(c);
		return false;
	}
	json_array_foreach(v, i, e)
	{
		if (!json_is_string(e)) {
			rpc_bad_param(c, "paths", "paths must hold strings");
			free(*paths);
			*paths = NULL;
			return false;
		}
		(*paths)[(*n)++] = json_string_value(e);
	}
	return true;
}

/* The error of a commit of ST that failed (E) into C. */
static json_t *
commit_error(struct call *c, const struct staged *st, int e)
{
	const struct stage_commit_report *r = &st->commit;
	struct rawpath p = {NULL, strlen(r->path)};
	json_t *o;

	if (e == -EBADF)
		return rpc_fail(c, RPC_INVALID_PARAMS,
		    json_pack("{s:s}", "error", "no_such_stage"),
		    "change set %u holds nothing to commit", st->id);
	if (r->conflict)
		return rpc_fail(c, RPC_FILE_ERROR,
		    json_pack("{s:s,s:s}", "error", "conflict", "path",
			r->path),
		    "conflict: the workspace changed at %s since the job; "
		    "nothing was applied",
		    r->path);
	if ((p.p = strdup(r->path)) == NULL)
		return rpc_out_of_memory(c);
	o = rpc_file_error(c, r->why, &p, NULL, NULL);
	free(p.p);
	return o;
}

json_t *
rpc_fs_commit(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"stage", "paths", NULL};
	struct staged *st;
	const char **paths;
	size_t n, bad = 0;
	int e;

	(void)p;
	if (!rpc_known_params(c, names) || (st = named_set(c, true)) == NULL ||
	    !get_paths(c, &paths, &n))
		return NULL;
	e = staged_commit(st, &c->s->fs, paths, n, &bad);
	if (e == -ENOENT) {
		rpc_bad_param(c, "paths",
		    "%s is no change of stage %u that is staged or "
		    "quarantined",
		    paths[bad], st->id);
		free(paths);
		return NULL;
	}
	free(paths);
	if (e < 0)
		return commit_error(c, st, e);
	if (!staged_holds(st))
		staged_release(st);
	return staged_json(st);
}

json_t *
rpc_fs_rollback(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"stage", NULL};
	struct staged *st;

	(void)p;
	if (!rpc_known_params(c, names) || (st = named_set(c, true)) == NULL)
		return NULL;
	staged_rollback(st);
	staged_release(st);
	return staged_json(st);
}
