/*
 * rpc.h: the JSON-RPC 2.0 dispatcher of `stockade serve`
 * (docs/protocol.md; JSON-RPC 2.0 specification, jsonrpc.org).
 *
 * Pure apart from the work the methods do: one request line in, one
 * response line out. No I/O on the transport, no signals, no logging:
 * serve.c owns the socket and serve_input.c the line framing, and a
 * test drives rpc_handle directly (style.md rule 16).
 */
#ifndef STOCKADE_RPC_H
#define STOCKADE_RPC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "egress_proxy.h"
#include "fsapi.h"
#include "policy.h"
#include "snapshot.h"
#include "supervisor.h"

/* Longest request line, bytes without its '\n' (docs/protocol.md). */
#define RPC_MAX_LINE (16u << 20)
/* Most descriptors one request may carry (SCM_RIGHTS); more is an
 * invalid request. */
#define RPC_MAX_FDS 16

/* Error codes (docs/protocol.md, "Errors"). -32700..-32600 are
 * JSON-RPC 2.0's own; -32001 and -32002 are in its server range. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
#define RPC_FILE_ERROR -32001
#define RPC_JOB_ERROR -32002

/* Change sets a session keeps (issue 26): the last jobs', those still
 * staged among them. */
#define RPC_MAX_STAGES 8

struct staged;

struct rpc_session {
	struct fs_ctx fs; /* the workspace and its quotas */
	const struct policy *policy; /* borrowed */
	struct supervisor *sup; /* borrowed; started by the first exec;
				       * NULL: exec answers -32002 */
	int client_fd; /* the connection requests come on
				       * (borrowed; -1: none): a write from a
				       * pipe is kept only while it is open */
	int root_mode; /* the workspace directory's permission
				       * bits at the start, put back after
				       * every job; -1 unknown */
	struct egress_proxy *proxy; /* the session's egress proxy
				       * (borrowed), or NULL: the jobs have
				       * no network (a policy without allow
				       * rules) */
	struct staged *sets[RPC_MAX_STAGES]; /* the change sets of the
				       * last jobs (owned), oldest first */
	size_t nsets;
	uint32_t next_stage; /* the last number given to one */
	json_t *current_id; /* the id of the request rpc_handle is
				       * carrying out (borrowed from it), or
				       * NULL: what $/cancelRequest names */
};

/*
 * Sets S up for the workspace directory ROOT (borrowed, O_DIRECTORY, held
 * for the session) under POL (borrowed: its [files] quotas and, for exec,
 * its limits, environment and jail), with SUP (borrowed, may be NULL)
 * for exec. S->client_fd starts at -1; the transport sets it for each
 * connection.
 */
void rpc_session_init(struct rpc_session *s, int root, const struct policy *pol,
    struct supervisor *sup);

/* Frees the change sets S holds; borrowed things are left alone. */
void rpc_session_free(struct rpc_session *s);

/*
 * Handles the request LINE (LEN bytes, without its '\n'; need not be
 * NUL-terminated) that came with the descriptors FDS[0..NFDS). The
 * descriptors pass to rpc_handle: every one of them is closed before it
 * returns, used or not. More than RPC_MAX_FDS of them is an invalid
 * request.
 *
 * Sets *RESPONSE to the response, one line of compact JSON without its
 * '\n' (no raw newline inside) that the caller frees, or NULL for a
 * notification (a request without "id"). Every failure of the request
 * itself (bad JSON, an unknown method, a named file error, a job that
 * could not start) is an error response, not a failure of rpc_handle.
 * Returns 0, or -ENOMEM when no response could be built (*RESPONSE NULL).
 */
int rpc_handle(struct rpc_session *s, const char *line, size_t len, int *fds,
    size_t nfds, char **response);

/*
 * Runs METHOD (one of docs/protocol.md's: "exec", "fs.write", ...) with
 * PARAMS (an object, borrowed; NULL means {}) in S exactly as rpc_handle
 * would, without the JSON-RPC envelope: for a front that speaks another
 * protocol over the same session (mcp.c). FDS as rpc_handle: every one
 * is closed before rpc_call returns.
 *
 * Returns the method's result (a new reference), or NULL with *CODE set
 * to the error code of docs/protocol.md ("Errors"), *MESSAGE to its
 * message (valid UTF-8; the caller frees it; NULL only if even that
 * could not be allocated) and *DATA to its data (a new reference, or
 * NULL).
 */
json_t *rpc_call(struct rpc_session *s, const char *method, json_t *params,
    int *fds, size_t nfds, int *code, char **message, json_t **data);

/*
 * Whether LINE (LEN bytes without its '\n', a request line read while
 * another is carried out) is a $/cancelRequest naming, in params.id, the
 * id of the request S is carrying out (S->current_id, not null): the
 * transport then cancels its job (jobrun_cancel; docs/protocol.md,
 * "Cancellation"). The line itself is still handled in its turn, as a
 * notification that does nothing. Pure; false for anything else, a
 * malformed line included.
 */
bool rpc_cancels_current(const struct rpc_session *s, const char *line,
    size_t len);

/*
 * An error response with id null for the transport's own errors (a line
 * over RPC_MAX_LINE): {"jsonrpc":"2.0","id":null,"error":{"code":CODE,
 * "message":MESSAGE}}. MESSAGE must be ASCII. Returns a string the caller
 * frees, or NULL (ENOMEM).
 */
char *rpc_error_line(int code, const char *message);

/*
 * Reads a client's network list for one job, V (borrowed): an object
 * whose keys are allow, allow_address and deny, each an array of rule
 * strings in the policy's syntax (egress_rule_parse), into OUT (the
 * caller frees it with egress_rules_clear). Returns 0; -EINVAL with one
 * sentence in WHY (WHYLEN bytes) naming the key, the index and the
 * rule's error; -E2BIG past EGRESS_MAX_RULES; -ENOMEM. OUT is empty on
 * failure. What the list may allow is checked by jobrun_use_network.
 */
int rpc_network_rules(json_t *v, struct egress_rules *out, char *why,
    size_t whylen);

#endif
