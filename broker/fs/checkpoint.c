/*
 * checkpoint.c: the checkpoint store, its intervals' index and the hook
 * that saves old states (checkpoint.h). Reading an old state into the
 * store is checkpoint_store.c's; merge, drop and restore are
 * checkpoint_restore.c's.
 */
#include "checkpoint.h"
#include "checkpoint_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

const char *
ckpt_error_name(enum ckpt_error err)
{
	switch (err) {
	case CKPT_OK:
		return "ok";
	case CKPT_INVALID_NAME:
		return "invalid_checkpoint_name";
	case CKPT_EXISTS:
		return "checkpoint_exists";
	case CKPT_NO_SUCH:
		return "no_such_checkpoint";
	case CKPT_TOO_MANY:
		return "too_many_checkpoints";
	case CKPT_OFF:
		return "checkpoints_off";
	case CKPT_BROKEN:
		return "checkpoint_broken";
	case CKPT_FILE:
		break;
	}
	return "io_error";
}

bool
ckpt_name_valid(const char *name, size_t len)
{
	if (name == NULL || len == 0 || len > CKPT_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '.' || c == '_' ||
			c == '-'))
			return false;
	}
	return true;
}

/* ---- The index of one interval --------------------------------------- */

/* FNV-1a of the NUL-terminated S. */
static uint64_t
hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

struct ckpt_rec *
ckpt_iv_find(const struct ckpt_iv *iv, const char *path)
{
	struct ckpt_rec *r;

	if (iv->nbuckets == 0)
		return NULL;
	r = iv->hash[hash_path(path) & (iv->nbuckets - 1)];
	for (; r != NULL; r = r->next)
		if (strcmp(r->path, path) == 0)
			return r;
	return NULL;
}

bool
ckpt_iv_covers(const struct ckpt_iv *iv, const char *path)
{
	char buf[4097];
	size_t len = strlen(path);
	struct ckpt_rec *r;

	if (iv->nrecs == 0)
		return false;
	if (ckpt_iv_find(iv, path) != NULL)
		return true;
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, path, len + 1);
	/* Every ancestor, deepest first: one saved absent or as a whole
	 * directory holds PATH's old state already. */
	while (len > 0) {
		while (len > 0 && buf[len - 1] != '/')
			len--;
		if (len == 0)
			break;
		buf[--len] = '\0';
		r = ckpt_iv_find(iv, buf);
		if (r != NULL &&
		    (r->items[0].kind == CK_ABSENT ||
			r->items[0].kind == CK_DIR))
			return true;
	}
	return false;
}

/* Doubles IV's hash table (or makes it), rehashing every record. */
static int
iv_grow_hash(struct ckpt_iv *iv)
{
	size_t n = iv->nbuckets ? iv->nbuckets * 2 : 64;
	struct ckpt_rec **h = calloc(n, sizeof(*h));

	if (h == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < iv->nrecs; i++) {
		struct ckpt_rec *r = iv->recs[i];
		size_t b = hash_path(r->path) & (n - 1);

		r->next = h[b];
		h[b] = r;
	}
	free(iv->hash);
	iv->hash = h;
	iv->nbuckets = n;
	return 0;
}

uint64_t
ckpt_rec_bytes(const struct ckpt_rec *rec)
{
	uint64_t n = 0;

	for (size_t i = 0; i < rec->nitems; i++) {
		const struct ckpt_item *it = &rec->items[i];

		if (it->kind == CK_FILE)
			n += it->size;
		else if (it->kind == CK_SYMLINK && it->target != NULL)
			n += strlen(it->target);
	}
	return n;
}

int
ckpt_iv_add(struct ckpt_iv *iv, struct ckpt_rec *rec)
{
	size_t b;

	if (iv->nrecs == iv->cap) {
		size_t cap = iv->cap ? iv->cap * 2 : 16;
		struct ckpt_rec **r = realloc(iv->recs, cap * sizeof(*r));

		if (r == NULL)
			return -ENOMEM;
		iv->recs = r;
		iv->cap = cap;
	}
	if (iv->nrecs + 1 > iv->nbuckets && iv_grow_hash(iv) < 0)
		return -ENOMEM;
	iv->recs[iv->nrecs++] = rec;
	b = hash_path(rec->path) & (iv->nbuckets - 1);
	rec->next = iv->hash[b];
	iv->hash[b] = rec;
	iv->paths += rec->nitems;
	iv->bytes += ckpt_rec_bytes(rec);
	return 0;
}

/* Unlinks the store file number BLOB. */
static void
unlink_blob(struct ckpt_store *st, uint64_t blob)
{
	char name[24];

	snprintf(name, sizeof(name), "%016llx", (unsigned long long)blob);
	(void)unlinkat(st->dirfd, name, 0);
}

void
ckpt_rec_free(struct ckpt_store *st, struct ckpt_rec *rec)
{
	uint64_t bytes;

	if (rec == NULL)
		return;
	bytes = ckpt_rec_bytes(rec);
	st->bytes = st->bytes > bytes ? st->bytes - bytes : 0;
	st->entries = st->entries > rec->nitems ? st->entries - rec->nitems : 0;
	for (size_t i = 0; i < rec->nitems; i++) {
		if (rec->items[i].kind == CK_FILE)
			unlink_blob(st, rec->items[i].blob);
		free(rec->items[i].rel);
		free(rec->items[i].target);
	}
	free(rec->items);
	free(rec->path);
	free(rec);
}

void
ckpt_iv_clear(struct ckpt_store *st, struct ckpt_iv *iv)
{
	for (size_t i = 0; i < iv->nrecs; i++)
		ckpt_rec_free(st, iv->recs[i]);
	free(iv->recs);
	free(iv->hash);
	iv->recs = NULL;
	iv->hash = NULL;
	iv->nrecs = iv->cap = iv->nbuckets = 0;
	iv->paths = iv->bytes = 0;
}

long
ckpt_find(const struct ckpt_store *st, const char *name, size_t len)
{
	for (size_t i = 0; st != NULL && i < st->nivs; i++)
		if (strlen(st->ivs[i].name) == len &&
		    memcmp(st->ivs[i].name, name, len) == 0)
			return (long)i;
	return -1;
}

/* ---- The store ------------------------------------------------------- */

void
ckpt_dir_clear(struct ckpt_dir *d)
{
	d->fd = -1;
	d->parent_fd = -1;
	d->name[0] = '\0';
}

/* Makes "stockade-ckpt-XXXXXX" in PARENT into D->name, 0700; a name
 * taken is tried again with other letters. Returns 0 or -errno. */
static int
make_named(int parent, struct ckpt_dir *d)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyz"
				      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[6];

	for (int tries = 0; tries < 100; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		snprintf(d->name, sizeof(d->name), "stockade-ckpt-");
		for (size_t i = 0; i < sizeof(rnd); i++)
			d->name[14 + i] =
			    letters[rnd[i] % (sizeof(letters) - 1)];
		d->name[14 + sizeof(rnd)] = '\0';
		if (mkdirat(parent, d->name, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int
ckpt_dir_make(const char *tmpdir, struct ckpt_dir *d)
{
	int e;

	ckpt_dir_clear(d);
	if (tmpdir == NULL || tmpdir[0] != '/')
		tmpdir = getenv("TMPDIR");
	if (tmpdir == NULL || tmpdir[0] != '/')
		tmpdir = "/tmp";
	/* $TMPDIR is the user's setting and may hold symlinks: what is
	 * made in it is reached beneath its descriptor (workspace.c). */
	d->parent_fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->parent_fd < 0)
		return -errno;
	if ((e = make_named(d->parent_fd, d)) < 0) {
		close(d->parent_fd);
		ckpt_dir_clear(d);
		return e;
	}
	d->fd = openat(d->parent_fd, d->name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd < 0) {
		e = -errno;
		(void)unlinkat(d->parent_fd, d->name, AT_REMOVEDIR);
		close(d->parent_fd);
		ckpt_dir_clear(d);
		return e;
	}
	return 0;
}

/* Removes every entry of the directory FD (files only: the store holds
 * nothing else, checkpoint_internal.h; anything else as a tree). */
static void
dir_empty(int fd)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	struct dirent *e;
	DIR *dir;

	if (dup < 0 || (dir = fdopendir(dup)) == NULL) {
		if (dup >= 0)
			close(dup);
		return;
	}
	rewinddir(dir);
	while ((e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, e->d_name, 0) < 0)
			(void)remove_tree_at(fd, e->d_name);
	}
	closedir(dir);
}

void
ckpt_dir_remove(struct ckpt_dir *d)
{
	if (d->fd >= 0) {
		dir_empty(d->fd);
		close(d->fd);
		if (d->parent_fd >= 0 && d->name[0] != '\0')
			(void)unlinkat(d->parent_fd, d->name, AT_REMOVEDIR);
	}
	if (d->parent_fd >= 0)
		close(d->parent_fd);
	ckpt_dir_clear(d);
}

int
ckpt_store_new(const struct ckpt_limits *lim, struct ckpt_dir *d,
    const char *tmpdir, struct ckpt_store **out)
{
	struct ckpt_dir made;
	struct ckpt_store *st;
	int e;

	*out = NULL;
	if (d != NULL && d->fd >= 0) {
		made = *d;
		ckpt_dir_clear(d);
	} else {
		if (d != NULL)
			ckpt_dir_remove(d);
		if ((e = ckpt_dir_make(tmpdir, &made)) < 0)
			return e;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL ||
	    (lim->max > 0 &&
		(st->ivs = calloc(lim->max > CKPT_MAX ? CKPT_MAX : lim->max,
		     sizeof(*st->ivs))) == NULL)) {
		free(st);
		ckpt_dir_remove(&made);
		return -ENOMEM;
	}
	st->lim = *lim;
	if (st->lim.max > CKPT_MAX)
		st->lim.max = CKPT_MAX;
	st->dir = made;
	st->dirfd = made.fd;
	*out = st;
	return 0;
}

void
ckpt_store_free(struct ckpt_store *st)
{
	if (st == NULL)
		return;
	for (size_t i = 0; i < st->nivs; i++)
		ckpt_iv_clear(st, &st->ivs[i]);
	ckpt_dir_remove(&st->dir);
	free(st->ivs);
	free(st);
}

void
ckpt_attach(struct ckpt_store *st, struct fs_ctx *ctx)
{
	ctx->before_change = ckpt_before_change;
	ctx->change_arg = st;
}

int
ckpt_before_change(void *arg, int root, const char *path)
{
	struct ckpt_store *st = arg;
	struct ckpt_iv *iv;
	struct ckpt_rec *rec = NULL;
	int r;

	if (st == NULL || st->nivs == 0)
		return 0;
	iv = &st->ivs[st->nivs - 1];
	if (ckpt_iv_covers(iv, path))
		return 0;
	if ((r = ckpt_read_state(st, root, path, &rec)) != 0)
		return r > 0 ? 0 : r;
	/* A missing parent saved the highest missing ancestor instead,
	 * which the interval may hold already. */
	if (ckpt_iv_covers(iv, rec->path)) {
		ckpt_rec_free(st, rec);
		return 0;
	}
	if ((r = ckpt_iv_add(iv, rec)) < 0)
		ckpt_rec_free(st, rec);
	return r;
}

/* ---- Checkpoints ----------------------------------------------------- */

int
ckpt_create(struct ckpt_store *st, const char *name, size_t len,
    enum ckpt_error *err)
{
	struct ckpt_iv *iv;

	*err = CKPT_OK;
	if (!ckpt_name_valid(name, len))
		*err = CKPT_INVALID_NAME;
	else if (st == NULL || st->lim.max == 0)
		*err = CKPT_OFF;
	else if (ckpt_find(st, name, len) >= 0)
		*err = CKPT_EXISTS;
	else if (st->nivs >= st->lim.max)
		*err = CKPT_TOO_MANY;
	if (*err != CKPT_OK)
		return -1;
	iv = &st->ivs[st->nivs++];
	memset(iv, 0, sizeof(*iv));
	memcpy(iv->name, name, len);
	iv->name[len] = '\0';
	iv->created = time(NULL);
	return 0;
}

int
ckpt_drop(struct ckpt_store *st, const char *name, size_t len,
    enum ckpt_error *err)
{
	long i;

	*err = CKPT_OK;
	if (!ckpt_name_valid(name, len)) {
		*err = CKPT_INVALID_NAME;
		return -1;
	}
	if ((i = ckpt_find(st, name, len)) < 0) {
		*err = CKPT_NO_SUCH;
		return -1;
	}
	if (i == 0)
		ckpt_iv_clear(st, &st->ivs[0]);
	else if (ckpt_iv_merge(st, &st->ivs[i - 1], &st->ivs[i]) < 0) {
		*err = CKPT_FILE;
		return -1;
	}
	ckpt_iv_clear(st, &st->ivs[i]);
	memmove(&st->ivs[i], &st->ivs[i + 1],
	    (st->nivs - (size_t)i - 1) * sizeof(st->ivs[0]));
	st->nivs--;
	return 0;
}

void
ckpt_mark_all_broken(struct ckpt_store *st)
{
	for (size_t i = 0; st != NULL && i < st->nivs; i++)
		st->ivs[i].broken = true;
}

size_t
ckpt_count(const struct ckpt_store *st)
{
	return st != NULL ? st->nivs : 0;
}

void
ckpt_info(const struct ckpt_store *st, size_t i, struct ckpt_info *out)
{
	const struct ckpt_iv *iv = &st->ivs[i];

	out->name = iv->name;
	out->created = iv->created;
	out->paths = iv->paths;
	out->bytes = iv->bytes;
	out->broken = iv->broken;
}

unsigned
ckpt_max(const struct ckpt_store *st)
{
	return st != NULL ? st->lim.max : 0;
}

long
ckpt_store_files(const struct ckpt_store *st)
{
	int fd = fcntl(st->dirfd, F_DUPFD_CLOEXEC, 3);
	struct dirent *d;
	long n = 0;
	DIR *dir;

	if (fd < 0)
		return -errno;
	if ((dir = fdopendir(fd)) == NULL) {
		close(fd);
		return -errno;
	}
	rewinddir(dir);
	while ((d = readdir(dir)) != NULL)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			n++;
	closedir(dir);
	return n;
}
