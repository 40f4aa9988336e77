/* fuzz_util.c: the helpers of fuzz.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "log.h"
#include "policy.h"

static char tmp_path[4096];

/* The sanitizers' report (compiler-rt's sanitizer interface), present
 * only in a sanitized build: it reaches the report descriptor, which
 * libFuzzer keeps when -close_fd_mask=2 has closed standard error. */
extern void __sanitizer_report_error_summary(const char *summary)
    __attribute__((weak));

void
fuzz_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fuzz: property broken: %s\n", msg);
	if (__sanitizer_report_error_summary != NULL)
		__sanitizer_report_error_summary(msg);
	abort();
}

/* Removes the entries of DIRFD (taken: closed here), depth first. */
static void
empty(int dirfd)
{
	DIR *d;
	struct dirent *e;

	if (fchmod(dirfd, 0700) < 0 || (d = fdopendir(dirfd)) == NULL) {
		close(dirfd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		int sub;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd, e->d_name, 0) == 0)
			continue;
		sub = openat(dirfd, e->d_name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			empty(sub);
		unlinkat(dirfd, e->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

void
fuzz_empty_dir(int dirfd)
{
	/* A new open file description: a dup would share (and leave at
	 * the end) the offset of DIRFD's. */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd < 0)
		fuzz_fail("reopening the workspace: %s", strerror(errno));
	empty(fd);
	/* A second look from the start: nothing may remain. */
	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(fd)) == NULL)
		fuzz_fail("reopening the workspace: %s", strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			fuzz_fail("cannot empty the workspace: %s remains",
			    e->d_name);
	closedir(d);
}

static void
remove_tmp(void)
{
	int fd;

	if (tmp_path[0] == '\0')
		return;
	fd = open(tmp_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		empty(fd);
	rmdir(tmp_path);
	tmp_path[0] = '\0';
}

int
fuzz_tmpdir(char *path, size_t size)
{
	const char *base = getenv("TMPDIR");
	int fd, n;

	if (base == NULL || base[0] != '/')
		base = "/tmp";
	n = snprintf(path, size, "%s/stockade-fuzz-XXXXXX", base);
	if (n < 0 || (size_t)n >= size || mkdtemp(path) == NULL)
		fuzz_fail("mkdtemp under %s: %s", base, strerror(errno));
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		fuzz_fail("open %s: %s", path, strerror(errno));
	if (tmp_path[0] == '\0') {
		snprintf(tmp_path, sizeof(tmp_path), "%s", path);
		atexit(remove_tmp);
	}
	return fd;
}

static int top_fd = -1;

int
fuzz_workspace(char *ws, size_t size)
{
	char top[4096], link[64];
	int fd;

	if (top_fd >= 0)
		fuzz_fail("fuzz_workspace called twice");
	top_fd = fuzz_tmpdir(top, sizeof(top));
	if (mkdirat(top_fd, "ws", 0700) < 0 ||
	    mkdirat(top_fd, "outside", 0700) < 0 ||
	    (fd = openat(top_fd, "outside/secret",
		 O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
		fuzz_fail("preparing %s: %s", top, strerror(errno));
	close(fd);
	if ((fd = openat(top_fd, "ws", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		fuzz_fail("open %s/ws: %s", top, strerror(errno));
	if (ws != NULL) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		if ((n = readlink(link, ws, size - 1)) <= 0)
			fuzz_fail("readlink %s: %s", link, strerror(errno));
		ws[n] = '\0';
	}
	return fd;
}

void
fuzz_check_outside(void)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int fd;

	if (fstatat(top_fd, "outside/secret", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_size != 0)
		fuzz_fail("outside/secret beside the workspace was changed");
	if ((fd = openat(top_fd, "outside",
		 O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (d = fdopendir(fd)) == NULL)
		fuzz_fail("opening outside/: %s", strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 &&
		    strcmp(e->d_name, "..") != 0 &&
		    strcmp(e->d_name, "secret") != 0)
			fuzz_fail("outside/%s appeared beside the workspace",
			    e->d_name);
	closedir(d);
}

void
fuzz_lines(const uint8_t *data, size_t size, size_t max,
    void (*fn)(const char *line, size_t len, void *arg), void *arg)
{
	const char *p = (const char *)data, *end = p + size;
	size_t n = 0;

	while (p < end && n < max) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len > 0) {
			fn(p, len, arg);
			n++;
		}
		p += len + 1;
	}
}

int
fuzz_session(struct policy *pol)
{
	char err[POLICY_ERR_MAX];

	log_set_level(LOG_LVL_ERROR);
	if (policy_load_default(pol, err, sizeof(err)) < 0)
		fuzz_fail("the default policy: %s", err);
	return fuzz_workspace(NULL, 0);
}
