/*
 * stage.h: a job's writes as a layer of their own (issue 26).
 *
 * Jail init mounts /work as an overlay (Documentation/filesystems/
 * overlayfs.rst): the workspace, id-mapped when the launcher is root, is
 * the lower layer; a tmpfs sized by the job's allowance (PROTO_RUN
 * workspace_allow bytes, stage_files) holds the upper layer in "upper/" and
 * overlayfs's work directory in "work/", mounted with userxattr. The
 * launcher sends the broker a descriptor of that tmpfs's root (PROTO_STAGE)
 * before the job's result; the tmpfs outlives the jail while the broker
 * holds it. What the job created, modified and deleted is then read from
 * "upper/" alone, in time proportional to what it changed:
 *  - a regular file, directory or symlink in upper/ is the job's version;
 *  - a character device 0:0 is a whiteout: the lower entry is deleted
 *    (overlayfs.rst, "whiteouts and opaque directories"); the kernel links
 *    one whiteout inode many times, so nlink > 1 is normal for it;
 *  - a directory with the xattr user.overlay.opaque = "y" hides the lower
 *    directory of that name: everything below it in the lower layer is
 *    deleted, and what is in the upper directory is created;
 *  - any other node (FIFO, socket, other device), a name the file API
 *    would refuse (wspath.h), a path over the quota's bounds, and a regular
 *    file with more than one link in upper/ is a refusal (struct
 *    stage_bad), never applied.
 * With userxattr, overlayfs runs with redirect_dir=nofollow and without
 * metacopy: a directory of the lower layer renamed by the job is EXDEV
 * (the program copies it, as mv(1) does), and a file changed in any way
 * (even its mode) is copied up whole.
 */
#ifndef STOCKADE_STAGE_H
#define STOCKADE_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsapi.h"
#include "fserr.h"
#include "policy.h"
#include "snapshot.h"

/* The directories of the stage tmpfs (made by jail init: proto.h,
 * PROTO_STAGE_UPPER and PROTO_STAGE_WORK, the same strings). */
#define STAGE_UPPER "upper"
#define STAGE_WORK "work"

/* The stage's token (proto.h, PROTO_STAGE_TOKEN_BYTES: the same). */
#define STAGE_TOKEN_BYTES 32u

/*
 * A stage as the broker holds it: the descriptor of the stage tmpfs's
 * root (borrowed by whoever is given the struct) and the token that came
 * with it (PROTO_STAGE). Every read-open of an entry of the stage goes
 * through stage_open_at with it.
 */
struct stage_ref {
	int fd;
	uint8_t token[STAGE_TOKEN_BYTES];
};

/*
 * The process-wide opener of stage entries (issue 26): FN(ARG, ROOT,
 * TOKEN, DIR, NAME, DIRECTORY) opens the entry NAME (one component) of
 * the directory DIR (a descriptor in the stage ROOT, O_PATH or O_RDONLY;
 * may be ROOT itself) for reading, a directory when DIRECTORY else a
 * regular file, never through a link nor off ROOT's mount, and returns
 * the new descriptor (O_RDONLY, close-on-exec, owned by the caller) or a
 * negative errno. A confined broker cannot open the stage itself (its
 * Landlock rules cover only paths that existed when it confined itself):
 * its fronts install the spawner's (broker/jobs/spawner.h,
 * spawner_stage_open) once it runs. FN NULL (the default) opens directly
 * (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV), as an
 * unconfined broker and the unit tests do. Not thread-safe: set it before
 * any stage is read.
 */
typedef int (*stage_opener_fn)(void *arg, int root,
    const uint8_t token[STAGE_TOKEN_BYTES], int dir, const char *name,
    bool directory);
void stage_set_opener(stage_opener_fn fn, void *arg);

/* Whether FN (with ARG) is the opener stage_set_opener set. */
bool stage_opener_is(stage_opener_fn fn, const void *arg);

/*
 * Opens NAME (one component) of DIR, a directory of the stage REF
 * (borrowed), for reading through the opener (stage_set_opener): a
 * directory (O_RDONLY | O_DIRECTORY) when DIRECTORY, else a regular file
 * (O_RDONLY | O_NONBLOCK | O_NOCTTY). Never through a symlink, never off
 * the stage's mount, never a FIFO, socket or device. What it opened is
 * checked again here (fstat: the type asked for). Returns a descriptor
 * (close-on-exec, the caller's) or a negative errno: -EINVAL for a NAME
 * that is not one component, -ENOTDIR or -EISDIR/-ENXIO... for another
 * type (the opener's, or -EPROTO when the opener gave a wrong one),
 * -ELOOP for a symlink, the spawner's refusal (-EPERM...), openat2(2)'s.
 */
int stage_open_at(const struct stage_ref *ref, int dir, const char *name,
    bool directory);

/* The directory at the workspace's root where a commit keeps what it
 * needs to undo itself (stage_commit); it exists only while a commit runs
 * or after a broker died in one. A job's change to it is always refused. */
#define STAGE_JOURNAL ".stockade-commit"

/* One entry of the upper layer that cannot be applied. */
struct stage_bad {
	char *path; /* workspace-relative, raw bytes, owned */
	enum fs_error why; /* not_regular_file, invalid_path,
			    * hardlinked_file, ... */
};

struct stage_scan {
	/* The lower layer's entries of every path the job touched (for a
	 * deleted or replaced directory, its whole lower subtree), and the
	 * merged result at those paths: snapshot_diff(&before, &after) is
	 * the change set, exact (created, modified, deleted; SHA-256 of
	 * regular files as snapshot.h bounds it). A file copied up with
	 * nothing changed (same type, size, mode and hash) is in neither. */
	struct snapshot before, after;
	struct stage_bad *bad; /* sorted by path */
	size_t nbad;
	uint64_t upper_bytes; /* the stage tmpfs's used bytes (statfs) */
	uint64_t upper_files; /* its used inodes (statfs) */
	uint64_t stage_bytes; /* its size, bytes (statfs) */
	uint64_t stage_files; /* its inodes (statfs) */
};

/*
 * Reads the stage STAGE (the stage tmpfs's root and its token, borrowed;
 * every entry read through stage_open_at) against the workspace ROOT
 * (borrowed) under Q into OUT (the
 * caller zeroes it first). INTERRUPTED (may be NULL) stops the scan
 * (-EINTR). Every lookup in both trees is by descriptor, never through a
 * symlink (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, fsapi.h), so a
 * stage a job filled with links, FIFOs or odd names reads as data.
 * A refused entry is in BAD only: nothing of it, nor of what is below
 * it, is in BEFORE or AFTER. Refused as invalid_path: a path wspath
 * refuses under Q (max_path, max_depth), and STAGE_JOURNAL at the top. A
 * directory merged with the lower one (not opaque) is in both only when
 * its mode changed. Bounds: BEFORE, AFTER and BAD hold at most
 * quota.max_files + 1 entries each, SNAPSHOT_MAX_PATH_BYTES of paths
 * between them; hashing as snapshot.h (one budget of
 * quota.workspace_bytes for both trees). Past a bound, or with a lower
 * subtree deeper than quota.max_depth or a directory the walk may not
 * enter, both snapshots are truncated (and so is their diff, which
 * stage_commit refuses).
 * Returns 0, or a negative errno (-ENOMEM, -EINTR, a failure to read the
 * stage's root or a lower entry) with OUT empty.
 */
int stage_scan(const struct stage_ref *stage, int root, const struct fs_quota *q,
    int (*interrupted)(void), struct stage_scan *out);

/* Frees everything OUT owns and zeroes it; accepts a zeroed OUT. */
void stage_scan_free(struct stage_scan *out);

/* What stage_commit does with one change. */
enum stage_pick {
	STAGE_APPLY = 0, /* applied to the workspace */
	STAGE_HOLD, /* left in the stage (quarantine, or not chosen) */
};

struct stage_commit_report {
	size_t applied; /* changes applied */
	uint64_t bytes; /* bytes of file content written */
	enum fs_error why; /* FS_OK, or the failure's name */
	char path[4096]; /* the path that failed, or "" */
	bool conflict; /* the workspace changed at PATH since the scan
			* (its before entry no longer matches): nothing
			* was applied */
	bool undone; /* a failure after something was applied: the
		      * journal put the workspace back as it was */
};

/*
 * Applies to CTX's workspace the changes CH (snapshot_diff of SCAN's
 * before and after; both borrowed) whose PICK[i] is STAGE_APPLY (PICK
 * parallel to CH->c; NULL: every change), taking content from STAGE (the
 * stage tmpfs's root and token, borrowed: each file opened with
 * stage_open_at and checked to be the one scanned, same device, inode
 * and size). All or nothing: first every applied
 * change's path is checked against SCAN->before (a path the workspace no
 * longer has as it was, because a client or another commit changed it,
 * is a conflict and nothing is done); then, with a journal in
 * STAGE_JOURNAL that holds the old version of every file replaced or
 * deleted (a hard link, or a copy where linking is refused) and the list
 * of what was created, deletions run deepest first, then directories,
 * files (fsapi_put: an O_TMPFILE linked, or a random name renamed over
 * the old, so each file is old or new, never torn), symlinks and modes,
 * each through the file API's rules (RESOLVE_BENEATH, names, quotas of
 * CTX, whose usage figures stay current). A regular file keeps the job's
 * mtime. On any failure (a full disk: quota_exceeded) what was applied is
 * undone from the journal and the stage is untouched; on success the
 * journal is removed. Returns 0, or a negative errno with REP set.
 *
 * Details (stage_commit.c, stage_internal.h): CH must borrow from SCAN,
 * which is not read otherwise. A picked deletion of a directory takes
 * all that is below it. A deletion is a rename into the journal, not
 * fsapi_remove (the old entry stays whole until the end); directories
 * are made 0700 and given the job's mode (masked by quota.mode_mask) at
 * the end, the deepest first, after the mode changes of existing ones.
 * A conflict is -ESTALE with REP->why exists (the entry changed or
 * appeared) or not_found (it vanished); a creation whose parent became a
 * symlink or a file is no conflict: its apply is refused
 * (symlink_refused, not_a_directory) and undone. A truncated CH is
 * -E2BIG (quota_exceeded) and a journal already there -EEXIST (exists,
 * PATH STAGE_JOURNAL: stage_recover first), nothing done. When the undo
 * itself fails, REP->undone is false and the journal stays for
 * stage_recover.
 */
int stage_commit(struct fs_ctx *ctx, const struct stage_ref *stage,
    const struct stage_scan *scan,
    const struct changes *ch, const enum stage_pick *pick,
    struct stage_commit_report *rep);

/*
 * At a session's start: when the workspace ROOT (borrowed) holds a
 * STAGE_JOURNAL left by a broker that died in stage_commit, undoes that
 * commit from it (every replaced or deleted file put back, every created
 * one removed) or, when the journal says the commit had finished, removes
 * it. MSG (MSGLEN bytes) gets one sentence of what was done, or "" when
 * there was no journal. Returns 0 or a negative errno (the session must
 * refuse to start, naming STAGE_JOURNAL): a manifest torn or unreadable
 * leaves the workspace as found; an undo step that fails leaves the
 * journal, and the steps before it done (each can be done again, so a
 * later call goes on from there).
 */
int stage_recover(int root, char *msg, size_t msglen);

#endif
