/*
 * fs_tar_pool.h: writer threads for fs.unpack's small files (fs_tar.h;
 * internal to fs_tar_unpack.c).
 *
 * Creating a file is nearly all kernel time (an inode, its data, a
 * directory entry), and ext4 does much of it in parallel: two threads
 * creating 4 KiB files in one directory took 204 ms for 10,000 where one
 * took 379 ms (2 CPUs). So the thread reading the archive hands each
 * small file, its data already copied out of the stream, to a writer,
 * which runs fsapi_write_req on it: the same code, the same rules, with
 * the checks and quota figures done before on the reading thread
 * (fsapi_put_begin) and counted after it (fsapi_put_end), in the
 * archive's order.
 *
 * Jobs are slots of a ring: filled and submitted in order by one thread
 * (the caller), started in that order by the writers, collected in that
 * order by the caller. Nothing here touches the session's fs_ctx; the
 * writers touch only their job. The writers block every signal, so the
 * caller's thread is the one a SIGINT or SIGTERM interrupts
 * (fsapi_set_interrupted).
 */
#ifndef STOCKADE_FS_TAR_POOL_H
#define STOCKADE_FS_TAR_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsapi_internal.h"
#include "wspath.h"

#define FSTAR_POOL_WRITERS 2
#define FSTAR_POOL_SLOTS 64
/* Jobs queued before idle writers are woken (fstar_pool_submit): a
 * wake-up each (a futex call on both sides and a switch, an interrupt
 * between the CPUs of a VM) was a fifth of the broker's time. */
#define FSTAR_POOL_BATCH 8
#define FSTAR_JOB_MAX (64u << 10) /* bigger files are the caller's */
#define FSTAR_ENTRY_MAX WSPATH_MAX_PATH /* longer archive names too */

struct fstar_job {
	/* Filled by the caller before fstar_pool_submit: */
	uint64_t seq; /* the entry's number in the archive */
	char path[WSPATH_MAX_PATH + 1];
	struct wspath_limits lim; /* W.lim points here */
	struct fsapi_wreq w; /* fsapi_put_begin's, with name, dirfd
				 * (borrowed: kept open until collected)
				 * and fill set by fstar_pool_submit */
	void *owner; /* the caller's, e.g. what holds the dirfd */
	char entry[FSTAR_ENTRY_MAX + 1]; /* the caller's: the archive's name */
	size_t entry_len;
	char *data; /* FSTAR_JOB_MAX bytes, the pool's */
	size_t len; /* the file's bytes in DATA */
	/* Set by the writer: */
	int err; /* 0, -errno, -ECANCELED (not written) */
	enum fs_error why;
};

struct fstar_pool;

/* A pool writing beneath ROOT (borrowed), its threads not started yet;
 * NULL when out of memory. */
struct fstar_pool *fstar_pool_new(int root);

/* The next free slot to fill, or NULL when all are in flight (collect
 * one with fstar_pool_done first). */
struct fstar_job *fstar_pool_next(struct fstar_pool *p);

/* Hands J (from fstar_pool_next, filled) to the writers; the first call
 * starts them. Returns 0, or -errno when no writer could be started (J
 * is then written at once on this thread: still collected as usual). */
int fstar_pool_submit(struct fstar_pool *p, struct fstar_job *j);

/* Wakes the idle writers for every job queued: for a caller about to
 * block elsewhere (reading the stream), so that fewer than
 * FSTAR_POOL_BATCH jobs never wait for it. fstar_pool_done does it
 * before it waits. */
void fstar_pool_kick(struct fstar_pool *p);

/* The oldest job submitted and not collected, once written (WAIT) or if
 * already written (else NULL); NULL when none is in flight. The caller
 * reads it, then gives it back with fstar_pool_release. */
struct fstar_job *fstar_pool_done(struct fstar_pool *p, bool wait);
void fstar_pool_release(struct fstar_pool *p, struct fstar_job *j);

/* Jobs submitted but not started yet end with -ECANCELED, unwritten. */
void fstar_pool_cancel(struct fstar_pool *p);

/* pwrite(2) of all LEN bytes of BUF at OFF. Returns 0 or -errno. */
int fstar_pwrite_all(int fd, const void *buf, size_t len, off_t off);

/* Stops and joins the writers (every job collected first) and frees P
 * (NULL: nothing). */
void fstar_pool_free(struct fstar_pool *p);

#endif
