/*
 * check_fs.h: what the file_api checks of `stockade check` share
 * (check_fs.c: get; check_fs_put.c: put and the quotas; check_fs_tree.c:
 * names, ls, stat, rm, mkdir, mv, path rules and run --put/--get).
 *
 * A check sets up a scene: a fresh --workspace directory and, beside it
 * (never inside), a canary file and a directory holding "secret", a copy
 * of it. It plants in the workspace what a hostile job would, runs the
 * real file commands and compares their exit status and named error
 * (broker/fs/fserr.h) with what a sound stockade answers. The helpers live
 * in check_fs.c unless said otherwise.
 */
#ifndef STOCKADE_CHECK_FS_H
#define STOCKADE_CHECK_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "check.h"

#define FSC_DEADLINE_MS 3000 /* one file command or one small job */
#define FSC_MIB (1024 * 1024)

/* A NULL-terminated argument list for fsc_cmd and fsc_expect. */
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* What the files outside the workspace hold; it must never be read. */
extern const char fsc_canary_text[];

/* A policy with small quotas: max_file_mb = 1, max_files = 3. */
extern const char fsc_small_policy[];

/* The scene of one check (see above). */
struct scene {
	struct check_ctx *c;
	char ws[4096]; /* the --workspace directory */
	char out[4096]; /* the directory outside */
	char canary[4096]; /* the canary file outside */
	char policy[4096]; /* a policy file, or "" for the default */
};

/* PATH (a file under the check's tmpdir) holds exactly the canary. */
bool fsc_holds_canary(const char *path);

/* Sets up S for C with the policy text POLICY (NULL: the default).
 * Returns 0, or fails R and returns -1. */
int fsc_scene_init(struct check_ctx *c, struct scene *s, const char *policy,
    struct check_result *r);

/* The path of REL in S's workspace, in BUF. Returns BUF. */
char *fsc_in_ws(const struct scene *s, const char *rel, char *buf, size_t len);

/* Gives PATH (not followed) to the job's ids when the check is root.
 * Returns 0 or a negative errno. */
int fsc_own(const struct scene *s, const char *path);

/* What a hostile job plants in S's workspace at REL. */
enum fsc_kind {
	FSC_FILE, /* ARG: LEN bytes of data */
	FSC_DIR,
	FSC_LINK, /* a symlink, ARG its target */
	FSC_FIFO,
	FSC_SOCKET, /* a bound unix socket */
	FSC_HARDLINK, /* a hard link to the file ARG */
};

/* Plants KIND at REL in S's workspace (as root given to the job's ids).
 * Returns true, or fails R saying what could not be planted. */
bool fsc_plant(const struct scene *s, struct check_result *r,
    enum fsc_kind kind, const char *rel, const char *arg, size_t len);

/* Fails R for a planting step that went wrong (E < 0) saying WHAT.
 * Returns E < 0. */
bool fsc_plant_failed(struct check_result *r, int e, const char *what);

/* Copies IN into OUT (LEN bytes, truncated) with control bytes as \xHH,
 * so that a raw name cannot break an observation's line. */
void fsc_shown(const char *in, char *out, size_t len);

/* Runs `STOCKADE CMD --workspace WS [--policy P] ARGS...` within
 * FSC_DEADLINE_MS into P and writes what was run (escaped, scratch paths
 * as TMP/...) into WHAT. Returns 0 or a negative errno. */
int fsc_cmd(const struct scene *s, struct check_proc *p, const char *cmd,
    const char *const *args, char *what, size_t wlen);

/* How P ended, for an observation ("exit 1, symlink_refused, 0 bytes on
 * stdout", "hung: ..."), in BUF. Returns BUF. */
const char *fsc_outcome(const struct check_proc *p, char *buf, size_t len);

/* The first line of P's stderr that is not a warning, escaped, in BUF.
 * Returns BUF. */
const char *fsc_error_line(const struct check_proc *p, char *buf, size_t len);

/* The file error named on P's stderr ("symlink_refused"), or "". */
const char *fsc_named_error(const struct check_proc *p);

/*
 * Runs the file command CMD ARGS and expects the named error WANT (exit
 * status 1) or, WANT NULL, success (exit status 0), within the deadline
 * and with nothing of the canary on stdout; fails R otherwise. KEEP (may
 * be NULL) keeps what a success gave (check_proc_free it when the call
 * returned true). Returns true when it was as expected.
 */
bool fsc_expect(const struct scene *s, struct check_result *r, const char *want,
    const char *cmd, const char *const *args, struct check_proc *keep);

/* fsc_expect for a refusal WANT. */
static inline bool
fsc_expect_refused(const struct scene *s, struct check_result *r,
    const char *want, const char *cmd, const char *const *args)
{
	return fsc_expect(s, r, want, cmd, args, NULL);
}

/* fsc_expect for a success. */
static inline bool
fsc_expect_ok(const struct scene *s, struct check_result *r, const char *cmd,
    const char *const *args, struct check_proc *keep)
{
	return fsc_expect(s, r, NULL, cmd, args, keep);
}

/* The canary and OUT/secret still hold the canary; else fails R saying
 * which was changed or removed. Returns true when both are intact. */
bool fsc_outside_intact(const struct scene *s, struct check_result *r);

/* Whether NAME exists in the directory outside (lstat). */
bool fsc_outside_has(const struct scene *s, const char *name);

/* In check_fs_put.c: makes a host file (the invoking user's) of LEN
 * bytes of FILL at a fresh PATH, returning true, or fails R; the size
 * and type of REL in S's workspace (lstat; -1 and type 0 when missing). */
bool fsc_host_file(struct check_ctx *c, struct check_result *r, char *path,
    size_t plen, size_t len, int fill);
long long fsc_ws_size(const struct scene *s, const char *rel, mode_t *type);

/* In check_fs_put.c: runs the job ARGV in S's workspace with RUN_ARGS
 * (no probe, the default policy, FSC_DEADLINE_MS) into J, returning 0, or
 * fails R and returns -1; and how J ended, for an observation ("hung:
 * ..." or "stockade exit N, status S: <first error line>") in BUF. */
int fsc_run_job(const struct scene *s, struct check_result *r,
    const char *const *argv, const char *const *run_args, struct check_job *j);
const char *fsc_job_line(const struct check_job *j, char *buf, size_t len);

#endif
