/*
 * eval_run.h: one run of `stockade eval` (issue 6): one attack against
 * one configuration, judged by the rules of docs/evidence.md ("When an
 * attack succeeds").
 *
 * A run makes, under the eval's directory, a directory of its own:
 *   r<ID>/o/home       the fake home (eval_canary.h), HOME of the caller
 *   r<ID>/o/userfiles  the user's project files
 *   r<ID>/w            the workspace, holding a copy of the attack
 *   r<ID>/x            the eval's own files (what `fileapi: get` got)
 * plus the canary file in the host's /tmp and a decoy process
 * (eval_decoy.h), then runs the job by executing the stockade binary
 * itself:
 *   stockade run [--unsafe-evaluation] --format json --policy P
 *       --workspace W -- [INTERPRETER] ./ATTACK TOKEN HOME HOSTTMP TCP
 *       UDP UNIX DECOY USERFILES
 * with HOME, AWS_SECRET_ACCESS_KEY and STOCKADE_EVAL_API_KEY in its
 * environment, in a session of its own whose controlling terminal (and
 * standard input) is a fresh pty; standard output and error are pipes.
 * After the job: the leftover check (100 ms after stockade run ended),
 * the `fileapi:` steps (`stockade get` / `stockade put` on W), then the
 * searches. Everything the run made is removed at the end, and every
 * process whose command line holds its token is killed.
 */
#ifndef STOCKADE_EVAL_RUN_H
#define STOCKADE_EVAL_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eval_corpus.h"
#include "eval_honeypot.h"

/* What every run of one eval shares (all borrowed). */
struct eval_ctx {
	const char *self; /* the stockade binary to execute */
	const char *decoy; /* the stockade-eval binary, run as the
				    * decoy (eval_decoy_start) */
	const char *base; /* the eval's directory, absolute */
	struct eval_honeypot *hp;
	const char *user_home; /* the eval user's own $HOME, searched
				    * for token-named files; NULL: none */
	const char *path_env; /* PATH given to stockade run */
	uint64_t stdout_cap; /* the policy's stdout cap, bytes */
	uint64_t wall_ms; /* the policy's wall-clock limit, ms */
	bool keep; /* leave each run's directory */
	int (*interrupted)(void); /* non-zero: stop the job now */
};

/*
 * A run's verdict (issue 23 point 9: "stopped" only from the evidence the
 * attack declares, docs/evidence.md "What stopped means").
 */
enum eval_outcome {
	EVAL_STOPPED = 0, /* no rule fired, the attempt is proven
				    * (attempted-when) and every check of
				    * stopped-when was made */
	EVAL_SUCCEEDED, /* at least one rule fired */
	EVAL_ERROR, /* the run itself failed, or a declared
				    * check could not be made: no verdict */
	EVAL_NOT_RUN, /* no rule fired, but the attack shows no
				    * attempt (no ATTEMPTED marker): it
				    * could not try, and V->error says why */
};

/* One rule that fired. No field ever holds a token or a canary's value
 * (they are named, or replaced by "<token>"). */
struct eval_evidence {
	char rule[16]; /* canary, pwned, outside, leftover,
				    * flood, terminal */
	char where[64]; /* stdout, stderr, workspace, honeypot
				    * tcp|udp|unix, fileapi get NAME, home,
				    * userfiles, hosttmp, decoy, a directory,
				    * process, pty */
	char detail[192]; /* the canary's name, a path, ... */
	bool declared; /* the rule is one of the attack's
				    * stopped-when checks (an undeclared one
				    * still counts: harm is harm) */
};

#define EVAL_EVIDENCE_MAX 8

struct eval_verdict {
	enum eval_outcome outcome;
	char status[24]; /* the job's result status, or "" */
	int exit_code; /* stockade run's exit status, -1 if
				    * killed */
	int64_t wall_ms; /* the job's wall_ms, -1 unknown */
	struct eval_evidence ev[EVAL_EVIDENCE_MAX];
	size_t nev; /* rules that fired (at most the max) */
	char error[256]; /* EVAL_ERROR: what failed;
				    * EVAL_NOT_RUN: why the attack could not
				    * try (its CANNOT line, else its status,
				    * exit and first words) */
	bool attempted; /* the ATTEMPTED marker was seen */
	unsigned declared; /* the attack's stopped_when (enum
				    * eval_stop bits), copied */
	unsigned checked; /* the checks of enum eval_stop this run
				    * could make (their sources read) */
	char output[256]; /* the job's first words: stdout's, then
				    * stderr's, each at most 120 bytes, its
				    * token and canaries replaced by their
				    * names ("<token>", "<ssh_key>"), and
				    * anything shaped like another run's
				    * ("<ssh_key>", "<hex>") */
};

/* "stopped", "succeeded", "error" or "not_run". */
const char *eval_outcome_name(enum eval_outcome o);

/*
 * Runs the attack A (its program at A->path, copied into the workspace)
 * under the policy file POLICY (absolute path; UNSAFE: it switches layers
 * off, so --unsafe-evaluation is passed) as run number ID (unique within
 * CTX->base), and judges it into V. Safe to call from several threads at
 * once with distinct IDs. Returns 0 (V holds the verdict, which may be
 * EVAL_ERROR or EVAL_NOT_RUN with V->error set), or -EINTR when
 * CTX->interrupted stopped it. An attack that declares stopped-when and
 * attempted-when (every corpus entry) is EVAL_STOPPED only when it
 * printed "ATTEMPTED <token>" and each declared check was made and found
 * nothing; one that declares nothing (tests/verify/eval/codefilter/
 * hostile programs) is
 * EVAL_STOPPED when no rule fired.
 */
int eval_run(const struct eval_ctx *ctx, const struct eval_attack *a,
    const char *policy, bool unsafe, unsigned id, struct eval_verdict *v);

#endif
