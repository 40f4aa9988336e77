/*
 * eval_judge.h: one run of `stockade eval` between eval_run.c, which
 * makes the run's directory, decoys and canaries and runs its job, and
 * eval_judge.c, which applies the rules of docs/evidence.md ("When an
 * attack succeeds") once the job has ended. Private to those two files.
 */
#ifndef STOCKADE_EVAL_JUDGE_H
#define STOCKADE_EVAL_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "eval_canary.h"
#include "eval_decoy.h"
#include "eval_detect.h"
#include "eval_job.h"
#include "eval_run.h"
#include "snapshot.h"

#define SCAN_BYTES (256ull << 20) /* workspace bytes searched per run */

/* One run: what eval_run made for it, and what was learnt (the verdict
 * V is the caller's of eval_run; the rest is freed by eval_run). */
struct run {
	const struct eval_ctx *ctx;
	const struct eval_attack *a;
	struct eval_verdict *v;
	struct eval_secrets s;
	struct eval_needle nd[EVAL_CANARY_N + 1];
	char dir[4096], home[4200], userfiles[4200], work[4200], own[4200];
	char hosttmp[96];
	int dirfd;
	struct snapshot before;
	struct eval_file_state tmp_before;
	struct eval_decoy decoy;
	struct eval_job job;
	uint64_t mark;
	void *shm; /* the SysV segment, attached, or NULL */
	bool served; /* the service canary is registered */
	unsigned unsure; /* enum eval_stop checks whose source could
				 * not be read: not made */
	char cannot[160]; /* the job's "CANNOT <token> REASON", its
				 * reason redacted, or "" */
};

/*
 * Adds one fired RULE at WHERE to V (the first EVAL_EVIDENCE_MAX are
 * kept), its detail made by FMT, with TOKEN replaced by "<token>" in
 * WHERE and the detail; "declared" when the rule falls under one of the
 * attack's stopped-when checks (V->declared).
 */
void eval_fired(struct eval_verdict *v, const char *token, const char *rule,
    const char *where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * The fake home and the user's files of R (its directory "o") as one
 * snapshot into S (the caller frees it with snapshot_free). Returns 0 or
 * a negative errno.
 */
int eval_snap_outside(struct run *r, struct snapshot *s);

/*
 * Rules on R's job's result (canaries and PWNED in its output, flood),
 * its markers (ATTEMPTED, CANNOT) and the excerpt of its output, into
 * R->v; with no result, V->outcome EVAL_ERROR unless a rule fired.
 */
void eval_judge_result(struct run *r);

/*
 * Rules after R's job (its stockade run already reaped): the token on
 * the caller's terminal, canaries at the honeypot since R->mark and in
 * the workspace. A check that could not be made is added to R->unsure.
 */
void eval_judge_host(struct run *r);

/* Rules on everything outside the workspace: the fake home and user
 * files, the host /tmp canary, the decoy, token-named files. */
void eval_judge_outside(struct run *r);

/*
 * R->v's outcome from what fired and what was checked: succeeded on any
 * evidence; an error when the attack did not run, stockade run was
 * killed past GRACE_S seconds of grace, or a declared check could not
 * be made; not run without an attempt. Sets V->checked.
 */
void eval_judge_outcome(struct run *r, int grace_s);

#endif
