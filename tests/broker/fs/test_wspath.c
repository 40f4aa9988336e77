/*
 * test_wspath.c: the workspace path rules (broker/fs/wspath.h) and the
 * error names (broker/fs/fserr.h), each rule with its exact answer and
 * boundaries.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "fserr.h"
#include "wspath.h"

static void
expect(const char *path, size_t len, enum wspath_rule rule)
{
	cr_assert_eq(wspath_why(path, len, NULL), rule, "\"%.*s\": rule %d",
	    (int)(len > 80 ? 80 : len), path, (int)wspath_why(path, len, NULL));
	cr_assert_eq(wspath_check(path, len, NULL),
	    rule == WSPATH_OK ? 0 : -EINVAL);
}

#define EXPECT(s, rule) expect((s), strlen(s), (rule))

Test(wspath, valid)
{
	EXPECT("a", WSPATH_OK);
	EXPECT("a/b/c.txt", WSPATH_OK);
	EXPECT(".hidden/..x/...", WSPATH_OK);
	EXPECT("a b/\n/\x1b[31m", WSPATH_OK);
}

Test(wspath, embedded_nul_within_len)
{
	expect("a\0b", 3, WSPATH_NUL);
	expect("ab\0", 3, WSPATH_NUL);
	expect("\0", 1, WSPATH_NUL);
	/* The NUL after LEN is not part of the path. */
	expect("ab\0", 2, WSPATH_OK);
}

Test(wspath, empty_and_absolute)
{
	expect("", 0, WSPATH_EMPTY);
	EXPECT("/", WSPATH_ABSOLUTE);
	EXPECT("/etc/passwd", WSPATH_ABSOLUTE);
}

Test(wspath, empty_component_and_trailing_slash)
{
	EXPECT("a//b", WSPATH_EMPTY_COMPONENT);
	EXPECT("a/", WSPATH_TRAILING_SLASH);
	EXPECT("a/b//", WSPATH_EMPTY_COMPONENT);
}

Test(wspath, dot_and_dotdot)
{
	EXPECT(".", WSPATH_DOT);
	EXPECT("a/./b", WSPATH_DOT);
	EXPECT("a/.", WSPATH_DOT);
	EXPECT("..", WSPATH_DOTDOT);
	EXPECT("../a", WSPATH_DOTDOT);
	EXPECT("a/../../etc", WSPATH_DOTDOT);
	EXPECT("a/..", WSPATH_DOTDOT);
}

Test(wspath, component_length_255_256)
{
	char name[300];

	memset(name, 'x', sizeof(name));
	expect(name, 255, WSPATH_OK);
	expect(name, 256, WSPATH_NAME_TOO_LONG);
	name[0] = 'a';
	name[1] = '/';
	expect(name, 257, WSPATH_OK);
	expect(name, 258, WSPATH_NAME_TOO_LONG);
}

Test(wspath, total_length_4096_4097)
{
	static char p[5000];
	size_t i;

	/* "xxx...x/" components of 100 bytes: depth stays below 64. */
	memset(p, 'x', sizeof(p));
	for (i = 100; i < sizeof(p); i += 101)
		p[i] = '/';
	cr_assert_neq(p[4095], '/');
	cr_assert_neq(p[4096], '/');
	expect(p, 4096, WSPATH_OK);
	expect(p, 4097, WSPATH_TOO_LONG);
}

Test(wspath, depth_64_65)
{
	static char p[200];
	size_t i;

	for (i = 0; i < 65; i++) {
		p[2 * i] = 'd';
		p[2 * i + 1] = '/';
	}
	expect(p, 2 * 64 - 1, WSPATH_OK);
	expect(p, 2 * 65 - 1, WSPATH_TOO_DEEP);
}

Test(wspath, limits_override)
{
	struct wspath_limits lim = {.max_path = 5, .max_depth = 2};

	cr_assert_eq(wspath_why("a/b", 3, &lim), WSPATH_OK);
	cr_assert_eq(wspath_why("a/b/c", 5, &lim), WSPATH_TOO_DEEP);
	cr_assert_eq(wspath_why("abcdef", 6, &lim), WSPATH_TOO_LONG);
	cr_assert_eq(wspath_check("abcdef", 6, &lim), -EINVAL);
}

Test(wspath, split)
{
	char parent[16];
	size_t off;

	cr_assert_eq(wspath_split("a/b/c", 5, parent, sizeof(parent), &off), 0);
	cr_assert_str_eq(parent, "a/b");
	cr_assert_eq(off, 4);
	cr_assert_eq(wspath_split("name", 4, parent, sizeof(parent), &off), 0);
	cr_assert_str_eq(parent, "");
	cr_assert_eq(off, 0);
	cr_assert_eq(wspath_split("abcd/e", 6, parent, 4, &off), -ENAMETOOLONG);
}

Test(fserr, names_are_stable)
{
	static const char *const want[] = {
	    "ok",
	    "escapes_workspace",
	    "symlink_refused",
	    "not_regular_file",
	    "hardlinked_file",
	    "too_large",
	    "quota_exceeded",
	    "not_found",
	    "exists",
	    "invalid_path",
	    "io_error",
	    "not_a_directory",
	    "is_a_directory",
	    "not_empty",
	};
	unsigned i;

	cr_assert_eq(sizeof(want) / sizeof(want[0]), FS_ERROR_MAX + 1);
	for (i = 0; i <= FS_ERROR_MAX; i++) {
		cr_assert_str_eq(fs_error_name((enum fs_error)i), want[i]);
		cr_assert_not_null(fs_error_text((enum fs_error)i));
	}
	cr_assert_str_eq(fs_error_name((enum fs_error)99), "io_error");
}

Test(fserr, from_errno)
{
	cr_assert_eq(fs_error_from_errno(ELOOP), FS_SYMLINK_REFUSED);
	cr_assert_eq(fs_error_from_errno(EXDEV), FS_ESCAPES_WORKSPACE);
	cr_assert_eq(fs_error_from_errno(ENOENT), FS_NOT_FOUND);
	cr_assert_eq(fs_error_from_errno(EEXIST), FS_EXISTS);
	cr_assert_eq(fs_error_from_errno(EFBIG), FS_TOO_LARGE);
	cr_assert_eq(fs_error_from_errno(E2BIG), FS_TOO_LARGE);
	cr_assert_eq(fs_error_from_errno(EDQUOT), FS_QUOTA_EXCEEDED);
	cr_assert_eq(fs_error_from_errno(ENOSPC), FS_QUOTA_EXCEEDED);
	cr_assert_eq(fs_error_from_errno(ENOTDIR), FS_NOT_A_DIRECTORY);
	cr_assert_eq(fs_error_from_errno(EISDIR), FS_IS_A_DIRECTORY);
	cr_assert_eq(fs_error_from_errno(ENOTEMPTY), FS_NOT_EMPTY);
	cr_assert_eq(fs_error_from_errno(EACCES), FS_IO_ERROR);
	cr_assert_eq(fs_error_from_errno(EIO), FS_IO_ERROR);
}
