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
 *
 * Bounds (the workspace is the job's, and a snapshot runs on every exec):
 *  - a sparse file is not hashed: one whose allocated bytes (st_blocks *
 *    512, stat(2)) fall more than SNAPSHOT_SPARSE_SLACK short of st_size.
 *    Reading holes costs time and no disk, so a job could otherwise make
 *    every exec read gigabytes of zeros (security review, finding 1). The
 *    slack is one allocation unit of the coarsest common case (64 KiB:
 *    64 KiB pages, btrfs sectors) and covers data kept in the inode
 *    (ext4 inline_data: st_blocks 0). A file system that compresses
 *    (btrfs, ZFS) may make a compressible file look sparse: it is then
 *    listed unhashed, never misreported;
 *  - at most quota.workspace_bytes are read for hashing per snapshot
 *    (hashes lent by PREV cost nothing): a file that no longer fits in
 *    what is left is listed unhashed (its size may be read partly when
 *    it grows while read: never more than what was left plus one byte);
 *  - an entry whose workspace-relative path is longer than quota.max_path
 *    (0: WSPATH_MAX_PATH) is not recorded, nor anything below it (no
 *    client could name it), and the snapshot is truncated;
 *  - at most SNAPSHOT_MAX_PATH_BYTES of paths are recorded: the walk stops
 *    there, truncated;
 *  - INTERRUPTED (jobrun_interrupted) is asked between entries, between
 *    directory reads and between reads of a file: a signal stops the
 *    snapshot (-EINTR) within one READ of 256 KiB.
 * A regular file left unhashed for the first two bounds has hash_skipped
 * set and is counted in the snapshot's unhashed.
 */
#ifndef STOCKADE_SNAPSHOT_H
#define STOCKADE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fsapi.h"
#include "policy.h"

#define SNAPSHOT_SHA256_LEN 32

/* How much older than a snapshot's start a file's st_ctim must be for
 * that snapshot to lend its hash: the coarsest timestamp granularity of a
 * file system the workspace may sit on (2 s, FAT) plus a clock tick. */
#define SNAPSHOT_RACY_NS 3000000000LL

/* How far st_blocks * 512 may fall short of st_size before a file counts
 * as sparse and is not hashed, bytes (see above). */
#define SNAPSHOT_SPARSE_SLACK 65536u

/* The most path bytes (with their NULs) one snapshot records: 32 MiB,
 * about 8000 paths of the longest (4096 bytes) or 330000 of 100 bytes. */
#define SNAPSHOT_MAX_PATH_BYTES (32u << 20)

struct snap_entry {
	char *path; /* raw bytes, owned */
	enum fs_type type;
	uint64_t size; /* bytes */
	uint32_t mode; /* st_mode & 07777 */
	int64_t mtime_ns, ctime_ns;
	uint64_t dev, ino, nlink;
	bool hashed; /* sha256 is valid */
	bool denied; /* a directory the walk could not
					  * enter for its permissions: what
					  * it holds is unknown, so
					  * snapshot_diff reports nothing
					  * below it as created or deleted */
	bool hash_skipped; /* a regular file with one link and
					  * at most quota.file_bytes left
					  * unhashed for a bound: sparse, or
					  * past the snapshot's budget */
	uint8_t sha256[SNAPSHOT_SHA256_LEN];
};

struct snapshot {
	struct snap_entry *e; /* sorted by path (strcmp) */
	size_t n;
	bool truncated; /* over quota.max_files, max_depth
					  * or SNAPSHOT_MAX_PATH_BYTES, paths
					  * over quota.max_path left out, or
					  * directories the walk was denied
					  * (wswalk.h): the manifest is
					  * partial */
	size_t unhashed; /* entries with hash_skipped */
	uint64_t hashed_bytes; /* read for hashing, bytes (at most
					  * quota.workspace_bytes plus one
					  * byte per file that grew) */
	int64_t started_ns; /* CLOCK_REALTIME when it was begun,
					  * ns since the epoch (racy files) */
	bool valid; /* taken (a zeroed struct is not) */
};

/*
 * Takes a snapshot of the workspace ROOT (borrowed) under Q into S (the
 * caller zeroes it or frees it first). PREV (may be NULL) lends hashes of
 * unchanged files. Files that are not hashed (over quota.file_bytes,
 * more than one link, not regular, vanished mid-read, sparse, past the
 * hashing budget) keep hashed = false. INTERRUPTED (may be NULL; e.g.
 * jobrun_interrupted) is asked while the snapshot runs: non-zero stops it.
 * Returns 0 or a negative errno (-ENOMEM; -EINTR when interrupted; a
 * failure to read the workspace's top directory); S is then empty.
 */
int snapshot_take(int root, const struct fs_quota *q,
    const struct snapshot *prev, int (*interrupted)(void), struct snapshot *s);

/* Frees everything S owns and zeroes it; accepts a zeroed S. */
void snapshot_free(struct snapshot *s);

/*
 * The hashing of one walk (a snapshot; a stage scan, stage.h): the
 * budget of bytes it may read (quota.workspace_bytes at the start), its
 * read buffer and the caller's interruption. snapshot_take keeps one for
 * itself; another walk that records snap_entry values makes its own.
 */
struct snap_hasher {
	const struct fs_quota *q; /* borrowed: file_bytes, workspace_bytes */
	int (*interrupted)(void); /* NULL, or asked between reads */
	uint8_t *buf; /* owned, 256 KiB */
	uint64_t left; /* bytes the hashing may still read */
	uint64_t read; /* bytes read so far (a snapshot's hashed_bytes) */
	bool stop; /* interrupted while hashing */
};

/* Sets H up for Q (borrowed, kept) asking INTR (may be NULL). Returns 0
 * or -ENOMEM; snap_hasher_free either way. */
int snap_hasher_init(struct snap_hasher *h, const struct fs_quota *q,
    int (*intr)(void));

/* Frees H's buffer; accepts a zeroed H. */
void snap_hasher_free(struct snap_hasher *h);

/* Sets E's type, size, mode, times, device, inode and link count from ST
 * (a stat of the entry, lstat semantics); E's path and hash untouched. */
void snap_entry_meta(struct snap_entry *e, const struct stat *st);

/* Whether a snapshot hashes E: a regular file with one link and at most
 * Q->file_bytes (the bounds above). */
bool snap_entry_hashable(const struct snap_entry *e, const struct fs_quota *q);

/*
 * Hashes the regular file NAME in DIRFD (borrowed) that E describes
 * (snap_entry_meta of the walk's stat), under the bounds above: opened
 * with fsapi_open_regular_at and only if it is still E's inode (E's
 * metadata is then refreshed from it); E->hashed when it was read whole
 * and did not change meanwhile; E->hash_skipped when it is sparse or
 * larger than what H's budget has left. The bytes read are taken from
 * H's budget whatever the outcome. Returns 0, or -EINTR when H's
 * interruption said so (H->stop set, E unhashed).
 */
int snap_entry_hash(struct snap_hasher *h, int dirfd, const char *name,
    struct snap_entry *e);

/*
 * snap_entry_hash of a file the caller opened for reading: FD (borrowed,
 * read from its current offset, which the caller has at 0) is hashed
 * only when fstat shows a regular file with one link that is still E's
 * inode (same device and inode); otherwise E stays unhashed. Returns as
 * snap_entry_hash.
 */
int snap_entry_hash_fd(struct snap_hasher *h, int fd, struct snap_entry *e);

enum change_kind { CHANGE_CREATED, CHANGE_MODIFIED, CHANGE_DELETED };

struct change {
	enum change_kind kind;
	const struct snap_entry *entry; /* borrowed from AFTER (created,
					  * modified) or BEFORE (deleted) */
	const struct snap_entry *old; /* modified: borrowed from BEFORE */
};

struct changes {
	struct change *c; /* sorted by path */
	size_t n;
	bool truncated; /* either snapshot was truncated */
	size_t unhashed; /* changes whose entry has
					  * hash_skipped (its sha256 unknown
					  * only for the snapshot's bounds) */
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
