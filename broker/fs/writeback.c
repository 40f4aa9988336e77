/*
 * writeback.c: the firewall on what a job writes back (writeback.h). The
 * patterns are the policy language's (policy/policy_wbpattern.c); what is
 * here is the rule order and the "drivers" qualifier, which reads the new
 * content of a gitattributes(5) file from the stage.
 */
#include "writeback.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsapi.h"
#include "fsapi_internal.h"

/* A blank of gitattributes(5) (git's attr.c splits at these), or NUL,
 * which ends a line for git: splitting there too only reads more. */
static bool
is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0' ||
	    c == '\v' || c == '\f';
}

/* Whether the word W (N bytes) assigns a driver: "filter=", "diff=" or
 * "merge=" and a value, after an optional "-" or "!", in either case. */
static bool
word_assigns(const char *w, size_t n)
{
	static const char *const keys[] = {"filter=", "diff=", "merge="};

	if (n > 0 && (w[0] == '-' || w[0] == '!')) {
		w++;
		n--;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		size_t k = strlen(keys[i]);

		if (n > k && strncasecmp(w, keys[i], k) == 0)
			return true;
	}
	return false;
}

/* Whether the line [S, E) (no newline) assigns a driver: not a comment,
 * and a word of it does. */
static bool
line_assigns(const char *s, const char *e)
{
	const char *w;

	while (s < e && is_sep(*s))
		s++;
	if (s < e && *s == '#')
		return false;
	while (s < e) {
		for (w = s; s < e && !is_sep(*s); s++)
			;
		if (word_assigns(w, (size_t)(s - w)))
			return true;
		while (s < e && is_sep(*s))
			s++;
	}
	return false;
}

/* Whether the gitattributes(5) text BUF (LEN bytes) assigns a driver. */
static bool
text_assigns(const char *buf, size_t len)
{
	const char *s = buf, *e = buf + len, *nl;

	/* git skips a UTF-8 byte order mark (attr.c). */
	if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	for (; s < e; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(e - s));
		if (nl == NULL)
			nl = e;
		if (line_assigns(s, nl))
			return true;
	}
	return false;
}

/* Reads at most MAX bytes of FD into BUF; the count, or -1 on error. */
static ssize_t
read_most(int fd, char *buf, size_t max)
{
	size_t got = 0;

	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The regular file PATH below STAGE_UPPER in STAGE (NULL: none), opened
 * for reading through stage_open_at, with one link: a descriptor or -1. */
static int
open_upper_file(const struct stage_ref *stage, const char *path)
{
	enum fs_error why;
	const char *name;
	struct stat st;
	int upper, dirfd, fd = -1;

	if (stage == NULL || stage->fd < 0)
		return -1;
	upper = fsapi_openat2(stage->fd, STAGE_UPPER, O_PATH | O_DIRECTORY, 0);
	if (upper < 0)
		return -1;
	dirfd = fsapi_open_parent(upper, path, NULL, &name, &why);
	close(upper);
	if (dirfd < 0)
		return -1;
	fd = stage_open_at(stage, dirfd, name, false);
	close(dirfd);
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_nlink != 1)) {
		close(fd);
		fd = -1;
	}
	return fd < 0 ? -1 : fd;
}

/* Whether the regular file PATH of STAGE assigns a driver; true when it
 * cannot be read whole within WRITEBACK_READ_MAX. */
static bool
file_assigns(const struct stage_ref *stage, const char *path)
{
	int fd = open_upper_file(stage, path);
	ssize_t n = -1;
	char *buf;

	if (fd < 0)
		return true;
	buf = malloc(WRITEBACK_READ_MAX + 1);
	if (buf != NULL)
		n = read_most(fd, buf, WRITEBACK_READ_MAX + 1);
	close(fd);
	if (n < 0 || (size_t)n > WRITEBACK_READ_MAX) {
		free(buf);
		return true;
	}
	bool yes = text_assigns(buf, (size_t)n);
	free(buf);
	return yes;
}

/* Whether the change C may assign a driver (writeback.h). */
static bool
change_assigns(const struct change *c, const struct stage_ref *stage)
{
	if (c->kind == CHANGE_DELETED || c->entry->type == FS_T_DIR)
		return false;
	if (c->entry->type != FS_T_FILE)
		return true;
	return file_assigns(stage, c->entry->path);
}

const struct wb_rule *
writeback_match(const struct wb_policy *wb, const struct change *c,
    const struct stage_ref *stage)
{
	for (size_t i = 0; i < wb->n; i++) {
		const struct wb_rule *r = &wb->rules[i];

		if (!writeback_pattern_match(r->pattern, c->entry->path))
			continue;
		if (r->drivers && !change_assigns(c, stage))
			continue;
		return r;
	}
	return NULL;
}
