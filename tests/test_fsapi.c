/*
 * test_fsapi.c: the host file API (broker/fsapi.c) against a hostile
 * workspace, as the test user, without a jail: the test plants what a
 * jailed program could (symlinks out, magic links, FIFOs, hard links,
 * sparse files) and asserts the exact named error, and that a canary
 * file outside the workspace keeps its content, size and mtime.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsapi.h"
#include "fsutil.h"

#define CANARY_TEXT "CANARY-SECRET-DO-NOT-LEAK\n"

static char ws[64], outside[64], canary[128];
static int root = -1;
static struct stat canary_st;

static void
fs_setup(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

	snprintf(ws, sizeof(ws), "%s/fsapi-ws-XXXXXX", tmp);
	snprintf(outside, sizeof(outside), "%s/fsapi-out-XXXXXX", tmp);
	cr_assert_not_null(mkdtemp(ws));
	cr_assert_not_null(mkdtemp(outside));
	snprintf(canary, sizeof(canary), "%s/canary", outside);
	fd = open(canary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, CANARY_TEXT, strlen(CANARY_TEXT)),
		     (ssize_t)strlen(CANARY_TEXT));
	close(fd);
	cr_assert_eq(stat(canary, &canary_st), 0);
	root = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root, 0);
}

static void
fs_teardown(void)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (root >= 0)
		close(root);
	(void)remove_tree_at(fd, ws + 1);
	(void)remove_tree_at(fd, outside + 1);
	close(fd);
}

TestSuite(fsapi, .init = fs_setup, .fini = fs_teardown, .timeout = 60);

/* The canary and its directory are exactly as fs_setup left them. */
static void
assert_canary_intact(void)
{
	struct stat st;
	char buf[256];
	ssize_t n;
	int fd;

	cr_assert_eq(stat(canary, &st), 0);
	cr_assert_eq(st.st_size, canary_st.st_size);
	cr_assert_eq(st.st_mtim.tv_sec, canary_st.st_mtim.tv_sec);
	cr_assert_eq(st.st_mtim.tv_nsec, canary_st.st_mtim.tv_nsec);
	cr_assert_eq(st.st_ino, canary_st.st_ino);
	fd = open(canary, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_eq(n, (ssize_t)strlen(CANARY_TEXT));
	cr_assert_eq(memcmp(buf, CANARY_TEXT, (size_t)n), 0);
	cr_assert_eq(stat(outside, &st), 0);
	cr_assert_eq(st.st_nlink, 2);
}

static void
plant_link(const char *target, const char *name)
{
	cr_assert_eq(symlinkat(target, root, name), 0, "%s: %s", name,
		     strerror(errno));
}

/* A memfd holding LEN bytes of DATA, at offset 0. */
static int
source(const void *data, size_t len)
{
	int fd = memfd_create("src", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write_all(fd, data, len), 0);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* Reads PATH; asserts the named error WANT; returns the memfd output. */
static int
expect_read(const char *path, uint64_t max, enum fs_error want)
{
	int out = memfd_create("out", MFD_CLOEXEC);
	enum fs_error why = FS_IO_ERROR;
	uint64_t copied = 99;
	int rc;

	cr_assert_geq(out, 0);
	rc = fsapi_read(root, path, max, out, &copied, &why);
	cr_assert_eq(why, want, "read %s: %s, expected %s", path,
		     fs_error_name(why), fs_error_name(want));
	cr_assert_eq(rc < 0, want != FS_OK);
	if (want != FS_OK) {
		cr_assert_eq(copied, 0);
		cr_assert_eq(lseek(out, 0, SEEK_END), 0, "%s leaked bytes",
			     path);
	}
	return out;
}

static void
expect_write(const char *path, bool overwrite, enum fs_error want)
{
	int in = source("EVIL\n", 5);
	enum fs_error why = FS_IO_ERROR;
	int rc = fsapi_write(root, path, in, 1 << 20, 0644, overwrite, &why);

	close(in);
	cr_assert_eq(why, want, "write %s: %s, expected %s", path,
		     fs_error_name(why), fs_error_name(want));
	cr_assert_eq(rc < 0, want != FS_OK);
}

/* Number of entries in the workspace directory DIR ("" for the root). */
static int
count_entries(const char *dir)
{
	char path[256];
	struct stat st;
	int n = 0;
	FILE *p;
	char cmd[300];

	snprintf(path, sizeof(path), "%s/%s", ws, dir);
	cr_assert_eq(stat(path, &st), 0);
	snprintf(cmd, sizeof(cmd), "ls -A '%s'", path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(cmd, sizeof(cmd), p) != NULL)
		n++;
	pclose(p);
	return n;
}

Test(fsapi, absolute_symlink_to_canary)
{
	char path[256];

	plant_link(canary, "abs");
	plant_link(outside, "absdir");
	close(expect_read("abs", 1 << 20, FS_SYMLINK_REFUSED));
	expect_write("absdir/canary", true, FS_SYMLINK_REFUSED);
	expect_write("absdir/new", false, FS_SYMLINK_REFUSED);
	snprintf(path, sizeof(path), "absdir/canary");
	close(expect_read(path, 1 << 20, FS_SYMLINK_REFUSED));
	assert_canary_intact();
}

Test(fsapi, relative_symlink_climbing_out)
{
	char path[300];

	cr_assert_eq(mkdirat(root, "sub", 0755), 0);
	plant_link("../../../../../../../..", "sub/up");
	snprintf(path, sizeof(path), "sub/up%s", canary);
	close(expect_read(path, 1 << 20, FS_SYMLINK_REFUSED));
	expect_write(path, true, FS_SYMLINK_REFUSED);
	assert_canary_intact();
}

Test(fsapi, chain_of_two_symlinks)
{
	plant_link("c2", "c1");
	plant_link(canary, "c2");
	plant_link("d2", "d1");
	plant_link(outside, "d2");
	close(expect_read("c1", 1 << 20, FS_SYMLINK_REFUSED));
	expect_write("d1/canary", true, FS_SYMLINK_REFUSED);
	close(expect_read("d1/canary", 1 << 20, FS_SYMLINK_REFUSED));
	assert_canary_intact();
}

Test(fsapi, symlink_as_parent_directory)
{
	char name[64], host[128];
	struct stat st;

	snprintf(name, sizeof(name), "out/stockade-fsapi-%ld-%d",
		 (long)time(NULL), getpid());
	snprintf(host, sizeof(host), "/tmp/%s", name + 4);
	plant_link("/tmp", "out");
	expect_write(name, false, FS_SYMLINK_REFUSED);
	expect_write(name, true, FS_SYMLINK_REFUSED);
	cr_assert_eq(lstat(host, &st), -1);
	cr_assert_eq(errno, ENOENT);
	assert_canary_intact();
}

Test(fsapi, magic_link_proc_self_root)
{
	char path[300];

	plant_link("/proc/self/root", "procroot");
	snprintf(path, sizeof(path), "procroot%s", canary);
	close(expect_read(path, 1 << 20, FS_SYMLINK_REFUSED));
	expect_write(path, true, FS_SYMLINK_REFUSED);
	snprintf(path, sizeof(path), "procroot%s/new", outside);
	expect_write(path, false, FS_SYMLINK_REFUSED);
	assert_canary_intact();
}

Test(fsapi, magic_link_proc_self_fd)
{
	int fd = open(canary, O_RDWR | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_geq(dup2(fd, 0), 0);
	plant_link("/proc/self/fd/0", "fd0");
	close(expect_read("fd0", 1 << 20, FS_SYMLINK_REFUSED));
	expect_write("fd0/x", true, FS_SYMLINK_REFUSED);
	close(fd);
	assert_canary_intact();
}

Test(fsapi, fifo_refused_at_once)
{
	struct timespec a, b;
	long ms;

	cr_assert_eq(mkfifoat(root, "result.txt", 0644), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	close(expect_read("result.txt", 1 << 20, FS_NOT_REGULAR_FILE));
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	cr_assert_lt(ms, 1000, "read of a FIFO took %ld ms", ms);
}

Test(fsapi, hard_link_refused)
{
	int fd = openat(root, "h1", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(linkat(root, "h1", root, "h2", 0), 0);
	close(expect_read("h1", 1 << 20, FS_HARDLINKED_FILE));
	close(expect_read("h2", 1 << 20, FS_HARDLINKED_FILE));
}

Test(fsapi, sparse_terabyte_too_large_unread)
{
	int fd = openat(root, "big", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	struct timespec a, b;

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)1 << 40), 0);
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &a);
	close(expect_read("big", 64 << 20, FS_TOO_LARGE));
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_assert_lt(b.tv_sec - a.tv_sec, 2);
}

Test(fsapi, other_refusals)
{
	cr_assert_eq(mkdirat(root, "dir", 0755), 0);
	close(expect_read("dir", 1 << 20, FS_IS_A_DIRECTORY));
	expect_write("dir", true, FS_IS_A_DIRECTORY);
	expect_write("dir", false, FS_IS_A_DIRECTORY);
	close(expect_read("missing", 1 << 20, FS_NOT_FOUND));
	expect_write("nodir/x", false, FS_NOT_FOUND);
	close(expect_read("../x", 1 << 20, FS_INVALID_PATH));
	expect_write("a//b", false, FS_INVALID_PATH);
	expect_write("/abs", false, FS_INVALID_PATH);
	expect_write("x", false, FS_OK);
	expect_write("x/y", false, FS_NOT_A_DIRECTORY);
	cr_assert_eq(count_entries(""), 2);
}

Test(fsapi, write_over_limit_leaves_nothing)
{
	static char data[1001];
	enum fs_error why;
	int in;

	memset(data, 'z', sizeof(data));
	cr_assert_eq(mkdirat(root, "d", 0755), 0);
	in = source(data, 1001);
	cr_assert_lt(fsapi_write(root, "d/f", in, 1000, 0644, false, &why), 0);
	cr_assert_eq(why, FS_TOO_LARGE);
	close(in);
	cr_assert_eq(count_entries("d"), 0);
	/* Overwrite goes through a temporary name: none left either. */
	in = source(data, 1001);
	cr_assert_lt(fsapi_write(root, "d/f", in, 1000, 0644, true, &why), 0);
	cr_assert_eq(why, FS_TOO_LARGE);
	close(in);
	cr_assert_eq(count_entries("d"), 0);
	/* Exactly the limit is fine. */
	in = source(data, 1000);
	cr_assert_eq(fsapi_write(root, "d/f", in, 1000, 0644, true, &why), 0);
	close(in);
	cr_assert_eq(count_entries("d"), 1);
}

Test(fsapi, planted_symlink_at_target)
{
	struct stat st;
	char buf[16];
	ssize_t n;
	int fd;

	plant_link(canary, "target");
	expect_write("target", false, FS_EXISTS);
	cr_assert_eq(fstatat(root, "target", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISLNK(st.st_mode));
	expect_write("target", true, FS_OK);
	cr_assert_eq(fstatat(root, "target", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	fd = openat(root, "target", O_RDONLY | O_CLOEXEC);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	cr_assert_eq(n, 5);
	cr_assert_eq(memcmp(buf, "EVIL\n", 5), 0);
	/* A FIFO planted there is replaced too, never opened. */
	cr_assert_eq(mkfifoat(root, "pipe", 0644), 0);
	expect_write("pipe", false, FS_EXISTS);
	expect_write("pipe", true, FS_OK);
	cr_assert_eq(fstatat(root, "pipe", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISREG(st.st_mode));
	assert_canary_intact();
	cr_assert_eq(count_entries(""), 2);
}

Test(fsapi, round_trip_one_mebibyte)
{
	static uint8_t data[1 << 20];
	enum fs_error why;
	size_t got = 0;
	int in, out;

	while (got < sizeof(data)) {
		ssize_t n = getrandom(data + got, sizeof(data) - got, 0);

		cr_assert_gt(n, 0);
		got += (size_t)n;
	}
	cr_assert_eq(mkdirat(root, "d", 0755), 0);
	in = source(data, sizeof(data));
	cr_assert_eq(fsapi_write(root, "d/blob", in, sizeof(data), 0640, false,
				 &why), 0);
	cr_assert_eq(why, FS_OK);
	close(in);
	out = expect_read("d/blob", sizeof(data), FS_OK);
	cr_assert_eq(lseek(out, 0, SEEK_END), (off_t)sizeof(data));
	{
		uint8_t *m = mmap(NULL, sizeof(data), PROT_READ, MAP_SHARED,
				  out, 0);

		cr_assert_neq(m, MAP_FAILED);
		cr_assert_eq(memcmp(m, data, sizeof(data)), 0);
		munmap(m, sizeof(data));
	}
	close(out);
	/* Read at most MAX_BYTES: a limit below the size is too_large. */
	close(expect_read("d/blob", sizeof(data) - 1, FS_TOO_LARGE));
}

Test(fsapi, through_pipes)
{
	int p[2], q[2];
	enum fs_error why;
	uint64_t copied;
	char buf[16];

	/* A pipe as the source of a write and the sink of a read: the
	 * read/write fallback of copy_file_range. */
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(write(p[1], "hello\n", 6), 6);
	close(p[1]);
	cr_assert_eq(fsapi_write(root, "f", p[0], 100, 0600, false, &why), 0);
	close(p[0]);
	cr_assert_eq(pipe2(q, O_CLOEXEC), 0);
	cr_assert_eq(fsapi_read(root, "f", 100, q[1], &copied, &why), 0);
	cr_assert_eq(copied, 6);
	close(q[1]);
	cr_assert_eq(read(q[0], buf, sizeof(buf)), 6);
	cr_assert_eq(memcmp(buf, "hello\n", 6), 0);
	close(q[0]);
}

Test(fsapi, setuid_bits_dropped)
{
	struct stat st;
	mode_t um = umask(077);

	expect_write("x", false, FS_OK);
	umask(um);
	{
		int in = source("#!/bin/sh\n", 10);
		enum fs_error why;

		cr_assert_eq(fsapi_write(root, "s", in, 100, 07755, false,
					 &why), 0);
		close(in);
	}
	cr_assert_eq(fstatat(root, "s", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(st.st_mode & 07777, 0755, "mode %o", st.st_mode & 07777);
	/* The mode is set exactly, whatever the umask. */
	cr_assert_eq(fstatat(root, "x", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(st.st_mode & 07777, 0644, "mode %o", st.st_mode & 07777);
}
