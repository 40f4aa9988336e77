/* fsutil.c: see fsutil.h. */
#include "fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int
remove_children(int dfd, dev_t dev, unsigned depth)
{
	DIR *d;
	struct dirent *de;
	int first = 0;

	d = fdopendir(dfd);
	if (d == NULL) {
		int e = -errno;

		close(dfd);
		return e;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		int e;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dirfd(d), de->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) < 0) {
				if (first == 0)
					first = -errno;
				continue;
			}
			if (S_ISDIR(st.st_mode)) {
				int cfd;

				if (st.st_dev != dev) {
					if (first == 0)
						first = -EXDEV;
					continue;
				}
				if (depth == 0) {
					if (first == 0)
						first = -ELOOP;
					continue;
				}
				/* Best effort: the removal reports failure. */
				if (fchmodat(dirfd(d), de->d_name,
					     (st.st_mode & 07777) | S_IRWXU, 0) < 0)
					errno = 0;
				cfd = openat(dirfd(d), de->d_name,
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						     O_CLOEXEC);
				if (cfd < 0) {
					if (first == 0)
						first = -errno;
					continue;
				}
				e = remove_children(cfd, dev, depth - 1);
				if (e < 0 && first == 0)
					first = e;
				if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0 &&
				    first == 0)
					first = -errno;
				continue;
			}
		}
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && first == 0)
			first = -errno;
	}
	if (errno != 0 && first == 0)
		first = -errno;
	closedir(d);
	return first;
}

int
remove_tree_at(int dirfd, const char *name, unsigned maxdepth)
{
	struct stat st;
	int fd, e;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	if (fchmodat(dirfd, name, (st.st_mode & 07777) | S_IRWXU, 0) < 0)
		errno = 0; /* best effort: the removal reports failure */
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = remove_children(fd, st.st_dev, maxdepth);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && e == 0)
		e = -errno;
	return e;
}
