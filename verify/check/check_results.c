/*
 * check_results.c: the checks of the results layer (check.h): one job
 * per status of the result (docs/results.md, README.md "Result fields"
 * and "Exit status"), each made by stockade-probe (probe_results.c)
 * under a small limit, and the status, the figure that shows it, the
 * exit status of `stockade run` and a hint that names the figure
 * compared with what a sound stockade reports; and the result's JSON
 * read strictly (jansson refuses ill-formed UTF-8) after a job that
 * printed ill-formed UTF-8. The policy layer is check_policy.c.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "result_json.h"

/* Deadline of one job of these checks: the slowest (a 1 s limit) takes
 * about 1.1 s; a stockade that ignores a limit is cut off by its own
 * wall-clock limit (3 s) or this. */
#define JOB_DEADLINE_MS 8000

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/*
 * Runs ./stockade-probe ARGV[0] ARGV[1]... in a `stockade run --json` job
 * with RUN_ARGS (may be NULL) and POLICY (NULL: the embedded default).
 */
static int
probe_job(struct check_ctx *c, struct check_job *j, const char *policy,
	  const char *const *run_args, const char *const *argv)
{
	const char *full[16];
	struct check_job_opts o;
	size_t n = 0;

	full[n++] = "./stockade-probe";
	for (size_t i = 0; argv[i] != NULL && n < 15; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	memset(&o, 0, sizeof(o));
	o.argv = full;
	o.run_args = run_args;
	o.policy = policy;
	o.deadline_ms = JOB_DEADLINE_MS;
	return check_job_run(c, &o, j);
}

static json_t *
field(const struct check_job *j, const char *key)
{
	return json_object_get(j->result, key);
}

/* FIELD KEY of J's result as text: its integer, its string quoted,
 * "null", or "missing", into BUF. Returns BUF. */
static const char *
shown(const struct check_job *j, const char *key, char *buf, size_t len)
{
	json_t *v = field(j, key);

	if (json_is_integer(v))
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, len, "\"%s\"", json_string_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else if (json_is_null(v))
		snprintf(buf, len, "null");
	else
		snprintf(buf, len, "missing");
	return buf;
}

/* True when KEY of J's result is the integer WANT. */
static bool
int_is(const struct check_job *j, const char *key, json_int_t want)
{
	json_t *v = field(j, key);

	return json_is_integer(v) && json_integer_value(v) == want;
}

/* KEY of J's result as a string, or "" when it is not one. */
static const char *
str_of(const struct check_job *j, const char *key)
{
	const char *s = json_string_value(field(j, key));

	return s != NULL ? s : "";
}

/*
 * True when J gave a result of status WANT; otherwise fails R saying what
 * came instead (no result, or the status with its exit code, signal and
 * detail).
 */
static bool
status_is(const struct check_job *j, const char *want,
	  struct check_result *r)
{
	char why[512], ec[32], sig[32];

	if (j->result == NULL) {
		check_fail(r, "no result: %s",
			   check_job_summary(j, why, sizeof(why)));
		return false;
	}
	if (strcmp(j->status, want) == 0)
		return true;
	check_fail(r, "status \"%s\", not \"%s\" (exit_code %s, signal %s, "
		   "detail \"%.160s\", stockade exit %d)", j->status, want,
		   shown(j, "exit_code", ec, sizeof(ec)),
		   shown(j, "signal", sig, sizeof(sig)), str_of(j, "detail"),
		   j->proc.status);
	return false;
}

/*
 * True when J's hint is not empty and contains NEED (NULL: anything);
 * otherwise fails R quoting it. Every result carries a hint for the
 * model that names the figure against the limit (result.h, job_hint).
 */
static bool
hint_names(const struct check_job *j, const char *status, const char *need,
	   struct check_result *r)
{
	const char *h = str_of(j, "hint");

	if (h[0] == '\0') {
		check_fail(r, "status %s but the hint is empty or missing",
			   status);
		return false;
	}
	if (need != NULL && strstr(h, need) == NULL) {
		check_fail(r, "status %s but the hint does not name %s: "
			   "\"%.200s\"", status, need, h);
		return false;
	}
	return true;
}

/* True when `stockade run` exited WANT (README.md, "Exit status");
 * otherwise fails R. */
static bool
exit_is(const struct check_job *j, const char *status, int want,
	struct check_result *r)
{
	if (j->proc.status == want)
		return true;
	check_fail(r, "status %s but stockade run exited %d, not %d",
		   status, j->proc.status, want);
	return false;
}

/* ---- results ----------------------------------------------------------- */

/* results.ok_output_complete: a program that prints a line and exits 0
 * is "ok" with exit_code 0, its output whole and not marked truncated,
 * and `stockade run` exits 0. */
static void
ok_output_complete(struct check_ctx *c, struct check_result *r)
{
	static const char line[] = "hello from the job\n";
	struct check_job j;

	probe_job(c, &j, NULL, NULL, ARGS("result-exit", "0"));
	if (!status_is(&j, "ok", r))
		goto out;
	if (!int_is(&j, "exit_code", 0) || !json_is_null(field(&j, "signal"))) {
		char ec[32], sig[32];

		check_fail(r, "status ok with exit_code %s, signal %s",
			   shown(&j, "exit_code", ec, sizeof(ec)),
			   shown(&j, "signal", sig, sizeof(sig)));
	} else if (strcmp(j.out, line) != 0 ||
		   !int_is(&j, "stdout_bytes", (json_int_t)strlen(line))) {
		check_fail(r, "stdout \"%.100s\" (%zu bytes in the result), "
			   "not the %zu bytes printed", j.out, strlen(j.out),
			   strlen(line));
	} else if (!json_is_false(field(&j, "stdout_truncated")) ||
		   !json_is_false(field(&j, "stderr_truncated"))) {
		char a[16], b[16];

		check_fail(r, "complete output marked truncated: "
			   "stdout_truncated %s, stderr_truncated %s",
			   shown(&j, "stdout_truncated", a, sizeof(a)),
			   shown(&j, "stderr_truncated", b, sizeof(b)));
	} else if (hint_names(&j, "ok", "code 0", r) &&
		   exit_is(&j, "ok", 0, r)) {
		check_pass(r, "status ok, exit_code 0, stdout complete (%zu "
			   "bytes, not truncated), stockade exit 0",
			   strlen(line));
	}
out:
	check_job_free(&j);
}

/* results.exit_nonzero_code_exact: exit 7 is "exit_nonzero" with
 * exit_code 7 (WEXITSTATUS, wait(2)), and `stockade run` exits 7. */
static void
exit_nonzero_code_exact(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char ec[32];

	probe_job(c, &j, NULL, NULL, ARGS("result-exit", "7"));
	if (!status_is(&j, "exit_nonzero", r))
		goto out;
	if (!int_is(&j, "exit_code", 7))
		check_fail(r, "status exit_nonzero with exit_code %s, not 7",
			   shown(&j, "exit_code", ec, sizeof(ec)));
	else if (hint_names(&j, "exit_nonzero", "code 7", r) &&
		 exit_is(&j, "exit_nonzero", 7, r))
		check_pass(r, "status exit_nonzero, exit_code 7, stockade "
			   "exit 7");
out:
	check_job_free(&j);
}

/* results.timeout_at_wall_limit: a program sleeping past --timeout 1 is
 * "timeout" with wall_ms about 1000 and `stockade run` exits 124. */
static void
timeout_at_wall_limit(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	json_int_t wall;

	probe_job(c, &j, NULL, ARGS("--timeout", "1"),
		  ARGS("result-sleep", "3"));
	if (!status_is(&j, "timeout", r))
		goto out;
	wall = json_integer_value(field(&j, "wall_ms"));
	if (wall < 950 || wall > 1600)
		check_fail(r, "status timeout but wall_ms %" JSON_INTEGER_FORMAT
			   " under a 1000 ms limit", wall);
	else if (hint_names(&j, "timeout", "1000 ms", r) &&
		 exit_is(&j, "timeout", 124, r))
		check_pass(r, "status timeout, wall_ms %" JSON_INTEGER_FORMAT
			   " under --timeout 1, stockade exit 124", wall);
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
static void
cpu_limit_at_cpu_time(struct check_ctx *c, struct check_result *r)
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
	if (!status_is(&j, "cpu_limit", r))
		goto out;
	cpu = json_integer_value(field(&j, "cpu_ms"));
	if (cpu < 900 || cpu > 2500)
		check_fail(r, "status cpu_limit but cpu_ms %" JSON_INTEGER_FORMAT
			   " under a 1000 ms limit", cpu);
	else if (hint_names(&j, "cpu_limit", "1000 ms", r) &&
		 exit_is(&j, "cpu_limit", 125, r))
		check_pass(r, "status cpu_limit, cpu_ms %" JSON_INTEGER_FORMAT
			   " under --cpu-time 1, stockade exit 125", cpu);
out:
	check_job_free(&j);
}

/* results.memory_limit_at_32_mib: a program keeping up to 256 MiB under
 * --memory 32 is "memory_limit". */
static void
memory_limit_held(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char peak[32];

	probe_job(c, &j, NULL, ARGS("--memory", "32"),
		  ARGS("result-memory", "256"));
	if (status_is(&j, "memory_limit", r) &&
	    hint_names(&j, "memory_limit", "32.0 MiB", r) &&
	    exit_is(&j, "memory_limit", 125, r))
		check_pass(r, "status memory_limit under --memory 32 (peak "
			   "%s KiB), stockade exit 125",
			   shown(&j, "peak_memory_kb", peak, sizeof(peak)));
	check_job_free(&j);
}

/* results.descriptors_charged_under_monitor: under enforcement =
 * monitor, 8 processes holding pipes up to RLIMIT_NOFILE (about 2,000
 * descriptors, 128 MiB of pipe buffers if filled) under --memory 32 are
 * "memory_limit" with the descriptors named: each descriptor past a
 * jail's first 512 is charged 64 KiB (launcher/supervisor/fdcharge.h; docs/layers.md,
 * "Memory the monitor cannot see"; issue 23: 87 MiB of pipes held, ok).
 * Under cgroup2 the leaf charges pipe buffers itself: skipped. */
static void
descriptors_charged(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	const char *enf, *detail;

	probe_job(c, &j, NULL, ARGS("--memory", "32", "--timeout", "30"),
		  ARGS("result-pipes", "8"));
	enf = json_string_value(field(&j, "enforcement"));
	if (enf != NULL && strcmp(enf, "monitor") != 0) {
		check_skip(r, "enforcement is %s, not monitor: a cgroup v2 leaf "
			   "charges pipe buffers", enf);
		goto out;
	}
	if (!status_is(&j, "memory_limit", r))
		goto out;
	detail = json_string_value(field(&j, "detail"));
	if (detail == NULL || strstr(detail, "descriptors") == NULL)
		check_fail(r, "memory_limit, but its detail does not name the "
			   "descriptors: %s", detail != NULL ? detail : "none");
	else
		check_pass(r, "8 processes of pipes under --memory 32: "
			   "memory_limit (%s)", detail);
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

	probe_job(c, &j, NULL, ARGS("--memory", "32", "--timeout", "30"),
		  argv);
	enf = json_string_value(field(&j, "enforcement"));
	if (enf != NULL && strcmp(enf, "monitor") != 0) {
		check_skip(r, "enforcement is %s, not monitor: a cgroup v2 leaf "
			   "charges %s", enf, what);
		goto out;
	}
	if (!status_is(&j, "memory_limit", r))
		goto out;
	detail = json_string_value(field(&j, "detail"));
	if (detail == NULL || strstr(detail, word) == NULL)
		check_fail(r, "memory_limit, but its detail does not name the "
			   "%s: %s", word, detail != NULL ? detail : "none");
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
static void
sockets_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-sockets", "100"), "sockets",
			 "100 unix socket pairs with full queues");
}

/* results.page_tables_counted_under_monitor: 48 MiB of page tables with
 * almost no resident memory (a read-only mapping of 24 GiB touched every
 * 2 MiB) under --memory 32 are "memory_limit": the monitor adds VmPTE
 * (issue 23: 128 MiB of page tables held with 1.3 MiB resident, ok). */
static void
page_tables_counted(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-pte", "24"), "page tables",
			 "48 MiB of page tables with no resident memory");
}

/* results.epoll_watches_charged_under_monitor: 240,000 epoll watches
 * (some 46 MiB of kernel memory, held by 120 descriptors) under --memory
 * 32 are "memory_limit": the zygote counts the watches of the jail's
 * epoll instances (the "tfd:" lines of /proc/PID/fdinfo, proc(5)) and the
 * monitor charges 200 bytes each (issue 23: 461,280 watches, 88 MiB, held
 * under --memory 32, ok). */
static void
epoll_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-epoll", "240"), "epoll watches",
			 "240,000 epoll watches on 120 descriptors");
}

/* results.maps_charged_under_monitor: 180,000 memory maps (some 38 MiB
 * of vm_area_structs, no resident memory) in 3 processes under --memory
 * 32 are "memory_limit": the zygote counts the lines of each process's
 * /proc/PID/maps and the monitor charges 220 bytes each (issue 23: 6
 * processes of 65,000 maps held 79 MiB under --memory 32, ok). */
static void
maps_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-maps", "180"), "memory maps",
			 "180,000 memory maps in 3 processes");
}

/* results.locks_charged_under_monitor: 200,000 POSIX byte-range locks
 * (some 39 MiB of struct file_lock) in 4 processes under --memory 32 are
 * "memory_limit": the zygote counts the "lock:" lines of every fdinfo
 * (fs/locks.c show_fd_locks) and the monitor charges 200 bytes each
 * (issue 23: 126,000 locks, 23 MiB, held by one process, ok). */
static void
locks_charged(struct check_ctx *c, struct check_result *r)
{
	unmapped_charged(c, r, ARGS("result-locks", "200"), "file locks",
			 "200,000 POSIX locks in 4 processes");
}

/* results.process_limit_at_8: a program forking up to 40 sleepers under
 * --processes 8 is "process_limit". */
static void
process_limit_held(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char forked[32] = "?";

	probe_job(c, &j, NULL, ARGS("--processes", "8"),
		  ARGS("result-fork", "40"));
	(void)check_value(&j, "forked", forked, sizeof(forked));
	if (status_is(&j, "process_limit", r) &&
	    hint_names(&j, "process_limit", "8 processes", r) &&
	    exit_is(&j, "process_limit", 125, r))
		check_pass(r, "status process_limit under --processes 8 "
			   "(%s children started), stockade exit 125", forked);
	check_job_free(&j);
}

/* results.limit_words_need_evidence: a program that only prints
 * "MemoryError" and exits 1, far under its memory limit, is
 * exit_nonzero, not memory_limit: a limit status needs the jail's own
 * figures (issue 23, point 7). */
static void
limit_words_need_evidence(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;

	probe_job(c, &j, NULL, ARGS("--memory", "256"),
		  ARGS("result-says", "MemoryError", "1"));
	if (status_is(&j, "exit_nonzero", r) &&
	    exit_is(&j, "exit_nonzero", 1, r))
		check_pass(r, "\"MemoryError\" on stderr at a peak far under "
			   "--memory 256 is exit_nonzero (exit 1), not "
			   "memory_limit");
	check_job_free(&j);
}

/* results.limit_reached_when_ok: a program whose forks were refused at
 * --processes 8 and that still exits 0 is ok, with limits_reached naming
 * the process limit and a hint that its output may be incomplete (issue
 * 23, point 7). */
static void
limit_reached_when_ok(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	json_t *lr, *e;
	const char *hint;
	char forked[32] = "?";

	probe_job(c, &j, NULL, ARGS("--processes", "8"),
		  ARGS("result-fork-on", "40"));
	(void)check_value(&j, "forked", forked, sizeof(forked));
	if (!status_is(&j, "ok", r))
		goto out;
	lr = field(&j, "limits_reached");
	e = json_array_get(lr, 0);
	hint = json_string_value(field(&j, "hint"));
	if (!json_is_array(lr) || e == NULL ||
	    strcmp(json_string_value(json_object_get(e, "limit")) != NULL ?
			   json_string_value(json_object_get(e, "limit")) : "",
		   "processes") != 0)
		check_fail(r, "ok after refused forks (%s of 40 started) but "
			   "limits_reached does not name the process limit",
			   forked);
	else if (hint == NULL || strstr(hint, "incomplete") == NULL)
		check_fail(r, "limits_reached names the process limit but the "
			   "hint does not say the output may be incomplete: "
			   "\"%.160s\"", hint != NULL ? hint : "");
	else
		check_pass(r, "ok with %s of 40 children started under "
			   "--processes 8; limits_reached processes x%"
			   JSON_INTEGER_FORMAT ", the hint says the output may "
			   "be incomplete", forked,
			   json_integer_value(json_object_get(e, "times")));
out:
	check_job_free(&j);
}

/* results.shared_pages_counted_once: a parent holding 64 MiB with four
 * forked children sharing it (320 MiB as a sum of resident sets, about
 * 70 MiB in fact) runs to its end under --memory 128: a page shared after
 * fork counts once (the monitor's proportional set sizes; cgroup v2
 * charges a page once anyway). Issue 23, point 8. */
static void
shared_pages_once(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pool[32] = "?";
	json_t *peak;

	probe_job(c, &j, NULL, ARGS("--memory", "128"),
		  ARGS("result-pool", "64", "4"));
	if (!status_is(&j, "ok", r))
		goto out;
	(void)check_value(&j, "pool", pool, sizeof(pool));
	peak = field(&j, "peak_memory_kb");
	if (strcmp(pool, "64,4") != 0)
		check_fail(r, "the pool did not finish (pool=%s)", pool);
	else
		check_pass(r, "64 MiB shared by a parent and 4 forked children "
			   "(320 MiB of resident sets) ran to its end under "
			   "--memory 128, peak %" JSON_INTEGER_FORMAT " KiB (%s)",
			   json_integer_value(peak),
			   json_string_value(field(&j, "memory_measure")) ?
				   json_string_value(field(&j, "memory_measure")) :
				   "?");
out:
	check_job_free(&j);
}

/* The bytes of "flood line 0\n" up to "flood line N\n" (result-flood). */
static json_int_t
flood_bytes(unsigned last)
{
	char line[64];
	json_int_t n = 0;

	for (unsigned i = 0; i <= last; i++)
		n += snprintf(line, sizeof(line), "flood line %u\n", i);
	return n;
}

/*
 * A flood of lines on stream OUT ("stdout" or "stderr"), about 1 MiB,
 * under --output 4 (the cap of each stream, README.md "Limits"). With
 * KILL ([limits] on_output_limit = kill) it is "output_limit"; by default
 * the job runs to its end and is "ok" (the program's own exit, stockade
 * exit 0), and the last line it wrote is kept. Either way the result
 * keeps at most 4096 bytes of it plus the truncation marker, head first,
 * marks it truncated (and the other stream, which was not, not), and
 * counts what was written (by default exactly: the kept last line says
 * how much that was); the hint says how to get all of it.
 */
static void
flood_capped(struct check_ctx *c, struct check_result *r, const char *out,
	     const char *other, bool kill)
{
	static const char first[] = "flood line 0\n";
	const size_t cap = 4096, most = cap + strlen(RESULT_TRUNC_MARKER);
	const char *want = kill ? "output_limit" : "ok";
	char trunc[32], other_trunc[32], bytes[32], a[16], b[16];
	const char *kept_text, *last;
	struct check_job j;
	unsigned lastno = 0;
	size_t kept;

	snprintf(trunc, sizeof(trunc), "%s_truncated", out);
	snprintf(other_trunc, sizeof(other_trunc), "%s_truncated", other);
	snprintf(bytes, sizeof(bytes), "%s_bytes", out);
	/* 1100 KiB: more than the default cap of 1024 KiB, so a stockade
	 * that left this stream at its default keeps a full MiB. */
	probe_job(c, &j, kill ? "[limits]\non_output_limit = kill\n" : NULL,
		  ARGS("--output", "4"), ARGS("result-flood", "1100", out));
	if (!status_is(&j, want, r))
		goto out;
	kept_text = str_of(&j, out);
	kept = json_string_length(field(&j, out));
	/* The last line kept: "flood line N\n" at the very end. */
	last = kept > 1 ? kept_text + kept - 1 : kept_text;
	while (last > kept_text && last[-1] != '\n')
		last--;
	if (sscanf(last, "flood line %u\n", &lastno) != 1)
		lastno = 0;
	if (kept > most)
		check_fail(r, "status %s but the result keeps %zu bytes of %s "
			   "under a cap of %zu", want, kept, out, cap);
	else if (!json_is_true(field(&j, trunc)) ||
		 !json_is_false(field(&j, other_trunc)))
		check_fail(r, "status %s, %zu bytes of %s kept, but %s %s, "
			   "%s %s", want, kept, out,
			   trunc, shown(&j, trunc, a, sizeof(a)),
			   other_trunc, shown(&j, other_trunc, b, sizeof(b)));
	else if (strncmp(kept_text, first, strlen(first)) != 0 ||
		 strstr(kept_text, RESULT_TRUNC_MARKER) == NULL)
		check_fail(r, "%s kept does not start with the first line and "
			   "show the marker: \"%.80s\"", out, kept_text);
	else if (json_integer_value(field(&j, bytes)) <= (json_int_t)cap)
		check_fail(r, "%s %s: not what was written past the cap",
			   bytes, shown(&j, bytes, a, sizeof(a)));
	else if (!kill && (json_integer_value(field(&j, bytes)) <
			   (json_int_t)1100 * 1024 ||
			   !int_is(&j, bytes, flood_bytes(lastno))))
		check_fail(r, "status ok, but %s %s is not every byte of the "
			   "flood up to its last line kept (\"%.40s\": %"
			   JSON_INTEGER_FORMAT " bytes)", bytes,
			   shown(&j, bytes, a, sizeof(a)), last,
			   flood_bytes(lastno));
	else if (hint_names(&j, want, kill ? "4096 bytes" :
			    "write it to a file in /work", r) &&
		 exit_is(&j, want, kill ? 125 : 0, r))
		check_pass(r, "status %s, %zu of %s bytes of %s kept (cap "
			   "4096 + marker), %s true, %s false%s", want, kept,
			   shown(&j, bytes, a, sizeof(a)), out, trunc,
			   other_trunc, kill ? "" : ", the last line kept");
out:
	check_job_free(&j);
}

/* results.output_capped_and_truncated: stdout flooded under --output 4. */
static void
output_capped(struct check_ctx *c, struct check_result *r)
{
	flood_capped(c, r, "stdout", "stderr", false);
}

/* results.stderr_capped_and_truncated: stderr flooded under --output 4,
 * which caps each stream (README.md, "Limits"). */
static void
stderr_capped(struct check_ctx *c, struct check_result *r)
{
	flood_capped(c, r, "stderr", "stdout", false);
}

/* results.output_limit_when_policy_kills: stdout flooded under
 * --output 4 with [limits] on_output_limit = kill. */
static void
output_killed(struct check_ctx *c, struct check_result *r)
{
	flood_capped(c, r, "stdout", "stderr", true);
}

/* results.file_size_limit_by_sigxfsz: writing 2 MiB under --file-size 1
 * is "file_size_limit" with signal SIGXFSZ (RLIMIT_FSIZE,
 * setrlimit(2)). */
static void
file_size_limit(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char sig[32];

	probe_job(c, &j, NULL, ARGS("--file-size", "1"),
		  ARGS("result-bigfile", "2"));
	if (!status_is(&j, "file_size_limit", r))
		goto out;
	if (strcmp(str_of(&j, "signal"), "SIGXFSZ") != 0)
		check_fail(r, "status file_size_limit with signal %s, not "
			   "\"SIGXFSZ\"", shown(&j, "signal", sig, sizeof(sig)));
	else if (hint_names(&j, "file_size_limit", "1.0 MiB", r) &&
		 exit_is(&j, "file_size_limit", 125, r))
		check_pass(r, "status file_size_limit, signal SIGXFSZ under "
			   "--file-size 1, stockade exit 125");
out:
	check_job_free(&j);
}

/* results.disk_full_on_small_tmp: writing 4 MiB into a 1 MiB /tmp
 * (--tmp-size 1) is "disk_full". */
static void
disk_full(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;

	probe_job(c, &j, NULL, ARGS("--tmp-size", "1"),
		  ARGS("result-filltmp", "4"));
	if (status_is(&j, "disk_full", r) &&
	    hint_names(&j, "disk_full", "/tmp", r) &&
	    exit_is(&j, "disk_full", 125, r))
		check_pass(r, "status disk_full under --tmp-size 1 (detail "
			   "\"%.120s\"), stockade exit 125",
			   str_of(&j, "detail"));
	check_job_free(&j);
}

/* results.crash_names_signal: a write through a null pointer is "crash"
 * with signal SIGSEGV and no exit code, a hint that names the signal,
 * and `stockade run` exits 128 + 11. */
static void
crash_names_signal(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char ec[32], sig[32];

	probe_job(c, &j, NULL, NULL, ARGS("result-segv"));
	if (!status_is(&j, "crash", r))
		goto out;
	if (strcmp(str_of(&j, "signal"), "SIGSEGV") != 0 ||
	    !json_is_null(field(&j, "exit_code")))
		check_fail(r, "status crash with signal %s, exit_code %s",
			   shown(&j, "signal", sig, sizeof(sig)),
			   shown(&j, "exit_code", ec, sizeof(ec)));
	else if (hint_names(&j, "crash", "SIGSEGV", r) &&
		 exit_is(&j, "crash", 139, r))
		check_pass(r, "status crash, signal SIGSEGV, exit_code null, "
			   "stockade exit 139");
out:
	check_job_free(&j);
}

/* results.int80_ends_job_as_policy_violation: an i386 system call
 * (int 0x80) from a 64-bit process ends the job as "policy_violation"
 * with the call in denials (docs/seccomp.md, the foreign ABIs). */
static void
int80_policy_violation(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[64];
	json_t *d;
	size_t i;
	bool listed = false;

	probe_job(c, &j, NULL, NULL, ARGS("result-int80"));
	if (check_value(&j, "int80", v, sizeof(v)) &&
	    strcmp(v, "unsupported") == 0) {
		check_skip(r, "not x86-64: there is no i386 ABI to call");
		goto out;
	}
	if (check_kernel_has_i386_entry() == 0) {
		/* No i386 entry: the instruction faults before any system
		 * call exists for a filter to see (check.h). The job is a
		 * crash by SIGSEGV, exit 139, with no denial. */
		if (!status_is(&j, "crash", r))
			goto out;
		if (json_array_size(field(&j, "denials")) != 0)
			check_fail(r, "int 0x80 faulted, yet the result lists "
				   "denials for a call the kernel never made");
		else if (strcmp(str_of(&j, "signal"), "SIGSEGV") != 0)
			check_fail(r, "status crash by %s, not SIGSEGV",
				   str_of(&j, "signal"));
		else if (hint_names(&j, "crash", "SIGSEGV", r) &&
			 exit_is(&j, "crash", 139, r))
			check_pass(r, "this kernel has no i386 entry (no IA32 "
				   "emulation): int 0x80 faulted outside any "
				   "filter; in the jail status crash, SIGSEGV, "
				   "no denial, stockade exit 139");
		goto out;
	}
	if (!status_is(&j, "policy_violation", r))
		goto out;
	json_array_foreach(field(&j, "denials"), i, d) {
		const char *call = json_string_value(json_object_get(d,
								     "syscall"));

		listed = listed || (call != NULL && strcmp(call, "i386:20") == 0);
	}
	if (!listed)
		check_fail(r, "status policy_violation but denials does not "
			   "list i386:20");
	else if (check_value(&j, "int80", v, sizeof(v)))
		check_fail(r, "status policy_violation but the call returned "
			   "%s and the program went on", v);
	else if (hint_names(&j, "policy_violation", NULL, r) &&
		 exit_is(&j, "policy_violation", 125, r))
		check_pass(r, "status policy_violation, denials lists "
			   "i386:20, the job ended at the call");
out:
	check_job_free(&j);
}

/* results.sandbox_error_on_unbuildable_jail: a policy binding a path
 * that cannot exist (below a regular file) gives a jail the launcher
 * cannot build, the same on every host: "sandbox_error" with a detail
 * that names the path, a hint quoting it, and `stockade run` exits 70. */
static void
sandbox_error(struct check_ctx *c, struct check_result *r)
{
	static const char policy[] =
		"[filesystem]\nro_bind = /etc/passwd/stockade-check-no-dir\n";
	struct check_job j;
	const char *detail;

	probe_job(c, &j, policy, NULL, ARGS("result-exit", "0"));
	if (!status_is(&j, "sandbox_error", r))
		goto out;
	detail = str_of(&j, "detail");
	if (detail[0] == '\0')
		check_fail(r, "status sandbox_error with an empty detail");
	else if (strstr(detail, "/etc/passwd/stockade-check-no-dir") == NULL)
		check_fail(r, "status sandbox_error, but the detail \"%.160s\" "
			   "does not name the bind's path", detail);
	else if (hint_names(&j, "sandbox_error", detail, r) &&
		 exit_is(&j, "sandbox_error", 70, r))
		check_pass(r, "status sandbox_error (detail \"%.160s\"), "
			   "stockade exit 70", detail);
out:
	check_job_free(&j);
}

/* results.cancelled_on_sigint: a job that prints a line and sleeps,
 * its `stockade run` sent SIGINT once the job has begun (as from
 * Ctrl-C): "cancelled", never sandbox_error, with the line printed kept,
 * its figures, a detail naming SIGINT and a hint not to run it again,
 * and `stockade run` exits 130 (128 + SIGINT; README.md, "Exit
 * status"). */
static void
cancelled_on_sigint(struct check_ctx *c, struct check_result *r)
{
	static const char *const job[] = {
		"/bin/sh", "-c", "echo first; : > /work/begun; exec sleep 10",
		NULL,
	};
	char ws[4096], begun[4200];
	struct check_job_opts o;
	struct check_job j;
	int e;

	memset(&j, 0, sizeof(j));
	if ((e = check_workspace(c, ws, sizeof(ws))) < 0) {
		check_fail(r, "cannot make a workspace: %s", strerror(-e));
		return;
	}
	snprintf(begun, sizeof(begun), "%s/begun", ws);
	memset(&o, 0, sizeof(o));
	o.argv = job;
	o.workspace = ws;
	o.no_probe = true;
	o.deadline_ms = JOB_DEADLINE_MS + 5000;
	o.interrupt_on = begun;
	check_job_run(c, &o, &j);
	if (access(begun, F_OK) != 0) {
		char why[512];

		check_fail(r, "the job never began: %s",
			   check_job_summary(&j, why, sizeof(why)));
		goto out;
	}
	if (!status_is(&j, "cancelled", r))
		goto out;
	if (strcmp(j.out, "first\n") != 0)
		check_fail(r, "status cancelled but stdout \"%.100s\", not "
			   "the line printed before the signal", j.out);
	else if (!json_is_integer(field(&j, "cpu_ms")) ||
		 !json_is_integer(field(&j, "peak_memory_kb")) ||
		 json_integer_value(field(&j, "peak_memory_kb")) <= 0)
		check_fail(r, "status cancelled without its figures (cpu_ms, "
			   "peak_memory_kb)");
	else if (strstr(str_of(&j, "detail"), "SIGINT") == NULL)
		check_fail(r, "status cancelled but the detail does not name "
			   "SIGINT: \"%.160s\"", str_of(&j, "detail"));
	else if (hint_names(&j, "cancelled", "do not run it again", r) &&
		 exit_is(&j, "cancelled", 130, r))
		check_pass(r, "status cancelled (detail \"%.100s\"), the line "
			   "printed before kept, stockade exit 130",
			   str_of(&j, "detail"));
out:
	check_job_free(&j);
	(void)unlink(begun);
	(void)rmdir(ws);
}

/* results.json_valid_utf8_from_invalid_output: a job printing ill-formed
 * UTF-8 (RFC 3629) on stdout and stderr still gets a result that is
 * valid JSON, hence valid UTF-8 (RFC 8259 section 8.1), read strictly by
 * jansson, with U+FFFD in place of each bad byte and the text around
 * it kept. */
static void
json_valid_utf8(struct check_ctx *c, struct check_result *r)
{
	static const char *const streams[] = {"stdout", "stderr"};
	struct check_job j;
	json_error_t e;
	json_t *o;

	probe_job(c, &j, NULL, NULL, ARGS("result-badutf8"));
	o = json_loadb(j.proc.out, j.proc.outlen, 0, &e);
	if (o == NULL) {
		check_fail(r, "stockade's stdout (%zu bytes, exit %d) is not "
			   "valid UTF-8 JSON: %s at byte %d", j.proc.outlen,
			   j.proc.status, e.text, e.position);
		goto out;
	}
	json_decref(o);
	if (!status_is(&j, "ok", r))
		goto out;
	for (size_t i = 0; i < 2; i++) {
		const char *s = str_of(&j, streams[i]);

		if (strncmp(s, "begin ", 6) != 0 ||
		    strstr(s, " end \xc3\xa9\n") == NULL ||
		    strstr(s, "\xef\xbf\xbd") == NULL) {
			check_fail(r, "%s in the result is \"%.100s\": not the "
				   "text with U+FFFD for each bad byte",
				   streams[i], s);
			goto out;
		}
	}
	if (hint_names(&j, "ok", NULL, r))
		check_pass(r, "the result parses as strict UTF-8 JSON; stdout "
			   "and stderr show U+FFFD for the bad bytes, the rest "
			   "kept");
out:
	check_job_free(&j);
}

const struct check checks_results[] = {
	{"results.ok_output_complete", "results",
	 "exit 0 is ok, exit_code 0, output whole and not truncated, stockade "
	 "exit 0", ok_output_complete},
	{"results.exit_nonzero_code_exact", "results",
	 "exit 7 is exit_nonzero with exit_code 7 and stockade exit 7",
	 exit_nonzero_code_exact},
	{"results.timeout_at_wall_limit", "results",
	 "a sleep past --timeout 1 is timeout with wall_ms about 1000, exit 124",
	 timeout_at_wall_limit},
	{"results.cpu_limit_at_cpu_time", "results",
	 "two spinners under --cpu-time 1 are cpu_limit with cpu_ms about 1000",
	 cpu_limit_at_cpu_time},
	{"results.descriptors_charged_under_monitor", "results",
	 "monitor: 8 processes of pipes under --memory 32 end memory_limit",
	 descriptors_charged},
	{"results.socket_buffers_charged_under_monitor", "results",
	 "monitor: 100 socket pairs with full queues under --memory 32 end "
	 "memory_limit", sockets_charged},
	{"results.page_tables_counted_under_monitor", "results",
	 "monitor: 48 MiB of page tables under --memory 32 end memory_limit",
	 page_tables_counted},
	{"results.epoll_watches_charged_under_monitor", "results",
	 "monitor: 240,000 epoll watches under --memory 32 end memory_limit",
	 epoll_charged},
	{"results.maps_charged_under_monitor", "results",
	 "monitor: 180,000 memory maps under --memory 32 end memory_limit",
	 maps_charged},
	{"results.locks_charged_under_monitor", "results",
	 "monitor: 200,000 POSIX locks under --memory 32 end memory_limit",
	 locks_charged},
	{"results.memory_limit_at_32_mib", "results",
	 "keeping 256 MiB under --memory 32 is memory_limit", memory_limit_held},
	{"results.process_limit_at_8", "results",
	 "forking 40 under --processes 8 is process_limit", process_limit_held},
	{"results.shared_pages_counted_once", "results",
	 "64 MiB shared with 4 forked children runs under --memory 128",
	 shared_pages_once},
	{"results.limit_words_need_evidence", "results",
	 "\"MemoryError\" far under the memory limit is exit_nonzero",
	 limit_words_need_evidence},
	{"results.limit_reached_when_ok", "results",
	 "refused forks, exit 0: ok, limits_reached processes, hint says so",
	 limit_reached_when_ok},
	{"results.output_capped_and_truncated", "results",
	 "1 MiB under --output 4 runs to its end (ok), at most 4096 bytes "
	 "kept, head and tail, stdout_truncated true, stdout_bytes exact",
	 output_capped},
	{"results.stderr_capped_and_truncated", "results",
	 "1 MiB on stderr under --output 4 runs to its end (ok), at most 4096 "
	 "bytes kept, stderr_truncated true, stderr_bytes exact",
	 stderr_capped},
	{"results.output_limit_when_policy_kills", "results",
	 "1 MiB under --output 4 with on_output_limit = kill is output_limit, "
	 "at most 4096 bytes kept, stdout_truncated true", output_killed},
	{"results.file_size_limit_by_sigxfsz", "results",
	 "2 MiB under --file-size 1 is file_size_limit with SIGXFSZ",
	 file_size_limit},
	{"results.disk_full_on_small_tmp", "results",
	 "4 MiB into a 1 MiB /tmp is disk_full", disk_full},
	{"results.crash_names_signal", "results",
	 "a null write is crash with signal SIGSEGV, a hint naming it, exit 139",
	 crash_names_signal},
	{"results.int80_ends_job_as_policy_violation", "results",
	 "an i386 int 0x80 call ends the job as policy_violation, i386:20 "
	 "denied (a kernel without the i386 entry: crash by SIGSEGV, no "
	 "denial)",
	 int80_policy_violation},
	{"results.sandbox_error_on_unbuildable_jail", "results",
	 "a bind that cannot exist is sandbox_error with a detail, exit 70",
	 sandbox_error},
	{"results.cancelled_on_sigint", "results",
	 "SIGINT to stockade run mid-job is cancelled with the output so far, "
	 "exit 130", cancelled_on_sigint},
	{"results.json_valid_utf8_from_invalid_output", "results",
	 "ill-formed UTF-8 output gives strict UTF-8 JSON with U+FFFD",
	 json_valid_utf8},
	{NULL, NULL, NULL, NULL},
};
