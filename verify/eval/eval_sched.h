/*
 * eval_sched.h: the runs of one `stockade eval`, --jobs at a time
 * (threads), configuration after configuration, with the honeypot's
 * records forgotten once no run in flight can need them.
 */
#ifndef STOCKADE_EVAL_SCHED_H
#define STOCKADE_EVAL_SCHED_H

#include <limits.h>

#include "eval_run.h"
#include "eval_table.h"

#define EVAL_MAX_JOBS 4 /* the most --jobs allows */

/*
 * Runs every cell of M (attack A against configuration C gives
 * V[A * M->ncfg + C], V owned by the caller) with JOBS workers (1 to
 * EVAL_MAX_JOBS), configuration C under the policy file POLICY[C]. WHAT
 * ("layers", ...) names the eval in the progress lines on stderr, one
 * per configuration done. A configuration that must run alone (limits
 * on, no user namespace) runs with no other run in flight. Returns 0,
 * -EINTR when CTX->interrupted() stopped it (cells not run keep their
 * zeroed verdicts), or -ENOMEM.
 */
int eval_sched_run(const struct eval_ctx *ctx, struct eval_matrix *m,
    struct eval_verdict *v, char (*policy)[PATH_MAX], unsigned jobs,
    const char *what);

#endif
