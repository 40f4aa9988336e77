/*
 * fuzz_result_net.c: a job's network in its result (broker/jobs/result_net.c,
 * result_add_network; issue 25) from any report the proxy could send.
 *
 * Input: a control byte (its low nibble the job's status, its bits 4 and
 * 5 the report's truncated and proxy_failed), then the bytes of a struct
 * egress_report as they lie in memory (counts, reasons and fields of any
 * value: no NUL, nconn and nrefusal past EGRESS_REPORT_MAX), zero-filled
 * when short. Properties, each an abort when broken:
 *  - result_add_network succeeds and adds "network";
 *  - its lists hold at most EGRESS_REPORT_MAX entries, and every host,
 *    address and detail is printable ASCII without a space (0x21..0x7e);
 *  - the hint holds no control character (no line break: the text form
 *    keeps it on one line);
 *  - the text form's header, up to the stdout section, is lines that each
 *    begin with one of its known keys.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "capture.h"
#include "egress_ctl.h"
#include "fuzz.h"
#include "result_json.h"

static bool
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

static void
check_list(const json_t *list, const char *const *keys)
{
	size_t i;
	json_t *e;

	FUZZ_ASSERT(json_is_array(list));
	FUZZ_ASSERT(json_array_size(list) <= EGRESS_REPORT_MAX);
	json_array_foreach(list, i, e) for (size_t k = 0; keys[k] != NULL; k++)
	    FUZZ_ASSERT(
		printable(json_string_value(json_object_get(e, keys[k]))));
}

/* Every line of TEXT before "--- stdout" begins with a known key. */
static void
check_header(const char *text)
{
	static const char *const keys[] = {"status: ", "hint: ", "figures:",
	    "detail: ", "layers off:", "denied:", "network: ", "connected: ",
	    "refused: ", "rules:", NULL};
	const char *line = text;

	while (line != NULL && *line != '\0' &&
	    strncmp(line, "--- stdout", 10) != 0) {
		bool known = false;

		for (size_t k = 0; keys[k] != NULL && !known; k++)
			known = strncmp(line, keys[k], strlen(keys[k])) == 0;
		FUZZ_ASSERT(known);
		line = strchr(line, '\n');
		line = line != NULL ? line + 1 : NULL;
	}
}

static void
check_result(json_t *o)
{
	static const char *const conn_keys[] = {"host", "address", NULL};
	static const char *const ref_keys[] = {"host", "detail", NULL};
	const json_t *n = json_object_get(o, "network");
	const char *hint = json_string_value(json_object_get(o, "hint"));
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	FUZZ_ASSERT(json_is_object(n));
	check_list(json_object_get(n, "connections"), conn_keys);
	check_list(json_object_get(n, "refusals"), ref_keys);
	FUZZ_ASSERT(hint != NULL);
	for (const char *p = hint; *p != '\0'; p++)
		FUZZ_ASSERT((unsigned char)*p >= 0x20 && *p != 0x7f);
	f = open_memstream(&text, &len);
	FUZZ_ASSERT(f != NULL);
	FUZZ_ASSERT(result_print_text(o, f) == 0);
	FUZZ_ASSERT(fclose(f) == 0);
	check_header(text);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct egress_report rep;
	struct job_limits lim = {.wall_ms = 1000,
	    .stdout_bytes = 1024,
	    .stderr_bytes = 1024,
	    .nproc = 8};
	struct job_result res = {.detail = (char *)(uintptr_t) ""};
	struct result_net net = {&rep, NULL};
	struct capture out, err;
	json_t *o;

	if (size < 1)
		return 0;
	memset(&rep, 0, sizeof(rep));
	memcpy(&rep, data + 1, size - 1 < sizeof(rep) ? size - 1 : sizeof(rep));
	rep.truncated = (data[0] & 0x10) != 0;
	rep.proxy_failed = (data[0] & 0x20) != 0;
	res.status = (enum job_status)((data[0] & 0x0f) % (JOB_STATUS_MAX + 1));
	res.exit_code = res.status == JOB_OK ? 0 : 1;
	capture_init(&out, 64);
	capture_init(&err, 64);
	o = result_to_json(&res, &lim, &out, &err);
	FUZZ_ASSERT(o != NULL);
	FUZZ_ASSERT(result_add_network(o, &res, &lim, &out, &err, &net) == 0);
	check_result(o);
	json_decref(o);
	capture_free(&out);
	capture_free(&err);
	return 0;
}
