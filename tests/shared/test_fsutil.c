/*
 * test_fsutil.c: remove_tree_at (shared/fsutil.c) on real trees in /tmp.
 *
 * What a jailed program can leave in a temporary workspace: symlinks to
 * directories outside (never followed), FIFOs (never opened), directories
 * locked with mode 0 (unlocked through their descriptor), trees deeper
 * than any descriptor budget (removed with at most 67 descriptors), and,
 * on the host side, mounts below (never crossed: -EXDEV, the rest still
 * removed).
 *
 * Run as root, every test first drops to 65534 for good, so that a mode
 * of 0 stops the owner as it stops an ordinary user (root's
 * CAP_DAC_OVERRIDE would make the locked-directory cases pass for the
 * wrong reason).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"

#define UNPRIV_ID 65534

static char base[64]; /* this test's directory */
static int basefd = -1;

static void
setup(void)
{
	if (geteuid() == 0) {
		cr_assert_eq(setgroups(0, NULL), 0);
		cr_assert_eq(setresgid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID), 0);
		cr_assert_eq(setresuid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID), 0);
		/* The change made the process non-dumpable, which leaves its
		 * /proc files (uid_map) owned by root. */
		cr_assert_eq(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
	}
	snprintf(base, sizeof(base), "/tmp/stockade-fsutil-XXXXXX");
	cr_assert_not_null(mkdtemp(base), "mkdtemp: %s", strerror(errno));
	basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(basefd, 0);
}

static void
teardown(void)
{
	char cmd[256];

	/* Whatever a failed test left; chmod and rm handle any depth. */
	close(basefd);
	snprintf(cmd, sizeof(cmd),
	    "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", base, base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", base);
}

TestSuite(fsutil, .init = setup, .fini = teardown, .timeout = 60);

static void
xmkdir(int dfd, const char *name, mode_t mode)
{
	cr_assert_eq(mkdirat(dfd, name, mode), 0, "mkdir %s: %s", name,
	    strerror(errno));
}

static void
xwrite(int dfd, const char *name, const char *text)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600);

	cr_assert_geq(fd, 0, "create %s: %s", name, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static bool
exists(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int
count_entries(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	int n = 0;

	cr_assert_geq(fd, 0, "open %s: %s", name, strerror(errno));
	d = fdopendir(fd);
	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* The outside directory a symlink in the tree points at: a file and a
 * locked subdirectory, to see that neither is touched. */
static void
make_outside(void)
{
	xmkdir(basefd, "outside", 0755);
	xwrite(basefd, "outside/canary", "canary\n");
	xmkdir(basefd, "outside/locked", 0700);
	cr_assert_eq(fchmodat(basefd, "outside/locked", 0500, 0), 0);
}

static void
assert_outside_untouched(void)
{
	struct stat st;
	char buf[16] = "";
	int fd;

	fd = openat(basefd, "outside/canary", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "outside/canary: %s", strerror(errno));
	cr_assert_eq(read(fd, buf, sizeof(buf) - 1), 7);
	close(fd);
	cr_assert_str_eq(buf, "canary\n");
	cr_assert_eq(fstatat(basefd, "outside/locked", &st, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 0500, "mode %o", st.st_mode & 07777);
	cr_assert_eq(fstatat(basefd, "outside", &st, 0), 0);
	cr_assert_eq(st.st_mode & 07777, 0755, "mode %o", st.st_mode & 07777);
	cr_assert_eq(count_entries(basefd, "outside"), 2);
}

Test(fsutil, symlinks_fifos_and_locked_directories)
{
	char target[128];

	make_outside();
	snprintf(target, sizeof(target), "%s/outside", base);
	xmkdir(basefd, "top", 0700);
	/* Symlinks to the outside directory, absolute and relative, at the
	 * top and below; one to a file. */
	cr_assert_eq(symlinkat(target, basefd, "top/out"), 0);
	xmkdir(basefd, "top/sub", 0700);
	cr_assert_eq(symlinkat("../../outside", basefd, "top/sub/rel"), 0);
	cr_assert_eq(symlinkat("../../outside/canary", basefd, "top/sub/file"),
	    0);
	/* A FIFO: opening it would block. */
	cr_assert_eq(mkfifoat(basefd, "top/sub/fifo", 0600), 0);
	/* Locked directories: mode 0 with content, nested; no write; no
	 * search. */
	xmkdir(basefd, "top/locked", 0700);
	xmkdir(basefd, "top/locked/inner", 0700);
	xwrite(basefd, "top/locked/inner/f", "x");
	cr_assert_eq(fchmodat(basefd, "top/locked/inner", 0, 0), 0);
	cr_assert_eq(fchmodat(basefd, "top/locked", 0, 0), 0);
	xmkdir(basefd, "top/nowrite", 0700);
	xwrite(basefd, "top/nowrite/f", "x");
	cr_assert_eq(fchmodat(basefd, "top/nowrite", 0500, 0), 0);
	xmkdir(basefd, "top/nosearch", 0700);
	xwrite(basefd, "top/nosearch/f", "x");
	cr_assert_eq(fchmodat(basefd, "top/nosearch", 0600, 0), 0);
	/* The top itself locked too. */
	cr_assert_eq(fchmodat(basefd, "top", 0, 0), 0);

	cr_assert_eq(remove_tree_at(basefd, "top"), 0);
	cr_assert(!exists(basefd, "top"), "top is still there");
	assert_outside_untouched();
}

Test(fsutil, a_symlink_or_fifo_as_name_is_unlinked_not_followed)
{
	char target[128];

	make_outside();
	snprintf(target, sizeof(target), "%s/outside", base);
	cr_assert_eq(symlinkat(target, basefd, "link"), 0);
	cr_assert_eq(mkfifoat(basefd, "fifo", 0600), 0);
	cr_assert_eq(remove_tree_at(basefd, "link"), 0);
	cr_assert_eq(remove_tree_at(basefd, "fifo"), 0);
	cr_assert(!exists(basefd, "link"));
	cr_assert(!exists(basefd, "fifo"));
	assert_outside_untouched();
	cr_assert_eq(remove_tree_at(basefd, "missing"), -ENOENT);
}

/* How many descriptors are open now, and the highest one (*HIGH). */
static int
open_fds(int *high)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	struct rlimit rl;
	int n = 0;

	cr_assert_not_null(d);
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	*high = -1;
	while ((de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);

		/* Past the soft limit: not ours to count (valgrind keeps
		 * its own descriptors there and lowers the limit). */
		if (de->d_name[0] == '.' || fd == dirfd(d) ||
		    (rlim_t)fd >= rl.rlim_cur)
			continue;
		n++;
		if (fd > *high)
			*high = fd;
	}
	closedir(d);
	return n;
}

/* DEPTH nested directories "d" under NAME, each with a file, a FIFO at
 * the bottom and every tenth directory locked (mode 0) once built. */
static void
make_deep(const char *name, int depth)
{
	int fd;

	xmkdir(basefd, name, 0700);
	fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	for (int i = 0; i < depth; i++) {
		int next;

		xwrite(fd, "f", "x");
		xmkdir(fd, "d", 0700);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		cr_assert_geq(next, 0, "level %d: %s", i, strerror(errno));
		close(fd);
		fd = next;
	}
	cr_assert_eq(mkfifoat(fd, "fifo", 0600), 0);
	close(fd);
	/* Lock from the top down, through descriptors (paths would pass
	 * PATH_MAX): each level is opened before its parent is locked. */
	fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < depth; i++) {
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		cr_assert_geq(next, 0);
		if (i % 10 == 5)
			cr_assert_eq(fchmod(fd, 0), 0);
		close(fd);
		fd = next;
	}
	close(fd);
}

/*
 * 1000 levels (the old recursion stopped at 512 with -ELOOP and left the
 * tree), with the descriptor table capped just above what the function
 * promises to use (fsutil.h: 67 at once) and a name of the kind it picks
 * for moved directories already taken.
 */
Test(fsutil, deep_tree_with_bounded_descriptors)
{
	struct rlimit rl;
	int high, nopen;

	make_deep("top", 1000);
	xwrite(basefd, "top/.stockade-rm-0", "taken");
	xmkdir(basefd, "top/.stockade-rm-1", 0700);
	/* Exactly 67 more descriptors can be opened: RLIMIT_NOFILE bounds
	 * the numbers, and every number below it but the open ones is
	 * free. */
	nopen = open_fds(&high);
	cr_assert_lt(high, nopen + 67);
	/* The soft limit only: the function never raises it, and valgrind
	 * refuses a process a new hard limit. */
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = (rlim_t)(nopen + 67);
	cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0, "%s", strerror(errno));

	cr_assert_eq(remove_tree_at(basefd, "top"), 0);
	cr_assert(!exists(basefd, "top"), "top is still there");
	cr_assert_eq(count_entries(basefd, "."), 0);
}

/* Writes TEXT to the /proc/self file NAME. */
static bool
write_proc(const char *name, const char *text)
{
	char path[64];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

/*
 * In a forked child (unshare(CLONE_NEWUSER) refuses a multithreaded
 * process, and Criterion's worker has threads): enters a new user and
 * mount namespace as its root, runs FN, and sends FN's report ("ok" or
 * what went wrong) back. Returns the report (static), or "skip: ..."
 * when the namespaces cannot be made.
 */
static const char *
in_mount_namespace(void (*fn)(char *report, size_t size))
{
	static char report[512];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int p[2], st;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char map[64];

		close(p[0]);
		snprintf(report, sizeof(report), "ok");
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
			snprintf(report, sizeof(report), "skip: unshare: %s",
			    strerror(errno));
		} else {
			snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
			if (!write_proc("uid_map", map) ||
			    !write_proc("setgroups", "deny"))
				snprintf(report, sizeof(report), "uid_map: %s",
				    strerror(errno));
			snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
			if (strcmp(report, "ok") == 0 &&
			    !write_proc("gid_map", map))
				snprintf(report, sizeof(report), "gid_map: %s",
				    strerror(errno));
			if (strcmp(report, "ok") == 0 &&
			    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) <
				0)
				snprintf(report, sizeof(report),
				    "private /: %s", strerror(errno));
			if (strcmp(report, "ok") == 0)
				fn(report, sizeof(report));
		}
		n = write(p[1], report, strlen(report));
		_exit(n == (ssize_t)strlen(report) ? 0 : 1);
	}
	close(p[1]);
	n = read(p[0], report, sizeof(report) - 1);
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x",
	    st);
	cr_assert_gt(n, 0);
	report[n] = '\0';
	return report;
}

/* Removes the test's directory and skips, or fails the test when
 * STOCKADE_MUST_WORK=1 (style.md rule 23). */
static void
skip_or_fail(const char *why)
{
	const char *must = getenv("STOCKADE_MUST_WORK");

	if (must != NULL && strcmp(must, "1") == 0)
		cr_assert_fail("%s", why);
	/* Criterion 2.4 does not run .fini after a skip. */
	teardown();
	cr_skip_test("%s", why);
}

#define REPORT(...)                                  \
	do {                                         \
		snprintf(report, size, __VA_ARGS__); \
		return;                              \
	} while (0)

static void
mounts_in_namespace(char *report, size_t size)
{
	char path[128], target[128];
	int e, bfd;

	snprintf(path, sizeof(path), "%s/top/tmpfs", base);
	if (mount("tmpfs", path, "tmpfs", 0, "size=1m") < 0)
		REPORT("mount tmpfs: %s", strerror(errno));
	snprintf(target, sizeof(target), "%s/outside", base);
	snprintf(path, sizeof(path), "%s/top/bind", base);
	if (mount(target, path, NULL, MS_BIND, NULL) < 0)
		REPORT("bind mount: %s", strerror(errno));
	/* basefd was opened in the parent's mount namespace, where these
	 * mounts do not exist: look from this one. */
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		REPORT("%s: %s", base, strerror(errno));
	if (mknodat(bfd, "top/tmpfs/keep", S_IFREG | 0600, 0) < 0)
		REPORT("top/tmpfs/keep: %s", strerror(errno));

	e = remove_tree_at(bfd, "top");
	if (e != -EXDEV)
		REPORT("remove_tree_at returned %d (%s), not -EXDEV", e,
		    strerror(-e));
	/* What is under the mounts is intact (the bind's source is checked
	 * by the parent, after the namespace is gone). */
	if (!exists(bfd, "top/tmpfs/keep"))
		REPORT("top/tmpfs/keep was removed");
	if (!exists(bfd, "top/bind/canary"))
		REPORT("top/bind/canary was removed");
	/* The rest is gone. */
	if (exists(bfd, "top/a") || exists(bfd, "top/f"))
		REPORT("top/a or top/f is still there");
	close(bfd);
}

/*
 * Mounts below the top: another file system (tmpfs, st_dev differs) and a
 * bind mount of a directory of the same file system (only the mount id
 * differs). Neither is entered; both are -EXDEV; everything else goes.
 */
Test(fsutil, mounts_below_are_not_crossed)
{
	const char *report;

	make_outside();
	xmkdir(basefd, "top", 0700);
	xmkdir(basefd, "top/tmpfs", 0700);
	xmkdir(basefd, "top/bind", 0700);
	xmkdir(basefd, "top/a", 0700);
	xmkdir(basefd, "top/a/b", 0700);
	xwrite(basefd, "top/a/b/f", "x");
	xwrite(basefd, "top/f", "x");

	report = in_mount_namespace(mounts_in_namespace);
	if (strncmp(report, "skip: ", 6) == 0)
		skip_or_fail(report);
	cr_assert_str_eq(report, "ok");
	/* The namespace is gone: its mount points remain, empty. */
	assert_outside_untouched();
	cr_assert_eq(count_entries(basefd, "top"), 2);
	cr_assert_eq(count_entries(basefd, "top/tmpfs"), 0);
	cr_assert_eq(count_entries(basefd, "top/bind"), 0);
}
