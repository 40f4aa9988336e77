/*
 * test_result_json.c: the JSON result object (broker/jobs/result_json.c) for
 * any bytes in the launcher's detail. jansson's json_pack("s") refuses
 * invalid UTF-8 and made `stockade run --json` print nothing; every
 * string must now come out as valid UTF-8, with U+FFFD for what is not.
 * Issue 4: the fields of /tmp/s/issue4.md ("The result object":
 * peak_processes, enforcement, limits.workspace_mb and cpu_percent),
 * streams safe for a terminal (caret notation for controls), the
 * truncation marker, and the compact text form (result_print_text).
 * Issue 5 (wire version 3): "landlock_abi" and "denials" after
 * "enforcement", the denials in order, and the "denied:" line of the
 * text form.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "capture.h"
#include "result_json.h"
#include "utf8.h"

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
	lim.cpu_percent = 250;
	lim.workspace_bytes = (UINT64_C(100) << 20) +
	    5; /* 100 MiB, rounded down */
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
	r.detail = (char *)(uintptr_t) "\xff\xfe";
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o, "result_to_json returned NULL");
	cr_assert_str_eq(jstr(o, "status"), "sandbox_error");
	cr_assert_str_eq(jstr(o, "detail"), FFFD FFFD);
	/* The hint quotes the detail: sanitized too. */
	cr_assert_str_eq(jstr(o, "hint"),
	    "The sandbox itself failed, not the program: " FFFD FFFD
	    "; tell the user, who may have to fix the host as the "
	    "detail says, and retry only if the cause looks "
	    "temporary.");
	back = reparse(o);
	cr_assert_str_eq(jstr(back, "detail"), FFFD FFFD);
	cr_assert_eq(json_object_size(back), 22);
	json_decref(back);
	json_decref(o);
}

/* Every byte value, alone and between ASCII, gives an object that
 * serializes; printable ASCII and tab come back unchanged (the wire
 * refuses other controls in a detail: test_proto.c). */
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
		/* Other controls: the object serializes (reparse), no more. */
		if (b >= 0x80)
			cr_assert_str_eq(jstr(back, "detail"), "a" FFFD "b",
			    "byte %#x", b);
		else if ((b >= 0x20 && b < 0x7f) || b == '\t')
			cr_assert_str_eq(jstr(back, "detail"), detail,
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

/* ---- issue 4: the new fields ---- */

static json_int_t
jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_integer(v), "%s is not an integer", key);
	return json_integer_value(v);
}

/* Every key of the result object and of its limits, with its type, and
 * the new figures where the struct put them. */
Test(result_json, every_key_and_the_new_figures)
{
	static const char *const keys[] = {
	    "status",
	    "exit_code",
	    "signal",
	    "wall_ms",
	    "cpu_ms",
	    "peak_memory_kb",
	    "memory_measure",
	    "peak_processes",
	    "limits_reached",
	    "stdout",
	    "stderr",
	    "stdout_truncated",
	    "stderr_truncated",
	    "stdout_bytes",
	    "stderr_bytes",
	    "limits",
	    "enforcement",
	    "landlock_abi",
	    "denials",
	    "layers_off",
	    "detail",
	    "hint",
	};
	static const char *const limit_keys[] = {
	    "wall_time_ms",
	    "cpu_time_ms",
	    "memory_mb",
	    "processes",
	    "file_size_mb",
	    "open_files",
	    "tmp_mb",
	    "home_mb",
	    "workspace_mb",
	    "stdout_kb",
	    "stderr_kb",
	    "cpu_percent",
	};
	struct job_result r;
	json_t *o, *back, *l, *v;
	const char *key;
	size_t at;
	char *text;

	memset(&r, 0, sizeof(r));
	r.status = JOB_PROCESS_LIMIT;
	r.exit_code = 1;
	r.wall_ms = 1500;
	r.cpu_ms = 700;
	r.peak_memory_kb = 12345;
	r.peak_processes = 65;
	r.enforcement = ENFORCE_MONITOR;
	r.stdout_bytes = 3;
	r.stderr_bytes = (UINT64_C(1) << 33) + 1; /* past 32 bits */
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	back = reparse(o);
	cr_assert_eq(json_object_size(back), sizeof(keys) / sizeof(keys[0]));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert_not_null(json_object_get(back, keys[i]), "%s missing",
		    keys[i]);
	cr_assert_str_eq(jstr(back, "status"), "process_limit");
	cr_assert_eq(jint(back, "exit_code"), 1);
	cr_assert(json_is_null(json_object_get(back, "signal")));
	cr_assert_eq(jint(back, "peak_processes"), 65);
	cr_assert_eq(jint(back, "peak_memory_kb"), 12345);
	cr_assert_eq(jint(back, "stderr_bytes"), (json_int_t)r.stderr_bytes);
	cr_assert_str_eq(jstr(back, "enforcement"), "monitor");
	cr_assert(strstr(jstr(back, "hint"), "bounded pool") != NULL);
	/* No Landlock and no denial: 0 and an empty array, never null. */
	cr_assert_eq(jint(back, "landlock_abi"), 0);
	v = json_object_get(back, "denials");
	cr_assert(json_is_array(v), "denials is not an array");
	cr_assert_eq(json_array_size(v), 0);
	/* The product: no layer off, an empty array (issue 6). */
	v = json_object_get(back, "layers_off");
	cr_assert(json_is_array(v), "layers_off is not an array");
	cr_assert_eq(json_array_size(v), 0);

	/* The keys in this order, in the object and in its text. */
	at = 0;
	json_object_foreach(o, key, v)
	{
		cr_assert_lt(at, sizeof(keys) / sizeof(keys[0]));
		cr_assert_str_eq(key, keys[at], "key %zu", at);
		at++;
	}
	cr_assert_eq(at, sizeof(keys) / sizeof(keys[0]));
	text = json_dumps(o, JSON_COMPACT);
	cr_assert_not_null(text);
	cr_assert_not_null(strstr(text,
			       "\"enforcement\":\"monitor\","
			       "\"landlock_abi\":0,\"denials\":[],"
			       "\"layers_off\":[],\"detail\":"),
	    "%s", text);
	free(text);

	l = json_object_get(back, "limits");
	cr_assert(json_is_object(l));
	cr_assert_eq(json_object_size(l),
	    sizeof(limit_keys) / sizeof(limit_keys[0]));
	for (size_t i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++)
		cr_assert(json_is_integer(json_object_get(l, limit_keys[i])),
		    "limits.%s missing or not an integer", limit_keys[i]);
	cr_assert_eq(jint(l, "workspace_mb"), 100);
	cr_assert_eq(jint(l, "cpu_percent"), 250);
	cr_assert_eq(jint(l, "processes"), 64);
	cr_assert_eq(jint(l, "memory_mb"), 512);
	cr_assert_eq(jint(l, "stdout_kb"), 1024);
	json_decref(back);
	json_decref(o);

	/* cpu_percent 0 is "none" and still an integer. */
	lim.cpu_percent = 0;
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	cr_assert_eq(jint(json_object_get(o, "limits"), "cpu_percent"), 0);
	json_decref(o);
}

Test(result_json, enforcement_names)
{
	static const struct {
		enum job_enforcement e;
		const char *name;
	} t[] = {
	    {ENFORCE_MONITOR, "monitor"},
	    {ENFORCE_CGROUP2, "cgroup2"},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct job_result r;
		json_t *o;

		memset(&r, 0, sizeof(r));
		r.status = JOB_OK;
		r.enforcement = t[i].e;
		o = result_to_json(&r, &lim, &out, &err);
		cr_assert_not_null(o);
		cr_assert_str_eq(jstr(o, "enforcement"), t[i].name);
		json_decref(o);
	}
}

/* ---- issue 5: landlock_abi and denials ---- */

static void
set_denial(struct job_denial *d, const char *name, uint32_t count,
    uint64_t first_ms)
{
	cr_assert_lt(strlen(name), sizeof(d->syscall));
	snprintf(d->syscall, sizeof(d->syscall), "%s", name);
	d->count = count;
	d->first_ms = first_ms;
}

Test(result_json, landlock_abi_is_an_integer)
{
	static const int32_t abis[] = {0, 6, 1000};

	for (size_t i = 0; i < sizeof(abis) / sizeof(abis[0]); i++) {
		struct job_result r;
		json_t *o, *back;

		memset(&r, 0, sizeof(r));
		r.status = JOB_OK;
		r.enforcement = ENFORCE_CGROUP2;
		r.landlock_abi = abis[i];
		o = result_to_json(&r, &lim, &out, &err);
		cr_assert_not_null(o);
		back = reparse(o);
		cr_assert_eq(jint(back, "landlock_abi"), abis[i]);
		json_decref(back);
		json_decref(o);
	}
}

/* Each denial an object of exactly syscall (string), count and first_ms
 * (integers), in that order, the array in the struct's order. */
Test(result_json, denials_in_order)
{
	static const char *const entry_keys[] = {"syscall", "count",
	    "first_ms"};
	static const struct {
		const char *name;
		uint32_t count;
		uint64_t first_ms;
	} t[] = {
	    {"ptrace", 2, 12},
	    {"i386:20", 1, 0},
	    {"abcdefghijklmnopqrstuvwxyz_:059", UINT32_MAX,
		(uint64_t)INT64_MAX},
	    {"bpf", 7, 1500},
	};
	struct job_result r;
	json_t *o, *back, *a, *d, *v;
	const char *key;
	size_t at;

	memset(&r, 0, sizeof(r));
	r.status = JOB_POLICY_VIOLATION;
	r.exit_code = -1;
	r.signal = SIGSYS;
	r.enforcement = ENFORCE_MONITOR;
	r.landlock_abi = 6;
	r.ndenials = sizeof(t) / sizeof(t[0]);
	for (size_t i = 0; i < r.ndenials; i++)
		set_denial(&r.denials[i], t[i].name, t[i].count, t[i].first_ms);
	/* An entry past ndenials is not shown. */
	set_denial(&r.denials[r.ndenials], "reboot", 1, 1);
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	back = reparse(o);
	a = json_object_get(back, "denials");
	cr_assert(json_is_array(a));
	cr_assert_eq(json_array_size(a), r.ndenials);
	for (size_t i = 0; i < r.ndenials; i++) {
		d = json_array_get(a, i);
		cr_assert(json_is_object(d), "denial %zu", i);
		cr_assert_eq(json_object_size(d), 3, "denial %zu", i);
		at = 0;
		json_object_foreach(d, key, v)
		{
			cr_assert_str_eq(key, entry_keys[at], "denial %zu", i);
			at++;
		}
		cr_assert_str_eq(jstr(d, "syscall"), t[i].name);
		cr_assert_eq(jint(d, "count"), (json_int_t)t[i].count);
		cr_assert_eq(jint(d, "first_ms"), (json_int_t)t[i].first_ms);
	}
	cr_assert_eq(jint(back, "landlock_abi"), 6);
	json_decref(back);
	json_decref(o);
}

/* The most denials a RESULT carries, all shown. */
Test(result_json, thirty_two_denials)
{
	struct job_result r;
	char name[JOB_DENIAL_NAME];
	json_t *o, *a;

	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.enforcement = ENFORCE_MONITOR;
	r.ndenials = JOB_MAX_DENIALS;
	for (uint32_t i = 0; i < JOB_MAX_DENIALS; i++) {
		snprintf(name, sizeof(name), "call%u", i);
		set_denial(&r.denials[i], name, i + 1, 10u * i);
	}
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	a = json_object_get(o, "denials");
	cr_assert_eq(json_array_size(a), JOB_MAX_DENIALS);
	for (uint32_t i = 0; i < JOB_MAX_DENIALS; i++) {
		snprintf(name, sizeof(name), "call%u", i);
		cr_assert_str_eq(jstr(json_array_get(a, i), "syscall"), name);
		cr_assert_eq(jint(json_array_get(a, i), "count"), i + 1);
		cr_assert_eq(jint(json_array_get(a, i), "first_ms"), 10 * i);
	}
	json_decref(o);
}

/* ---- issue 4: streams safe for a terminal ---- */

/*
 * True when S[0..N) is valid UTF-8 (utf8_decode, RFC 3629) with no
 * control character but tab, newline and carriage return: no C0, no
 * DEL, no C1 (U+0080..U+009F). WHY gets the offset of the first fault.
 */
static bool
terminal_safe(const char *s, size_t n, size_t *why)
{
	size_t i = 0;

	while (i < n) {
		uint32_t cp;
		size_t k = s[i] == '\0' ? 0 : utf8_decode(s + i, n - i, &cp);

		*why = i;
		if (k == 0)
			return false;
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
			return false;
		i += k;
	}
	return true;
}

#define HOSTILE                                                                \
	"red:\x1b[31mX\x1b[0m " /* SGR colours */                              \
	"osc52:\x1b]52;c;SGVsbG8=\x07 " /* clipboard write, BEL-ended */       \
	"osc0:\x1b]0;pwned\x1b\\ " /* retitle, ST-ended */                     \
	"rawcsi:\x9b"                                                          \
	"2J " /* C1 CSI as a raw byte */                                       \
	"utfcsi:\xc2\x9b"                                                      \
	"2J " /* C1 CSI as UTF-8 (U+009B) */                                   \
	"nel:\xc2\x85 " /* U+0085 NEL */                                       \
	"bad:\xff\xfe\xc0\xaf\xed\xa0\x80 " /* invalid, overlong, surrogate */ \
	"cut:\xe2\x82 " /* a truncated sequence */                             \
	"nul:\x00 del:\x7f bs:\x08 cr:\r tab:\t nbsp:\xc2\xa0 e:\xc3\xa9\n"

#define HOSTILE_SHOWN                                 \
	"red:^[[31mX^[[0m "                           \
	"osc52:^[]52;c;SGVsbG8=^G "                   \
	"osc0:^[]0;pwned^[\\ "                        \
	"rawcsi:" FFFD "2J "                          \
	"utfcsi:^[[2J "                               \
	"nel:^[E "                                    \
	"bad:" FFFD FFFD FFFD FFFD FFFD FFFD FFFD " " \
	"cut:" FFFD FFFD " "                          \
	"nul:" FFFD " del:^? bs:^H cr:\r tab:\t nbsp:\xc2\xa0 e:\xc3\xa9\n"

Test(result_json, hostile_stream_is_terminal_safe)
{
	static const char hostile[] = HOSTILE;
	struct job_result r;
	json_t *o, *back;
	const char *s;
	size_t why;

	capture_add(&out, (const uint8_t *)hostile, sizeof(hostile) - 1);
	capture_add(&err, (const uint8_t *)hostile, sizeof(hostile) - 1);
	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.enforcement = ENFORCE_MONITOR;
	r.stdout_bytes = r.stderr_bytes = sizeof(hostile) - 1;
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	/* json_loads refuses invalid UTF-8: the round trip is one proof. */
	back = reparse(o);
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "stderr" : "stdout";
		json_t *v = json_object_get(back, key);

		s = jstr(back, key);
		cr_assert(terminal_safe(s, json_string_length(v), &why),
		    "%s unsafe at byte %zu: \"%s\"", key, why, s);
		cr_assert_str_eq(s, HOSTILE_SHOWN, "%s", key);
		cr_assert_eq(json_string_length(v), strlen(HOSTILE_SHOWN));
	}
	cr_assert(json_is_false(json_object_get(back, "stdout_truncated")));
	json_decref(back);
	json_decref(o);
}

/* Every byte value, alone, and every C1 control as UTF-8, in a stream:
 * valid UTF-8 without a control out, whatever went in. */
Test(result_json, every_byte_in_a_stream_is_terminal_safe)
{
	struct capture big;
	struct job_result r;
	json_t *o;
	const char *s;
	size_t why;

	cr_assert_eq(capture_init(&big, 4096), 0);
	for (int b = 0; b < 256; b++) {
		uint8_t x[3] = {'<', (uint8_t)b, '>'};

		capture_add(&big, x, sizeof(x));
	}
	for (int c = 0x80; c <= 0x9f; c++) {
		uint8_t x[3] = {0xc2, (uint8_t)c, ' '};

		capture_add(&big, x, sizeof(x));
	}
	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.enforcement = ENFORCE_MONITOR;
	o = result_to_json(&r, &lim, &big, &err);
	cr_assert_not_null(o);
	s = jstr(o, "stdout");
	cr_assert(terminal_safe(s,
		      json_string_length(json_object_get(o, "stdout")), &why),
	    "unsafe at byte %zu", why);
	cr_assert_not_null(strstr(s, "<^[>"), "ESC not in caret form");
	cr_assert_not_null(strstr(s, "<^?>"), "DEL not in caret form");
	cr_assert_not_null(strstr(s, "<\t>"));
	cr_assert_not_null(strstr(s, "<\n>"));
	cr_assert_not_null(strstr(s, "<\r>"));
	cr_assert_not_null(strstr(s, "<" FFFD ">"), "NUL or 0x80 not U+FFFD");
	cr_assert_not_null(strstr(s, "^[@ ^[A "), "U+0080, U+0081");
	cr_assert_not_null(strstr(s, "^[_ "), "U+009F");
	json_decref(o);
	capture_free(&big);
}

/* ---- issue 4: truncation ---- */

/* Kept head, RESULT_TRUNC_MARKER, kept tail: in that order, once. */
Test(result_json, truncation_marker_between_head_and_tail)
{
	struct capture small;
	struct job_result r;
	char data[200], want[256];
	json_t *o, *back;
	const char *s;

	cr_assert_str_eq(RESULT_TRUNC_MARKER,
	    "\n[... stockade: output truncated here ...]\n");
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	cr_assert_eq(capture_init(&small, 64), 0); /* 32 + 32 kept */
	capture_add(&small, (const uint8_t *)data, sizeof(data));
	snprintf(want, sizeof(want), "%.32s%s%.32s", data, RESULT_TRUNC_MARKER,
	    data + sizeof(data) - 32);
	memset(&r, 0, sizeof(r));
	r.status = JOB_OUTPUT_LIMIT;
	r.exit_code = -1;
	r.signal = SIGKILL;
	r.enforcement = ENFORCE_CGROUP2;
	r.stdout_bytes = 5000; /* what the program wrote, past the capture */
	o = result_to_json(&r, &lim, &small, &err);
	cr_assert_not_null(o);
	back = reparse(o);
	s = jstr(back, "stdout");
	cr_assert_str_eq(s, want);
	cr_assert(json_is_true(json_object_get(back, "stdout_truncated")));
	cr_assert(json_is_false(json_object_get(back, "stderr_truncated")));
	cr_assert_eq(jint(back, "stdout_bytes"), 5000);
	cr_assert_str_eq(jstr(back, "stderr"), "");
	json_decref(back);
	json_decref(o);
	capture_free(&small);
}

/* A character, or a C1 control, cut where the middle was dropped turns
 * into U+FFFD; it does not swallow the marker or leave a control. */
Test(result_json, truncation_inside_a_character)
{
	struct capture small;
	struct job_result r;
	json_t *o;
	const char *s;
	size_t why;
	/* 7 bytes of head: "abcdef" and the first byte of U+009B; the tail
	 * starts with the last byte of U+00E9. */
	static const uint8_t data[] = "abcdef\xc2\x9b"
				      "0123456789\xc3\xa9xyzuvw";

	cr_assert_eq(capture_init(&small, 14), 0);
	capture_add(&small, data, sizeof(data) - 1);
	cr_assert(capture_truncated(&small));
	memset(&r, 0, sizeof(r));
	r.status = JOB_OUTPUT_LIMIT;
	r.exit_code = -1;
	r.enforcement = ENFORCE_MONITOR;
	o = result_to_json(&r, &lim, &small, &err);
	cr_assert_not_null(o);
	s = jstr(o, "stdout");
	cr_assert(terminal_safe(s, strlen(s), &why), "unsafe at %zu: %s", why,
	    s);
	cr_assert_str_eq(s, "abcdef" FFFD RESULT_TRUNC_MARKER FFFD "xyzuvw");
	json_decref(o);
	capture_free(&small);
}

/* ---- issue 4: the compact text form ---- */

/* result_print_text of O into a new string; the caller frees it. */
static char *
print_text(json_t *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(result_print_text(o, f), 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_not_null(text);
	cr_assert_eq(strlen(text), len, "a NUL in the text form");
	return text;
}

Test(result_json, text_form_of_an_ok_result)
{
	static const char hello[] = "hello\n";
	struct job_result r;
	char hint[512], want[2048];
	json_t *o;
	char *text;

	capture_add(&out, (const uint8_t *)hello, sizeof(hello) - 1);
	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.exit_code = 0;
	r.wall_ms = 12;
	r.cpu_ms = 8;
	r.peak_memory_kb = 3000;
	r.peak_processes = 1;
	r.enforcement = ENFORCE_MONITOR;
	r.stdout_bytes = 6;
	r.detail = (char *)(uintptr_t) "";
	job_hint(&r, &lim, hint, sizeof(hint));
	cr_assert_str_eq(hint,
	    "The program exited with code 0 in 12 ms; its "
	    "output is complete.");
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	text = print_text(o);
	snprintf(want, sizeof(want),
	    "status: ok\n"
	    "hint: %s\n"
	    "figures: exit_code=0 signal=none wall_ms=12 cpu_ms=8 "
	    "peak_memory_kb=3000 peak_processes=1 enforcement=monitor\n"
	    "--- stdout (6 bytes) ---\n"
	    "hello\n"
	    "--- stderr (0 bytes) ---\n",
	    hint);
	cr_assert_str_eq(text, want);
	free(text);
	json_decref(o);
}

/* Two denials: one "denied:" line after the detail, before the streams,
 * the entries in order and comma-separated. */
Test(result_json, text_form_with_two_denials)
{
	struct job_result r;
	char hint[512], want[2048];
	json_t *o;
	char *text;

	memset(&r, 0, sizeof(r));
	r.status = JOB_POLICY_VIOLATION;
	r.exit_code = -1;
	r.signal = SIGSYS;
	r.wall_ms = 40;
	r.cpu_ms = 3;
	r.peak_memory_kb = 2048;
	r.peak_processes = 1;
	r.enforcement = ENFORCE_CGROUP2;
	r.landlock_abi = 6;
	r.ndenials = 2;
	set_denial(&r.denials[0], "ptrace", 2, 12);
	set_denial(&r.denials[1], "i386:20", 1, 35);
	r.detail = (char *)(uintptr_t) "killed for i386:20";
	job_hint(&r, &lim, hint, sizeof(hint));
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	text = print_text(o);
	snprintf(want, sizeof(want),
	    "status: policy_violation\n"
	    "hint: %s\n"
	    "figures: exit_code=none signal=SIGSYS wall_ms=40 cpu_ms=3 "
	    "peak_memory_kb=2048 peak_processes=1 enforcement=cgroup2\n"
	    "detail: killed for i386:20\n"
	    "denied: ptrace x2 (first at 12 ms), i386:20 x1 (first at "
	    "35 ms)\n"
	    "--- stdout (0 bytes) ---\n"
	    "--- stderr (0 bytes) ---\n",
	    hint);
	cr_assert_str_eq(text, want);
	free(text);
	json_decref(o);

	/* Without a detail, the line follows the figures. */
	r.detail = (char *)(uintptr_t) "";
	r.ndenials = 1;
	job_hint(&r, &lim, hint, sizeof(hint));
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	text = print_text(o);
	snprintf(want, sizeof(want),
	    "status: policy_violation\n"
	    "hint: %s\n"
	    "figures: exit_code=none signal=SIGSYS wall_ms=40 cpu_ms=3 "
	    "peak_memory_kb=2048 peak_processes=1 enforcement=cgroup2\n"
	    "denied: ptrace x2 (first at 12 ms)\n"
	    "--- stdout (0 bytes) ---\n"
	    "--- stderr (0 bytes) ---\n",
	    hint);
	cr_assert_str_eq(text, want);
	free(text);
	json_decref(o);
}

/* No denial, whatever the Landlock ABI: no "denied:" line at all. */
Test(result_json, text_form_without_denials_has_no_denied_line)
{
	struct job_result r;
	json_t *o;
	char *text;

	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.enforcement = ENFORCE_MONITOR;
	r.landlock_abi = 6;
	/* Left in the array past ndenials = 0: not shown. */
	set_denial(&r.denials[0], "ptrace", 1, 1);
	r.detail = (char *)(uintptr_t) "a detail";
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	text = print_text(o);
	cr_assert_null(strstr(text, "denied"), "%s", text);
	cr_assert_null(strstr(text, "ptrace"), "%s", text);
	cr_assert_not_null(strstr(text,
			       "\ndetail: a detail\n--- stdout "
			       "(0 bytes) ---\n"),
	    "%s", text);
	free(text);
	json_decref(o);
}

Test(result_json, text_form_of_a_truncated_timeout)
{
	static const char data[] = "0123456789abcdefghij"; /* no newline */
	static const char warn[] = "warn\x1b[0m\n";
	struct capture small;
	struct job_result r;
	char hint[512], want[2048];
	json_t *o;
	char *text;

	cr_assert_eq(capture_init(&small, 16), 0); /* 8 + 8 kept */
	capture_add(&small, (const uint8_t *)data, sizeof(data) - 1);
	capture_add(&err, (const uint8_t *)warn, sizeof(warn) - 1);
	memset(&r, 0, sizeof(r));
	r.status = JOB_TIMEOUT;
	r.exit_code = -1;
	r.signal = SIGKILL;
	r.wall_ms = 2003;
	r.cpu_ms = 1990;
	r.peak_memory_kb = 9120;
	r.peak_processes = 2;
	r.enforcement = ENFORCE_CGROUP2;
	r.stdout_bytes = 1234;
	r.stderr_bytes = sizeof(warn) - 1;
	r.detail = (char *)(uintptr_t) "killed at the wall-clock limit";
	job_hint(&r, &lim, hint, sizeof(hint));
	cr_assert_not_null(strstr(hint, "bound its loops"));
	o = result_to_json(&r, &lim, &small, &err);
	cr_assert_not_null(o);
	text = print_text(o);
	snprintf(want, sizeof(want),
	    "status: timeout\n"
	    "hint: %s\n"
	    "figures: exit_code=none signal=SIGKILL wall_ms=2003 "
	    "cpu_ms=1990 peak_memory_kb=9120 peak_processes=2 "
	    "enforcement=cgroup2\n"
	    "detail: killed at the wall-clock limit\n"
	    "--- stdout (1234 bytes, truncated: head and tail kept) ---\n"
	    "01234567\n"
	    "[... stockade: output truncated here ...]\n"
	    "cdefghij\n"
	    "--- stderr (9 bytes) ---\n"
	    "warn^[[0m\n",
	    hint);
	cr_assert_str_eq(text, want);
	free(text);
	json_decref(o);
	capture_free(&small);
}

/* A program that exits non-zero after a failed name lookup or an
 * unreachable network gets a hint that the sandbox has no network
 * (issue 22), whether the message is in the head or the tail of its
 * stderr; the same words on an ok job, or none, leave the plain hint. */
Test(result_json, network_failure_gets_the_no_network_hint)
{
	static const char *const messages[] = {
	    "socket.gaierror: [Errno -3] Temporary failure in name "
	    "resolution\n",
	    "curl: (6) Could not resolve host: pypi.org\n",
	    "OSError: [Errno 101] Network is unreachable\n",
	    "Error: getaddrinfo ENOTFOUND registry.npmjs.org\n",
	};
	struct job_result r;
	char hint[RESULT_HINT_MAX];
	json_t *o;

	memset(&r, 0, sizeof(r));
	r.status = JOB_EXIT_NONZERO;
	r.exit_code = 1;
	r.detail = (char *)(uintptr_t) "";
	for (size_t i = 0; i < sizeof(messages) / sizeof(*messages); i++) {
		struct capture e;

		capture_init(&e, 256);
		/* Past the head: the message is in the kept tail. */
		for (int k = 0; k < 40; k++)
			capture_add(&e, (const uint8_t *)"noise\n", 6);
		capture_add(&e, (const uint8_t *)messages[i],
		    strlen(messages[i]));
		o = result_to_json(&r, &lim, &out, &e);
		cr_assert_not_null(o);
		cr_assert_not_null(strstr(json_string_value(
					      json_object_get(o, "hint")),
				       "the sandbox has no "
				       "network"),
		    "%s: %s", messages[i],
		    json_string_value(json_object_get(o, "hint")));
		json_decref(o);
		r.status = JOB_OK;
		r.exit_code = 0;
		result_hint(&r, &lim, &e, hint, sizeof(hint));
		cr_assert_null(strstr(hint, "network"), "%s", hint);
		r.status = JOB_EXIT_NONZERO;
		r.exit_code = 1;
		capture_free(&e);
	}
	result_hint(&r, &lim, &err, hint, sizeof(hint));
	cr_assert_null(strstr(hint, "network"), "%s", hint);
	result_hint(&r, &lim, NULL, hint, sizeof(hint));
	cr_assert_null(strstr(hint, "network"), "%s", hint);
}

/* Bytes the capture dropped when memory ran out make the output
 * truncated though no cap was passed: the hint must not call it
 * complete, and says how to get it all (the schema's rule for a
 * truncated stream; found by faults-io's allocation failures). */
Test(result_json, output_lost_to_memory_is_not_called_complete)
{
	struct job_result r;
	struct capture o;
	json_t *j;
	const char *hint;

	capture_init(&o, 1024);
	capture_add(&o, (const uint8_t *)"hello\n", 6);
	o.lost = true;
	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.exit_code = 0;
	r.wall_ms = 5;
	r.stdout_bytes = 6;
	r.detail = (char *)(uintptr_t) "";
	j = result_to_json(&r, &lim, &o, &err);
	cr_assert_not_null(j);
	cr_assert(json_is_true(json_object_get(j, "stdout_truncated")));
	hint = json_string_value(json_object_get(j, "hint"));
	cr_assert_null(strstr(hint, "complete"), "%s", hint);
	cr_assert_not_null(strstr(hint, "Its output was truncated"), "%s",
	    hint);
	cr_assert_not_null(strstr(hint, "write it to a file in /work"), "%s",
	    hint);
	json_decref(j);
	capture_free(&o);
}

/* Issue 23: an ok job that reached the process limit says which limit,
 * how often, and that its output may be incomplete; the measure of its
 * peak is named. */
Test(result_json, ok_with_a_limit_reached)
{
	struct job_result r;
	json_t *o, *a, *e;

	memset(&r, 0, sizeof(r));
	r.status = JOB_OK;
	r.wall_ms = 1200;
	r.enforcement = ENFORCE_MONITOR;
	r.memory_measure = MEASURE_PSS_SUM;
	r.nreached = 1;
	r.reached[0].limit = JOB_REACHED_PROCESSES;
	r.reached[0].times = 3;
	lim.nproc = 16;
	o = result_to_json(&r, &lim, &out, &err);
	cr_assert_not_null(o);
	cr_assert_str_eq(jstr(o, "memory_measure"), "pss_sum");
	a = json_object_get(o, "limits_reached");
	cr_assert(json_is_array(a) && json_array_size(a) == 1);
	e = json_array_get(a, 0);
	cr_assert_str_eq(jstr(e, "limit"), "processes");
	cr_assert_eq(json_integer_value(json_object_get(e, "times")), 3);
	cr_assert_not_null(strstr(jstr(o, "hint"), "limit of 16 processes"));
	cr_assert_not_null(strstr(jstr(o, "hint"), "3 times"));
	cr_assert_not_null(strstr(jstr(o, "hint"), "may be incomplete"));
	cr_assert_null(strstr(jstr(o, "hint"), "output is complete"));
	json_decref(o);
}
