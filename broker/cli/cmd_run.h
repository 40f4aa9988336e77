/*
 * cmd_run.h: the parts of `stockade run` (cmd_run.c) kept in files of
 * their own: its --help (run_usage.c), the --put and --get transfers
 * (run_xfer.c), and the job's output and result (run_output.c).
 */
#ifndef STOCKADE_CMD_RUN_H
#define STOCKADE_CMD_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "fsapi.h"
#include "jobrun.h"
#include "progress.h"
#include "runflags.h"
#include "supervisor.h"

/*
 * The synopsis of `stockade run` to F; to stdout (--help) also every
 * option with its meaning and its default, the limits' read from the
 * embedded default policy (policy/default.ini), so that they cannot
 * drift from it (run_usage.c).
 */
void run_usage(FILE *f);

/*
 * One --put HOST:SANDBOX or --get SANDBOX:HOST. The sandbox side cannot
 * hold a ':' (--put splits at the last one, --get at the first), so a
 * host path may; `stockade put/get` take any sandbox path.
 */
struct xfer {
	const char *arg; /* the option's argument, as given */
	char *host; /* host path (owned) */
	char *sandbox; /* sandbox path (owned) */
	const char *base; /* --get: the last component of host */
	int fd; /* --put: the host file; --get: its directory */
	int out; /* --get: the temporary file, made at open */
	char tmp[40]; /* --get: its name in fd; "" once renamed */
	mode_t mode; /* --put: the host file's permission bits */
	bool done; /* attempted */
	enum fs_error why; /* FS_OK, or why it failed */
	int host_errno; /* a failure on the host side (errno) */
	uint64_t size; /* bytes copied */
};

struct xfers {
	struct xfer *v;
	size_t n;
};

/*
 * Adds the --put (PUT) or --get argument ARG (kept, not copied: argv's)
 * to XS, whose array is allocated for CAP entries at the first call (CAP:
 * argc, more than the options there can be); the caller frees XS with
 * run_xfers_free, whatever this returns. Returns 0, -EINVAL when ARG is
 * not HOST:SANDBOX (--put) or SANDBOX:HOST with HOST naming a file
 * (--get), or -ENOMEM; nothing is printed.
 */
int run_xfer_add(struct xfers *xs, size_t cap, const char *arg, bool put);

/*
 * Closes every descriptor of XS, removes the temporary file of a --get
 * that did not complete, frees the paths and the array, and leaves XS
 * empty ({NULL, 0}).
 */
void run_xfers_free(struct xfers *xs);

/*
 * Opens every host file of PUTS (its descriptor and permission bits into
 * the entry) and, for every entry of GETS, its host directory (O_PATH)
 * and a temporary file in it (mode 0600, a random name), before anything
 * runs, so that a typo costs no job and the broker holds what it needs
 * before it confines itself. The descriptors stay in the entries
 * (run_xfers_free closes them). Returns false at the first failure, after
 * "stockade: HOST: error" on stderr.
 */
bool run_xfers_open(struct xfers *puts, struct xfers *gets);

/*
 * Puts every file of PUTS (opened by run_xfers_open) into the workspace
 * of CTX at its sandbox path, overwriting, its missing parents made;
 * each host file is closed once put. Returns false at the first failure,
 * after fs_complain (commands.h); the entry holds why.
 */
bool run_puts(struct xfers *puts, struct fs_ctx *ctx);

/*
 * Collects the --get X from the workspace of CTX: the file goes to X's
 * temporary file (run_xfers_open), made 0666 less the umask, and is
 * renamed over the host file once complete, so that a failed get leaves
 * it as it was. Returns false after complaining on stderr; X then holds
 * why (why, host_errno).
 */
bool run_get(struct xfer *x, struct fs_ctx *ctx);

/*
 * Adds "files": {"put": [...], "get": [...]} to the result object O: the
 * outcome of each transfer attempted, in order (README.md, "--put and
 * --get"). Returns false when out of memory (O may then hold part).
 */
bool run_add_files(json_t *o, const struct xfers *puts,
    const struct xfers *gets);

/*
 * Runs the job JR (jobrun_exec with SUP and CTX, interruptible) and, in
 * the stream format FMT, passes its output through to our stdout and
 * stderr as it comes: on a terminal its control sequences escaped, the
 * first half of each stream's cap live and what is kept of the rest at
 * the end; with the status line of mode PM on stderr while it runs
 * (progress.h). Returns once the job has ended and all is written;
 * JR holds the result.
 */
void run_exec_passing(struct jobrun *jr, struct supervisor *sup,
    struct fs_ctx *ctx, enum run_format fmt, enum progress_mode pm);

/*
 * Reports the ended job JR in the format FMT: its result as one JSON
 * line or as text on stdout (with "files" when there were PUTS or GETS),
 * or, streamed, the summary line on stderr. Returns the job's exit
 * status (job_exit_status), or EXIT_SANDBOX when the result could not
 * be built or written (said on stderr). stdout is not flushed.
 */
int run_report(struct jobrun *jr, enum run_format fmt, const struct xfers *puts,
    const struct xfers *gets);

#endif
