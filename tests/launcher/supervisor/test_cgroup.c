/*
 * test_cgroup.c: cgroup v2 leaves (launcher/supervisor/cgroup.c).
 *
 * These machines have no delegated cgroup v2 (a hybrid v1/v2 system whose
 * v2 hierarchy has no memory or pids controller), so most tests run on a
 * fake tree: a directory under /tmp with the interface files made as
 * regular files, whose contents the test sets and reads back. The last
 * test is live: it uses this process's own cgroup, or the one named by
 * STOCKADE_TEST_CGROUP, and skips with the reason cg_open_parent gives when
 * that is not usable, unless STOCKADE_TEST_CGROUP names it: then it must
 * work. (STOCKADE_MUST_WORK does not turn that skip into a failure: a
 * delegated cgroup is deployment, not a kernel layer; the monitor is the
 * fallback.)
 *
 * cg_claim_own runs on the same fake tree, with a fake kernel that gives a
 * directory made there the interface files of a cgroup (see the section
 * "cg_claim_own" below).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"

#define UNPRIV_ID 65534

/* ---- cg_own_path ---- */

#define MI_ROOT "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
#define MI_PROC "23 22 0:22 / /proc rw shared:12 - proc proc rw\n"
#define MI_V2                                                 \
	"30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec " \
	"shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
#define MI_HYBRID                                                             \
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" \
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup "     \
	"rw,memory\n"                                                         \
	"39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup "       \
	"rw,pids\n"                                                           \
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:7 - cgroup2 " \
	"cgroup2 rw\n"

static char path[4096];

static int
own(const char *cg, const char *mi)
{
	return cg_own_path(cg, mi, path, sizeof(path));
}

Test(own_path, pure_v2)
{
	cr_assert_eq(own("0::/user.slice/user-1000.slice/session-2.scope\n",
			 MI_ROOT MI_PROC MI_V2),
	    0);
	cr_assert_str_eq(path,
	    "/sys/fs/cgroup/user.slice/user-1000.slice/"
	    "session-2.scope");
	cr_assert_eq(own("0::/\n", MI_V2), 0);
	cr_assert_str_eq(path, "/sys/fs/cgroup");
	/* No trailing newline; a ':' in the path. */
	cr_assert_eq(own("0::/a:b", MI_V2), 0);
	cr_assert_str_eq(path, "/sys/fs/cgroup/a:b");
}

Test(own_path, hybrid_unified)
{
	cr_assert_eq(own("12:pids:/system.slice/x.service\n"
			 "4:memory:/system.slice/x.service\n"
			 "1:name=systemd:/system.slice/x.service\n"
			 "0::/system.slice/x.service\n",
			 MI_ROOT MI_HYBRID),
	    0);
	cr_assert_str_eq(path, "/sys/fs/cgroup/unified/system.slice/x.service");
}

Test(own_path, missing)
{
	/* Pure v1: no "0::" line ("10::" and "0:cpu:" are not it). */
	cr_assert_eq(own("4:memory:/x\n10::/y\n0:cpu:/z\n", MI_HYBRID),
	    -ENOENT);
	cr_assert_eq(own("", MI_V2), -ENOENT);
	cr_assert_eq(own("0::\n", MI_V2), -ENOENT);
	cr_assert_eq(own("0::relative\n", MI_V2), -ENOENT);
	/* No cgroup2 mount; "cgroup2" as a source, a mount point or an
	 * option is not one. */
	cr_assert_eq(own("0::/x\n",
			 MI_ROOT "40 22 0:40 / /cgroup2 rw - tmpfs cgroup2 "
				 "rw,cgroup2\n"
				 "41 22 0:41 / /mnt rw shared:cgroup2 - cgroup "
				 "cgroup2 rw\n"),
	    -ENOENT);
	/* The cgroup was removed (proc_cgroup_show appends this). */
	cr_assert_eq(own("0::/gone (deleted)\n", MI_V2), -ENOENT);
	cr_assert_eq(path[0], '\0');
}

/* mountinfo escapes space, tab, newline and backslash as \ooo (proc(5));
 * /proc/self/cgroup prints the path as it is. */
Test(own_path, escapes)
{
	cr_assert_eq(own("0::/my slice/job 1\n",
			 "50 22 0:50 / /run/my\\040cgroups\\134x rw - cgroup2 "
			 "none rw\n"),
	    0);
	cr_assert_str_eq(path, "/run/my cgroups\\x/my slice/job 1");
	cr_assert_eq(own("0::/a\n",
			 "50 22 0:50 / /run/t\\011ab rw - cgroup2 "
			 "none rw\n"),
	    0);
	cr_assert_str_eq(path, "/run/t\tab/a");
}

/* A mount of a sub-cgroup (a container's view, or bind mount): the part
 * of the path below the mount's root is appended to the mount point. */
Test(own_path, mount_root_not_slash)
{
	const char *mi = "60 22 0:60 /docker/abc /sys/fs/cgroup rw - cgroup2 "
			 "cgroup2 rw\n";

	cr_assert_eq(own("0::/docker/abc/sub\n", mi), 0);
	cr_assert_str_eq(path, "/sys/fs/cgroup/sub");
	cr_assert_eq(own("0::/docker/abc\n", mi), 0);
	cr_assert_str_eq(path, "/sys/fs/cgroup");
	/* Not below the root: a prefix that is not a whole component, a
	 * sibling, a cgroup namespace's "/.." view. */
	cr_assert_eq(own("0::/docker/abcd\n", mi), -ENOENT);
	cr_assert_eq(own("0::/other\n", mi), -ENOENT);
	cr_assert_eq(own("0::/x\n", "61 22 0:60 /.. /c rw - cgroup2 c rw\n"),
	    -ENOENT);
	/* A mount at "/" itself. */
	cr_assert_eq(own("0::/x/y\n", "62 1 0:60 / / rw - cgroup2 c rw\n"), 0);
	cr_assert_str_eq(path, "/x/y");
}

Test(own_path, last_mount_wins)
{
	cr_assert_eq(own("0::/j\n",
			 MI_V2 MI_PROC
			 "70 22 0:26 / /mnt/cg rw - cgroup2 cgroup2 rw\n"),
	    0);
	cr_assert_str_eq(path, "/mnt/cg/j");
}

Test(own_path, too_long)
{
	char small[16];

	cr_assert_eq(cg_own_path("0::/abcdefgh\n", MI_V2, small, sizeof(small)),
	    -ENAMETOOLONG);
	cr_assert_eq(cg_own_path("0::/\n", MI_V2, small, sizeof(small)), 0);
	cr_assert_str_eq(small, "/sys/fs/cgroup");
	cr_assert_eq(cg_own_path("0::/\n", MI_V2, small, 14), -ENAMETOOLONG);
}

/* ---- the fake tree ---- */

static char base[64];
static int basefd = -1;

static void
xwrite(int dfd, const char *name, const char *text)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644);

	cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static const char *
xread(int dfd, const char *name)
{
	static char buf[256];
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	cr_assert_geq(n, 0);
	buf[n] = '\0';
	close(fd);
	return buf;
}

static void
fake_setup(void)
{
	snprintf(base, sizeof(base), "/tmp/stockade-cgroup-XXXXXX");
	cr_assert_not_null(mkdtemp(base), "mkdtemp: %s", strerror(errno));
	cr_assert_eq(chmod(base, 0755), 0); /* for the 65534 child */
	basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(basefd, 0);
	/* What a delegated parent holds (cgroup-v2.rst, "Core Interface
	 * Files"). */
	xwrite(basefd, "cgroup.controllers",
	    "cpuset cpu io memory hugetlb pids rdma misc\n");
	xwrite(basefd, "cgroup.subtree_control", "cpu memory pids\n");
	xwrite(basefd, "cgroup.procs", "");
}

static void
fake_teardown(void)
{
	char cmd[256];

	close(basefd);
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s'; rm -rf '%s'", base,
	    base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", base);
}

TestSuite(parent, .init = fake_setup, .fini = fake_teardown, .timeout = 30);
TestSuite(leaf, .init = fake_setup, .fini = fake_teardown, .timeout = 30);

static char why[512];

static int
check(bool cpu)
{
	why[0] = '\0';
	return cg_check_parent(basefd, base, cpu, why, sizeof(why));
}

Test(parent, usable)
{
	cr_assert_eq(check(true), 0, "%s", why);
	cr_assert_eq(check(false), 0, "%s", why);
}

Test(parent, controller_not_enabled)
{
	xwrite(basefd, "cgroup.subtree_control", "memory pids\n");
	cr_assert_eq(check(false), 0, "%s", why);
	cr_assert_eq(check(true), -EOPNOTSUPP);
	cr_assert(strstr(why, "cpu is not in cgroup.subtree_control") != NULL,
	    "%s", why);
	cr_assert(strstr(why, "echo '+memory +pids +cpu' > /tmp/") != NULL,
	    "%s", why);
	cr_assert(strstr(why, "Delegate=yes") != NULL, "%s", why);
	/* Whole words only. */
	xwrite(basefd, "cgroup.subtree_control", "memoryx xpids\n");
	cr_assert_eq(check(false), -EOPNOTSUPP);
	cr_assert(strstr(why, "memory is not in cgroup.subtree_control"), "%s",
	    why);
	xwrite(basefd, "cgroup.subtree_control", "");
	cr_assert_eq(check(false), -EOPNOTSUPP);
}

/* A hybrid system: memory is bound to cgroup v1. */
Test(parent, controller_not_available)
{
	xwrite(basefd, "cgroup.controllers", "cpu pids hugetlb\n");
	cr_assert_eq(check(false), -EOPNOTSUPP);
	cr_assert(strstr(why, "the memory controller is not available") != NULL,
	    "%s", why);
	cr_assert(strstr(why, "systemd.unified_cgroup_hierarchy=1") != NULL,
	    "%s", why);
}

Test(parent, not_a_cgroup)
{
	cr_assert_eq(unlinkat(basefd, "cgroup.subtree_control", 0), 0);
	cr_assert_eq(check(false), -ENOENT);
	cr_assert(strstr(why, "cannot read cgroup.subtree_control") != NULL,
	    "%s", why);
	/* cg_open_parent also wants the cgroup2 file system. */
	cr_assert_eq(cg_open_parent(base, false, why, sizeof(why)),
	    -EOPNOTSUPP);
	cr_assert(strstr(why, "is not on a cgroup v2 file system") != NULL,
	    "%s", why);
	cr_assert_eq(cg_open_parent("/nonexistent/cg", false, why, sizeof(why)),
	    -ENOENT);
	cr_assert(strstr(why, "cannot open cgroup /nonexistent/cg") != NULL,
	    "%s", why);
}

/* Runs FN on a new descriptor of the fake tree as 65534 (dropped in a
 * child when root; as the test's own user otherwise); returns its result,
 * WHY in why. */
static int
unprivileged(int (*fn)(int))
{
	int p[2], st, r;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd;

		if (geteuid() == 0 &&
		    (setgroups(0, NULL) != 0 ||
			setresgid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID) != 0 ||
			setresuid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID) != 0))
			_exit(1);
		fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = fd < 0 ? -errno : fn(fd);
		if (write(p[1], &r, sizeof(r)) != sizeof(r) ||
		    write(p[1], why, sizeof(why)) != sizeof(why))
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %#x", st);
	cr_assert_eq(read(p[0], &r, sizeof(r)), sizeof(r));
	cr_assert_eq(read(p[0], why, sizeof(why)), sizeof(why));
	close(p[0]);
	return r;
}

static int
check_fd(int fd)
{
	return cg_check_parent(fd, base, true, why, sizeof(why));
}

Test(parent, permissions)
{
	uid_t u = geteuid() == 0 ? UNPRIV_ID : geteuid();
	char uid[32];

	snprintf(uid, sizeof(uid), "uid %u ", (unsigned)u);
	/* A directory the user may not write. */
	cr_assert_eq(fchmod(basefd, 0555), 0);
	cr_assert_eq(unprivileged(check_fd), -EACCES);
	cr_assert(strstr(why, uid) != NULL, "%s", why);
	cr_assert(strstr(why, "delegate it") != NULL, "%s", why);
	/* Delegated to the user: usable. */
	cr_assert_eq(fchmod(basefd, 0755), 0);
	if (geteuid() == 0) {
		cr_assert_eq(fchown(basefd, u, u), 0);
		cr_assert_eq(fchownat(basefd, "cgroup.procs", u, u, 0), 0);
	}
	cr_assert_eq(unprivileged(check_fd), 0, "%s", why);
	/* Its cgroup.procs not writable: processes cannot be moved in. */
	cr_assert_eq(fchmodat(basefd, "cgroup.procs", 0444, 0), 0);
	cr_assert_eq(unprivileged(check_fd), -EACCES);
	cr_assert(strstr(why, "cgroup.procs") != NULL, "%s", why);
}

/* ---- leaves ---- */

static const char *const leaf_files[] = {
    "memory.max",
    "memory.swap.max",
    "memory.oom.group",
    "pids.max",
    "cpu.max",
};

/* A fake leaf directory NAME with the files at their kernel defaults. */
static int
fake_leaf(const char *name)
{
	int fd;

	cr_assert_eq(mkdirat(basefd, name, 0755), 0);
	fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	for (size_t i = 0; i < 4; i++)
		xwrite(fd, leaf_files[i], "max\n");
	xwrite(fd, "memory.oom.group", "0\n");
	xwrite(fd, "cpu.max", "max 100000\n");
	return fd;
}

Test(leaf, configure_writes_exactly)
{
	struct cg_limits l = {256ull << 20, 64, 50};
	int fd = fake_leaf("j1");

	cr_assert_eq(cg_leaf_configure(fd, &l), 0);
	cr_assert_str_eq(xread(fd, "memory.max"), "268435456");
	cr_assert_str_eq(xread(fd, "memory.swap.max"), "0");
	cr_assert_str_eq(xread(fd, "memory.oom.group"), "1");
	cr_assert_str_eq(xread(fd, "pids.max"), "64");
	cr_assert_str_eq(xread(fd, "cpu.max"), "50000 100000");
	close(fd);

	/* 0 means no limit; cpu.max then untouched. Above one CPU. */
	fd = fake_leaf("j2");
	cr_assert_eq(cg_leaf_configure(fd, &(struct cg_limits){0, 0, 0}), 0);
	cr_assert_str_eq(xread(fd, "memory.max"), "max");
	cr_assert_str_eq(xread(fd, "pids.max"), "max");
	cr_assert_str_eq(xread(fd, "cpu.max"), "max 100000\n");
	cr_assert_eq(cg_leaf_configure(fd,
			 &(struct cg_limits){UINT64_MAX, UINT32_MAX, 250}),
	    0);
	cr_assert_str_eq(xread(fd, "memory.max"), "18446744073709551615");
	cr_assert_str_eq(xread(fd, "pids.max"), "4294967295");
	cr_assert_str_eq(xread(fd, "cpu.max"), "250000 100000");
	close(fd);
}

Test(leaf, configure_never_creates)
{
	struct cg_limits l = {1 << 20, 8, 10};
	int fd = fake_leaf("j");

	/* No swap accounting: no memory.swap.max, and that is fine. */
	cr_assert_eq(unlinkat(fd, "memory.swap.max", 0), 0);
	cr_assert_eq(cg_leaf_configure(fd, &l), 0);
	cr_assert_eq(faccessat(fd, "memory.swap.max", F_OK, 0), -1);
	/* Any other file missing is an error, and is not made. */
	cr_assert_eq(unlinkat(fd, "pids.max", 0), 0);
	cr_assert_eq(cg_leaf_configure(fd, &l), -ENOENT);
	cr_assert_eq(faccessat(fd, "pids.max", F_OK, 0), -1);
	close(fd);
}

Test(leaf, create_removes_what_it_made)
{
	struct cg_limits l = {1 << 20, 8, 0};

	/* A plain directory has no interface files: configuring fails and
	 * the new leaf is removed again. */
	cr_assert_eq(cg_leaf_create(basefd, "job-1", &l), -ENOENT);
	cr_assert_eq(faccessat(basefd, "job-1", F_OK, 0), -1);
	cr_assert_eq(errno, ENOENT);
	/* Something already there is left alone. */
	close(fake_leaf("job-2"));
	cr_assert_eq(cg_leaf_create(basefd, "job-2", &l), -EEXIST);
	cr_assert_str_eq(xread(basefd, "job-2/pids.max"), "max\n");
	cr_assert_eq(cg_leaf_create(basefd, "", &l), -EINVAL);
	cr_assert_eq(cg_leaf_create(basefd, "a/b", &l), -EINVAL);
	cr_assert_eq(cg_leaf_create(basefd, "..", &l), -EINVAL);
	cr_assert_eq(cg_leaf_create(basefd, ".", &l), -EINVAL);
}

Test(leaf, kill_and_remove)
{
	int fd = fake_leaf("j");

	cr_assert_eq(cg_leaf_kill(fd), -ENOENT); /* before Linux 5.14 */
	xwrite(fd, "cgroup.kill", "");
	cr_assert_eq(cg_leaf_kill(fd), 0);
	cr_assert_str_eq(xread(fd, "cgroup.kill"), "1");
	close(fd);
	cr_assert_eq(cg_leaf_remove(basefd, "j"), -ENOTEMPTY);
	cr_assert_eq(cg_leaf_remove(basefd, "nothing"), -ENOENT);
	cr_assert_eq(mkdirat(basefd, "empty", 0755), 0);
	cr_assert_eq(cg_leaf_remove(basefd, "empty"), 0);
	cr_assert_eq(faccessat(basefd, "empty", F_OK, 0), -1);
}

/* What a 6.x kernel shows (cgroup-v2.rst, "Memory Interface Files",
 * "PID Interface Files", "Core Interface Files"). */
static int
stats_leaf(const char *name)
{
	int fd = fake_leaf(name);

	xwrite(fd, "memory.current", "1234567\n");
	xwrite(fd, "memory.peak", "7654321\n");
	xwrite(fd, "memory.events",
	    "low 0\nhigh 0\nmax 17\noom 2\n"
	    "oom_kill 1\noom_group_kill 1\n");
	xwrite(fd, "pids.current", "3\n");
	xwrite(fd, "pids.events", "max 5\n");
	xwrite(fd, "cpu.stat",
	    "usage_usec 123456\nuser_usec 100000\n"
	    "system_usec 23456\n"
	    "core_sched.force_idle_usec 0\nnr_periods 0\n"
	    "nr_throttled 0\nthrottled_usec 0\n"
	    "nr_bursts 0\nburst_usec 0\n");
	return fd;
}

Test(leaf, stats)
{
	struct cg_stats s;
	int fd = stats_leaf("s");

	cr_assert_eq(cg_leaf_stats(fd, &s), 0);
	cr_assert_eq(s.memory_current, 1234567);
	cr_assert_eq(s.memory_peak, 7654321);
	cr_assert_eq(s.memory_max_events, 17);
	cr_assert_eq(s.oom_kill, 1);
	cr_assert_eq(s.pids_current, 3);
	cr_assert_eq(s.pids_max_events, 5);
	cr_assert_eq(s.cpu_usage_usec, 123456);
	/* Optional files absent (memory.peak before 5.19); a key added by a
	 * later kernel; a file without the key. */
	cr_assert_eq(unlinkat(fd, "memory.peak", 0), 0);
	cr_assert_eq(unlinkat(fd, "cpu.stat", 0), 0);
	xwrite(fd, "pids.events", "max.imposed 4\nmax 6\n");
	xwrite(fd, "memory.events", "low 0\nhigh 0\n");
	cr_assert_eq(cg_leaf_stats(fd, &s), 0);
	cr_assert_eq(s.memory_peak, 0);
	cr_assert_eq(s.cpu_usage_usec, 0);
	cr_assert_eq(s.pids_max_events, 6);
	cr_assert_eq(s.oom_kill, 0);
	cr_assert_eq(s.memory_current, 1234567);
	close(fd);
}

Test(leaf, stats_refuses_what_does_not_parse)
{
	static const char *const bad[][2] = {
	    {"memory.current", "12a\n"},
	    {"memory.current", ""},
	    {"memory.current", "-1\n"},
	    {"memory.current", "18446744073709551616\n"},
	    {"memory.current", "1 2\n"},
	    {"memory.events", "max\n"},
	    {"memory.events", "max \n"},
	    {"memory.events", " 3\n"},
	    {"memory.events", "max 1x\n"},
	    {"pids.events", "max 99999999999999999999999\n"},
	    {"cpu.stat", "usage_usec 12 3\n"},
	};
	struct cg_stats s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "s%zu", i);
		fd = stats_leaf(name);
		xwrite(fd, bad[i][0], bad[i][1]);
		cr_assert_eq(cg_leaf_stats(fd, &s), -EINVAL, "%s: %s",
		    bad[i][0], bad[i][1]);
		cr_assert_eq(s.memory_current, 0);
		close(fd);
	}
	/* A required file missing. */
	for (size_t i = 0; i < 4; i++) {
		static const char *const required[] = {
		    "memory.current",
		    "memory.events",
		    "pids.current",
		    "pids.events",
		};
		char name[16];
		int fd;

		snprintf(name, sizeof(name), "r%zu", i);
		fd = stats_leaf(name);
		cr_assert_eq(unlinkat(fd, required[i], 0), 0);
		cr_assert_eq(cg_leaf_stats(fd, &s), -ENOENT, "%s", required[i]);
		close(fd);
	}
}

/* ---- cg_claim_own ---- */

/*
 * The fake kernel: while fake_cgroupfs is set, a directory made with
 * mkdirat gets the interface files of a new cgroup (empty; its
 * cgroup.procs with mode fake_procs_mode, or a directory when that is -1),
 * and unlinkat(AT_REMOVEDIR) removes them first, as rmdir of a cgroup
 * does. cgroup.c is linked into this executable, so these definitions
 * come before libc's. Writes to cgroup.procs move nothing here: the tests
 * read back what was written.
 */
static bool fake_cgroupfs;
static int fake_procs_mode = 0644;
static const char *const cg_files[] = {"cgroup.procs", "cgroup.controllers",
    "cgroup.subtree_control"};

int
mkdirat(int dfd, const char *name, mode_t mode)
{
	int fd, f;

	if (syscall(SYS_mkdirat, dfd, name, mode) != 0)
		return -1;
	if (!fake_cgroupfs)
		return 0;
	if ((fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	for (size_t i = 0; i < 3; i++) {
		if (i == 0 && fake_procs_mode < 0) {
			if (syscall(SYS_mkdirat, fd, cg_files[i], 0755) != 0)
				abort();
			continue;
		}
		f = openat(fd, cg_files[i],
		    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (f < 0 || fchmod(f, i == 0 ? (mode_t)fake_procs_mode : 0644))
			abort();
		close(f);
	}
	close(fd);
	return 0;
}

int
unlinkat(int dfd, const char *name, int flags)
{
	int fd;

	if (fake_cgroupfs && (flags & AT_REMOVEDIR) &&
	    (fd = openat(dfd, name,
		 O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
		for (size_t i = 0; i < 3; i++)
			if (syscall(SYS_unlinkat, fd, cg_files[i], 0) != 0)
				syscall(SYS_unlinkat, fd, cg_files[i],
				    AT_REMOVEDIR);
		close(fd);
	}
	return (int)syscall(SYS_unlinkat, dfd, name, flags);
}

/* The broker and the launcher, as cgroup.procs lists them. */
#define B 100
#define L 200

/* A delegated scope that holds the broker and the launcher: controllers
 * granted, none enabled for children (they cannot be, while it holds
 * processes). */
static void
claim_setup(void)
{
	fake_setup();
	xwrite(basefd, "cgroup.subtree_control", "");
	xwrite(basefd, "cgroup.procs", "100\n200\n");
	fake_cgroupfs = true;
}

TestSuite(claim, .init = claim_setup, .fini = fake_teardown, .timeout = 30);

static int
claim(pid_t b, pid_t l, bool cpu)
{
	why[0] = '\0';
	return cg_claim_own(basefd, b, l, 0, cpu, why, sizeof(why));
}

static bool
exists(const char *name)
{
	struct stat st;

	return fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Nothing was written and no leaf was made. */
static void
untouched(const char *procs)
{
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"), "");
	cr_assert_str_eq(xread(basefd, "cgroup.procs"), procs);
	cr_assert(!exists(CG_SUPERVISOR));
}

static void
why_has(const char *part)
{
	cr_assert(strstr(why, part) != NULL, "no \"%s\" in: %s", part, why);
}

Test(claim, already_claimed)
{
	static const char *const lists[] = {"memory pids\n",
	    "cpu memory pids\n", "pids io memory"};

	for (size_t i = 0; i < 3; i++) {
		xwrite(basefd, "cgroup.subtree_control", lists[i]);
		/* A cpu that is not there is not added either. */
		cr_assert_eq(claim(B, L, true), 0, "%s", why);
		cr_assert_eq(claim(B, L, false), 0, "%s", why);
		cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"),
		    lists[i]);
		cr_assert_str_eq(xread(basefd, "cgroup.procs"), "100\n200\n");
		cr_assert(!exists(CG_SUPERVISOR));
	}
	/* Only one of them, or not as a whole word: not claimed. */
	xwrite(basefd, "cgroup.subtree_control", "memory xpids\n");
	cr_assert_eq(claim(B, L, true), 0, "%s", why);
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"),
	    "+memory +pids +cpu");
}

Test(claim, not_delegated)
{
	/* memory bound to cgroup v1, or not granted by the parent. */
	xwrite(basefd, "cgroup.controllers", "cpu io pids\n");
	cr_assert_eq(claim(B, L, false), -EOPNOTSUPP);
	why_has("not delegated (memory is not in its cgroup.controllers)");
	why_has("systemd-run --user --scope -p Delegate=yes stockade");
	why_has("[limits] cgroup");
	untouched("100\n200\n");
	/* cpu is needed only when wanted. */
	xwrite(basefd, "cgroup.controllers", "memory pids\n");
	cr_assert_eq(claim(B, L, true), -EOPNOTSUPP);
	why_has("cpu is not in its cgroup.controllers");
	untouched("100\n200\n");
	cr_assert_eq(claim(B, L, false), 0, "%s", why);
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"),
	    "+memory +pids");
	/* Not a cgroup. */
	cr_assert_eq(unlinkat(basefd, "cgroup.controllers", 0), 0);
	xwrite(basefd, "cgroup.subtree_control", "");
	cr_assert_eq(claim(B, L, false), -ENOENT);
	why_has("cannot read cgroup.controllers");
}

Test(claim, other_processes_untouched)
{
	static const struct {
		const char *procs;
		const char *why;
	} busy[] = {
	    {"100\n300\n200\n", "holds 1 other process than"},
	    {"300\n100\n301\n200\n", "holds 2 other processes"},
	    /* Whole lines only: 1000 and 10 are not 100. */
	    {"1000\n200\n", "holds 1 other process "},
	    {"100\n10\n200\n", "holds 1 other process "},
	    {"100\n200\n\n", "holds 1 other process "},
	    {"100\nx\n200\n", "holds 1 other process "},
	};
	static char big[(1 << 20) + 64];

	for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++) {
		xwrite(basefd, "cgroup.procs", busy[i].procs);
		cr_assert_eq(claim(B, L, true), -EBUSY, "%s", busy[i].procs);
		why_has(busy[i].why);
		why_has("which stockade may not move");
		why_has("Delegate=yes");
		untouched(busy[i].procs);
	}
	/* More than is read (1 MiB): busy, and said to be at least so. */
	for (size_t o = 0; o + 6 < sizeof(big); o += 6)
		memcpy(big + o, "12345\n", 6);
	xwrite(basefd, "cgroup.procs", big);
	cr_assert_eq(claim(B, L, true), -EBUSY);
	why_has("holds at least 131070 other processes");
	cr_assert(!exists(CG_SUPERVISOR));
	/* The launcher not there: not its cgroup. */
	xwrite(basefd, "cgroup.procs", "100\n");
	cr_assert_eq(claim(B, L, true), -ESRCH);
	why_has("the launcher (pid 200) is not in");
	untouched("100\n");
	xwrite(basefd, "cgroup.procs", "");
	cr_assert_eq(claim(B, L, true), -ESRCH);
	untouched("");
	/* What cannot be pids. */
	cr_assert_eq(claim(B, 0, true), -EINVAL);
	cr_assert_eq(claim(-1, L, true), -EINVAL);
	cr_assert_eq(claim(L, L, true), -EINVAL);
	untouched("");
}

/* Back to the scope before the claim. */
static void
reset(const char *controllers, const char *procs)
{
	cr_assert_eq(unlinkat(basefd, CG_SUPERVISOR, AT_REMOVEDIR), 0);
	xwrite(basefd, "cgroup.controllers", controllers);
	xwrite(basefd, "cgroup.subtree_control", "");
	xwrite(basefd, "cgroup.procs", procs);
}

Test(claim, moves_both_then_enables)
{
	struct stat st;

	cr_assert_eq(claim(B, L, true), 0, "%s", why);
	cr_assert_eq(fstatat(basefd, CG_SUPERVISOR, &st, AT_SYMLINK_NOFOLLOW),
	    0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0755);
	/* The broker, then the launcher, one write each. */
	cr_assert_str_eq(xread(basefd, CG_SUPERVISOR "/cgroup.procs"),
	    "100\n200\n");
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"),
	    "+memory +pids +cpu");
	/* Not wanted: no cpu, whether the parent grants it or not. */
	reset("cpuset cpu io memory pids\n", "200\n100");
	cr_assert_eq(claim(B, L, false), 0, "%s", why);
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"),
	    "+memory +pids");
	reset("memory pids\n", "100\n200\n");
	cr_assert_eq(claim(B, L, false), 0, "%s", why);
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"),
	    "+memory +pids");
	/* A broker elsewhere, or none, is not moved. */
	reset("cpu memory pids\n", "200\n");
	cr_assert_eq(claim(B, L, true), 0, "%s", why);
	cr_assert_str_eq(xread(basefd, CG_SUPERVISOR "/cgroup.procs"), "200\n");
	reset("cpu memory pids\n", "200\n");
	cr_assert_eq(claim(0, L, true), 0, "%s", why);
	cr_assert_str_eq(xread(basefd, CG_SUPERVISOR "/cgroup.procs"), "200\n");
}

/* The launcher's zygote (launcher/zygote/zygote.h) is stockade's too: it moves
 * with the launcher, and is not "another process". */
Test(claim, zygote_moves_too)
{
	xwrite(basefd, "cgroup.procs", "100\n200\n300\n");
	why[0] = '\0';
	cr_assert_eq(cg_claim_own(basefd, B, L, 300, true, why, sizeof(why)), 0,
	    "%s", why);
	cr_assert_str_eq(xread(basefd, CG_SUPERVISOR "/cgroup.procs"),
	    "100\n200\n300\n");
	/* Not named as ours, the same pid is somebody else's. */
	reset("cpu memory pids\n", "100\n200\n300\n");
	cr_assert_eq(claim(B, L, true), -EBUSY);
	why_has("1 other process than stockade's own");
	untouched("100\n200\n300\n");
	/* A zygote elsewhere is not moved; pids that clash are refused. */
	xwrite(basefd, "cgroup.procs", "100\n200\n");
	cr_assert_eq(cg_claim_own(basefd, B, L, 300, true, why, sizeof(why)), 0,
	    "%s", why);
	cr_assert_str_eq(xread(basefd, CG_SUPERVISOR "/cgroup.procs"),
	    "100\n200\n");
	cr_assert_eq(cg_claim_own(basefd, B, L, L, true, why, sizeof(why)),
	    -EINVAL);
}

Test(claim, existing_leaf)
{
	/* A launcher before this one made it: reused, left as it is. */
	cr_assert_eq(mkdirat(basefd, CG_SUPERVISOR, 0700), 0);
	xwrite(basefd, CG_SUPERVISOR "/mark", "");
	cr_assert_eq(claim(B, L, true), 0, "%s", why);
	cr_assert_str_eq(xread(basefd, CG_SUPERVISOR "/cgroup.procs"),
	    "100\n200\n");
	cr_assert(exists(CG_SUPERVISOR "/mark"));
	/* One this call did not make is not removed when a move fails. */
	cr_assert_eq(unlinkat(basefd, CG_SUPERVISOR "/cgroup.procs", 0), 0);
	xwrite(basefd, "cgroup.subtree_control", "");
	cr_assert_eq(claim(B, L, true), -ENOENT);
	why_has("cannot move pid 100 into " CG_SUPERVISOR "/cgroup.procs");
	cr_assert(exists(CG_SUPERVISOR "/mark"));
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"), "");
	fake_cgroupfs = false;
	cr_assert_eq(unlinkat(basefd, CG_SUPERVISOR "/mark", 0), 0);
	cr_assert_eq(unlinkat(basefd, CG_SUPERVISOR "/cgroup.controllers", 0),
	    0);
	cr_assert_eq(unlinkat(basefd, CG_SUPERVISOR "/cgroup.subtree_control",
			 0),
	    0);
	cr_assert_eq(unlinkat(basefd, CG_SUPERVISOR, AT_REMOVEDIR), 0);
	/* Not a directory: a file, a symbolic link to one. */
	xwrite(basefd, CG_SUPERVISOR, "");
	cr_assert_eq(claim(B, L, true), -ENOTDIR);
	why_has("cannot open " CG_SUPERVISOR " in the launcher's cgroup: Not a "
		"directory (remove it if it is not a directory)");
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"), "");
	cr_assert_eq(unlinkat(basefd, CG_SUPERVISOR, 0), 0);
	cr_assert_eq(mkdirat(basefd, "elsewhere", 0755), 0);
	cr_assert_eq(symlinkat("elsewhere", basefd, CG_SUPERVISOR), 0);
	cr_assert_eq(claim(B, L, true), -ENOTDIR);
	why_has("Not a directory");
	cr_assert(exists(CG_SUPERVISOR));
	cr_assert_str_eq(xread(basefd, "cgroup.subtree_control"), "");
}

/* The leaf it made is removed when the broker cannot be moved. */
Test(claim, first_move_fails)
{
	/* Its cgroup.procs cannot be opened for writing. */
	fake_procs_mode = -1;
	cr_assert_eq(claim(B, L, true), -EISDIR);
	why_has("cannot move pid 100 into " CG_SUPERVISOR "/cgroup.procs: ");
	untouched("100\n200\n");
}

/* Gives the fake tree to 65534 (as root) for the unprivileged child. */
static void
delegate_fake(void)
{
	if (geteuid() != 0)
		return;
	cr_assert_eq(fchown(basefd, UNPRIV_ID, UNPRIV_ID), 0);
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(fchownat(basefd, cg_files[i], UNPRIV_ID, UNPRIV_ID,
				 0),
		    0);
}

static int
claim_fd(int fd)
{
	return cg_claim_own(fd, B, L, 0, true, why, sizeof(why));
}

Test(claim, unprivileged)
{
	char uid[32];

	snprintf(uid, sizeof(uid), "uid %u ",
	    (unsigned)(geteuid() == 0 ? UNPRIV_ID : geteuid()));
	/* The scope is not the user's: no leaf can be made there. */
	cr_assert_eq(fchmod(basefd, 0555), 0);
	cr_assert_eq(unprivileged(claim_fd), -EACCES);
	why_has("cannot make " CG_SUPERVISOR " in the launcher's cgroup");
	why_has(uid);
	why_has("Delegate=yes");
	untouched("100\n200\n");
	/* The leaf's cgroup.procs not writable (chmod 0): the leaf made is
	 * removed. */
	cr_assert_eq(fchmod(basefd, 0755), 0);
	delegate_fake();
	fake_procs_mode = 0;
	cr_assert_eq(unprivileged(claim_fd), -EACCES);
	why_has("cannot move pid 100 into");
	why_has(uid);
	untouched("100\n200\n");
	/* cgroup.subtree_control not writable: both pids are moved back
	 * (the launcher first) and the leaf is removed. */
	fake_procs_mode = 0644;
	cr_assert_eq(fchmodat(basefd, "cgroup.subtree_control", 0444, 0), 0);
	cr_assert_eq(unprivileged(claim_fd), -EACCES);
	why_has("cannot write '+memory +pids +cpu' to the launcher's "
		"cgroup.subtree_control");
	untouched("200\n100\n");
	/* And cgroup.procs as well: said so. */
	xwrite(basefd, "cgroup.procs", "100\n200\n");
	cr_assert_eq(fchmodat(basefd, "cgroup.procs", 0444, 0), 0);
	cr_assert_eq(unprivileged(claim_fd), -EACCES);
	why_has("; moving them back failed too: Permission denied");
}

/* The launcher cannot be moved after the broker was: the broker goes
 * back, the leaf is removed. The second write fails by RLIMIT_FSIZE
 * (EFBIG past 4 bytes, "100\n" being the first), as the fake kernel
 * cannot refuse it. */
Test(claim, second_move_fails)
{
	struct rlimit old, four = {4, 0};
	int r;

	cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	four.rlim_max = old.rlim_max;
	cr_assert_neq(signal(SIGXFSZ, SIG_IGN), SIG_ERR);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &four), 0);
	r = claim(B, L, true);
	cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	cr_assert_eq(r, -EFBIG, "%d: %s", r, why);
	why_has("cannot move pid 200 into");
	untouched("100\n");
}

/* ---- live ---- */

/* Reads a /proc file whole into BUF, NUL-terminated. */
static void
slurp(const char *name, char *buf, size_t size)
{
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	cr_assert_eq(n, 0, "%s: too large or unreadable", name);
	buf[len] = '\0';
	close(fd);
}

/* A child born in LEAF (clone3 CLONE_INTO_CGROUP, as the launcher starts
 * a jail) that touches MIB MiB, says so on FD, then waits; after a byte
 * on ORDERS it touches five times as much. */
static pid_t
child_in(int leaf, int mib, int fd, int orders)
{
	struct clone_args a = {.flags = CLONE_INTO_CGROUP,
	    .exit_signal = SIGCHLD,
	    .cgroup = (uint64_t)leaf};
	long pid = syscall(SYS_clone3, &a, sizeof(a));
	char c = 'r';

	cr_assert_geq(pid, 0, "clone3: %s", strerror(errno));
	if (pid == 0) {
		size_t len = (size_t)mib << 20;
		char *m = mmap(NULL, len * 5, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			_exit(1);
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		memset(m, 1, len);
		if (write(fd, &c, 1) != 1 || read(orders, &c, 1) != 1)
			_exit(2);
		memset(m, 2, len * 5);
		_exit(3);
	}
	return (pid_t)pid;
}

/* What the live test made, removed whatever an assertion did. */
static int live_parent = -1, live_leaf = -1;
static char live_name[64];

static void
live_cleanup(void)
{
	if (live_leaf >= 0) {
		if (cg_leaf_kill(live_leaf) < 0)
			fprintf(stderr, "cgroup.kill of %s failed\n",
			    live_name);
		close(live_leaf);
	}
	if (live_parent >= 0 && live_name[0] != '\0' &&
	    cg_leaf_remove(live_parent, live_name) < 0 && errno != ENOENT)
		fprintf(stderr, "could not remove cgroup %s\n", live_name);
	if (live_parent >= 0)
		close(live_parent);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

Test(live, delegated_cgroup, .fini = live_cleanup, .timeout = 60)
{
	static char cg[65536], mi[1 << 20];
	const char *named = getenv("STOCKADE_TEST_CGROUP");
	struct cg_limits l = {32ull << 20, 16, 0};
	char dir[4096], c;
	struct cg_stats s;
	int rep[2], ord[2], st;
	pid_t pid;

	if (named != NULL && named[0] != '\0') {
		snprintf(dir, sizeof(dir), "%s", named);
	} else {
		slurp("/proc/self/cgroup", cg, sizeof(cg));
		slurp("/proc/self/mountinfo", mi, sizeof(mi));
		if (cg_own_path(cg, mi, dir, sizeof(dir)) != 0)
			cr_skip_test("this process has no cgroup v2 (no "
				     "\"0::\" line or no cgroup2 mount)");
	}
	live_parent = cg_open_parent(dir, false, why, sizeof(why));
	if (live_parent < 0 && named != NULL && named[0] != '\0')
		cr_assert_fail("STOCKADE_TEST_CGROUP: %s", why);
	if (live_parent < 0)
		cr_skip_test("no usable delegated cgroup v2: %s", why);

	snprintf(live_name, sizeof(live_name), "stockade-test-%d",
	    (int)getpid());
	live_leaf = cg_leaf_create(live_parent, live_name, &l);
	cr_assert_geq(live_leaf, 0, "%s/%s: %s", dir, live_name,
	    strerror(-live_leaf));
	cr_assert_eq(pipe2(rep, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(ord, O_CLOEXEC), 0);

	/* 8 MiB is charged to the leaf; then 40 MiB is over its 32 MiB
	 * (and no swap): the OOM killer ends it, and memory.events says
	 * so. */
	pid = child_in(live_leaf, 8, rep[1], ord[0]);
	cr_assert_eq(read(rep[0], &c, 1), 1);
	cr_assert_eq(cg_leaf_stats(live_leaf, &s), 0);
	cr_assert_eq(s.pids_current, 1);
	cr_assert_geq(s.memory_current, 8u << 20, "%llu",
	    (unsigned long long)s.memory_current);
	cr_assert_eq(write(ord[1], "m", 1), 1);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
	cr_assert_eq(cg_leaf_stats(live_leaf, &s), 0);
	cr_assert_geq(s.oom_kill, 1);
	cr_assert_geq(s.memory_max_events, 1);

	/* cgroup.kill ends whatever is in the leaf. */
	pid = child_in(live_leaf, 1, rep[1], ord[0]);
	cr_assert_eq(read(rep[0], &c, 1), 1);
	cr_assert_eq(cg_leaf_stats(live_leaf, &s), 0);
	cr_assert_eq(s.pids_current, 1);
	st = cg_leaf_kill(live_leaf);
	if (st == -ENOENT) /* before Linux 5.14 */
		kill(pid, SIGKILL);
	else
		cr_assert_eq(st, 0, "cgroup.kill: %s", strerror(-st));
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	close(live_leaf);
	live_leaf = -1;
	cr_assert_eq(cg_leaf_remove(live_parent, live_name), 0);
	live_name[0] = '\0';
}
