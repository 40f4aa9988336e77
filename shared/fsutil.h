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
 * everything below it, never following a symbolic link and never leaving
 * the file system of DIRFD (a mount point below is an error, -EXDEV).
 * Directories without write or search permission for their owner are
 * given it first (fchmod) so that trees a jailed program locked down can
 * still be removed. Returns 0 or the first negative errno met; keeps
 * going after an error. Depth is bounded by MAXDEPTH (-ELOOP past it).
 */
int remove_tree_at(int dirfd, const char *name, unsigned maxdepth);

/* Closes FD if >= 0, preserving errno; for cleanup attributes. */
void close_fdp(int *fd);
#define _cleanup_close_ __attribute__((cleanup(close_fdp)))

/* Frees *P; for cleanup attributes. */
void free_p(void *p);
#define _cleanup_free_ __attribute__((cleanup(free_p)))

#endif
