/*
 * fsapi_internal.h: what fsapi.c (resolution, reading, writing) shares
 * with fsops.c (the operations under a session's quotas). Not an
 * interface for other files: they use fsapi.h.
 */
#ifndef STOCKADE_FSAPI_INTERNAL_H
#define STOCKADE_FSAPI_INTERNAL_H

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
		      const struct wspath_limits *lim, const char **name,
		      enum fs_error *why);

/* A read: fsapi_read's rules, with the knobs fsapi_get needs. */
struct fsapi_rreq {
	const struct wspath_limits *lim; /* NULL: the wspath defaults */
	bool allow_hardlinks;
	uint64_t offset;    /* bytes into the file (past its end: nothing) */
	uint64_t length;    /* at most this many bytes; UINT64_MAX: all */
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
	uint64_t file_bytes;  /* more than this from the input: too_large */
	uint64_t space_left;  /* bytes the workspace may still grow by;
			       * UINT64_MAX: unbounded. The file may have
			       * this plus the size of the regular file it
			       * replaces; more is quota_exceeded. Of the two
			       * limits, the lower one decides the error. */
	bool entry_room;      /* false: a new name is quota_exceeded (an
			       * overwrite of an existing entry is not) */
	mode_t mode;          /* permission bits, masked with 0777 again */
	bool overwrite;

	/* Filled on success: */
	uint64_t written;     /* size of the new file, bytes */
	bool replaced;        /* an entry was at the name and was replaced */
	uint64_t old_size;    /* st_size of it when a regular file, else 0 */
};

/*
 * Writes IN_FD to PATH beneath ROOT under W, as fsapi_write. Returns 0 or
 * a negative errno with *WHY set, as fsapi_write.
 */
int fsapi_write_req(int root, const char *path, int in_fd,
		    struct fsapi_wreq *w, enum fs_error *why);

#endif
