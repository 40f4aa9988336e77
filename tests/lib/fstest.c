/*
 * fstest.c: the file API tests' fixture (fstest.h).
 */
#include "fstest.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

size_t
fstest_long_path_links(unsigned levels, size_t n, char *path, size_t size)
{
	char name[251];
	size_t len = 0, i;
	int dfd;

	memset(name, 'n', 250);
	name[250] = '\0';
	path[0] = '\0';
	for (i = 0; i < levels; i++) {
		len += (size_t)snprintf(path + len, size - len, "%s%s",
		    i ? "/" : "", name);
		cr_assert_lt(len, size);
		fstest_mkdir(path);
	}
	dfd = openat(root, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(dfd, 0);
	for (i = 0; i < n; i++) {
		char f[24];
		int fd;

		snprintf(f, sizeof(f), "%05zu", i);
		if (i == 0) {
			fd = openat(dfd, f, O_WRONLY | O_CREAT | O_CLOEXEC,
			    0644);
			cr_assert_geq(fd, 0, "%s", strerror(errno));
			close(fd);
		} else {
			cr_assert_eq(linkat(dfd, "00000", dfd, f, 0), 0, "%s",
			    strerror(errno));
		}
	}
	close(dfd);
	return len;
}

/* Gives PATH to FSTEST_NOBODY (nftw callback). */
static int
give(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return lchown(path, FSTEST_NOBODY, FSTEST_NOBODY) < 0 ? -1 : 0;
}

void
fstest_give(const char *path)
{
	cr_assert_eq(nftw(path, give, 16, FTW_PHYS), 0, "%s: %s", path,
	    strerror(errno));
}

void
fstest_as_nobody(int (*fn)(void))
{
	if (geteuid() == 0)
		fstest_give(ws);
	fstest_run_as_nobody(fn);
}

void
fstest_run_as_nobody(int (*fn)(void))
{
	int p[2], line = -1, st;
	pid_t pid;

	if (geteuid() != 0) {
		line = fn();
		cr_assert_eq(line, 0, "check failed at line %d", line);
		return;
	}
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		if (setgroups(0, NULL) < 0 ||
		    setresgid(FSTEST_NOBODY, FSTEST_NOBODY, FSTEST_NOBODY) <
			0 ||
		    setresuid(FSTEST_NOBODY, FSTEST_NOBODY, FSTEST_NOBODY) < 0)
			line = -2;
		else
			line = fn();
		_exit(write(p[1], &line, sizeof(line)) == sizeof(line) ? 0 : 1);
	}
	close(p[1]);
	cr_assert_eq(read(p[0], &line, sizeof(line)), (ssize_t)sizeof(line));
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_assert_eq(line, 0, "check failed at line %d", line);
}
