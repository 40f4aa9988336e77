/*
 * stage_journal.c: the journal of a commit (stage_internal.h: its
 * directory, its manifest and the rules of its undo) and stage_recover
 * (stage.h). Every path is resolved beneath the workspace's descriptor
 * as the file API does (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS),
 * and every name in the journal is one this file made ("jN", "manifest",
 * "done"), used only through the journal's descriptor.
 */
#include "stage.h"
#include "stage_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsapi_internal.h"
#include "fsutil.h"
#include "wspath.h"

#define MANIFEST "manifest"
#define MANIFEST_TMP "manifest.tmp"
#define DONE "done"
#define DONE_TMP "done.tmp"
#define HEAD "stockade-commit 1"

void
stage_jname(char buf[24], unsigned long j)
{
	snprintf(buf, 24, "j%lu", j);
}

int
stage_parent(int root, const char *path, const char **name, enum fs_error *why)
{
	const struct wspath_limits lim = {WSPATH_MAX_PATH, 256};

	return fsapi_open_parent(root, path, &lim, name, why);
}

int
stage_journal_open(struct stage_journal *j, int root)
{
	memset(j, 0, sizeof(*j));
	j->root = root;
	j->dir = -1;
	if (mkdirat(root, STAGE_JOURNAL, 0700) < 0)
		return -errno;
	j->dir = fsapi_openat2(root, STAGE_JOURNAL, O_RDONLY | O_DIRECTORY, 0);
	if (j->dir < 0)
		return j->dir;
	/* Held while the commit runs (released with the descriptor):
	 * stage_recover of another session leaves a locked journal alone. */
	return flock(j->dir, LOCK_EX | LOCK_NB) < 0 ? -errno : 0;
}

int
stage_chmod_dir(int dirfd, const char *name, mode_t mode)
{
	_cleanup_close_ int p = -1, fd = -1;

	if ((p = fsapi_openat2(dirfd, name, O_PATH | O_DIRECTORY, 0)) < 0)
		return p;
	do /* EINTR retried, as fsapi_openat2 does */
		fd = openat_eintr(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		    0);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		/* A directory the broker may not read (mode 0, a broker that
		 * is not root): by path, which an unconfined broker may. */
		if (errno != EACCES)
			return -errno;
		return fchmodat(dirfd, name, mode, AT_SYMLINK_NOFOLLOW) < 0
		    ? -errno
		    : 0;
	}
	return fchmod(fd, mode) < 0 ? -errno : 0;
}

/* Copies the regular file NAME of DIRFD to the new file JN of J, with
 * its mode, owner (when root) and times. */
static int
save_copy(struct stage_journal *j, int dirfd, const char *name, const char *jn,
    enum fs_error *why)
{
	_cleanup_close_ int in = -1, out = -1;
	struct timespec ts[2];
	uint64_t copied = 0;
	struct stat st;
	bool out_side;
	int e;

	if ((in = fsapi_open_regular_at(dirfd, name, true, &st, why)) < 0)
		return in;
	out = openat_eintr(j->dir, jn, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600);
	if (out < 0)
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	e = fsapi_copy_fd(in, out, UINT64_MAX, &copied, &out_side);
	if (e == 0 && copied != (uint64_t)st.st_size)
		e = -EIO;
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	if (e == 0 &&
	    (fchmod(out, st.st_mode & 07777) < 0 ||
		(geteuid() == 0 && fchown(out, st.st_uid, st.st_gid) < 0) ||
		futimens(out, ts) < 0 || fsync(out) < 0))
		e = -errno;
	if (e < 0)
		return fsapi_fail(why, fs_error_from_errno(-e), e);
	return 0;
}

int
stage_journal_save(struct stage_journal *j, const struct stage_op *op,
    enum fs_error *why)
{
	_cleanup_close_ int dirfd = -1;
	const char *name;
	char jn[24];

	*why = FS_OK;
	stage_jname(jn, op->j);
	if ((dirfd = stage_parent(j->root, op->path, &name, why)) < 0)
		return dirfd;
	/* O(1), and the very inode: a job's file the commit replaces stays
	 * whole under its journal name. */
	if (linkat(dirfd, name, j->dir, jn, 0) == 0)
		return 0;
	if (errno != EPERM && errno != EXDEV && errno != EMLINK &&
	    errno != EACCES)
		return fsapi_fail(why, fs_error_from_errno(errno), -errno);
	return save_copy(j, dirfd, name, jn, why);
}

/* Writes PATH escaped (stage_internal.h) to F. */
static void
put_path(FILE *f, const char *path)
{
	const unsigned char *p;

	for (p = (const unsigned char *)path; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

/* Writes OP's line to F. */
static void
put_op(FILE *f, const struct stage_op *op)
{
	fprintf(f, "%c\t", (char)op->kind);
	put_path(f, op->path);
	if (op->kind == STAGE_OP_MODE)
		fprintf(f, "\t%o\n", (unsigned)op->mode);
	else if (op->kind == STAGE_OP_CREATE && op->j == 0)
		fputs("\t-\n", f);
	else
		fprintf(f, "\tj%lu\n",
		    op->kind == STAGE_OP_CREATE ? op->j - 1 : op->j);
}

/* A file of the journal being written: its text gathered in memory (a
 * stream that makes no system call), then written whole with
 * write_all, which retries a write a signal interrupted (stdio's
 * buffered write gives up on EINTR). */
struct jfile {
	FILE *f; /* open_memstream's */
	char *text;
	size_t len;
	int fd; /* TMP in the journal */
};

/* Makes NAME in J durably from TMP: JF's text written, fsync'ed,
 * renamed, the journal fsync'ed. JF's stream, text and descriptor are
 * freed. */
static int
publish(struct stage_journal *j, struct jfile *jf, const char *tmp,
    const char *name)
{
	int e = 0;

	if (fclose(jf->f) != 0)
		e = errno ? -errno : -ENOMEM;
	if (e == 0)
		e = write_all(jf->fd, jf->text, jf->len);
	if (e == 0 && fsync(jf->fd) < 0)
		e = -errno;
	close(jf->fd);
	free(jf->text);
	if (e == 0 && renameat(j->dir, tmp, j->dir, name) < 0)
		e = -errno;
	if (e == 0 && fsync(j->dir) < 0)
		e = -errno;
	return e;
}

/* A new file TMP in J into JF, its text a stream in memory. Returns 0
 * or a negative errno (nothing left open). */
static int
create(struct stage_journal *j, const char *tmp, struct jfile *jf)
{
	memset(jf, 0, sizeof(*jf));
	jf->fd = openat_eintr(j->dir, tmp,
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (jf->fd < 0)
		return -errno;
	if ((jf->f = open_memstream(&jf->text, &jf->len)) == NULL) {
		close(jf->fd);
		return -ENOMEM;
	}
	return 0;
}

int
stage_journal_write(struct stage_journal *j)
{
	struct jfile jf;
	size_t i;
	int e;

	if ((e = create(j, MANIFEST_TMP, &jf)) < 0)
		return e;
	fputs(HEAD "\n", jf.f);
	for (i = 0; i < j->n; i++)
		put_op(jf.f, &j->op[i]);
	fputs("end\n", jf.f);
	return publish(j, &jf, MANIFEST_TMP, MANIFEST);
}

int
stage_journal_done(struct stage_journal *j)
{
	struct jfile jf;
	int e;

	if ((e = create(j, DONE_TMP, &jf)) < 0)
		return e;
	fputs("done\n", jf.f);
	return publish(j, &jf, DONE_TMP, DONE);
}

/* Whether the journal name JN exists in J. */
static bool
has(const struct stage_journal *j, const char *jn)
{
	struct stat st;

	return fstatat(j->dir, jn, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Removes whatever is at NAME in DIRFD (nothing there: done). */
static int
clear(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return remove_tree_at(dirfd, name);
}

/* Undoes OP (the rules of stage_internal.h). */
static int
undo_one(struct stage_journal *j, const struct stage_op *op)
{
	_cleanup_close_ int dirfd = -1;
	const char *name;
	enum fs_error why;
	char jn[24];
	int e;

	stage_jname(jn, op->kind == STAGE_OP_CREATE ? op->j - 1 : op->j);
	if (op->kind != STAGE_OP_MODE &&
	    (op->kind != STAGE_OP_CREATE || op->j > 0) && !has(j, jn))
		return 0; /* never happened: PATH is as it was */
	dirfd = stage_parent(j->root, op->path, &name, &why);
	/* A creation whose parent is gone, or cannot be reached without a
	 * link, left nothing there: nothing the commit made is reached
	 * through a link. */
	if (op->kind == STAGE_OP_CREATE &&
	    (dirfd == -ENOENT || dirfd == -ENOTDIR || dirfd == -ELOOP ||
		dirfd == -EXDEV))
		return 0;
	if (dirfd < 0)
		return dirfd;
	switch (op->kind) {
	case STAGE_OP_CREATE:
		return clear(dirfd, name);
	case STAGE_OP_SAVE:
		return renameat(j->dir, jn, dirfd, name) < 0 ? -errno : 0;
	case STAGE_OP_DEL:
		if ((e = clear(dirfd, name)) < 0)
			return e;
		return renameat2(j->dir, jn, dirfd, name, RENAME_NOREPLACE) < 0
		    ? -errno
		    : 0;
	case STAGE_OP_MODE:
		e = stage_chmod_dir(dirfd, name, op->mode);
		return e == -ENOENT ? 0 : e;
	}
	return -EINVAL;
}

int
stage_journal_undo(struct stage_journal *j, size_t n, const char **path)
{
	int first = 0, e;

	while (n-- > 0) {
		if ((e = undo_one(j, &j->op[n])) < 0 && first == 0) {
			first = e;
			if (path != NULL)
				*path = j->op[n].path;
		}
	}
	return first;
}

int
stage_journal_close(struct stage_journal *j, bool remove)
{
	int e = 0;

	if (j->dir >= 0)
		close(j->dir);
	j->dir = -1;
	if (remove)
		e = remove_tree_at(j->root, STAGE_JOURNAL);
	if (j->text != NULL) { /* a recovery's; a commit's are the caller's */
		free(j->op);
		free(j->text);
	}
	j->text = NULL;
	j->op = NULL;
	j->n = 0;
	return e;
}

/* ---- Recovery --------------------------------------------------------- */

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decodes the escaped path S in place (stage_internal.h). Returns 0, or
 * -EINVAL for a malformed escape or a path wspath refuses. */
static int
unescape(char *s)
{
	const struct wspath_limits lim = {WSPATH_MAX_PATH, 256};
	char *w = s;
	const char *r;

	for (r = s; *r != '\0'; r++) {
		int hi, lo;

		if (*r != '\\') {
			*w++ = *r;
			continue;
		}
		if (r[1] != 'x' || (hi = hexval(r[2])) < 0 ||
		    (lo = hexval(r[3])) < 0 || (hi == 0 && lo == 0))
			return -EINVAL;
		*w++ = (char)(hi * 16 + lo);
		r += 3;
	}
	*w = '\0';
	return wspath_check(s, strlen(s), &lim);
}

/* Parses ARG of an operation of KIND into OP. */
static int
parse_arg(struct stage_op *op, const char *arg)
{
	char *end;

	if (op->kind == STAGE_OP_MODE) {
		op->mode = (uint32_t)strtoul(arg, &end, 8);
		return *end == '\0' && end != arg && op->mode <= 07777
		    ? 0
		    : -EINVAL;
	}
	if (op->kind == STAGE_OP_CREATE && strcmp(arg, "-") == 0)
		return 0;
	if (arg[0] != 'j' || arg[1] < '0' || arg[1] > '9')
		return -EINVAL;
	op->j = strtoul(arg + 1, &end, 10);
	if (*end != '\0' || op->j >= ULONG_MAX - 1)
		return -EINVAL;
	op->j += op->kind == STAGE_OP_CREATE;
	return 0;
}

/* Parses one LINE (NUL-terminated, no newline) into OP. */
static int
parse_line(char *line, struct stage_op *op)
{
	char *tab1 = strchr(line, '\t'), *tab2;

	memset(op, 0, sizeof(*op));
	if (tab1 != line + 1 || (tab2 = strchr(tab1 + 1, '\t')) == NULL)
		return -EINVAL;
	*tab2 = '\0';
	op->kind = (enum stage_op_kind)line[0];
	op->path = tab1 + 1;
	if (op->kind != STAGE_OP_DEL && op->kind != STAGE_OP_CREATE &&
	    op->kind != STAGE_OP_SAVE && op->kind != STAGE_OP_MODE)
		return -EINVAL;
	if (unescape(tab1 + 1) < 0)
		return -EINVAL;
	return parse_arg(op, tab2 + 1);
}

/* Parses J->text (a manifest) into J's operations. */
static int
parse(struct stage_journal *j)
{
	char *line = j->text, *nl;
	size_t cap = 0;
	bool head = true;

	for (; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
		*nl = '\0';
		if (head) {
			if (strcmp(line, HEAD) != 0)
				return -EINVAL;
			head = false;
			continue;
		}
		if (strcmp(line, "end") == 0)
			return nl[1] == '\0' ? 0 : -EINVAL;
		if (stage_grow(&j->op, j->n, &cap, sizeof(*j->op)) < 0)
			return -ENOMEM;
		if (parse_line(line, &j->op[j->n]) < 0)
			return -EINVAL;
		j->n++;
	}
	return -EINVAL; /* no "end": never written whole */
}

/* Reads J's manifest into J->text: -ENOENT when there is none. */
static int
read_manifest(struct stage_journal *j)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	size_t got = 0;

	fd = openat_eintr(j->dir, MANIFEST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC,
	    0);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size > STAGE_MANIFEST_MAX)
		return -EINVAL;
	if ((j->text = malloc((size_t)st.st_size + 1)) == NULL)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, j->text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EINVAL;
		got += (size_t)n;
	}
	j->text[got] = '\0';
	return strlen(j->text) == got ? 0 : -EINVAL;
}

/* Undoes the unfinished commit of J (open): its manifest read and
 * undone, the journal removed. Says what in MSG. */
static int
recover_undo(struct stage_journal *j, char *msg, size_t msglen)
{
	const char *path = "";
	int e;

	e = read_manifest(j);
	if (e == -ENOENT) {
		/* Nothing was applied before the manifest existed. */
		e = stage_journal_close(j, true);
		snprintf(msg, msglen,
		    "removed the journal %s of a commit that had not begun",
		    STAGE_JOURNAL);
		return e;
	}
	if (e == 0)
		e = parse(j);
	if (e < 0) {
		snprintf(msg, msglen,
		    "the journal %s has an unreadable manifest", STAGE_JOURNAL);
		return e;
	}
	if ((e = stage_journal_undo(j, j->n, &path)) < 0) {
		snprintf(msg, msglen, "undoing the commit in %s failed at %s",
		    STAGE_JOURNAL, path);
		return e;
	}
	snprintf(msg, msglen,
	    "undid an unfinished commit of %zu operations from %s", j->n,
	    STAGE_JOURNAL);
	return stage_journal_close(j, true);
}

int
stage_recover(int root, char *msg, size_t msglen)
{
	struct stage_journal j;
	int e;

	if (msglen > 0)
		msg[0] = '\0';
	memset(&j, 0, sizeof(j));
	j.root = root;
	j.dir = fsapi_openat2(root, STAGE_JOURNAL, O_RDONLY | O_DIRECTORY, 0);
	if (j.dir == -ENOENT)
		return 0;
	if (j.dir < 0) {
		snprintf(msg, msglen, "%s is not a journal directory",
		    STAGE_JOURNAL);
		return j.dir;
	}
	/* A commit of another session, still running: its own (flock(2) on
	 * the directory, stage_journal_open). */
	if (flock(j.dir, LOCK_EX | LOCK_NB) < 0) {
		e = errno;
		close(j.dir);
		if (e != EWOULDBLOCK)
			return -e;
		snprintf(msg, msglen,
		    "a commit of another session is running in this "
		    "workspace (%s); left alone",
		    STAGE_JOURNAL);
		return 0;
	}
	if (has(&j, DONE)) {
		e = stage_journal_close(&j, true);
		snprintf(msg, msglen,
		    "removed the journal %s of a commit that had finished",
		    STAGE_JOURNAL);
		return e;
	}
	e = recover_undo(&j, msg, msglen);
	if (e < 0)
		(void)stage_journal_close(&j, false);
	return e;
}
