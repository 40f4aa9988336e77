/*
 * mcp_schema.c: what tools/list says of each tool of `stockade mcp`: its
 * description (written for a model, with the policy's figures), the JSON
 * Schema of its input (the policy's limits as maxima: a model may ask for
 * less, never for more) and of its structured output, and its hints
 * (MCP "Tools": inputSchema, outputSchema, annotations).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_rules.h"
#include "log.h"
#include "mcp_internal.h"

/* docs/result.schema.json, compiled in (tools/embed-text.py). */
extern const char result_schema_text[];

#define MIB (1024.0 * 1024.0)

/* The run tools' description: docs/tool.md's, with POL's figures. */
static char *
run_description(const struct policy *pol, bool code)
{
	const struct job_limits *l = &pol->limits;
	char *s = NULL;

	if (asprintf(&s,
		"%s"
		"Files: /work is your workspace and the current directory. "
		"What "
		"you write there stays between calls. /tmp is private to one "
		"call, emptied after it, and small (%.0f MiB). There is no "
		"network: only loopback inside the sandbox; nothing can be "
		"downloaded or installed.\n\n"
		"Limits of one call, for all its processes together: %.3g s of "
		"wall-clock time (timeout_seconds, at most %.3g), %.3g s of "
		"CPU "
		"time, %.0f MiB of memory (memory_mb, at most %.0f), %u "
		"processes and threads, %.0f MiB per file, %.0f MiB in /work, "
		"and %.0f KiB each of stdout and stderr kept (%s). Print a "
		"summary; write large results to files in /work.\n\n"
		"Every call ends in exactly one status: ok, exit_nonzero, "
		"timeout, cpu_limit, memory_limit, process_limit, "
		"output_limit, "
		"file_size_limit, disk_full, crash, policy_violation, "
		"sandbox_error or cancelled. The reply starts with that "
		"status, "
		"then a hint line that says what happened and what to do next. "
		"Follow the hint. Do not rerun a program unchanged after a "
		"failure; after policy_violation the same call will always "
		"fail. sandbox_error is a failure of the sandbox, not of your "
		"code: tell the user. cancelled means the user stopped the "
		"job: do not run it again, tell the user.",
		code
		    ? "Run a program's source code in a Linux sandbox and get "
		      "back one result.\n\nLanguages: \"python\" (Python 3 and "
		      "its standard library; do not assume third-party "
		      "packages such as numpy or pandas), \"bash\" or \"sh\" "
		      "(a script, with the usual POSIX tools: coreutils, "
		      "grep, sed, awk, find, tar, gzip).\n\n"
		    : "Run one program with its arguments (an argv array, no "
		      "shell: use run_code with bash for pipes and "
		      "redirections) in a Linux sandbox and get back one "
		      "result. Programs are those of the host's /usr, "
		      "read-only.\n\n",
		(double)l->tmp_bytes / MIB, (double)l->wall_ms / 1000.0,
		(double)l->wall_ms / 1000.0, (double)l->cpu_ms / 1000.0,
		(double)l->memory_bytes / MIB, (double)l->memory_bytes / MIB,
		l->nproc, (double)l->fsize_bytes / MIB,
		(double)l->workspace_bytes / MIB,
		(double)l->stdout_bytes / 1024.0,
		pol->on_output_limit == OUTPUT_KILL
		    ? "past that the program is stopped; the head and the "
		      "tail are kept"
		    : "past that only the head and the tail are kept and the "
		      "program goes on") < 0)
		return NULL;
	return s;
}

/*
 * The "env" input property: an object of variable names and string
 * values, the names those the policy's [jail] client_env allows ("*":
 * any name; a list: its names and prefixes, in the description). NULL
 * when the policy allows none (the tools then take no env) or on ENOMEM.
 */
static json_t *
env_prop(const struct policy *pol)
{
	const char *list = pol->client_env != NULL ? pol->client_env : "";
	char *desc = NULL;
	json_t *o;

	if (strspn(list, " \t,") == strlen(list))
		return NULL;
	if (asprintf(&desc,
		"Environment variables for this call only, laid "
		"over the sandbox's own (PATH, HOME, LANG, ...). %s%s",
		strcmp(list, "*") == 0 ? "Any name."
				       : "Names allowed (NAME* is a prefix): ",
		strcmp(list, "*") == 0 ? "" : list) < 0)
		return NULL;
	o = json_pack("{s:s,s:{s:s},s:{s:s,s:i},s:s}", "type", "object",
	    "additionalProperties", "type", "string", "propertyNames",
	    "pattern", "^[A-Za-z_][A-Za-z0-9_]*$", "maxLength", 255,
	    "description", desc);
	free(desc);
	return o;
}

/*
 * The "network" input property when POL allows hosts (policy_has_network):
 * an object of allow, allow_address and deny arrays that narrows the
 * policy's [network] list for one call (serve's exec parameter of the
 * same name, rpc_network_rules), the policy's list in its description.
 * NULL when the policy allows none, or on ENOMEM.
 */
static json_t *
network_prop(const struct policy *pol)
{
	char rule[EGRESS_RULE_BUF], *desc = NULL, *list = NULL;
	json_t *o, *arr;
	size_t len = 0;
	FILE *f;

	if (!policy_has_network(pol) ||
	    (f = open_memstream(&list, &len)) == NULL)
		return NULL;
	for (size_t i = 0; i < pol->net.rules.n; i++)
		if (egress_rule_format(&pol->net.rules.v[i], rule,
			sizeof(rule)) == 0)
			fprintf(f, "%s%s %s", i > 0 ? ", " : "",
			    egress_rule_kind_name(pol->net.rules.v[i].kind),
			    rule);
	if (fclose(f) != 0 ||
	    asprintf(&desc,
		"Hosts this call may reach, through the sandbox's proxy: "
		"a narrower list than the policy's (%s); never a wider "
		"one. Without it, the policy's list.",
		list) < 0) {
		free(list);
		return NULL;
	}
	free(list);
	arr = json_pack("{s:s,s:{s:s}}", "type", "array", "items", "type",
	    "string");
	o = json_pack("{s:s,s:b,s:{s:O,s:O,s:O},s:s}", "type", "object",
	    "additionalProperties", 0, "properties", "allow", arr,
	    "allow_address", arr, "deny", arr, "description", desc);
	json_decref(arr);
	free(desc);
	return o;
}

/* The input properties the two run tools share: stdin, env, network
 * and the limits. */
static json_t *
run_props(const struct policy *pol)
{
	const struct job_limits *l = &pol->limits;
	double wall = (double)l->wall_ms / 1000.0;
	json_int_t mem = (json_int_t)(l->memory_bytes >> 20);
	json_t *props, *env, *net;

	props = json_pack("{s:{s:s,s:I,s:s},s:{s:s,s:i,s:f,s:f,s:s},"
			  "s:{s:s,s:i,s:I,s:I,s:s}}",
	    "stdin", "type", "string", "maxLength",
	    (json_int_t)pol->files.inline_bytes, "description",
	    "Text given to the program on standard input. Without it, "
	    "standard input is empty.",
	    "timeout_seconds", "type", "number", "exclusiveMinimum", 0,
	    "maximum", wall, "default", wall, "description",
	    "Wall-clock limit of this call, seconds.", "memory_mb", "type",
	    "integer", "minimum", 16, "maximum", mem, "default", mem,
	    "description",
	    "Memory limit of this call (all its processes together), MiB.");
	if (props != NULL && (env = env_prop(pol)) != NULL &&
	    json_object_set_new(props, "env", env) < 0) {
		json_decref(props);
		return NULL;
	}
	if (props != NULL && (net = network_prop(pol)) != NULL &&
	    json_object_set_new(props, "network", net) < 0) {
		json_decref(props);
		return NULL;
	}
	return props;
}

/* The output schema of a job: docs/result.schema.json without "$schema"
 * and "$id" (a client's validator may not know the 2020-12 meta-schema
 * by name; MCP's default dialect is 2020-12 anyway). */
static json_t *
result_schema(void)
{
	json_error_t jerr;
	json_t *s = json_loads(result_schema_text, 0, &jerr);

	if (s == NULL) {
		log_error("the compiled-in result schema is not JSON: %s",
		    jerr.text);
		return NULL;
	}
	json_object_del(s, "$schema");
	json_object_del(s, "$id");
	return s;
}

/* Schema fragments of the file tools' output. */
static const char entry_schema[] =
    "{\"type\":\"object\",\"required\":[\"path\",\"type\",\"size\"],"
    "\"properties\":{\"path\":{\"type\":\"string\"},"
    "\"path_b64\":{\"type\":\"string\"},\"type\":{\"enum\":[\"file\","
    "\"directory\",\"symlink\",\"fifo\",\"socket\",\"char_device\","
    "\"block_device\",\"other\"]},\"size\":{\"type\":[\"integer\","
    "\"null\"],\"minimum\":0},\"mode\":{\"type\":\"integer\"},"
    "\"mtime\":{\"type\":\"number\"},\"sha256\":{\"type\":[\"string\","
    "\"null\"]}}}";

/* The outputSchema of the file tool TOOL: a new reference, or NULL
 * (ENOMEM). */
static json_t *
output_schema(const char *tool)
{
	json_t *entry = json_loads(entry_schema, 0, NULL), *out;

	if (entry == NULL)
		return NULL;
	if (strcmp(tool, "write_file") == 0) {
		json_decref(entry);
		return json_pack("{s:s,s:[s,s],s:{s:{s:s},s:{s:s},s:{s:s}}}",
		    "type", "object", "required", "path", "size", "properties",
		    "path", "type", "string", "path_b64", "type", "string",
		    "size", "type", "integer");
	}
	if (strcmp(tool, "read_file") == 0) {
		json_decref(entry);
		return json_pack(
		    "{s:s,s:[s,s,s,s,s,s,s],s:{s:{s:s},s:{s:s},s:{s:s},"
		    "s:{s:s},s:{s:s},s:{s:[s,s]},s:{s:s},s:{s:s}}}",
		    "type", "object", "required", "path", "offset", "size",
		    "file_size", "encoding", "content", "truncated",
		    "properties", "path", "type", "string", "path_b64", "type",
		    "string", "offset", "type", "integer", "size", "type",
		    "integer", "file_size", "type", "integer", "encoding",
		    "enum", "utf-8", "base64", "content", "type", "string",
		    "truncated", "type", "boolean");
	}
	if (strcmp(tool, "list_files") == 0)
		return json_pack("{s:s,s:[s,s],s:{s:{s:s,s:o},s:{s:s}}}",
		    "type", "object", "required", "entries", "truncated",
		    "properties", "entries", "type", "array", "items", entry,
		    "truncated", "type", "boolean");
	/* changes: ENTRY three times, each "O" a new reference; the one
	 * json_loads gave is dropped after (found by fuzz/fuzz_mcp.c: it
	 * leaked once per tools list). */
	out = json_pack("{s:s,s:[s,s,s,s],s:{s:{s:s,s:O},s:{s:s,s:O},"
			"s:{s:s,s:O},s:{s:s},s:{s:s}}}",
	    "type", "object", "required", "created", "modified", "deleted",
	    "truncated", "properties", "created", "type", "array", "items",
	    entry, "modified", "type", "array", "items", entry, "deleted",
	    "type", "array", "items", entry, "truncated", "type", "boolean",
	    "unhashed", "type", "integer");
	json_decref(entry);
	return out;
}

/* One tool: NAME, TITLE, DESCRIPTION (stolen), INPUT (stolen), OUTPUT
 * (stolen), and the hints of MCP's ToolAnnotations. */
static json_t *
tool(const char *name, const char *title, char *description, json_t *input,
    json_t *output, bool structured, bool read_only, bool destructive)
{
	json_t *t = NULL;

	if (description != NULL && input != NULL && output != NULL)
		t = json_pack("{s:s,s:s,s:O,s:{s:s,s:b,s:b,s:b,s:b}}", "name",
		    name, "description", description, "inputSchema", input,
		    "annotations", "title", title, "readOnlyHint", read_only,
		    "destructiveHint", destructive, "idempotentHint", read_only,
		    /* No network: nothing outside the workspace
			       * is reached. */
		    "openWorldHint", 0);
	if (t != NULL && structured &&
	    (json_object_set_new(t, "title", json_string(title)) < 0 ||
		json_object_set(t, "outputSchema", output) < 0)) {
		json_decref(t);
		t = NULL;
	}
	free(description);
	json_decref(input);
	json_decref(output);
	return t;
}

/* The run_code tool's entry of tools/list: run_props with the language
 * and the source as its input; NULL on ENOMEM. */
static json_t *
tool_run_code(const struct policy *pol, bool structured)
{
	json_t *props = run_props(pol), *t;

	if (props == NULL ||
	    json_object_set_new(props, "language",
		json_pack("{s:s,s:[s,s,s],s:s}", "type", "string", "enum",
		    "python", "bash", "sh", "description",
		    "python runs the code with "
		    "python3; bash and sh run it as a script.")) < 0 ||
	    json_object_set_new(props, "code",
		json_pack("{s:s,s:i,s:i,s:s}", "type", "string", "minLength", 1,
		    "maxLength", 262144, "description",
		    "The program's source. "
		    "Its current directory is /work.")) < 0) {
		json_decref(props);
		return NULL;
	}
	t = tool("run_code", "Run code", run_description(pol, true),
	    json_pack("{s:s,s:O,s:[s,s],s:b}", "type", "object", "properties",
		props, "required", "language", "code", "additionalProperties",
		0),
	    result_schema(), structured, false, true);
	json_decref(props);
	return t;
}

/* The run_command tool's entry of tools/list: run_props with the
 * argument vector as its input; NULL on ENOMEM. */
static json_t *
tool_run_command(const struct policy *pol, bool structured)
{
	json_t *props = run_props(pol), *t;

	if (props == NULL ||
	    json_object_set_new(props, "argv",
		json_pack("{s:s,s:{s:s},s:i,s:i,s:s}", "type", "array", "items",
		    "type", "string", "minItems", 1, "maxItems", 1024,
		    "description",
		    "The program and its arguments, e.g. [\"ls\", \"-l\"]; the "
		    "program is looked up in PATH "
		    "(/usr/local/bin:/usr/bin:/bin) "
		    "and runs in /work.")) < 0) {
		json_decref(props);
		return NULL;
	}
	t = tool("run_command", "Run a command", run_description(pol, false),
	    json_pack("{s:s,s:O,s:[s],s:b}", "type", "object", "properties",
		props, "required", "argv", "additionalProperties", 0),
	    result_schema(), structured, false, true);
	json_decref(props);
	return t;
}

/* The write_file tool's entry of tools/list (tool()); NULL on ENOMEM. */
static json_t *
tool_write_file(bool structured)
{
	return tool("write_file", "Write a file",
	    strdup("Write a file into the workspace (/work), replacing one "
		   "that exists and making missing parent directories. "
		   "path is relative to /work (no \"..\", no symbolic "
		   "links on the way). content is the text, or with "
		   "encoding \"base64\" the bytes in base64."),
	    json_pack("{s:s,s:{s:{s:s,s:s},s:{s:s,s:s},s:{s:s,s:[s,s],"
		      "s:s}},s:[s,s],s:b}",
		"type", "object", "properties", "path", "type", "string",
		"description",
		"Path relative to /work, e.g. \"data/input.csv\".", "content",
		"type", "string", "description", "The file's content.",
		"encoding", "type", "string", "enum", "utf-8", "base64",
		"default", "utf-8", "required", "path", "content",
		"additionalProperties", 0),
	    output_schema("write_file"), structured, false, true);
}

/* The read_file tool's entry of tools/list (tool()); NULL on ENOMEM. */
static json_t *
tool_read_file(bool structured)
{
	return tool("read_file", "Read a file",
	    strdup("Read a file of the workspace (/work): text when it is "
		   "UTF-8, else base64 (encoding says which). A long file "
		   "comes in parts: when truncated is true, call again "
		   "with offset set to offset + size."),
	    json_pack("{s:s,s:{s:{s:s,s:s},s:{s:s,s:i,s:s},s:{s:s,s:i,"
		      "s:s}},s:[s],s:b}",
		"type", "object", "properties", "path", "type", "string",
		"description", "Path relative to /work.", "offset", "type",
		"integer", "minimum", 0, "description",
		"First byte to read (default 0).", "length", "type", "integer",
		"minimum", 1, "description",
		"Most bytes to read (default and ceiling: the "
		"policy's inline limit).",
		"required", "path", "additionalProperties", 0),
	    output_schema("read_file"), structured, true, false);
}

/* The list_files tool's entry of tools/list (tool()); NULL on ENOMEM. */
static json_t *
tool_list_files(bool structured)
{
	return tool("list_files", "List files",
	    strdup("List a directory of the workspace (/work): each entry's "
		   "type, size in bytes and path. Symbolic links are "
		   "listed, never followed."),
	    json_pack("{s:s,s:{s:{s:s,s:s,s:s},s:{s:s,s:b,s:s}},s:b}", "type",
		"object", "properties", "path", "type", "string", "default",
		".", "description",
		"Directory relative to /work; \".\" is /work itself.",
		"recursive", "type", "boolean", "default", 0, "description",
		"Also list what is below.", "additionalProperties", 0),
	    output_schema("list_files"), structured, true, false);
}

/* The changes tool's entry of tools/list (tool()); NULL on ENOMEM. */
static json_t *
tool_changes(bool structured)
{
	return tool("changes", "Changes of the last run",
	    strdup("What the last run_code or run_command created, modified "
		   "and deleted in the workspace (/work), with sizes and "
		   "SHA-256 hashes."),
	    json_pack("{s:s,s:{},s:b}", "type", "object", "properties",
		"additionalProperties", 0),
	    output_schema("changes"), structured, true, false);
}

/* The input schema of a checkpoint tool: {"name"} required, or no
 * argument at all (WITH_NAME false). */
static json_t *
ckpt_input(bool with_name)
{
	if (!with_name)
		return json_pack("{s:s,s:{},s:b}", "type", "object",
		    "properties", "additionalProperties", 0);
	return json_pack("{s:s,s:{s:{s:s,s:s,s:i,s:i,s:s}},s:[s],s:b}", "type",
	    "object", "properties", "name", "type", "string", "pattern",
	    "^[A-Za-z0-9._-]+$", "minLength", 1, "maxLength", 64, "description",
	    "The checkpoint's name, e.g. \"before-refactor\".", "required",
	    "name", "additionalProperties", 0);
}

/* The output schema of a checkpoint tool: an object with the integer
 * fields INTS (NULL-terminated) and "name"; NULL on ENOMEM. */
static json_t *
ckpt_output(const char *const *ints)
{
	json_t *o = json_pack("{s:s,s:[s],s:{s:{s:s}}}", "type", "object",
	    "required", "name", "properties", "name", "type", "string");
	json_t *props = json_object_get(o, "properties");

	for (size_t i = 0; o != NULL && ints[i] != NULL; i++)
		if (json_object_set_new(props, ints[i],
			json_pack("{s:s,s:i}", "type", "integer", "minimum",
			    0)) < 0) {
			json_decref(o);
			o = NULL;
		}
	return o;
}

/* The list_checkpoints tool's output schema; NULL on ENOMEM. */
static json_t *
ckpt_list_output(void)
{
	return json_pack("{s:s,s:[s,s],s:{s:{s:s,s:{s:s,s:{s:{s:s},s:{s:s},"
			 "s:{s:s},s:{s:s},s:{s:s}}}},s:{s:s}}}",
	    "type", "object", "required", "checkpoints", "max", "properties",
	    "checkpoints", "type", "array", "items", "type", "object",
	    "properties", "name", "type", "string", "created", "type",
	    "integer", "paths", "type", "integer", "bytes", "type", "integer",
	    "broken", "type", "boolean", "max", "type", "integer");
}

/* Appends the checkpoint tools' entries to LIST; how many it tried. */
static size_t
ckpt_tools(json_t *list, bool structured)
{
	static const char *const made[] = {"checkpoints", NULL};
	static const char *const restored[] = {"restored", "bytes", "skipped",
	    NULL};

	json_array_append_new(list,
	    tool("checkpoint", "Make a checkpoint",
		strdup("Remember the workspace (/work) as it is now under a "
		       "name, so that restore_checkpoint can put it back "
		       "later: before a risky change, or to try two fixes "
		       "one after the other. Cheap: only what changes "
		       "afterwards is saved."),
		ckpt_input(true), ckpt_output(made), structured, false, false));
	json_array_append_new(list,
	    tool("restore_checkpoint", "Restore a checkpoint",
		strdup("Put the workspace (/work) back exactly as it was at "
		       "the named checkpoint: files, directories and links "
		       "made since are removed, changed and removed ones come "
		       "back. Later checkpoints are dropped; this one stays."),
		ckpt_input(true), ckpt_output(restored), structured, false,
		true));
	json_array_append_new(list,
	    tool("list_checkpoints", "List checkpoints",
		strdup("The checkpoints of this session, oldest first, with "
		       "what each has saved since it was made."),
		ckpt_input(false), ckpt_list_output(), structured, true,
		false));
	json_array_append_new(list,
	    tool("drop_checkpoint", "Drop a checkpoint",
		strdup("Forget a checkpoint (the workspace is not changed); "
		       "older ones can still be restored."),
		ckpt_input(true), ckpt_output(made), structured, false, false));
	return 4;
}

json_t *
mcp_tools_list(const struct policy *pol, bool structured)
{
	json_t *list = json_array();
	size_t want = 6;

	if (list == NULL)
		return NULL;
	json_array_append_new(list, tool_run_code(pol, structured));
	json_array_append_new(list, tool_run_command(pol, structured));
	json_array_append_new(list, tool_write_file(structured));
	json_array_append_new(list, tool_read_file(structured));
	json_array_append_new(list, tool_list_files(structured));
	json_array_append_new(list, tool_changes(structured));
	if (pol->files.max_checkpoints > 0)
		want += ckpt_tools(list, structured);
	if (json_array_size(list) != want) {
		json_decref(list);
		return NULL;
	}
	return list;
}
