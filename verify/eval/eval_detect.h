/*
 * eval_detect.h: the rules that decide whether an attack succeeded
 * (issue 6; docs/evidence.md, "When an attack succeeds"), the parts that
 * look at bytes, trees and processes. eval_run.c applies them to one run.
 *
 * Needles are searched raw (memmem), as found: an attack that encodes a
 * secret before sending it is not counted, and the corpus does not do so
 * (tests/verify/eval/attacks/ contract).
 */
#ifndef STOCKADE_EVAL_DETECT_H
#define STOCKADE_EVAL_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One string searched for, with its name in the evidence. */
struct eval_needle {
	const char *name; /* "env_aws", "pwned", ... (borrowed) */
	const char *s; /* the bytes (borrowed) */
	size_t len; /* at most EVAL_NEEDLE_MAX */
};

#define EVAL_NEEDLE_MAX 64

/* The index of the first of the N needles ND found in BUF (LEN bytes),
 * or -1. */
int eval_find(const void *buf, size_t len, const struct eval_needle *nd,
    size_t n);

/*
 * Searches every regular file below the directory DIRFD (borrowed; the
 * walk of wswalk.h: never through a symlink, never across a mount, at
 * most 64 levels and 100000 entries) for the N needles ND, reading at
 * most MAX_BYTES in all (files are read in 256 KiB pieces that overlap
 * by EVAL_NEEDLE_MAX - 1 bytes, so a needle across two pieces is found).
 * Files are opened O_NOFOLLOW | O_NONBLOCK and read only when fstat says
 * regular (never a FIFO). Returns 1 with the needle's index in *WHICH
 * and the file's path relative to DIRFD in PATH (PATHLEN bytes,
 * truncated), 0 when no needle is anywhere, or a negative errno (the
 * walk failed: the top directory unreadable, -ENOMEM).
 */
int eval_scan_tree(int dirfd, const struct eval_needle *nd, size_t n,
    uint64_t max_bytes, int *which, char *path, size_t pathlen);

/*
 * Searches the file DIRFD/NAME (not followed if a symlink, read only if
 * regular) like eval_scan_tree, at most MAX_BYTES. Returns 1 with *WHICH,
 * 0, or a negative errno (-ENOENT when it does not exist).
 */
int eval_scan_file(int dirfd, const char *name, const struct eval_needle *nd,
    size_t n, uint64_t max_bytes, int *which);

/*
 * The entries of the directories DIRS (NDIRS absolute paths; one that
 * does not exist or cannot be read is skipped) whose names contain TOKEN,
 * top level only: calls FN(ARG, DIR, NAME) for each (both borrowed for
 * the call). Returns how many were found, or -ENOMEM.
 */
int eval_token_files(const char *const *dirs, size_t ndirs, const char *token,
    void (*fn)(void *arg, const char *dir, const char *name), void *arg);

/*
 * The processes, other than the caller, whose command line
 * (/proc/PID/cmdline, its NULs read as spaces, at most 4096 bytes)
 * contains TOKEN: at most MAX pids into PIDS, the first one's command
 * line into CMD (CMDLEN bytes, NULs as spaces; may be NULL). Returns how
 * many there are (possibly more than MAX), or a negative errno when /proc
 * cannot be read. Zombies (an empty command line) do not count.
 */
int eval_leftovers(const char *token, pid_t *pids, size_t max, char *cmd,
    size_t cmdlen);

/*
 * Processes the job left behind without the token in their command line
 * (review of issue 6, F3): the terminal owner OWNER is a child subreaper,
 * so whatever outlived its parent in the job's tree is its child now.
 * Lists OWNER's living children but stockade's own helpers on their way
 * out (stockade-zygote, stockade-init), names the first in CMD, SIGKILLs
 * them all, and repeats (their own children come up to OWNER in turn) a
 * few times. Returns how many it found.
 */
int eval_orphans(pid_t owner, char *cmd, size_t cmdlen);

/*
 * Kills (SIGKILL) every process eval_leftovers finds for TOKEN, again and
 * again until none is left or 50 rounds have passed (a fork bomb left
 * behind keeps making new ones; each round first stops them all with
 * SIGSTOP, so that none forks while the others die). "None left" takes
 * two scans in a row that find none, a pause apart: a process in the
 * middle of execve(2) shows an empty /proc/PID/cmdline for a moment.
 * Returns the number still found after the last round (0 when all are
 * gone).
 */
int eval_kill_leftovers(const char *token);

/*
 * A small file's identity for eval_file_changed: content (at most 4096
 * bytes), mode, owner, inode, size and ctime; EXISTS false when it was
 * not there.
 */
struct eval_file_state {
	bool exists;
	mode_t mode;
	uid_t uid;
	ino_t ino;
	off_t size;
	int64_t ctime_ns;
	size_t len;
	unsigned char data[4096];
};

/* Records the file PATH (not followed) into ST. Returns 0 or -errno
 * (-ENOENT gives EXISTS false and returns 0). */
int eval_file_state(const char *path, struct eval_file_state *st);

/* True when A and B differ in anything they record. */
bool eval_file_changed(const struct eval_file_state *a,
    const struct eval_file_state *b);

#endif
