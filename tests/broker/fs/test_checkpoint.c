/*
 * test_checkpoint.c: checkpoints of the workspace (broker/fs/checkpoint.c,
 * issue 26 point 5) on real workspaces: a checkpoint, then changes of
 * every kind through the file API (put, overwrite, remove, recursive
 * remove, rename of files and directories, mkdir -p, symlink), then a
 * restore gives back the same tree: every path, type, mode, SHA-256 of
 * each file, its mtime and each symlink's target. Two checkpoints, drop
 * of the middle one, the count bound, checkpoints off, names refused, the
 * store's byte bound (the change refused, nothing touched), the cost (the
 * store holds the changed files only), and the whole round trip as an
 * ordinary user (uid 65534 when the test runs as root).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "fsapi.h"
#include "fstest.h"
#include "fsutil.h"
#include "policy.h"

static struct fs_ctx ctx;
static struct ckpt_store *store;

static void
setup(void)
{
	char err[POLICY_ERR_MAX];
	struct policy p;

	fstest_setup("ckpt", false);
	memset(&p, 0, sizeof(p));
	cr_assert_eq(policy_load_default(&p, err, sizeof(err)), 0, "%s", err);
	fsapi_ctx_init(&ctx, root, &p.files);
	policy_clear(&p);
	store = NULL;
}

static void
teardown(void)
{
	ckpt_store_free(store);
	fstest_teardown();
}

TestSuite(checkpoint, .init = setup, .fini = teardown, .timeout = 60);

/* ---- The tree as text ------------------------------------------------- */

static char **lines;
static size_t nlines, cap;
static bool walk_failed;

/* One line per entry: path, type, mode, and a file's SHA-256 and mtime
 * or a symlink's target. */
static int
one(const char *p, const struct stat *s, int flag, struct FTW *f)
{
	char hash[SHA256_DIGEST_STRING_LENGTH] = "-", target[4097] = "";
	const char *rel = p + strlen(ws);
	char *line;
	ssize_t n;

	(void)flag;
	(void)f;
	if (S_ISREG(s->st_mode) && SHA256File(p, hash) == NULL)
		walk_failed = true;
	if (S_ISLNK(s->st_mode) &&
	    (n = readlink(p, target, sizeof(target) - 1)) >= 0)
		target[n] = '\0';
	if (asprintf(&line, "%s %c %04o %s %lld.%09ld %s", *rel ? rel : "/",
		S_ISREG(s->st_mode)	  ? 'f'
		    : S_ISDIR(s->st_mode) ? 'd'
		    : S_ISLNK(s->st_mode) ? 'l'
					  : '?',
		(unsigned)(s->st_mode & 07777), hash,
		S_ISREG(s->st_mode) ? (long long)s->st_mtim.tv_sec : 0LL,
		S_ISREG(s->st_mode) ? s->st_mtim.tv_nsec : 0L, target) < 0) {
		walk_failed = true;
		return 1;
	}
	if (nlines == cap) {
		cap = cap ? cap * 2 : 64;
		lines = realloc(lines, cap * sizeof(*lines));
	}
	lines[nlines++] = line;
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The workspace as sorted lines, one string (the caller frees it), or
 * NULL when the walk failed. */
static char *
tree_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	nlines = 0;
	walk_failed = false;
	if (nftw(ws, one, 16, FTW_PHYS) != 0 || walk_failed)
		return NULL;
	qsort(lines, nlines, sizeof(*lines), cmp_str);
	f = open_memstream(&text, &len);
	for (size_t i = 0; i < nlines; i++) {
		fprintf(f, "%s\n", lines[i]);
		free(lines[i]);
	}
	fclose(f);
	return text;
}

/* ---- Helpers ---------------------------------------------------------- */

/* A new store (max checkpoints MAX, MAX_BYTES saved) attached to CTX;
 * 0 or the failing errno. */
static int
attach(unsigned max, uint64_t max_bytes)
{
	const struct ckpt_limits lim = {
	    .max = max,
	    .max_bytes = max_bytes,
	    .max_entries = 100000,
	    .allow_hardlinks = false,
	};
	int r = ckpt_store_new(&lim, NULL, NULL, &store);

	if (r == 0)
		ckpt_attach(store, &ctx);
	return r;
}

/* fsapi_put of DATA at PATH; the named error. */
static enum fs_error
put(const char *path, const char *data, mode_t mode, bool overwrite)
{
	int in = memfd_create("src", MFD_CLOEXEC);
	enum fs_error why = FS_IO_ERROR;

	if (in < 0 || write_all(in, data, strlen(data)) < 0 ||
	    lseek(in, 0, SEEK_SET) != 0)
		return FS_IO_ERROR;
	(void)fsapi_put(&ctx, path, in, mode, overwrite, NULL, &why);
	close(in);
	return why;
}

static int
mk(const char *name, enum ckpt_error want)
{
	enum ckpt_error err = CKPT_FILE;
	int r = ckpt_create(store, name, strlen(name), &err);

	return (r == 0) == (want == CKPT_OK) && err == want ? 0 : -1;
}

static int
restore(const char *name)
{
	struct ckpt_restore_report rep;

	return ckpt_restore(store, &ctx, name, strlen(name), &rep);
}

/* The starting tree: files of several modes and mtimes, a directory tree
 * with its own modes, symlinks. Made without the file API. */
static int
plant(void)
{
	const struct timespec old[2] = {{1000000000, 5},
	    {1000000000, 123456789}};
	int fd;

	FSTEST_CHECK(mkdirat(root, "src", 0755) == 0);
	FSTEST_CHECK(mkdirat(root, "src/lib", 0750) == 0);
	FSTEST_CHECK(mkdirat(root, "docs", 0700) == 0);
	for (int i = 0; i < 6; i++) {
		char p[32], text[64];

		snprintf(p, sizeof(p), i < 3 ? "src/f%d.c" : "src/lib/g%d.c",
		    i);
		snprintf(text, sizeof(text), "content of file %d\n", i);
		fd = openat(root, p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);
		FSTEST_CHECK(fd >= 0);
		FSTEST_CHECK(write_all(fd, text, strlen(text)) == 0);
		FSTEST_CHECK(fchmod(fd, i % 2 ? 0640 : 0751) == 0);
		FSTEST_CHECK(futimens(fd, old) == 0);
		close(fd);
	}
	fd = openat(root, "README", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	FSTEST_CHECK(fd >= 0 && write_all(fd, "read me\n", 8) == 0);
	close(fd);
	FSTEST_CHECK(symlinkat("src/f0.c", root, "link") == 0);
	FSTEST_CHECK(symlinkat("../README", root, "docs/up") == 0);
	/* A directory its owner may not write: restored with what it holds
	 * made first, its mode set last. */
	FSTEST_CHECK(mkdirat(root, "ro", 0700) == 0);
	fd = openat(root, "ro/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0444);
	FSTEST_CHECK(fd >= 0 && write_all(fd, "read only\n", 10) == 0);
	close(fd);
	FSTEST_CHECK(fchmodat(root, "ro", 0555, 0) == 0);
	return 0;
}

/* Changes of every kind through the file API; 0 or the failing line. */
static int
change_everything(void)
{
	enum fs_error why;

	FSTEST_CHECK(put("new.txt", "new\n", 0644, false) == FS_OK);
	FSTEST_CHECK(put("README", "changed\n", 0600, true) == FS_OK);
	FSTEST_CHECK(put("src/lib/g4.c", "changed g4\n", 0644, true) == FS_OK);
	FSTEST_CHECK(fsapi_remove(&ctx, "src/f1.c", false, &why) == 0);
	FSTEST_CHECK(
	    fsapi_rename(&ctx, "src/f2.c", "moved.c", false, &why) == 0);
	FSTEST_CHECK(fsapi_rename(&ctx, "src/lib", "lib2", false, &why) == 0);
	FSTEST_CHECK(
	    put("lib2/g3.c", "changed after the move\n", 0644, true) == FS_OK);
	FSTEST_CHECK(fsapi_mkdir(&ctx, "a/b/c", 0755, true, &why) == 0);
	FSTEST_CHECK(put("a/b/c/deep", "deep\n", 0644, false) == FS_OK);
	FSTEST_CHECK(fsapi_remove(&ctx, "link", false, &why) == 0);
	FSTEST_CHECK(fsapi_symlink(&ctx, "link", "elsewhere", &why) == 0);
	FSTEST_CHECK(fsapi_symlink(&ctx, "docs/abs", "/etc/passwd", &why) == 0);
	FSTEST_CHECK(fsapi_remove(&ctx, "docs", true, &why) == 0);
	FSTEST_CHECK(fsapi_mkdir(&ctx, "docs", 0755, false, &why) == 0);
	FSTEST_CHECK(put("docs/other", "x\n", 0644, false) == FS_OK);
	FSTEST_CHECK(fsapi_remove(&ctx, "src", true, &why) == 0);
	FSTEST_CHECK(fsapi_remove(&ctx, "ro", true, &why) == 0);
	return 0;
}

/* The round trip; 0 or the failing line (runs as any user). */
static int
round_trip(void)
{
	char *before, *changed, *after;
	int line;

	if ((line = plant()) != 0)
		return line;
	FSTEST_CHECK((before = tree_text()) != NULL);
	FSTEST_CHECK(attach(16, UINT64_C(1) << 30) == 0);
	FSTEST_CHECK(mk("c1", CKPT_OK) == 0);
	if ((line = change_everything()) != 0)
		return line;
	FSTEST_CHECK((changed = tree_text()) != NULL);
	FSTEST_CHECK(strcmp(before, changed) != 0);
	FSTEST_CHECK(restore("c1") == 0);
	FSTEST_CHECK((after = tree_text()) != NULL);
	if (strcmp(before, after) != 0) {
		fprintf(stderr, "before:\n%s\nafter:\n%s\n", before, after);
		return __LINE__;
	}
	/* Restorable again, after more changes. */
	FSTEST_CHECK(ckpt_count(store) == 1);
	if ((line = change_everything()) != 0)
		return line;
	FSTEST_CHECK(restore("c1") == 0);
	free(after);
	FSTEST_CHECK((after = tree_text()) != NULL);
	FSTEST_CHECK(strcmp(before, after) == 0);
	free(before);
	free(changed);
	free(after);
	return 0;
}

/* ---- Tests ------------------------------------------------------------ */

Test(checkpoint, every_change_undone_byte_for_byte)
{
	int line = round_trip();

	cr_assert_eq(line, 0, "check failed at line %d", line);
}

Test(checkpoint, as_an_ordinary_user)
{
	fstest_as_nobody(round_trip);
}

Test(checkpoint, two_checkpoints_restore_the_newer_then_the_older)
{
	char *a, *b, *now;
	enum fs_error why;

	cr_assert_eq(plant(), 0);
	a = tree_text();
	cr_assert_eq(attach(16, UINT64_C(1) << 30), 0);
	cr_assert_eq(mk("one", CKPT_OK), 0);
	cr_assert_eq(put("README", "second\n", 0644, true), FS_OK);
	cr_assert_eq(fsapi_remove(&ctx, "src/lib", true, &why), 0);
	b = tree_text();
	cr_assert_eq(mk("two", CKPT_OK), 0);
	cr_assert_eq(put("README", "third\n", 0644, true), FS_OK);
	cr_assert_eq(fsapi_mkdir(&ctx, "src/lib", 0700, false, &why), 0);
	cr_assert_eq(fsapi_rename(&ctx, "src", "source", false, &why), 0);
	cr_assert_eq(restore("two"), 0);
	now = tree_text();
	cr_assert_str_eq(now, b);
	free(now);
	cr_assert_eq(ckpt_count(store), 2);
	cr_assert_eq(put("src/f0.c", "again\n", 0644, true), FS_OK);
	cr_assert_eq(restore("one"), 0);
	now = tree_text();
	cr_assert_str_eq(now, a);
	cr_assert_eq(ckpt_count(store), 1, "the newer one is dropped");
	cr_assert_eq(restore("two"), -1);
	free(now);
	free(a);
	free(b);
}

Test(checkpoint, drop_the_middle_one_and_still_restore_the_oldest)
{
	struct ckpt_info info;
	enum ckpt_error err;
	char *a, *c, *now;
	enum fs_error why;

	cr_assert_eq(plant(), 0);
	a = tree_text();
	cr_assert_eq(attach(16, UINT64_C(1) << 30), 0);
	cr_assert_eq(mk("a", CKPT_OK), 0);
	cr_assert_eq(put("README", "b\n", 0644, true), FS_OK);
	cr_assert_eq(put("src/f0.c", "b\n", 0644, true), FS_OK);
	cr_assert_eq(mk("b", CKPT_OK), 0);
	/* The same paths again, and one inside a directory then removed:
	 * the older interval's versions must win. */
	cr_assert_eq(put("README", "c\n", 0644, true), FS_OK);
	cr_assert_eq(put("src/lib/g3.c", "c\n", 0644, true), FS_OK);
	cr_assert_eq(fsapi_remove(&ctx, "src", true, &why), 0);
	cr_assert_eq(fsapi_mkdir(&ctx, "src", 0755, false, &why), 0);
	cr_assert_eq(put("src/x", "c\n", 0644, true), FS_OK);
	c = tree_text();
	cr_assert_eq(mk("c", CKPT_OK), 0);
	cr_assert_eq(put("README", "d\n", 0644, true), FS_OK);
	cr_assert_eq(ckpt_drop(store, "b", 1, &err), 0);
	cr_assert_eq(ckpt_count(store), 2);
	ckpt_info(store, 0, &info);
	cr_assert_str_eq(info.name, "a");
	cr_assert_eq(ckpt_drop(store, "b", 1, &err), -1);
	cr_assert_eq(err, CKPT_NO_SUCH);
	cr_assert_eq(restore("c"), 0);
	now = tree_text();
	cr_assert_str_eq(now, c);
	free(now);
	cr_assert_eq(restore("a"), 0);
	now = tree_text();
	cr_assert_str_eq(now, a);
	/* Dropping the oldest frees it; the store is empty again. */
	cr_assert_eq(ckpt_drop(store, "a", 1, &err), 0);
	cr_assert_eq(ckpt_count(store), 0);
	cr_assert_eq(ckpt_store_files(store), 0);
	free(now);
	free(a);
	free(c);
}

Test(checkpoint, the_count_bound_and_checkpoints_off)
{
	enum ckpt_error err;

	cr_assert_eq(attach(2, 1 << 20), 0);
	cr_assert_eq(mk("one", CKPT_OK), 0);
	cr_assert_eq(mk("two", CKPT_OK), 0);
	cr_assert_eq(mk("three", CKPT_TOO_MANY), 0);
	cr_assert_eq(ckpt_max(store), 2);
	cr_assert_eq(ckpt_drop(store, "one", 3, &err), 0);
	cr_assert_eq(mk("three", CKPT_OK), 0);
	ckpt_store_free(store);
	store = NULL;
	cr_assert_eq(attach(0, 1 << 20), 0);
	cr_assert_eq(mk("one", CKPT_OFF), 0);
	cr_assert_eq(ckpt_count(store), 0);
}

Test(checkpoint, names_refused)
{
	static const char *const bad[] = {"", "a/b", "a b", "..\n",
	    "caf\xc3\xa9", "x\x01",
	    "65-bytes-"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};

	cr_assert_eq(attach(16, 1 << 20), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(mk(bad[i], CKPT_INVALID_NAME), 0, "%s", bad[i]);
	cr_assert(ckpt_name_valid("v1.2_rc-3", 9));
	cr_assert(ckpt_name_valid(bad[6], 64));
	cr_assert_eq(mk("same", CKPT_OK), 0);
	cr_assert_eq(mk("same", CKPT_EXISTS), 0);
	cr_assert_eq(restore("nope"), -1);
	cr_assert_str_eq(ckpt_error_name(CKPT_BROKEN), "checkpoint_broken");
	cr_assert_str_eq(ckpt_error_name(CKPT_INVALID_NAME),
	    "invalid_checkpoint_name");
}

Test(checkpoint, the_cost_is_what_changed)
{
	struct ckpt_info info;
	enum fs_error why;

	for (int i = 0; i < 300; i++) {
		char p[32];

		snprintf(p, sizeof(p), "f%03d", i);
		fstest_mkfile(p, "unchanged content\n");
	}
	cr_assert_eq(attach(16, UINT64_C(1) << 30), 0);
	cr_assert_eq(mk("c", CKPT_OK), 0);
	cr_assert_eq(ckpt_store_files(store), 0, "a checkpoint copies nothing");
	cr_assert_eq(put("f001", "x\n", 0644, true), FS_OK);
	cr_assert_eq(put("f001", "y\n", 0644, true), FS_OK); /* saved once */
	cr_assert_eq(put("f002", "x\n", 0644, true), FS_OK);
	cr_assert_eq(fsapi_remove(&ctx, "f003", false, &why), 0);
	cr_assert_eq(put("new1", "x\n", 0644, false), FS_OK);
	cr_assert_eq(fsapi_mkdir(&ctx, "d/e", 0755, true, &why), 0);
	/* The three old files only: new paths are saved as absent. */
	cr_assert_eq(ckpt_store_files(store), 3);
	ckpt_info(store, 0, &info);
	cr_assert_eq(info.paths, 5, "f001 f002 f003 new1 d: %llu",
	    (unsigned long long)info.paths);
	cr_assert_eq(info.bytes, 3 * strlen("unchanged content\n"));
	cr_assert_eq(restore("c"), 0);
	cr_assert_eq(ckpt_store_files(store), 0);
	cr_assert_eq(faccessat(root, "d", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	cr_assert_eq(faccessat(root, "f003", F_OK, AT_SYMLINK_NOFOLLOW), 0);
}

Test(checkpoint, a_change_the_store_cannot_hold_is_refused)
{
	char buf[64] = "";
	enum fs_error why;
	ssize_t n;
	int fd;

	fstest_mkfile("big", "0123456789012345678901234567890123456789\n");
	fstest_mkfile("small", "ab\n");
	cr_assert_eq(attach(16, 10), 0);
	cr_assert_eq(mk("c", CKPT_OK), 0);
	cr_assert_eq(put("big", "new\n", 0644, true), FS_QUOTA_EXCEEDED);
	cr_assert_eq(fsapi_remove(&ctx, "big", false, &why), -EDQUOT);
	cr_assert_eq(why, FS_QUOTA_EXCEEDED);
	fd = openat(root, "big", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "the refused change touched nothing");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_eq(n, 41);
	cr_assert_eq(ckpt_store_files(store), 0, "nothing half saved");
	/* What fits still goes. */
	cr_assert_eq(put("small", "cd\n", 0644, true), FS_OK);
	cr_assert_eq(restore("c"), 0);
}

Test(checkpoint, a_failed_restore_breaks_the_newer_ones_only)
{
	struct ckpt_restore_report rep;
	char *a, *now;
	enum fs_error why;

	cr_assert_eq(plant(), 0);
	a = tree_text();
	cr_assert_eq(attach(16, UINT64_C(1) << 30), 0);
	cr_assert_eq(mk("c1", CKPT_OK), 0);
	cr_assert_eq(put("src/f0.c", "one\n", 0644, true), FS_OK);
	cr_assert_eq(mk("c2", CKPT_OK), 0);
	cr_assert_eq(put("src/f0.c", "two\n", 0644, true), FS_OK);
	/* Behind the API's back (a job): src is now a link. */
	cr_assert_eq(renameat(root, "src", root, "src2"), 0);
	cr_assert_eq(symlinkat("src2", root, "src"), 0);
	cr_assert_eq(ckpt_restore(store, &ctx, "c1", 2, &rep), -1);
	cr_assert_eq(rep.err, CKPT_FILE);
	cr_assert_eq(rep.why, FS_SYMLINK_REFUSED, "%s", fs_error_name(rep.why));
	cr_assert_str_eq(rep.path, "src/f0.c");
	cr_assert_eq(ckpt_restore(store, &ctx, "c2", 2, &rep), -1);
	cr_assert_eq(rep.err, CKPT_BROKEN);
	/* Put right, the older one restores again. */
	cr_assert_eq(unlinkat(root, "src", 0), 0);
	cr_assert_eq(renameat(root, "src2", root, "src"), 0);
	cr_assert_eq(fsapi_remove(&ctx, "new-after", false, &why), -ENOENT);
	cr_assert_eq(ckpt_restore(store, &ctx, "c1", 2, &rep), 0);
	now = tree_text();
	cr_assert_str_eq(now, a);
	free(now);
	free(a);
}

Test(checkpoint, broken_refused_and_no_hook_without_a_checkpoint)
{
	struct ckpt_restore_report rep;

	cr_assert_eq(attach(16, 1 << 20), 0);
	cr_assert_eq(put("before", "x\n", 0644, false), FS_OK);
	cr_assert_eq(ckpt_store_files(store), 0);
	cr_assert_eq(mk("c", CKPT_OK), 0);
	ckpt_mark_all_broken(store);
	cr_assert_eq(ckpt_restore(store, &ctx, "c", 1, &rep), -1);
	cr_assert_eq(rep.err, CKPT_BROKEN);
}
