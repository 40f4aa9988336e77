/*
 * fstest.h: the fixture of the file API tests (test_fsapi.c, test_rpc.c,
 * test_snapshot.c): a fresh workspace directory the test plants a hostile
 * tree in, and a directory outside it holding a canary file that nothing
 * the API does may read, change or list.
 *
 * A test suite calls fstest_setup() from its .init and fstest_teardown()
 * from its .fini. Criterion runs each test in its own worker process, so
 * the state below is one test's, and the globals are that process's.
 */
#ifndef STOCKADE_TEST_FSTEST_H
#define STOCKADE_TEST_FSTEST_H

#include <stdbool.h>
#include <stddef.h>

#define CANARY_TEXT "CANARY-SECRET-DO-NOT-LEAK\n"

/* The workspace ("$TMPDIR/TAG-ws-XXXXXX", $TMPDIR defaulting to /tmp),
 * the directory outside it ("$TMPDIR/TAG-out-XXXXXX"), the canary
 * ("OUTSIDE/canary", "" when the setup made none) and ROOT, the
 * workspace opened O_RDONLY | O_DIRECTORY (-1 before setup). */
extern char ws[64], outside[64], canary[128];
extern int root;

/*
 * Makes the two directories (mkdtemp) for the test named TAG and opens
 * ROOT; with CANARY, also the canary file (mode 0644, CANARY_TEXT) and
 * remembers its stat for fstest_assert_canary_intact. Asserts on failure.
 */
void fstest_setup(const char *tag, bool with_canary);

/* Closes ROOT and removes both directories with all they hold. */
void fstest_teardown(void);

/*
 * Asserts that the canary is as fstest_setup left it: same inode, size,
 * mtime (to the nanosecond) and content, and that OUTSIDE holds no
 * directory (its link count is still 2).
 */
void fstest_assert_canary_intact(void);

/* Makes (or truncates) the file PATH beneath DIRFD holding TEXT, mode
 * 0644; fstest_mkfile beneath ROOT. Asserts on failure. */
void fstest_mkfile_at(int dirfd, const char *path, const char *text);
void fstest_mkfile(const char *path, const char *text);

/* Makes the directory PATH beneath ROOT, mode 0755. Asserts on failure. */
void fstest_mkdir(const char *path);

/*
 * Makes LEVELS nested directories of 250-byte names beneath ROOT and
 * writes their path into PATH (SIZE bytes); then N names in the deepest
 * one, "00000", "00001"..., hard links to one empty file (names are what
 * the bounds under test count, and a link is cheaper than an inode).
 * Returns the length of PATH. Asserts on failure.
 */
size_t fstest_long_path_links(unsigned levels, size_t n, char *path,
    size_t size);

#define FSTEST_NOBODY 65534

/* Gives PATH and everything below it to FSTEST_NOBODY (lchown: links
 * themselves, never their targets). Needs root. Asserts on failure. */
void fstest_give(const char *path);

/*
 * Runs FN, which returns 0 or the line of the check that failed, as a
 * user whom modes deny: when the test runs as root (whom they never
 * deny), in a child that drops to FSTEST_NOBODY for good with setresuid
 * on a workspace given to FSTEST_NOBODY first (ROOT stays open across
 * the fork); else here, as the test user who owns the workspace.
 * Asserts that FN returned 0.
 */
void fstest_as_nobody(int (*fn)(void));

/* fstest_as_nobody without giving the workspace away first: what FN
 * needs is the test's to give (fstest_give). */
void fstest_run_as_nobody(int (*fn)(void));

/* For FN above: returns the line when C is false. */
#define FSTEST_CHECK(c)                  \
	do {                             \
		if (!(c))                \
			return __LINE__; \
	} while (0)

#endif
