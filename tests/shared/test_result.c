/*
 * test_result.c: status names, signal names, exit statuses and hints
 * (shared/result.c). The names and exit statuses are README.md's contract;
 * the hints are checked on the phrases a scripted model may key on
 * (issue 4, "Hint phrases a scripted model may key on (stable)") and on
 * their figures, not on the rest of their wording.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

#define MIB (UINT64_C(1024) * 1024)

static const char *const expected_names[] = {
    [JOB_OK] = "ok",
    [JOB_EXIT_NONZERO] = "exit_nonzero",
    [JOB_TIMEOUT] = "timeout",
    [JOB_CPU_LIMIT] = "cpu_limit",
    [JOB_MEMORY_LIMIT] = "memory_limit",
    [JOB_PROCESS_LIMIT] = "process_limit",
    [JOB_OUTPUT_LIMIT] = "output_limit",
    [JOB_FILE_SIZE_LIMIT] = "file_size_limit",
    [JOB_DISK_FULL] = "disk_full",
    [JOB_CRASH] = "crash",
    [JOB_POLICY_VIOLATION] = "policy_violation",
    [JOB_SANDBOX_ERROR] = "sandbox_error",
    [JOB_CANCELLED] = "cancelled",
};

/* ---- status names ---- */

Test(status, names_are_the_documented_ones)
{
	cr_assert_eq(sizeof(expected_names) / sizeof(expected_names[0]),
	    (size_t)JOB_STATUS_MAX + 1);
	for (int i = 0; i <= JOB_STATUS_MAX; i++)
		cr_assert_str_eq(job_status_name((enum job_status)i),
		    expected_names[i]);
}

Test(status, name_round_trip_for_every_status)
{
	for (int i = 0; i <= JOB_STATUS_MAX; i++) {
		const char *name = job_status_name((enum job_status)i);

		cr_assert_not_null(name);
		cr_assert_eq(job_status_from_name(name), i, "%s", name);
	}
}

Test(status, unknown_names)
{
	static const char *const bad[] = {
	    "",
	    "OK",
	    "Ok",
	    "timeout ",
	    " timeout",
	    "time",
	    "crashed",
	    "sandbox-error",
	    "unknown",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(job_status_from_name(bad[i]), -1, "\"%s\"",
		    bad[i]);
}

Test(status, out_of_range_status_has_a_name)
{
	const char *n = job_status_name((enum job_status)(JOB_STATUS_MAX + 1));

	cr_assert_not_null(n);
	cr_assert_str_eq(n, "sandbox_error");
	cr_assert_str_eq(job_status_name((enum job_status) - 1),
	    "sandbox_error");
}

/* ---- signal names ---- */

Test(signal, named_signals)
{
	cr_assert_str_eq(signal_name(SIGSEGV), "SIGSEGV");
	cr_assert_str_eq(signal_name(SIGSYS), "SIGSYS");
	cr_assert_str_eq(signal_name(SIGKILL), "SIGKILL");
	cr_assert_str_eq(signal_name(SIGABRT), "SIGABRT");
	cr_assert_str_eq(signal_name(SIGXCPU), "SIGXCPU");
}

Test(signal, no_name)
{
	cr_assert_null(signal_name(0));
	cr_assert_null(signal_name(999));
	cr_assert_null(signal_name(-1));
	cr_assert_null(signal_name(SIGRTMIN));
	cr_assert_null(signal_name(65));
}

/* Every classic signal agrees with glibc's own abbreviation. */
Test(signal, agrees_with_libc)
{
	for (int sig = 1; sig < 32; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		const char *name = signal_name(sig);
		char want[32];

		if (abbrev == NULL)
			continue; /* 32 and 33 belong to the threading library */
		cr_assert_not_null(name, "signal %d (%s) has no name", sig,
		    abbrev);
		/* glibc names 29 by its System V alias SIGPOLL; signal(7)
		 * and we call it SIGIO. */
		snprintf(want, sizeof(want), "SIG%s",
		    sig == SIGIO ? "IO" : abbrev);
		cr_assert_str_eq(name, want, "signal %d", sig);
	}
}

/* ---- exit statuses (README.md, "Exit status") ---- */

static int
exit_status(enum job_status st, int code, int sig)
{
	struct job_result r;

	memset(&r, 0, sizeof(r));
	r.status = st;
	r.exit_code = code;
	r.signal = sig;
	return job_exit_status(&r);
}

Test(exit_status, table)
{
	cr_assert_eq(exit_status(JOB_OK, 0, 0), 0);
	cr_assert_eq(exit_status(JOB_EXIT_NONZERO, 1, 0), 1);
	cr_assert_eq(exit_status(JOB_EXIT_NONZERO, 3, 0), 3);
	cr_assert_eq(exit_status(JOB_EXIT_NONZERO, 127, 0), 127);
	cr_assert_eq(exit_status(JOB_EXIT_NONZERO, 255, 0), 255);
	cr_assert_eq(exit_status(JOB_TIMEOUT, -1, SIGKILL), 124);
	cr_assert_eq(exit_status(JOB_CRASH, -1, SIGSEGV), 128 + SIGSEGV);
	cr_assert_eq(exit_status(JOB_CRASH, -1, SIGABRT), 128 + SIGABRT);
	cr_assert_eq(exit_status(JOB_CRASH, -1, SIGSYS), 128 + SIGSYS);
	cr_assert_eq(exit_status(JOB_SANDBOX_ERROR, -1, 0), 70);
	cr_assert_eq(exit_status(JOB_CPU_LIMIT, -1, SIGKILL), 125);
	cr_assert_eq(exit_status(JOB_MEMORY_LIMIT, -1, 0), 125);
	cr_assert_eq(exit_status(JOB_PROCESS_LIMIT, 1, 0), 125);
	cr_assert_eq(exit_status(JOB_OUTPUT_LIMIT, -1, SIGKILL), 125);
	cr_assert_eq(exit_status(JOB_FILE_SIZE_LIMIT, -1, SIGXFSZ), 125);
	cr_assert_eq(exit_status(JOB_DISK_FULL, 1, 0), 125);
	cr_assert_eq(exit_status(JOB_POLICY_VIOLATION, -1, SIGSYS), 125);
}

/* exit_nonzero never turns into a success however the code is garbled. */
Test(exit_status, exit_nonzero_is_never_zero)
{
	static const int codes[] = {0, -1, 256, 1000, -255};

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		int s = exit_status(JOB_EXIT_NONZERO, codes[i], 0);

		cr_assert(s > 0 && s < 256, "code %d gives %d", codes[i], s);
	}
}

/* ---- hints ---- */

static void
sample_limits(struct job_limits *l)
{
	memset(l, 0, sizeof(*l));
	l->wall_ms = 5432;
	l->cpu_ms = 2750;
	l->memory_bytes = 256 * MIB;
	l->tmp_bytes = 64 * MIB;
	l->home_bytes = 32 * MIB;
	l->fsize_bytes = 16 * MIB;
	l->stdout_bytes = 1048577;
	l->stderr_bytes = 65539;
	l->nofile = 128;
	l->nproc = 77;
	l->cpu_percent = 50;
	l->workspace_bytes = 200 * MIB;
}

/*
 * Sentences in S: a '.', '!' or '?' followed by a space or the end. A
 * decimal point ("16.0") or a path ("/work.") before the end is not one.
 */
static int
count_sentences(const char *s)
{
	int n = 0;

	for (const char *p = s; *p != '\0'; p++)
		if ((*p == '.' || *p == '!' || *p == '?') &&
		    (p[1] == '\0' || p[1] == ' '))
			n++;
	return n;
}

static void
check_hint(enum job_status st, int code, int sig, const char *detail,
    const char *const *must)
{
	struct job_result r;
	struct job_limits l;
	char buf[1024];
	char *h;
	int n;

	memset(&r, 0, sizeof(r));
	r.status = st;
	r.exit_code = code;
	r.signal = sig;
	r.wall_ms = 5433;
	r.cpu_ms = 2751;
	r.peak_memory_kb = 300 * 1024;
	r.detail = (char *)(uintptr_t)detail; /* job_hint only reads it */
	sample_limits(&l);
	memset(buf, 'X', sizeof(buf));
	h = job_hint(&r, &l, buf, sizeof(buf));
	cr_assert_eq(h, buf);
	cr_assert(memchr(buf, '\0', sizeof(buf)) != NULL);
	cr_assert(strlen(h) > 20, "%s: hint too short: \"%s\"",
	    job_status_name(st), h);
	n = count_sentences(h);
	cr_assert(n == 1 || n == 2, "%s: %d sentences: \"%s\"",
	    job_status_name(st), n, h);
	cr_assert_eq(h[strlen(h) - 1], '.', "%s: \"%s\"", job_status_name(st),
	    h);
	cr_assert_null(strchr(h, '\n'));
	for (size_t i = 0; must[i] != NULL; i++)
		cr_assert_not_null(strstr(h, must[i]),
		    "%s: \"%s\" missing from \"%s\"", job_status_name(st),
		    must[i], h);
}

#define MUST(...) ((const char *const[]){__VA_ARGS__, NULL})

Test(hint, ok)
{
	check_hint(JOB_OK, 0, 0, "", MUST("5433 ms", "code 0"));
}

/* The stable phrases (issue 4), with the figures against the limits. */
#define P_EXIT "read stderr"
#define P_127 "not found"
#define P_126 "cannot be executed"
#define P_TIMEOUT "bound its loops"
#define P_CPU "make the computation cheaper"
#define P_MEMORY "stream large inputs"
#define P_PROCESS "bounded pool"
#define P_OUTPUT "write large results to a file in /work"
#define P_FSIZE "smaller files"
#define P_DISK "delete temporary files or write less"
#define P_CRASH "inspect"
#define P_POLICY "retrying will fail the same way"
#define P_SANDBOX "The sandbox itself failed, not the program"
#define P_CANCELLED "do not run it again on your own"

Test(hint, exit_nonzero)
{
	check_hint(JOB_EXIT_NONZERO, 3, 0, "", MUST("code 3", P_EXIT));
	check_hint(JOB_EXIT_NONZERO, 255, 0, "", MUST("code 255", P_EXIT));
	check_hint(JOB_EXIT_NONZERO, 127, 0, "", MUST("127", P_127));
	check_hint(JOB_EXIT_NONZERO, 126, 0, "", MUST("126", P_126));
}

Test(hint, timeout_names_the_limit)
{
	check_hint(JOB_TIMEOUT, -1, SIGKILL, "",
	    MUST("5432 ms", "5433 ms", P_TIMEOUT));
}

Test(hint, cpu_limit)
{
	check_hint(JOB_CPU_LIMIT, -1, SIGKILL, "",
	    MUST("2750 ms", "2751 ms", P_CPU));
}

Test(hint, memory_limit)
{
	check_hint(JOB_MEMORY_LIMIT, -1, SIGKILL, "",
	    MUST("256.0 MiB", "300.0 MiB", P_MEMORY));
}

Test(hint, process_limit)
{
	check_hint(JOB_PROCESS_LIMIT, 1, 0, "", MUST("77", P_PROCESS));
	check_hint(JOB_PROCESS_LIMIT, -1, SIGKILL, "", MUST("77", P_PROCESS));
}

Test(hint, output_limit)
{
	check_hint(JOB_OUTPUT_LIMIT, -1, SIGKILL, "",
	    MUST("1048577 bytes", "65539 bytes", P_OUTPUT));
}

/* Output past a cap (on_output_limit = truncate): whatever the status,
 * the hint says what was cut, with the figures, and how to get all of
 * it; an ok job's no longer says its output is complete; one killed for
 * its output (kill) says it once. */
Test(hint, truncated_output)
{
	static const enum job_status sts[] = {JOB_OK, JOB_EXIT_NONZERO,
	    JOB_TIMEOUT, JOB_OUTPUT_LIMIT};
	struct job_result r;
	struct job_limits l;
	char buf[2048];

	for (size_t i = 0; i < sizeof(sts) / sizeof(sts[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.status = sts[i];
		r.exit_code = sts[i] == JOB_EXIT_NONZERO ? 3 : -1;
		r.wall_ms = 5433;
		r.stdout_bytes = 2097152;
		r.stderr_bytes = 10;
		sample_limits(&l);
		l.stdout_bytes = 1048576;
		cr_assert(job_output_truncated(&r, &l));
		job_hint(&r, &l, buf, sizeof(buf));
		cr_assert_eq(count_sentences(buf),
		    sts[i] == JOB_OUTPUT_LIMIT ? 1 : 2, "\"%s\"", buf);
		if (sts[i] == JOB_OUTPUT_LIMIT) {
			cr_assert_null(strstr(buf, "truncated ("), "%s", buf);
			continue;
		}
		cr_assert_not_null(strstr(buf,
				       "Its output was truncated "
				       "(stdout 2097152 bytes over a cap "
				       "of 1048576;"),
		    "%s", buf);
		cr_assert_null(strstr(buf, ", stderr"), "%s", buf);
		cr_assert_not_null(strstr(buf, "write it to a file in /work"),
		    "%s", buf);
		cr_assert_null(strstr(buf, "complete"), "%s", buf);
	}
	/* Both streams, each with its own figures. */
	r.status = JOB_OK;
	r.stderr_bytes = l.stderr_bytes + 1;
	job_hint(&r, &l, buf, sizeof(buf));
	cr_assert_not_null(strstr(buf,
			       "(stdout 2097152 bytes over a cap of "
			       "1048576, stderr "),
	    "%s", buf);
	/* Layer limits off: no cap was in force, nothing was cut. */
	r.layers_off = JOB_LAYER_BIT(JOB_LAYER_LIMITS);
	cr_assert_not(job_output_truncated(&r, &l));
	r.layers_off = 0;
	/* At the cap exactly, nothing was cut. */
	r.stdout_bytes = l.stdout_bytes;
	r.stderr_bytes = l.stderr_bytes;
	cr_assert_not(job_output_truncated(&r, &l));
	job_hint(&r, &l, buf, sizeof(buf));
	cr_assert_not_null(strstr(buf, "its output is complete"), "%s", buf);
}

Test(hint, file_size_limit)
{
	check_hint(JOB_FILE_SIZE_LIMIT, -1, SIGXFSZ, "",
	    MUST("16.0 MiB", P_FSIZE));
}

/* Both places a job can fill: /tmp (its tmpfs) and /work (the quota);
 * the broker's detail says which, and the hint quotes it. */
Test(hint, disk_full)
{
	check_hint(JOB_DISK_FULL, 1, 0, "",
	    MUST("64.0 MiB", "/tmp", "200.0 MiB", "/work", P_DISK));
	check_hint(JOB_DISK_FULL, 1, 0, NULL, MUST("64.0 MiB", P_DISK));
	check_hint(JOB_DISK_FULL, 1, 0,
	    "the job left 250.0 MiB in /work, over its quota of 200.0 MiB",
	    MUST("the job left 250.0 MiB in /work", P_DISK));
}

Test(hint, crash_names_the_signal)
{
	check_hint(JOB_CRASH, -1, SIGSEGV, "", MUST("SIGSEGV", P_CRASH));
	check_hint(JOB_CRASH, -1, SIGABRT, "", MUST("SIGABRT", P_CRASH));
	check_hint(JOB_CRASH, -1, SIGBUS, "", MUST("SIGBUS", P_CRASH));
	check_hint(JOB_CRASH, -1, 40, "", MUST("unknown signal", P_CRASH));
}

Test(hint, policy_violation)
{
	check_hint(JOB_POLICY_VIOLATION, -1, SIGSYS, "",
	    MUST("system call", P_POLICY));
	check_hint(JOB_POLICY_VIOLATION, -1, SIGSYS, "ptrace",
	    MUST("system call", ": ptrace", P_POLICY));
	check_hint(JOB_POLICY_VIOLATION, -1, SIGSYS, NULL,
	    MUST("forbids", P_POLICY));
}

/* Cancelled: neither the program's fault nor the sandbox's, and not to
 * be retried; the figures and the launcher's detail (who stopped it). */
Test(hint, cancelled_says_not_to_retry)
{
	check_hint(JOB_CANCELLED, -1, SIGKILL,
	    "cancelled by SIGINT to "
	    "stockade, as from Ctrl-C",
	    MUST(P_CANCELLED, "tell the user", "SIGINT",
		"stopped by the user"));
	check_hint(JOB_CANCELLED, -1, SIGKILL, NULL, MUST(P_CANCELLED));
}

Test(hint, sandbox_error_does_not_blame_the_program)
{
	check_hint(JOB_SANDBOX_ERROR, -1, 0, "", MUST(P_SANDBOX));
	check_hint(JOB_SANDBOX_ERROR, -1, 0, NULL, MUST(P_SANDBOX));
	check_hint(JOB_SANDBOX_ERROR, -1, 0, "pivot_root failed",
	    MUST(P_SANDBOX, ": pivot_root failed"));
}

/* The stable phrase of each status (ok has none; its figures instead). */
static const char *const stable[] = {
    [JOB_OK] = "code 0",
    [JOB_EXIT_NONZERO] = P_EXIT,
    [JOB_TIMEOUT] = P_TIMEOUT,
    [JOB_CPU_LIMIT] = P_CPU,
    [JOB_MEMORY_LIMIT] = P_MEMORY,
    [JOB_PROCESS_LIMIT] = P_PROCESS,
    [JOB_OUTPUT_LIMIT] = P_OUTPUT,
    [JOB_FILE_SIZE_LIMIT] = P_FSIZE,
    [JOB_DISK_FULL] = P_DISK,
    [JOB_CRASH] = P_CRASH,
    [JOB_POLICY_VIOLATION] = P_POLICY,
    [JOB_SANDBOX_ERROR] = P_SANDBOX,
    [JOB_CANCELLED] = P_CANCELLED,
};

Test(hint, stable_phrase_for_every_status)
{
	cr_assert_eq(sizeof(stable) / sizeof(stable[0]),
	    (size_t)JOB_STATUS_MAX + 1);
	for (int i = 0; i <= JOB_STATUS_MAX; i++) {
		cr_assert_not_null(stable[i], "status %d has no phrase", i);
		check_hint((enum job_status)i,
		    i == JOB_EXIT_NONZERO ? 2
			: i == JOB_OK	  ? 0
					  : -1,
		    i == JOB_CRASH ? SIGSEGV : 0, "", MUST(stable[i]));
	}
}

/*
 * The result object builds its hint in 512 bytes (broker/jobs/result_json.c):
 * with every figure at its widest and a short detail, no hint is cut
 * there, so its stable phrase always reaches the model.
 */
Test(hint, stable_phrase_survives_the_widest_figures)
{
	struct job_result r;
	struct job_limits l;
	char buf[512];

	memset(&l, 0xff, sizeof(l));
	for (int i = 0; i <= JOB_STATUS_MAX; i++) {
		memset(&r, 0, sizeof(r));
		r.status = (enum job_status)i;
		r.exit_code = i == JOB_OK   ? 0
		    : i == JOB_EXIT_NONZERO ? 255
					    : -1;
		r.signal = i == JOB_CRASH ? SIGSEGV : 0;
		r.wall_ms = r.cpu_ms = r.peak_memory_kb = (uint64_t)INT64_MAX;
		r.peak_processes = UINT32_MAX;
		r.detail = (char *)(uintptr_t) "a detail of some sixty bytes, "
					       "as the broker writes them";
		job_hint(&r, &l, buf, sizeof(buf));
		cr_assert_lt(strlen(buf), sizeof(buf) - 1, "%s: cut: \"%s\"",
		    job_status_name(r.status), buf);
		cr_assert_not_null(strstr(buf, stable[i]), "%s: \"%s\"",
		    job_status_name(r.status), buf);
	}
}

Test(hint, every_status_is_covered)
{
	for (int i = 0; i <= JOB_STATUS_MAX; i++)
		check_hint((enum job_status)i, i == JOB_EXIT_NONZERO ? 2 : -1,
		    i == JOB_CRASH ? SIGSEGV : 0, "", MUST("The"));
}

Test(hint, truncates_to_the_buffer)
{
	struct job_result r;
	struct job_limits l;
	char buf[16];

	memset(&r, 0, sizeof(r));
	r.status = JOB_TIMEOUT;
	sample_limits(&l);
	memset(buf, 'X', sizeof(buf));
	/* Cut at a word, marked (fmt_words: never half a word). */
	job_hint(&r, &l, buf, 10);
	cr_assert_str_eq(buf, "The ...");
	cr_assert_eq(buf[10], 'X', "wrote past SIZE");
	memset(buf, 'X', sizeof(buf));
	job_hint(&r, &l, buf, 1);
	cr_assert_str_eq(buf, "");
	cr_assert_eq(buf[1], 'X');
}

/* ---- job_result_clear ---- */

Test(result, clear)
{
	struct job_result r;

	memset(&r, 0, sizeof(r));
	job_result_clear(NULL);
	job_result_clear(&r);
	r.detail = strdup("x");
	cr_assert_not_null(r.detail);
	job_result_clear(&r);
	cr_assert_null(r.detail);
	job_result_clear(&r);
}
