/*
 * check_results.c: the checks of the results layer (check.h): one job
 * per status of the result (docs/results.md, README.md "Result fields"
 * and "Exit status"), each made by stockade-probe (probe_results.c)
 * under a small limit, and the status, the figure that shows it, the
 * exit status of `stockade run` and a hint that names the figure
 * compared with what a sound stockade reports; and the result's JSON
 * read strictly (jansson refuses ill-formed UTF-8) after a job that
 * printed ill-formed UTF-8. The policy layer is check_policy.c.
 *
 * This file holds the table (checks_results, in the order `stockade
 * check --list` shows) and the checks of output, signals and the JSON;
 * the checks of the status and the limits are in check_results_limits.c
 * and the helpers in check_results_util.c (check_results.h).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_results.h"
#include "result_json.h"

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
	res_probe_job(c, &j, kill ? "[limits]\non_output_limit = kill\n" : NULL,
	    ARGS("--output", "4"), ARGS("result-flood", "1100", out));
	if (!res_status_is(&j, want, r))
		goto out;
	kept_text = res_str_of(&j, out);
	kept = json_string_length(res_field(&j, out));
	/* The last line kept: "flood line N\n" at the very end. */
	last = kept > 1 ? kept_text + kept - 1 : kept_text;
	while (last > kept_text && last[-1] != '\n')
		last--;
	if (sscanf(last, "flood line %u\n", &lastno) != 1)
		lastno = 0;
	if (kept > most)
		check_fail(r,
		    "status %s but the result keeps %zu bytes of %s "
		    "under a cap of %zu",
		    want, kept, out, cap);
	else if (!json_is_true(res_field(&j, trunc)) ||
	    !json_is_false(res_field(&j, other_trunc)))
		check_fail(r,
		    "status %s, %zu bytes of %s kept, but %s %s, "
		    "%s %s",
		    want, kept, out, trunc, res_shown(&j, trunc, a, sizeof(a)),
		    other_trunc, res_shown(&j, other_trunc, b, sizeof(b)));
	else if (strncmp(kept_text, first, strlen(first)) != 0 ||
	    strstr(kept_text, RESULT_TRUNC_MARKER) == NULL)
		check_fail(r,
		    "%s kept does not start with the first line and "
		    "show the marker: \"%.80s\"",
		    out, kept_text);
	else if (json_integer_value(res_field(&j, bytes)) <= (json_int_t)cap)
		check_fail(r, "%s %s: not what was written past the cap", bytes,
		    res_shown(&j, bytes, a, sizeof(a)));
	else if (!kill &&
	    (json_integer_value(res_field(&j, bytes)) <
		    (json_int_t)1100 * 1024 ||
		!res_int_is(&j, bytes, flood_bytes(lastno))))
		check_fail(r,
		    "status ok, but %s %s is not every byte of the "
		    "flood up to its last line kept (\"%.40s\": "
		    "%" JSON_INTEGER_FORMAT " bytes)",
		    bytes, res_shown(&j, bytes, a, sizeof(a)), last,
		    flood_bytes(lastno));
	else if (res_hint_names(&j, want,
		     kill ? "4096 bytes" : "write it to a file in /work", r) &&
	    res_exit_is(&j, want, kill ? 125 : 0, r))
		check_pass(r,
		    "status %s, %zu of %s bytes of %s kept (cap "
		    "4096 + marker), %s true, %s false%s",
		    want, kept, res_shown(&j, bytes, a, sizeof(a)), out, trunc,
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

	res_probe_job(c, &j, NULL, ARGS("--file-size", "1"),
	    ARGS("result-bigfile", "2"));
	if (!res_status_is(&j, "file_size_limit", r))
		goto out;
	if (strcmp(res_str_of(&j, "signal"), "SIGXFSZ") != 0)
		check_fail(r,
		    "status file_size_limit with signal %s, not "
		    "\"SIGXFSZ\"",
		    res_shown(&j, "signal", sig, sizeof(sig)));
	else if (res_hint_names(&j, "file_size_limit", "1.0 MiB", r) &&
	    res_exit_is(&j, "file_size_limit", 125, r))
		check_pass(r,
		    "status file_size_limit, signal SIGXFSZ under "
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

	res_probe_job(c, &j, NULL, ARGS("--tmp-size", "1"),
	    ARGS("result-filltmp", "4"));
	if (res_status_is(&j, "disk_full", r) &&
	    res_hint_names(&j, "disk_full", "/tmp", r) &&
	    res_exit_is(&j, "disk_full", 125, r))
		check_pass(r,
		    "status disk_full under --tmp-size 1 (detail "
		    "\"%.120s\"), stockade exit 125",
		    res_str_of(&j, "detail"));
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

	res_probe_job(c, &j, NULL, NULL, ARGS("result-segv"));
	if (!res_status_is(&j, "crash", r))
		goto out;
	if (strcmp(res_str_of(&j, "signal"), "SIGSEGV") != 0 ||
	    !json_is_null(res_field(&j, "exit_code")))
		check_fail(r, "status crash with signal %s, exit_code %s",
		    res_shown(&j, "signal", sig, sizeof(sig)),
		    res_shown(&j, "exit_code", ec, sizeof(ec)));
	else if (res_hint_names(&j, "crash", "SIGSEGV", r) &&
	    res_exit_is(&j, "crash", 139, r))
		check_pass(r,
		    "status crash, signal SIGSEGV, exit_code null, "
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

	res_probe_job(c, &j, NULL, NULL, ARGS("result-int80"));
	if (check_value(&j, "int80", v, sizeof(v)) &&
	    strcmp(v, "unsupported") == 0) {
		check_skip(r, "not x86-64: there is no i386 ABI to call");
		goto out;
	}
	if (check_kernel_has_i386_entry() == 0) {
		/* No i386 entry: the instruction faults before any system
		 * call exists for a filter to see (check.h). The job is a
		 * crash by SIGSEGV, exit 139, with no denial. */
		if (!res_status_is(&j, "crash", r))
			goto out;
		if (json_array_size(res_field(&j, "denials")) != 0)
			check_fail(r,
			    "int 0x80 faulted, yet the result lists "
			    "denials for a call the kernel never made");
		else if (strcmp(res_str_of(&j, "signal"), "SIGSEGV") != 0)
			check_fail(r, "status crash by %s, not SIGSEGV",
			    res_str_of(&j, "signal"));
		else if (res_hint_names(&j, "crash", "SIGSEGV", r) &&
		    res_exit_is(&j, "crash", 139, r))
			check_pass(r,
			    "this kernel has no i386 entry (no IA32 "
			    "emulation): int 0x80 faulted outside any "
			    "filter; in the jail status crash, SIGSEGV, "
			    "no denial, stockade exit 139");
		goto out;
	}
	if (!res_status_is(&j, "policy_violation", r))
		goto out;
	json_array_foreach(res_field(&j, "denials"), i, d)
	{
		const char *call = json_string_value(
		    json_object_get(d, "syscall"));

		listed = listed ||
		    (call != NULL && strcmp(call, "i386:20") == 0);
	}
	if (!listed)
		check_fail(r,
		    "status policy_violation but denials does not "
		    "list i386:20");
	else if (check_value(&j, "int80", v, sizeof(v)))
		check_fail(r,
		    "status policy_violation but the call returned "
		    "%s and the program went on",
		    v);
	else if (res_hint_names(&j, "policy_violation", NULL, r) &&
	    res_exit_is(&j, "policy_violation", 125, r))
		check_pass(r,
		    "status policy_violation, denials lists "
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

	res_probe_job(c, &j, policy, NULL, ARGS("result-exit", "0"));
	if (!res_status_is(&j, "sandbox_error", r))
		goto out;
	detail = res_str_of(&j, "detail");
	if (detail[0] == '\0')
		check_fail(r, "status sandbox_error with an empty detail");
	else if (strstr(detail, "/etc/passwd/stockade-check-no-dir") == NULL)
		check_fail(r,
		    "status sandbox_error, but the detail \"%.160s\" "
		    "does not name the bind's path",
		    detail);
	else if (res_hint_names(&j, "sandbox_error", detail, r) &&
	    res_exit_is(&j, "sandbox_error", 70, r))
		check_pass(r,
		    "status sandbox_error (detail \"%.160s\"), "
		    "stockade exit 70",
		    detail);
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
	    "/bin/sh",
	    "-c",
	    "echo first; M=stockade-check; "
	    "exec sh -c 'sleep 10' \"$M-begun-$PPID\"",
	    NULL,
	};
	char ws[4096], begun[64];
	struct check_job_opts o;
	struct check_job j;
	int e;

	memset(&j, 0, sizeof(j));
	if ((e = check_workspace(c, ws, sizeof(ws))) < 0) {
		check_fail(r, "cannot make a workspace: %s", strerror(-e));
		return;
	}
	/* The job's mark, shown once it has begun (check.h, interrupt_on):
	 * its $PPID is jail init, pid 1 of its pid namespace. */
	snprintf(begun, sizeof(begun), "stockade-check-begun-1");
	memset(&o, 0, sizeof(o));
	o.argv = job;
	o.workspace = ws;
	o.no_probe = true;
	o.deadline_ms = JOB_DEADLINE_MS + 5000;
	o.interrupt_on = begun;
	check_job_run(c, &o, &j);
	if (!j.proc.interrupt_sent) {
		char why[512];

		check_fail(r, "the job never began: %s",
		    check_job_summary(&j, why, sizeof(why)));
		goto out;
	}
	if (!res_status_is(&j, "cancelled", r))
		goto out;
	if (strcmp(j.out, "first\n") != 0)
		check_fail(r,
		    "status cancelled but stdout \"%.100s\", not "
		    "the line printed before the signal",
		    j.out);
	else if (!json_is_integer(res_field(&j, "cpu_ms")) ||
	    !json_is_integer(res_field(&j, "peak_memory_kb")) ||
	    json_integer_value(res_field(&j, "peak_memory_kb")) <= 0)
		check_fail(r,
		    "status cancelled without its figures (cpu_ms, "
		    "peak_memory_kb)");
	else if (strstr(res_str_of(&j, "detail"), "SIGINT") == NULL)
		check_fail(r,
		    "status cancelled but the detail does not name "
		    "SIGINT: \"%.160s\"",
		    res_str_of(&j, "detail"));
	else if (res_hint_names(&j, "cancelled", "do not run it again", r) &&
	    res_exit_is(&j, "cancelled", 130, r))
		check_pass(r,
		    "status cancelled (detail \"%.100s\"), the line "
		    "printed before kept, stockade exit 130",
		    res_str_of(&j, "detail"));
out:
	check_job_free(&j);
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

	res_probe_job(c, &j, NULL, NULL, ARGS("result-badutf8"));
	o = json_loadb(j.proc.out, j.proc.outlen, 0, &e);
	if (o == NULL) {
		check_fail(r,
		    "stockade's stdout (%zu bytes, exit %d) is not "
		    "valid UTF-8 JSON: %s at byte %d",
		    j.proc.outlen, j.proc.status, e.text, e.position);
		goto out;
	}
	json_decref(o);
	if (!res_status_is(&j, "ok", r))
		goto out;
	for (size_t i = 0; i < 2; i++) {
		const char *s = res_str_of(&j, streams[i]);

		if (strncmp(s, "begin ", 6) != 0 ||
		    strstr(s, " end \xc3\xa9\n") == NULL ||
		    strstr(s, "\xef\xbf\xbd") == NULL) {
			check_fail(r,
			    "%s in the result is \"%.100s\": not the "
			    "text with U+FFFD for each bad byte",
			    streams[i], s);
			goto out;
		}
	}
	if (res_hint_names(&j, "ok", NULL, r))
		check_pass(r,
		    "the result parses as strict UTF-8 JSON; stdout "
		    "and stderr show U+FFFD for the bad bytes, the rest "
		    "kept");
out:
	check_job_free(&j);
}

const struct check checks_results[] = {
    {"results.ok_output_complete", "results",
	"exit 0 is ok, exit_code 0, output whole and not truncated, stockade "
	"exit 0",
	results_ok_output_complete},
    {"results.exit_nonzero_code_exact", "results",
	"exit 7 is exit_nonzero with exit_code 7 and stockade exit 7",
	results_exit_nonzero_code_exact},
    {"results.timeout_at_wall_limit", "results",
	"a sleep past --timeout 1 is timeout with wall_ms about 1000, exit 124",
	results_timeout_at_wall_limit},
    {"results.cpu_limit_at_cpu_time", "results",
	"two spinners under --cpu-time 1 are cpu_limit with cpu_ms about 1000",
	results_cpu_limit_at_cpu_time},
    {"results.descriptors_charged_under_monitor", "results",
	"monitor: 8 processes of pipes under --memory 32 end memory_limit",
	results_descriptors_charged},
    {"results.socket_buffers_charged_under_monitor", "results",
	"monitor: 100 socket pairs with full queues under --memory 32 end "
	"memory_limit",
	results_sockets_charged},
    {"results.page_tables_counted_under_monitor", "results",
	"monitor: 48 MiB of page tables under --memory 32 end memory_limit",
	results_page_tables_counted},
    {"results.epoll_watches_charged_under_monitor", "results",
	"monitor: 240,000 epoll watches under --memory 32 end memory_limit",
	results_epoll_charged},
    {"results.maps_charged_under_monitor", "results",
	"monitor: 180,000 memory maps under --memory 32 end memory_limit",
	results_maps_charged},
    {"results.locks_charged_under_monitor", "results",
	"monitor: 200,000 POSIX locks under --memory 32 end memory_limit",
	results_locks_charged},
    {"results.memory_limit_at_32_mib", "results",
	"keeping 256 MiB under --memory 32 is memory_limit",
	results_memory_limit_held},
    {"results.process_limit_at_8", "results",
	"forking 40 under --processes 8 is process_limit",
	results_process_limit_held},
    {"results.shared_pages_counted_once", "results",
	"64 MiB shared with 4 forked children runs under --memory 128",
	results_shared_pages_once},
    {"results.limit_words_need_evidence", "results",
	"\"MemoryError\" far under the memory limit is exit_nonzero",
	results_limit_words_need_evidence},
    {"results.limit_reached_when_ok", "results",
	"refused forks, exit 0: ok, limits_reached processes, hint says so",
	results_limit_reached_when_ok},
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
	"at most 4096 bytes kept, stdout_truncated true",
	output_killed},
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
	"exit 130",
	cancelled_on_sigint},
    {"results.json_valid_utf8_from_invalid_output", "results",
	"ill-formed UTF-8 output gives strict UTF-8 JSON with U+FFFD",
	json_valid_utf8},
    {NULL, NULL, NULL, NULL},
};
