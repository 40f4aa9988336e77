/*
 * check_results.h: what the files of the results layer's checks share
 * (check_results.c holds the table, checks_results in check.h, and the
 * checks of output, signals and the result's JSON; check_results_limits.c
 * the checks of the status and the limits; check_results_util.c the
 * helpers below, which read one job's result and fail a check saying
 * what came instead).
 */
#ifndef STOCKADE_CHECK_RESULTS_H
#define STOCKADE_CHECK_RESULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "check.h"

/* Deadline of one job of these checks: the slowest (a 1 s limit) takes
 * about 1.1 s; a stockade that ignores a limit is cut off by its own
 * wall-clock limit (3 s) or this. */
#define JOB_DEADLINE_MS 8000

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/*
 * Runs ./stockade-probe ARGV[0] ARGV[1]... in a `stockade run --json` job
 * with RUN_ARGS (may be NULL) and POLICY (NULL: the embedded default),
 * filling J (the caller frees it with check_job_free). Returns
 * check_job_run's value.
 */
int res_probe_job(struct check_ctx *c, struct check_job *j, const char *policy,
    const char *const *run_args, const char *const *argv);
/* res_probe_job, waiting DEADLINE_MS (milliseconds) for the job instead
 * of JOB_DEADLINE_MS: for a check whose sound verdict may need longer
 * on a loaded host. */
int res_probe_job_within(struct check_ctx *c, struct check_job *j,
    const char *policy, const char *const *run_args, const char *const *argv,
    int deadline_ms);
/* KEY of J's result (borrowed from J), or NULL when J has none. */
json_t *res_field(const struct check_job *j, const char *key);
/* KEY of J's result as text: its integer, its string quoted, "null", or
 * "missing", into BUF of LEN bytes. Returns BUF. */
const char *res_shown(const struct check_job *j, const char *key, char *buf,
    size_t len);
/* True when KEY of J's result is the integer WANT. */
bool res_int_is(const struct check_job *j, const char *key, json_int_t want);
/* KEY of J's result as a string (borrowed from J), or "" when it is not
 * one. */
const char *res_str_of(const struct check_job *j, const char *key);
/* True when J gave a result of status WANT; otherwise fails R saying
 * what came instead. */
bool res_status_is(const struct check_job *j, const char *want,
    struct check_result *r);
/* True when J's hint is not empty and contains NEED (NULL: anything);
 * otherwise fails R quoting it (result.h, job_hint). */
bool res_hint_names(const struct check_job *j, const char *status,
    const char *need, struct check_result *r);
/* True when `stockade run` exited WANT (README.md, "Exit status");
 * otherwise fails R. */
bool res_exit_is(const struct check_job *j, const char *status, int want,
    struct check_result *r);

/*
 * The checks of the status and the limits (check_results_limits.c), each
 * named in checks_results and commented at its definition: each runs
 * its job on C and gives its verdict in R.
 */
void results_ok_output_complete(struct check_ctx *c, struct check_result *r);
void results_exit_nonzero_code_exact(struct check_ctx *c,
    struct check_result *r);
void results_timeout_at_wall_limit(struct check_ctx *c, struct check_result *r);
void results_cpu_limit_at_cpu_time(struct check_ctx *c, struct check_result *r);
void results_memory_limit_held(struct check_ctx *c, struct check_result *r);
void results_descriptors_charged(struct check_ctx *c, struct check_result *r);
void results_sockets_charged(struct check_ctx *c, struct check_result *r);
void results_page_tables_counted(struct check_ctx *c, struct check_result *r);
void results_epoll_charged(struct check_ctx *c, struct check_result *r);
void results_maps_charged(struct check_ctx *c, struct check_result *r);
void results_locks_charged(struct check_ctx *c, struct check_result *r);
void results_process_limit_held(struct check_ctx *c, struct check_result *r);
void results_limit_words_need_evidence(struct check_ctx *c,
    struct check_result *r);
void results_limit_reached_when_ok(struct check_ctx *c, struct check_result *r);
void results_shared_pages_once(struct check_ctx *c, struct check_result *r);

#endif
