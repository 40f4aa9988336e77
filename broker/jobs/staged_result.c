/*
 * staged_result.c: a staged change set in the job's result (staged.h,
 * staged_add_result): the "workspace" object and the hint's sentence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsname.h"
#include "fsreport.h"
#include "staged.h"

/* The held-back changes of ST (refused or quarantined), by name up to
 * STAGED_HELD_NAMED: [{path, action, rule}]. */
static json_t *
held_list(const struct staged *st)
{
	json_t *a = json_array();
	size_t named = 0;

	for (size_t i = 0; a != NULL && i < st->ch.n; i++) {
		const struct wb_rule *r = st->rule[i];
		json_t *o;

		if (r == NULL || named == STAGED_HELD_NAMED)
			continue;
		o = json_pack("{s:s,s:s}", "action",
		    r->action == WB_REFUSE ? "refuse" : "quarantine", "rule",
		    r->pattern);
		if (o == NULL ||
		    !fsreport_set_name(o, "path", "path_b64",
			st->ch.c[i].entry->path,
			strlen(st->ch.c[i].entry->path)) ||
		    json_array_append_new(a, o) < 0) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
		named++;
	}
	return a;
}

/* The "workspace" object of ST under the commit mode MODE_NAME. */
static json_t *
summary(const struct staged *st, const char *mode_name)
{
	json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:I,s:I}",
	    "commit", mode_name, "committed",
	    (json_int_t)staged_count(st, STAGED_COMMITTED), "staged",
	    (json_int_t)staged_count(st, STAGED_PENDING), "refused",
	    (json_int_t)staged_count(st, STAGED_REFUSED), "quarantined",
	    (json_int_t)staged_count(st, STAGED_QUARANTINED), "rolled_back",
	    (json_int_t)staged_count(st, STAGED_ROLLED_BACK), "unapplicable",
	    (json_int_t)st->scan.nbad, "held", held_list(st), "staged_bytes",
	    (json_int_t)st->scan.upper_bytes, "stage_bytes",
	    (json_int_t)st->scan.stage_bytes);

	if (o == NULL)
		return NULL;
	if (json_object_set_new(o, "stage",
		staged_holds(st) && st->id != 0 ? json_integer(st->id)
						: json_null()) < 0 ||
	    json_object_set_new(o, "error",
		st->scan_error < 0 ? json_string("io_error")
		    : st->commit_failed
		    ? json_string(st->commit.conflict
			      ? "conflict"
			      : fs_error_name(st->commit.why))
		    : json_null()) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The first held-back change of ST (index), or ST->ch.n. */
static size_t
first_held(const struct staged *st)
{
	size_t i = 0;

	while (i < st->ch.n && st->rule[i] == NULL)
		i++;
	return i;
}

/* PATH as a hint quotes it: plain (fsname.h) and at most 200 bytes,
 * else "a file". */
static const char *
short_path(const char *path)
{
	size_t n = strnlen(path, 201);

	return n <= 200 && fsname_is_plain(path, n) ? path : "a file";
}

/* The hint's sentence about ST into BUF (LEN bytes), or "". */
static void
hint_sentence(const struct staged *st, char *buf, size_t len)
{
	size_t held = staged_count(st, STAGED_REFUSED) +
	    staged_count(st, STAGED_QUARANTINED);
	size_t i = first_held(st);

	buf[0] = '\0';
	if (st->scan_error < 0)
		snprintf(buf, len,
		    " The sandbox could not read what the job wrote (%s): "
		    "nothing was written back to the workspace.",
		    strerror(-st->scan_error));
	else if (st->commit_failed && st->id == 0)
		snprintf(buf, len,
		    " The job's changes were not written back (%s%s%s): the "
		    "workspace is as it was; free space or ask the user for "
		    "a larger quota, then run the job again.",
		    st->commit.conflict ? "the workspace changed at"
					: fs_error_name(st->commit.why),
		    st->commit.path[0] != '\0' ? " " : "",
		    short_path(st->commit.path));
	else if (st->commit_failed)
		snprintf(buf, len,
		    " The job's changes were not written back (%s%s%s): "
		    "they are kept staged as stage %u; free space or fix "
		    "the conflict, then fs.commit, or fs.rollback.",
		    st->commit.conflict ? "the workspace changed at"
					: fs_error_name(st->commit.why),
		    st->commit.path[0] != '\0' ? " " : "",
		    short_path(st->commit.path), st->id);
	else if (held > 0 && i < st->ch.n)
		snprintf(buf, len,
		    " %zu change%s held back by the write-back rules, "
		    "first %s (%s by rule \"%s\"): files a host tool would "
		    "run are not written back from the sandbox; do not try "
		    "another way to write them, tell the user.",
		    held, held == 1 ? " was" : "s were",
		    short_path(st->ch.c[i].entry->path),
		    st->rule[i]->action == WB_REFUSE ? "refused"
						     : "quarantined",
		    st->rule[i]->pattern);
	else if (staged_count(st, STAGED_PENDING) > 0 && st->id == 0)
		snprintf(buf, len,
		    " A dry run: the job's %zu changes were not written back "
		    "to the workspace.",
		    staged_count(st, STAGED_PENDING));
	else if (staged_count(st, STAGED_PENDING) > 0)
		snprintf(buf, len,
		    " The job's changes are staged (stage %u), not yet in "
		    "the workspace: fs.diff shows them, fs.commit applies "
		    "them, fs.rollback drops them.",
		    st->id);
}

int
staged_add_result(json_t *result, const struct staged *st,
    const char *mode_name)
{
	json_t *o = summary(st, mode_name), *h;
	char sentence[768], *joined;

	if (o == NULL || json_object_set_new(result, "workspace", o) < 0)
		return -ENOMEM;
	hint_sentence(st, sentence, sizeof(sentence));
	if (sentence[0] == '\0')
		return 0;
	h = json_object_get(result, "hint");
	if (asprintf(&joined, "%s%s",
		json_is_string(h) ? json_string_value(h) : "",
		json_is_string(h) ? sentence : sentence + 1) < 0)
		return -ENOMEM;
	if (json_object_set_new(result, "hint", json_string(joined)) < 0) {
		free(joined);
		return -ENOMEM;
	}
	free(joined);
	return 0;
}
