/*
 * mcp_tools.c: the tools of `stockade mcp` (mcp.h, docs/mcp.md):
 * run_code, run_command, write_file, read_file, list_files, changes.
 *
 * Each tool is a front on the serve session (rpc_call: docs/protocol.md),
 * so its checks, quotas and error names are those of every other front.
 * A failure is a tool result with "isError": true and a text a model can
 * act on (MCP "Tools", "Error Handling": tool execution errors, input
 * validation errors included, are reported in the result so that the
 * model can correct itself); only an unknown tool is a protocol error.
 */
#include "mcp_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsreport.h"
#include "log.h"
#include "proto.h"
#include "result_json.h"
#include "rpc_internal.h"
#include "utf8.h"

/* The JSON Schema of a job's result (docs/result.schema.json), compiled
 * in (tools/embed-text.py). */
extern const char result_schema_text[];

/* Code passed as one argument up to this many bytes; longer code goes in
 * a file (an argument is at most 16 KiB: README, "Using stockade run";
 * docs/tool.md, "Long code"). */
#define CODE_ARG_MAX 16000u
/* The longest code a model may send (docs/tool.md's input schema). */
#define CODE_MAX (256u << 10)

/* How long code reaches a job (docs/tool.md): the file is written into
 * the workspace, opened by this wrapper as descriptor 3 and unlinked
 * before the program starts. $1 names it. (Standard input goes to exec
 * as its stdin: a pipe, docs/protocol.md.) */
static const char wrapper[] =
    "exec 3<\"/work/$1\" && rm -f \"/work/$1\" && shift 1 && exec \"$@\"";
/* The strings the wrapper puts before the program's argv: sh -c WRAPPER
 * sh CODE. */
#define WRAPPER_ARGS 5u

/* ---- results ---- */

json_t *
mcp_result(struct mcp_session *m, const char *text, json_t *structured,
    bool is_error)
{
	json_t *r = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text",
	    "text", text, "isError", is_error);

	if (r != NULL && structured != NULL && m->structured &&
	    json_object_set(r, "structuredContent", structured) < 0) {
		json_decref(r);
		r = NULL;
	}
	json_decref(structured);
	return r;
}

json_t *
mcp_tool_error(struct mcp_session *m, const char *fmt, ...)
{
	char *msg = NULL, *text = NULL;
	va_list ap;
	json_t *r;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	if (asprintf(&text, "error: %s", msg) < 0) {
		free(msg);
		return NULL;
	}
	r = mcp_result(m, text, NULL, true);
	free(msg);
	free(text);
	return r;
}

json_t *
mcp_rpc(struct mcp_session *m, const char *method, json_t *params, json_t **err)
{
	json_t *data = NULL, *r;
	char *message = NULL;
	const char *path;
	int code;

	*err = NULL;
	r = rpc_call(m->rpc, method, params, NULL, 0, &code, &message, &data);
	if (r != NULL)
		return r;
	path = json_string_value(json_object_get(data, "path"));
	if (message == NULL)
		;
	else if (code == RPC_FILE_ERROR && path != NULL)
		*err = mcp_tool_error(m, "%s (path \"%s\")", message, path);
	else if (code == RPC_FILE_ERROR)
		*err = mcp_tool_error(m, "%s", message);
	else if (code == RPC_INVALID_PARAMS)
		*err = mcp_tool_error(m, "invalid arguments: %s",
		    message +
			(strncmp(message,
			     "invalid "
			     "params: ",
			     16) == 0
				? 16
				: 0));
	else if (code == RPC_JOB_ERROR)
		*err = mcp_tool_error(m,
		    "the sandbox could not run the program "
		    "(%s). This is a failure of the sandbox, not "
		    "of your code: tell the user.",
		    message);
	else
		*err = mcp_tool_error(m, "%s", message);
	free(message);
	json_decref(data);
	return NULL;
}

/* ---- arguments ---- */

bool
mcp_known_args(json_t *args, const char *const *names, const char **bad)
{
	const char *key;
	json_t *v;

	json_object_foreach(args, key, v)
	{
		size_t i;

		for (i = 0; names[i] != NULL; i++)
			if (strcmp(key, names[i]) == 0)
				break;
		if (names[i] == NULL) {
			*bad = key;
			return false;
		}
	}
	return true;
}

const char *
mcp_str_arg(json_t *args, const char *name, bool *bad)
{
	json_t *v = json_object_get(args, name);

	if (v == NULL)
		return NULL;
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		*bad = true;
		return NULL;
	}
	return json_string_value(v);
}

bool
mcp_uint_arg(json_t *args, const char *name, uint64_t dflt, uint64_t min,
    uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(args, name);

	*out = dflt;
	if (v == NULL)
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) < min ||
	    (uint64_t)json_integer_value(v) > max)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* ---- running a job ---- */

/* Writes TEXT into a new helper file ".stockade-KIND-<16 hex>" (mode
 * 0600) and records its name in SLOT. Returns 0, or -1 with *ERR set. */
static int
put_helper(struct mcp_session *m, const char *kind, const char *text,
    size_t len, char **slot, json_t **err)
{
	char name[64];
	json_t *p, *r;

	*err = NULL;
	if (len > m->policy->files.inline_bytes) {
		*err = mcp_tool_error(m,
		    "too_large: %s is at most %llu bytes "
		    "(the policy's inline_kb)",
		    kind, (unsigned long long)m->policy->files.inline_bytes);
		return -1;
	}
	snprintf(name, sizeof(name), ".stockade-%s-%016llx", kind,
	    (unsigned long long)arc4random() << 32 | arc4random());
	p = json_pack("{s:s,s:s%,s:i,s:b}", "path", name, "text", text, len,
	    "mode", 0600, "overwrite", 0);
	r = p != NULL ? mcp_rpc(m, "fs.write", p, err) : NULL;
	json_decref(p);
	if (r == NULL)
		return -1;
	json_decref(r);
	if ((*slot = strdup(name)) == NULL)
		return -1;
	m->helper_sizes[slot - m->helpers] = len;
	return 0;
}

/* Removes the helper files of the job just run when the wrapper has not
 * unlinked them (the job never got that far): only a regular file of the
 * size written, never what a job made at the name. Their names stay
 * recorded: `changes` hides them. */
static void
remove_helpers(struct mcp_session *m)
{
	for (size_t i = 0; i < 2; i++) {
		json_t *p, *st, *r = NULL, *err = NULL;
		const char *type;

		if (m->helpers[i] == NULL ||
		    (p = json_pack("{s:s}", "path", m->helpers[i])) == NULL)
			continue;
		st = mcp_rpc(m, "fs.stat", p, &err);
		type = json_string_value(json_object_get(st, "type"));
		if (type != NULL && strcmp(type, "file") == 0 &&
		    json_integer_value(json_object_get(st, "size")) ==
			(json_int_t)m->helper_sizes[i])
			r = mcp_rpc(m, "fs.remove", p, &err);
		json_decref(p);
		json_decref(st);
		json_decref(r);
		json_decref(err);
	}
}

static void
forget_helpers(struct mcp_session *m)
{
	for (size_t i = 0; i < 2; i++) {
		free(m->helpers[i]);
		m->helpers[i] = NULL;
	}
}

/*
 * exec's parameters for ARGV (an array, borrowed), the options of ARGS
 * (timeout_seconds, memory_mb, env: passed on as they are, exec checks
 * them) and the optional STDIN_TEXT. Sets *LIMIT_MS to the job's wall
 * time limit as far as it is known here (the policy's, or a shorter
 * timeout_seconds), for progress. Returns a new object, or NULL on ENOMEM.
 */
static json_t *
exec_params(struct mcp_session *m, json_t *argv, json_t *args,
    const char *stdin_text, uint64_t *limit_ms)
{
	json_t *params, *v;

	*limit_ms = m->policy->limits.wall_ms;
	params = json_pack("{s:O}", "argv", argv);
	if (params == NULL)
		return NULL;
	if ((v = json_object_get(args, "timeout_seconds")) != NULL) {
		json_object_set(params, "timeout_seconds", v);
		if (json_is_number(v) && json_number_value(v) > 0 &&
		    json_number_value(v) * 1000.0 < (double)*limit_ms)
			*limit_ms = (uint64_t)(json_number_value(v) * 1000.0);
	}
	if ((v = json_object_get(args, "memory_mb")) != NULL)
		json_object_set(params, "memory_mb", v);
	if ((v = json_object_get(args, "env")) != NULL)
		json_object_set(params, "env", v);
	if ((v = json_object_get(args, "network")) != NULL)
		json_object_set(params, "network", v);
	if (stdin_text != NULL &&
	    json_object_set_new(params, "stdin", json_string(stdin_text)) < 0) {
		json_decref(params);
		return NULL;
	}
	return params;
}

/* The CallToolResult of a job that ran: exec's result R (stolen) as
 * structured content and as `stockade run --format text`'s text. NULL on
 * ENOMEM. */
static json_t *
job_result(struct mcp_session *m, json_t *r)
{
	char *text = NULL;
	size_t textlen = 0;
	json_t *v, *out;
	FILE *f;
	int status_error;

	/* The text form is stockade run --format text's (docs/tool.md). */
	if ((f = open_memstream(&text, &textlen)) == NULL) {
		json_decref(r);
		return NULL;
	}
	status_error = result_print_text(r, f);
	if (fclose(f) != 0 || status_error < 0) {
		free(text);
		json_decref(r);
		return NULL;
	}
	/* A job that ran is a result whatever its status: the model reads
	 * the status and the hint. Only the sandbox's own failure is an
	 * error of the tool (docs/decisions.md). */
	v = json_object_get(r, "status");
	out = mcp_result(m, text, r,
	    json_is_string(v) &&
		strcmp(json_string_value(v), "sandbox_error") == 0);
	free(text);
	return out;
}

/*
 * Runs ARGV (an array, borrowed) with the optional STDIN_TEXT (exec's
 * stdin, at most inline_kb: past it the call is refused, too_large) and
 * the options of ARGS (timeout_seconds, memory_mb, env: checked by exec
 * against the policy), through the wrapper when CODE (CODE_LEN bytes:
 * long code the wrapper opens as descriptor 3, ARGV then being the
 * interpreter and /proc/self/fd/3) is given. Returns a CallToolResult,
 * or NULL on ENOMEM.
 */
static json_t *
run_job(struct mcp_session *m, json_t *argv, json_t *args,
    const char *stdin_text, const char *code, size_t code_len, json_t *token)
{
	json_t *params, *r, *err = NULL;
	uint64_t limit_ms;

	forget_helpers(m);
	/* The wrapper's own five strings come first: refused before any
	 * helper file is written. */
	if (code != NULL && json_array_size(argv) + WRAPPER_ARGS > JOB_MAX_ARGS)
		return mcp_tool_error(m,
		    "invalid arguments: with long code, "
		    "argv holds at most %u strings",
		    JOB_MAX_ARGS - WRAPPER_ARGS);
	if ((params = exec_params(m, argv, args, stdin_text, &limit_ms)) ==
	    NULL)
		return NULL;
	if (code != NULL &&
	    put_helper(m, "code", code, code_len, &m->helpers[1], &err) < 0) {
		remove_helpers(m);
		json_decref(params);
		return err;
	}
	if (m->helpers[1] != NULL) {
		json_t *w = json_pack("[s,s,s,s,s]", "sh", "-c", wrapper, "sh",
		    m->helpers[1]);

		if (w == NULL || json_array_extend(w, argv) < 0 ||
		    json_object_set_new(params, "argv", w) < 0) {
			remove_helpers(m);
			json_decref(params);
			return NULL;
		}
	}
	if (m->hooks.cancelled != NULL && m->hooks.cancelled(m->hooks.arg)) {
		remove_helpers(m);
		json_decref(params);
		return mcp_tool_error(m, "cancelled before the job started");
	}
	if (m->hooks.job_begin != NULL)
		m->hooks.job_begin(m->hooks.arg, token, limit_ms);
	r = mcp_rpc(m, "exec", params, &err);
	if (m->hooks.job_end != NULL)
		m->hooks.job_end(m->hooks.arg);
	remove_helpers(m);
	json_decref(params);
	if (r == NULL)
		return err;
	return job_result(m, r);
}

static const char *const run_names[] = {
    "language",
    "code",
    "argv",
    "stdin",
    "env",
    "network",
    "timeout_seconds",
    "memory_mb",
    NULL,
};

/* run_code: {"language", "code", "stdin"?, "env"?, "timeout_seconds"?,
 * "memory_mb"?} (docs/tool.md's mapping). */
static json_t *
t_run_code(struct mcp_session *m, json_t *args, json_t *token)
{
	static const struct {
		const char *language, *interpreter;
	} langs[] = {{"python", "python3"}, {"bash", "bash"}, {"sh", "sh"}};
	const char *language, *code, *in, *interp = NULL, *bad = NULL;
	bool badtype = false;
	json_t *argv, *r;
	size_t len;

	if (!mcp_known_args(args, run_names, &bad) ||
	    json_object_get(args, "argv") != NULL)
		return mcp_tool_error(m,
		    "invalid arguments: run_code takes no "
		    "\"%s\"",
		    bad != NULL ? bad : "argv");
	language = mcp_str_arg(args, "language", &badtype);
	code = mcp_str_arg(args, "code", &badtype);
	in = mcp_str_arg(args, "stdin", &badtype);
	if (badtype || language == NULL || code == NULL)
		return mcp_tool_error(m,
		    "invalid arguments: language and code are "
		    "required strings (stdin, if given, a string)");
	for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
		if (strcmp(language, langs[i].language) == 0)
			interp = langs[i].interpreter;
	if (interp == NULL)
		return mcp_tool_error(m,
		    "invalid arguments: language must be "
		    "\"python\", \"bash\" or \"sh\"");
	len = strlen(code);
	if (len == 0 || len > CODE_MAX)
		return mcp_tool_error(m,
		    "invalid arguments: code must hold 1 to %u "
		    "bytes",
		    CODE_MAX);
	if (len <= CODE_ARG_MAX) {
		/* "--" ends a shell's options: code starting with "-" is
		 * code (sh(1): sh -c [--] command_string). */
		argv = strcmp(interp, "python3") == 0
		    ? json_pack("[s,s,s]", interp, "-c", code)
		    : json_pack("[s,s,s,s]", interp, "-c", "--", code);
		code = NULL;
	} else {
		argv = json_pack("[s,s]", interp, "/proc/self/fd/3");
	}
	if (argv == NULL)
		return NULL;
	r = run_job(m, argv, args, in, code, len, token);
	json_decref(argv);
	return r;
}

/* run_command: {"argv", "stdin"?, "env"?, "timeout_seconds"?,
 * "memory_mb"?}. */
static json_t *
t_run_command(struct mcp_session *m, json_t *args, json_t *token)
{
	const char *in, *bad = NULL;
	bool badtype = false;
	json_t *argv = json_object_get(args, "argv");

	if (!mcp_known_args(args, run_names, &bad) ||
	    json_object_get(args, "language") != NULL ||
	    json_object_get(args, "code") != NULL)
		return mcp_tool_error(m,
		    "invalid arguments: run_command takes no "
		    "\"%s\"",
		    bad != NULL				? bad
			: json_object_get(args, "code") ? "code"
							: "language");
	in = mcp_str_arg(args, "stdin", &badtype);
	if (badtype)
		return mcp_tool_error(m,
		    "invalid arguments: stdin must be a "
		    "string");
	if (!json_is_array(argv))
		return mcp_tool_error(m,
		    "invalid arguments: argv is a required "
		    "array of strings, the program first");
	return run_job(m, argv, args, in, NULL, 0, token);
}

/* ---- files ---- */

struct tool {
	const char *name;
	json_t *(*fn)(struct mcp_session *m, json_t *args, json_t *token);
};

/* Every tool of docs/mcp.md, in the order of tools/list (mcp_schema.c). */
static const struct tool tools[] = {
    {"run_code", t_run_code},
    {"run_command", t_run_command},
    {"write_file", mcp_write_file},
    {"read_file", mcp_read_file},
    {"list_files", mcp_list_files},
    {"changes", mcp_changes},
    {"checkpoint", mcp_checkpoint},
    {"restore_checkpoint", mcp_restore_checkpoint},
    {"list_checkpoints", mcp_list_checkpoints},
    {"drop_checkpoint", mcp_drop_checkpoint},
};

json_t *
mcp_tool_call(struct mcp_session *m, const char *name, json_t *args,
    json_t *token, bool *unknown)
{
	json_t *empty = NULL, *r;

	*unknown = false;
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		if (strcmp(name, tools[i].name) != 0)
			continue;
		if (args == NULL && (args = empty = json_object()) == NULL)
			return NULL;
		r = tools[i].fn(m, args, token);
		json_decref(empty);
		return r;
	}
	*unknown = true;
	return NULL;
}
