/* fserr.c: the host file API's error names (fserr.h). Pure. */
#include <errno.h>

#include "fserr.h"

static const char *const names[] = {
    [FS_OK] = "ok",
    [FS_ESCAPES_WORKSPACE] = "escapes_workspace",
    [FS_SYMLINK_REFUSED] = "symlink_refused",
    [FS_NOT_REGULAR_FILE] = "not_regular_file",
    [FS_HARDLINKED_FILE] = "hardlinked_file",
    [FS_TOO_LARGE] = "too_large",
    [FS_QUOTA_EXCEEDED] = "quota_exceeded",
    [FS_NOT_FOUND] = "not_found",
    [FS_EXISTS] = "exists",
    [FS_INVALID_PATH] = "invalid_path",
    [FS_IO_ERROR] = "io_error",
    [FS_NOT_A_DIRECTORY] = "not_a_directory",
    [FS_IS_A_DIRECTORY] = "is_a_directory",
    [FS_NOT_EMPTY] = "not_empty",
};

static const char *const texts[] = {
    [FS_OK] = "success",
    [FS_ESCAPES_WORKSPACE] = "the path leads out of the workspace",
    [FS_SYMLINK_REFUSED] = "the path goes through a symbolic link",
    [FS_NOT_REGULAR_FILE] = "not a regular file (a FIFO, socket or device)",
    [FS_HARDLINKED_FILE] = "the file has more than one hard link",
    [FS_TOO_LARGE] = "the file is larger than the per-file limit",
    [FS_QUOTA_EXCEEDED] = "the workspace is full",
    [FS_NOT_FOUND] = "no such file or directory",
    [FS_EXISTS] = "the file exists (use --overwrite to replace it)",
    [FS_INVALID_PATH] = "the path is not a valid workspace path",
    [FS_IO_ERROR] = "input/output error",
    [FS_NOT_A_DIRECTORY] = "a component of the path is not a directory",
    [FS_IS_A_DIRECTORY] = "the target is a directory",
    [FS_NOT_EMPTY] = "the directory is not empty (ask for a recursive "
		     "removal)",
};

const char *
fs_error_name(enum fs_error err)
{
	if ((unsigned)err > FS_ERROR_MAX)
		return names[FS_IO_ERROR];
	return names[err];
}

const char *
fs_error_text(enum fs_error err)
{
	if ((unsigned)err > FS_ERROR_MAX)
		return texts[FS_IO_ERROR];
	return texts[err];
}

enum fs_error
fs_error_from_errno(int err)
{
	switch (err) {
	case 0:
		return FS_OK;
	case ELOOP:
		return FS_SYMLINK_REFUSED;
	case EXDEV:
		return FS_ESCAPES_WORKSPACE;
	case ENOENT:
		return FS_NOT_FOUND;
	case EEXIST:
		return FS_EXISTS;
	case EFBIG:
	case E2BIG:
		return FS_TOO_LARGE;
	case EDQUOT:
	case ENOSPC:
		return FS_QUOTA_EXCEEDED;
	case ENOTDIR:
		return FS_NOT_A_DIRECTORY;
	case EISDIR:
		return FS_IS_A_DIRECTORY;
	case ENOTEMPTY:
		return FS_NOT_EMPTY;
	default:
		return FS_IO_ERROR;
	}
}
