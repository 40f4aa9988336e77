/*
 * stage_internal.h: what stage_commit.c (the plan and its application)
 * shares with stage_journal.c (the journal a commit undoes itself from,
 * and stage_recover). Not an interface for other files: they use
 * stage.h.
 *
 * The journal is the directory STAGE_JOURNAL at the workspace's root,
 * mode 0700, holding:
 *   jN            the old version of a replaced file (a hard link, or a
 *                 copy with its mode and mtime where linking is refused)
 *                 or a deleted entry (renamed there whole, a directory
 *                 with its subtree); N a decimal number;
 *   manifest      the list of operations, complete before the first
 *                 change (written as manifest.tmp, fsync'ed, renamed);
 *   done          present once every operation was applied.
 * The manifest is text: the line "stockade-commit 1", then one line per
 * operation, in the order they are applied, "K\tPATH\tARG", then "end".
 * PATH is workspace-relative with every byte below 0x20, 0x7f and '\'
 * written "\xHH" (two lowercase hex digits), so that a name holding a
 * tab or a newline stays on its line. K and ARG:
 *   D  jN     PATH was renamed to jN (deleted, or replaced by another
 *             type); undone, when jN exists, by putting it back (what a
 *             later operation created at PATH removed first);
 *   C  -|jN   PATH was created; undone by removing it, but with jN only
 *             when jN exists (the D of the same path before it happened:
 *             else PATH still holds the old entry);
 *   S  jN     the file PATH was replaced, its old version saved as jN
 *             before the manifest was written; undone by renaming jN
 *             over PATH (the same inode when it was never replaced);
 *   M  MODE   the directory PATH had the mode MODE (octal); undone by
 *             setting it back.
 * Every undo step is one that can be done again, so a broker killed in
 * an undo is recovered by the next undo.
 */
#ifndef STOCKADE_STAGE_INTERNAL_H
#define STOCKADE_STAGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fserr.h"
#include "snapshot.h"

enum stage_op_kind {
	STAGE_OP_DEL = 'D',
	STAGE_OP_CREATE = 'C',
	STAGE_OP_SAVE = 'S',
	STAGE_OP_MODE = 'M',
};

struct stage_op {
	enum stage_op_kind kind;
	const char *path; /* workspace-relative: borrowed from the scan in
			   * a commit, from the journal's text in a
			   * recovery */
	unsigned long j; /* D, S: the journal name jJ; C: 1 + the J of the
			  * D of the same path, or 0 */
	uint32_t mode; /* M: the old mode */
	const struct snap_entry *e; /* a commit's: the new entry (C, S, M)
				     * or the old one (D); NULL in a
				     * recovery */
};

struct stage_journal {
	int root; /* the workspace, borrowed */
	int dir; /* the journal, O_RDONLY | O_DIRECTORY, owned; -1 */
	struct stage_op *op; /* in the order applied; owned */
	size_t n;
	char *text; /* a recovery's manifest, owned (paths point in) */
};

/* The most bytes of a manifest stage_recover reads. */
#define STAGE_MANIFEST_MAX (1024u << 20)

/* Makes room for one more element in the array whose pointer is at ARRP
 * (a T **: N used, *CAP allocated, SIZE bytes each): doubled, from 64.
 * Returns 0 or -ENOMEM (the array untouched). In stage.c. */
int stage_grow(void *arrp, size_t n, size_t *cap, size_t size);

/*
 * Sets the permission bits of the directory NAME (one component) of
 * DIRFD to MODE: fchmod on a descriptor of it ("." beneath its O_PATH
 * one, never through a link), since a confined broker may not chmod by
 * path (broker/host/confine.h); by path (fchmodat) only when the
 * directory cannot be opened for its mode (EACCES). Returns 0 or a
 * negative errno (-ENOENT when it is gone).
 */
int stage_chmod_dir(int dirfd, const char *name, mode_t mode);

/* The journal name of J ("j" and J in decimal) into BUF (24 bytes). */
void stage_jname(char buf[24], unsigned long j);

/*
 * Opens the parent directory of PATH beneath ROOT (fsapi_open_parent:
 * never through a link), with the widest path limits a quota may set
 * (4096 bytes, 256 components). *NAME points into PATH. Returns the
 * descriptor (the caller owns it) or a negative errno with *WHY set.
 */
int stage_parent(int root, const char *path, const char **name,
    enum fs_error *why);

/*
 * Makes the journal in ROOT (mkdirat 0700: -EEXIST when one is left,
 * which stage_recover must handle first) and opens it into J (its ops
 * zero). Returns 0 or a negative errno.
 */
int stage_journal_open(struct stage_journal *j, int root);

/*
 * Saves the file at OP's path (an S) as J's jJ: linkat, else (EPERM,
 * EXDEV, EMLINK, EACCES) a copy keeping its mode and mtime. Returns 0 or
 * a negative errno with *WHY set (quota_exceeded for a full disk).
 */
int stage_journal_save(struct stage_journal *j, const struct stage_op *op,
    enum fs_error *why);

/* Writes J's manifest (manifest.tmp, fsync, renamed to manifest, the
 * journal fsync'ed). Returns 0 or a negative errno. */
int stage_journal_write(struct stage_journal *j);

/* Marks J done (done.tmp renamed to done, fsync'ed). Returns 0 or a
 * negative errno. */
int stage_journal_done(struct stage_journal *j);

/*
 * Undoes J's first N operations, the last first (the rules of the head
 * comment); goes on after a failed step. Returns 0, or the first
 * negative errno with *PATH (may be NULL) its operation's path.
 */
int stage_journal_undo(struct stage_journal *j, size_t n, const char **path);

/* Closes J's descriptor, frees what it owns, and removes the journal
 * directory from the workspace when REMOVE. Returns 0 or a negative
 * errno of the removal. */
int stage_journal_close(struct stage_journal *j, bool remove);

struct stage_ref;
struct stage_scan;

/*
 * The stage tmpfs's figures (fstatvfs(3) of STAGE, its root) into OUT:
 * its size and the upper layer's bytes and inodes in use, less the
 * token's page. Returns 0 or a negative errno (stage_figures.c).
 */
int stage_figures(int stage, struct stage_scan *out);

/*
 * Whether the upper layer of STAGE has no entry, seen without opening it
 * (a stat is no Landlock access, so the broker needs no spawner round
 * trip): tmpfs gives a directory a size of BOGO_DIRENT_SIZE (20) bytes
 * per entry, "." and ".." included, so an empty one is 40 bytes
 * (mm/shmem.c, shmem_get_inode and shmem_mknod). Every change a job
 * makes puts an entry there (a copy-up, a new file or directory, a
 * whiteout), so an empty upper layer is no change at all. Any other
 * answer (another size, a kernel that counts otherwise) means: scan
 * (stage_figures.c).
 */
bool stage_upper_empty(const struct stage_ref *stage);

#endif
