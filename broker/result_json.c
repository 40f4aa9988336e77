/* result_json.c: see result_json.h. */
#include "result_json.h"

#include <stdlib.h>

#include "utf8.h"

#define TRUNC_MARKER "\n[... stockade: output truncated here ...]\n"

json_t *
limits_to_json(const struct job_limits *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"wall_time_ms", (json_int_t)l->wall_ms,
		"cpu_time_ms", (json_int_t)l->cpu_ms,
		"memory_mb", (json_int_t)(l->memory_bytes >> 20),
		"processes", (json_int_t)l->nproc,
		"file_size_mb", (json_int_t)(l->fsize_bytes >> 20),
		"open_files", (json_int_t)l->nofile,
		"tmp_mb", (json_int_t)(l->tmp_bytes >> 20),
		"home_mb", (json_int_t)(l->home_bytes >> 20),
		"stdout_kb", (json_int_t)(l->stdout_bytes >> 10),
		"stderr_kb", (json_int_t)(l->stderr_bytes >> 10));
}

/* A capture as a JSON string of valid UTF-8. */
static json_t *
stream_json(const struct capture *c)
{
	size_t raw_len, len;
	uint8_t *raw;
	char *text;
	json_t *j;

	raw = capture_collect(c, TRUNC_MARKER, &raw_len);
	if (raw == NULL)
		return NULL;
	text = utf8_sanitize(raw, raw_len, &len);
	free(raw);
	if (text == NULL)
		return NULL;
	j = json_stringn_nocheck(text, len);
	free(text);
	return j;
}

json_t *
result_to_json(const struct job_result *res, const struct job_limits *lim,
	       const struct capture *out, const struct capture *err)
{
	char hint[512];
	const char *sig = res->signal ? signal_name(res->signal) : NULL;
	json_t *o;

	job_hint(res, lim, hint, sizeof(hint));
	o = json_pack("{s:s,s:o,s:o,s:I,s:I,s:I,s:o,s:o,s:b,s:b,s:I,s:I,"
		      "s:o,s:s,s:s,s:s}",
		"status", job_status_name(res->status),
		"exit_code", res->exit_code >= 0 ?
			json_integer(res->exit_code) : json_null(),
		"signal", sig ? json_string(sig) : json_null(),
		"wall_ms", (json_int_t)res->wall_ms,
		"cpu_ms", (json_int_t)res->cpu_ms,
		"peak_memory_kb", (json_int_t)res->peak_memory_kb,
		"stdout", stream_json(out),
		"stderr", stream_json(err),
		"stdout_truncated", capture_truncated(out),
		"stderr_truncated", capture_truncated(err),
		"stdout_bytes", (json_int_t)res->stdout_bytes,
		"stderr_bytes", (json_int_t)res->stderr_bytes,
		"limits", limits_to_json(lim),
		"enforcement", "rlimit",
		"detail", res->detail ? res->detail : "",
		"hint", hint);
	return o;
}
