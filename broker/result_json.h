/* result_json.h: a job's result as the JSON object every front returns. */
#ifndef STOCKADE_RESULT_JSON_H
#define STOCKADE_RESULT_JSON_H

#include <jansson.h>

#include "capture.h"
#include "result.h"

/*
 * Builds the result object (README.md, "Result fields"): status,
 * exit_code, signal, wall_ms, cpu_ms, peak_memory_kb, stdout, stderr
 * (valid UTF-8, truncation marked), stdout_truncated, stderr_truncated,
 * stdout_bytes, stderr_bytes, limits, enforcement, detail, hint. OUT and
 * ERR are the captures of the two streams (borrowed). Every string is
 * made valid UTF-8 (U+FFFD for invalid bytes), whatever bytes RES's
 * detail holds. Returns a new reference the caller releases with
 * json_decref, or NULL with errno ENOMEM when memory runs out (the only
 * failure).
 */
json_t *result_to_json(const struct job_result *res,
		       const struct job_limits *lim, const struct capture *out,
		       const struct capture *err);

/* The limits as a JSON object keyed by the policy's key names. */
json_t *limits_to_json(const struct job_limits *lim);

#endif
