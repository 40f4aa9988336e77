/*
 * mcp.h: `stockade mcp`, a Model Context Protocol server (docs/mcp.md;
 * the MCP specification, modelcontextprotocol.io/specification, revision
 * 2025-11-25 and the earlier ones it negotiates down to).
 *
 * One session is one workspace. The tools (mcp_tools.c) are a front on
 * the `stockade serve` session of rpc.h: every file operation and every
 * job goes through rpc_call, so the checks, quotas and error names are
 * those of docs/protocol.md, and the policy is the ceiling on everything
 * a model may ask for.
 *
 * This part is pure apart from the work the tools do: one message in,
 * at most one response out; notifications to the client (progress) go
 * through a hook. The transport (cmd_mcp.c) owns stdin and stdout, the
 * reader thread, cancellation and the progress ticker; a test drives
 * mcp_handle directly (style.md rule 16).
 */
#ifndef STOCKADE_MCP_H
#define STOCKADE_MCP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "policy.h"
#include "rpc.h"

/* The protocol revisions this server speaks, newest first
 * (docs/mcp.md, "Version negotiation"). */
#define MCP_REVISION_LATEST "2025-11-25"
/* The first revision with structured tool output (outputSchema,
 * structuredContent) and tool titles. */
#define MCP_REVISION_STRUCTURED "2025-06-18"

/* JSON-RPC error codes the server answers with besides rpc.h's. */
#define MCP_NOT_INITIALIZED -32002 /* a request before initialize */

/* What the session asks of its transport. Every hook may be NULL. */
struct mcp_hooks {
	/* Writes MSG (a notification object, borrowed) to the client now. */
	void (*notify)(void *arg, json_t *msg);
	/* A job is about to start for the request whose progress token is
	 * TOKEN (borrowed until job_end; NULL when the client asked for no
	 * progress), with the wall-clock limit LIMIT_MS milliseconds. */
	void (*job_begin)(void *arg, json_t *token, uint64_t limit_ms);
	/* That job has ended (called once after each job_begin). */
	void (*job_end)(void *arg);
	/* Has the client cancelled the request being handled? A tool asks
	 * before it starts a job and skips the job when so. */
	bool (*cancelled)(void *arg);
	void *arg;
};

struct mcp_session {
	struct rpc_session *rpc; /* borrowed: the workspace and launcher */
	const struct policy *policy; /* borrowed */
	struct mcp_hooks hooks;
	bool initialized; /* initialize was answered */
	bool structured; /* the revision has structured output */
	char revision[16]; /* the negotiated revision */
	json_t *tools; /* tools/list's array, built at init */
	json_t *tools_plain; /* the same without outputSchema/title,
				      * for revisions before 2025-06-18 */
	char *helpers[2]; /* names of the files the last job's
				      * stdin and code came in (hidden from
				      * `changes`); NULL when none */
	uint64_t helper_sizes[2]; /* their sizes, bytes */
};

/*
 * Sets M up over the serve session RPC (borrowed; its workspace, policy
 * and launcher) under POL (borrowed; the same as RPC's: the ceilings of
 * the tools' input schemas) with the hooks H (copied; may be NULL).
 * Returns 0 or -ENOMEM.
 */
int mcp_session_init(struct mcp_session *m, struct rpc_session *rpc,
    const struct policy *pol, const struct mcp_hooks *h);

/* Frees what M owns; borrowed things are left alone. */
void mcp_session_free(struct mcp_session *m);

/*
 * Handles one message MSG (parsed JSON, borrowed: an object for a valid
 * message; anything else is answered as an invalid request). Returns the
 * response object (a new reference; the caller writes it as one line), or
 * NULL when nothing is to be answered: a notification, or ENOMEM while
 * answering a request (logged). Requests before `initialize` other than
 * `ping` are answered MCP_NOT_INITIALIZED.
 */
json_t *mcp_handle(struct mcp_session *m, json_t *msg);

/*
 * The tools (mcp_tools.c): the array of tools/list for POL, with
 * outputSchema and title when STRUCTURED. Returns a new reference or
 * NULL (ENOMEM).
 */
json_t *mcp_tools_list(const struct policy *pol, bool structured);

/*
 * Runs the tool NAME with the arguments ARGS (borrowed; NULL means {})
 * for the request whose progress token is TOKEN (borrowed, may be NULL).
 * Returns a CallToolResult object (a new reference): a tool's failure
 * (bad arguments, a named file error, a quota, a job that could not run)
 * is a result with "isError": true, never a protocol error. Returns NULL
 * with *UNKNOWN set when there is no such tool (the caller answers
 * -32602), or NULL with *UNKNOWN clear on ENOMEM.
 */
json_t *mcp_tool_call(struct mcp_session *m, const char *name, json_t *args,
    json_t *token, bool *unknown);

#endif
