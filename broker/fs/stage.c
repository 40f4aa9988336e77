/*
 * stage.c: reading a job's writes from the upper layer of its overlay
 * (stage.h, stage_scan; issue 26). The commit is in stage_commit.c.
 *
 * One wswalk of STAGE/upper (never through a link, bounded), and for
 * each of its entries one fstatat of the lower entry at the same path,
 * in a descriptor of the lower directory opened beneath the workspace
 * level by level (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): the
 * time is that of what the job changed, plus the lower subtrees it
 * deleted. Each entry is recorded as a snapshot records it (snapshot.h:
 * snap_entry_meta, snap_entry_hash, one hashing budget for both trees),
 * the lower layer's into BEFORE and the merged result into AFTER, so
 * that snapshot_diff gives the change set. The rules of overlayfs.rst
 * ("whiteouts and opaque directories"):
 *  - upper whiteout (char 0:0): the lower entry (its subtree too) is in
 *    BEFORE only;
 *  - upper directory over a lower one: merged (both recorded when the
 *    mode differs, and the walk goes on below with the lower directory),
 *    unless it is opaque (xattr user.overlay.opaque = "y", the userxattr
 *    mount's name): then the whole lower subtree is in BEFORE and the
 *    upper one in AFTER;
 *  - upper file, symlink or directory over a lower non-directory, or a
 *    non-directory over a lower directory: the lower entry (and subtree)
 *    in BEFORE, the upper one in AFTER.
 * Last, a regular file that is in both with the same size, mode and
 * SHA-256 (a copy-up that changed nothing) is taken out of both.
 */
#include "stage.h"
#include "stage_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fsapi_internal.h"
#include "fsutil.h"
#include "wspath.h"
#include "wswalk.h"

#define OPAQUE_XATTR "user.overlay.opaque"
/* The opener of stage entries (stage.h, stage_set_opener): NULL opens
 * directly. */
static stage_opener_fn opener;
static void *opener_arg;

void
stage_set_opener(stage_opener_fn fn, void *arg)
{
	opener = fn;
	opener_arg = arg;
}

bool
stage_opener_is(stage_opener_fn fn, const void *arg)
{
	return opener == fn && opener_arg == arg;
}

/* Whether NAME is one component: 1..255 bytes, no '/', not "." or "..". */
static bool
one_component(const char *name)
{
	size_t n = strnlen(name, 256);

	return n > 0 && n < 256 && strchr(name, '/') == NULL &&
	    strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* The opener's work without one: NAME of DIR opened for reading, never
 * through a link or off DIR's mount; a regular file through an O_PATH
 * descriptor first (fsapi_open_regular_at: nothing else is opened for
 * I/O). */
static int
open_direct(int dir, const char *name, bool directory)
{
	enum fs_error why;
	struct stat st;

	if (directory)
		return fsapi_openat2(dir, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK, 0);
	return fsapi_open_regular_at(dir, name, true, &st, &why);
}

int
stage_open_at(const struct stage_ref *ref, int dir, const char *name,
    bool directory)
{
	struct stat st;
	int fd;

	if (!one_component(name))
		return -EINVAL;
	fd = opener != NULL
	    ? opener(opener_arg, ref->fd, ref->token, dir, name, directory)
	    : open_direct(dir, name, directory);
	if (fd < 0)
		return fd;
	/* What came back is checked here too: the opener may be another
	 * process. */
	if (fstat(fd, &st) < 0 ||
	    (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

/* The state of one stage_scan. */
struct scan {
	const struct stage_ref *stage;
	const struct fs_quota *q;
	struct stage_scan *out;
	struct snap_hasher h;
	struct wspath_limits lim;
	unsigned depth; /* lim's depth, the default when 0 */
	size_t cap_before, cap_after, cap_bad;
	size_t max_entries; /* of each snapshot and of BAD */
	size_t path_bytes; /* recorded in both, with NULs */
	/* lower[d]: descriptor of the lower directory holding the entries
	 * at depth d + 1 (lower[0] is the workspace, borrowed), -1 when
	 * there is none to merge with (no lower, not a directory, opaque,
	 * or its subtree already in BEFORE). depth + 2 of them. */
	int *lower;
	bool full; /* a bound reached: truncated */
};

int
stage_grow(void *arrp, size_t n, size_t *cap, size_t size)
{
	size_t ncap;
	void *p, *np;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 64;
	/* The pointer is read and written as bytes: *ARRP is a pointer to
	 * some struct, not a void * (C17 6.5p7). */
	memcpy(&p, arrp, sizeof(p));
	if ((np = reallocarray(p, ncap, size)) == NULL)
		return -ENOMEM;
	memcpy(arrp, &np, sizeof(np));
	*cap = ncap;
	return 0;
}

/* Whether recording PATH (LEN bytes) in a collection holding N entries
 * stays within the scan's bounds; sets S->full when not. */
static bool
room(struct scan *s, size_t n, size_t len)
{
	if (n >= s->max_entries ||
	    len + 1 > SNAPSHOT_MAX_PATH_BYTES - s->path_bytes) {
		s->full = true;
		return false;
	}
	s->path_bytes += len + 1;
	return true;
}

static int
add_bad(struct scan *s, const char *path, enum fs_error why)
{
	struct stage_scan *o = s->out;
	struct stage_bad *b;

	if (!room(s, o->nbad, strlen(path)))
		return -ECANCELED;
	if (stage_grow(&o->bad, o->nbad, &s->cap_bad, sizeof(*o->bad)) < 0)
		return -ENOMEM;
	b = &o->bad[o->nbad];
	if ((b->path = strdup(path)) == NULL)
		return -ENOMEM;
	b->why = why;
	o->nbad++;
	return 0;
}

/* Hashes E, the regular file NAME of DIRFD: an entry of the stage
 * (UPPER) opened with stage_open_at, one of the workspace as a snapshot
 * opens it. A file that cannot be opened stays unhashed. 0 or -EINTR. */
static int
hash(struct scan *s, bool upper, int dirfd, const char *name,
    struct snap_entry *e)
{
	int fd, r;

	if (!upper)
		return snap_entry_hash(&s->h, dirfd, name, e);
	if ((fd = stage_open_at(s->stage, dirfd, name, false)) < 0)
		return 0;
	r = snap_entry_hash_fd(&s->h, fd, e);
	close(fd);
	return r;
}

/*
 * Records the entry NAME of DIRFD at PATH, described by ST, into SN
 * (BEFORE or AFTER; *CAP its allocation), hashed as a snapshot hashes.
 * Returns 0, -ECANCELED at a bound (S->full), -ENOMEM or -EINTR.
 */
static int
add_entry(struct scan *s, struct snapshot *sn, size_t *cap, int dirfd,
    const char *name, const char *path, const struct stat *st)
{
	struct snap_entry *e;

	if (!room(s, sn->n, strlen(path)))
		return -ECANCELED;
	if (stage_grow(&sn->e, sn->n, cap, sizeof(*sn->e)) < 0)
		return -ENOMEM;
	e = &sn->e[sn->n];
	memset(e, 0, sizeof(*e));
	if ((e->path = strdup(path)) == NULL)
		return -ENOMEM;
	sn->n++;
	snap_entry_meta(e, st);
	if (snap_entry_hashable(e, s->q)) {
		if (hash(s, sn == &s->out->after, dirfd, name, e) < 0)
			return -EINTR;
		sn->unhashed += e->hash_skipped;
	}
	return 0;
}

/* The entries of a deleted lower subtree, into BEFORE. */
static int
lower_one(void *arg, const struct wswalk_entry *we)
{
	struct scan *s = arg;

	return add_entry(s, &s->out->before, &s->cap_before, we->dirfd,
	    we->name, we->path, we->st);
}

/*
 * Records the lower entry NAME of LOWER (at PATH, LST its stat) as
 * deleted or replaced: into BEFORE, with everything below it when it is
 * a directory (a wswalk beneath it, bounded as the scan). Returns 0 or a
 * negative errno (add_entry's; the walk's).
 */
static int
add_lower(struct scan *s, int lower, const char *name, const char *path,
    const struct stat *lst)
{
	struct wswalk_opts o;
	struct wswalk_stats st;
	_cleanup_close_ int fd = -1;
	unsigned depth = wspath_depth(path);
	int r;

	r = add_entry(s, &s->out->before, &s->cap_before, lower, name, path,
	    lst);
	if (r < 0 || !S_ISDIR(lst->st_mode))
		return r;
	if ((fd = fsapi_openat2(lower, name, O_PATH | O_DIRECTORY, 0)) < 0)
		return fd == -ENOENT ? 0 : fd;
	memset(&o, 0, sizeof(o));
	o.max_depth = depth < s->depth ? s->depth - depth : 0;
	o.max_entries = SIZE_MAX;
	o.prefix = path;
	o.interrupted = s->h.interrupted;
	if ((r = wswalk(fd, &o, lower_one, s, &st)) < 0)
		return r;
	if (st.deeper || st.denied > 0)
		s->full = true;
	return 0;
}

/* Whether the upper directory NAME of DIRFD in STAGE is opaque. */
static bool
opaque(const struct stage_ref *stage, int dirfd, const char *name)
{
	_cleanup_close_ int fd = -1;
	char v[2];

	fd = stage_open_at(stage, dirfd, name, true);
	if (fd < 0)
		return false;
	return fgetxattr(fd, OPAQUE_XATTR, v, sizeof(v)) == 1 && v[0] == 'y';
}

/* Sets the lower directory of the entries below depth D (closing the
 * one it replaces). */
static void
set_lower(struct scan *s, unsigned d, int fd)
{
	if (s->lower[d] >= 0)
		close(s->lower[d]);
	s->lower[d] = fd;
}

/*
 * An upper directory (WE) over the lower entry LST (NULL: none) of
 * LOWER: recorded as overlayfs merges it (the file's head comment), and
 * the lower directory of what is below it set. Returns 0 (enter it) or a
 * negative errno.
 */
static int
upper_dir(struct scan *s, const struct wswalk_entry *we, int lower,
    const struct stat *lst)
{
	struct stage_scan *o = s->out;
	int r, fd;

	set_lower(s, we->depth, -1);
	if (lst != NULL && S_ISDIR(lst->st_mode) &&
	    !opaque(s->stage, we->dirfd, we->name)) {
		if ((lst->st_mode & 07777) != (we->st->st_mode & 07777) &&
		    ((r = add_entry(s, &o->before, &s->cap_before, lower,
			  we->name, we->path, lst)) < 0 ||
			(r = add_entry(s, &o->after, &s->cap_after, we->dirfd,
			     we->name, we->path, we->st)) < 0))
			return r;
		fd = fsapi_openat2(lower, we->name, O_PATH | O_DIRECTORY, 0);
		if (fd < 0 && fd != -ENOENT && fd != -ENOTDIR)
			return fd;
		set_lower(s, we->depth, fd < 0 ? -1 : fd);
		return 0;
	}
	if (lst != NULL &&
	    (r = add_lower(s, lower, we->name, we->path, lst)) < 0)
		return r;
	return add_entry(s, &o->after, &s->cap_after, we->dirfd, we->name,
	    we->path, we->st);
}

/* The refusal of the upper entry WE, or FS_OK (stage.h). */
static enum fs_error
refusal(const struct scan *s, const struct wswalk_entry *we)
{
	mode_t m = we->st->st_mode;

	if (we->depth == 1 && strcmp(we->name, STAGE_JOURNAL) == 0)
		return FS_INVALID_PATH;
	if (wspath_check(we->path, strlen(we->path), &s->lim) < 0)
		return FS_INVALID_PATH;
	if (S_ISCHR(m) && we->st->st_rdev == makedev(0, 0))
		return FS_OK; /* a whiteout */
	if (!S_ISREG(m) && !S_ISDIR(m) && !S_ISLNK(m))
		return FS_NOT_REGULAR_FILE;
	if (S_ISREG(m) && we->st->st_nlink > 1)
		return FS_HARDLINKED_FILE;
	return FS_OK;
}

/* wswalk's callback over STAGE/upper: one upper entry. */
static int
upper_one(void *arg, const struct wswalk_entry *we)
{
	struct scan *s = arg;
	int lower = s->lower[we->depth - 1];
	enum fs_error why = refusal(s, we);
	struct stat lst;
	bool has = false;
	int r;

	if (why != FS_OK) {
		r = add_bad(s, we->path, why);
		return r < 0 ? r : 1;
	}
	if (lower >= 0) {
		if (fstatat(lower, we->name, &lst, AT_SYMLINK_NOFOLLOW) == 0)
			has = true;
		else if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
	}
	if (S_ISDIR(we->st->st_mode))
		return upper_dir(s, we, lower, has ? &lst : NULL);
	if (has && (r = add_lower(s, lower, we->name, we->path, &lst)) < 0)
		return r;
	if (S_ISCHR(we->st->st_mode)) /* a whiteout: deleted only */
		return 0;
	return add_entry(s, &s->out->after, &s->cap_after, we->dirfd, we->name,
	    we->path, we->st);
}

static int
cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->path,
	    ((const struct snap_entry *)b)->path);
}

static int
cmp_bad(const void *a, const void *b)
{
	return strcmp(((const struct stage_bad *)a)->path,
	    ((const struct stage_bad *)b)->path);
}

/* Whether A (lower) and B (upper) are the same regular file: a copy-up
 * that changed nothing. */
static bool
same_file(const struct snap_entry *a, const struct snap_entry *b)
{
	return a->type == FS_T_FILE && b->type == FS_T_FILE && a->hashed &&
	    b->hashed && a->size == b->size && a->mode == b->mode &&
	    memcmp(a->sha256, b->sha256, sizeof(a->sha256)) == 0;
}

/* Takes the unchanged copy-ups out of both sorted snapshots. */
static void
drop_unchanged(struct snapshot *b, struct snapshot *a)
{
	size_t i = 0, j = 0, nb = 0, na = 0;

	while (i < b->n || j < a->n) {
		int d = i == b->n ? 1
		    : j == a->n	  ? -1
				  : strcmp(b->e[i].path, a->e[j].path);

		if (d == 0 && same_file(&b->e[i], &a->e[j])) {
			free(b->e[i++].path);
			free(a->e[j++].path);
			continue;
		}
		if (d <= 0)
			b->e[nb++] = b->e[i++];
		if (d >= 0)
			a->e[na++] = a->e[j++];
	}
	b->n = nb;
	a->n = na;
}

/* Sorts OUT's collections, drops what did not change, marks them valid
 * (and truncated when FULL). */
static void
finish(struct stage_scan *out, bool full)
{
	struct timespec now;
	size_t i;

	/* qsort's base must not be NULL, even for none (C17 7.1.4). */
	if (out->before.n > 1)
		qsort(out->before.e, out->before.n, sizeof(*out->before.e),
		    cmp_entry);
	if (out->after.n > 1)
		qsort(out->after.e, out->after.n, sizeof(*out->after.e),
		    cmp_entry);
	if (out->nbad > 1)
		qsort(out->bad, out->nbad, sizeof(*out->bad), cmp_bad);
	drop_unchanged(&out->before, &out->after);
	out->before.unhashed = out->after.unhashed = 0;
	for (i = 0; i < out->before.n; i++)
		out->before.unhashed += out->before.e[i].hash_skipped;
	for (i = 0; i < out->after.n; i++)
		out->after.unhashed += out->after.e[i].hash_skipped;
	clock_gettime(CLOCK_REALTIME, &now);
	out->before.started_ns = out->after.started_ns =
	    (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
	out->before.truncated = out->after.truncated = full;
	out->before.valid = out->after.valid = true;
}

/* wswalk's open_dir over the stage: through stage_open_at. */
static int
upper_open(void *arg, int dirfd, const char *name)
{
	const struct scan *s = arg;

	return stage_open_at(s->stage, dirfd, name, true);
}

/* Sets S up for a scan of STAGE against the workspace ROOT under Q into
 * OUT. */
static int
scan_begin(struct scan *s, const struct stage_ref *stage, int root,
    const struct fs_quota *q, int (*intr)(void), struct stage_scan *out)
{
	unsigned i;

	memset(s, 0, sizeof(*s));
	s->stage = stage;
	s->q = q;
	s->out = out;
	s->lim.max_path = q->max_path;
	s->lim.max_depth = q->max_depth;
	s->depth = q->max_depth ? q->max_depth : WSPATH_MAX_DEPTH;
	s->max_entries = q->max_files >= SIZE_MAX ? SIZE_MAX - 1
						  : (size_t)q->max_files + 1;
	if ((s->lower = calloc(s->depth + 2, sizeof(*s->lower))) == NULL)
		return -ENOMEM;
	for (i = 1; i < s->depth + 2; i++)
		s->lower[i] = -1;
	s->lower[0] = root;
	return snap_hasher_init(&s->h, q, intr);
}

static void
scan_end(struct scan *s)
{
	unsigned i;

	for (i = 1; s->lower != NULL && i < s->depth + 2; i++)
		if (s->lower[i] >= 0)
			close(s->lower[i]);
	free(s->lower);
	snap_hasher_free(&s->h);
}

int
stage_scan(const struct stage_ref *stage, int root, const struct fs_quota *q,
    int (*interrupted)(void), struct stage_scan *out)
{
	_cleanup_close_ int upper = -1;
	struct wswalk_opts o;
	struct wswalk_stats st;
	struct scan s;
	int r;

	memset(out, 0, sizeof(*out));
	if (stage_upper_empty(stage)) {
		if ((r = stage_figures(stage->fd, out)) < 0)
			return r;
		finish(out, false);
		return 0;
	}
	upper = stage_open_at(stage, stage->fd, STAGE_UPPER, true);
	if (upper < 0)
		return upper;
	if ((r = stage_figures(stage->fd, out)) < 0)
		return r;
	if ((r = scan_begin(&s, stage, root, q, interrupted, out)) == 0) {
		memset(&o, 0, sizeof(o));
		o.open_dir = upper_open;
		/* One level more than a path may have: the first entry too
		 * deep is seen, and refused (invalid_path). */
		o.max_depth = s.depth + 1;
		o.max_entries = SIZE_MAX;
		o.interrupted = interrupted;
		r = wswalk(upper, &o, upper_one, &s, &st);
		if (r == -ECANCELED && s.full)
			r = 0;
		if (r == 0 && (st.deeper || st.denied > 0 || st.skipped > 0))
			s.full = true;
	}
	scan_end(&s);
	if (r < 0) {
		stage_scan_free(out);
		return r;
	}
	finish(out, s.full);
	return 0;
}

void
stage_scan_free(struct stage_scan *out)
{
	size_t i;

	snapshot_free(&out->before);
	snapshot_free(&out->after);
	for (i = 0; i < out->nbad; i++)
		free(out->bad[i].path);
	free(out->bad);
	memset(out, 0, sizeof(*out));
}
