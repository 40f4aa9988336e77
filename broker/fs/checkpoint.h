/*
 * checkpoint.h: named checkpoints of a session's workspace (issue 26,
 * point 5) as an undo log.
 *
 * From the moment a checkpoint exists, every change made through a
 * struct fs_ctx the store is attached to (ckpt_attach: the context's
 * before_change hook, fsapi.h) first saves the old state of the path it
 * is about to change, once per path per interval (the time from one
 * checkpoint to the next): a path already saved since the newest
 * checkpoint, or lying below a saved directory or a saved absence, is not
 * saved again, since only the oldest version matters to a restore. The
 * old state is one of:
 *  - absent (when a parent is missing too, the highest missing ancestor
 *    is saved as absent: a restore removes it with all below);
 *  - a regular file: its content copied into the store (FICLONE where
 *    the file systems allow, else copy_file_range or read/write), its
 *    permission bits and mtime kept;
 *  - a directory: its permission bits and its whole subtree (files,
 *    directories and symlinks as above), whatever the change (a
 *    removal or a rename moves everything below it);
 *  - a symlink: its target;
 *  - anything else (a FIFO, socket or device a job made, or a file with
 *    more than one link when the policy's allow_hardlinks is false: its
 *    content may be a host file's, docs/protocol.md): "skipped", left
 *    absent by a restore and counted in its report; the file API can
 *    make none of them.
 * So a checkpoint costs what changed since it, never the workspace.
 *
 * The store is a private directory of the session outside the workspace
 * ("stockade-ckpt-XXXXXX", 6 random letters, made with mkdirat in the
 * descriptor of $TMPDIR or /tmp, mode 0700), every access to it by
 * descriptor, and removed with all it holds at the end (unlinkat in the
 * same descriptor of $TMPDIR). Its saved bytes (regular files'
 * st_size and symlink targets) are bounded, and so are its entries. A
 * change whose old state would not fit fails with quota_exceeded and
 * touches nothing: a checkpoint never lies. A restore that fails half
 * way (a full disk) leaves the checkpoint restorable (a second restore
 * redoes it) but the newer checkpoints broken: a restore to a broken one
 * is refused (CKPT_BROKEN) rather than done in part.
 *
 * Not seen by the hook: what changes the workspace without a struct
 * fs_ctx (a job writing the workspace itself, without a staged layer):
 * the caller then marks every checkpoint broken (ckpt_mark_all_broken).
 *
 * Single-threaded: one session's requests, one at a time.
 */
#ifndef STOCKADE_CHECKPOINT_H
#define STOCKADE_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fsapi.h"
#include "fserr.h"

/* A checkpoint's name: 1 to CKPT_NAME_MAX bytes of [A-Za-z0-9._-]. */
#define CKPT_NAME_MAX 64
/* The policy's ceiling of [files] max_checkpoints. */
#define CKPT_MAX 256

/* The named errors of the checkpoint methods (docs/protocol.md). */
enum ckpt_error {
	CKPT_OK = 0,
	CKPT_INVALID_NAME, /* invalid_checkpoint_name */
	CKPT_EXISTS, /* checkpoint_exists */
	CKPT_NO_SUCH, /* no_such_checkpoint */
	CKPT_TOO_MANY, /* too_many_checkpoints */
	CKPT_OFF, /* checkpoints_off: max_checkpoints = 0 */
	CKPT_BROKEN, /* checkpoint_broken */
	CKPT_FILE, /* a file error, named by an enum fs_error */
};

/* The stable name of ERR ("checkpoint_exists"; "ok" for CKPT_OK,
 * "io_error" for CKPT_FILE). Static storage. */
const char *ckpt_error_name(enum ckpt_error err);

/* Whether NAME (LEN bytes, need not be NUL-terminated) is a valid
 * checkpoint name: 1..CKPT_NAME_MAX bytes of [A-Za-z0-9._-]. Pure. */
bool ckpt_name_valid(const char *name, size_t len);

struct ckpt_store;

/* The bounds of a store. */
struct ckpt_limits {
	unsigned max; /* checkpoints at once, 0..CKPT_MAX (0: off) */
	uint64_t max_bytes; /* saved bytes, all intervals (the workspace
			       * quota, workspace_bytes) */
	uint64_t max_entries; /* saved entries, all intervals (the
			       * workspace's max_files) */
	bool allow_hardlinks; /* save files with more than one link */
};

/* The store's directory. */
struct ckpt_dir {
	int fd; /* the directory, O_RDONLY | O_DIRECTORY; -1: none */
	int parent_fd; /* where it was made ($TMPDIR), O_DIRECTORY */
	char name[32]; /* its name there, "stockade-ckpt-XXXXXX" */
};

/* Sets D to "none" (both descriptors -1). */
void ckpt_dir_clear(struct ckpt_dir *d);

/*
 * Makes a store directory into D: "stockade-ckpt-XXXXXX" (random
 * letters, getrandom) by mkdirat, mode 0700, in TMPDIR (NULL: $TMPDIR
 * when absolute, else /tmp), opened once (O_DIRECTORY | O_NOFOLLOW) as
 * its parent is. Returns 0 with D's descriptors the caller's (freed with
 * ckpt_dir_remove or by ckpt_store_new), or a negative errno with D
 * cleared. A front that confines itself (confine.h) makes it first and
 * grants D->fd every right and D->parent_fd LANDLOCK_ACCESS_FS_REMOVE_DIR
 * (as for a temporary workspace, workspace.h), then hands it to the
 * session (struct rpc_session ckpt_dir).
 */
int ckpt_dir_make(const char *tmpdir, struct ckpt_dir *d);

/* Removes everything in D's directory, then the directory itself
 * (unlinkat in D->parent_fd), closes both descriptors and clears D.
 * Accepts a cleared D. */
void ckpt_dir_remove(struct ckpt_dir *d);

/*
 * A new store under LIM (copied) in the directory D (an empty one made
 * by ckpt_dir_make; ownership passes to the store, and D is cleared,
 * even on failure), or, when D is NULL or cleared, in one made here with
 * ckpt_dir_make(TMPDIR). *OUT gets the store (the caller frees it with
 * ckpt_store_free). Returns 0, -ENOMEM (D's directory then removed), or
 * ckpt_dir_make's errno.
 */
int ckpt_store_new(const struct ckpt_limits *lim, struct ckpt_dir *d,
    const char *tmpdir, struct ckpt_store **out);

/* Frees ST: every checkpoint, and its directory with all it holds
 * (ckpt_dir_remove). Accepts NULL. */
void ckpt_store_free(struct ckpt_store *st);

/* Sets CTX's before_change hook to ST (ckpt_before_change): from now
 * on, every change through CTX saves old states while a checkpoint
 * exists. ST must outlive the hook: clear it (ctx->before_change = NULL)
 * before ckpt_store_free. */
void ckpt_attach(struct ckpt_store *st, struct fs_ctx *ctx);

/*
 * The hook (fsapi.h, struct fs_ctx before_change): saves the old state
 * of PATH (workspace-relative, checked by the caller) beneath ROOT
 * (borrowed) into the newest interval of ARG (a struct ckpt_store), unless
 * there is no checkpoint or PATH is saved already. A path the operation
 * itself will refuse (a symlink or a file as a parent) saves nothing.
 * Returns 0, or a negative errno and saves nothing: -EDQUOT when the
 * store's bounds would be passed, -ENOMEM, -EIO or another errno when
 * the store could not be written or the old state not read (the
 * operation then fails: quota_exceeded or io_error).
 */
int ckpt_before_change(void *arg, int root, const char *path);

/*
 * Makes the checkpoint NAME (LEN bytes): the newest, its interval empty.
 * Returns 0, or -1 with *ERR set: CKPT_INVALID_NAME, CKPT_EXISTS,
 * CKPT_OFF (max 0), CKPT_TOO_MANY (max reached: drop one first), or
 * CKPT_FILE for -ENOMEM (returned as such).
 */
int ckpt_create(struct ckpt_store *st, const char *name, size_t len,
    enum ckpt_error *err);

/* What a restore did. */
struct ckpt_restore_report {
	uint64_t paths; /* paths put back (files, directories, symlinks)
			 * or removed */
	uint64_t bytes; /* bytes of file content written */
	uint64_t skipped; /* saved as "skipped" (ckpt header): left out */
	enum ckpt_error err; /* CKPT_OK or the failure */
	enum fs_error why; /* with CKPT_FILE: the file error */
	char path[4096]; /* with CKPT_FILE: the path that failed, or "" */
};

/*
 * Puts CTX's workspace back as it was when NAME (LEN bytes) was made:
 * the intervals since NAME are merged, newest into older (as
 * ckpt_drop), then every saved path is removed (recursively) and its
 * old state made again through the file API (fsapi_put, fsapi_mkdir,
 * fsapi_symlink: RESOLVE_BENEATH, the names' rules), shallowest first:
 * files with their mode and mtime, directories with their mode,
 * symlinks with their target. Neither the hook nor the quotas apply
 * while it runs (the state was the workspace's once; the store bounds
 * it). The usage figures stay current, but a recursive removal makes
 * them walked again at the next write (fsops.c): one walk, which stats
 * but reads no file. On success the checkpoints newer than NAME are
 * dropped and NAME stays, its interval empty (restorable again).
 * Returns 0, or -1 with REP->err set (CKPT_INVALID_NAME, CKPT_NO_SUCH,
 * CKPT_BROKEN: nothing done; CKPT_FILE with REP->why and REP->path: the
 * workspace is partly restored, NAME restorable again, the checkpoints
 * newer than it broken).
 */
int ckpt_restore(struct ckpt_store *st, struct fs_ctx *ctx, const char *name,
    size_t len, struct ckpt_restore_report *rep);

/*
 * Drops NAME (LEN bytes): its interval is merged into the previous
 * checkpoint's (a path that one saved already keeps the older state), or
 * freed when NAME is the oldest. Returns 0, or -1 with *ERR set
 * (CKPT_INVALID_NAME, CKPT_NO_SUCH).
 */
int ckpt_drop(struct ckpt_store *st, const char *name, size_t len,
    enum ckpt_error *err);

/* Marks every checkpoint of ST broken: the workspace changed in a way
 * no hook saw. Accepts NULL. */
void ckpt_mark_all_broken(struct ckpt_store *st);

/* One checkpoint as the list shows it. */
struct ckpt_info {
	const char *name; /* borrowed from the store until it changes */
	time_t created; /* seconds since the epoch */
	uint64_t paths; /* entries saved in its interval */
	uint64_t bytes; /* bytes saved in its interval */
	bool broken;
};

/* The number of checkpoints of ST, oldest first (0 for NULL). */
size_t ckpt_count(const struct ckpt_store *st);

/* The Ith checkpoint (I < ckpt_count) into *OUT. */
void ckpt_info(const struct ckpt_store *st, size_t i, struct ckpt_info *out);

/* The store's bound on checkpoints (its limits' max). */
unsigned ckpt_max(const struct ckpt_store *st);

/* The entries now in ST's directory, counted by reading it (for tests:
 * what a checkpoint costs). Returns the count or a negative errno. */
long ckpt_store_files(const struct ckpt_store *st);

#endif
