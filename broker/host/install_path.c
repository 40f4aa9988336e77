/*
 * install_path.c: where the stockade binaries find each other
 * (install_path.h). The relative step lets an installed tree run where
 * it lies (issue 8): `meson install --destdir D` or `dpkg-deb -x` puts
 * D/usr/bin/stockade and D/usr/libexec/stockade/stockade-launcher, and
 * the broker finds the second from the first without D compiled in.
 */
#include "install_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

_Static_assert(PATH_MAX == 4096, "install_path.h assumes PATH_MAX 4096");

int
install_self_dir(char *dir, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		return -errno;
	if ((size_t)n >= sizeof(self) - 1)
		return -ENAMETOOLONG;
	self[n] = '\0';
	/* The kernel's mark of a binary unlinked since exec (d_path). */
	if (n > 10 && strcmp(self + n - 10, " (deleted)") == 0)
		return -ENOENT;
	if (self[0] != '/' || (slash = strrchr(self, '/')) == NULL)
		return -ENOENT;
	if (slash == self)
		slash[1] = '\0';
	else
		*slash = '\0';
	return strlcpy(dir, self, len) < len ? 0 : -ENAMETOOLONG;
}

bool
install_rel_join(char *out, const char *dir, const char *rel)
{
	const char *p = rel;
	char *slash;

	if (strlcpy(out, dir, PATH_MAX) >= PATH_MAX)
		return false;
	while (*p != '\0') {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			slash = strrchr(out, '/');
			if (slash != NULL && slash != out)
				*slash = '\0';
			else
				strlcpy(out, "/", PATH_MAX);
		} else if (!(n == 1 && p[0] == '.') && n > 0) {
			if (strcmp(out, "/") != 0 &&
			    strlcat(out, "/", PATH_MAX) >= PATH_MAX)
				return false;
			if (strlen(out) + n >= PATH_MAX)
				return false;
			strncat(out, p, n);
		}
		p += n;
		p += strspn(p, "/");
	}
	return true;
}

size_t
install_helper_paths(const char *bindir, const char *name, bool builtin,
    char paths[][4096])
{
	char dir[PATH_MAX], cand[INSTALL_PATHS_MAX][PATH_MAX];
	size_t n = 0, k = 0;

	if (snprintf(cand[n], PATH_MAX, "%s/%s", bindir, name) < PATH_MAX)
		n++;
	if (install_rel_join(dir, bindir,
		STOCKADE_BIN_TO_LIBEXEC "/stockade") &&
	    snprintf(cand[n], PATH_MAX, "%s/%s", dir, name) < PATH_MAX)
		n++;
	if (builtin &&
	    snprintf(cand[n], PATH_MAX, "%s/%s", STOCKADE_LIBEXECDIR, name) <
		PATH_MAX)
		n++;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		for (size_t j = 0; j < k; j++)
			dup = dup || strcmp(paths[j], cand[i]) == 0;
		if (!dup)
			strlcpy(paths[k++], cand[i], PATH_MAX);
	}
	return k;
}

int
install_open_exe(const char *path)
{
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 0111) == 0) {
		close(fd);
		return -EACCES;
	}
	return fd;
}

int
install_open_helper(const char *bindir, const char *name, bool builtin,
    char *found, size_t foundlen, char *tried, size_t triedlen)
{
	char self[PATH_MAX], paths[INSTALL_PATHS_MAX][PATH_MAX];
	size_t n = 0;
	int fd = -ENOENT, e;

	if (tried != NULL && triedlen > 0)
		tried[0] = '\0';
	if (bindir == NULL) {
		if ((e = install_self_dir(self, sizeof(self))) == 0)
			bindir = self;
		else if (tried != NULL && triedlen > 0)
			snprintf(tried, triedlen, "(/proc/self/exe: %s)",
			    strerror(-e));
	}
	if (bindir != NULL)
		n = install_helper_paths(bindir, name, builtin, paths);
	else if (builtin) {
		snprintf(paths[0], PATH_MAX, "%s/%s", STOCKADE_LIBEXECDIR,
		    name);
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		if ((fd = install_open_exe(paths[i])) >= 0) {
			if (found != NULL && foundlen > 0)
				strlcpy(found, paths[i], foundlen);
			return fd;
		}
		if (tried != NULL && triedlen > 0) {
			if (tried[0] != '\0')
				strlcat(tried, ", ", triedlen);
			strlcat(tried, paths[i], triedlen);
		}
	}
	return fd;
}
