/*
 * wswalk.h: a bounded, descriptor-based walk of a directory tree in a
 * hostile workspace (issue 3): the one walker behind fsapi_list, the
 * usage count of the quotas and the snapshots of fs.changes.
 *
 * Never follows a symbolic link and never leaves the walked directory's
 * mount: each directory is entered by openat2(parent_fd, name, O_RDONLY |
 * O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) from the descriptor of its
 * parent, so a directory the job swaps for a symlink mid-walk is refused
 * (skipped), not followed. Bounded in descriptors (one per level, at most
 * MAX_DEPTH + 1), in entries and in depth; names are sorted byte-wise
 * within each directory so that the order is stable.
 */
#ifndef STOCKADE_WSWALK_H
#define STOCKADE_WSWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct wswalk_entry {
	const char *path; /* from the start (after PREFIX), with NUL */
	const char *name; /* the last component (points into path) */
	int dirfd; /* descriptor of the directory holding it */
	const struct stat *st; /* fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW) */
	unsigned depth; /* 1 for the start directory's entries */
};

/*
 * Called once per entry, pre-order (a directory before what it holds;
 * note that this is not strcmp order of the whole paths: "a", "a/x",
 * "a-b").
 * Everything in E is borrowed for the call. Return 0 to go on (and enter
 * a directory), 1 to go on without entering this directory, or a
 * negative errno to stop the walk (wswalk returns it).
 */
typedef int (*wswalk_fn)(void *arg, const struct wswalk_entry *e);

struct wswalk_opts {
	unsigned max_depth; /* entries deeper than this are not reported
				 * and *DEEPER is set; 0: no entry at all */
	size_t max_entries; /* stop after reporting this many, setting
				 * TRUNCATED if another remained; 0: none;
				 * SIZE_MAX: no bound */
	const char *prefix; /* prepended with '/' to every path ("a/b"
				 * gives "a/b/name"); NULL or "": paths
				 * relative to the start. Never "." */
	void (*on_denied)(void *arg, const char *path);
	/* NULL, or told once the path of each
				 * directory (already reported to FN) that
				 * could not be entered, or whose entries
				 * could not be stat'ed, for its
				 * permissions; PATH is borrowed */
	int (*interrupted)(void); /* NULL, or asked before every entry and
				 * every getdents64 call: non-zero stops the
				 * walk with -EINTR (jobrun_interrupted: a
				 * SIGTERM must not wait for a huge walk) */
	int (*open_dir)(void *arg, int dirfd, const char *name);
	/* NULL, or opens each directory the
				 * walk enters (NAME, one component, in
				 * DIRFD; ARG the walk's) for reading in
				 * place of the walk's own openat2 (a stage
				 * read through the spawner, stage.h), with
				 * the same guarantees: a descriptor or a
				 * negative errno. The walk still checks
				 * it is the directory it reported. With
				 * it, the start DIRFD must be open
				 * O_RDONLY: the walk reads a duplicate of
				 * it, rewound to its start */
};

struct wswalk_stats {
	bool truncated; /* max_entries reached with entries left */
	bool deeper; /* a directory below max_depth held entries */
	size_t skipped; /* entries that vanished or turned into a
				 * symlink/other mount/another directory
				 * between readdir and use (the job racing
				 * the walk) */
	size_t denied; /* directories that could not be entered
				 * and entries that could not be stat'ed
				 * for their permissions (EACCES, EPERM: a
				 * mode the job set, when the broker is not
				 * root or lacks CAP_DAC_OVERRIDE). Unlike a
				 * race, this hides what exists: a caller
				 * must treat the walk as partial
				 * (snapshot: truncated; list: truncated;
				 * usage: the workspace counts as full) */
};

/*
 * Walks the directory DIRFD (borrowed, not closed, its offset untouched;
 * may be O_PATH: the walk opens "." beneath it; with OPTS->open_dir, see
 * there) calling FN for every
 * entry under OPTS' bounds. STATS (may be NULL) gets what was left out.
 * Returns 0, FN's negative return, or a negative errno (-ENOMEM; -EMFILE;
 * a readdir failure; -EINTR when OPTS->interrupted said so). An entry
 * that vanishes or changes type mid-walk is skipped and counted, never an
 * error: the workspace is the job's and may change while it is walked; a
 * directory the walk may not enter is counted in DENIED, not an error.
 * The start directory itself failing to open or read is an error
 * (-EACCES, -ENOTDIR...).
 *
 * Memory: the names of the directories on the current branch (at most
 * about twice what MAX_ENTRIES still allows per directory, when it is
 * bounded) and the path; descriptors: at most MAX_DEPTH + 1 (the last to
 * tell whether a directory at MAX_DEPTH holds anything, for DEEPER), so
 * a MAX_DEPTH near RLIMIT_NOFILE can fail with -EMFILE.
 */
int wswalk(int dirfd, const struct wswalk_opts *opts, wswalk_fn fn, void *arg,
    struct wswalk_stats *stats);

#endif
