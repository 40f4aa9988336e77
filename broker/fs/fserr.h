/*
 * fserr.h: the stable error names of the host file API
 * (docs/architecture.md, "The host file API"; README.md, "Files in and
 * out"). The names are the same in every front (CLI, JSON-RPC, MCP) and
 * are never renamed; the numbers are internal.
 */
#ifndef STOCKADE_FSERR_H
#define STOCKADE_FSERR_H

enum fs_error {
	FS_OK = 0,
	FS_ESCAPES_WORKSPACE, /* the path leads out of the workspace */
	FS_SYMLINK_REFUSED, /* a symbolic link on the path */
	FS_NOT_REGULAR_FILE, /* a FIFO, socket or device */
	FS_HARDLINKED_FILE, /* a file with more than one hard link */
	FS_TOO_LARGE, /* over the per-file size limit */
	FS_QUOTA_EXCEEDED, /* the workspace's disk is full or over quota */
	FS_NOT_FOUND,
	FS_EXISTS, /* the target exists and overwrite was not asked */
	FS_INVALID_PATH, /* the path breaks a rule of broker/fs/wspath.h */
	FS_IO_ERROR, /* anything else */
	FS_NOT_A_DIRECTORY, /* a parent component is not a directory */
	FS_IS_A_DIRECTORY, /* the target is a directory */
	FS_NOT_EMPTY, /* a directory that is not empty */
};
#define FS_ERROR_MAX FS_NOT_EMPTY

/* The stable name of ERR ("symlink_refused"; "ok" for FS_OK; "io_error"
 * for a value out of range). Static storage. */
const char *fs_error_name(enum fs_error err);

/* A short English explanation of ERR for messages. Static storage. */
const char *fs_error_text(enum fs_error err);

/*
 * The named error for ERR, a positive errno returned by openat2(2) with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV, or by the linkat/renameat2/copy that follows:
 *   ELOOP   -> symlink_refused (RESOLVE_NO_SYMLINKS / NO_MAGICLINKS: a
 *              symlink anywhere on the path)
 *   EXDEV   -> escapes_workspace (RESOLVE_BENEATH: the lookup would leave
 *              the workspace; RESOLVE_NO_XDEV: it would cross a mount)
 *   ENOENT  -> not_found          EEXIST -> exists
 *   EFBIG, E2BIG -> too_large     EDQUOT, ENOSPC -> quota_exceeded
 *   ENOTDIR -> not_a_directory    EISDIR -> is_a_directory
 *   ENOTEMPTY -> not_empty
 *   anything else -> io_error
 * (openat2(2) lists EXDEV and ELOOP for these flags.)
 */
enum fs_error fs_error_from_errno(int err);

#endif
