/*
 * staged.c: one job's staged change set (staged.h): read, held against
 * the [writeback] rules, committed, rolled back or kept.
 */
#include "staged.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsreport.h"
#include "writeback.h"

static const char *const state_names[] = {
    [STAGED_PENDING] = "staged",
    [STAGED_COMMITTED] = "committed",
    [STAGED_REFUSED] = "refused",
    [STAGED_QUARANTINED] = "quarantined",
    [STAGED_ROLLED_BACK] = "rolled_back",
};

const char *
staged_mode_name(enum commit_mode m)
{
	switch (m) {
	case COMMIT_ON_OK:
		return "on_ok";
	case COMMIT_KEEP:
		return "keep";
	case COMMIT_ALWAYS:
		break;
	}
	return "always";
}

void
staged_init(struct staged *st)
{
	memset(st, 0, sizeof(*st));
	st->stage.fd = -1;
}

void
staged_free(struct staged *st)
{
	if (st->stage.fd >= 0)
		close(st->stage.fd);
	changes_free(&st->ch);
	stage_scan_free(&st->scan);
	free(st->state);
	free(st->rule);
	staged_init(st);
}

/* Holds change I of ST by rule R (refuse or quarantine). */
static void
hold(struct staged *st, size_t i, const struct wb_rule *r)
{
	st->rule[i] = r;
	st->state[i] = r->action == WB_REFUSE ? STAGED_REFUSED
					      : STAGED_QUARANTINED;
}

/* Whether PATH lies below the directory DIR (both workspace-relative). */
static bool
below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/*
 * Holds every change of ST against WB: refused or quarantined when a
 * rule matches. A directory the job created and a rule held back takes
 * everything created below it along (same rule): without its directory
 * no such change could be applied, and a commit that tried would fail
 * whole (a `git init` whose .git is quarantined).
 */
static void
hold_back(struct staged *st, const struct wb_policy *wb)
{
	for (size_t i = 0; i < st->ch.n; i++) {
		const struct wb_rule *r = writeback_match(wb, &st->ch.c[i],
		    &st->stage);

		if (r != NULL && r->action != WB_ALLOW)
			hold(st, i, r);
	}
	for (size_t i = 0; i < st->ch.n; i++) {
		const struct change *d = &st->ch.c[i];

		if (st->rule[i] == NULL || d->kind != CHANGE_CREATED ||
		    d->entry->type != FS_T_DIR)
			continue;
		for (size_t j = 0; j < st->ch.n; j++)
			if (st->rule[j] == NULL &&
			    below(st->ch.c[j].entry->path, d->entry->path))
				hold(st, j, st->rule[i]);
	}
}

int
staged_open(struct staged *st, int stage_fd,
    const uint8_t token[STAGE_TOKEN_BYTES], int root, const struct fs_quota *q,
    const struct wb_policy *wb, uint32_t id, int (*interrupted)(void))
{
	int e;

	staged_init(st);
	st->stage.fd = stage_fd;
	memcpy(st->stage.token, token, sizeof(st->stage.token));
	st->id = id;
	e = stage_scan(&st->stage, root, q, interrupted, &st->scan);
	if (e < 0)
		return st->scan_error = e;
	if (snapshot_diff(&st->scan.before, &st->scan.after, &st->ch) < 0)
		return st->scan_error = -ENOMEM;
	st->state = calloc(st->ch.n + 1, sizeof(*st->state));
	st->rule = calloc(st->ch.n + 1, sizeof(*st->rule));
	if (st->state == NULL || st->rule == NULL) {
		/* Nothing is known of the set then: no change to count. */
		changes_free(&st->ch);
		return st->scan_error = -ENOMEM;
	}
	hold_back(st, wb);
	return 0;
}

/* Index of the change at PATH in ST, or -1. */
static ssize_t
find_change(const struct staged *st, const char *path)
{
	for (size_t i = 0; i < st->ch.n; i++)
		if (strcmp(st->ch.c[i].entry->path, path) == 0)
			return (ssize_t)i;
	return -1;
}

/* PICK for staged_commit: every pending change, or (PATHS) the pending or
 * quarantined ones named. -ENOENT with *BAD for a path naming none. */
static int
pick_changes(const struct staged *st, const char *const *paths, size_t npaths,
    enum stage_pick *pick, size_t *bad)
{
	for (size_t i = 0; i < st->ch.n; i++)
		pick[i] = paths == NULL && st->state[i] == STAGED_PENDING
		    ? STAGE_APPLY
		    : STAGE_HOLD;
	for (size_t k = 0; paths != NULL && k < npaths; k++) {
		ssize_t i = find_change(st, paths[k]);

		if (i < 0 ||
		    (st->state[i] != STAGED_PENDING &&
			st->state[i] != STAGED_QUARANTINED)) {
			if (bad != NULL)
				*bad = k;
			return -ENOENT;
		}
		pick[i] = STAGE_APPLY;
	}
	return 0;
}

/* Whether PICK (N entries) applies anything. */
static bool
any_picked(const enum stage_pick *pick, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pick[i] == STAGE_APPLY)
			return true;
	return false;
}

int
staged_commit(struct staged *st, struct fs_ctx *ctx, const char *const *paths,
    size_t npaths, size_t *bad)
{
	enum stage_pick *pick;
	int e;

	if (st->stage.fd < 0 || st->scan_error < 0)
		return -EBADF;
	if ((pick = calloc(st->ch.n + 1, sizeof(*pick))) == NULL)
		return -ENOMEM;
	if ((e = pick_changes(st, paths, npaths, pick, bad)) < 0) {
		free(pick);
		return e;
	}
	memset(&st->commit, 0, sizeof(st->commit));
	/* Nothing to apply (a job that changed nothing): no commit, so no
	 * walk for the workspace's usage either. */
	if (!any_picked(pick, st->ch.n)) {
		free(pick);
		return 0;
	}
	e = stage_commit(ctx, &st->stage, &st->scan, &st->ch, pick,
	    &st->commit);
	st->commit_failed = e < 0;
	for (size_t i = 0; e == 0 && i < st->ch.n; i++)
		if (pick[i] == STAGE_APPLY)
			st->state[i] = STAGED_COMMITTED;
	free(pick);
	return e;
}

void
staged_rollback(struct staged *st)
{
	for (size_t i = 0; i < st->ch.n; i++)
		if (st->state[i] == STAGED_PENDING ||
		    st->state[i] == STAGED_QUARANTINED)
			st->state[i] = STAGED_ROLLED_BACK;
}

void
staged_release(struct staged *st)
{
	if (st->stage.fd >= 0)
		close(st->stage.fd);
	st->stage.fd = -1;
}

size_t
staged_count(const struct staged *st, enum staged_state s)
{
	size_t n = 0;

	for (size_t i = 0; i < st->ch.n; i++)
		n += st->state[i] == s;
	return n;
}

bool
staged_holds(const struct staged *st)
{
	return st->stage.fd >= 0 &&
	    (staged_count(st, STAGED_PENDING) > 0 ||
		staged_count(st, STAGED_QUARANTINED) > 0);
}

/* The action word of RULE: "refuse", "quarantine" or "allow". */
static const char *
action_name(const struct wb_rule *rule)
{
	return rule->action == WB_REFUSE    ? "refuse"
	    : rule->action == WB_QUARANTINE ? "quarantine"
					    : "allow";
}

/* One change of ST (index I) as an fs.changes item. */
static json_t *
change_item(const struct staged *st, size_t i)
{
	const struct snap_entry *e = st->ch.c[i].entry;
	char hex[65];
	json_t *o;

	snap_hex(e, hex);
	o = json_pack("{s:s,s:I,s:o,s:s}", "type", fs_type_name(e->type),
	    "size", (json_int_t)e->size, "sha256",
	    e->hashed ? json_string(hex) : json_null(), "state",
	    state_names[st->state[i]]);
	if (o != NULL && st->rule[i] != NULL &&
	    json_object_set_new(o, "rule",
		json_pack("{s:s,s:s,s:b}", "pattern", st->rule[i]->pattern,
		    "action", action_name(st->rule[i]), "drivers",
		    st->rule[i]->drivers)) < 0) {
		json_decref(o);
		return NULL;
	}
	if (o != NULL &&
	    !fsreport_set_name(o, "path", "path_b64", e->path,
		strlen(e->path))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ST's stage entries that cannot be applied, as [{path, error}]. */
static json_t *
bad_items(const struct staged *st)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && i < st->scan.nbad; i++) {
		const struct stage_bad *b = &st->scan.bad[i];
		json_t *o = json_pack("{s:s}", "error", fs_error_name(b->why));

		if (o == NULL ||
		    !fsreport_set_name(o, "path", "path_b64", b->path,
			strlen(b->path)) ||
		    json_array_append_new(a, o) < 0) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *
staged_json(const struct staged *st)
{
	static const char *const kinds[] = {"created", "modified", "deleted"};
	json_t *o, *lists[3];

	o = json_pack("{s:I,s:[],s:[],s:[],s:o,s:b,s:I,s:I,s:I}", "stage",
	    (json_int_t)st->id, kinds[0], kinds[1], kinds[2], "refused",
	    bad_items(st), "truncated", st->ch.truncated, "unhashed",
	    (json_int_t)st->ch.unhashed, "staged_bytes",
	    (json_int_t)st->scan.upper_bytes, "stage_bytes",
	    (json_int_t)st->scan.stage_bytes);
	for (size_t k = 0; o != NULL && k < 3; k++)
		lists[k] = json_object_get(o, kinds[k]);
	for (size_t i = 0; o != NULL && i < st->ch.n; i++) {
		json_t *item = change_item(st, i);

		if (item == NULL ||
		    json_array_append_new(lists[st->ch.c[i].kind], item) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	return o;
}
