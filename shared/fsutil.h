/* fsutil.h: small descriptor-based file helpers shared by both programs. */
#ifndef STOCKADE_FSUTIL_H
#define STOCKADE_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes all LEN bytes of DATA to FD, retrying EINTR and short writes.
 * Returns 0 or a negative errno. */
int write_all(int fd, const void *data, size_t len);

/*
 * openat(2) of PATH beneath DIR (AT_FDCWD: the working directory) with
 * FLAGS and MODE, made again while it fails with EINTR (opening a FIFO or
 * a device may be interrupted by a signal). Returns the descriptor (the
 * caller's) or -1 with errno set, as openat.
 */
int openat_eintr(int dir, const char *path, int flags, mode_t mode);

/*
 * Reads the small file PATH under DIRFD (AT_FDCWD: PATH as it is) into
 * BUF of LEN bytes (LEN >= 1): at most LEN - 1 bytes, NUL-terminated,
 * trailing newlines dropped. For the one-value files of proc(5) and
 * sysfs. Opens with O_NONBLOCK and O_NOCTTY, retries EINTR. Returns the
 * length kept, or a negative errno (-ENOENT for a file the kernel lacks
 * or a process gone).
 */
ssize_t read_small_at(int dirfd, const char *path, char *buf, size_t len);

/*
 * The whole decimal number the file PATH under DIRFD starts with (a
 * sysctl of proc(5), a cgroup v2 counter), or -1 when the file cannot be
 * read (read_small_at).
 */
long long read_number_at(int dirfd, const char *path);

/*
 * The number that follows KEY in the file FILE of process PID ("status",
 * "net/sockstat"), read through PROC_FD (a descriptor of /proc; at most
 * the first 2 KiB of the file). KEY includes the line's start, as
 * "\nVmPTE:". Returns 0 when the process is gone, the file unreadable or
 * KEY absent: for the one-line figures of proc(5), where 0 is "none".
 */
uint64_t proc_pid_number(int proc_fd, pid_t pid, const char *file,
    const char *key);

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
