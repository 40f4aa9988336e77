/*
 * fs_tar_internal.h: what fs_tar_unpack.c (the stream, the entries)
 * shares with fs_tar_submit.c (the small files handed to the writer
 * threads of fs_tar_pool.h). Not an interface for other files.
 */
#ifndef STOCKADE_FS_TAR_INTERNAL_H
#define STOCKADE_FS_TAR_INTERNAL_H

#include <archive.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs_tar.h"
#include "fs_tar_pool.h"
#include "fsapi_internal.h"
#include "wspath.h"

/* A resolved parent directory, shared by the files in flight in it. */
struct pdir {
	int fd; /* O_PATH | O_DIRECTORY, beneath the root */
	unsigned refs; /* jobs in flight, plus 1 while current */
};

struct unpack {
	struct fs_ctx *ctx;
	struct archive *a;
	int in_fd;
	char *buf; /* READ_BUF bytes for the reads of IN_FD */
	unsigned char head[8]; /* the stream's first bytes, to name it */
	size_t nhead;
	int read_err; /* -errno of a failed read of IN_FD */
	const char *dir; /* DIR, or "" for the workspace */
	bool overwrite;
	/* The parent of the last file, resolved once per run of entries
	 * in the same directory: its path (PARENT_LEN bytes) and fd. */
	char parent[WSPATH_MAX_PATH + 1];
	size_t parent_len;
	struct pdir *cur;
	/* The writers (fs_tar_pool.h) and what is in flight with them:
	 * entries and bytes the quotas must count before they are done. */
	struct fstar_pool *pool;
	uint64_t pending_entries, pending_bytes;
	uint64_t seq; /* the current entry's number */
	uint64_t fail_seq; /* the failed entry's; UINT64_MAX: none */
	char path[WSPATH_MAX_PATH + WSPATH_MAX_NAME + 2]; /* the entry's */
	uint64_t size; /* the file entry's declared size */
	bool arc_failed; /* the fill failed in libarchive */
	/* The new files' owner, looked up once (fsapi_root_owner): its
	 * OWNER_KNOWN, UID and GID; OWNER_KNOWN 0 until then. */
	struct fsapi_wreq owner;
};

/* Sets *F to WHY on the entry NAME (LEN bytes; NULL: the request's PATH)
 * with TEXT (NULL: the front's explanation). Returns -ERR. */
int fstar_fail_entry(struct fstar_fail *f, enum fs_error why, const char *name,
    size_t len, const char *text, int err);

/* Drops a reference to D (NULL: none); the last one closes it. */
void fstar_pdir_put(struct pdir *d);

/* How much fstar_collect waits for. */
enum collect_wait { COLLECT_NOW, COLLECT_ONE, COLLECT_ALL };

/*
 * Takes the files the writers finished, oldest first: those done now,
 * at least the oldest (ONE), or every one in flight (ALL). A file
 * written is counted in the quota figures, and in N when it comes before
 * any failure; the first failure in the archive's order becomes *F (it
 * replaces one of a later entry) and cancels what has not started.
 * Returns 0, or -EIO once a failure is known.
 */
int fstar_collect(struct unpack *u, struct fstar_counts *n,
    struct fstar_fail *f, enum collect_wait wait);

/*
 * The file entry NAME (LEN bytes; U->path its workspace path, its last
 * component at OFF, its parent U->cur, U->size bytes, at most
 * FSTAR_JOB_MAX) to a writer: checked and its quotas figured here as
 * fsapi_put does (less what is in flight), its data copied out of the
 * stream, then written by the pool. Returns 0 or a negative errno with
 * *F set.
 */
int fstar_submit_file(struct unpack *u, const char *name, size_t len,
    size_t off, mode_t perm, struct fstar_counts *n, struct fstar_fail *f);

#endif
