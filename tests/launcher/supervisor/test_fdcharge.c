/*
 * test_fdcharge.c: the monitor's descriptor charge
 * (launcher/supervisor/fdcharge.c) against a fake /proc tree, so that the path
 * of kernels before 6.2 (the directory's entries are the count) runs on any
 * kernel.
 *
 * A listing refused for any reason but the process being gone is charged
 * as the descriptor table's size ("FDSize:" of /proc/PID/status), never
 * as 0 (issue 23: on Linux 6.1 a non-dumpable payload's fd directory is
 * owned by root and a launcher running as the user cannot open it). The
 * refusal is made here by a fd "directory" that is a plain file
 * (ENOTDIR), which root cannot read past either. Passes as root and as an
 * ordinary user.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdcharge.h"

static char root[] = "/tmp/test-fdcharge-XXXXXX";
static int proc_fd = -1;

static void
put(const char *path, const char *text)
{
	int fd = openat(proc_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600);

	cr_assert(fd >= 0, "create %s", path);
	cr_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

static void
dir(const char *path)
{
	cr_assert(mkdirat(proc_fd, path, 0700) == 0, "mkdir %s", path);
}

/* A fake /proc: self/fd with two entries (a directory's st_size on any
 * file system but proc is not its entry count, so the walk lists);
 * 100 with 3 descriptors; 200 whose fd directory cannot be listed and
 * whose status says FDSize 1024; 300 refused likewise with no status;
 * 400 absent (gone). */
static void
setup(void)
{
	cr_assert(mkdtemp(root) != NULL);
	proc_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert(proc_fd >= 0);
	dir("self");
	dir("self/fd");
	put("self/fd/0", "");
	put("self/fd/1", "");
	dir("100");
	dir("100/fd");
	put("100/fd/0", "");
	put("100/fd/1", "");
	put("100/fd/7", "");
	dir("200");
	put("200/fd", "");
	put("200/status",
	    "Name:\tx\nUmask:\t0022\nFDSize:\t1024\nVmPTE:\t4 kB\n");
	dir("300");
	put("300/fd", "");
}

static void
teardown(void)
{
	static const char *const files[] = {"self/fd/0", "self/fd/1",
	    "100/fd/0", "100/fd/1", "100/fd/7", "200/fd", "200/status",
	    "300/fd"};
	static const char *const dirs[] = {"self/fd", "self", "100/fd", "100",
	    "200", "300"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		(void)unlinkat(proc_fd, files[i], 0);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		(void)unlinkat(proc_fd, dirs[i], AT_REMOVEDIR);
	close(proc_fd);
	(void)rmdir(root);
}

TestSuite(fdcharge, .init = setup, .fini = teardown);

Test(fdcharge, listed_directory_counts_entries)
{
	struct fd_charge c;

	fdcharge_init(&c, proc_fd);
	cr_assert(!c.by_size, "a fake tree's directory size is no count");
	fdcharge_begin(&c);
	fdcharge_process(&c, 100);
	fdcharge_process(&c, 400);
	cr_assert_eq(fdcharge_end(&c), 0);
	cr_assert_eq(c.descriptors, 3);
}

Test(fdcharge, refused_listing_charges_table_size)
{
	struct fd_charge c;

	fdcharge_init(&c, proc_fd);
	fdcharge_begin(&c);
	fdcharge_process(&c, 100);
	fdcharge_process(&c, 200);
	cr_assert_eq(c.walk, 1027,
	    "refused listing counted %llu, not "
	    "3 + FDSize 1024",
	    (unsigned long long)c.walk);
	cr_assert_eq(fdcharge_end(&c),
	    (uint64_t)(1027 - FDCHARGE_FREE) * FDCHARGE_PIPE_BYTES);
}

Test(fdcharge, refused_without_status_is_zero_not_error)
{
	struct fd_charge c;

	fdcharge_init(&c, proc_fd);
	fdcharge_begin(&c);
	fdcharge_process(&c, 300);
	fdcharge_process(&c, 400);
	cr_assert_eq(fdcharge_end(&c), 0);
	cr_assert_eq(c.descriptors, 0);
}
