/*
 * fuzz_wspath.c: the workspace path validator (broker/fs/wspath.h).
 *
 * Input: one control byte choosing the limits, then the path's bytes.
 * Properties, each an abort when broken:
 *  - wspath_check agrees with wspath_why, and both with a reference
 *    reading of wspath.h's rules written here independently: an accepted
 *    path has no NUL, is 1..max_path bytes, is relative, has no empty,
 *    "." or ".." component, no trailing '/', no component over NAME_MAX
 *    and at most max_depth components;
 *  - wspath_split of an accepted path gives back its parent and its last
 *    component;
 *  - any accepted path, opened beneath a workspace that holds
 *    directories, a file and symlinks pointing inside and outside it
 *    (prepared once), with openat2 RESOLVE_BENEATH (symlinks followed)
 *    and with the broker's own fsapi_openat2 flags, never resolves to
 *    something outside the workspace (/proc/self/fd/N read back); with
 *    fsapi_openat2's it resolves to the path itself: no symbolic link
 *    is followed (RESOLVE_NO_SYMLINKS).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsapi_internal.h"
#include "fuzz.h"
#include "wspath.h"

static int wsfd = -1;
static char ws[4096];
static size_t ws_len;

/* The workspace (fuzz_workspace) with a/b/c, a file f and symlinks:
 * esc -> ../outside, a/abs -> /etc, a/up -> ../.., a/in -> b,
 * a/b/loop -> ../b. */
static void
prepare(void)
{
	int fd;

	wsfd = fuzz_workspace(ws, sizeof(ws));
	ws_len = strlen(ws);
	if (mkdirat(wsfd, "a", 0700) < 0 || mkdirat(wsfd, "a/b", 0700) < 0 ||
	    mkdirat(wsfd, "a/b/c", 0700) < 0 ||
	    symlinkat("../outside", wsfd, "esc") < 0 ||
	    symlinkat("/etc", wsfd, "a/abs") < 0 ||
	    symlinkat("../..", wsfd, "a/up") < 0 ||
	    symlinkat("b", wsfd, "a/in") < 0 ||
	    symlinkat("../b", wsfd, "a/b/loop") < 0 ||
	    (fd = openat(wsfd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
		fuzz_fail("preparing the workspace: %s", strerror(errno));
	close(fd);
}

/* Aborts unless FD (taken: closed) is the workspace or beneath it and,
 * when EXACT, is WS/PATH itself: no symbolic link was followed. */
static void
check_beneath(int fd, const char *path, const char *how, bool exact)
{
	char link[64], real[4096];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	close(fd);
	if (n < 0)
		fuzz_fail("readlink %s: %s", link, strerror(errno));
	real[n] = '\0';
	if ((size_t)n < ws_len || memcmp(real, ws, ws_len) != 0 ||
	    (real[ws_len] != '\0' && real[ws_len] != '/'))
		fuzz_fail("accepted path \"%s\" opened with %s resolves to "
			  "%s, outside the workspace %s",
		    path, how, real, ws);
	if (exact &&
	    (real[ws_len] != '/' || strcmp(real + ws_len + 1, path) != 0))
		fuzz_fail("accepted path \"%s\" opened with %s resolves to "
			  "%s: a symbolic link was followed",
		    path, how, real);
}

/* The rules of wspath.h, read independently of wspath.c. */
static bool
reference_ok(const char *p, size_t len, size_t max_path, unsigned max_depth)
{
	size_t start = 0;
	unsigned depth = 0;

	if (len == 0 || len > max_path || memchr(p, '\0', len) != NULL ||
	    p[0] == '/' || p[len - 1] == '/')
		return false;
	while (start < len) {
		const char *slash = memchr(p + start, '/', len - start);
		size_t end = slash ? (size_t)(slash - p) : len;
		size_t n = end - start;

		if (n == 0 || n > 255 || (n == 1 && p[start] == '.') ||
		    (n == 2 && p[start] == '.' && p[start + 1] == '.'))
			return false;
		if (++depth > max_depth)
			return false;
		start = end + 1;
	}
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct wspath_limits lims[] = {
	    {0, 0},
	    {16, 2},
	    {4096, 256},
	    {100, 3},
	    {1, 1},
	    {300, 64},
	};
	const struct wspath_limits *lim;
	size_t max_path, len, off;
	unsigned max_depth;
	enum wspath_rule why;
	char *path, parent[WSPATH_MAX_PATH + 1];
	bool ok;

	if (wsfd < 0)
		prepare();
	if (size < 1)
		return 0;
	/* Control byte: the limits (NULL: wspath.h's defaults). */
	lim = data[0] % 7 == 6 ? NULL : &lims[data[0] % 7];
	max_path = lim && lim->max_path ? lim->max_path : WSPATH_MAX_PATH;
	max_depth = lim && lim->max_depth ? lim->max_depth : WSPATH_MAX_DEPTH;
	len = size - 1;
	/* A NUL-terminated copy, exactly LEN + 1 bytes, for ASan. */
	if ((path = malloc(len + 1)) == NULL)
		return 0;
	memcpy(path, data + 1, len);
	path[len] = '\0';

	why = wspath_why(path, len, lim);
	ok = why == WSPATH_OK;
	FUZZ_ASSERT((wspath_check(path, len, lim) == 0) == ok);
	FUZZ_ASSERT(wspath_rule_text(why) != NULL);
	if (ok != reference_ok(path, len, max_path, max_depth))
		fuzz_fail("wspath_why says %d (%s) for \"%.*s\" (%zu bytes), "
			  "the rules of wspath.h say %s",
		    (int)why, wspath_rule_text(why), (int)len, path, len,
		    ok ? "refused" : "accepted");
	if (!ok) {
		free(path);
		return 0;
	}

	/* The split of an accepted path. */
	FUZZ_ASSERT(wspath_split(path, len, parent, sizeof(parent), &off) == 0);
	FUZZ_ASSERT(off < len && strchr(path + off, '/') == NULL);
	if (off == 0)
		FUZZ_ASSERT(parent[0] == '\0');
	else
		FUZZ_ASSERT(strlen(parent) == off - 1 &&
		    memcmp(parent, path, off - 1) == 0 && path[off - 1] == '/');

	/* The property: resolution never leaves the workspace. */
	{
		struct open_how how = {
		    .flags = O_PATH | O_CLOEXEC,
		    .resolve = RESOLVE_BENEATH,
		};
		long fd = syscall(SYS_openat2, wsfd, path, &how, sizeof(how));

		if (fd >= 0)
			check_beneath((int)fd, path, "RESOLVE_BENEATH", false);
		how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
		fd = syscall(SYS_openat2, wsfd, path, &how, sizeof(how));
		if (fd >= 0)
			check_beneath((int)fd, path,
			    "RESOLVE_BENEATH and O_NOFOLLOW", false);
		/* The broker's flags refuse every symbolic link
		 * (RESOLVE_NO_SYMLINKS): what opens is the path itself. */
		if ((fd = fsapi_openat2(wsfd, path, O_PATH, 0)) >= 0)
			check_beneath((int)fd, path, "fsapi_openat2", true);
	}
	free(path);
	return 0;
}
