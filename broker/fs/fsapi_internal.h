/*
 * fsapi_internal.h: what fsapi.c (resolution, reading, writing) and
 * fsapi_copy.c (the data copy) share with fsops.c and fsops_mkdir.c (the
 * operations under a session's quotas). Not an interface for other
 * files: they use fsapi.h.
 */
#ifndef STOCKADE_FSAPI_INTERNAL_H
#define STOCKADE_FSAPI_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsapi.h"
#include "wspath.h"

/* Sets *WHY to ERR and returns E (a negative errno): one exit per failure. */
static inline int
fsapi_fail(enum fs_error *why, enum fs_error err, int e)
{
	*why = err;
	return e;
}

/*
 * Tells CTX's before_change hook (fsapi.h) that PATH (checked,
 * NUL-terminated) is about to change. Returns 0 (no hook, or the hook
 * agreed), or its negative errno with *WHY set: quota_exceeded for
 * -EDQUOT and -ENOSPC, else io_error. The one place the hook is called.
 */
static inline int
fsapi_before_change(struct fs_ctx *ctx, const char *path, enum fs_error *why)
{
	int r;

	if (ctx->before_change == NULL ||
	    (r = ctx->before_change(ctx->change_arg, ctx->root, path)) >= 0)
		return 0;
	return fsapi_fail(why,
	    r == -EDQUOT || r == -ENOSPC ? FS_QUOTA_EXCEEDED : FS_IO_ERROR, r);
}

/*
 * openat2(DIRFD, PATH, FLAGS | O_CLOEXEC, MODE) with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, retrying
 * EINTR and EAGAIN, without the string check (the caller has made it).
 * Returns a descriptor the caller owns or a negative errno (openat2(2)).
 */
int fsapi_openat2(int dirfd, const char *path, int flags, mode_t mode);

/*
 * Checks PATH (NUL-terminated) with wspath_check under LIM (NULL: the
 * defaults) and opens its parent directory beneath ROOT, once, O_PATH |
 * O_DIRECTORY. *NAME gets the last component (it points into PATH).
 * Returns the parent's descriptor (the caller owns it), or a negative
 * errno with *WHY set: invalid_path, symlink_refused, escapes_workspace,
 * not_found, not_a_directory, io_error.
 */
int fsapi_open_parent(int root, const char *path,
    const struct wspath_limits *lim, const char **name, enum fs_error *why);

/*
 * The checks before an operation under CTX's quotas that adds PATH
 * (NUL-terminated, borrowed) to the workspace: PATH valid under LIM, the
 * usage figures made valid (fsapi_usage), and the workspace not over its
 * entry quota: one over it takes nothing more, not even an overwrite, as
 * its true size is unknown. Returns 0 or a negative errno with *WHY set:
 * invalid_path, io_error, quota_exceeded. In fsops.c.
 */
int fsapi_may_add(struct fs_ctx *ctx, const char *path,
    const struct wspath_limits *lim, enum fs_error *why);

/* A read: fsapi_read's rules, with the knobs fsapi_get needs. */
struct fsapi_rreq {
	const struct wspath_limits *lim; /* NULL: the wspath defaults */
	bool allow_hardlinks;
	uint64_t offset; /* bytes into the file (past its end: nothing) */
	uint64_t length; /* at most this many bytes; UINT64_MAX: all */
	uint64_t max_bytes; /* more to copy than this is too_large */
};

/*
 * Copies PATH beneath ROOT under R to OUT_FD, *COPIED bytes (set to 0
 * first). What is to be copied, min(LENGTH, st_size - OFFSET) on the
 * opened descriptor, over MAX_BYTES is too_large before any byte is
 * read; at most min(LENGTH, MAX_BYTES) bytes are copied even if the file
 * grows. Returns 0 or a negative errno with *WHY set, as fsapi_read.
 */
int fsapi_read_req(int root, const char *path, const struct fsapi_rreq *r,
    int out_fd, uint64_t *copied, enum fs_error *why);

/* A write: fsapi_write's rules, with the quotas fsapi_put needs. */
struct fsapi_wreq {
	const struct wspath_limits *lim; /* NULL: the wspath defaults */
	uint64_t file_bytes; /* more than this from the input: too_large */
	uint64_t space_left; /* bytes the workspace may still grow by;
			       * UINT64_MAX: unbounded. The file may have
			       * this plus the size of the regular file it
			       * replaces; more is quota_exceeded. Of the two
			       * limits, the lower one decides the error. */
	bool entry_room; /* false: a new name is quota_exceeded (an
			       * overwrite of an existing entry is not) */
	mode_t mode; /* permission bits, masked with 0777 again */
	bool overwrite;
	/* A batch (fs.unpack) names the parent itself: with NAME not NULL,
	 * PATH is not resolved; the file is NAME (one component) in DIRFD
	 * (borrowed, resolved beneath ROOT by the caller with
	 * fsapi_open_parent or fsapi_openat2). */
	const char *name;
	int dirfd;
	/* NULL: the data is IN_FD's (fsapi_copy_fd). Else FILL puts it into OUT,
	 * the new file at offset 0: at most LIMIT bytes counted in *COPIED
	 * (a count above LIMIT - 1 may be claimed without writing it, to
	 * name too_large or quota_exceeded at once); returns 0 or -errno,
	 * *OUT_SIDE true when the failure was writing OUT. */
	int (*fill)(void *arg, int out, uint64_t limit, uint64_t *copied,
	    bool *out_side);
	void *fill_arg;
	/* The owner the new file gets, when a batch looked it up once
	 * (fsapi_root_owner): OWNER_KNOWN 0 looks it up for this file (a
	 * root broker fstats ROOT), 1 gives it UID and GID, -1 none (the
	 * broker is not root). */
	int owner_known;
	uid_t uid;
	gid_t gid;

	/* Filled on success: */
	uint64_t written; /* size of the new file, bytes */
	bool replaced; /* an entry was at the name and was replaced */
	uint64_t old_size; /* st_size of it when a regular file, else 0 */
};

/*
 * Writes IN_FD to PATH beneath ROOT under W, as fsapi_write. Returns 0 or
 * a negative errno with *WHY set, as fsapi_write.
 */
int fsapi_write_req(int root, const char *path, int in_fd, struct fsapi_wreq *w,
    enum fs_error *why);

/*
 * The owner every new file beneath ROOT gets, for W's OWNER_KNOWN, UID and
 * GID: as root (geteuid(2)), the workspace's owner (fstat of ROOT; the
 * job runs as it, workspace.h), with OWNER_KNOWN 1; else OWNER_KNOWN -1.
 * For a batch that writes many files under the same root. Returns 0 or
 * -errno (fstat's; W's fields then untouched).
 */
int fsapi_root_owner(int root, struct fsapi_wreq *w);

/* Whether the front asked every copy to stop (fsapi_set_interrupted). */
bool fsapi_copy_stopped(void);

/*
 * Copies from IN to OUT (both borrowed, left open), each from its current
 * offset, until end of file or LIMIT bytes, whichever comes first, adding
 * to *COPIED (bytes). Chooses by what IN is: a regular file goes by
 * copy_file_range, else sendfile; a pipe by splice; then read/write. A
 * kernel method that refuses this pair of descriptors hands over to the
 * next at the offsets reached, so a fallback after part of the data loses
 * nothing. Sets *OUT_SIDE when a failure was the output's (for the kernel
 * methods, which cannot tell, always). Returns 0 or -errno; -EINTR when
 * fsapi_copy_stopped said so, checked before every call that may block
 * and after each one a signal interrupted (a signal that comes after a
 * call transferred some bytes makes it return them, not EINTR: the check
 * before the next call sees it). A signal caught between that check and
 * the call's sleep is seen only at the next one; the fronts' handler
 * kills at the second signal (jobrun.h, SA_RESETHAND). Reports the bytes
 * moved to the front's progress hook (fsapi_set_progress). In
 * fsapi_copy.c.
 */
int fsapi_copy_fd(int in, int out, uint64_t limit, uint64_t *copied,
    bool *out_side);

/* The process's umask, read once (umask(2) can only be read by setting
 * it). Call it before starting threads that write (fs_tar_unpack.c):
 * the first call sets the umask for a moment. */
mode_t fsapi_process_umask(void);

/*
 * The two halves of fsapi_put around its fsapi_write_req, for a caller
 * that writes elsewhere (fs_tar_unpack.c's writer threads): BEGIN checks
 * PATH under CTX (its limits LIM, which W keeps pointing to: they must
 * outlive the write) and fills W's quotas, mode and OVERWRITE (W's other
 * fields zero: the caller sets name, dirfd, fill); returns 0 or a
 * negative errno with *WHY set, as fsapi_put. END counts a write of W
 * that succeeded in CTX's usage figures.
 */
int fsapi_put_begin(struct fs_ctx *ctx, const char *path,
    const struct wspath_limits *lim, mode_t mode, bool overwrite,
    struct fsapi_wreq *w, enum fs_error *why);
void fsapi_put_end(struct fs_ctx *ctx, const struct fsapi_wreq *w);

/*
 * fsapi_put with the knobs of a batch (fs.unpack, fs_tar.h): DIRFD and
 * NAME (W's name and dirfd: NAME NULL resolves PATH's parent as
 * fsapi_put does) and FILL/FILL_ARG (W's fill: NULL copies IN_FD). PATH
 * is the whole workspace-relative path, checked and counted as by
 * fsapi_put. Returns as fsapi_put.
 */
int fsapi_put_req(struct fs_ctx *ctx, const char *path, int in_fd,
    const struct fsapi_wreq *knobs, mode_t mode, bool overwrite,
    uint64_t *written, enum fs_error *why);

#endif
