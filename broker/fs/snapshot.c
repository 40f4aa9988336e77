/*
 * snapshot.c: snapshots of the workspace and the manifest of what a job
 * changed (snapshot.h; issue 3).
 *
 * A snapshot is one bounded wswalk of the workspace: every entry's
 * metadata, and the SHA-256 of each regular file with one link and at
 * most quota.file_bytes. The entries are sorted by path afterwards (the
 * walk is pre-order, which is not strcmp order: "a/x" comes before "a-b"),
 * so that a previous snapshot's hash is found by binary search and two
 * snapshots are compared by one merge. Its bounds (snapshot.h) are kept
 * here: what is hashed (sparse files, a budget of bytes read), what is
 * recorded (path length, path bytes), and the caller's interruption.
 */
#include "snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <sha2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "wspath.h"
#include "wswalk.h"

#define READ_BUF (256u * 1024) /* one read while hashing, bytes */

/* The state of one snapshot_take. */
struct take {
	const struct fs_quota *q;
	const struct snapshot *prev;
	struct snapshot *s;
	size_t cap;
	struct snap_hasher h; /* the hashing and its budget */
	size_t max_path; /* longest path recorded, bytes */
	size_t path_bytes; /* recorded so far, with NULs */
	bool partial; /* paths over max_path left out */
	bool full; /* SNAPSHOT_MAX_PATH_BYTES reached */
	/* Riding the usage walk (snapshot_take_usage), which has its own
	 * bounds: what this snapshot's own walk would have seen is picked
	 * out of it, and nothing after the snapshot is done. */
	size_t seen; /* entries the snapshot's walk would have reported */
	bool over; /* it would have stopped here: truncated */
	int err; /* the snapshot failed (-ENOMEM): usage goes on */
};

static int64_t
ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

void
snap_entry_meta(struct snap_entry *e, const struct stat *st)
{
	e->type = fs_type_of(st->st_mode);
	e->size = st->st_size < 0 ? 0 : (uint64_t)st->st_size;
	e->mode = st->st_mode & 07777;
	e->mtime_ns = ts_ns(&st->st_mtim);
	e->ctime_ns = ts_ns(&st->st_ctim);
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->nlink = st->st_nlink;
}

/* Whether A and B say the content has not changed. */
static bool
same_content_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    ts_ns(&a->st_mtim) == ts_ns(&b->st_mtim) &&
	    ts_ns(&a->st_ctim) == ts_ns(&b->st_ctim);
}

/* Whether ST describes a sparse file (snapshot.h): allocated bytes more
 * than SNAPSHOT_SPARSE_SLACK short of its size. */
static bool
sparse(const struct stat *st)
{
	uint64_t size = st->st_size < 0 ? 0 : (uint64_t)st->st_size;
	uint64_t blocks = st->st_blocks < 0 ? 0 : (uint64_t)st->st_blocks;
	uint64_t alloc = blocks > UINT64_MAX / 512 ? UINT64_MAX : blocks * 512;

	return size > SNAPSHOT_SPARSE_SLACK &&
	    alloc < size - SNAPSHOT_SPARSE_SLACK;
}

static bool
interrupted(const struct snap_hasher *h)
{
	return h->interrupted != NULL && h->interrupted() != 0;
}

int
snap_hasher_init(struct snap_hasher *h, const struct fs_quota *q,
    int (*intr)(void))
{
	memset(h, 0, sizeof(*h));
	h->q = q;
	h->interrupted = intr;
	h->left = q->workspace_bytes;
	if ((h->buf = malloc(READ_BUF)) == NULL)
		return -ENOMEM;
	return 0;
}

void
snap_hasher_free(struct snap_hasher *h)
{
	free(h->buf);
	h->buf = NULL;
}

bool
snap_entry_hashable(const struct snap_entry *e, const struct fs_quota *q)
{
	return e->type == FS_T_FILE && e->nlink == 1 &&
	    e->size <= q->file_bytes;
}

/*
 * Hashes the file NAME in DIRFD that the walk described as E. E's
 * metadata is refreshed from the opened inode; E stays unhashed when the
 * file is not the one the walk saw, is over the quota or not alone in its
 * inode by now, or changes while it is read; it is also marked
 * hash_skipped when it is sparse or larger than what the budget has
 * left. The bytes read are taken from the budget whatever the outcome;
 * an interruption sets h->stop.
 */
static void
hash_open(struct snap_hasher *h, int fd, const struct stat *sp,
    struct snap_entry *e)
{
	struct stat st = *sp, after;
	uint64_t total = 0, limit = h->q->file_bytes;
	SHA2_CTX ctx;

	/* The job may have put another file at NAME since the walk saw it:
	 * then E's metadata is not this file's. */
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_dev != (dev_t)e->dev || st.st_ino != (ino_t)e->ino)
		return;
	snap_entry_meta(e, &st);
	if (e->size > limit)
		return;
	if (sparse(&st) || e->size > h->left) {
		e->hash_skipped = true;
		return;
	}
	if (h->left < limit)
		limit = h->left;
	SHA256Init(&ctx);
	/* Up to one byte past the limit: a file that grew past it. */
	for (;;) {
		uint64_t left = limit - total + 1;
		size_t want = left < READ_BUF ? (size_t)left : READ_BUF;
		ssize_t n;

		if (interrupted(h)) {
			h->stop = true;
			return;
		}
		n = read(fd, h->buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		if (n == 0)
			break;
		total += (uint64_t)n;
		h->read += (uint64_t)n;
		h->left = h->left > (uint64_t)n ? h->left - (uint64_t)n : 0;
		if (total > limit) {
			/* Grew past what the budget had left: skipped for
			 * it, unless it is over the file quota anyway. */
			e->hash_skipped = total <= h->q->file_bytes;
			return;
		}
		SHA256Update(&ctx, h->buf, (size_t)n);
	}
	if (fstat(fd, &after) < 0 || !same_content_stat(&st, &after) ||
	    total != e->size)
		return;
	SHA256Final(e->sha256, &ctx);
	e->hashed = true;
}

/* hash_open of the file NAME in DIRFD, opened with fsapi_open_regular_at:
 * never a FIFO, device, link or file with a second link (fsapi.h). */
static void
hash_file(struct snap_hasher *h, int dirfd, const char *name,
    struct snap_entry *e)
{
	_cleanup_close_ int fd = -1;
	enum fs_error why;
	struct stat st;

	if ((fd = fsapi_open_regular_at(dirfd, name, false, &st, &why)) < 0)
		return;
	hash_open(h, fd, &st, e);
}

int
snap_entry_hash(struct snap_hasher *h, int dirfd, const char *name,
    struct snap_entry *e)
{
	hash_file(h, dirfd, name, e);
	return h->stop ? -EINTR : 0;
}

int
snap_entry_hash_fd(struct snap_hasher *h, int fd, struct snap_entry *e)
{
	struct stat st;

	if (fstat(fd, &st) == 0)
		hash_open(h, fd, &st, e);
	return h->stop ? -EINTR : 0;
}

static int
cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct snap_entry *)a)->path,
	    ((const struct snap_entry *)b)->path);
}

/* PREV's entry for E's path, or NULL. */
static const struct snap_entry *
find(const struct snapshot *prev, const char *path)
{
	struct snap_entry key;

	if (prev == NULL || !prev->valid || prev->n == 0)
		return NULL;
	memset(&key, 0, sizeof(key));
	key.path = (char *)(uintptr_t)path;
	return bsearch(&key, prev->e, prev->n, sizeof(*prev->e), cmp_path);
}

/* Lends E the hash PREV took of the same, unchanged file. Returns
 * whether it did. */
static bool
reuse(const struct snapshot *prev, struct snap_entry *e)
{
	const struct snap_entry *p = find(prev, e->path);

	if (p == NULL || !p->hashed || p->type != FS_T_FILE ||
	    p->dev != e->dev || p->ino != e->ino || p->size != e->size ||
	    p->mtime_ns != e->mtime_ns || p->ctime_ns != e->ctime_ns)
		return false;
	/* Racily clean (snapshot.h): changed too close to PREV's start for
	 * an unchanged st_ctim to prove an unchanged content. */
	if (p->ctime_ns > prev->started_ns - SNAPSHOT_RACY_NS)
		return false;
	memcpy(e->sha256, p->sha256, sizeof(e->sha256));
	e->hashed = true;
	return true;
}

static int
add(void *arg, const struct wswalk_entry *we)
{
	struct take *t = arg;
	struct snapshot *s = t->s;
	struct snap_entry *e;
	size_t len = strlen(we->path);

	/* No client could name it, nor anything below it: left out (and
	 * not entered), the snapshot partial. */
	if (len > t->max_path) {
		t->partial = true;
		return 1;
	}
	if (len + 1 > SNAPSHOT_MAX_PATH_BYTES - t->path_bytes) {
		t->full = true;
		return -ECANCELED;
	}
	if (s->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 256;
		void *n = reallocarray(s->e, ncap, sizeof(*s->e));

		if (n == NULL)
			return -ENOMEM;
		s->e = n;
		t->cap = ncap;
	}
	e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	if ((e->path = strdup(we->path)) == NULL)
		return -ENOMEM;
	s->n++;
	t->path_bytes += len + 1;
	snap_entry_meta(e, we->st);
	if (snap_entry_hashable(e, t->q) && !reuse(t->prev, e)) {
		if (snap_entry_hash(&t->h, we->dirfd, we->name, e) < 0)
			return -EINTR;
		if (e->hash_skipped)
			s->unhashed++;
	}
	return 0;
}

/* wswalk's on_denied: marks the directory PATH as denied. It was added
 * before anything below it (pre-order), so it is searched from the end;
 * wswalk tells of each directory at most once. */
static void
mark_denied(void *arg, const char *path)
{
	struct take *t = arg;
	struct snapshot *s = t->s;
	size_t i;

	for (i = s->n; i > 0; i--) {
		if (strcmp(s->e[i - 1].path, path) == 0) {
			s->e[i - 1].denied = true;
			return;
		}
	}
}

/* Sets T and S up for a snapshot under Q lending from PREV, asking INTR.
 * Returns 0 or a negative errno (S then empty). */
static int
take_begin(struct take *t, struct snapshot *s, const struct fs_quota *q,
    const struct snapshot *prev, int (*intr)(void))
{
	struct timespec now;

	memset(s, 0, sizeof(*s));
	memset(t, 0, sizeof(*t));
	t->q = q;
	t->prev = prev;
	t->s = s;
	t->max_path = q->max_path ? q->max_path : WSPATH_MAX_PATH;
	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return -errno;
	s->started_ns = ts_ns(&now);
	return snap_hasher_init(&t->h, q, intr);
}

/* Ends T's snapshot after a walk that returned R with ST: sorted and
 * valid. Returns 0, or R as snapshot_take's error (S then empty). */
static int
take_end(struct take *t, int r, const struct wswalk_stats *st)
{
	struct snapshot *s = t->s;

	s->hashed_bytes = t->h.read;
	snap_hasher_free(&t->h);
	if (r == -ECANCELED && t->full)
		r = 0;
	if (r < 0) {
		snapshot_free(s);
		return r;
	}
	if (s->n > 1)
		qsort(s->e, s->n, sizeof(*s->e), cmp_path);
	s->truncated = st->truncated || st->deeper || st->denied > 0 ||
	    t->partial || t->full || t->over;
	s->valid = true;
	return 0;
}

int
snapshot_take(int root, const struct fs_quota *q, const struct snapshot *prev,
    int (*intr)(void), struct snapshot *s)
{
	struct wswalk_opts o;
	struct wswalk_stats st;
	struct take t;
	int r;

	if ((r = take_begin(&t, s, q, prev, intr)) < 0) {
		snap_hasher_free(&t.h);
		return r;
	}
	memset(&o, 0, sizeof(o));
	o.max_depth = q->max_depth;
	o.max_entries = q->max_files > SIZE_MAX ? SIZE_MAX
						: (size_t)q->max_files;
	o.interrupted = intr;
	o.on_denied = mark_denied;
	r = wswalk(root, &o, add, &t, &st);
	return take_end(&t, r, &st);
}

void
snapshot_free(struct snapshot *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->e[i].path);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

/* Whether the entry changed from A to B (same path). */
static bool
modified(const struct snap_entry *a, const struct snap_entry *b)
{
	if (a->type != b->type)
		return true;
	/* A directory's size, times and link count follow what it holds,
	 * and that is reported entry by entry. */
	if (a->type == FS_T_DIR)
		return a->mode != b->mode;
	if (a->size != b->size || a->mode != b->mode ||
	    a->mtime_ns != b->mtime_ns || a->ctime_ns != b->ctime_ns ||
	    a->dev != b->dev || a->ino != b->ino)
		return true;
	return a->hashed && b->hashed &&
	    memcmp(a->sha256, b->sha256, sizeof(a->sha256)) != 0;
}

/* Whether PATH lies below a directory that S could not enter: each of
 * its proper prefixes ending at a '/' is looked up (S is sorted). */
static bool
below_denied(const struct snapshot *s, const char *path)
{
	const char *slash;
	char *pre;
	bool hit = false;

	if ((pre = strdup(path)) == NULL)
		return true; /* out of memory: say nothing rather than lie */
	for (slash = strchr(path, '/'); slash != NULL && !hit;
	     slash = strchr(slash + 1, '/')) {
		const struct snap_entry *e;

		pre[slash - path] = '\0';
		e = find(s, pre);
		hit = e != NULL && e->denied;
		pre[slash - path] = '/';
	}
	free(pre);
	return hit;
}

int
snapshot_diff(const struct snapshot *before, const struct snapshot *after,
    struct changes *out)
{
	size_t i = 0, j = 0, n = 0, max = before->n + after->n;
	struct change *c;

	memset(out, 0, sizeof(*out));
	out->truncated = before->truncated || after->truncated;
	if (max == 0)
		return 0;
	if ((c = calloc(max, sizeof(*c))) == NULL)
		return -ENOMEM;
	while (i < before->n || j < after->n) {
		int d;

		if (i == before->n)
			d = 1;
		else if (j == after->n)
			d = -1;
		else
			d = strcmp(before->e[i].path, after->e[j].path);
		/* Below a directory one side could not enter, an entry
		 * missing from that side is unknown, not created or
		 * deleted (the snapshot says truncated). */
		if (d < 0) {
			if (!below_denied(after, before->e[i].path)) {
				c[n].kind = CHANGE_DELETED;
				c[n++].entry = &before->e[i];
			}
			i++;
		} else if (d > 0) {
			if (!below_denied(before, after->e[j].path)) {
				c[n].kind = CHANGE_CREATED;
				c[n++].entry = &after->e[j];
			}
			j++;
		} else {
			if (modified(&before->e[i], &after->e[j])) {
				c[n].kind = CHANGE_MODIFIED;
				c[n].entry = &after->e[j];
				c[n++].old = &before->e[i];
			}
			i++;
			j++;
		}
	}
	out->c = c;
	out->n = n;
	for (i = 0; i < n; i++)
		out->unhashed += c[i].entry->hash_skipped;
	return 0;
}

void
changes_free(struct changes *out)
{
	free(out->c);
	memset(out, 0, sizeof(*out));
}

void
snap_hex(const struct snap_entry *e, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	hex[0] = '\0';
	if (!e->hashed)
		return;
	for (i = 0; i < SNAPSHOT_SHA256_LEN; i++) {
		hex[2 * i] = digits[e->sha256[i] >> 4];
		hex[2 * i + 1] = digits[e->sha256[i] & 15];
	}
	hex[64] = '\0';
}
