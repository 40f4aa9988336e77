/* fsutil.c: see fsutil.h. */
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int
openat_eintr(int dir, const char *path, int flags, mode_t mode)
{
	int fd;

	do
		fd = openat(dir, path, flags, mode);
	while (fd < 0 && errno == EINTR);
	return fd;
}

int
write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void
close_fdp(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
		*fd = -1;
	}
}

void
free_p(void *p)
{
	free(*(void **)p);
}

/*
 * Removal of a tree of any depth with a bounded number of descriptors.
 *
 * The walk holds one directory stream per level, but never more than
 * RM_MAX_LEVELS below the top: a directory met at that depth is not
 * descended but renamed (renameat2 RENAME_NOREPLACE) to a new direct
 * child of the top directory, ".stockade-rm-N", and the top level is read
 * again until a pass finds nothing more to move. Every move lifts a
 * subtree RM_MAX_LEVELS levels up, so the passes end; a pass that moves
 * nothing has seen every entry. Recursion is bounded by the same figure.
 *
 * Nothing here follows a symbolic link: entries are examined with
 * AT_SYMLINK_NOFOLLOW, non-directories (symlinks, FIFOs, sockets,
 * devices) are unlinked without being opened, and a directory is reached
 * with O_PATH|O_NOFOLLOW|O_DIRECTORY, then reopened as "." relative to
 * that descriptor, so a name swapped for a symlink between the check and
 * the use is refused (ENOTDIR) rather than followed.
 */
#define RM_MAX_LEVELS 64u

struct rm_walk {
	int top; /* the directory being emptied (borrowed) */
	dev_t dev; /* its file system */
	uint64_t mnt_id; /* its mount (statx STATX_MNT_ID), when known */
	bool have_mnt_id;
	unsigned long next; /* suffix of the next ".stockade-rm-N" */
	unsigned moved; /* subtrees moved up during this pass */
	int first; /* first error met, 0 if none */
};

static void
rm_error(struct rm_walk *w, int e)
{
	if (w->first == 0 && e < 0)
		w->first = e;
}

/*
 * Opens the directory NAME under DFD as an O_PATH descriptor without
 * following a symlink, checks that it lies on the walk's mount (else
 * -EXDEV) and gives it u+rwx when it lacks them. Returns the descriptor
 * or a negative errno.
 */
static int
rm_prepare_dir(struct rm_walk *w, int dfd, const char *name)
{
	struct statx stx;
	int pfd, e;

	pfd = openat_eintr(dfd, name,
	    O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC, 0);
	if (pfd < 0)
		return -errno;
	if (statx(pfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		STATX_TYPE | STATX_MODE | STATX_MNT_ID, &stx) < 0) {
		e = -errno;
		close(pfd);
		return e;
	}
	/* A mount point below the top: never enter or move it. */
	if (makedev(stx.stx_dev_major, stx.stx_dev_minor) != w->dev ||
	    (w->have_mnt_id && (stx.stx_mask & STATX_MNT_ID) != 0 &&
		stx.stx_mnt_id != w->mnt_id)) {
		close(pfd);
		return -EXDEV;
	}
	if ((stx.stx_mode & S_IRWXU) != S_IRWXU) {
		char proc[64];

		/* fchmod refuses O_PATH descriptors and fchmodat would look
		 * the name up again; the descriptor's /proc entry names this
		 * very inode. Exactly u+rwx: the directory is about to go,
		 * and a confined broker may only chmod to owner bits
		 * (broker/host/confine.h). Best effort: the removal reports
		 * failure. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		(void)chmod(proc, S_IRWXU);
	}
	return pfd;
}

static void rm_children(struct rm_walk *w, int dfd, unsigned level);

/* Removes the directory NAME under DFD, LEVEL levels below the top. */
static void
rm_dir(struct rm_walk *w, int dfd, const char *name, unsigned level)
{
	int pfd, fd;

	pfd = rm_prepare_dir(w, dfd, name);
	if (pfd < 0) {
		rm_error(w, pfd);
		return;
	}
	if (level >= RM_MAX_LEVELS) {
		/* Too deep to descend: lift it to the top, where a later
		 * pass removes it. Moving a directory to another parent
		 * needs write permission on it, which rm_prepare_dir gave. */
		char to[40];
		int e;

		close(pfd);
		do {
			snprintf(to, sizeof(to), ".stockade-rm-%lu", w->next++);
			e = renameat2(dfd, name, w->top, to, RENAME_NOREPLACE);
		} while (e < 0 && errno == EEXIST);
		if (e < 0)
			rm_error(w, -errno);
		else
			w->moved++;
		return;
	}
	/* "." from the O_PATH descriptor is the directory just checked. */
	fd = openat_eintr(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	close(pfd);
	if (fd < 0) {
		rm_error(w, -errno);
		return;
	}
	rm_children(w, fd, level + 1);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0)
		rm_error(w, -errno);
}

/* Removes the entries of the directory DFD (taken over and closed), which
 * lies LEVEL levels below the top (the top itself is level 0). */
static void
rm_children(struct rm_walk *w, int dfd, unsigned level)
{
	struct dirent *de;
	DIR *d;

	d = fdopendir(dfd);
	if (d == NULL) {
		rm_error(w, -errno);
		close(dfd);
		return;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		    0) {
			rm_error(w, -errno);
			continue;
		}
		if (S_ISDIR(st.st_mode))
			rm_dir(w, dirfd(d), de->d_name, level);
		else if (unlinkat(dirfd(d), de->d_name, 0) < 0)
			rm_error(w, -errno);
	}
	if (errno != 0)
		rm_error(w, -errno);
	closedir(d);
}

int
remove_tree_at(int dirfd, const char *name)
{
	struct rm_walk w;
	struct statx stx;
	struct stat st;
	int pfd, top;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;

	memset(&w, 0, sizeof(w));
	w.top = -1;
	w.dev = st.st_dev;
	/* The top's own mount is the one the walk stays on. */
	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID) != 0) {
		w.mnt_id = stx.stx_mnt_id;
		w.have_mnt_id = true;
	}
	pfd = rm_prepare_dir(&w, dirfd, name);
	if (pfd < 0)
		return pfd;
	top = openat_eintr(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	close(pfd);
	if (top < 0)
		return -errno;
	w.top = top;
	do {
		int fd;

		w.moved = 0;
		/* A fresh descriptor per pass: rm_children closes it, and a
		 * new stream sees what the last pass moved up. */
		fd = openat_eintr(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		    0);
		if (fd < 0) {
			rm_error(&w, -errno);
			break;
		}
		rm_children(&w, fd, 0);
	} while (w.moved > 0);
	close(top);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
		rm_error(&w, -errno);
	return w.first;
}

ssize_t
read_small_at(int dirfd, const char *path, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat_eintr(dirfd, path,
	    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	while (got > 0 && buf[got - 1] == '\n')
		got--;
	buf[got] = '\0';
	return (ssize_t)got;
}

long long
read_number_at(int dirfd, const char *path)
{
	char buf[64];

	if (read_small_at(dirfd, path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

uint64_t
proc_pid_number(int proc_fd, pid_t pid, const char *file, const char *key)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "%d/%s", (int)pid, file);
	if (read_small_at(proc_fd, path, buf, sizeof(buf)) <= 0 ||
	    (p = strstr(buf, key)) == NULL)
		return 0;
	return (uint64_t)strtoull(p + strlen(key), NULL, 10);
}
