/*
 * test_snapshot.c: the bounded walk of a hostile workspace
 * (broker/fs/wswalk.c) and the snapshots and manifests of fs.changes
 * (broker/fs/snapshot.c), on real trees made in a fresh directory: order,
 * bounds, deep and wide trees, symlinks and FIFOs the walk must not
 * follow or open, a directory swapped for a symlink mid-walk, and what a
 * snapshot hashes, reuses and reports; the bounds of a snapshot (sparse
 * files, the hashing budget, long paths, path bytes, denied directories,
 * an interruption).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fstest.h"
#include "fsutil.h"
#include "snapshot.h"
#include "wswalk.h"

static void
setup(void)
{
	fstest_setup("snap", false);
}

TestSuite(wswalk, .init = setup, .fini = fstest_teardown, .timeout = 60);
TestSuite(snapshot, .init = setup, .fini = fstest_teardown, .timeout = 60);

/* What a walk reported, and a hook run from its callback. */
struct seen {
	char **path;
	unsigned *depth;
	mode_t *type;
	size_t n, cap;
	int (*hook)(struct seen *s, const struct wswalk_entry *e);
	int hook_ret;
};

static int
collect(void *arg, const struct wswalk_entry *e)
{
	struct seen *s = arg;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->path = reallocarray(s->path, s->cap, sizeof(*s->path));
		s->depth = reallocarray(s->depth, s->cap, sizeof(*s->depth));
		s->type = reallocarray(s->type, s->cap, sizeof(*s->type));
		cr_assert(s->path && s->depth && s->type);
	}
	cr_assert_not_null(s->path[s->n] = strdup(e->path));
	cr_assert_eq(strcmp(e->name,
			 strrchr(e->path, '/') ? strrchr(e->path, '/') + 1
					       : e->path),
	    0);
	s->depth[s->n] = e->depth;
	s->type[s->n] = e->st->st_mode & S_IFMT;
	s->n++;
	return s->hook ? s->hook(s, e) : 0;
}

static void
seen_free(struct seen *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->path[i]);
	free(s->path);
	free(s->depth);
	free(s->type);
	memset(s, 0, sizeof(*s));
}

static int
walk(struct seen *s, size_t max_entries, unsigned max_depth,
    struct wswalk_stats *st)
{
	struct wswalk_opts o = {.max_depth = max_depth,
	    .max_entries = max_entries};

	return wswalk(root, &o, collect, s, st);
}

static void
assert_seen(const struct seen *s, const char *const *want, size_t n)
{
	size_t i;

	cr_assert_eq(s->n, n, "reported %zu entries, expected %zu", s->n, n);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(s->path[i], want[i], "entry %zu", i);
}

/* The tree of the order tests: names whose byte order differs from what
 * a locale or a whole-path sort would give. */
static void
plant_order_tree(void)
{
	fstest_mkfile("b", "b");
	fstest_mkfile("a-b", "ab");
	fstest_mkdir("a");
	fstest_mkfile("a/x", "x");
	fstest_mkfile("A", "A");
	fstest_mkfile("\xff", "ff");
	fstest_mkdir("c");
	fstest_mkfile("c/z", "z");
	fstest_mkdir("c/a");
	fstest_mkfile("c/a/1", "1");
}

static const char *const order_want[] = {
    "A",
    "a",
    "a/x",
    "a-b",
    "b",
    "c",
    "c/a",
    "c/a/1",
    "c/z",
    "\xff",
};
static const unsigned order_depth[] = {1, 1, 2, 1, 1, 1, 2, 3, 2, 1};
#define ORDER_N (sizeof(order_want) / sizeof(order_want[0]))

Test(wswalk, preorder_bytewise_per_directory)
{
	struct wswalk_stats st;
	struct seen s = {0};
	size_t i;

	plant_order_tree();
	cr_assert_eq(walk(&s, SIZE_MAX, 256, &st), 0);
	assert_seen(&s, order_want, ORDER_N);
	for (i = 0; i < ORDER_N; i++)
		cr_assert_eq(s.depth[i], order_depth[i], "%s", s.path[i]);
	cr_assert_eq(s.type[1], S_IFDIR);
	cr_assert_eq(s.type[0], S_IFREG);
	cr_assert_not(st.truncated);
	cr_assert_not(st.deeper);
	cr_assert_eq(st.skipped, 0);
	seen_free(&s);
}

Test(wswalk, prefix_and_o_path_start)
{
	struct wswalk_opts o = {.max_depth = 8,
	    .max_entries = SIZE_MAX,
	    .prefix = "p/q"};
	struct seen s = {0};
	int fd;

	plant_order_tree();
	fd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(wswalk(fd, &o, collect, &s, NULL), 0);
	cr_assert_eq(s.n, ORDER_N);
	cr_assert_str_eq(s.path[0], "p/q/A");
	cr_assert_str_eq(s.path[7], "p/q/c/a/1");
	/* The caller's descriptor is left open and usable. */
	cr_assert_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
	seen_free(&s);
}

Test(wswalk, max_entries_truncates)
{
	struct wswalk_stats st;
	struct seen s = {0};

	plant_order_tree();
	cr_assert_eq(walk(&s, 3, 256, &st), 0);
	assert_seen(&s, order_want, 3);
	cr_assert(st.truncated);
	seen_free(&s);

	/* Exactly as many as there are: nothing was left out. */
	cr_assert_eq(walk(&s, ORDER_N, 256, &st), 0);
	assert_seen(&s, order_want, ORDER_N);
	cr_assert_not(st.truncated);
	seen_free(&s);

	/* One fewer: the last name was left out. */
	cr_assert_eq(walk(&s, ORDER_N - 1, 256, &st), 0);
	assert_seen(&s, order_want, ORDER_N - 1);
	cr_assert(st.truncated);
	seen_free(&s);

	cr_assert_eq(walk(&s, 0, 256, &st), 0);
	cr_assert_eq(s.n, 0);
	cr_assert(st.truncated);
	seen_free(&s);
}

Test(wswalk, max_depth_sets_deeper)
{
	static const char *const want[] = {"d", "d/d", "d/d/d"};
	struct wswalk_stats st;
	struct seen s = {0};

	fstest_mkdir("d");
	fstest_mkdir("d/d");
	fstest_mkdir("d/d/d");
	fstest_mkdir("d/d/d/d");
	fstest_mkfile("d/d/d/d/f", "f");

	cr_assert_eq(walk(&s, SIZE_MAX, 3, &st), 0);
	assert_seen(&s, want, 3);
	cr_assert(st.deeper);
	cr_assert_not(st.truncated);
	seen_free(&s);

	cr_assert_eq(walk(&s, SIZE_MAX, 5, &st), 0);
	cr_assert_eq(s.n, 5);
	cr_assert_str_eq(s.path[4], "d/d/d/d/f");
	cr_assert_eq(s.depth[4], 5);
	cr_assert_not(st.deeper);
	seen_free(&s);

	/* An empty directory at the limit holds nothing deeper. */
	cr_assert_eq(unlinkat(root, "d/d/d/d/f", 0), 0);
	cr_assert_eq(walk(&s, SIZE_MAX, 4, &st), 0);
	cr_assert_eq(s.n, 4);
	cr_assert_not(st.deeper);
	seen_free(&s);

	/* Depth 0: no entry at all, and the start holds some. */
	cr_assert_eq(walk(&s, SIZE_MAX, 0, &st), 0);
	cr_assert_eq(s.n, 0);
	cr_assert(st.deeper);
	seen_free(&s);
}

static int
count_fds(void)
{
	int fd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4096];
	int n = 0;
	ssize_t r, off;

	cr_assert_geq(fd, 0);
	while ((r = getdents64(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off < r;
		     off += ((struct dirent64 *)(buf + off))->d_reclen)
			n++;
	close(fd);
	return n;
}

Test(wswalk, two_hundred_levels)
{
	struct wswalk_stats st;
	struct seen s = {0};
	int fd = dup(root), next, i, before;

	for (i = 0; i < 200; i++) {
		cr_assert_eq(mkdirat(fd, "d", 0755), 0);
		next = openat(fd, "d", O_PATH | O_DIRECTORY | O_CLOEXEC);
		cr_assert_geq(next, 0);
		close(fd);
		fd = next;
	}
	fstest_mkfile_at(fd, "leaf", "deep");
	close(fd);

	before = count_fds();
	cr_assert_eq(walk(&s, SIZE_MAX, 256, &st), 0);
	cr_assert_eq(count_fds(), before, "the walk leaked descriptors");
	cr_assert_eq(s.n, 201);
	cr_assert_eq(s.depth[200], 201);
	cr_assert_eq(strlen(s.path[199]), 200 * 2 - 1);
	cr_assert_eq(strlen(s.path[200]), 200 * 2 + 4);
	cr_assert_not(st.deeper);
	seen_free(&s);

	cr_assert_eq(walk(&s, SIZE_MAX, 100, &st), 0);
	cr_assert_eq(s.n, 100);
	cr_assert(st.deeper);
	seen_free(&s);
}

Test(wswalk, ten_thousand_files)
{
	struct wswalk_stats st;
	struct seen s = {0};
	char name[32];
	int i;

	fstest_mkdir("many");
	/* Created in a scrambled order: the walk must sort them. */
	for (i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "many/f%05d", (i * 7919) % 10000);
		fstest_mkfile(name, "");
	}
	fstest_mkfile("z", "");

	cr_assert_eq(walk(&s, SIZE_MAX, 256, &st), 0);
	cr_assert_eq(s.n, 10002);
	for (i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "many/f%05d", i);
		cr_assert_str_eq(s.path[i + 1], name);
	}
	cr_assert_str_eq(s.path[10001], "z");
	cr_assert_not(st.truncated);
	seen_free(&s);

	/* A small bound keeps the smallest names, however the directory is
	 * read (this drops names while reading). */
	cr_assert_eq(walk(&s, 101, 256, &st), 0);
	cr_assert_eq(s.n, 101);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "many/f%05d", i);
		cr_assert_str_eq(s.path[i + 1], name);
	}
	cr_assert(st.truncated);
	seen_free(&s);
}

/* Plants files under OUTSIDE that must never be reported. */
static void
plant_canaries(void)
{
	char p[128];
	int fd;

	snprintf(p, sizeof(p), "%s/canary-dir", outside);
	cr_assert_eq(mkdir(p, 0755), 0);
	fd = open(outside, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	fstest_mkfile_at(fd, "canary", "secret");
	fstest_mkfile_at(fd, "canary-dir/canary2", "secret");
	close(fd);
}

static void
assert_no_canary(const struct seen *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		cr_assert_null(strstr(s->path[i], "canary"), "reported %s",
		    s->path[i]);
}

Test(wswalk, symlinks_reported_not_followed)
{
	char target[128];
	struct wswalk_stats st;
	struct seen s = {0};

	plant_canaries();
	fstest_mkdir("sub");
	cr_assert_eq(symlinkat(outside, root, "out"), 0);
	snprintf(target, sizeof(target), "%s/canary-dir", outside);
	cr_assert_eq(symlinkat(target, root, "sub/out2"), 0);
	cr_assert_eq(symlinkat("../../..", root, "sub/up"), 0);
	cr_assert_eq(symlinkat("/proc/self/root", root, "magic"), 0);

	cr_assert_eq(walk(&s, SIZE_MAX, 256, &st), 0);
	{
		static const char *const want[] = {
		    "magic",
		    "out",
		    "sub",
		    "sub/out2",
		    "sub/up",
		};
		assert_seen(&s, want, 5);
	}
	cr_assert_eq(s.type[1], S_IFLNK);
	cr_assert_eq(s.type[3], S_IFLNK);
	assert_no_canary(&s);
	cr_assert_eq(st.skipped, 0);
	seen_free(&s);
}

Test(wswalk, fifo_reported_never_opened)
{
	struct wswalk_stats st;
	struct seen s = {0};

	/* Opening a FIFO for reading blocks until a writer comes: the
	 * suite's timeout fails this test if the walk ever does. */
	cr_assert_eq(mkfifoat(root, "fifo", 0644), 0);
	fstest_mkdir("d");
	cr_assert_eq(mkfifoat(root, "d/fifo", 0644), 0);
	cr_assert_eq(walk(&s, SIZE_MAX, 256, &st), 0);
	{
		static const char *const want[] = {"d", "d/fifo", "fifo"};
		assert_seen(&s, want, 3);
	}
	cr_assert_eq(s.type[1], S_IFIFO);
	cr_assert_eq(s.type[2], S_IFIFO);
	seen_free(&s);
}

/* From the callback, once "b" is reported and before it is entered:
 * moves it away and puts a symlink to OUTSIDE in its place (what a job
 * racing the walk does). */
static int
swap_for_symlink(struct seen *s, const struct wswalk_entry *e)
{
	if (strcmp(e->path, "b") != 0)
		return 0;
	cr_assert_eq(renameat(root, "b", root, "b.moved"), 0);
	cr_assert_eq(symlinkat(outside, root, "b"), 0);
	return 0;
}

/* The same with another directory: the one outside. */
static int
swap_for_directory(struct seen *s, const struct wswalk_entry *e)
{
	int fd;

	if (strcmp(e->path, "b") != 0)
		return 0;
	cr_assert_eq(renameat(root, "b", root, "b.moved"), 0);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_eq(renameat(fd, outside + 1, root, "b"), 0, "%s",
	    strerror(errno));
	close(fd);
	return 0;
}

/* The same with a FIFO: entering it must not block on it. */
static int
swap_for_fifo(struct seen *s, const struct wswalk_entry *e)
{
	if (strcmp(e->path, "b") != 0)
		return 0;
	cr_assert_eq(renameat(root, "b", root, "b.moved"), 0);
	cr_assert_eq(mkfifoat(root, "b", 0644), 0);
	return 0;
}

static void
swap_test(int (*hook)(struct seen *, const struct wswalk_entry *))
{
	static const char *const want[] = {"a", "a/f", "b", "c", "c/f"};
	struct wswalk_stats st;
	struct seen s = {.hook = hook};

	plant_canaries();
	fstest_mkdir("a");
	fstest_mkfile("a/f", "");
	fstest_mkdir("b");
	fstest_mkfile("b/f", "");
	fstest_mkdir("c");
	fstest_mkfile("c/f", "");
	cr_assert_eq(walk(&s, SIZE_MAX, 256, &st), 0);
	assert_seen(&s, want, 5);
	assert_no_canary(&s);
	cr_assert_eq(st.skipped, 1);
	seen_free(&s);
}

Test(wswalk, directory_swapped_for_symlink_is_skipped)
{
	swap_test(swap_for_symlink);
}

Test(wswalk, directory_swapped_for_directory_is_skipped)
{
	swap_test(swap_for_directory);
	/* Put it back so that teardown finds it. */
	cr_assert_eq(renameat(root, "b", AT_FDCWD, outside), 0);
}

Test(wswalk, directory_swapped_for_fifo_is_skipped)
{
	swap_test(swap_for_fifo);
}

static int
vanish_next(struct seen *s, const struct wswalk_entry *e)
{
	if (strcmp(e->path, "a") == 0)
		cr_assert_eq(unlinkat(root, "b", 0), 0);
	return 0;
}

Test(wswalk, vanished_entry_is_skipped)
{
	static const char *const want[] = {"a", "c"};
	struct wswalk_stats st;
	struct seen s = {.hook = vanish_next};

	fstest_mkfile("a", "");
	fstest_mkfile("b", "");
	fstest_mkfile("c", "");
	cr_assert_eq(walk(&s, SIZE_MAX, 256, &st), 0);
	assert_seen(&s, want, 2);
	cr_assert_eq(st.skipped, 1);
	seen_free(&s);
}

static int
prune_a(struct seen *s, const struct wswalk_entry *e)
{
	if (strcmp(e->path, "a") == 0)
		return 1;
	if (strcmp(e->path, "b") == 0)
		return s->hook_ret;
	return 0;
}

Test(wswalk, callback_prunes_and_stops)
{
	struct seen s = {.hook = prune_a};

	fstest_mkdir("a");
	fstest_mkfile("a/x", "");
	fstest_mkfile("b", "");
	fstest_mkfile("c", "");
	cr_assert_eq(walk(&s, SIZE_MAX, 256, NULL), 0);
	{
		static const char *const want[] = {"a", "b", "c"};
		assert_seen(&s, want, 3);
	}
	seen_free(&s);

	s.hook = prune_a;
	s.hook_ret = -ECANCELED;
	cr_assert_eq(walk(&s, SIZE_MAX, 256, NULL), -ECANCELED);
	cr_assert_eq(s.n, 2);
	seen_free(&s);
}

Test(wswalk, start_not_a_directory)
{
	struct wswalk_opts o = {.max_depth = 8, .max_entries = 8};
	struct seen s = {0};
	int fd;

	fstest_mkfile("f", "");
	fd = openat(root, "f", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(wswalk(fd, &o, collect, &s, NULL), -ENOTDIR);
	close(fd);
}

/* Snapshots and manifests. */

static const struct fs_quota quota = {
    .file_bytes = 2 << 20,
    .workspace_bytes = 64 << 20,
    .max_files = 1000,
    .max_path = 4096,
    .max_depth = 64,
    .mode_mask = 0777,
};

#define SHA_ABC \
	"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_EMPTY \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHA_DIGITS /* "0123456789" */ \
	"84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882"
#define SHA_XYZ \
	"3608bca1e44ea6c4d268eb6db02260269892c0b42b86bbf1e77a6fa16c3c9282"
/* FIPS 180-2 appendix B.3: one million times 'a'. */
#define SHA_MILLION_A \
	"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static const struct snap_entry *
get(const struct snapshot *s, const char *path)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->e[i].path, path) == 0)
			return &s->e[i];
	cr_assert_fail("%s not in the snapshot", path);
	abort();
}

static void
assert_hash(const struct snapshot *s, const char *path, const char *want)
{
	const struct snap_entry *e = get(s, path);
	char hex[65];

	snap_hex(e, hex);
	cr_assert_str_eq(hex, want, "%s", path);
	cr_assert_eq(e->hashed, want[0] != '\0');
}

static void
take(struct snapshot *s, const struct fs_quota *q, const struct snapshot *prev)
{
	cr_assert_eq(snapshot_take(root, q, prev, NULL, s), 0);
	cr_assert(s->valid);
}

Test(snapshot, hashes_and_metadata)
{
	struct snapshot s = {0};
	char *big = malloc(1000000);
	size_t i;
	int fd;

	cr_assert_not_null(big);
	memset(big, 'a', 1000000);
	fd = openat(root, "million", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write_all(fd, big, 1000000), 0);
	close(fd);
	free(big);
	fstest_mkfile("abc", "abc");
	fstest_mkfile("empty", "");
	fstest_mkdir("d");
	fstest_mkfile("d/abc", "abc");
	fstest_mkfile("d-e", "abc");
	cr_assert_eq(fchmodat(root, "d/abc", 0751, 0), 0);
	cr_assert_eq(symlinkat("abc", root, "link"), 0);

	take(&s, &quota, NULL);
	cr_assert_not(s.truncated);
	cr_assert_eq(s.n, 7);
	for (i = 1; i < s.n; i++)
		cr_assert_lt(strcmp(s.e[i - 1].path, s.e[i].path), 0,
		    "not sorted: %s, %s", s.e[i - 1].path, s.e[i].path);
	assert_hash(&s, "abc", SHA_ABC);
	assert_hash(&s, "d/abc", SHA_ABC);
	assert_hash(&s, "d-e", SHA_ABC);
	assert_hash(&s, "empty", SHA_EMPTY);
	assert_hash(&s, "million", SHA_MILLION_A);
	assert_hash(&s, "d", "");
	assert_hash(&s, "link", "");
	cr_assert_eq(get(&s, "million")->size, 1000000);
	cr_assert_eq(get(&s, "million")->mode, 0600);
	cr_assert_eq(get(&s, "d/abc")->mode, 0751);
	cr_assert_eq(get(&s, "d")->type, FS_T_DIR);
	cr_assert_eq(get(&s, "link")->type, FS_T_SYMLINK);
	cr_assert_eq(get(&s, "link")->size, 3);
	snapshot_free(&s);
	cr_assert_eq(s.n, 0);
	cr_assert_null(s.e);
	snapshot_free(&s);
}

Test(snapshot, unhashed_files)
{
	struct fs_quota q = quota;
	struct snapshot s = {0};

	fstest_mkfile("ten", "0123456789");
	fstest_mkfile("eleven", "0123456789a");
	fstest_mkfile("linked", "abc");
	cr_assert_eq(linkat(root, "linked", root, "linked2", 0), 0);
	/* The walk would hang on this FIFO if the snapshot opened it. */
	cr_assert_eq(mkfifoat(root, "fifo", 0644), 0);
	q.file_bytes = 10;

	take(&s, &q, NULL);
	cr_assert_eq(s.n, 5);
	assert_hash(&s, "ten", SHA_DIGITS);
	assert_hash(&s, "eleven", "");
	cr_assert_eq(get(&s, "eleven")->size, 11);
	assert_hash(&s, "linked", "");
	assert_hash(&s, "linked2", "");
	cr_assert_eq(get(&s, "linked")->nlink, 2);
	assert_hash(&s, "fifo", "");
	cr_assert_eq(get(&s, "fifo")->type, FS_T_FIFO);
	snapshot_free(&s);
}

static const struct change *
find_change(const struct changes *c, const char *path)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strcmp(c->c[i].entry->path, path) == 0)
			return &c->c[i];
	cr_assert_fail("%s not in the changes", path);
	abort();
}

Test(snapshot, diff_lists_what_changed)
{
	static const struct {
		const char *path;
		enum change_kind kind;
	} want[] = {
	    {"chmodme", CHANGE_MODIFIED},
	    {"d", CHANGE_MODIFIED},
	    {"d/new", CHANGE_CREATED},
	    {"delme", CHANGE_DELETED},
	    {"deltree", CHANGE_DELETED},
	    {"deltree/f", CHANGE_DELETED},
	    {"modme", CHANGE_MODIFIED},
	    {"new", CHANGE_CREATED},
	    {"touchme", CHANGE_MODIFIED},
	    {"typeme", CHANGE_MODIFIED},
	    {"typeme/f", CHANGE_CREATED},
	};
	struct snapshot a = {0}, b = {0};
	struct changes c = {0};
	const struct timespec touch[2] = {{1000000000, 0}, {1000000000, 0}};
	const struct change *ch;
	size_t i;

	fstest_mkfile("keep", "keep");
	fstest_mkfile("modme", "xyz");
	fstest_mkfile("delme", "gone");
	fstest_mkfile("chmodme", "mode");
	fstest_mkfile("typeme", "file");
	fstest_mkfile("touchme", "same");
	fstest_mkdir("d");
	fstest_mkfile("d/old", "old");
	fstest_mkdir("deltree");
	fstest_mkfile("deltree/f", "f");
	fstest_mkdir("same");
	take(&a, &quota, NULL);

	/* What a job does. */
	fstest_mkfile("new", "");
	fstest_mkfile("modme", "abc"); /* same size, new content */
	cr_assert_eq(unlinkat(root, "delme", 0), 0);
	cr_assert_eq(fchmodat(root, "chmodme", 0600, 0), 0);
	/* Same content, only its times change. */
	cr_assert_eq(utimensat(root, "touchme", touch, 0), 0);
	cr_assert_eq(unlinkat(root, "typeme", 0), 0);
	fstest_mkdir("typeme");
	fstest_mkfile("typeme/f", "abc");
	cr_assert_eq(fchmodat(root, "d", 0700, 0), 0);
	fstest_mkfile("d/new", "abc");
	cr_assert_eq(unlinkat(root, "deltree/f", 0), 0);
	cr_assert_eq(unlinkat(root, "deltree", AT_REMOVEDIR), 0);
	/* A directory whose entries change is not modified itself. */
	fstest_mkfile("same/x", "");
	cr_assert_eq(unlinkat(root, "same/x", 0), 0);
	take(&b, &quota, &a);

	cr_assert_eq(snapshot_diff(&a, &b, &c), 0);
	cr_assert_not(c.truncated);
	for (i = 0; i < c.n; i++)
		cr_log_info("change %d %s", c.c[i].kind, c.c[i].entry->path);
	cr_assert_eq(c.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < c.n; i++) {
		cr_assert_str_eq(c.c[i].entry->path, want[i].path);
		cr_assert_eq(c.c[i].kind, want[i].kind, "%s", want[i].path);
		if (want[i].kind == CHANGE_MODIFIED) {
			cr_assert_not_null(c.c[i].old);
			cr_assert_str_eq(c.c[i].old->path, want[i].path);
		} else {
			cr_assert_null(c.c[i].old);
		}
	}
	ch = find_change(&c, "modme");
	cr_assert_not_null(ch->old);
	cr_assert_eq(ch->entry->size, ch->old->size);
	cr_assert(ch->entry->hashed && ch->old->hashed);
	assert_hash(&b, "modme", SHA_ABC);
	assert_hash(&b, "d/new", SHA_ABC);
	assert_hash(&b, "new", SHA_EMPTY);
	ch = find_change(&c, "touchme");
	cr_assert_not_null(ch->old);
	cr_assert_eq(memcmp(ch->entry->sha256, ch->old->sha256, 32), 0);
	cr_assert_eq(ch->entry->mtime_ns, 1000000000LL * 1000000000);
	cr_assert_eq(find_change(&c, "typeme")->entry->type, FS_T_DIR);
	cr_assert_eq(find_change(&c, "typeme")->old->type, FS_T_FILE);
	cr_assert_eq(find_change(&c, "chmodme")->entry->mode, 0600);
	cr_assert_eq(find_change(&c, "delme")->entry, get(&a, "delme"));
	changes_free(&c);
	cr_assert_null(c.c);

	/* Nothing happened: nothing changed. */
	cr_assert_eq(snapshot_diff(&b, &b, &c), 0);
	cr_assert_eq(c.n, 0);
	changes_free(&c);
	snapshot_free(&a);
	snapshot_free(&b);
}

Test(snapshot, content_change_behind_restored_mtime)
{
	struct snapshot a = {0}, b = {0};
	struct changes c = {0};
	struct timespec ts[2];
	const struct snap_entry *e;

	fstest_mkfile("f", "abc");
	take(&a, &quota, NULL);
	e = get(&a, "f");
	ts[0].tv_sec = ts[1].tv_sec = e->mtime_ns / 1000000000;
	ts[0].tv_nsec = ts[1].tv_nsec = e->mtime_ns % 1000000000;
	/* Same size, same mtime (restored the way a job could); only the
	 * kernel-kept st_ctim, or the content, tells. */
	fstest_mkfile("f", "xyz");
	cr_assert_eq(utimensat(root, "f", ts, AT_SYMLINK_NOFOLLOW), 0);
	take(&b, &quota, &a);
	cr_assert_eq(get(&b, "f")->mtime_ns, e->mtime_ns);
	cr_assert_eq(snapshot_diff(&a, &b, &c), 0);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.c[0].kind, CHANGE_MODIFIED);
	assert_hash(&b, "f", SHA_XYZ);
	changes_free(&c);
	snapshot_free(&a);
	snapshot_free(&b);
}

/*
 * The hash of an unchanged file is lent by PREV, not read again: PREV is
 * given a false hash for "f" (and a start old enough for its files not to
 * be racily clean), and the next snapshot carries the false hash, which
 * it could only have taken from PREV. Without the old start, or once the
 * file's st_ctim moved, the file is read again.
 */
Test(snapshot, unchanged_file_reuses_prev_hash)
{
	struct snapshot a = {0}, b = {0};
	struct snap_entry *e;
	char want[65];
	int64_t started;

	fstest_mkfile("f", "abc");
	fstest_mkfile("g", "abc");
	take(&a, &quota, NULL);
	e = (struct snap_entry *)(uintptr_t)get(&a, "f");
	memset(e->sha256, 0x55, sizeof(e->sha256));
	memset(want, '5', 64);
	want[64] = '\0';

	/* Just written: racily clean, read again. */
	take(&b, &quota, &a);
	assert_hash(&b, "f", SHA_ABC);
	snapshot_free(&b);

	/* Old enough: lent. */
	started = a.started_ns;
	a.started_ns += 2 * SNAPSHOT_RACY_NS;
	take(&b, &quota, &a);
	assert_hash(&b, "f", want);
	assert_hash(&b, "g", SHA_ABC);
	snapshot_free(&b);

	/* st_ctim moved (chmod and back: same content, same mode): read
	 * again. */
	cr_assert_eq(fchmodat(root, "f", 0600, 0), 0);
	cr_assert_eq(fchmodat(root, "f", 0644, 0), 0);
	take(&b, &quota, &a);
	if (get(&b, "f")->ctime_ns == e->ctime_ns)
		cr_skip_test("st_ctim did not move within one tick");
	assert_hash(&b, "f", SHA_ABC);
	snapshot_free(&b);
	a.started_ns = started;
	snapshot_free(&a);
}

Test(snapshot, truncated_over_quota)
{
	struct fs_quota q = quota;
	struct snapshot a = {0}, b = {0};
	struct changes c = {0};

	fstest_mkfile("1", "");
	fstest_mkfile("2", "");
	fstest_mkfile("3", "");
	fstest_mkfile("4", "");
	take(&a, &quota, NULL);
	cr_assert_not(a.truncated);

	q.max_files = 3;
	take(&b, &q, NULL);
	cr_assert_eq(b.n, 3);
	cr_assert(b.truncated);
	cr_assert_eq(snapshot_diff(&a, &b, &c), 0);
	cr_assert(c.truncated);
	changes_free(&c);
	snapshot_free(&b);

	fstest_mkdir("d");
	fstest_mkdir("d/e");
	fstest_mkfile("d/e/f", "");
	q = quota;
	q.max_depth = 2;
	take(&b, &q, NULL);
	cr_assert_eq(b.n, 6);
	cr_assert(b.truncated);
	snapshot_free(&b);
	snapshot_free(&a);
}

Test(snapshot, empty_and_zeroed)
{
	struct snapshot a = {0}, z = {0};
	struct changes c = {0};
	struct snap_entry e = {0};
	char hex[65] = "x";

	take(&a, &quota, NULL);
	cr_assert_eq(a.n, 0);
	cr_assert_eq(snapshot_diff(&z, &a, &c), 0);
	cr_assert_eq(c.n, 0);
	changes_free(&c);
	snap_hex(&e, hex);
	cr_assert_str_eq(hex, "");
	snapshot_free(&a);
	snapshot_free(&z);
}

/* ---- Bounds (security review findings 1 to 3) ---- */

/* Makes PATH a file of SIZE bytes holding only a hole (ftruncate), or
 * skips the test when this file system allocates it anyway. */
static void
mk_sparse(const char *path, off_t size)
{
	struct stat st;
	int fd = openat(root, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, size), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	close(fd);
	if ((uint64_t)st.st_blocks * 512 + SNAPSHOT_SPARSE_SLACK >=
	    (uint64_t)size)
		cr_skip_test("this file system does not make sparse files");
}

/* Makes PATH a file of SIZE bytes of 'z', written (allocated). */
static void
mk_dense(const char *path, size_t size)
{
	char *buf = malloc(size);
	int fd = openat(root, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);

	cr_assert_not_null(buf);
	cr_assert_geq(fd, 0);
	memset(buf, 'z', size);
	cr_assert_eq(write_all(fd, buf, size), 0);
	close(fd);
	free(buf);
}

Test(snapshot, sparse_file_listed_not_hashed)
{
	struct fs_quota q = quota;
	struct snapshot a = {0}, b = {0};
	struct changes c = {0};
	const struct snap_entry *e;
	int fd;

	q.file_bytes = 128 << 20;
	mk_sparse("sparse", 64 << 20);
	/* A hole no larger than the slack: hashed. */
	fd = openat(root, "small", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, SNAPSHOT_SPARSE_SLACK), 0);
	close(fd);
	/* One byte written far into a hole: still sparse. */
	fd = openat(root, "tail", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, "x", 1, 8 << 20), 1);
	close(fd);
	mk_dense("dense", 1 << 20);

	take(&a, &q, NULL);
	cr_assert_not(a.truncated);
	e = get(&a, "sparse");
	cr_assert_eq(e->type, FS_T_FILE);
	cr_assert_eq(e->size, 64 << 20);
	cr_assert_not(e->hashed);
	cr_assert(e->hash_skipped);
	cr_assert(get(&a, "tail")->hash_skipped);
	cr_assert_not(get(&a, "tail")->hashed);
	cr_assert(get(&a, "small")->hashed);
	cr_assert_not(get(&a, "small")->hash_skipped);
	cr_assert(get(&a, "dense")->hashed);
	cr_assert_eq(a.unhashed, 2);
	/* Only what was hashed was read. */
	cr_assert_eq(a.hashed_bytes, SNAPSHOT_SPARSE_SLACK + (1 << 20));

	/* The manifest counts what it lists unhashed for the bounds. */
	mk_sparse("new-sparse", 32 << 20);
	take(&b, &q, &a);
	cr_assert_eq(snapshot_diff(&a, &b, &c), 0);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.c[0].kind, CHANGE_CREATED);
	cr_assert_str_eq(c.c[0].entry->path, "new-sparse");
	cr_assert_eq(c.unhashed, 1);
	changes_free(&c);
	cr_assert_eq(snapshot_diff(&b, &b, &c), 0);
	cr_assert_eq(c.unhashed, 0);
	changes_free(&c);
	snapshot_free(&a);
	snapshot_free(&b);
}

Test(snapshot, hashing_budget)
{
	struct fs_quota q = quota;
	struct snapshot a = {0}, b = {0};

	fstest_mkfile("a", "0123456789");
	fstest_mkfile("b", "0123456789");
	fstest_mkfile("c", "0123456789");
	fstest_mkfile("d", "abc");
	q.workspace_bytes = 25;

	/* In walk order: a and b fit (20 bytes), c does not (10 > 5), d
	 * still does (3). */
	take(&a, &q, NULL);
	cr_assert_not(a.truncated);
	cr_assert_eq(a.n, 4);
	assert_hash(&a, "a", SHA_DIGITS);
	assert_hash(&a, "b", SHA_DIGITS);
	assert_hash(&a, "c", "");
	cr_assert(get(&a, "c")->hash_skipped);
	cr_assert_eq(get(&a, "c")->size, 10);
	assert_hash(&a, "d", SHA_ABC);
	cr_assert_eq(a.unhashed, 1);
	cr_assert_eq(a.hashed_bytes, 23);

	/* Lent hashes cost nothing: the whole budget is left for c. */
	a.started_ns += 2 * SNAPSHOT_RACY_NS;
	take(&b, &q, &a);
	assert_hash(&b, "a", SHA_DIGITS);
	assert_hash(&b, "c", SHA_DIGITS);
	cr_assert_eq(b.unhashed, 0);
	cr_assert_eq(b.hashed_bytes, 10);
	snapshot_free(&b);

	/* No budget: nothing is read, the empty file aside. */
	fstest_mkfile("e", "");
	q.workspace_bytes = 0;
	take(&b, &q, NULL);
	cr_assert_eq(b.unhashed, 4);
	cr_assert_eq(b.hashed_bytes, 0);
	assert_hash(&b, "e", SHA_EMPTY);
	snapshot_free(&b);
	snapshot_free(&a);
}

Test(snapshot, long_paths_left_out)
{
	struct fs_quota q = quota;
	struct snapshot s = {0};

	fstest_mkdir("dir4567890"); /* 10 bytes */
	fstest_mkfile("dir4567890/x", ""); /* 12 */
	fstest_mkfile("file567890", ""); /* 10 */
	fstest_mkfile("file5678901", ""); /* 11 */
	fstest_mkdir("longdir8901"); /* 11, and what it holds */
	fstest_mkfile("longdir8901/f", "");
	q.max_path = 10;
	take(&s, &q, NULL);
	cr_assert(s.truncated);
	cr_assert_eq(s.n, 2);
	cr_assert_str_eq(s.e[0].path, "dir4567890");
	cr_assert_str_eq(s.e[1].path, "file567890");
	snapshot_free(&s);

	q.max_path = 13;
	take(&s, &q, NULL);
	cr_assert_not(s.truncated);
	cr_assert_eq(s.n, 6);
	snapshot_free(&s);
}

/*
 * SNAPSHOT_MAX_PATH_BYTES: 16 nested directories of 250-byte names, and
 * files below them whose paths are about 4 KiB each, more than the bound
 * holds. The walk stops at the bound, truncated.
 */
Test(snapshot, path_bytes_bounded)
{
	struct fs_quota q = quota;
	struct snapshot s = {0};
	char path[4096];
	/* 16 names of 250 bytes and their slashes. */
	size_t len = 16 * 251 - 1, total = 0, files, i;

	/* Each file's path: LEN + 1 + 5 bytes, and its NUL. */
	files = SNAPSHOT_MAX_PATH_BYTES / (len + 7) + 16;
	cr_assert_eq(fstest_long_path_links(16, files, path, sizeof(path)),
	    len);
	q.max_files = 100000;

	take(&s, &q, NULL);
	cr_assert(s.truncated);
	cr_assert_lt(s.n, files + 16);
	for (i = 0; i < s.n; i++)
		total += strlen(s.e[i].path) + 1;
	cr_assert_leq(total, SNAPSHOT_MAX_PATH_BYTES);
	/* Stopped at the bound, not before: one more would not fit. */
	cr_assert_gt(total + len + 7, SNAPSHOT_MAX_PATH_BYTES);
	snapshot_free(&s);
}

/* An interruption flag for the walk and the snapshot: non-zero from the
 * AT-th question on (0: never); counts the questions. */
static int intr_at, intr_asked;

static int
intr(void)
{
	intr_asked++;
	return intr_at > 0 && intr_asked >= intr_at;
}

Test(wswalk, interrupted_stops)
{
	struct wswalk_opts o = {.max_depth = 8,
	    .max_entries = SIZE_MAX,
	    .interrupted = intr};
	struct seen s = {0};

	plant_order_tree();
	intr_at = 0;
	intr_asked = 0;
	cr_assert_eq(wswalk(root, &o, collect, &s, NULL), 0);
	cr_assert_eq(s.n, ORDER_N);
	cr_assert_geq(intr_asked, ORDER_N);
	seen_free(&s);
	intr_at = 3;
	intr_asked = 0;
	cr_assert_eq(wswalk(root, &o, collect, &s, NULL), -EINTR);
	cr_assert_lt(s.n, 3);
	seen_free(&s);
}

/* Whichever question the interruption answers first, from the first
 * directory read to the last read of a file being hashed, the snapshot
 * stops with -EINTR and is left empty. */
Test(snapshot, interrupted_stops)
{
	struct fs_quota q = quota;
	struct snapshot s = {0};
	int asked, k, r;

	q.file_bytes = 8 << 20;
	mk_dense("big", 4 << 20);
	fstest_mkdir("d");
	fstest_mkfile("d/f", "x");

	intr_at = 0;
	intr_asked = 0;
	cr_assert_eq(snapshot_take(root, &q, NULL, intr, &s), 0);
	cr_assert_eq(s.n, 3);
	snapshot_free(&s);
	asked = intr_asked;
	/* Asked at least once per 256 KiB read of "big". */
	cr_assert_geq(asked, (4 << 20) / (256 << 10));
	for (k = 1; k <= asked; k++) {
		intr_at = k;
		intr_asked = 0;
		r = snapshot_take(root, &q, NULL, intr, &s);
		cr_assert_eq(r, -EINTR, "interrupted at question %d: %d", k, r);
		cr_assert_not(s.valid);
		cr_assert_eq(s.n, 0);
		cr_assert_null(s.e);
	}
}

/* ---- Directories the walk is denied (finding 3) ---- */

#define CHECK(c) FSTEST_CHECK(c)

static int
count_entry(void *arg, const struct wswalk_entry *e)
{
	(void)e;
	++*(size_t *)arg;
	return 0;
}

static int
denied_checks(void)
{
	struct wswalk_opts o = {.max_depth = 8, .max_entries = SIZE_MAX};
	struct wswalk_stats st;
	struct snapshot s = {0};
	size_t n = 0, i;
	bool locked = false;

	CHECK(wswalk(root, &o, count_entry, &n, &st) == 0);
	/* locked, locked-r, open, open/f: not locked/f, locked-r/g. */
	CHECK(n == 4);
	CHECK(st.denied == 2);
	CHECK(st.skipped == 0);
	CHECK(!st.truncated);
	CHECK(snapshot_take(root, &quota, NULL, NULL, &s) == 0);
	CHECK(s.truncated);
	CHECK(s.n == 4);
	for (i = 0; i < s.n; i++) {
		CHECK(strncmp(s.e[i].path, "locked/", 7) != 0);
		locked |= strcmp(s.e[i].path, "locked") == 0;
	}
	CHECK(locked);
	snapshot_free(&s);
	return 0;
}

/*
 * What a job did below a directory it then locked is unknown, not
 * deleted or created: before: locked/{f1,f2}; the job removes f1, makes
 * f3 and runs chmod 000; the diff reports only the directory's mode and
 * is truncated. Unlocked again, the next diff does not call f2 and f3
 * created either (the security review's re-check of finding 3).
 */
static int
denied_diff_checks(void)
{
	struct snapshot a = {0}, b = {0}, c = {0};
	struct changes ch;
	size_t i;

	CHECK(snapshot_take(root, &quota, NULL, NULL, &a) == 0);
	CHECK(!a.truncated);
	CHECK(unlinkat(root, "locked/f1", 0) == 0);
	{
		int fd = openat(root, "locked/f3",
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

		CHECK(fd >= 0);
		CHECK(write(fd, "3", 1) == 1);
		CHECK(close(fd) == 0);
	}
	CHECK(fchmodat(root, "locked", 0, 0) == 0);
	CHECK(snapshot_take(root, &quota, &a, NULL, &b) == 0);
	CHECK(b.truncated);
	CHECK(snapshot_diff(&a, &b, &ch) == 0);
	CHECK(ch.truncated);
	CHECK(ch.n == 1);
	CHECK(ch.c[0].kind == CHANGE_MODIFIED);
	CHECK(strcmp(ch.c[0].entry->path, "locked") == 0);
	changes_free(&ch);
	CHECK(fchmodat(root, "locked", 0700, 0) == 0);
	CHECK(snapshot_take(root, &quota, &b, NULL, &c) == 0);
	CHECK(snapshot_diff(&b, &c, &ch) == 0);
	for (i = 0; i < ch.n; i++)
		CHECK(strncmp(ch.c[i].entry->path, "locked/", 7) != 0);
	changes_free(&ch);
	snapshot_free(&a);
	snapshot_free(&b);
	snapshot_free(&c);
	return 0;
}

Test(snapshot, entries_below_a_denied_directory_are_unknown)
{
	fstest_mkdir("locked");
	fstest_mkfile("locked/f1", "1");
	fstest_mkfile("locked/f2", "2");
	fstest_as_nobody(denied_diff_checks);
}

/* A directory the job made 000 (cannot be entered) and one made 0444
 * (read, not searched: its entries cannot be stat'ed) are denied, not
 * races, and the snapshot is truncated: what they hold may have changed
 * unseen (security review, finding 3). */
Test(snapshot, denied_directories_truncate)
{
	fstest_mkdir("locked");
	fstest_mkfile("locked/f", "f");
	fstest_mkdir("locked-r");
	fstest_mkfile("locked-r/g", "g");
	fstest_mkdir("open");
	fstest_mkfile("open/f", "f");
	cr_assert_eq(fchmodat(root, "locked", 0, 0), 0);
	cr_assert_eq(fchmodat(root, "locked-r", 0444, 0), 0);
	fstest_as_nobody(denied_checks);
	cr_assert_eq(fchmodat(root, "locked", 0755, 0), 0);
	cr_assert_eq(fchmodat(root, "locked-r", 0755, 0), 0);
}

