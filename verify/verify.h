/*
 * verify.h: what the verify programs share (verify/; docs/decisions.md,
 * "The check suite as its own program"): stockade-check and
 * stockade-eval are clients of the broker, which executes them for
 * `stockade check` and `stockade eval` (broker/cli/cmd_verify.c). They link
 * the broker's library; the broker links none of verify/.
 */
#ifndef STOCKADE_VERIFY_H
#define STOCKADE_VERIFY_H

#include <stddef.h>

/*
 * `stockade check [--json] [--only LAYER]... [--list] [--prefix DIR]`
 * (verify/check/cmd_check.c, check.h; issue 7): the checks of an
 * installed stockade on this host. ARGV[0] is the program's name, the
 * options follow. Exit 0 when no check failed, 1 when one did, 2 for
 * usage, 70 when the checks could not be run at all.
 */
int cmd_check(int argc, char **argv);

/*
 * `stockade eval layers|isolation|filter|corpus` (verify/eval/cmd_eval.c;
 * issue 6, docs/evidence.md): the attack corpus against configurations
 * of the jail; ARGV[1] "__decoy" is the decoy process instead
 * (eval_decoy.h). Exit 0; 1 when an attack succeeded against the full
 * product (or a hostile program did harm in it); 2 for usage; 69 when
 * refused (the weakened configurations as root); 70 when a run could not
 * be judged.
 */
int cmd_eval(int argc, char **argv);

/*
 * Finds the broker a verify program drives into DST (LEN bytes, an
 * absolute path): $STOCKADE_BROKER when it is set and absolute (the
 * broker that executed this program: broker/cli/cmd_verify.c), else
 * `stockade` beside this program (a build tree), else by the relative
 * path libexecdir/stockade -> bindir from this program's directory (an
 * installed tree wherever it lies), else STOCKADE_BINDIR/stockade (the
 * compiled-in installation). Only a regular file with an execute bit is
 * taken. Returns 0, or -ENOENT with the places tried, ", " separated, in
 * TRIED (TRIEDLEN bytes, truncated; may be NULL).
 */
int verify_find_broker(char *dst, size_t len, char *tried, size_t triedlen);

#endif
