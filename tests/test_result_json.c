/*
 * test_result_json.c: the JSON result object (broker/result_json.c) for
 * any bytes in the launcher's detail. jansson's json_pack("s") refuses
 * invalid UTF-8 and made `stockade run --json` print nothing; every
 * string must now come out as valid UTF-8, with U+FFFD for what is not.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "capture.h"
#include "result_json.h"

#define FFFD "\xef\xbf\xbd"

static struct capture out, err;
static struct job_limits lim;

static void
setup(void)
{
	cr_assert_eq(capture_init(&out, 1024), 0);
	cr_assert_eq(capture_init(&err, 1024), 0);
	memset(&lim, 0, sizeof(lim));
	lim.wall_ms = 10000;
	lim.cpu_ms = 10000;
	lim.memory_bytes = 512u << 20;
	lim.tmp_bytes = 64u << 20;
	lim.home_bytes = 16u << 20;
	lim.fsize_bytes = 64u << 20;
	lim.stdout_bytes = 1u << 20;
	lim.stderr_bytes = 1u << 20;
	lim.nofile = 256;
	lim.nproc = 64;
}

static void
teardown(void)
{
	capture_free(&out);
	capture_free(&err);
}

TestSuite(result_json, .init = setup, .fini = teardown);

static const char *
jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_string(v), "%s is not a string", key);
	return json_string_value(v);
}

/* Serializes O and parses it back, as a client would; returns the copy. */
static json_t *
reparse(json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	json_error_t e;
	json_t *back;

	cr_assert_not_null(text, "json_dumps refused the object");
	back = json_loads(text, 0, &e);
	cr_assert_not_null(back, "not JSON: %s (%s)", text, e.text);
	cr_assert(json_is_object(back));
	free(text);
	return back;
}

Test(result_json, invalid_utf8_detail_gives_a_valid_object)
{
	struct job_result r;
	json_t *o, *back;

	memset(&r, 0, sizeof(r));
	r.status = JOB_SANDBOX_ERROR;
	r.exit_code = -1;
	r.detail = (char *)(uintptr_t)"\xff\xfe";
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o, "result_to_json returned NULL");
	cr_assert_str_eq(jstr(o, "status"), "sandbox_error");
	cr_assert_str_eq(jstr(o, "detail"), FFFD FFFD);
	/* The hint quotes the detail: sanitized too. */
	cr_assert_str_eq(jstr(o, "hint"),
			 "The sandbox itself failed, not the program: " FFFD FFFD
			 "; tell the user, who may have to fix the host as the "
			 "detail says, and retry only if the cause looks "
			 "passing.");
	back = reparse(o);
	cr_assert_str_eq(jstr(back, "detail"), FFFD FFFD);
	cr_assert_eq(json_object_size(back), 16);
	json_decref(back);
	json_decref(o);
}

/* Every byte value, alone and between ASCII, gives an object that
 * serializes; the valid ones come back unchanged. */
Test(result_json, every_byte_in_detail)
{
	for (int b = 1; b < 256; b++) {
		char detail[8];
		struct job_result r;
		json_t *o, *back;

		snprintf(detail, sizeof(detail), "a%cb", b);
		memset(&r, 0, sizeof(r));
		r.status = JOB_POLICY_VIOLATION;
		r.exit_code = -1;
		r.signal = 31;
		r.detail = detail;
		o = result_to_json(&r, &lim, &out, &err);
		cr_assert_not_null(o, "byte %#x: NULL", b);
		back = reparse(o);
		if (b < 0x80)
			cr_assert_str_eq(jstr(back, "detail"), detail,
					 "byte %#x", b);
		else
			cr_assert_str_eq(jstr(back, "detail"), "a" FFFD "b",
					 "byte %#x", b);
		json_decref(back);
		json_decref(o);
	}
}

/* A hint cut at its 512-byte buffer in the middle of a multibyte
 * character still serializes. */
Test(result_json, hint_cut_inside_a_character)
{
#define PREFIX "The sandbox itself failed, not the program: "
	char detail[1001];
	struct job_result r;
	json_t *o, *back;
	const char *hint;

	for (size_t i = 0; i + 2 <= 1000; i += 2)
		memcpy(detail + i, "\xc3\xa9", 2); /* U+00E9 */
	detail[1000] = '\0';
	for (int shift = 0; shift < 2; shift++) {
		memset(&r, 0, sizeof(r));
		r.status = JOB_SANDBOX_ERROR;
		r.exit_code = -1;
		r.detail = detail + shift;
		o = result_to_json(&r, &lim, &out, &err);
		cr_assert_not_null(o, "shift %d: NULL", shift);
		back = reparse(o);
		hint = jstr(back, "hint");
		cr_assert_eq(strncmp(hint, PREFIX, strlen(PREFIX)), 0, "%s",
			     hint);
		cr_assert_gt(strlen(hint), 400);
		json_decref(back);
		json_decref(o);
	}
}
