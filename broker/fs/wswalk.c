/*
 * wswalk.c: the bounded, descriptor-based walk of a hostile workspace
 * (wswalk.h; issue 3).
 *
 * The walk is a stack of levels, one per directory being read, each with
 * the directory's descriptor and its names. A directory's names are read
 * whole with getdents64(2), then sorted, so the order does not depend on
 * the file system; the names of every level live in one growing byte
 * buffer and their offsets in one growing array, stacked: a level's names
 * are pushed after its parent's and dropped when it is done. Memory is
 * therefore a handful of allocations however many entries there are, and
 * under MAX_ENTRIES a level keeps no more names than could still be
 * reported (it sorts and drops the rest as it reads: a directory of ten
 * million names costs what the bound allows, not ten million names).
 *
 * Every directory is entered by openat2 of one name beneath its parent's
 * descriptor, never through a link nor across a mount, and the directory
 * entered must be the one just reported (same st_dev and st_ino):
 * whatever the job swaps in between is skipped, never walked.
 */
#include "wswalk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENTS_BUF 32768 /* one getdents64 call, bytes */
#define OPEN_TRIES 8 /* openat2 answers EAGAIN to a racing rename */

struct level {
	int fd; /* the directory, O_RDONLY */
	size_t first; /* its first name's index in w->offs */
	size_t n; /* how many names it holds */
	size_t next; /* index of the next name to report */
	size_t names_at; /* its first byte in w->names */
	size_t pathlen; /* length of its path in w->path */
	unsigned depth; /* depth of the entries it holds */
	bool pruned; /* names dropped over the entry bound */
	bool denied; /* on_denied already told of this one */
};

struct walk {
	const struct wswalk_opts *o;
	struct wswalk_stats *st;
	wswalk_fn fn;
	void *arg;
	size_t reported;
	char *names; /* NUL-terminated names, stacked by level */
	size_t nlen, ncap;
	size_t *offs; /* offsets into names, stacked by level */
	size_t olen, ocap;
	char *path; /* prefix/dir/.../name of the entry */
	size_t pcap;
	struct level *lv;
	size_t nlv, lcap;
	char *dents; /* DENTS_BUF bytes for getdents64 */
};

/* Grows *P (of *CAP elements of SIZE bytes) to hold at least NEED.
 * Returns 0 or -ENOMEM. */
static int
grow(void *p, size_t *cap, size_t need, size_t size)
{
	void **pp = p;
	size_t ncap = *cap ? *cap : 64;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / size)
			return -ENOMEM;
		ncap *= 2;
	}
	if ((n = reallocarray(*pp, ncap, size)) == NULL)
		return -ENOMEM;
	*pp = n;
	*cap = ncap;
	return 0;
}

/*
 * Opens the directory NAME (one component, or ".") beneath DIRFD: never
 * through a symlink (ELOOP), a magic link, or onto another mount (EXDEV);
 * O_DIRECTORY refuses anything but a directory (ENOTDIR) before it is
 * opened, so a FIFO planted there cannot block. Returns an fd or -errno.
 */
static int
open_dir(int dirfd, const char *name)
{
	struct open_how how;
	long fd = -1;
	int i;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	for (i = 0; i < OPEN_TRIES; i++) {
		fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		if (fd >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
	}
	return fd < 0 ? -errno : (int)fd;
}

/* Whether ERR, from looking up or entering an entry, means the job changed
 * it under the walk: skipped, not a failure. */
static bool
is_race(int err)
{
	switch (err) {
	case -ENOENT: /* vanished */
	case -ENOTDIR: /* no longer a directory */
	case -ELOOP: /* now a symlink */
	case -EXDEV: /* now another mount */
	case -EAGAIN: /* renames racing openat2 past OPEN_TRIES */
		return true;
	default:
		return false;
	}
}

/* Whether ERR means the job locked the entry away with its modes (a
 * broker that is not root): counted as denied, not a failure, and never
 * mistaken for a race (what it hides still exists). */
static bool
is_denied(int err)
{
	return err == -EACCES || err == -EPERM;
}

/* Counts ERR as a race or a denial. Returns 0 when it was one, else ERR. */
static int
tolerate(struct walk *w, int err)
{
	if (is_denied(err))
		w->st->denied++;
	else if (is_race(err))
		w->st->skipped++;
	else
		return err;
	return 0;
}

/* Whether the caller asked the walk to stop (OPTS->interrupted). */
static bool
stopped(const struct walk *w)
{
	return w->o->interrupted != NULL && w->o->interrupted() != 0;
}

/*
 * Enters the directory NAME in DIRFD that fstatat described as SB:
 * *FD gets its descriptor. Returns 0, 1 when it changed since (the job
 * swapped it: counted as skipped) or -errno.
 */
static int
enter(struct walk *w, int dirfd, const char *name, const struct stat *sb,
    int *fd)
{
	struct stat cur;
	int r;

	*fd = -1;
	r = w->o->open_dir != NULL ? w->o->open_dir(w->arg, dirfd, name)
				   : open_dir(dirfd, name);
	if (r < 0)
		return tolerate(w, r) < 0 ? r : 1;
	if (fstat(r, &cur) < 0 || cur.st_dev != sb->st_dev ||
	    cur.st_ino != sb->st_ino) {
		close(r);
		w->st->skipped++;
		return 1;
	}
	*fd = r;
	return 0;
}

/* Reading one directory's names through w->dents (next_name). */
struct dents {
	int fd; /* the directory, borrowed */
	ssize_t off, n; /* the next entry in w->dents, and the end */
};

/*
 * The next name in D's directory other than "." and "..", in the order
 * getdents64(2) gives them. Returns 1 with *NAME set (valid until the
 * next call), 0 at the end, or -errno.
 */
static int
next_name(struct walk *w, struct dents *d, const char **name)
{
	for (;;) {
		while (d->off < d->n) {
			const struct dirent64 *de =
			    (const struct dirent64 *)(w->dents + d->off);

			d->off += de->d_reclen;
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0) {
				*name = de->d_name;
				return 1;
			}
		}
		d->off = 0;
		if (stopped(w))
			return -EINTR;
		d->n = getdents64(d->fd, w->dents, DENTS_BUF);
		if (d->n < 0 && errno != EINTR)
			return -errno;
		if (d->n == 0)
			return 0;
	}
}

/* Whether "." and ".." are all FD holds: for a directory at MAX_DEPTH
 * whose entries would be too deep. Returns 0 (empty), 1, or -errno. */
static int
has_entries(struct walk *w, int fd)
{
	struct dents d = {.fd = fd};
	const char *name;

	return next_name(w, &d, &name);
}

/* qsort_r comparator: byte-wise order of two names in ARG (strcmp
 * compares as unsigned char, C17 7.24.4). */
static int
cmp_name(const void *a, const void *b, void *arg)
{
	const char *names = arg;

	return strcmp(names + *(const size_t *)a, names + *(const size_t *)b);
}

static int
cmp_off(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

/* Keeps the KEEP smallest names of the top level L and compacts its bytes
 * (names are moved down in the order they sit, so memmove never
 * overwrites one not yet moved). */
static void
prune(struct walk *w, struct level *l, size_t keep)
{
	size_t *o = w->offs + l->first, cur = l->names_at, i;

	qsort_r(o, l->n, sizeof(*o), cmp_name, w->names);
	l->n = keep;
	l->pruned = true;
	qsort(o, keep, sizeof(*o), cmp_off);
	for (i = 0; i < keep; i++) {
		size_t len = strlen(w->names + o[i]) + 1;

		memmove(w->names + cur, w->names + o[i], len);
		o[i] = cur;
		cur += len;
	}
	w->nlen = cur;
	w->olen = l->first + keep;
}

/* Reads every name of the top level L and sorts them. Returns 0 or
 * -errno. */
static int
read_names(struct walk *w, struct level *l)
{
	struct dents d = {.fd = l->fd};
	size_t keep = SIZE_MAX;
	const char *name;
	int r;

	/* At most what can still be reported, and one more to tell that
	 * something was left out. */
	if (w->o->max_entries < SIZE_MAX / 4)
		keep = w->o->max_entries - w->reported + 1;
	while ((r = next_name(w, &d, &name)) > 0) {
		size_t len = strlen(name) + 1;

		if ((r = grow(&w->names, &w->ncap, w->nlen + len, 1)) < 0 ||
		    (r = grow(&w->offs, &w->ocap, w->olen + 1,
			 sizeof(*w->offs))) < 0)
			return r;
		memcpy(w->names + w->nlen, name, len);
		w->offs[w->olen++] = w->nlen;
		w->nlen += len;
		l->n++;
		/* Sorted and cut back as it grows (prune): the names dropped
		 * have KEEP smaller ones already, so the end is the same. */
		if (keep != SIZE_MAX && l->n > 2 * keep + 1024)
			prune(w, l, keep);
	}
	if (r < 0)
		return r;
	if (keep != SIZE_MAX && l->n > keep)
		prune(w, l, keep);
	if (l->n > 1)
		qsort_r(w->offs + l->first, l->n, sizeof(*w->offs), cmp_name,
		    w->names);
	return 0;
}

/* Pushes the directory FD (owned from now on) holding entries at DEPTH,
 * its path PATHLEN bytes of w->path, and reads its names. Returns 0 or
 * -errno. */
static int
push(struct walk *w, int fd, size_t pathlen, unsigned depth)
{
	struct level *l;
	int r;

	if ((r = grow(&w->lv, &w->lcap, w->nlv + 1, sizeof(*w->lv))) < 0) {
		close(fd);
		return r;
	}
	l = &w->lv[w->nlv++];
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	l->first = l->next = w->olen;
	l->names_at = w->nlen;
	l->pathlen = pathlen;
	l->depth = depth;
	return read_names(w, l);
}

static void
pop(struct walk *w)
{
	struct level *l = &w->lv[--w->nlv];

	close(l->fd);
	w->olen = l->first;
	w->nlen = l->names_at;
}

/* The fstatat of a name of the level L failed with ERR (-errno): what
 * tolerate says of it, and a directory that hides what it holds told to
 * on_denied once. Returns as step. */
static int
stat_failed(struct walk *w, struct level *l, int err)
{
	size_t denied = w->st->denied;
	int r;

	r = tolerate(w, err);
	/* Readable but not searchable: this directory hides what it
	 * holds, as one that cannot be entered does. */
	if (r == 0 && w->st->denied > denied && l->pathlen > 0 && !l->denied &&
	    w->o->on_denied != NULL) {
		char c = w->path[l->pathlen];

		l->denied = true;
		w->path[l->pathlen] = '\0';
		w->o->on_denied(w->arg, w->path);
		w->path[l->pathlen] = c;
	}
	return r;
}

/* Enters the directory NAME of the level L (SB its fstatat, w->path its
 * path, PATHLEN bytes) just reported: pushed, or, past max_depth, only
 * looked at for entries. Returns as step. */
static int
descend(struct walk *w, struct level *l, const char *name,
    const struct stat *sb, size_t pathlen)
{
	size_t denied = w->st->denied;
	int r, fd;

	if ((r = enter(w, l->fd, name, sb, &fd)) != 0) {
		if (r > 0 && w->st->denied > denied && w->o->on_denied != NULL)
			w->o->on_denied(w->arg, w->path);
		return r < 0 ? r : 0;
	}
	if (l->depth + 1 > w->o->max_depth) {
		/* Its entries would be too deep: only tell whether it has
		 * any (this is the MAX_DEPTH + 1st descriptor). */
		r = has_entries(w, fd);
		close(fd);
		if (r < 0)
			return r;
		if (r > 0)
			w->st->deeper = true;
		return 0;
	}
	return push(w, fd, pathlen, l->depth + 1);
}

/* Reports the next name of the top level and enters it when asked.
 * Returns 0 to go on, 1 to stop (a bound), or a negative errno. */
static int
step(struct walk *w)
{
	struct level *l = &w->lv[w->nlv - 1];
	struct wswalk_entry e;
	struct stat sb;
	const char *name;
	size_t len, at;
	int r;

	if (l->next == l->first + l->n) {
		if (l->pruned) {
			/* Names were dropped yet not all of those kept were
			 * reported (some vanished): still a partial walk. */
			w->st->truncated = true;
			return 1;
		}
		pop(w);
		return 0;
	}
	name = w->names + w->offs[l->next++];
	if (w->reported == w->o->max_entries) {
		w->st->truncated = true;
		return 1;
	}
	if (stopped(w))
		return -EINTR;
	if (fstatat(l->fd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return stat_failed(w, l, -errno);

	len = strlen(name);
	at = l->pathlen + (l->pathlen > 0);
	if ((r = grow(&w->path, &w->pcap, at + len + 1, 1)) < 0)
		return r;
	if (l->pathlen > 0)
		w->path[l->pathlen] = '/';
	memcpy(w->path + at, name, len + 1);

	e.path = w->path;
	e.name = w->path + at;
	e.dirfd = l->fd;
	e.st = &sb;
	e.depth = l->depth;
	r = w->fn(w->arg, &e);
	w->reported++;
	if (r < 0)
		return r;
	if (r > 0 || !S_ISDIR(sb.st_mode))
		return 0;

	return descend(w, l, e.name, &sb, at + len);
}

/* The start directory DIRFD opened for the walk: "." beneath it, or,
 * with OPTS->open_dir (DIRFD open for reading), a duplicate rewound. */
static int
open_start(int dirfd, const struct wswalk_opts *opts)
{
	int fd;

	if (opts->open_dir == NULL)
		return open_dir(dirfd, ".");
	if ((fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

int
wswalk(int dirfd, const struct wswalk_opts *opts, wswalk_fn fn, void *arg,
    struct wswalk_stats *stats)
{
	struct wswalk_stats local;
	struct walk w;
	size_t plen = opts->prefix ? strlen(opts->prefix) : 0;
	int fd, r;

	if (stats == NULL)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	memset(&w, 0, sizeof(w));
	w.o = opts;
	w.st = stats;
	w.fn = fn;
	w.arg = arg;

	if ((fd = open_start(dirfd, opts)) < 0)
		return fd;
	if ((w.dents = malloc(DENTS_BUF)) == NULL ||
	    (r = grow(&w.path, &w.pcap, plen + 1, 1)) < 0) {
		close(fd);
		r = -ENOMEM;
		goto out;
	}
	memcpy(w.path, plen ? opts->prefix : "", plen + 1);

	if (opts->max_depth == 0) {
		r = has_entries(&w, fd);
		close(fd);
		if (r > 0)
			stats->deeper = true;
		r = r < 0 ? r : 0;
		goto out;
	}
	if ((r = push(&w, fd, plen, 1)) < 0)
		goto out;
	while (w.nlv > 0 && (r = step(&w)) == 0)
		;
	r = r < 0 ? r : 0;
out:
	while (w.nlv > 0)
		pop(&w);
	free(w.lv);
	free(w.names);
	free(w.offs);
	free(w.path);
	free(w.dents);
	return r;
}
