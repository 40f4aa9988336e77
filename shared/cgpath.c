/* cgpath.c: see cgpath.h. */
#include "cgpath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- cg_mountinfo_cgroup2 ---- */

/* Decodes the N bytes at S, with mountinfo's "\ooo" escapes, into OUT:
 * 1; 0 for an empty field or a decoded NUL; -ENAMETOOLONG when it does
 * not fit. OUT holds "" unless it returns 1. */
static int
unescape(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	if (outlen > 0)
		out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && n - i >= 4 && s[i + 1] >= '0' &&
		    s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 +
			    (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (c == '\0' || o + 1 >= outlen) {
			if (outlen > 0)
				out[0] = '\0';
			return c == '\0' ? 0 : -ENAMETOOLONG;
		}
		out[o++] = c;
	}
	if (o == 0)
		return 0;
	out[o] = '\0';
	return 1;
}

int
cg_mountinfo_cgroup2(const char *line, char *root, size_t rootlen, char *mnt,
    size_t mntlen)
{
	const char *p = line, *f[5] = {NULL}, *type = NULL;
	size_t fl[5] = {0}, typelen = 0;
	bool sep = false;
	int r;

	if (root != NULL && rootlen > 0)
		root[0] = '\0';
	if (mntlen > 0)
		mnt[0] = '\0';
	/* Fields separated by single spaces: five, the options, optional
	 * fields up to the "-" separator, then the type. */
	for (int field = 0; *p != '\0' && *p != '\n' && type == NULL; field++) {
		const char *s = p;
		size_t n = strcspn(p, " \n");

		p += n;
		if (*p == ' ')
			p++;
		if (field < 5) {
			f[field] = s;
			fl[field] = n;
		} else if (field > 5 && !sep) {
			sep = n == 1 && *s == '-';
		} else if (sep) {
			type = s;
			typelen = n;
		}
	}
	if (type == NULL || typelen != 7 || memcmp(type, "cgroup2", 7) != 0)
		return 0;
	if (root != NULL && (r = unescape(f[3], fl[3], root, rootlen)) != 1)
		return r;
	if ((r = unescape(f[4], fl[4], mnt, mntlen)) != 1) {
		if (root != NULL)
			root[0] = '\0';
		return r;
	}
	return 1;
}

/* ---- cg_own_path ---- */

/* If the cgroup2 mount of the mountinfo line L shows the cgroup CG,
 * writes its directory into OUT and returns 1; 0 when it does not; < 0
 * on error. */
static int
mount_shows(const char *l, const char *cg, char *out, size_t outlen)
{
	char root[PATH_MAX], mnt[PATH_MAX];
	size_t rl;
	int r;

	r = cg_mountinfo_cgroup2(l, root, sizeof(root), mnt, sizeof(mnt));
	if (r <= 0)
		return r;
	/* The part of CG below the mount's root, "" for the root itself. */
	rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
	if (strncmp(cg, root, rl) != 0 || (cg[rl] != '/' && cg[rl] != '\0'))
		return 0;
	cg += rl;
	if (strcmp(cg, "/") == 0)
		cg = "";
	if (strcmp(mnt, "/") == 0 && *cg != '\0')
		mnt[0] = '\0';
	r = snprintf(out, outlen, "%s%s", mnt, cg);
	if (r < 0 || (size_t)r >= outlen)
		return -ENAMETOOLONG;
	return 1;
}

int
cg_own_path(const char *proc_self_cgroup, const char *mountinfo, char *out,
    size_t outlen)
{
	static const char deleted[] = " (deleted)";
	char cg[PATH_MAX], best[PATH_MAX];
	const char *l, *nl, *path = NULL;
	size_t len = 0;
	int found = -ENOENT, r;

	if (outlen > 0)
		out[0] = '\0';
	for (l = proc_self_cgroup; *l != '\0'; l = *nl ? nl + 1 : nl) {
		nl = strchrnul(l, '\n');
		if (nl - l >= 3 && strncmp(l, "0::", 3) == 0) {
			path = l + 3;
			len = (size_t)(nl - path);
			break;
		}
	}
	if (path == NULL || len == 0 || path[0] != '/')
		return -ENOENT;
	if (len >= sizeof(cg))
		return -ENAMETOOLONG;
	if (len >= sizeof(deleted) - 1 &&
	    memcmp(path + len - (sizeof(deleted) - 1), deleted,
		sizeof(deleted) - 1) == 0)
		return -ENOENT;
	memcpy(cg, path, len);
	cg[len] = '\0';

	for (l = mountinfo; *l != '\0'; l = *nl ? nl + 1 : nl) {
		nl = strchrnul(l, '\n');
		r = mount_shows(l, cg, best, sizeof(best));
		if (r < 0)
			return r;
		if (r == 1) {
			if (strlen(best) >= outlen)
				return -ENAMETOOLONG;
			strcpy(out, best);
			found = 0; /* the last one wins */
		}
	}
	return found;
}

/* Reads all of PATH into a new NUL-terminated buffer (*BUF, the caller
 * frees it), at most MAX bytes. Returns 0 or a negative errno (-EFBIG
 * past MAX). */
static int
read_all(const char *path, size_t max, char **buf)
{
	size_t size = 4096, len = 0;
	char *b = NULL, *nb;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), e = 0;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	for (;;) {
		if (b == NULL || len + 1 == size) {
			if (b != NULL)
				size *= 2;
			if (size > max) {
				e = -EFBIG;
				break;
			}
			if ((nb = realloc(b, size)) == NULL) {
				e = -ENOMEM;
				break;
			}
			b = nb;
		}
		n = read(fd, b + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (e < 0) {
		free(b);
		return e;
	}
	b[len] = '\0';
	*buf = b;
	return 0;
}

int
cg_own_path_self(char *out, size_t outlen)
{
	char *cg = NULL, *mi = NULL;
	int e;

	if ((e = read_all("/proc/self/cgroup", 1u << 16, &cg)) == 0 &&
	    (e = read_all("/proc/self/mountinfo", 1u << 24, &mi)) == 0)
		e = cg_own_path(cg, mi, out, outlen);
	free(cg);
	free(mi);
	return e;
}

bool
cg_has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; *p != '\0';) {
		size_t n = strcspn(p, " \n");

		if (n == wl && memcmp(p, word, wl) == 0)
			return true;
		p += n;
		p += strspn(p, " \n");
	}
	return false;
}
