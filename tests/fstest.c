/*
 * fstest.c: the file API tests' fixture (fstest.h).
 */
#include "fstest.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

char ws[64], outside[64], canary[128];
int root = -1;
static struct stat canary_st;

void
fstest_setup(const char *tag, bool with_canary)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(ws, sizeof(ws), "%s/%s-ws-XXXXXX", tmp, tag);
	snprintf(outside, sizeof(outside), "%s/%s-out-XXXXXX", tmp, tag);
	cr_assert_not_null(mkdtemp(ws));
	cr_assert_not_null(mkdtemp(outside));
	canary[0] = '\0';
	if (with_canary) {
		int fd;

		snprintf(canary, sizeof(canary), "%s/canary", outside);
		fd = open(canary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			  0644);
		cr_assert_geq(fd, 0);
		cr_assert_eq(write_all(fd, CANARY_TEXT, strlen(CANARY_TEXT)),
			     0);
		close(fd);
		cr_assert_eq(stat(canary, &canary_st), 0);
	}
	root = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(root, 0);
}

void
fstest_teardown(void)
{
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (root >= 0)
		close(root);
	root = -1;
	(void)remove_tree_at(fd, ws + 1);
	(void)remove_tree_at(fd, outside + 1);
	close(fd);
}

void
fstest_assert_canary_intact(void)
{
	struct stat st;
	char buf[256];
	ssize_t n;
	int fd;

	cr_assert_neq(canary[0], '\0', "the setup made no canary");
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

void
fstest_mkfile_at(int dirfd, const char *path, const char *text)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0644);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write_all(fd, text, strlen(text)), 0);
	close(fd);
}

void
fstest_mkfile(const char *path, const char *text)
{
	fstest_mkfile_at(root, path, text);
}

void
fstest_mkdir(const char *path)
{
	cr_assert_eq(mkdirat(root, path, 0755), 0, "%s: %s", path,
		     strerror(errno));
}
