/*
 * cmd_fs.h: the parts of `stockade put`, `get`, `rm`, `mkdir` and `mv`
 * (cmd_fs.c, which parses every one of the file commands, confines the
 * process and runs them) kept in files of their own: the transfers, put
 * and get (cmd_fs_xfer.c), and the changes to the workspace's tree, rm,
 * mkdir and mv (cmd_fs_edit.c).
 *
 * Each command's function takes ARGS (its parsed command line), CTX (the
 * workspace, under the policy's [files] quotas: the process is confined
 * by then) and H (the host side its open function opened, before
 * confinement), and returns its exit status: 0, EXIT_FILE (1) for a named
 * file error or a host file that cannot be read or written (said on
 * stderr, fs_complain for a workspace path), or EXIT_SANDBOX (70).
 */
#ifndef STOCKADE_CMD_FS_H
#define STOCKADE_CMD_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsapi.h"
#include "progress.h"

#define EXIT_FILE 1 /* a named file error (README.md, "Files in and out") */

/* A file command's command line (cmd_fs.c's parse). */
struct fs_args {
	const char *policy, *workspace;
	const char *a, *b; /* the operands; B is NULL for one */
	bool overwrite, recursive, json, parents, no_progress;
	size_t limit; /* ls --limit; 0: the quota's max_files */
	mode_t mode; /* mkdir --mode; default 0755 */
	uint64_t size; /* put --size, bytes; UINT64_MAX: not given */
	enum progress_mode progress; /* put, get: the meter (meter_mode) */
};

/* The host side of a command, opened before confinement. */
struct fs_host {
	int in; /* put: the host file or standard input */
	int out; /* get: the temporary file, or -1 for stdout */
	int dirfd; /* get: the host file's directory (O_PATH) */
	char *tmp; /* get: the temporary file's path */
};

/* put: opens the host file ARGS->a into H->in, or takes standard input
 * ("-"), before confinement. Returns 0 or EXIT_FILE (said on stderr). */
int fscli_open_put(const struct fs_args *args, struct fs_host *h);

/*
 * put: copies H->in to the workspace file ARGS->b (its missing parents
 * made; an existing one replaced only with --overwrite), with the mode of
 * the host file (0644 from standard input); with --size, exactly that
 * many bytes or nothing. The meter of ARGS->progress runs on stderr.
 */
int fscli_put(const struct fs_args *args, struct fs_ctx *ctx,
    struct fs_host *h);

/*
 * get: for a host file ARGS->b (not "-"), makes its temporary file beside
 * it (H->tmp, H->out; mkostemp) and opens its directory (H->dirfd, for
 * the Landlock rule of the rename), before confinement. Returns 0,
 * EXIT_FILE or EXIT_SANDBOX (said on stderr); H->tmp is NULL on failure.
 */
int fscli_open_get(const struct fs_args *args, struct fs_host *h);

/*
 * get: copies the workspace file ARGS->a to standard output ("-"), or to
 * H's temporary file, renamed over the host file once complete (mode
 * 0666 less the umask), removed on failure; H->out is closed and H->tmp
 * freed (NULL) either way.
 */
int fscli_get(const struct fs_args *args, struct fs_ctx *ctx,
    struct fs_host *h);

/* rm: removes ARGS->a (a directory's contents too with --recursive). */
int fscli_rm(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h);

/* mkdir: makes the directory ARGS->a with ARGS->mode (its missing
 * parents too with --parents). */
int fscli_mkdir(const struct fs_args *args, struct fs_ctx *ctx,
    struct fs_host *h);

/* mv: renames ARGS->a to ARGS->b (replacing it only with --overwrite);
 * a failure names the operand it is about. */
int fscli_mv(const struct fs_args *args, struct fs_ctx *ctx, struct fs_host *h);

#endif
