/*
 * mcp.c: the Model Context Protocol messages of `stockade mcp` (mcp.h):
 * initialize and version negotiation, ping, tools/list, tools/call, and
 * the notifications a client sends. The tools themselves are in
 * mcp_tools.c, the transport in cmd_mcp.c.
 *
 * Sources: the MCP specification, "Base Protocol" (lifecycle, version
 * negotiation, ping, cancellation, progress) and "Server Features:
 * Tools", revisions 2024-11-05 to 2025-11-25; JSON-RPC 2.0.
 */
#include "mcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"

/* Newest first; the client's revision is echoed when it is one of these,
 * else the newest is offered (the client then decides). */
static const char *const revisions[] = {
    MCP_REVISION_LATEST,
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
};

/* What the model is told about the server as a whole (initialize's
 * "instructions"): what a session is, before it reads any tool. */
static const char instructions[] =
    "stockade runs code in a Linux sandbox with no network. This session "
    "has one private workspace, mounted at /work, which is the current "
    "directory of every program you run; files you write there stay "
    "between calls. Use write_file and read_file to move files in and "
    "out, run_code or run_command to run programs, list_files to look "
    "around, and changes to see what the last run created, modified or "
    "deleted. Every run ends in one status with a hint: follow the hint.";

int
mcp_session_init(struct mcp_session *m, struct rpc_session *rpc,
    const struct policy *pol, const struct mcp_hooks *h)
{
	memset(m, 0, sizeof(*m));
	m->rpc = rpc;
	m->policy = pol;
	if (h != NULL)
		m->hooks = *h;
	m->tools = mcp_tools_list(pol, true);
	m->tools_plain = mcp_tools_list(pol, false);
	if (m->tools == NULL || m->tools_plain == NULL) {
		mcp_session_free(m);
		return -ENOMEM;
	}
	return 0;
}

void
mcp_session_free(struct mcp_session *m)
{
	json_decref(m->tools);
	json_decref(m->tools_plain);
	m->tools = m->tools_plain = NULL;
	for (size_t i = 0; i < 2; i++) {
		free(m->helpers[i]);
		m->helpers[i] = NULL;
	}
}

/* {"code": CODE, "message": MESSAGE} as an error response to ID. */
static json_t *
error_response(json_t *id, int code, const char *message)
{
	return json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", "code", code, "message",
	    message);
}

static json_t *
result_response(json_t *id, json_t *result)
{
	if (result == NULL)
		return NULL;
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result",
	    result);
}

/*
 * initialize: the client's protocolVersion is echoed when this server
 * speaks it, else the newest revision is offered ("Version
 * negotiation"). The only capability is tools (the list never changes
 * during a session).
 */
static json_t *
m_initialize(struct mcp_session *m, json_t *id, json_t *params)
{
	json_t *v = json_object_get(params, "protocolVersion");
	const char *rev = revisions[0];

	if (!json_is_string(v))
		return error_response(id, -32602,
		    "invalid params: "
		    "protocolVersion must be a string");
	for (size_t i = 0; i < sizeof(revisions) / sizeof(revisions[0]); i++)
		if (strcmp(json_string_value(v), revisions[i]) == 0)
			rev = revisions[i];
	snprintf(m->revision, sizeof(m->revision), "%s", rev);
	/* Revisions are dates: those from 2025-06-18 on have structured
	 * tool output. */
	m->structured = strcmp(rev, MCP_REVISION_STRUCTURED) >= 0;
	m->initialized = true;
	return result_response(id,
	    json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}",
		"protocolVersion", rev, "capabilities", "tools", "listChanged",
		0, "serverInfo", "name", "stockade", "title",
		"stockade: code in a Linux sandbox", "version",
		STOCKADE_VERSION, "instructions", instructions));
}

/* tools/call: {"name", "arguments", "_meta": {"progressToken"}}. */
static json_t *
m_tools_call(struct mcp_session *m, json_t *id, json_t *params)
{
	json_t *name = json_object_get(params, "name");
	json_t *args = json_object_get(params, "arguments");
	json_t *meta = json_object_get(params, "_meta");
	json_t *token = json_object_get(meta, "progressToken"), *r;
	bool unknown = false;
	char msg[160];

	if (!json_is_string(name))
		return error_response(id, -32602,
		    "invalid params: name must be "
		    "a string");
	if (args != NULL && !json_is_object(args))
		return error_response(id, -32602,
		    "invalid params: arguments "
		    "must be an object");
	if (token != NULL && !json_is_string(token) && !json_is_integer(token))
		token = NULL;
	r = mcp_tool_call(m, json_string_value(name), args, token, &unknown);
	if (r == NULL && unknown) {
		snprintf(msg, sizeof(msg), "unknown tool: %.64s",
		    json_string_value(name));
		return error_response(id, -32602, msg);
	}
	return result_response(id, r);
}

json_t *
mcp_handle(struct mcp_session *m, json_t *msg)
{
	json_t *id, *v, *params, *r;
	const char *method;

	if (!json_is_object(msg))
		return error_response(NULL, -32600,
		    "invalid request: not an "
		    "object");
	id = json_object_get(msg, "id");
	v = json_object_get(msg, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		return error_response(json_is_string(id) || json_is_integer(id)
			? id
			: NULL,
		    -32600,
		    "invalid request: "
		    "jsonrpc must be \"2.0\"");
	v = json_object_get(msg, "method");
	if (!json_is_string(v)) {
		/* A response from the client: this server sends no
		 * requests, so there is nothing it could answer. */
		if (json_object_get(msg, "result") != NULL ||
		    json_object_get(msg, "error") != NULL)
			return NULL;
		return error_response(json_is_string(id) || json_is_integer(id)
			? id
			: NULL,
		    -32600,
		    "invalid request: "
		    "method must be a string");
	}
	method = json_string_value(v);
	if (id == NULL)
		/* Notifications: initialized, cancelled (the transport acts
		 * on it), progress, roots changes; none is answered. */
		return NULL;
	if (!json_is_string(id) && !json_is_integer(id))
		/* MCP: "the ID MUST NOT be null" and is a string or an
		 * integer. */
		return error_response(NULL, -32600,
		    "invalid request: id must "
		    "be a string or an integer");
	params = json_object_get(msg, "params");
	if (params != NULL && !json_is_object(params))
		return error_response(id, -32602,
		    "invalid params: params must "
		    "be an object");
	if (strcmp(method, "ping") == 0)
		return result_response(id, json_object());
	if (strcmp(method, "initialize") == 0) {
		/* Once per session ("Lifecycle": initialization is the first
		 * interaction); renegotiating would change the tools' form
		 * under a client that already has them. */
		if (m->initialized)
			return error_response(id, -32600,
			    "invalid request: "
			    "already initialized");
		return m_initialize(m, id, params);
	}
	if (!m->initialized)
		return error_response(id, MCP_NOT_INITIALIZED,
		    "not initialized: "
		    "send initialize first");
	if (strcmp(method, "tools/list") == 0)
		return result_response(id,
		    json_pack("{s:O}", "tools",
			m->structured ? m->tools : m->tools_plain));
	if (strcmp(method, "tools/call") == 0) {
		r = m_tools_call(m, id, params);
		if (r == NULL)
			log_error("mcp: out of memory answering tools/call");
		return r;
	}
	return error_response(id, -32601, "method not found");
}
