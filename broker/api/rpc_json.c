/*
 * rpc_json.c: jansson's parse and dump for `stockade serve` and
 * `stockade mcp`, made to fail whenever one of jansson's own allocations
 * failed (rpc_internal.h, rpc_json_loadb and rpc_json_dumps).
 */
#include "rpc_internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <jansson.h>

/*
 * jansson's allocations go through json_alloc, which notes a failure, so
 * that a request the broker had no memory to parse is told from a bad
 * line: jansson 2.14's lexer reports some failed allocations as syntax
 * errors ("string or '}' expected") or with no text at all, and ignores
 * others (rpc_json_loadb, rpc_json_dumps). Found with tests/lib/faultshim.c.
 */
static _Thread_local bool json_alloc_failed;

static void *
json_alloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL)
		json_alloc_failed = true;
	return p;
}

static void
json_alloc_install(void)
{
	json_set_alloc_funcs(json_alloc, free);
}

/* Installs json_alloc once, whichever thread comes first (mcp reads
 * and writes on more than one). Then clears this thread's flag. */
static void
json_alloc_watch(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, json_alloc_install);
	json_alloc_failed = false;
}

json_t *
rpc_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *err,
    bool *oom)
{
	json_t *o;

	json_alloc_watch();
	o = json_loadb(buf, len, flags, err);
	/* jansson 2.14's lexer drops the bytes it could not append to a
	 * string and parses on: a request read after any failed allocation
	 * may say something else than the line ("rm -rf m" for "rm -rf
	 * mydir"), so it is never carried out. */
	if (o != NULL && json_alloc_failed) {
		json_decref(o);
		o = NULL;
	}
	*oom = o == NULL &&
	    (json_alloc_failed || err->text[0] == '\0' ||
		json_error_code(err) == json_error_out_of_memory);
	return o;
}

char *
rpc_json_dumps(const json_t *o)
{
	char *line;

	/* jansson 2.14's dump ignores a failed append of an object key's
	 * closing quote and goes on: a line written after any failed
	 * allocation may be malformed JSON, so it is none (ENOMEM). */
	json_alloc_watch();
	line = json_dumps(o, JSON_COMPACT);
	if (line != NULL && json_alloc_failed) {
		free(line);
		line = NULL;
	}
	return line;
}
