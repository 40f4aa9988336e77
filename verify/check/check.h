/*
 * check.h: `stockade check` (issue 7, docs/check.md), the checks a
 * deployer runs against an installed stockade on one host.
 *
 * Each check is a real job or a real request (an attack or an
 * observation) with an expected outcome: it runs the stockade under test
 * (a separate process, `stockade run --json ...` and the file commands,
 * or, for the launcher boundary, the launcher itself over its socket),
 * looks at what came back, and says PASS, FAIL or SKIP with what it
 * observed. Inside the jail the observations are made by stockade-probe
 * (verify/probe/), a static program each job is given with --put.
 *
 * A check's name is "LAYER.what_it_observed" (user_ns.setgroups_denied);
 * the layers are check_layers[], in the order they print.
 */
#ifndef STOCKADE_CHECK_H
#define STOCKADE_CHECK_H

#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum check_verdict { CHECK_PASS, CHECK_FAIL, CHECK_SKIP };

#define CHECK_OBSERVED_MAX 512

/* What one check found: the verdict and one line of what it saw. */
struct check_result {
	enum check_verdict verdict;
	char observed[CHECK_OBSERVED_MAX];
};

/* The stockade under test and this run's scratch space. */
struct check_ctx {
	char stockade[4096]; /* the broker binary, absolute */
	char launcher[4096]; /* its stockade-launcher */
	char probe[4096]; /* stockade-probe */
	char tmpdir[4096]; /* this run's directory (mode 0711), removed
			      * at the end */
	bool root; /* euid 0: workspaces are given to 65534 */
	char **envp; /* environment of each process started:
			      * PATH and TMPDIR; NULL-terminated */
	unsigned seq; /* for unique names under tmpdir */
};

typedef void (*check_fn)(struct check_ctx *c, struct check_result *r);

struct check {
	const char *name; /* "LAYER.what_it_observed" */
	const char *layer; /* one of check_layers[] */
	const char *expect; /* what a sound stockade shows, one line */
	check_fn fn;
};

/* The layers, in print order; NULL-terminated. */
extern const char *const check_layers[];

/* The checks of each group, each array ending with a {NULL} entry, in
 * the file of the same name (checks_jail in check_jail.c, ...). They
 * print in the order of check_layers, whatever their group. */
extern const struct check checks_jail[];
extern const struct check checks_process[];
extern const struct check checks_privs[];
extern const struct check checks_seccomp[];
extern const struct check checks_confined[];
extern const struct check checks_fs[];
extern const struct check checks_fs_put[];
extern const struct check checks_fs_tree[];
extern const struct check checks_results[];
extern const struct check checks_policy[];
extern const struct check checks_boundary[];
extern const struct check checks_broker_side[];
extern const struct check checks_egress[];

/* Verdicts with a printf-style observation (truncated to
 * CHECK_OBSERVED_MAX - 1 bytes). */
void check_pass(struct check_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void check_fail(struct check_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void check_skip(struct check_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The signal that interrupted `stockade check` (SIGINT, SIGTERM,
 * SIGHUP), or 0. check_exec kills its process's group when it is set
 * and returns; the checks after it do not run. */
extern volatile sig_atomic_t check_interrupted;

/*
 * What STOCKADE_CHECK_FAKE_KERNEL says of the kernel fact NAME, for the
 * tests of both branches of a check
 * (tests/verify/check/test_check.py): the variable
 * is a comma-separated list of facts, "i386" or "no-i386" (the i386
 * entry) and "landlock-abi=N" (the Landlock ABI). Copies the fact's text
 * ("i386", "no-i386", "5") into BUF (LEN bytes) and returns true when the
 * list names NAME ("i386" for both i386 forms); false otherwise. Read
 * only by the check tooling, never by stockade's product code.
 */
bool check_fake_kernel(const char *name, char *buf, size_t len);

/*
 * The Landlock ABI the checks take this kernel to have: ll_abi()
 * (landlock_create_ruleset's version; a negative errno without Landlock),
 * or the ABI STOCKADE_CHECK_FAKE_KERNEL names ("landlock-abi=N").
 */
int check_kernel_landlock_abi(void);

/*
 * Whether this kernel has the i386 system call entry (`int $0x80` from a
 * 64-bit process): a child forked outside any filter of ours makes the
 * i386 getpid (20) and either gets its pid back (1) or dies of SIGSEGV,
 * as it does on a kernel built without IA32 emulation or booted with
 * ia32_emulation=0 (0). Returns 1, 0, or -1 when it cannot tell (not
 * x86-64, fork failed, another ending), which a check must treat as
 * "the entry may exist". STOCKADE_CHECK_FAKE_KERNEL (check_fake_kernel)
 * replaces the answer for the tests of both branches: "i386" gives 1,
 * "no-i386" gives 0 (docs/check.md, "Kernels differ").
 */
int check_kernel_has_i386_entry(void);

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t check_now_ms(void);

/* S as char *, for an exec array or an API that takes char * and does
 * not write (posix_spawn's argv). */
char *check_unconst(const char *s);

/* Initialises AT (posix_spawnattr_init; the caller destroys it) for a
 * child of a check: a process group of its own, so that it can be killed
 * whole, every signal at its default and none blocked, whatever ours
 * are. */
void check_spawnattr_init(posix_spawnattr_t *at);

/* What one process started by a check gave. */
/* Whether a process of the host runs whose command line (all its
 * arguments, /proc/PID/cmdline, NULs read as blanks, the first 4095
 * bytes) holds MARK, stockade's own processes aside (their command
 * lines name the job's): how a check sees that a job has begun or still
 * runs, now that a job's files are staged until it ends (issue 26). */
bool check_marked_process(const char *mark);

struct check_proc {
	int status; /* exit status, 128 + signal, or -1 when it
			    * could not be started */
	bool timed_out; /* killed at its deadline */
	bool interrupt_sent; /* SIGINT was sent (check_job_opts'
			      * interrupt_on was seen) */
	int64_t elapsed_ms;
	char *out, *err; /* its stdout and stderr, NUL-terminated,
			    * malloc'd; at most 4 MiB each is kept */
	size_t outlen, errlen;
};

/*
 * Runs ARGV (ARGV[0] an absolute path) with C's environment plus the
 * NULL-terminated EXTRA_ENV ("NAME=value", may be NULL), standard input
 * INPUT (LEN bytes; NULL: /dev/null), in a process group of its own
 * that is killed (SIGKILL) DEADLINE_MS milliseconds after the start.
 * Fills P (free with check_proc_free). Returns 0, or a negative errno
 * when nothing could be started (P->status -1).
 */
int check_exec(struct check_ctx *c, const char *const argv[],
    const char *const extra_env[], const void *input, size_t len,
    int64_t deadline_ms, struct check_proc *p);

/* check_exec, and once the host path INTERRUPT_ON (NULL: never) exists,
 * SIGINT to the process itself (not its group), once. */
int check_exec_interrupt(struct check_ctx *c, const char *const argv[],
    const char *const extra_env[], const void *input, size_t len,
    int64_t deadline_ms, const char *interrupt_on, struct check_proc *p);

/* Frees P's output buffers (P itself is the caller's); P may be freed
 * twice. */
void check_proc_free(struct check_proc *p);

/* One `stockade run --json` job. */
struct check_job_opts {
	const char *const *argv; /* the job: program and arguments */
	const char *const *run_args; /* more `stockade run` options before
				      * "--" (NULL: none) */
	const char *policy; /* policy file text (NULL: the
				      * embedded default) */
	const char *workspace; /* --workspace DIR (NULL: stockade's
				      * own temporary one) */
	bool no_probe; /* do not --put the probe */
	const char *const *extra_env; /* as check_exec's */
	int64_t deadline_ms; /* 0: 30000 */
	const char *interrupt_on; /* a mark: once a process whose
				      * command line holds it runs (the
				      * job shows it only once it has
				      * begun: a job's files are staged
				      * until it ends, issue 26), SIGINT
				      * to stockade (not its group), as
				      * Ctrl-C would (results.cancelled);
				      * NULL: never */
};

struct check_job {
	struct check_proc proc;
	json_t *result; /* the parsed result, NULL if none */
	const char *status; /* its "status", "" when none */
	const char *out; /* its "stdout", "" when none */
	const char *err; /* its "stderr", "" when none */
};

/*
 * Runs `STOCKADE run --json [--policy F] [--workspace W] [--put
 * PROBE:stockade-probe] RUN_ARGS... -- ARGV...` and parses the result.
 * The probe lands in the workspace as ./stockade-probe, the job's working
 * directory. Returns 0 when stockade ran (whatever the job did; J->result
 * may still be NULL), or a negative errno. Free J with check_job_free.
 */
int check_job_run(struct check_ctx *c, const struct check_job_opts *o,
    struct check_job *j);

/* Frees what J holds (its process's output and its parsed result);
 * its status, out and err strings die with it. */
void check_job_free(struct check_job *j);

/* Runs `./stockade-probe ARGS...` (NULL-terminated) on the embedded
 * default policy: check_job_run with only argv set. */
int check_probe(struct check_ctx *c, struct check_job *j, ...)
    __attribute__((sentinel));

/*
 * Finds "KEY=value" among the lines of J's job stdout (as stockade-probe
 * prints them) and copies the value into BUF (LEN bytes, NUL-terminated,
 * truncated). Returns true when KEY was there.
 */
bool check_value(const struct check_job *j, const char *key, char *buf,
    size_t len);

/* A one-line summary of a job that went wrong, for an observation:
 * "stockade exit N, status S: <detail or stderr>" into BUF. Returns BUF. */
const char *check_job_summary(const struct check_job *j, char *buf, size_t len);

/*
 * Makes a fresh empty directory under C's tmpdir for a --workspace (as
 * root given to 65534:65534, the ids of a root-run job) and writes its
 * path to BUF (LEN bytes). Returns 0 or a negative errno.
 */
int check_workspace(struct check_ctx *c, char *buf, size_t len);

/* A fresh path under C's tmpdir (nothing made there) with PREFIX. */
void check_tmpname(struct check_ctx *c, const char *prefix, char *buf,
    size_t len);

/* Writes LEN bytes of DATA to PATH (created 0644 or truncated); as root
 * gives it to 65534:65534 when OWN65534. Returns 0 or a negative errno. */
int check_write_file(const char *path, const void *data, size_t len,
    bool own65534, bool root);

#endif
