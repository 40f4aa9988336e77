/*
 * harness.h: shared helpers for the jail tests (test_jail.c,
 * test_session.c).
 *
 * Every test calls harness_setup() from its .init and harness_cleanup()
 * from its .fini (Criterion runs each test in its own worker process, so
 * whatever harness_setup changes lasts exactly one test).
 *
 * Environment (set by tests/meson.build):
 *   STOCKADE_BIN           path of build/stockade; stockade-launcher is
 *                          expected beside it.
 *   STOCKADE_TEST_AS_USER  unset, or "65534": run as that unprivileged user.
 *   STOCKADE_MUST_WORK     "1": a test that would skip fails instead
 *                          (style.md rule 23).
 *   STOCKADE_RESULTS_DIR   when set, every JSON result harness_run and
 *                          harness_spawn parse is also written there
 *                          (opened before privileges drop) for the
 *                          result-schema test
 *                          (tests/system/validate_results.py).
 *
 * How the 65534 variant runs, when the test itself runs as root: the two
 * binaries are copied into a fresh mkdtemp("/tmp/stockade-test-XXXXXX")
 * directory (mode 0755, owned by 65534 so that it can remove it again:
 * CI's checkout may not be enterable by other users), then the test
 * process drops its own privileges for good: setgroups(0, NULL),
 * setresgid and setresuid to 65534, PR_SET_DUMPABLE 1 (the credential
 * change made the process non-dumpable, which would leave its /proc files
 * owned by root). Dropping in the process, rather than running each
 * stockade through `setpriv --reuid=65534 ...`, is chosen because
 *   - test_session.c drives the supervisor in-process: the broker side and
 *     the launcher it forks must run unprivileged too, which no wrapper
 *     around an exec can arrange;
 *   - everything on the host side of a test (workspace, canary file, TCP
 *     server, /proc scans for leftovers) then has exactly the
 *     credentials an ordinary user has, so a scan cannot see more than
 *     that user could and a file the test writes belongs to that user;
 *   - there is no root left in the process that could mask a bug (for
 *     instance a launcher that only works because it inherits root's
 *     capabilities).
 * When the test is not root and 65534 is asked for, it runs as the
 * current, already unprivileged, user.
 */
#ifndef STOCKADE_TEST_HARNESS_H
#define STOCKADE_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* What one run of stockade did, seen from outside. */
struct run_out {
	int status; /* exit status (0..255); 128+N if killed by N */
	char *out; /* everything on stdout, NUL-terminated */
	size_t out_len;
	char *err; /* everything on stderr, NUL-terminated */
	size_t err_len;
	long wall_ms; /* spawn to reap, CLOCK_MONOTONIC, milliseconds */
	json_t *json; /* stdout parsed, when argv had --json; else NULL */
};

/*
 * Reads the environment above, drops privileges when asked (see the top of
 * this file) and checks that user namespaces can be created: if not, skips
 * the test with the reason, or fails with it under STOCKADE_MUST_WORK=1.
 */
void harness_setup(void);

/* Removes every temporary directory the harness made (rm -rf). */
void harness_cleanup(void);

/* Skips the test with REASON, or fails it under STOCKADE_MUST_WORK=1. */
void harness_skip(const char *reason);

/* Paths of the stockade and stockade-launcher binaries the test runs. */
const char *harness_stockade(void);
const char *harness_launcher(void);

/*
 * Path of the helper program NAME built in tests/ (tests/meson.build:
 * fake-launcher-silent, fake-launcher-hang, with-enosys), beside
 * STOCKADE_BIN in its tests/ directory; in the 65534 variant run as root,
 * the copy made with the two binaries. Asserts it is executable. The
 * string is overwritten by the next call.
 */
const char *harness_helper(const char *name);

/* True when the test process now runs as an unprivileged user (65534). */
bool harness_unprivileged(void);

/*
 * Runs stockade with ARGV (its arguments after the program name, ending
 * with NULL, e.g. {"run", "--json", "--", "true", NULL}), stdin from
 * /dev/null, the test's environment, stdout and stderr captured in full.
 * Returns OUT->status. A stockade that has not exited after 30 s is
 * killed and the test fails. Free OUT with run_out_free.
 */
int harness_run(const char *const argv[], struct run_out *out);
void run_out_free(struct run_out *out);

/* harness_run with the arguments written inline: RUN(&o, "run", "--", "true"). */
#define RUN(o, ...)                                              \
	do {                                                     \
		const char *const argv_[] = {__VA_ARGS__, NULL}; \
		harness_run(argv_, (o));                         \
	} while (0)

/*
 * As harness_run, for any program: FULL is its whole argv (FULL[0] looked
 * up in $PATH), ending with NULL. OUT->json is parsed when "--json" is
 * one of the arguments.
 */
int harness_spawn(const char *const full[], struct run_out *out);

/*
 * Makes a fresh workspace directory (mode 0700), removed by
 * harness_cleanup, owned by harness_workspace_owner(): the user that runs
 * stockade, or PROTO_ROOT_PAYLOAD_ID when that is root (a root broker
 * refuses a root-owned workspace). Returns its path (owned by the harness).
 */
const char *harness_workspace(void);
uid_t harness_workspace_owner(void);

/*
 * Makes a fresh temporary directory for the test's own use, outside every
 * workspace, removed by harness_cleanup. Returns its path.
 */
const char *harness_tmpdir(const char *prefix);

/* Fills BUF (SIZE bytes) with SIZE - 1 random lowercase hex digits. */
void harness_random_hex(char *buf, size_t size);
/* The same with decimal digits. */
void harness_random_digits(char *buf, size_t size);

/*
 * Number of processes on the host whose /proc/PID/cmdline contains
 * MARKER, polling for up to WAIT_MS until it is 0. Fills PIDS (up to
 * NPIDS) with those still found. Processes the test cannot read are
 * skipped (cmdline is world-readable without hidepid).
 */
int harness_count_marked(const char *marker, int wait_ms, pid_t *pids,
    size_t npids);

/* Reads the whole file PATH into a NUL-terminated string; NULL on error
 * (errno set). *LEN gets its length when LEN is not NULL. */
char *harness_read_file(const char *path, size_t *len);

/* Writes DATA to PATH (created 0644, truncated); asserts success. */
void harness_write_file(const char *path, const char *data);

/* Milliseconds of CLOCK_MONOTONIC. */
long harness_now_ms(void);

/* The state letter (/proc/PID/stat's third field: R, S, D, Z...) and the
 * CPU time, utime + stime in clock ticks, of process PID; asserts it can
 * read them. */
void harness_proc_ticks(pid_t pid, char *state, unsigned long long *ticks);

#endif
