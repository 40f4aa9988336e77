/*
 * check_results_limits.c: the results layer's checks of the status and
 * the limits (check_results.h; the table is in check_results.c): exit
 * codes, wall and CPU time, memory under cgroup2 and under the monitor's
 * charges, processes, and the limit words a result may use only with
 * evidence (docs/results.md, README.md "Result fields" and "Exit
 * status").
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_results.h"
#include "result_json.h"

/* ---- results ----------------------------------------------------------- */

/* results.ok_output_complete: a program that prints a line and exits 0
 * is "ok" with exit_code 0, its output whole and not marked truncated,
 * and `stockade run` exits 0. */
void
results_ok_output_complete(struct check_ctx *c, struct check_result *r)
{
	static const char line[] = "hello from the job\n";
	struct check_job j;

	res_probe_job(c, &j, NULL, NULL, ARGS("result-exit", "0"));
	if (!res_status_is(&j, "ok", r))
		goto out;
	if (!res_int_is(&j, "exit_code", 0) ||
	    !json_is_null(res_field(&j, "signal"))) {
		char ec[32], sig[32];

		check_fail(r, "status ok with exit_code %s, signal %s",
		    res_shown(&j, "exit_code", ec, sizeof(ec)),
		    res_shown(&j, "signal", sig, sizeof(sig)));
	} else if (strcmp(j.out, line) != 0 ||
	    !res_int_is(&j, "stdout_bytes", (json_int_t)strlen(line))) {
		check_fail(r,
		    "stdout \"%.100s\" (%zu bytes in the result), "
		    "not the %zu bytes printed",
		    j.out, strlen(j.out), strlen(line));
	} else if (!json_is_false(res_field(&j, "stdout_truncated")) ||
	    !json_is_false(res_field(&j, "stderr_truncated"))) {
		char a[16], b[16];

		check_fail(r,
		    "complete output marked truncated: "
		    "stdout_truncated %s, stderr_truncated %s",
		    res_shown(&j, "stdout_truncated", a, sizeof(a)),
		    res_shown(&j, "stderr_truncated", b, sizeof(b)));
	} else if (res_hint_names(&j, "ok", "code 0", r) &&
	    res_exit_is(&j, "ok", 0, r)) {
		check_pass(r,
		    "status ok, exit_code 0, stdout complete (%zu "
		    "bytes, not truncated), stockade exit 0",
		    strlen(line));
	}
out:
	check_job_free(&j);
}

/* results.exit_nonzero_code_exact: exit 7 is "exit_nonzero" with
 * exit_code 7 (WEXITSTATUS, wait(2)), and `stockade run` exits 7. */
void
results_exit_nonzero_code_exact(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char ec[32];

	res_probe_job(c, &j, NULL, NULL, ARGS("result-exit", "7"));
	if (!res_status_is(&j, "exit_nonzero", r))
		goto out;
	if (!res_int_is(&j, "exit_code", 7))
		check_fail(r, "status exit_nonzero with exit_code %s, not 7",
		    res_shown(&j, "exit_code", ec, sizeof(ec)));
	else if (res_hint_names(&j, "exit_nonzero", "code 7", r) &&
	    res_exit_is(&j, "exit_nonzero", 7, r))
		check_pass(r,
		    "status exit_nonzero, exit_code 7, stockade "
		    "exit 7");
out:
	check_job_free(&j);
}

/* results.timeout_at_wall_limit: a program sleeping past --timeout 1 is
 * "timeout" with wall_ms about 1000 and `stockade run` exits 124. */
void
results_timeout_at_wall_limit(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	json_int_t wall;

	res_probe_job(c, &j, NULL, ARGS("--timeout", "1"),
	    ARGS("result-sleep", "3"));
	if (!res_status_is(&j, "timeout", r))
		goto out;
	wall = json_integer_value(res_field(&j, "wall_ms"));
	if (wall < 950 || wall > 1600)
		check_fail(r,
		    "status timeout but wall_ms %" JSON_INTEGER_FORMAT
		    " under a 1000 ms limit",
		    wall);
	else if (res_hint_names(&j, "timeout", "1000 ms", r) &&
	    res_exit_is(&j, "timeout", 124, r))
		check_pass(r,
		    "status timeout, wall_ms %" JSON_INTEGER_FORMAT
		    " under --timeout 1, stockade exit 124",
		    wall);
out:
	check_job_free(&j);
}

/*
 * results.cpu_limit_at_cpu_time: two processes spinning under
 * --cpu-time 1 are "cpu_limit" with cpu_ms about 1000 (RLIMIT_CPU and
 * the monitor count the whole jail). Deterministic under load (issue 23
 * point 10): the spinners stop on CPU time (3 s each), not wall time,
 * and the wall limit (60 s) leaves them room to use 1 s between them
 * with a fiftieth of a core between them; under --timeout 3 a loaded
 * 2-core machine made this "timeout" 10 times in 12. Without a working
 * CPU limit they end "ok" after 3 s of CPU each: a FAIL, not a hang.
 */
void
results_cpu_limit_at_cpu_time(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	json_int_t cpu;

	static const char *const argv[] = {"./stockade-probe", "result-spin",
	    "2", NULL};
	struct check_job_opts o;

	/* probe_job's, with the host's deadline past the wall limit: a
	 * loaded machine makes this slow, never wrong. */
	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.run_args = ARGS("--cpu-time", "1", "--timeout", "60");
	o.deadline_ms = 65000;
	check_job_run(c, &o, &j);
	if (!res_status_is(&j, "cpu_limit", r))
		goto out;
	cpu = json_integer_value(res_field(&j, "cpu_ms"));
	if (cpu < 900 || cpu > 2500)
		check_fail(r,
		    "status cpu_limit but cpu_ms %" JSON_INTEGER_FORMAT
		    " under a 1000 ms limit",
		    cpu);
	else if (res_hint_names(&j, "cpu_limit", "1000 ms", r) &&
	    res_exit_is(&j, "cpu_limit", 125, r))
		check_pass(r,
		    "status cpu_limit, cpu_ms %" JSON_INTEGER_FORMAT
		    " under --cpu-time 1, stockade exit 125",
		    cpu);
out:
	check_job_free(&j);
}

/* results.memory_limit_at_32_mib: a program keeping up to 256 MiB under
 * --memory 32 is "memory_limit". */
void
results_memory_limit_held(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char peak[32];

	res_probe_job(c, &j, NULL, ARGS("--memory", "32"),
	    ARGS("result-memory", "256"));
	if (res_status_is(&j, "memory_limit", r) &&
	    res_hint_names(&j, "memory_limit", "32.0 MiB", r) &&
	    res_exit_is(&j, "memory_limit", 125, r))
		check_pass(r,
		    "status memory_limit under --memory 32 (peak "
		    "%s KiB), stockade exit 125",
		    res_shown(&j, "peak_memory_kb", peak, sizeof(peak)));
	check_job_free(&j);
}

/* How long a check of unmapped memory waits for its job, ms: the probe
 * holds what it pinned 15 s (probe_results_held.c) under a 20 s
 * timeout, and on a loaded host the monitor's count of millions of
 * kernel objects can take seconds before it ends a sound job. */
#define UNMAPPED_DEADLINE_MS 25000

/* results.descriptors_charged_under_monitor: under enforcement =
 * monitor, 8 processes holding pipes up to RLIMIT_NOFILE (about 2,000
 * descriptors, 128 MiB of pipe buffers if filled) under --memory 32 are
 * "memory_limit" with the descriptors named: each descriptor past a
 * jail's first 512 is charged 64 KiB (launcher/supervisor/fdcharge.h; docs/layers.md,
 * "Memory the monitor cannot see"; issue 23: 87 MiB of pipes held, ok).
 * Under cgroup2 the leaf charges pipe buffers itself: skipped. */
void
results_descriptors_charged(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	const char *enf, *detail;

	res_probe_job_within(c, &j, NULL,
	    ARGS("--memory", "32", "--timeout", "20"),
	    ARGS("result-pipes", "8"), UNMAPPED_DEADLINE_MS);
	enf = json_string_value(res_field(&j, "enforcement"));
	if (enf != NULL && strcmp(enf, "monitor") != 0) {
		check_skip(r,
		    "enforcement is %s, not monitor: a cgroup v2 leaf "
		    "charges pipe buffers",
		    enf);
		goto out;
	}
	if (!res_status_is(&j, "memory_limit", r))
		goto out;
	detail = json_string_value(res_field(&j, "detail"));
	if (detail == NULL || strstr(detail, "descriptors") == NULL)
		check_fail(r,
		    "memory_limit, but its detail does not name the "
		    "descriptors: %s",
		    detail != NULL ? detail : "none");
	else
		check_pass(r,
		    "8 processes of pipes under --memory 32: "
		    "memory_limit (%s)",
		    detail);
out:
	check_job_free(&j);
}

/*
 * Under enforcement = monitor, the probe ARGV (pinning kernel memory no
 * process maps) under --memory 32 is "memory_limit" with WORD in its
 * detail; under cgroup2 the leaf charges that memory itself: skipped.
 * WHAT says what was pinned, for the verdict.
 */
static void
unmapped_charged(struct check_ctx *c, struct check_result *r,
    const char *const *argv, const char *word, const char *what)
{
	struct check_job j;
	const char *enf, *detail;

	res_probe_job_within(c, &j, NULL,
	    ARGS("--memory", "32", "--timeout", "20"), argv,
	    UNMAPPED_DEADLINE_MS);
	enf = json_string_value(res_field(&j, "enforcement"));
	if (enf != NULL && strcmp(enf, "monitor") != 0) {
		check_skip(r,
		    "enforcement is %s, not monitor: a cgroup v2 leaf "
		    "charges %s",
		    enf, what);
		goto out;
	}
	if (!res_status_is(&j, "memory_limit", r))
		goto out;
	detail = json_string_value(res_field(&j, "detail"));
	if (detail == NULL || strstr(detail, word) == NULL)
		check_fail(r,
		    "memory_limit, but its detail does not name the "
		    "%s: %s",
		    word, detail != NULL ? detail : "none");
	else
		check_pass(r, "%s under --memory 32: memory_limit (%s)", what,
		    detail);
out:
	check_job_free(&j);
}

/* results.socket_buffers_charged_under_monitor: 100 unix socket pairs
 * with full queues (some 20 MiB of kernel memory, no resident set) under
 * --memory 32 are "memory_limit": the monitor charges each socket of the
 * jail's network namespace at its buffer bound (issue 23: 518 MiB of
 * socket queues held under --memory 32, ok). */
void
results_sockets_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-sockets", "100"), "sockets",
	    "100 unix socket pairs with full queues");
}

/* results.page_tables_counted_under_monitor: 48 MiB of page tables with
 * almost no proportional set (one file page mapped every 2 MiB of 24
 * GiB, probe_results_held.c) under --memory 32 are "memory_limit": the
 * monitor adds VmPTE (issue 23: 128 MiB of page tables held with 1.3 MiB
 * resident, ok). */
void
results_page_tables_counted(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-pte", "24"), "page tables",
	    "48 MiB of page tables over one shared page");
}

/* results.epoll_watches_charged_under_monitor: 240,000 epoll watches
 * (some 46 MiB of kernel memory, held by 120 descriptors) under --memory
 * 32 are "memory_limit": the zygote counts the watches of the jail's
 * epoll instances (the "tfd:" lines of /proc/PID/fdinfo, proc(5)) and the
 * monitor charges 200 bytes each (issue 23: 461,280 watches, 88 MiB, held
 * under --memory 32, ok). */
void
results_epoll_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-epoll", "240"), "epoll watches",
	    "240,000 epoll watches on 120 descriptors");
}

/* results.maps_charged_under_monitor: 180,000 memory maps (some 38 MiB
 * of vm_area_structs, no resident memory) in 3 processes under --memory
 * 32 are "memory_limit": the zygote counts the lines of each process's
 * /proc/PID/maps and the monitor charges 220 bytes each (issue 23: 6
 * processes of 65,000 maps held 79 MiB under --memory 32, ok). */
void
results_maps_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-maps", "180"), "memory maps",
	    "180,000 memory maps in 3 processes");
}

/* results.locks_charged_under_monitor: 200,000 POSIX byte-range locks
 * (some 39 MiB of struct file_lock) in 4 processes under --memory 32 are
 * "memory_limit": the zygote counts the "lock:" lines of every fdinfo
 * (fs/locks.c show_fd_locks) and the monitor charges 200 bytes each
 * (issue 23: 126,000 locks, 23 MiB, held by one process, ok). */
void
results_locks_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-locks", "200"), "file locks",
	    "200,000 POSIX locks in 4 processes");
}

/* results.process_limit_at_8: a program forking up to 40 sleepers under
 * --processes 8 is "process_limit". */
void
results_process_limit_held(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char forked[32] = "?";

	res_probe_job(c, &j, NULL, ARGS("--processes", "8"),
	    ARGS("result-fork", "40"));
	(void)check_value(&j, "forked", forked, sizeof(forked));
	if (res_status_is(&j, "process_limit", r) &&
	    res_hint_names(&j, "process_limit", "8 processes", r) &&
	    res_exit_is(&j, "process_limit", 125, r))
		check_pass(r,
		    "status process_limit under --processes 8 "
		    "(%s children started), stockade exit 125",
		    forked);
	check_job_free(&j);
}

/* results.limit_words_need_evidence: a program that only prints
 * "MemoryError" and exits 1, far under its memory limit, is
 * exit_nonzero, not memory_limit: a limit status needs the jail's own
 * figures (issue 23, point 7). */
void
results_limit_words_need_evidence(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;

	res_probe_job(c, &j, NULL, ARGS("--memory", "256"),
	    ARGS("result-says", "MemoryError", "1"));
	if (res_status_is(&j, "exit_nonzero", r) &&
	    res_exit_is(&j, "exit_nonzero", 1, r))
		check_pass(r,
		    "\"MemoryError\" on stderr at a peak far under "
		    "--memory 256 is exit_nonzero (exit 1), not "
		    "memory_limit");
	check_job_free(&j);
}

/* results.limit_reached_when_ok: a program whose forks were refused at
 * --processes 8 and that still exits 0 is ok, with limits_reached naming
 * the process limit and a hint that its output may be incomplete (issue
 * 23, point 7). */
void
results_limit_reached_when_ok(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	json_t *lr, *e;
	const char *hint;
	char forked[32] = "?";

	res_probe_job(c, &j, NULL, ARGS("--processes", "8"),
	    ARGS("result-fork-on", "40"));
	(void)check_value(&j, "forked", forked, sizeof(forked));
	if (!res_status_is(&j, "ok", r))
		goto out;
	lr = res_field(&j, "limits_reached");
	e = json_array_get(lr, 0);
	hint = json_string_value(res_field(&j, "hint"));
	if (!json_is_array(lr) || e == NULL ||
	    strcmp(json_string_value(json_object_get(e, "limit")) != NULL
		    ? json_string_value(json_object_get(e, "limit"))
		    : "",
		"processes") != 0)
		check_fail(r,
		    "ok after refused forks (%s of 40 started) but "
		    "limits_reached does not name the process limit",
		    forked);
	else if (hint == NULL || strstr(hint, "incomplete") == NULL)
		check_fail(r,
		    "limits_reached names the process limit but the "
		    "hint does not say the output may be incomplete: "
		    "\"%.160s\"",
		    hint != NULL ? hint : "");
	else
		check_pass(r,
		    "ok with %s of 40 children started under "
		    "--processes 8; limits_reached processes "
		    "x%" JSON_INTEGER_FORMAT ", the hint says the output may "
		    "be incomplete",
		    forked, json_integer_value(json_object_get(e, "times")));
out:
	check_job_free(&j);
}

/* results.shared_pages_counted_once: a parent holding 64 MiB with four
 * forked children sharing it (320 MiB as a sum of resident sets, about
 * 70 MiB in fact) runs to its end under --memory 128: a page shared after
 * fork counts once (the monitor's proportional set sizes; cgroup v2
 * charges a page once anyway). Issue 23, point 8. */
void
results_shared_pages_once(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pool[32] = "?";
	json_t *peak;

	res_probe_job(c, &j, NULL, ARGS("--memory", "128"),
	    ARGS("result-pool", "64", "4"));
	if (!res_status_is(&j, "ok", r))
		goto out;
	(void)check_value(&j, "pool", pool, sizeof(pool));
	peak = res_field(&j, "peak_memory_kb");
	if (strcmp(pool, "64,4") != 0)
		check_fail(r, "the pool did not finish (pool=%s)", pool);
	else
		check_pass(r,
		    "64 MiB shared by a parent and 4 forked children "
		    "(320 MiB of resident sets) ran to its end under "
		    "--memory 128, peak %" JSON_INTEGER_FORMAT " KiB (%s)",
		    json_integer_value(peak),
		    json_string_value(res_field(&j, "memory_measure"))
			? json_string_value(res_field(&j, "memory_measure"))
			: "?");
out:
	check_job_free(&j);
}
