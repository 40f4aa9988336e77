/*
 * policy_loader.h: the state of one policy layer being read, shared by the
 * loader (policy.c: the reader, the handler and the scalars) and its list
 * entries (policy_lists.c: [environment] and [filesystem]). Not part of
 * the public interface.
 */
#ifndef STOCKADE_POLICY_LOADER_H
#define STOCKADE_POLICY_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy.h"
#include "policy_internal.h"

/* Where `stockade policy check` wants each error as it is found
 * (policy_load_file_report). */
struct policy_reporter {
	void (*fn)(const char *msg, void *arg);
	void *arg;
	unsigned refused; /* entries refused and reported so far */
	bool err_reported; /* the error in the caller's ERR was reported */
};

/* State of one layer (the default, or a file laid over it). */
struct loader {
	struct policy *p;
	const char *name; /* for messages */

	/* The text: a FILE or a NUL-terminated string. */
	FILE *file;
	const char *text;
	int read_errno; /* set when reading FILE failed */
	size_t nread; /* bytes read so far */

	unsigned lineno; /* line last handed to inih, from 1 */
	enum section section; /* as the reader saw the last [section] */
	unsigned section_line; /* line of that [section] */
	bool section_keys; /* a key came after it */

	bool in_file; /* the file laid over the default */
	uint64_t seen; /* bit i: policy_scalar_keys[i] given in this layer */
	/* This layer's own list entries (env, mounts and their origins),
	 * laid over P's by policy_merge_lists() once the layer is read, when
	 * [policy] replace, wherever it is in the file, is known. */
	struct policy lists;

	/* With REP, a refused [network] rule is reported and the reading
	 * goes on (policy_refuse_entry); the first is kept here, to be the
	 * layer's error once it is read. */
	struct policy_reporter *rep;
	char refused[POLICY_ERR_MAX];
	unsigned refused_line;

	/* The first error: code < 0 once set, at err_line. */
	int code;
	unsigned err_line;
	char *err;
	size_t errlen;
};

/*
 * Records the first error of layer L, CODE (a negative errno) at LINE, as
 * "NAME:LINE: " and FMT's text in L's err buffer (truncated to its
 * errlen; none when it has none); later errors are dropped, as the parse
 * stops at the first. Returns 0, inih's handler's "failed".
 */
__attribute__((format(printf, 4, 5))) int policy_fail_at(struct loader *l,
    int code, unsigned line, const char *fmt, ...);
/*
 * Refuses the list entry at L's current line, FMT's text saying why: an
 * error (as fail()) when L has no reporter; otherwise "NAME:LINE: why" is
 * passed to the reporter and the reading goes on, the layer failing with
 * the first such entry's error once it is read. Returns 0 when the
 * reading stops, 1 when it goes on (inih's handler's value).
 */
__attribute__((format(printf, 2, 3))) int policy_refuse_entry(struct loader *l,
    const char *fmt, ...);
/* An -EINVAL error of L at the line last read, as policy_fail_at. */
#define fail(l, ...) policy_fail_at((l), -EINVAL, (l)->lineno, __VA_ARGS__)

/*
 * Adds NAME=V, an [environment] entry at L's current line, to L's own
 * list (l->lists, copies it owns), refusing an invalid or duplicate name
 * and more than JOB_MAX_ENV entries. Returns 1, or 0 with the error
 * recorded in L (-ENOMEM when out of memory, else -EINVAL).
 */
int policy_add_env(struct loader *l, const char *name, const char *v);
/*
 * Adds the [filesystem] bind KEY = V (ro_bind, ro_bind_try or
 * unsafe_ro_bind_no_landlock) at L's current line to L's own list,
 * refusing an invalid path, one inside a directory the jail mounts
 * itself, a duplicate and more than JOB_MAX_MOUNTS. Returns 1, or 0 with
 * the error recorded in L (-ENOMEM when out of memory, else -EINVAL).
 */
int policy_add_mount(struct loader *l, const char *key, const char *v);
/*
 * Adds the [network] rule KEY = V (allow, allow_address or deny;
 * egress_rule_parse) at L's current line to L's own list, refusing an
 * unknown key, an invalid rule (the message names the rule and what is
 * wrong with it, egress_name_strerror), a rule given twice and more than
 * EGRESS_MAX_RULES. Returns 1, or 0 with the error recorded in L
 * (-ENOMEM when out of memory, else -EINVAL).
 */
int policy_add_net(struct loader *l, const char *key, const char *v);
/*
 * Adds the [writeback] rule KEY = V (refuse, quarantine or allow;
 * policy_parse_wb_value) at L's current line to L's own list, refusing
 * an unknown action, an invalid value (the message names the rule and
 * what is wrong with it), a pattern and qualifier given twice and more
 * than POLICY_MAX_WB_RULES. Returns 1, or 0 with the error recorded in
 * L (-ENOMEM when out of memory, else -EINVAL).
 */
int policy_add_wb(struct loader *l, const char *key, const char *v);
/*
 * Lays L's own list entries over l->p's once the layer is read: with
 * [policy] replace naming the list, they are the whole list; otherwise
 * each takes the place of l->p's entry of the same variable, bind
 * target, [network] rule or [writeback] pattern and qualifier, and the
 * others are appended, in the file's order. The entries
 * moved leave l->lists (policy_clear() frees the rest). Returns 1, or 0
 * with the error recorded at the line of the first entry past the limit
 * (or -ENOMEM).
 */
int policy_merge_lists(struct loader *l);
/* Frees P's environment, binds, [network] and [writeback] rules with
 * their origins and empties them. */
void policy_free_lists(struct policy *p);
/* The [writeback] half of the two above (policy_writeback.c): lays L's
 * rules over l->p's (1, or 0 with the error recorded), frees P's. */
int policy_merge_wb(struct loader *l);
void policy_free_wb(struct policy *p);

#endif
