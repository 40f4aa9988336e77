/* fsutil.h: small descriptor-based file helpers shared by both programs. */
#ifndef STOCKADE_FSUTIL_H
#define STOCKADE_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

/* Writes all LEN bytes of DATA to FD, retrying EINTR and short writes.
 * Returns 0 or a negative errno. */
int write_all(int fd, const void *data, size_t len);

/*
 * Removes the directory entry NAME under DIRFD and, for a directory,
 * everything below it, whatever the depth.
 *
 * Never follows a symbolic link: a symlink, FIFO, socket or device is
 * unlinked without being opened, and a directory is entered only through
 * O_NOFOLLOW|O_DIRECTORY descriptors. Never leaves the mount of NAME: a
 * directory below on another file system or mount (st_dev or the statx
 * mount id differs) is skipped and reported as -EXDEV, and the rest is
 * still removed. Directories without read, write or search permission
 * for their owner are given u+rwx first (through their descriptor, not
 * their name) so that trees a jailed program locked down can still be
 * removed.
 *
 * Holds at most 67 descriptors at once: a directory more than 64 levels
 * below NAME is not entered but renamed to a direct child of NAME called
 * ".stockade-rm-N" (never replacing an entry), and NAME is read again
 * until nothing more is moved.
 * Needs /proc mounted only to fix the permissions of a locked directory.
 *
 * Returns 0, or the first negative errno met; keeps going after an error,
 * so that as much as possible is removed. NAME itself is then still there
 * when something below it could not be removed.
 */
int remove_tree_at(int dirfd, const char *name);

/* Closes FD if >= 0, preserving errno; for cleanup attributes. */
void close_fdp(int *fd);
#define _cleanup_close_ __attribute__((cleanup(close_fdp)))

/* Frees *P; for cleanup attributes. */
void free_p(void *p);
#define _cleanup_free_ __attribute__((cleanup(free_p)))

#endif
