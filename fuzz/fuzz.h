/*
 * fuzz.h: what the fuzzers of fuzz/ share (fuzz/README.md).
 *
 * Each fuzzer is one file defining LLVMFuzzerTestOneInput, libFuzzer's
 * entry point (llvm.org/docs/LibFuzzer.html). Built with -Dfuzzing=true
 * it is linked with -fsanitize=fuzzer; otherwise with replay.c, which
 * runs it on every file of its committed corpus (a meson test). A
 * fuzzer reports a broken property with fuzz_fail, which abort()s: the
 * crash libFuzzer records and the replayer's test fails on.
 */
#ifndef STOCKADE_FUZZ_H
#define STOCKADE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry point: DATA (SIZE bytes, borrowed) is one input.
 * Returns 0 (libFuzzer reserves other values). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz: property broken: FMT" to stderr and aborts. */
_Noreturn void fuzz_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* fuzz_fail with the expression's text unless COND holds. */
#define FUZZ_ASSERT(cond)                                                  \
	do {                                                               \
		if (!(cond))                                               \
			fuzz_fail("%s:%d: %s", __FILE__, __LINE__, #cond); \
	} while (0)

/*
 * A new empty directory under $TMPDIR (else /tmp), removed with all its
 * contents at exit. Returns a descriptor of it (O_RDONLY | O_DIRECTORY,
 * close-on-exec) that the process keeps; PATH (SIZE bytes) gets its path.
 * Aborts on failure: a fuzzer cannot run without it.
 */
int fuzz_tmpdir(char *path, size_t size);

/*
 * Removes everything inside the directory DIRFD (borrowed), whatever
 * the modes a request gave its entries, leaving it empty; puts the
 * directory's own mode back to 0700. Aborts when something remains: the
 * next input must start from the same empty workspace.
 */
void fuzz_empty_dir(int dirfd);

/*
 * The workspace of a fuzzer that touches files: TOP/ws, an empty
 * directory, beside TOP/outside holding one empty file "secret"
 * (fuzz_tmpdir's TOP). Made once; returns the workspace's descriptor
 * (O_RDONLY | O_DIRECTORY), which the process keeps, and its real path
 * in WS (SIZE bytes) when WS is not NULL.
 */
int fuzz_workspace(char *ws, size_t size);

struct policy;

/*
 * What the rpc and mcp fuzzers' sessions start from: log lines below
 * errors silenced, *POL (the caller's) filled with the embedded default
 * policy, and fuzz_workspace's descriptor returned. Aborts on failure.
 */
int fuzz_session(struct policy *pol);

/* Aborts unless TOP/outside still holds exactly its empty "secret":
 * nothing a request did reached out of the workspace. */
void fuzz_check_outside(void);

/*
 * Calls FN(LINE, LEN, ARG) on every '\n'-separated line of DATA (SIZE
 * bytes; the last line need not end with '\n'), at most MAX of them;
 * empty lines are skipped. LINE points into DATA.
 */
void fuzz_lines(const uint8_t *data, size_t size, size_t max,
    void (*fn)(const char *line, size_t len, void *arg), void *arg);

#endif
