/*
 * test_stage.c: a job's writes read from an overlay's upper layer and
 * committed to the workspace (broker/fs/stage.c, stage_commit.c,
 * stage_journal.c; issue 26), on trees made by hand: an upper directory
 * with files, directories, a symlink, whiteouts (mknod c 0 0, allowed
 * unprivileged since Linux 5.8), opaque directories (the xattr
 * user.overlay.opaque), a FIFO, a hard-linked pair, a name with a
 * control byte and a copy-up that changed nothing, over a lower
 * directory (the workspace). The scan's change set and refusals; the
 * workspace after a commit (hashes, modes, symlink targets, mtimes); a
 * conflict; a commit that fails part way and one killed part way, both
 * leaving the workspace as it was (after stage_recover for the second);
 * a journal marked done; a symlink planted on a parent. The scenario
 * runs again as uid 65534 (fstest_as_nobody) when the test is root.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sha2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/magic.h>
#include <sys/vfs.h>

#include "fstest.h"
#include "fsutil.h"
#include "snapshot.h"
#include "stage.h"

static char stagedir[128];
static int stage = -1, upper = -1;
static struct stage_ref sref = {.fd = -1}; /* stage, its token zero */
static char failmsg[8192]; /* what the last failed check saw */

#define CHECK(c)                                                             \
	do {                                                                 \
		if (!(c)) {                                                  \
			if (failmsg[0] == '\0')                              \
				snprintf(failmsg, sizeof(failmsg), "%s: %s", \
				    #c, strerror(errno));                    \
			return __LINE__;                                     \
		}                                                            \
	} while (0)

static void
setup(void)
{
	fstest_setup("stage", false);
	snprintf(stagedir, sizeof(stagedir), "%s/stage", outside);
	cr_assert_eq(mkdir(stagedir, 0755), 0);
	stage = open(stagedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(stage, 0);
	sref.fd = stage;
	cr_assert_eq(mkdirat(stage, STAGE_UPPER, 0755), 0);
	cr_assert_eq(mkdirat(stage, STAGE_WORK, 0755), 0);
	upper = openat(stage, STAGE_UPPER, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(upper, 0);
	failmsg[0] = '\0';
}

static void
teardown(void)
{
	close(upper);
	close(stage);
	fstest_teardown();
}

TestSuite(stage, .init = setup, .fini = teardown, .timeout = 60);

static struct fs_quota
quota(void)
{
	struct fs_quota q = {
	    .file_bytes = 1u << 20,
	    .workspace_bytes = 64u << 20,
	    .max_files = 10000,
	    .max_path = 4096,
	    .max_depth = 64,
	    .mode_mask = 0777,
	    .allow_hardlinks = false,
	    .inline_bytes = 1u << 20,
	};

	return q;
}

/* ---- Building trees --------------------------------------------------- */

static int
mkfile(int dirfd, const char *path, const char *text, mode_t mode)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);

	CHECK(fd >= 0);
	CHECK(write_all(fd, text, strlen(text)) == 0);
	CHECK(fchmod(fd, mode) == 0);
	close(fd);
	return 0;
}

static int
mkdir_mode(int dirfd, const char *path, mode_t mode)
{
	CHECK(mkdirat(dirfd, path, 0700) == 0);
	CHECK(fchmodat(dirfd, path, mode, 0) == 0);
	return 0;
}

static int
set_opaque(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(fsetxattr(fd, "user.overlay.opaque", "y", 1, 0) == 0);
	close(fd);
	return 0;
}

static int
whiteout(int dirfd, const char *path)
{
	CHECK(mknodat(dirfd, path, S_IFCHR | 0, makedev(0, 0)) == 0);
	return 0;
}

/* The job's mtime of upper mod.txt. */
static const struct timespec mod_mtime = {1000000000, 500};

/* The lower layer (the workspace) of the scenario. */
static int
build_lower(void)
{
	int r = 0;

	r = r ? r : mkfile(root, "keep.txt", "keep\n", 0644);
	r = r ? r : mkfile(root, "mod.txt", "old\n", 0644);
	r = r ? r : mkfile(root, "same.txt", "same\n", 0644);
	r = r ? r : mkfile(root, "del.txt", "del\n", 0644);
	r = r ? r : mkdir_mode(root, "deldir", 0755);
	r = r ? r : mkfile(root, "deldir/a", "a", 0644);
	r = r ? r : mkdir_mode(root, "deldir/sub", 0755);
	r = r ? r : mkfile(root, "deldir/sub/b", "b", 0644);
	r = r ? r : mkdir_mode(root, "opq", 0755);
	r = r ? r : mkfile(root, "opq/old1", "o1", 0644);
	r = r ? r : mkfile(root, "opq/keepme", "k", 0644);
	r = r ? r : mkdir_mode(root, "merge", 0755);
	r = r ? r : mkfile(root, "merge/x", "x", 0644);
	r = r ? r : mkdir_mode(root, "chm", 0755);
	r = r ? r : mkfile(root, "tchg", "file\n", 0644);
	return r;
}

/* The upper layer of the scenario: what the job did. */
static int
build_upper(void)
{
	struct timespec ts[2] = {{0, UTIME_OMIT}, mod_mtime};
	int r = 0;

	r = r ? r : mkfile(upper, "mod.txt", "new content\n", 0600);
	if (r == 0 && utimensat(upper, "mod.txt", ts, 0) < 0)
		r = __LINE__;
	r = r ? r : mkfile(upper, "same.txt", "same\n", 0644);
	r = r ? r : whiteout(upper, "del.txt");
	r = r ? r : whiteout(upper, "deldir");
	r = r ? r : mkdir_mode(upper, "opq", 0755);
	r = r ? r : set_opaque(upper, "opq");
	r = r ? r : mkfile(upper, "opq/new1", "n1", 0644);
	r = r ? r : mkfile(upper, "opq/keepme", "k", 0644);
	r = r ? r : mkdir_mode(upper, "merge", 0755);
	r = r ? r : mkfile(upper, "merge/y", "y", 0644);
	r = r ? r : mkdir_mode(upper, "chm", 0700);
	if (r == 0 && symlinkat("target/x", upper, "lnk") < 0)
		r = __LINE__;
	r = r ? r : mkdir_mode(upper, "tchg", 0755);
	r = r ? r : set_opaque(upper, "tchg");
	r = r ? r : mkfile(upper, "tchg/f", "f", 0644);
	if (r == 0 && mkfifoat(upper, "pipe", 0644) < 0)
		r = __LINE__;
	r = r ? r : mkfile(upper, "h1", "hard", 0644);
	if (r == 0 && linkat(upper, "h1", upper, "h2", 0) < 0)
		r = __LINE__;
	r = r ? r : mkfile(upper, "ctl\x01name", "ctl", 0644);
	r = r ? r : mkdir_mode(upper, STAGE_JOURNAL, 0755);
	r = r ? r : mkdir_mode(upper, "newdir", 0750);
	r = r ? r : mkfile(upper, "newdir/n", "n", 0640);
	return r;
}

static int
build(void)
{
	int r = build_lower();

	return r ? r : build_upper();
}

/* ---- Expectations ----------------------------------------------------- */

struct want_change {
	const char *path;
	enum change_kind kind;
};

static const struct want_change want_changes[] = {
    {"chm", CHANGE_MODIFIED},
    {"ctl\x01name", CHANGE_CREATED},
    {"del.txt", CHANGE_DELETED},
    {"deldir", CHANGE_DELETED},
    {"deldir/a", CHANGE_DELETED},
    {"deldir/sub", CHANGE_DELETED},
    {"deldir/sub/b", CHANGE_DELETED},
    {"lnk", CHANGE_CREATED},
    {"merge/y", CHANGE_CREATED},
    {"mod.txt", CHANGE_MODIFIED},
    {"newdir", CHANGE_CREATED},
    {"newdir/n", CHANGE_CREATED},
    {"opq/new1", CHANGE_CREATED},
    {"opq/old1", CHANGE_DELETED},
    {"tchg", CHANGE_MODIFIED},
    {"tchg/f", CHANGE_CREATED},
};
#define NCHANGES (sizeof(want_changes) / sizeof(want_changes[0]))

static const struct {
	const char *path;
	enum fs_error why;
} want_bad[] = {
    {STAGE_JOURNAL, FS_INVALID_PATH},
    {"h1", FS_HARDLINKED_FILE},
    {"h2", FS_HARDLINKED_FILE},
    {"pipe", FS_NOT_REGULAR_FILE},
};
#define NBAD (sizeof(want_bad) / sizeof(want_bad[0]))

/* One entry of the workspace expected after the commit. */
struct want_entry {
	const char *path;
	enum fs_type type;
	uint32_t mode; /* 0: not checked (a symlink) */
	const char *data; /* a file's content, a symlink's target */
};

static const struct want_entry want_tree[] = {
    {"chm", FS_T_DIR, 0700, NULL},
    {"ctl\x01name", FS_T_FILE, 0644, "ctl"},
    {"keep.txt", FS_T_FILE, 0644, "keep\n"},
    {"lnk", FS_T_SYMLINK, 0, "target/x"},
    {"merge", FS_T_DIR, 0755, NULL},
    {"merge/x", FS_T_FILE, 0644, "x"},
    {"merge/y", FS_T_FILE, 0644, "y"},
    {"mod.txt", FS_T_FILE, 0600, "new content\n"},
    {"newdir", FS_T_DIR, 0750, NULL},
    {"newdir/n", FS_T_FILE, 0640, "n"},
    {"opq", FS_T_DIR, 0755, NULL},
    {"opq/keepme", FS_T_FILE, 0644, "k"},
    {"opq/new1", FS_T_FILE, 0644, "n1"},
    {"same.txt", FS_T_FILE, 0644, "same\n"},
    {"tchg", FS_T_DIR, 0755, NULL},
    {"tchg/f", FS_T_FILE, 0644, "f"},
};
#define NTREE (sizeof(want_tree) / sizeof(want_tree[0]))

static int
check_changes(const struct stage_scan *sc, const struct changes *ch)
{
	size_t i;

	snprintf(failmsg, sizeof(failmsg), "%zu changes, %zu bad", ch->n,
	    sc->nbad);
	CHECK(ch->n == NCHANGES);
	CHECK(!ch->truncated);
	for (i = 0; i < NCHANGES; i++) {
		snprintf(failmsg, sizeof(failmsg), "change %zu: %s (%d)", i,
		    ch->c[i].entry->path, (int)ch->c[i].kind);
		CHECK(strcmp(ch->c[i].entry->path, want_changes[i].path) == 0);
		CHECK(ch->c[i].kind == want_changes[i].kind);
	}
	CHECK(sc->nbad == NBAD);
	for (i = 0; i < NBAD; i++) {
		snprintf(failmsg, sizeof(failmsg), "bad %zu: %s (%d)", i,
		    sc->bad[i].path, (int)sc->bad[i].why);
		CHECK(strcmp(sc->bad[i].path, want_bad[i].path) == 0);
		CHECK(sc->bad[i].why == want_bad[i].why);
	}
	failmsg[0] = '\0';
	return 0;
}

/* Checks the workspace's entry E against W. */
static int
check_entry(const struct snap_entry *e, const struct want_entry *w)
{
	uint8_t sum[SNAPSHOT_SHA256_LEN];
	char target[256];
	ssize_t n;

	snprintf(failmsg, sizeof(failmsg), "entry %s (want %s)", e->path,
	    w->path);
	CHECK(strcmp(e->path, w->path) == 0);
	CHECK(e->type == w->type);
	CHECK(w->mode == 0 || e->mode == w->mode);
	if (w->type == FS_T_FILE) {
		SHA2_CTX h;

		SHA256Init(&h);
		SHA256Update(&h, (const uint8_t *)w->data, strlen(w->data));
		SHA256Final(sum, &h);
		CHECK(e->hashed && memcmp(e->sha256, sum, sizeof(sum)) == 0);
	}
	if (w->type == FS_T_SYMLINK) {
		n = readlinkat(root, e->path, target, sizeof(target) - 1);
		CHECK(n >= 0);
		target[n] = '\0';
		CHECK(strcmp(target, w->data) == 0);
	}
	failmsg[0] = '\0';
	return 0;
}

/* The workspace is exactly want_tree (no journal left either). */
static int
check_tree(void)
{
	struct fs_quota q = quota();
	struct snapshot s = {0};
	struct stat st;
	size_t i;
	int r = 0;

	CHECK(snapshot_take(root, &q, NULL, NULL, &s) == 0);
	snprintf(failmsg, sizeof(failmsg), "%zu entries", s.n);
	if (s.n != NTREE)
		r = __LINE__;
	for (i = 0; r == 0 && i < NTREE; i++)
		r = check_entry(&s.e[i], &want_tree[i]);
	snapshot_free(&s);
	if (r != 0)
		return r;
	failmsg[0] = '\0';
	CHECK(fstatat(root, "mod.txt", &st, AT_SYMLINK_NOFOLLOW) == 0);
	CHECK(st.st_mtim.tv_sec == mod_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == mod_mtime.tv_nsec);
	return 0;
}

/* Whether A and B hold the same entries: paths, types, modes, sizes,
 * hashes, and for files and symlinks their inode's mtime. */
static int
check_same(const struct snapshot *a, const struct snapshot *b)
{
	size_t i;

	snprintf(failmsg, sizeof(failmsg), "%zu entries, then %zu", a->n, b->n);
	CHECK(a->n == b->n);
	for (i = 0; i < a->n; i++) {
		const struct snap_entry *x = &a->e[i], *y = &b->e[i];

		snprintf(failmsg, sizeof(failmsg), "%s then %s", x->path,
		    y->path);
		CHECK(strcmp(x->path, y->path) == 0);
		CHECK(x->type == y->type && x->mode == y->mode);
		if (x->type == FS_T_DIR)
			continue;
		CHECK(x->size == y->size && x->hashed == y->hashed);
		CHECK(memcmp(x->sha256, y->sha256, sizeof(x->sha256)) == 0);
		CHECK(x->mtime_ns == y->mtime_ns);
	}
	failmsg[0] = '\0';
	return 0;
}

/* Scans the stage into SC and diffs it into CH. */
static int
scan(struct stage_scan *sc, struct changes *ch)
{
	struct fs_quota q = quota();

	memset(sc, 0, sizeof(*sc));
	CHECK(stage_scan(&sref, root, &q, NULL, sc) == 0);
	CHECK(snapshot_diff(&sc->before, &sc->after, ch) == 0);
	return 0;
}

static void
assert_ok(int line)
{
	cr_assert_eq(line, 0, "check at line %d failed: %s", line, failmsg);
}

/* Asserts that the workspace holds what BEFORE (freed) recorded. */
static void
assert_as_before(struct snapshot *before)
{
	struct fs_quota q = quota();
	struct snapshot after = {0};

	cr_assert_eq(snapshot_take(root, &q, NULL, NULL, &after), 0);
	assert_ok(check_same(before, &after));
	snapshot_free(before);
	snapshot_free(&after);
}

/* The upper file zz-big, of N bytes 'z': last in the order of puts. */
static void
add_big(size_t n)
{
	char *big = malloc(n + 1);

	cr_assert_not_null(big);
	memset(big, 'z', n);
	big[n] = '\0';
	assert_ok(mkfile(upper, "zz-big", big, 0644));
	free(big);
}

/* ---- The tests -------------------------------------------------------- */

Test(stage, scan_gives_the_change_set)
{
	struct stage_scan sc;
	struct changes ch;

	assert_ok(build());
	assert_ok(scan(&sc, &ch));
	assert_ok(check_changes(&sc, &ch));
	cr_assert_gt(sc.stage_bytes, 0);
	cr_assert_gt(sc.stage_files, 0);
	cr_assert_leq(sc.upper_bytes, sc.stage_bytes);
	changes_free(&ch);
	stage_scan_free(&sc);
}

Test(stage, scan_finds_nothing_in_an_empty_upper)
{
	struct stage_scan sc;
	struct changes ch;

	assert_ok(build_lower());
	assert_ok(scan(&sc, &ch));
	cr_assert_eq(ch.n, 0);
	cr_assert_eq(sc.nbad, 0);
	changes_free(&ch);
	stage_scan_free(&sc);
}

/* The opener of stage_set_opener, counting its calls (then as the
 * broker's own would, without a spawner). */
static int opens;

static int
counting_opener(void *arg, int r, const uint8_t token[STAGE_TOKEN_BYTES],
    int dir, const char *name, bool directory)
{
	(void)arg, (void)r, (void)token;
	opens++;
	return directory
	    ? openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
	    : openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* On a tmpfs (the stage's file system) an upper layer with no entry is
 * known to hold no change without opening it, through the spawner or
 * otherwise (stage.c, upper_empty); one entry and it is read. Skipped
 * where /dev/shm is no tmpfs. */
Test(stage, an_empty_upper_on_tmpfs_is_not_opened)
{
	char dir[] = "/dev/shm/stockade-test-stage-XXXXXX";
	struct stage_ref ref = {.fd = -1};
	struct fs_quota q = quota();
	struct stage_scan sc;
	struct changes ch;
	struct statfs sf;
	int fd;

	cr_assert_not_null(mkdtemp(dir));
	ref.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(ref.fd, 0);
	if (fstatfs(ref.fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC) {
		rmdir(dir);
		cr_skip_test("/dev/shm is not a tmpfs here");
	}
	cr_assert_eq(mkdirat(ref.fd, STAGE_UPPER, 0755), 0);
	assert_ok(build_lower());
	stage_set_opener(counting_opener, NULL);
	opens = 0;
	memset(&sc, 0, sizeof(sc));
	cr_assert_eq(stage_scan(&ref, root, &q, NULL, &sc), 0);
	cr_assert_eq(snapshot_diff(&sc.before, &sc.after, &ch), 0);
	cr_assert_eq(ch.n, 0);
	cr_assert_eq(opens, 0, "an empty upper layer was opened");
	changes_free(&ch);
	stage_scan_free(&sc);

	fd = openat(ref.fd, STAGE_UPPER "/new.txt",
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	close(fd);
	memset(&sc, 0, sizeof(sc));
	cr_assert_eq(stage_scan(&ref, root, &q, NULL, &sc), 0);
	cr_assert_eq(snapshot_diff(&sc.before, &sc.after, &ch), 0);
	stage_set_opener(NULL, NULL);
	cr_assert_eq(ch.n, 1, "%zu changes", ch.n);
	cr_assert_gt(opens, 0);
	changes_free(&ch);
	stage_scan_free(&sc);
	cr_assert_eq(unlinkat(ref.fd, STAGE_UPPER "/new.txt", 0), 0);
	cr_assert_eq(unlinkat(ref.fd, STAGE_UPPER, AT_REMOVEDIR), 0);
	close(ref.fd);
	cr_assert_eq(rmdir(dir), 0);
}

/* The whole scenario: build, scan, commit, check. */
static int
scenario(void)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	int r;

	if ((r = build()) != 0 || (r = scan(&sc, &ch)) != 0 ||
	    (r = check_changes(&sc, &ch)) != 0)
		return r;
	fsapi_ctx_init(&ctx, root, &q);
	r = stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep);
	snprintf(failmsg, sizeof(failmsg), "commit %d %s at %s", r,
	    fs_error_name(rep.why), rep.path);
	CHECK(r == 0);
	CHECK(rep.applied == NCHANGES && !rep.conflict && !rep.undone);
	/* ctl\x01name, merge/y, mod.txt, newdir/n, opq/new1, tchg/f */
	CHECK(rep.bytes == 3 + 1 + 12 + 1 + 2 + 1);
	failmsg[0] = '\0';
	changes_free(&ch);
	stage_scan_free(&sc);
	return check_tree();
}

Test(stage, commit_makes_the_merged_tree)
{
	assert_ok(scenario());
}

Test(stage, commit_as_nobody)
{
	if (geteuid() == 0) {
		cr_assert_eq(chown(outside, FSTEST_NOBODY, FSTEST_NOBODY), 0);
		cr_assert_eq(chown(stagedir, FSTEST_NOBODY, FSTEST_NOBODY), 0);
		cr_assert_eq(fchownat(stage, STAGE_UPPER, FSTEST_NOBODY,
				 FSTEST_NOBODY, 0),
		    0);
	}
	fstest_as_nobody(scenario);
}

Test(stage, pick_applies_only_what_was_picked)
{
	enum stage_pick pick[NCHANGES];
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	struct stat st;
	size_t i;

	assert_ok(build());
	assert_ok(scan(&sc, &ch));
	cr_assert_eq(ch.n, NCHANGES);
	for (i = 0; i < NCHANGES; i++)
		pick[i] = strcmp(ch.c[i].entry->path, "mod.txt") == 0
		    ? STAGE_APPLY
		    : STAGE_HOLD;
	fsapi_ctx_init(&ctx, root, &q);
	cr_assert_eq(stage_commit(&ctx, &sref, &sc, &ch, pick, &rep), 0);
	cr_assert_eq(rep.applied, 1);
	cr_assert_eq(fstatat(root, "mod.txt", &st, 0), 0);
	cr_assert_eq(st.st_size, (off_t)strlen("new content\n"));
	cr_assert_eq(fstatat(root, "del.txt", &st, 0), 0, "not picked");
	cr_assert_neq(fstatat(root, "newdir", &st, 0), 0, "not picked");
	changes_free(&ch);
	stage_scan_free(&sc);
}

Test(stage, conflict_applies_nothing)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct snapshot before = {0};
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;

	assert_ok(build());
	assert_ok(scan(&sc, &ch));
	/* A client rewrites mod.txt after the scan. */
	assert_ok(mkfile(root, "mod.txt", "client's\n", 0644));
	cr_assert_eq(snapshot_take(root, &q, NULL, NULL, &before), 0);
	fsapi_ctx_init(&ctx, root, &q);
	cr_assert_lt(stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep), 0);
	cr_assert(rep.conflict);
	cr_assert_str_eq(rep.path, "mod.txt");
	cr_assert_eq(rep.applied, 0);
	cr_assert(!rep.undone);
	assert_as_before(&before);
	changes_free(&ch);
	stage_scan_free(&sc);
}

Test(stage, commit_failing_midway_is_undone)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct snapshot before = {0};
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	struct stat st;

	assert_ok(build());
	add_big(200 * 1024);
	assert_ok(scan(&sc, &ch));
	cr_assert_eq(snapshot_take(root, &q, NULL, NULL, &before), 0);
	/* Room for every file but the last, the largest. */
	q.workspace_bytes = 64 * 1024;
	fsapi_ctx_init(&ctx, root, &q);
	cr_assert_lt(stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep), 0);
	cr_assert_eq(rep.why, FS_QUOTA_EXCEEDED, "%s", fs_error_name(rep.why));
	cr_assert_str_eq(rep.path, "zz-big");
	cr_assert(rep.undone);
	cr_assert(!rep.conflict);
	cr_assert_neq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW),
	    0);
	assert_as_before(&before);
	changes_free(&ch);
	stage_scan_free(&sc);
}

Test(stage, symlink_on_a_parent_is_refused)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	struct stat st;
	char x[160];

	assert_ok(mkdir_mode(root, "d", 0755));
	assert_ok(mkfile(root, "d/old", "old", 0644));
	assert_ok(mkdir_mode(upper, "d", 0755));
	assert_ok(mkfile(upper, "d/x", "x", 0644));
	assert_ok(scan(&sc, &ch));
	cr_assert_eq(ch.n, 1);
	cr_assert_str_eq(ch.c[0].entry->path, "d/x");
	/* A client swaps d for a link out of the workspace. */
	cr_assert_eq(renameat(root, "d", root, "d2"), 0);
	cr_assert_eq(symlinkat(outside, root, "d"), 0);
	fsapi_ctx_init(&ctx, root, &q);
	cr_assert_lt(stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep), 0);
	cr_assert_eq(rep.why, FS_SYMLINK_REFUSED, "%s", fs_error_name(rep.why));
	cr_assert_str_eq(rep.path, "d/x");
	snprintf(x, sizeof(x), "%s/x", outside);
	cr_assert_neq(stat(x, &st), 0, "written through the link");
	cr_assert_neq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW),
	    0);
	changes_free(&ch);
	stage_scan_free(&sc);
}

/* Kills the process at the second copy of file data: some of the plan
 * ran, and the rest not. */
static void
kill_at_second(void *arg, uint64_t bytes)
{
	static int calls;

	(void)arg;
	(void)bytes;
	if (++calls == 2)
		raise(SIGKILL);
}

Test(stage, recover_undoes_a_commit_killed_midway)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct snapshot before = {0};
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	struct stat st;
	char msg[256];
	pid_t pid;
	int ws_st;

	assert_ok(build());
	assert_ok(scan(&sc, &ch));
	cr_assert_eq(snapshot_take(root, &q, NULL, NULL, &before), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		fsapi_set_progress(kill_at_second, NULL);
		fsapi_ctx_init(&ctx, root, &q);
		(void)stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep);
		_exit(3);
	}
	cr_assert_eq(waitpid(pid, &ws_st, 0), pid);
	cr_assert(WIFSIGNALED(ws_st) && WTERMSIG(ws_st) == SIGKILL);
	/* Killed part way: the journal is there, deletions were done. */
	cr_assert_eq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_neq(fstatat(root, "del.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(stage_recover(root, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_not_null(strstr(msg, "undid"), "%s", msg);
	cr_assert_neq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW),
	    0);
	assert_as_before(&before);
	/* Recovered (the renames back changed ctimes: scanned again), the
	 * same commit goes through. */
	changes_free(&ch);
	stage_scan_free(&sc);
	assert_ok(scan(&sc, &ch));
	fsapi_ctx_init(&ctx, root, &q);
	cr_assert_eq(stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep), 0, "%s",
	    fs_error_name(rep.why));
	assert_ok(check_tree());
	changes_free(&ch);
	stage_scan_free(&sc);
}

Test(stage, recover_removes_a_finished_journal)
{
	struct stat st;
	char msg[256];
	int jd;

	assert_ok(mkfile(root, "keep.txt", "keep\n", 0644));
	cr_assert_eq(mkdirat(root, STAGE_JOURNAL, 0700), 0);
	jd = openat(root, STAGE_JOURNAL, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(jd, 0);
	assert_ok(mkfile(jd, "manifest",
	    "stockade-commit 1\nC\tkeep.txt\t-\nend\n", 0600));
	assert_ok(mkfile(jd, "done", "done\n", 0600));
	close(jd);
	cr_assert_eq(stage_recover(root, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_not_null(strstr(msg, "finished"), "%s", msg);
	cr_assert_neq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW),
	    0);
	/* Done: its creations stay. */
	cr_assert_eq(fstatat(root, "keep.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
}

Test(stage, recover_of_a_hand_made_journal)
{
	struct stat st;
	char msg[256], buf[16];
	ssize_t n;
	int jd, fd;

	/* Half applied: "a\tb" created, "old" renamed away as j0, "f"
	 * replaced with its old version saved as j1, "d"'s mode changed. */
	assert_ok(mkfile(root, "a\tb", "new", 0644));
	assert_ok(mkfile(root, "f", "new f", 0644));
	assert_ok(mkdir_mode(root, "d", 0700));
	cr_assert_eq(mkdirat(root, STAGE_JOURNAL, 0700), 0);
	jd = openat(root, STAGE_JOURNAL, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(jd, 0);
	assert_ok(mkfile(jd, "j0", "old", 0640));
	assert_ok(mkfile(jd, "j1", "old f", 0644));
	assert_ok(mkfile(jd, "manifest",
	    "stockade-commit 1\nD\told\tj0\nS\tf\tj1\nC\ta\\x09b\t-\n"
	    "C\tnever\tj7\nM\td\t755\nend\n",
	    0600));
	close(jd);
	assert_ok(mkfile(root, "never", "kept: its D never ran", 0644));
	cr_assert_eq(stage_recover(root, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_neq(fstatat(root, "a\tb", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(fstatat(root, "never", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(fstatat(root, "old", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(st.st_mode & 07777, 0640);
	cr_assert_eq(fstatat(root, "d", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
	fd = openat(root, "f", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_eq(n, 5);
	cr_assert_eq(memcmp(buf, "old f", 5), 0);
	cr_assert_neq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW),
	    0);
}

Test(stage, recover_refuses_a_torn_manifest)
{
	struct stat st;
	char msg[256];
	int jd;

	cr_assert_eq(mkdirat(root, STAGE_JOURNAL, 0700), 0);
	jd = openat(root, STAGE_JOURNAL, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(jd, 0);
	assert_ok(mkfile(jd, "manifest", "stockade-commit 1\nC\tx\t-\n", 0600));
	close(jd);
	cr_assert_lt(stage_recover(root, msg, sizeof(msg)), 0);
	cr_assert_not_null(strstr(msg, STAGE_JOURNAL), "%s", msg);
	cr_assert_eq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW), 0,
	    "left as found");
}

Test(stage, recover_without_a_journal_says_nothing)
{
	char msg[64] = "x";

	cr_assert_eq(stage_recover(root, msg, sizeof(msg)), 0);
	cr_assert_str_eq(msg, "");
}

static int
always(void)
{
	return 1;
}

Test(stage, scan_stops_when_interrupted)
{
	struct fs_quota q = quota();
	struct stage_scan sc;

	assert_ok(build());
	memset(&sc, 0, sizeof(sc));
	cr_assert_eq(stage_scan(&sref, root, &q, always, &sc), -EINTR);
	cr_assert_eq(sc.before.n + sc.after.n + sc.nbad, 0);
	cr_assert_null(sc.before.e);
}

Test(stage, bounds_truncate_and_a_truncated_set_is_not_committed)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	struct stat st;
	char name[16];
	int i;

	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "f%02d", i);
		assert_ok(mkfile(upper, name, "x", 0644));
	}
	q.max_files = 5;
	memset(&sc, 0, sizeof(sc));
	cr_assert_eq(stage_scan(&sref, root, &q, NULL, &sc), 0);
	cr_assert(sc.after.truncated);
	cr_assert_leq(sc.after.n, 6);
	cr_assert_eq(snapshot_diff(&sc.before, &sc.after, &ch), 0);
	cr_assert(ch.truncated);
	q = quota();
	fsapi_ctx_init(&ctx, root, &q);
	cr_assert_lt(stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep), 0);
	cr_assert_eq(rep.why, FS_QUOTA_EXCEEDED);
	cr_assert_neq(fstatat(root, "f00", &st, AT_SYMLINK_NOFOLLOW), 0);
	changes_free(&ch);
	stage_scan_free(&sc);
}

Test(stage, too_deep_is_refused_and_a_file_replaces_a_tree)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	struct stat st;
	static const char *const want[] = {"a", "a/b", "t", "t/u", "t/v"};
	size_t i;

	/* Lower: a tree t/u, t/v the job replaced with a file t. Upper:
	 * a/b (depth 2, allowed) and a/b/c (depth 3, refused). */
	assert_ok(mkdir_mode(root, "t", 0755));
	assert_ok(mkdir_mode(root, "t/u", 0755));
	assert_ok(mkfile(root, "t/v", "v", 0644));
	assert_ok(mkfile(upper, "t", "now a file", 0644));
	assert_ok(mkdir_mode(upper, "a", 0755));
	assert_ok(mkdir_mode(upper, "a/b", 0755));
	assert_ok(mkfile(upper, "a/b/c", "deep", 0644));
	q.max_depth = 2;
	memset(&sc, 0, sizeof(sc));
	cr_assert_eq(stage_scan(&sref, root, &q, NULL, &sc), 0);
	cr_assert_eq(sc.nbad, 1);
	cr_assert_str_eq(sc.bad[0].path, "a/b/c");
	cr_assert_eq(sc.bad[0].why, FS_INVALID_PATH);
	cr_assert_eq(snapshot_diff(&sc.before, &sc.after, &ch), 0);
	cr_assert(!ch.truncated);
	cr_assert_eq(ch.n, 5);
	for (i = 0; i < ch.n; i++)
		cr_assert_str_eq(ch.c[i].entry->path, want[i]);
	cr_assert_eq(ch.c[2].kind, CHANGE_MODIFIED);
	cr_assert_eq(ch.c[2].old->type, FS_T_DIR);
	cr_assert_eq(ch.c[2].entry->type, FS_T_FILE);
	cr_assert_eq(ch.c[4].kind, CHANGE_DELETED);
	fsapi_ctx_init(&ctx, root, &q);
	cr_assert_eq(stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep), 0, "%s",
	    fs_error_name(rep.why));
	cr_assert_eq(fstatat(root, "t", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(fstatat(root, "a/b", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_neq(fstatat(root, "a/b/c", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_neq(fstatat(root, STAGE_JOURNAL, &st, AT_SYMLINK_NOFOLLOW),
	    0);
	changes_free(&ch);
	stage_scan_free(&sc);
}

/* As FSTEST_NOBODY: the scan, and a commit that fails at its last file
 * (zz-big) and is undone. Returns 0 or a line. */
static int
fail_as_nobody(void)
{
	struct stage_commit_report rep;
	struct fs_quota q = quota();
	struct stage_scan sc;
	struct changes ch;
	struct fs_ctx ctx;
	int r;

	if ((r = scan(&sc, &ch)) != 0)
		return r;
	q.workspace_bytes = 64 * 1024;
	fsapi_ctx_init(&ctx, root, &q);
	r = stage_commit(&ctx, &sref, &sc, &ch, NULL, &rep);
	snprintf(failmsg, sizeof(failmsg), "commit %d %s at %.100s", r,
	    fs_error_name(rep.why), rep.path);
	CHECK(r < 0 && rep.why == FS_QUOTA_EXCEEDED && rep.undone);
	CHECK(strcmp(rep.path, "zz-big") == 0);
	return 0;
}

Test(stage, save_by_copy_when_linking_is_refused)
{
	const struct timespec long_ago[2] = {{1, 0}, {978307200, 123}};
	struct fs_quota q = quota();
	struct snapshot before = {0};
	struct stat old, now;

	if (geteuid() != 0 ||
	    read_number_at(AT_FDCWD, "/proc/sys/fs/protected_hardlinks") != 1)
		cr_skip_test("needs root and fs.protected_hardlinks = 1");
	assert_ok(build());
	add_big(100 * 1024);
	/* Everything is nobody's but mod.txt, root's 0644: nobody may not
	 * link it (protected_hardlinks, proc(5)), so it is saved by copy. */
	fstest_give(outside);
	fstest_give(ws);
	cr_assert_eq(fchownat(root, "mod.txt", 0, 0, 0), 0);
	/* An mtime long past, which only a copy that keeps it keeps. */
	cr_assert_eq(utimensat(root, "mod.txt", long_ago, 0), 0);
	cr_assert_eq(fstatat(root, "mod.txt", &old, 0), 0);
	cr_assert_eq(snapshot_take(root, &q, NULL, NULL, &before), 0);
	fstest_run_as_nobody(fail_as_nobody);
	assert_as_before(&before);
	/* The same bytes, mode and mtime, but the copy's inode. */
	cr_assert_eq(fstatat(root, "mod.txt", &now, 0), 0);
	cr_assert_neq(now.st_ino, old.st_ino);
}
