/*
 * fuzz_rpc.c: the JSON-RPC requests of `stockade serve` (broker/api/rpc.h).
 *
 * Input: request lines, '\n'-separated (at most 16), handled in order by
 * rpc_handle in one session on a fresh, empty workspace, with the
 * default policy and no launcher (exec is validated, then answered
 * -32002 "no launcher"): the fs.* methods really run, against a
 * temporary directory. Properties, each an abort when broken:
 *  - rpc_handle returns 0 and answers every request with an id (and
 *    nothing else): one line of compact JSON, no raw newline, an object
 *    with "jsonrpc": "2.0", "id" and exactly one of "result" or
 *    "error", the error's code one of docs/protocol.md's;
 *  - nothing outside the workspace changes (fuzz_check_outside).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "policy.h"
#include "rpc.h"

static struct policy pol;
static int wsfd = -1;

static bool
known_code(json_int_t code)
{
	switch (code) {
	case RPC_PARSE_ERROR:
	case RPC_INVALID_REQUEST:
	case RPC_METHOD_NOT_FOUND:
	case RPC_INVALID_PARAMS:
	case RPC_INTERNAL_ERROR:
	case RPC_FILE_ERROR:
	case RPC_JOB_ERROR:
		return true;
	default:
		return false;
	}
}

/* Is LINE (LEN bytes) a JSON object without "id" (a notification, the
 * only request rpc.h leaves unanswered)? */
static bool
notification(const char *line, size_t len)
{
	json_t *req = json_loadb(line, len,
	    JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	bool r = json_is_object(req) && json_object_get(req, "id") == NULL;

	json_decref(req);
	return r;
}

static void
one(const char *line, size_t len, void *arg)
{
	struct rpc_session *s = arg;
	json_t *resp, *v, *err;
	char *out = NULL;
	int e;

	e = rpc_handle(s, line, len, NULL, 0, &out);
	if (e == -ENOMEM)
		return;
	FUZZ_ASSERT(e == 0);
	if (out == NULL) {
		FUZZ_ASSERT(notification(line, len));
		return;
	}
	FUZZ_ASSERT(strchr(out, '\n') == NULL);
	resp = json_loads(out, 0, NULL);
	if (resp == NULL || !json_is_object(resp))
		fuzz_fail("the response is not a JSON object: %s", out);
	v = json_object_get(resp, "jsonrpc");
	FUZZ_ASSERT(
	    json_is_string(v) && strcmp(json_string_value(v), "2.0") == 0);
	FUZZ_ASSERT(json_object_get(resp, "id") != NULL);
	err = json_object_get(resp, "error");
	FUZZ_ASSERT((err == NULL) != (json_object_get(resp, "result") == NULL));
	if (err != NULL) {
		v = json_object_get(err, "code");
		if (!json_is_integer(v) || !known_code(json_integer_value(v)))
			fuzz_fail("an error code not in docs/protocol.md: %s",
			    out);
		FUZZ_ASSERT(json_is_string(json_object_get(err, "message")));
	}
	json_decref(resp);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpc_session s;

	if (wsfd < 0)
		wsfd = fuzz_session(&pol);
	fuzz_empty_dir(wsfd);
	rpc_session_init(&s, wsfd, &pol, NULL);
	fuzz_lines(data, size, 16, one, &s);
	rpc_session_free(&s);
	fuzz_check_outside();
	return 0;
}
