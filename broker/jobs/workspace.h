/* workspace.h: the workspace directory of a `stockade run`. */
#ifndef STOCKADE_WORKSPACE_H
#define STOCKADE_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

struct workspace {
	int fd; /* O_DIRECTORY descriptor, held for the job */
	int parent_fd; /* temporary only: the directory it was made in */
	char name[32]; /* temporary only: its name there */
	char path[4096]; /* as given, or the temporary directory made */
	bool temporary; /* made by us (mode 0700), removed unless kept */
	unsigned mode; /* permission bits at open, restored at close */
};

/*
 * Opens DIR as the workspace, or, when DIR is NULL, makes a fresh private
 * directory "stockade-XXXXXX" (mode 0700) in $TMPDIR or /tmp.
 *
 * A given DIR (absolute, or relative to the current directory) must be an
 * existing directory reached without any symbolic link: it is opened with
 * openat2 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, so a symlink a
 * previous job planted anywhere in the path (ws/a -> /elsewhere, then
 * --workspace ws/a/sub) is refused (-ELOOP) instead of followed. A
 * temporary workspace is made with mkdirat in the descriptor of $TMPDIR
 * and opened beneath it the same way; that descriptor is kept for its
 * removal, so the path is never looked up again.
 *
 * When the broker runs as root, the launcher maps jobs to
 * PROTO_ROOT_PAYLOAD_ID and lends them the workspace id-mapped so that
 * its owner appears as the job: a given DIR owned by uid or gid 0 is then
 * refused (-EPERM), since the job would get root's access to everything
 * of root's below it (--workspace /etc), and a temporary one is given to
 * PROTO_ROOT_PAYLOAD_ID.
 *
 * Returns 0 or a negative errno with ERR (ERRLEN bytes) set to a whole
 * sentence; -ENOSYS when the kernel has no openat2 (Linux < 5.6), which
 * the caller must treat as a refusal (fail closed), never as a reason to
 * fall back to open(2).
 */
int workspace_open(struct workspace *ws, const char *dir, char *err,
    size_t errlen);

/*
 * Puts the permission bits of the directory FD back to MODE (07777) when
 * they differ (a job may chmod /work), through the descriptor. Returns 0
 * or a negative errno (fstat, fchmod).
 */
int workspace_restore_mode(int fd, unsigned mode);

/*
 * Restores the workspace directory's permission bits (a job may chmod
 * /work, for instance to 0777), then closes it and, when it is temporary
 * and KEEP is false, removes it and everything in it without following
 * symlinks (remove_tree_at). Returns 0 or the first negative errno of the
 * removal.
 */
int workspace_close(struct workspace *ws, bool keep);

#endif
