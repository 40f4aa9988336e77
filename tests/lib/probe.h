/*
 * probe.h: a child that confines itself and reports what it saw, for the
 * tests of a process's own confinement (test_confine.c,
 * test_confine_spawner.c, test_launcher_confine.c,
 * test_launcher_confine_host.c).
 *
 * Confinement cannot be undone, so each test forks a child that confines
 * itself and reports through a pipe: one line per failed check ("FAIL
 * file:line", then the message), notes, then "DONE". The parent turns
 * those lines into assertions: Criterion's own assertions must not run
 * in a process it did not make.
 *
 * Each check tells "allowed" from "filtered" by the errno (style.md rule
 * 21): Landlock answers EACCES, a seccomp filter EPERM or ENOSYS, and an
 * allowed call succeeds.
 */
#ifndef STOCKADE_TEST_PROBE_H
#define STOCKADE_TEST_PROBE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>

/* In the child: the write end of the pipe to the parent, and how many
 * checks failed so far. -1 and 0 in the parent. */
extern int probe_fd;
extern int probe_failures;

/* In the child: writes one line, FMT and its arguments, to the parent
 * (at most 1022 bytes of it, then a newline). A write that fails ends
 * the child (_exit 99): the parent sees no "DONE". */
void probe_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* In the child: when COND is false, counts a failure and reports where
 * and the printf-style message. */
#define CHECK(cond, ...)                                               \
	do {                                                           \
		if (!(cond)) {                                         \
			probe_failures++;                              \
			probe_say("FAIL (%s:%d)", __FILE__, __LINE__); \
			probe_say(__VA_ARGS__);                        \
		}                                                      \
	} while (0)

/* In the child: CALL must fail (-1) with errno WANT. */
#define EXPECT_ERRNO(call, want)                                               \
	do {                                                                   \
		long r_;                                                       \
		errno = 0;                                                     \
		r_ = (long)(call);                                             \
		CHECK(r_ == -1 && errno == (want),                             \
		    "%s gave %ld (%s), wanted %s", #call, r_, strerror(errno), \
		    strerror(want));                                           \
	} while (0)

/* In the child: CALL must succeed (a result >= 0). */
#define EXPECT_OK(call)                                                  \
	do {                                                             \
		long r_;                                                 \
		errno = 0;                                               \
		r_ = (long)(call);                                       \
		CHECK(r_ >= 0, "%s failed: %s", #call, strerror(errno)); \
	} while (0)

struct probe_out {
	int status; /* the child's wait status */
	char text[16384]; /* everything it said, NUL-terminated */
};

/*
 * In the test: forks a child that runs FN(ARG) with probe_fd set, then
 * says "DONE" and exits 0 (1 if a check failed); FN may also end the
 * child itself. Returns the child's pid, and in *FD the read end of its
 * pipe (close-on-exec; the caller closes it). Asserts that pipe and fork
 * succeed.
 */
pid_t probe_start(void (*fn)(void *), void *arg, int *fd);

/*
 * In the test: appends what the child says on FD to TEXT (SIZE bytes,
 * kept NUL-terminated, *LEN bytes in it so far) until end of file, or,
 * when UNTIL is not NULL, until TEXT holds UNTIL. Returns false when
 * the child said nothing for 60 s, true otherwise.
 */
bool probe_read(int fd, char *text, size_t size, size_t *len,
    const char *until);

/*
 * In the test: probe_start, then collects into OUT all the child says
 * until it closes its pipe, and reaps it; a child silent for 60 s is
 * killed (SIGKILL).
 */
void probe_run(void (*fn)(void *), void *arg, struct probe_out *out);

/* In the test: asserts that the child of OUT exited 0 after "DONE" (it
 * ran to its end with no failed check); its text is the message. */
void probe_assert_ok(const struct probe_out *out);

/*
 * In the child: checks the confined process's /proc status text ST: a
 * seccomp filter (Seccomp: 2), no_new_privs, empty inheritable and
 * ambient sets; when its effective uid is 0, exactly KEPT (a mask of
 * 1 << CAP_*) in the permitted and effective sets and an empty bounding
 * set; else nothing permitted or effective (an ordinary user's bounding
 * set cannot be emptied: that needs CAP_SETPCAP).
 */
void probe_check_confined(const char *st, unsigned long long kept);

/* A kernel without Landlock, as landlock_create_ruleset(2) tells it. */
struct probe_no_landlock {
	int answer; /* ENOSYS: not built in; EOPNOTSUPP: built in, not
			   * enabled at boot */
	const char *want; /* the phrase the refusal says it with */
};

/*
 * In the test: for each kind of kernel without Landlock, runs FN(K) in
 * a probe_run child whose seccomp filter (its only one, no_new_privs
 * set) makes landlock_create_ruleset answer K->answer, and asserts that
 * the child ran ok.
 */
void probe_run_without_landlock(void (*fn)(const struct probe_no_landlock *));

/*
 * In the child of probe_run_without_landlock: checks that a confine call
 * that gave E and the message ERR refused with the fix
 * (shared/confine_util.h, cf_landlock_apply): -EOPNOTSUPP, "lsm=",
 * "CONFIG_SECURITY_LANDLOCK=y", "the WHO does not run unconfined" and
 * K's phrase; and refused before a filter of its own was loaded.
 */
void probe_check_refusal(const struct probe_no_landlock *k, int e,
    const char *err, const char *who);

/* The number after FIELD (say "\nSeccomp:") in the /proc status text
 * ST; -1 when FIELD is not there. */
long probe_status_field(const char *st, const char *field);

/* The same in the calling process's /proc/self/status; -1 when it
 * cannot be read. */
long probe_status_field_self(const char *field);

/* The kernel's Landlock ABI (landlock_create_ruleset(2), VERSION), or
 * -1 with errno set when it has none. */
int probe_landlock_abi(void);

/* In the test: skips it (harness_skip) when the kernel has no Landlock.
 * Returns false then (the caller returns), true otherwise. */
bool probe_need_landlock(void);

#endif
