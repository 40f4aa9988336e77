/*
 * checkpoint_store.c: reading the old state of a path into the
 * checkpoint store (checkpoint_internal.h, ckpt_read_state). Every
 * lookup in the workspace is by descriptor beneath the workspace, never
 * through a symlink (fsapi_open_parent, fsapi_openat2,
 * fsapi_open_regular_at); every file of the store is made by openat on
 * its directory's descriptor, O_EXCL, mode 0600.
 */
#include "checkpoint.h"
#include "checkpoint_internal.h"
#include "fsapi_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "wspath.h"

/* A record being read. */
struct saver {
	struct ckpt_store *st;
	struct ckpt_rec *rec;
	size_t cap;
	unsigned depth;
};

/*
 * Adds an item of KIND at REL (copied) with the mode and mtime of S (may
 * be NULL: absent) to SV's record, counted as an entry of the store.
 * *OUT gets it. Returns 0, -EDQUOT past the store's entries, -ENOMEM.
 */
static int
item_push(struct saver *sv, const char *rel, enum ckpt_kind kind,
    const struct stat *s, struct ckpt_item **out)
{
	struct ckpt_rec *rec = sv->rec;
	struct ckpt_item *it;

	if (sv->st->entries >= sv->st->lim.max_entries)
		return -EDQUOT;
	if (rec->nitems == sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 4;
		struct ckpt_item *n = realloc(rec->items, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		rec->items = n;
		sv->cap = cap;
	}
	it = &rec->items[rec->nitems];
	memset(it, 0, sizeof(*it));
	if ((it->rel = strdup(rel)) == NULL)
		return -ENOMEM;
	it->kind = kind;
	if (s != NULL) {
		it->mode = s->st_mode & 07777;
		it->mtime = s->st_mtim;
	}
	rec->nitems++;
	sv->st->entries++;
	*out = it;
	return 0;
}

/* Copies all of IN (a regular file of SIZE bytes) into OUT: a clone
 * where the file systems share extents, else a kernel copy. Returns 0
 * or a negative errno. */
static int
copy_content(int in, int out, uint64_t size)
{
	uint64_t copied = 0;
	bool out_side;
	int r;

	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	if (lseek(in, 0, SEEK_SET) < 0)
		return -errno;
	r = fsapi_copy_fd(in, out, size, &copied, &out_side);
	return r < 0 ? r : 0;
}

/* The regular file NAME in DIRFD (stat S) as REL: its content into a
 * new store file. */
static int
save_file(struct saver *sv, int dirfd, const char *name, const char *rel,
    const struct stat *s)
{
	struct ckpt_store *st = sv->st;
	_cleanup_close_ int in = -1;
	_cleanup_close_ int out = -1;
	struct ckpt_item *it;
	enum fs_error why;
	struct stat is, os;
	char bname[24];
	uint64_t blob;
	int r;

	if (s->st_nlink > 1 && !st->lim.allow_hardlinks)
		return item_push(sv, rel, CK_SKIPPED, s, &it);
	in = fsapi_open_regular_at(dirfd, name, true, &is, &why);
	if (in < 0)
		return in;
	if ((uint64_t)is.st_size > st->lim.max_bytes - st->bytes ||
	    st->bytes > st->lim.max_bytes)
		return -EDQUOT;
	blob = st->next_blob++;
	snprintf(bname, sizeof(bname), "%016llx", (unsigned long long)blob);
	out = openat(st->dirfd, bname,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	if ((r = copy_content(in, out, (uint64_t)is.st_size)) < 0 ||
	    (r = fstat(out, &os) < 0 ? -errno : 0) < 0 ||
	    (r = item_push(sv, rel, CK_FILE, &is, &it)) < 0) {
		(void)unlinkat(st->dirfd, bname, 0);
		return r;
	}
	it->blob = blob;
	it->size = (uint64_t)os.st_size;
	st->bytes += it->size;
	return 0;
}

/* The symlink NAME in DIRFD (stat S) as REL: its target. */
static int
save_symlink(struct saver *sv, int dirfd, const char *name, const char *rel,
    const struct stat *s)
{
	struct ckpt_store *st = sv->st;
	struct ckpt_item *it;
	char target[4097];
	ssize_t n;
	int r;

	n = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if ((uint64_t)n > st->lim.max_bytes - st->bytes ||
	    st->bytes > st->lim.max_bytes)
		return -EDQUOT;
	if ((r = item_push(sv, rel, CK_SYMLINK, s, &it)) < 0)
		return r;
	if ((it->target = strdup(target)) == NULL)
		return -ENOMEM;
	st->bytes += (uint64_t)n;
	return 0;
}

static int save_entry(struct saver *sv, int dirfd, const char *name,
    const char *rel, const struct stat *s);

/* The names in the directory FD (a real descriptor, borrowed) into
 * *NAMES (an array of *N strings, all the caller's). */
static int
read_names(int fd, char ***names, size_t *n)
{
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	size_t cap = 0;
	struct dirent *d;
	DIR *dir;
	int r = 0;

	*names = NULL;
	*n = 0;
	if (dfd < 0 || (dir = fdopendir(dfd)) == NULL) {
		r = -errno;
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	while ((errno = 0, d = readdir(dir)) != NULL && r == 0) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			char **g = realloc(*names,
			    (cap = cap ? cap * 2 : 16) * sizeof(*g));

			if (g == NULL) {
				r = -ENOMEM;
				break;
			}
			*names = g;
		}
		if (((*names)[*n] = strdup(d->d_name)) == NULL)
			r = -ENOMEM;
		else
			(*n)++;
	}
	if (r == 0 && errno != 0)
		r = -errno;
	closedir(dir);
	return r;
}

/* What the directory DIRFD (O_PATH, borrowed) at REL holds, each entry
 * saved below REL. */
static int
save_tree(struct saver *sv, int dirfd, const char *rel)
{
	_cleanup_close_ int fd = -1;
	char **names = NULL;
	size_t n = 0, i;
	int r;

	if (++sv->depth > WSPATH_MAX_DEPTH)
		return -ELOOP;
	do /* a real descriptor of that very directory (fsops_mkdir.c) */
		fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	r = read_names(fd, &names, &n);
	for (i = 0; r == 0 && i < n; i++) {
		_cleanup_free_ char *child = NULL;
		struct stat s;

		if (asprintf(&child, "%s%s%s", rel, rel[0] ? "/" : "",
			names[i]) < 0) {
			child = NULL;
			r = -ENOMEM;
		} else if (fstatat(fd, names[i], &s, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errno == ENOENT ? 0 : -errno;
		} else {
			r = save_entry(sv, fd, names[i], child, &s);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	sv->depth--;
	return r;
}

/* The entry NAME in DIRFD (stat S) as REL, by its type. */
static int
save_entry(struct saver *sv, int dirfd, const char *name, const char *rel,
    const struct stat *s)
{
	_cleanup_close_ int sub = -1;
	struct ckpt_item *it;
	int r;

	switch (s->st_mode & S_IFMT) {
	case S_IFREG:
		return save_file(sv, dirfd, name, rel, s);
	case S_IFLNK:
		return save_symlink(sv, dirfd, name, rel, s);
	case S_IFDIR:
		if ((r = item_push(sv, rel, CK_DIR, s, &it)) < 0)
			return r;
		/* Beneath the parent, never through a link swapped in. */
		sub = fsapi_openat2(dirfd, name, O_PATH | O_DIRECTORY, 0);
		if (sub < 0)
			return sub;
		return save_tree(sv, sub, rel);
	default:
		return item_push(sv, rel, CK_SKIPPED, s, &it);
	}
}

/* The shallowest prefix of PATH beneath ROOT that does not exist into
 * *LEN (bytes of PATH). Returns 0, 1 when a prefix is not a directory
 * or is a link (the operation will fail), or a negative errno. */
static int
missing_prefix(int root, const char *path, size_t *len)
{
	char buf[4097];
	size_t n = strlen(path);
	int fd;

	if (n >= sizeof(buf))
		return 1;
	memcpy(buf, path, n + 1);
	for (size_t i = 0; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		fd = fsapi_openat2(root, buf, O_PATH, 0);
		if (fd >= 0) {
			close(fd);
			buf[i] = path[i];
			continue;
		}
		if (fd != -ENOENT)
			return 1;
		*len = i;
		return 0;
	}
	return 1;
}

/* A new, empty record for the first LEN bytes of PATH into SV. */
static int
rec_new(struct saver *sv, const char *path, size_t len)
{
	sv->rec = calloc(1, sizeof(*sv->rec));
	if (sv->rec == NULL || (sv->rec->path = strndup(path, len)) == NULL)
		return -ENOMEM;
	return 0;
}

int
ckpt_read_state(struct ckpt_store *st, int root, const char *path,
    struct ckpt_rec **out)
{
	struct saver sv = {.st = st};
	_cleanup_close_ int dirfd = -1;
	struct ckpt_item *it;
	enum fs_error why;
	const char *name;
	size_t len = strlen(path);
	struct stat s;
	int r;

	*out = NULL;
	dirfd = fsapi_open_parent(root, path, NULL, &name, &why);
	if (dirfd == -ENOENT && (r = missing_prefix(root, path, &len)) != 0)
		return r;
	if (dirfd < 0 && dirfd != -ENOENT)
		return 1;
	if ((r = rec_new(&sv, path, len)) < 0)
		goto fail;
	if (dirfd < 0 || fstatat(dirfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0) {
		if (dirfd >= 0 && errno != ENOENT) {
			r = -errno;
			goto fail;
		}
		r = item_push(&sv, "", CK_ABSENT, NULL, &it);
	} else {
		r = save_entry(&sv, dirfd, name, "", &s);
	}
	if (r < 0)
		goto fail;
	*out = sv.rec;
	return 0;
fail:
	if (sv.rec != NULL && sv.rec->path == NULL) {
		free(sv.rec);
		sv.rec = NULL;
	}
	ckpt_rec_free(st, sv.rec);
	return r;
}
