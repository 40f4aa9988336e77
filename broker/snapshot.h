/*
 * snapshot.h: what a job did to the workspace (fs.changes; issue 3).
 *
 * A snapshot records every entry of the workspace (wswalk.h: never through
 * a link, bounded by the quotas) with its type, size, mode, mtime, ctime,
 * inode and, for a regular file with one link and at most
 * quota.file_bytes, the SHA-256 of its content (libmd, <sha2.h>). The
 * broker takes one before each job and one after; the difference is the
 * manifest of what the job created, modified and deleted.
 *
 * Hashing is the cost: a file whose (st_dev, st_ino, st_size, st_mtim,
 * st_ctim) equal the previous snapshot's takes that snapshot's hash
 * instead of being read again. st_ctim cannot be set from user space, so a
 * job cannot make a changed file look unchanged. One exception, the one
 * git calls "racily clean" (git's Documentation/technical/racy-git.txt):
 * a file changed twice within one tick of the file system's timestamps
 * keeps its st_ctim, so a hash is lent only when the file's st_ctim is
 * SNAPSHOT_RACY_NS older than the start of the snapshot that hashed it;
 * a file changed more recently than that is read again. Files are opened
 * for hashing with fsapi_open_regular_at (O_PATH | O_NOFOLLOW, then a
 * reopen of that inode: never a FIFO, device, link or second hard link),
 * only if that inode is the one the walk described; at most
 * quota.file_bytes + 1 bytes are read, and the hash is kept only if the
 * size, st_mtim and st_ctim did not change while the file was read.
 */
#ifndef STOCKADE_SNAPSHOT_H
#define STOCKADE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fsapi.h"
#include "policy.h"

#define SNAPSHOT_SHA256_LEN 32

/* How much older than a snapshot's start a file's st_ctim must be for
 * that snapshot to lend its hash: the coarsest timestamp granularity of a
 * file system the workspace may sit on (2 s, FAT) plus a clock tick. */
#define SNAPSHOT_RACY_NS 3000000000LL

struct snap_entry {
	char *path;                      /* raw bytes, owned */
	enum fs_type type;
	uint64_t size;                   /* bytes */
	uint32_t mode;                   /* st_mode & 07777 */
	int64_t mtime_ns, ctime_ns;
	uint64_t dev, ino, nlink;
	bool hashed;                     /* sha256 is valid */
	uint8_t sha256[SNAPSHOT_SHA256_LEN];
};

struct snapshot {
	struct snap_entry *e;            /* sorted by path (strcmp) */
	size_t n;
	bool truncated;                  /* over quota.max_files or max_depth:
					  * the manifest is partial */
	int64_t started_ns;              /* CLOCK_REALTIME when it was begun,
					  * ns since the epoch (racy files) */
	bool valid;                      /* taken (a zeroed struct is not) */
};

/*
 * Takes a snapshot of the workspace ROOT (borrowed) under Q into S (the
 * caller zeroes it or frees it first). PREV (may be NULL) lends hashes of
 * unchanged files. Files that are not hashed (over quota.file_bytes,
 * more than one link, not regular, or vanished mid-read) keep hashed =
 * false. Returns 0 or a negative errno (-ENOMEM; a failure to read the
 * workspace's top directory); S is then empty.
 */
int snapshot_take(int root, const struct fs_quota *q,
		  const struct snapshot *prev, struct snapshot *s);

/* Frees everything S owns and zeroes it; accepts a zeroed S. */
void snapshot_free(struct snapshot *s);

enum change_kind { CHANGE_CREATED, CHANGE_MODIFIED, CHANGE_DELETED };

struct change {
	enum change_kind kind;
	const struct snap_entry *entry;  /* borrowed from AFTER (created,
					  * modified) or BEFORE (deleted) */
	const struct snap_entry *old;    /* modified: borrowed from BEFORE */
};

struct changes {
	struct change *c;                /* sorted by path */
	size_t n;
	bool truncated;                  /* either snapshot was truncated */
};

/*
 * The manifest from BEFORE to AFTER (both borrowed and kept alive while
 * OUT is used). An entry is created when its path is only in AFTER,
 * deleted when only in BEFORE, and modified when its type, size, mode,
 * mtime, ctime or inode changed, or its hash did (a directory is
 * modified only when its mode changed: entries added below it are
 * reported themselves). Returns 0 or -ENOMEM.
 */
int snapshot_diff(const struct snapshot *before, const struct snapshot *after,
		  struct changes *out);

/* Frees OUT's array (not the entries it borrows) and zeroes it. */
void changes_free(struct changes *out);

/* Lower-case hex of E's hash into HEX (65 bytes); "" when not hashed. */
void snap_hex(const struct snap_entry *e, char hex[65]);

#endif
