/*
 * fuzz_mcp.c: the messages of `stockade mcp` (broker/api/mcp.h).
 *
 * Input: message lines, '\n'-separated (at most 16), parsed as the
 * transport parses them (broker/api/mcp_stdio.c: trailing '\r' and ' '
 * dropped, duplicate keys refused, NUL allowed in strings) and handled
 * in order by mcp_handle in one fresh session (initialize, tools/list,
 * tools/call...) over a serve session on a fresh, empty workspace with
 * the default policy and no launcher: the file tools really run, a run
 * tool fails as the sandbox's failure. Properties, each an abort when
 * broken:
 *  - every request with a string or integer id and a string method is
 *    answered, and nothing without an id is;
 *  - an answer is an object with "jsonrpc": "2.0", "id" and exactly one
 *    of "result" or "error" (an integer code and a string message), that
 *    serialises as one line; a tools/call result has a "content" array;
 *  - nothing outside the workspace changes (fuzz_check_outside).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "mcp.h"
#include "policy.h"
#include "rpc.h"

static struct policy pol;
static int wsfd = -1;

static void
check_answer(json_t *msg, json_t *r)
{
	json_t *id = json_object_get(msg, "id");
	json_t *method = json_object_get(msg, "method");
	json_t *v, *err, *res;
	char *line;

	if (r == NULL) {
		/* A notification, or a response from the client. */
		FUZZ_ASSERT(json_is_object(msg));
		FUZZ_ASSERT(json_is_string(method)
			? id == NULL
			: json_object_get(msg, "result") != NULL ||
			    json_object_get(msg, "error") != NULL);
		return;
	}
	FUZZ_ASSERT(json_is_object(r));
	v = json_object_get(r, "jsonrpc");
	FUZZ_ASSERT(
	    json_is_string(v) && strcmp(json_string_value(v), "2.0") == 0);
	FUZZ_ASSERT(json_object_get(r, "id") != NULL);
	err = json_object_get(r, "error");
	res = json_object_get(r, "result");
	FUZZ_ASSERT((err == NULL) != (res == NULL));
	if (err != NULL) {
		FUZZ_ASSERT(json_is_integer(json_object_get(err, "code")));
		FUZZ_ASSERT(json_is_string(json_object_get(err, "message")));
	} else if (json_is_string(method) &&
	    strcmp(json_string_value(method), "tools/call") == 0) {
		FUZZ_ASSERT(json_is_array(json_object_get(res, "content")));
	}
	line = json_dumps(r, JSON_COMPACT);
	if (line != NULL) {
		FUZZ_ASSERT(strchr(line, '\n') == NULL);
		free(line);
	}
}

static void
one(const char *line, size_t len, void *arg)
{
	struct mcp_session *m = arg;
	json_t *msg, *r, *id, *method;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	msg = json_loadb(line, len,
	    JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (msg == NULL)
		return; /* answered -32700 by the transport */
	r = mcp_handle(m, msg);
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	/* A request mcp_handle must answer (ENOMEM aside: none here). */
	if (json_is_object(msg) && json_is_string(method) &&
	    (json_is_string(id) || json_is_integer(id)))
		FUZZ_ASSERT(r != NULL);
	check_answer(msg, r);
	json_decref(r);
	json_decref(msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* mcp_session_init builds the two tools lists (the result schema
	 * parsed twice): a tenth of a second instrumented. They depend on
	 * the policy only, so each input's session is a copy of one made
	 * once, its per-session state fresh, and frees only that. */
	static struct mcp_session tmpl;
	struct rpc_session s;
	struct mcp_session m;

	if (wsfd < 0) {
		wsfd = fuzz_session(&pol);
		if (mcp_session_init(&tmpl, NULL, &pol, NULL) < 0)
			fuzz_fail("mcp_session_init: out of memory");
	}
	fuzz_empty_dir(wsfd);
	rpc_session_init(&s, wsfd, &pol, NULL);
	m = tmpl;
	m.rpc = &s;
	fuzz_lines(data, size, 16, one, &m);
	FUZZ_ASSERT(m.tools == tmpl.tools && m.tools_plain == tmpl.tools_plain);
	for (size_t i = 0; i < 2; i++)
		free(m.helpers[i]);
	rpc_session_free(&s);
	fuzz_check_outside();
	return 0;
}
