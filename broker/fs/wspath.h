/*
 * wspath.h: workspace-relative paths checked as strings (style.md rule 7),
 * before any of them reaches openat2 (docs/architecture.md, "The host file
 * API"). Pure: no system call, so it is unit-tested and fuzzable.
 */
#ifndef STOCKADE_WSPATH_H
#define STOCKADE_WSPATH_H

#include <stddef.h>

#define WSPATH_MAX_PATH 4096 /* default bound on the whole path, bytes */
#define WSPATH_MAX_DEPTH 64 /* default bound on the number of components */
#define WSPATH_MAX_NAME 255 /* NAME_MAX: bound on one component, bytes */

struct wspath_limits {
	size_t max_path; /* bytes, without a terminating NUL; 0: default */
	unsigned max_depth; /* components; 0: default */
};

/* Which rule a path breaks; every one of them is the error invalid_path. */
enum wspath_rule {
	WSPATH_OK = 0,
	WSPATH_NUL, /* a NUL byte within LEN */
	WSPATH_EMPTY, /* LEN is 0 */
	WSPATH_TOO_LONG, /* LEN > max_path */
	WSPATH_ABSOLUTE, /* starts with '/' */
	WSPATH_EMPTY_COMPONENT, /* "a//b" */
	WSPATH_DOT, /* a "." component */
	WSPATH_DOTDOT, /* a ".." component */
	WSPATH_TRAILING_SLASH, /* "a/" */
	WSPATH_NAME_TOO_LONG, /* a component longer than WSPATH_MAX_NAME */
	WSPATH_TOO_DEEP, /* more than max_depth components */
};

/*
 * The rule PATH (LEN bytes, need not be NUL-terminated) breaks, in the
 * order listed in enum wspath_rule, or WSPATH_OK. LIM may be NULL (the
 * defaults above).
 *
 * The rules, and why:
 *  - no NUL within LEN: the string the client declared is the string the
 *    kernel sees (a NUL would cut it short);
 *  - not empty, not absolute: every path is relative to the workspace;
 *  - no empty, "." or ".." component and no trailing slash: one spelling
 *    per file, and nothing climbs (openat2 RESOLVE_BENEATH refuses ".."
 *    escapes too; this refuses them before any lookup, with a clearer
 *    error);
 *  - at most max_path bytes, components of at most 255 bytes (NAME_MAX),
 *    at most max_depth components: the quotas of the host file API.
 */
enum wspath_rule wspath_why(const char *path, size_t len,
    const struct wspath_limits *lim);

/* 0 when PATH passes every rule of wspath_why, else -EINVAL. */
int wspath_check(const char *path, size_t len, const struct wspath_limits *lim);

/* A short English sentence for RULE (static storage), for messages. */
const char *wspath_rule_text(enum wspath_rule rule);

/*
 * Splits a path that passed wspath_check into its parent directory and
 * its last component: PARENT (PARENT_SIZE bytes) gets the NUL-terminated
 * prefix before the last '/', or "" when there is none (the workspace
 * itself); *NAME_OFF gets the offset of the last component in PATH.
 * Returns 0, or -ENAMETOOLONG when PARENT is too small.
 */
int wspath_split(const char *path, size_t len, char *parent, size_t parent_size,
    size_t *name_off);

/* The number of components of PATH (NUL-terminated, a path wspath_check
 * accepted): 1 plus its slashes. */
unsigned wspath_depth(const char *path);

#endif
