/* result_json.h: a job's result as the JSON object every front returns. */
#ifndef STOCKADE_RESULT_JSON_H
#define STOCKADE_RESULT_JSON_H

#include <stdio.h>

#include <jansson.h>

#include "capture.h"
#include "result.h"

/*
 * Builds the result object (README.md, "Result fields"): status,
 * exit_code, signal, wall_ms, cpu_ms, peak_memory_kb, peak_processes,
 * stdout, stderr, stdout_truncated, stderr_truncated, stdout_bytes,
 * stderr_bytes, limits, enforcement, landlock_abi, denials, layers_off
 * (the names of RES->layers_off, [] for the whole product), detail,
 * hint; docs/result.schema.json is its schema. OUT and ERR are the captures of the two streams
 * (borrowed): kept head and tail with RESULT_TRUNC_MARKER between them,
 * every invalid byte as U+FFFD and every terminal control character but
 * tab, newline and carriage return in caret notation (ESC as "^[",
 * utf8.h term_escape), so that the result is safe to print anywhere.
 * Every other string (the detail, the hint that may quote it) is made
 * safe the same way, whatever bytes RES's detail holds. Returns a new reference the caller releases with
 * json_decref, or NULL with errno ENOMEM when memory runs out (the only
 * failure).
 */
json_t *result_to_json(const struct job_result *res,
    const struct job_limits *lim, const struct capture *out,
    const struct capture *err);

/* The limits as a JSON object keyed by the policy's key names. */
json_t *limits_to_json(const struct job_limits *lim);

/*
 * The hint of a result (job_hint, result.h) into BUF (SIZE bytes), except
 * that a program that ended exit_nonzero after a network failure gets
 * one that says the sandbox has no network and what to do instead: its
 * stderr ERR (borrowed; NULL: not looked at), head and tail as kept,
 * names a failed name lookup or an unreachable network (glibc's, curl's,
 * Node's and Python's messages for EAI_AGAIN, EAI_NONAME, ENETUNREACH,
 * EHOSTUNREACH). Returns BUF.
 */
char *result_hint(const struct job_result *res, const struct job_limits *lim,
    const struct capture *err, char *buf, size_t size);

/* Room for a hint: its fixed words and a whole detail (JOB_MAX_DETAIL). */
#define RESULT_HINT_MAX 2048

/* What stands where the middle of a truncated stream was dropped. */
#define RESULT_TRUNC_MARKER "\n[... stockade: output truncated here ...]\n"

/*
 * Writes the compact text form of the result object RESULT (as made by
 * result_to_json; borrowed) to OUT: what a model reads (docs/tool.md):
 *
 *     status: NAME
 *     hint: HINT
 *     figures: exit_code=N|none signal=NAME|none wall_ms=N cpu_ms=N
 *              peak_memory_kb=N peak_processes=N enforcement=NAME
 *     detail: DETAIL                (only when not empty)
 *     layers off: NAME, NAME        (only in an evaluation)
 *     denied: ...                   (only when the filter refused)
 *     --- stdout (N bytes[, truncated: head and tail kept]) ---
 *     TEXT
 *     --- stderr (N bytes...) ---
 *     TEXT
 *
 * (figures on one line). Returns 0, or -1 when OUT fails (errno set).
 */
int result_print_text(const json_t *result, FILE *out);

/*
 * Writes the one- or two-line summary of `stockade run` without --json
 * to OUT: "stockade: STATUS (exit N | SIGNAL), wall N ms, cpu N ms, peak
 * N KiB", then, unless the status is ok and the output whole
 * (job_output_truncated), "stockade: hint: HINT" made safe for a
 * terminal (result_hint, with ERR, the job's stderr capture or NULL).
 * RES, LIM and ERR are borrowed.
 */
void result_print_summary(const struct job_result *res,
    const struct job_limits *lim, const struct capture *err, FILE *out);

#endif
