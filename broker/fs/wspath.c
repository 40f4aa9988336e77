/* wspath.c: workspace-relative path rules (wspath.h). Pure. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "wspath.h"

enum wspath_rule
wspath_why(const char *path, size_t len, const struct wspath_limits *lim)
{
	size_t max_path = WSPATH_MAX_PATH, start, i;
	unsigned max_depth = WSPATH_MAX_DEPTH, depth = 0;
	bool too_deep;

	if (lim != NULL && lim->max_path != 0)
		max_path = lim->max_path;
	if (lim != NULL && lim->max_depth != 0)
		max_depth = lim->max_depth;
	if (len > 0 && memchr(path, '\0', len) != NULL)
		return WSPATH_NUL;
	if (len == 0)
		return WSPATH_EMPTY;
	if (len > max_path)
		return WSPATH_TOO_LONG;
	if (path[0] == '/')
		return WSPATH_ABSOLUTE;
	for (start = 0; start <= len; start = i + 1) {
		size_t n;

		for (i = start; i < len && path[i] != '/'; i++)
			;
		n = i - start;
		if (n == 0)
			return i == len ? WSPATH_TRAILING_SLASH
					: WSPATH_EMPTY_COMPONENT;
		if (n == 1 && path[start] == '.')
			return WSPATH_DOT;
		if (n == 2 && path[start] == '.' && path[start + 1] == '.')
			return WSPATH_DOTDOT;
		if (n > WSPATH_MAX_NAME)
			return WSPATH_NAME_TOO_LONG;
		/* DEPTH counts the components so far, this one included. */
		too_deep = ++depth > max_depth;
		if (too_deep)
			return WSPATH_TOO_DEEP;
	}
	return WSPATH_OK;
}

int
wspath_check(const char *path, size_t len, const struct wspath_limits *lim)
{
	return wspath_why(path, len, lim) == WSPATH_OK ? 0 : -EINVAL;
}

const char *
wspath_rule_text(enum wspath_rule rule)
{
	switch (rule) {
	case WSPATH_OK:
		return "the path is valid";
	case WSPATH_NUL:
		return "the path contains a NUL byte";
	case WSPATH_EMPTY:
		return "the path is empty";
	case WSPATH_TOO_LONG:
		return "the path is too long";
	case WSPATH_ABSOLUTE:
		return "the path must be relative to the workspace";
	case WSPATH_EMPTY_COMPONENT:
		return "the path has an empty component (\"//\")";
	case WSPATH_DOT:
		return "the path has a \".\" component";
	case WSPATH_DOTDOT:
		return "the path has a \"..\" component";
	case WSPATH_TRAILING_SLASH:
		return "the path ends with \"/\"";
	case WSPATH_NAME_TOO_LONG:
		return "a component of the path is longer than 255 bytes";
	case WSPATH_TOO_DEEP:
		return "the path has too many components";
	}
	return "the path is invalid";
}

int
wspath_split(const char *path, size_t len, char *parent, size_t parent_size,
    size_t *name_off)
{
	size_t slash = len;

	while (slash > 0 && path[slash - 1] != '/')
		slash--;
	/* PATH[slash - 1] is the last '/', or slash is 0. */
	if (parent_size == 0 || (slash > 0 && slash - 1 >= parent_size))
		return -ENAMETOOLONG;
	if (slash > 0)
		memcpy(parent, path, slash - 1);
	parent[slash > 0 ? slash - 1 : 0] = '\0';
	*name_off = slash;
	return 0;
}

unsigned
wspath_depth(const char *path)
{
	unsigned n = 1;

	for (; *path != '\0'; path++)
		n += *path == '/';
	return n;
}
