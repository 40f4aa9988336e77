/*
 * mcp_internal.h: what the tools of `stockade mcp` share (mcp_tools.c:
 * results, arguments, the jobs; mcp_files.c: the file tools;
 * mcp_schema.c: their descriptions and schemas). Not for other files.
 */
#ifndef STOCKADE_MCP_INTERNAL_H
#define STOCKADE_MCP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "mcp.h"

/*
 * A tool result (MCP CallToolResult): TEXT (copied) as its one text
 * content, STRUCTURED (stolen; may be NULL) as structuredContent when the
 * session's revision has it, and IS_ERROR. NULL on ENOMEM.
 */
json_t *mcp_result(struct mcp_session *m, const char *text, json_t *structured,
    bool is_error);

/* A failed tool call: text "error: " and the formatted message, isError
 * true, no structured content. NULL on ENOMEM. */
json_t *mcp_tool_error(struct mcp_session *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Calls METHOD of the serve session (rpc_call) with PARAMS (borrowed).
 * Returns its result (new reference), or NULL with *ERR set to the tool
 * error to answer (NULL on ENOMEM): a file error as "NAME: explanation
 * (path "P")", an invalid parameter as "invalid arguments: ...", a job
 * that could not run as a failure of the sandbox.
 */
json_t *mcp_rpc(struct mcp_session *m, const char *method, json_t *params,
    json_t **err);

/* Is every key of the object ARGS one of NAMES (NULL-terminated)? Else
 * false with *BAD the first unknown key (borrowed from ARGS). */
bool mcp_known_args(json_t *args, const char *const *names, const char **bad);

/* The string argument NAME of ARGS (borrowed), or NULL when absent; a
 * value that is not a string without NUL sets *BAD and gives NULL. */
const char *mcp_str_arg(json_t *args, const char *name, bool *bad);

/* An unsigned integer argument NAME of ARGS into *OUT (DFLT when
 * absent); false when it is not an integer from MIN to MAX. */
bool mcp_uint_arg(json_t *args, const char *name, uint64_t dflt, uint64_t min,
    uint64_t max, uint64_t *out);

/* The file tools (mcp_files.c); each returns a CallToolResult or NULL
 * (ENOMEM). TOKEN is the request's progress token (borrowed, may be
 * NULL). */
json_t *mcp_write_file(struct mcp_session *m, json_t *args, json_t *token);
json_t *mcp_read_file(struct mcp_session *m, json_t *args, json_t *token);
json_t *mcp_list_files(struct mcp_session *m, json_t *args, json_t *token);
json_t *mcp_changes(struct mcp_session *m, json_t *args, json_t *token);

/* The checkpoint tools (mcp_checkpoint.c; listed only when the policy's
 * [files] max_checkpoints is not 0), as the file tools: fs.checkpoint,
 * fs.restore, fs.checkpoints and fs.drop_checkpoint of the session. */
json_t *mcp_checkpoint(struct mcp_session *m, json_t *args, json_t *token);
json_t *mcp_restore_checkpoint(struct mcp_session *m, json_t *args,
    json_t *token);
json_t *mcp_list_checkpoints(struct mcp_session *m, json_t *args,
    json_t *token);
json_t *mcp_drop_checkpoint(struct mcp_session *m, json_t *args, json_t *token);

#endif
