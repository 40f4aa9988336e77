/*
 * checkpoint_internal.h: what checkpoint.c (the store, the index, the
 * hook that saves) shares with checkpoint_store.c (reading an old state
 * into the store) and checkpoint_restore.c (merge, drop, restore). Not
 * for other files: they use checkpoint.h.
 *
 * The store's directory holds regular files only, one per saved file
 * content, named "%016llx" by a counter; everything else (kinds, modes,
 * mtimes, symlink targets, directory trees) is in memory.
 */
#ifndef STOCKADE_CHECKPOINT_INTERNAL_H
#define STOCKADE_CHECKPOINT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "checkpoint.h"

enum ckpt_kind {
	CK_ABSENT = 0, /* nothing at the path */
	CK_FILE, /* a regular file: BLOB holds its content */
	CK_SYMLINK, /* TARGET */
	CK_DIR, /* a directory: the items after it are its subtree */
	CK_SKIPPED, /* a FIFO, socket, device, or hard-linked file */
};

/* One saved entry: a record's top (REL "") or one below it. */
struct ckpt_item {
	char *rel; /* owned: "" for the top, else "a/b" under it */
	enum ckpt_kind kind;
	mode_t mode; /* permission bits, st_mode & 07777 */
	struct timespec mtime;
	uint64_t size; /* CK_FILE: bytes */
	uint64_t blob; /* CK_FILE: the store file's number */
	char *target; /* CK_SYMLINK: owned */
};

/* The old state of one path: its top item, and for a directory its
 * subtree in pre-order (a directory before what it holds). */
struct ckpt_rec {
	char *path; /* owned, workspace-relative */
	struct ckpt_item *items; /* owned, NITEMS */
	size_t nitems;
	struct ckpt_rec *next; /* the interval's hash chain */
};

/* A checkpoint and the records of the changes since it (until the next
 * one). */
struct ckpt_iv {
	char name[CKPT_NAME_MAX + 1];
	time_t created;
	bool broken;
	struct ckpt_rec **recs; /* owned, in the order saved */
	size_t nrecs, cap;
	struct ckpt_rec **hash; /* owned, NBUCKETS chains (borrowed recs) */
	size_t nbuckets;
	uint64_t paths, bytes; /* items and bytes saved in this interval */
};

struct ckpt_store {
	struct ckpt_limits lim;
	struct ckpt_dir dir; /* owned */
	int dirfd; /* DIR.fd */
	struct ckpt_iv *ivs; /* owned, oldest first, NIVS of LIM.max */
	size_t nivs;
	uint64_t next_blob;
	uint64_t bytes, entries; /* saved, all intervals */
};

/* The record of exactly PATH in IV, or NULL. */
struct ckpt_rec *ckpt_iv_find(const struct ckpt_iv *iv, const char *path);

/* Whether PATH is saved in IV: its own record, or an ancestor's that
 * holds everything below it (absent or a directory). */
bool ckpt_iv_covers(const struct ckpt_iv *iv, const char *path);

/* Adds REC (ownership passes) to IV's records and hash; counts its items
 * and bytes in IV. Returns 0 or -ENOMEM (REC then still the caller's). */
int ckpt_iv_add(struct ckpt_iv *iv, struct ckpt_rec *rec);

/* Frees IV's records (their store files unlinked from ST, their bytes
 * and entries taken out of ST's counts) and empties IV (name kept). */
void ckpt_iv_clear(struct ckpt_store *st, struct ckpt_iv *iv);

/* Frees REC and its items, unlinking their store files from ST and
 * taking them out of ST's counts. Accepts NULL. */
void ckpt_rec_free(struct ckpt_store *st, struct ckpt_rec *rec);

/* Bytes REC's items count against the store (file sizes and symlink
 * targets). */
uint64_t ckpt_rec_bytes(const struct ckpt_rec *rec);

/* The index of the checkpoint NAME (LEN bytes) in ST, or -1. */
long ckpt_find(const struct ckpt_store *st, const char *name, size_t len);

/*
 * Reads the old state of PATH beneath ROOT into *OUT (a new record the
 * caller frees with ckpt_rec_free), its file contents copied into ST's
 * directory and counted in ST. Returns 0; 1 when the operation will be
 * refused anyway (a symlink or non-directory on the way: nothing saved,
 * *OUT NULL); or a negative errno with nothing left in the store:
 * -EDQUOT past ST's bounds. In checkpoint_store.c.
 */
int ckpt_read_state(struct ckpt_store *st, int root, const char *path,
    struct ckpt_rec **out);

/* Merges the interval SRC into DST (its older neighbour): each of SRC's
 * records DST covers already is freed, the others move to DST. SRC is
 * left empty. Returns 0 or -ENOMEM (then SRC keeps what did not move).
 * In checkpoint_restore.c. */
int ckpt_iv_merge(struct ckpt_store *st, struct ckpt_iv *dst,
    struct ckpt_iv *src);

#endif
