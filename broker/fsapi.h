/*
 * fsapi.h: the broker's host file API against the workspace directory
 * (docs/architecture.md, "The host file API"; issue 3).
 *
 * The jailed program shares the workspace and is hostile: it may plant
 * symlinks, FIFOs, hard links and huge or sparse files, and race the
 * broker. Every path is therefore checked as a string (shared/wspath.h)
 * and then resolved once, by openat2 from ROOT (the O_DIRECTORY
 * descriptor the broker opened at start-up, workspace_open) with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV. Every later step (fstat, linkat, renameat2, unlinkat)
 * is relative to a descriptor already resolved: nothing looks a path up
 * twice, and nothing is a check followed by a use of a path.
 *
 * Errors: functions return 0 (or a descriptor) or a negative errno, and
 * those that take WHY set it to the stable named error (shared/fserr.h)
 * the client sees. They never log and never exit (style.md rule 13).
 */
#ifndef STOCKADE_FSAPI_H
#define STOCKADE_FSAPI_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fserr.h"

/*
 * Opens PATH (NUL-terminated, workspace-relative, checked by wspath_check
 * with the default limits) beneath ROOT with openat2(FLAGS | O_CLOEXEC,
 * MODE) and RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
 * | RESOLVE_NO_XDEV. Returns a descriptor the caller owns, or a negative
 * errno: -EINVAL for a path wspath refuses, -ELOOP for a symlink anywhere
 * on the path, -EXDEV for a lookup that would leave ROOT or its mount,
 * -ENOSYS when the kernel has no openat2 (a refusal: never fall back),
 * else what openat2(2) says. fs_error_from_errno names them.
 */
int fsapi_open_beneath(int root, const char *path, int flags, mode_t mode);

/*
 * Copies the regular file PATH beneath ROOT to OUT_FD (a blocking
 * descriptor the caller owns and keeps: a file, pipe or socket), adding
 * the number of bytes written to *COPIED (set to 0 first).
 *
 * The file is opened O_RDONLY | O_NONBLOCK | O_NOCTTY (a FIFO cannot
 * block the open, and it is refused by fstat before any read), then its
 * descriptor is checked: anything but a regular file is not_regular_file
 * (a directory is_a_directory); more than one hard link is hardlinked_file
 * (the same inode may be a file outside the workspace the job linked);
 * st_size over MAX_BYTES is too_large, decided on the descriptor without
 * reading. At most MAX_BYTES bytes are copied, even if the file grows
 * meanwhile: a file that grows past the limit ends at MAX_BYTES.
 * copy_file_range is used where the kernel can (same file system), else
 * read/write through a 64 KiB buffer.
 *
 * Returns 0 with *WHY = FS_OK, or a negative errno with *WHY set:
 * invalid_path, symlink_refused, escapes_workspace, not_found,
 * not_a_directory, is_a_directory, not_regular_file, hardlinked_file,
 * too_large, io_error (also for a failure writing OUT_FD, after which
 * OUT_FD holds part of the file).
 */
int fsapi_read(int root, const char *path, uint64_t max_bytes, int out_fd,
	       uint64_t *copied, enum fs_error *why);

/*
 * Writes everything read from IN_FD (until end of file; the caller owns
 * and keeps it) as the file PATH beneath ROOT, atomically: never in
 * place. The parent directory of PATH is resolved once with
 * fsapi_open_beneath(O_PATH | O_DIRECTORY); the data goes to an unnamed
 * O_TMPFILE in it (or, where the file system lacks O_TMPFILE, a random
 * name ".stockade-tmp-XXXXXXXXXXXXXXXX" created O_EXCL | O_NOFOLLOW) and
 * becomes visible only by linkat (without OVERWRITE: exists if the name
 * is taken) or renameat2 (with OVERWRITE). The final name is never
 * opened: a symlink or FIFO planted there is replaced, never written
 * through; a directory there is is_a_directory (renameat2 refuses to
 * replace a directory with a file: EISDIR).
 *
 * MODE: permission bits of the new file, masked with 0777 (never setuid,
 * setgid or sticky) and set with fchmod, so the umask does not apply.
 * When the caller is root, the file is given the owner and group of ROOT
 * (the job runs as the workspace's owner, workspace.h).
 *
 * More than MAX_BYTES bytes from IN_FD is too_large (at most MAX_BYTES + 1
 * are read). Any failure, including too_large and a full disk, leaves no
 * file and no temporary name behind; with O_TMPFILE, so does a broker
 * killed midway (the unnamed file is freed with its descriptor).
 *
 * Returns 0 with *WHY = FS_OK, or a negative errno with *WHY set:
 * invalid_path, symlink_refused, escapes_workspace, not_found (no parent
 * directory), not_a_directory, is_a_directory, exists, too_large,
 * quota_exceeded, io_error (also for a failure reading IN_FD).
 */
int fsapi_write(int root, const char *path, int in_fd, uint64_t max_bytes,
		mode_t mode, bool overwrite, enum fs_error *why);

#endif
