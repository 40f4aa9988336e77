/*
 * staged.h: one job's staged change set and what becomes of it (issue 26):
 * read from the job's stage (broker/fs/stage.h), held against the
 * [writeback] rules (broker/fs/writeback.h), then committed, rolled back
 * or kept for the client by the commit mode ([files] commit, exec's
 * "commit", `stockade run --rollback-on-failure` / `--dry-run`). Every
 * front (run, serve, mcp) goes through here, so that a change is held
 * back, reported and applied the same way in all of them.
 */
#ifndef STOCKADE_STAGED_H
#define STOCKADE_STAGED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "fsapi.h"
#include "policy.h"
#include "snapshot.h"
#include "stage.h"

/* What became of one change. */
enum staged_state {
	STAGED_PENDING = 0, /* in the stage, not yet decided */
	STAGED_COMMITTED, /* applied to the workspace */
	STAGED_REFUSED, /* held back by a refuse rule; dropped */
	STAGED_QUARANTINED, /* held back by a quarantine rule; in the
			     * stage until the client commits or rolls
			     * it back */
	STAGED_ROLLED_BACK, /* dropped by a rollback */
};

/* Held-back changes a result names; the rest are counted. */
#define STAGED_HELD_NAMED 8

struct staged {
	struct stage_ref stage; /* the stage tmpfs's root (fd owned, or -1
				 * once dropped) and its token */
	uint32_t id; /* the session's number for it (1, 2, ...) */
	struct stage_scan scan;
	struct changes ch; /* borrows from scan */
	enum staged_state *state; /* parallel to ch.c */
	const struct wb_rule **rule; /* parallel: the rule that held
				      * it back (borrowed from the
				      * policy), or NULL */
	int scan_error; /* stage_scan's negative errno, or 0 */
	struct stage_commit_report commit; /* the last commit's */
	bool commit_failed; /* that commit failed: nothing applied */
};

/*
 * Reads the stage STAGE_FD (taken: closed by staged_free), with its TOKEN
 * (STAGE_TOKEN_BYTES bytes, copied: stage.h, stage_open_at), of the job that
 * wrote into the workspace ROOT (borrowed) under Q, and holds its changes
 * against WB (borrowed from the policy, which must outlive ST): ST gets
 * the change set with every change pending or, when a rule matched,
 * refused or quarantined. ID numbers it in the session; INTERRUPTED (may
 * be NULL) stops the scan as stage_scan's. Returns 0, or a
 * negative errno (-ENOMEM; stage_scan's -EINTR or read failure, also kept
 * in ST->scan_error: the set is then empty and staged_json says so).
 */
int staged_open(struct staged *st, int stage_fd,
    const uint8_t token[STAGE_TOKEN_BYTES], int root, const struct fs_quota *q,
    const struct wb_policy *wb, uint32_t id, int (*interrupted)(void));

/*
 * Commits ST's pending changes to CTX's workspace (stage_commit), and,
 * when PATHS (NPATHS workspace-relative paths, raw, NUL-terminated) is
 * given, only the pending or quarantined changes at those paths (a path
 * that names no such change: -ENOENT, *BAD set to its index, nothing
 * done). All or nothing: on failure nothing is applied, ST->commit says
 * why (quota_exceeded for a full workspace or disk, conflict, ...) and
 * the changes stay staged. Returns 0 or a negative errno.
 */
int staged_commit(struct staged *st, struct fs_ctx *ctx,
    const char *const *paths, size_t npaths, size_t *bad);

/* Marks every pending and quarantined change of ST rolled back (the
 * workspace was never touched by them). */
void staged_rollback(struct staged *st);

/* Closes ST's stage (its changes can no longer be committed; what it
 * says of them stays, for fs.changes). */
void staged_release(struct staged *st);

/* Whether ST still holds changes for the client: pending or quarantined. */
bool staged_holds(const struct staged *st);

/* The number of ST's changes in state S. */
size_t staged_count(const struct staged *st, enum staged_state s);

/*
 * ST as fs.changes and fs.diff answer it (docs/protocol.md): "stage",
 * "created", "modified", "deleted" (each item path, type, size, sha256,
 * state, and rule/action when held back), "refused" (entries of the stage
 * that cannot be applied: path, error), "truncated", "unhashed",
 * "staged_bytes", "stage_bytes". Returns a new reference or NULL
 * (ENOMEM).
 */
json_t *staged_json(const struct staged *st);

/*
 * Adds ST's summary to the job's RESULT object as "workspace" (commit
 * mode MODE_NAME, counts, the held-back changes by name up to
 * STAGED_HELD_NAMED, the stage's id while it holds changes, the commit's
 * error) and, when changes were held back, kept or could not be
 * committed, one sentence to its "hint". Returns 0 or -ENOMEM.
 */
int staged_add_result(json_t *result, const struct staged *st,
    const char *mode_name);

/* The stable name of a commit mode: "always", "on_ok", "keep". */
const char *staged_mode_name(enum commit_mode m);

/* Closes the stage and frees everything ST owns; accepts a zeroed ST
 * whose descriptors are -1 (staged_init). */
void staged_free(struct staged *st);

/* An empty ST: descriptors -1. */
void staged_init(struct staged *st);

#endif
