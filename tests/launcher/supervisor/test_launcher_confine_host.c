/*
 * test_launcher_confine_host.c: the launcher's own confinement
 * (launcher/supervisor/confine.c) against what the host brings (issue 5, item
 * 4): every cgroup2 mount stays usable, a call through a foreign ABI kills
 * the process, a kernel without Landlock is a refusal with the fix; and
 * the mountinfo reader that finds the cgroup2 mounts (shared/cgpath.h).
 * Each confining test forks a child that confines itself and reports
 * what it saw (tests/lib/probe.h).
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534, like the other jail suites.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgpath.h"
#include "confine.h"
#include "harness.h"
#include "probe.h"
#include "x86_abi.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

TestSuite(launcher_confine_host, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 90);

/* Confines the calling child; a failure is reported, and returns false. */
static bool
confine(void)
{
	char err[512];
	int e = confine_launcher(err, sizeof(err));

	CHECK(e == 0, "confine_launcher: %s (%s)", strerror(-e), err);
	return e == 0;
}

/* ---- cgroup v2: read and written beneath every cgroup2 mount ------------- */

struct cg_args {
	char mnt[PATH_MAX]; /* a cgroup2 mount point */
	char leaf[PATH_MAX + 8]; /* a job leaf to make below it, "" when
				  * this user cannot */
};

/* The first cgroup2 mount point that is reachable by its path, found
 * with the parser under test (its unit tests are below). */
static bool
find_cgroup2(char *out, size_t outlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	cr_assert_not_null(f);
	while (!found && getline(&line, &cap, f) > 0) {
		struct statfs sf;

		found = cg_mountinfo_cgroup2(line, NULL, 0, out, outlen) == 1 &&
		    statfs(out, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
	}
	free(line);
	fclose(f);
	return found;
}

static void
cgroup_child(void *arg)
{
	struct cg_args *a = arg;
	char path[PATH_MAX + 64], buf[256];
	int fd;
	DIR *d;

	if (!confine())
		return;
	d = opendir(a->mnt);
	CHECK(d != NULL, "opendir %s: %s", a->mnt, strerror(errno));
	if (d != NULL)
		closedir(d);
	snprintf(path, sizeof(path), "%s/cgroup.controllers", a->mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) >= 0, "read %s: %s", path,
	    strerror(errno));
	if (fd >= 0)
		close(fd);
	if (a->leaf[0] == '\0') {
		probe_say("note: %s is not writable by this user", a->mnt);
		return;
	}
	/* A job leaf: made, an interface file written (truncated, as
	 * O_TRUNC asks), removed. */
	EXPECT_OK(mkdir(a->leaf, 0755));
	snprintf(path, sizeof(path), "%s/cgroup.max.depth", a->leaf);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "max", 3) == 3, "write %s: %s", path,
	    strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_OK(rmdir(a->leaf));
}

Test(launcher_confine_host, cgroup2_mounts_stay_usable)
{
	struct cg_args a;
	struct probe_out o;
	char hex[13], parent[PATH_MAX];

	if (!probe_need_landlock())
		return;
	memset(&a, 0, sizeof(a));
	if (!find_cgroup2(a.mnt, sizeof(a.mnt))) {
		harness_skip("no cgroup2 file system is mounted here");
		return;
	}
	/*
	 * A delegated cgroup of ours to make the job leaf in: the root of a
	 * cgroup2 mount is mode 0555, which only CAP_DAC_OVERRIDE (not
	 * kept) could write; a launcher works in a delegated subtree. Made
	 * only where this user can (root; or a writable mount).
	 */
	harness_random_hex(hex, sizeof(hex));
	cr_assert_lt((size_t)snprintf(parent, sizeof(parent),
			 "%.3000s/stockade-lconf-%s", a.mnt, hex),
	    sizeof(parent));
	if (mkdir(parent, 0755) == 0)
		snprintf(a.leaf, sizeof(a.leaf), "%s/job", parent);
	else
		parent[0] = '\0';
	probe_run(cgroup_child, &a, &o);
	if (parent[0] != '\0') {
		(void)rmdir(a.leaf);
		cr_assert_eq(rmdir(parent), 0, "rmdir %s: %s", parent,
		    strerror(errno));
	}
	probe_assert_ok(&o);
}

/* ---- foreign ABIs kill the process -------------------------------------- */

/* Forks a grandchild that confines itself and then makes the call of
 * WHICH (0: int 0x80, 1: x32); it must die of SIGSYS, or, for int 0x80
 * on a kernel without the i386 entry, of the kernel's own SIGSEGV (no
 * call is made for a filter to see: x86_abi.h). */
static void
foreign_child(void *arg)
{
	int which = *(int *)arg, st = 0;
	int want = which == 0 && !x86_has_i386_entry() ? SIGSEGV : SIGSYS;
	pid_t pid = fork();

	if (pid == 0) {
		/* The kernel's own SIGSEGV (no i386 entry) must end the
		 * child as it would end a program, not in a sanitizer's
		 * handler (which aborts). */
		(void)signal(SIGSEGV, SIG_DFL);
		if (!confine())
			_exit(3);
		if (which == 0)
			(void)x86_int80_getpid();
		else
			(void)syscall(__X32_SYSCALL_BIT | SYS_getpid);
		probe_say("FAIL the %s call did not kill the process",
		    which == 0 ? "int 0x80" : "x32");
		_exit(4);
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
		WTERMSIG(st) == want,
	    "the %s call: wait status 0x%x, not "
	    "signal %d",
	    which == 0 ? "int 0x80" : "x32", (unsigned)st, want);
}

Test(launcher_confine_host, foreign_abis_are_killed)
{
	struct probe_out o;

	if (!probe_need_landlock())
		return;
#if !defined(__x86_64__)
	harness_skip("int 0x80 and x32 are x86_64's");
	return;
#endif
	for (int which = 0; which < 2; which++) {
		probe_run(foreign_child, &which, &o);
		probe_assert_ok(&o);
	}
}

/* ---- no Landlock: a refusal with the fix -------------------------------- */

static void
nolandlock_child(const struct probe_no_landlock *k)
{
	char err[512];
	int e = confine_launcher(err, sizeof(err));

	probe_check_refusal(k, e, err, "launcher");
}

Test(launcher_confine_host, kernel_without_landlock_is_refused_with_the_fix)
{
	probe_run_without_landlock(nolandlock_child);
}

/* ---- the mountinfo reader (pure) ---------------------------------------- */

Test(launcher_confine_host_parse, cgroup2_lines)
{
	static const struct {
		const char *line;
		int want;
		const char *root, *mnt;
	} cases[] = {
	    {"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 "
	     "cgroup2 rw\n",
		1, "/", "/sys/fs/cgroup/unified"},
	    /* Optional fields before the separator; no newline. */
	    {"30 25 0:26 /docker/x /sys/fs/cgroup rw,nosuid shared:4 "
	     "master:1 - cgroup2 cgroup2 rw,nsdelegate",
		1, "/docker/x", "/sys/fs/cgroup"},
	    /* The line ends at its newline: the next one is not read. */
	    {"1 2 0:3 / /a rw - tmpfs none rw\n3 4 0:5 / /b rw - cgroup2 "
	     "none rw\n",
		0, "", ""},
	    {"1 2 0:3 / /a rw -\n cgroup2 none rw\n", 0, "", ""},
	    /* Octal escapes (proc(5)): space, tab, newline, backslash. */
	    {"1 2 0:3 /r\\040s /mnt/a\\040b\\011c\\012d\\134e rw - cgroup2 "
	     "none rw",
		1, "/r s", "/mnt/a b\tc\nd\\e"},
	    /* A mount point called "-" is not the separator. */
	    {"1 2 0:3 / - rw - cgroup2 none rw", 1, "/", "-"},
	    /* A backslash not followed by three octal digits stays. */
	    {"1 2 0:3 / /a\\9b rw - cgroup2 none rw", 1, "/", "/a\\9b"},
	    {"1 2 0:3 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory", 0,
		"", ""},
	    {"1 2 0:3 / /tmp rw - tmpfs tmpfs rw", 0, "", ""},
	    {"1 2 0:3 / /x rw - cgroup2fs none rw", 0, "", ""},
	    {"1 2 0:3 / /x rw - cgroup none rw", 0, "", ""},
	    /* A decoded NUL cannot be a path. */
	    {"1 2 0:3 / /a\\000b rw - cgroup2 none rw", 0, "", ""},
	    /* Malformed: no separator, no type, an empty field, too few
		 * fields. */
	    {"1 2 0:3 / /x rw cgroup2 none rw", 0, "", ""},
	    {"1 2 0:3 / /x rw -", 0, "", ""},
	    {"1 2 0:3 /  rw - cgroup2 none rw", 0, "", ""},
	    {"cgroup2", 0, "", ""},
	    {"", 0, "", ""},
	};
	char root[PATH_MAX], out[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = cg_mountinfo_cgroup2(cases[i].line, root, sizeof(root),
		    out, sizeof(out));

		cr_assert_eq(r, cases[i].want, "case %zu (%s): %d", i,
		    cases[i].line, r);
		cr_assert_str_eq(root, cases[i].root, "case %zu", i);
		cr_assert_str_eq(out, cases[i].mnt, "case %zu", i);
		/* Without the root: the same answer. */
		cr_assert_eq(cg_mountinfo_cgroup2(cases[i].line, NULL, 0, out,
				 sizeof(out)),
		    r);
		cr_assert_str_eq(out, cases[i].mnt, "case %zu", i);
	}
	/* A root that decodes to a NUL: read only when asked for. */
	cr_assert_eq(cg_mountinfo_cgroup2("1 2 0:3 /\\000 /a rw - cgroup2 none "
					  "rw",
			 root, sizeof(root), out, sizeof(out)),
	    0);
	cr_assert_str_eq(out, "");
	cr_assert_eq(cg_mountinfo_cgroup2("1 2 0:3 /\\000 /a rw - cgroup2 none "
					  "rw",
			 NULL, 0, out, sizeof(out)),
	    1);
	cr_assert_str_eq(out, "/a");
	/* Too long for the buffer: the mount point, then the root. */
	cr_assert_eq(cg_mountinfo_cgroup2("1 2 0:3 / /sys/fs/cgroup rw - "
					  "cgroup2 none rw",
			 NULL, 0, out, 8),
	    -ENAMETOOLONG);
	cr_assert_str_eq(out, "");
	cr_assert_eq(cg_mountinfo_cgroup2("1 2 0:3 /abcdefgh /a rw - "
					  "cgroup2 none rw",
			 root, 8, out, sizeof(out)),
	    -ENAMETOOLONG);
	cr_assert_str_eq(root, "");
	cr_assert_str_eq(out, "");
	/* Exactly fitting. */
	cr_assert_eq(cg_mountinfo_cgroup2("1 2 0:3 /abcdef /abcdef rw - "
					  "cgroup2 none rw",
			 root, 8, out, 8),
	    1);
	cr_assert_str_eq(root, "/abcdef");
	cr_assert_str_eq(out, "/abcdef");
}
