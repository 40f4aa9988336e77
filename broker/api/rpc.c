/*
 * rpc.c: the JSON-RPC 2.0 dispatcher of `stockade serve` (rpc.h,
 * docs/protocol.md).
 *
 * Every request is checked in layers: the line as JSON (jansson, with
 * duplicate keys refused so that no two readers of a request can
 * disagree about it), the envelope as JSON-RPC 2.0, the method against
 * one table, every parameter against that method's list (an unknown one
 * is an error, not ignored: a misspelt "overwrite" must not silently
 * mean false), then each value's type and range. Paths then go to the
 * host file API (fsapi.h), which checks them as strings and resolves
 * them beneath the workspace descriptor only. Names going back out are
 * escaped (fsname.h, through fsreport.h), never raw. The parameter
 * checks and errors are in rpc_params.c, the exec method in rpc_exec.c,
 * the fs.* methods in rpc_fs.c; what they share is rpc_internal.h.
 */
#include "rpc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

/*
 * $/cancelRequest {"id"}: the transport cancels the job of the request
 * it names while that job runs (serve.c, rpc_cancels_current); in its
 * own turn it does nothing, as for an id already answered or unknown
 * (the LSP's convention for JSON-RPC, whose "$/" methods a receiver may
 * ignore). As a request with an id it is answered null.
 */
static json_t *
m_cancel_request(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"id", NULL};
	json_t *id = json_object_get(c->params, "id");

	(void)p;
	if (!rpc_known_params(c, names))
		return NULL;
	if (!json_is_string(id) && !json_is_integer(id))
		return rpc_bad_param(c, "id",
		    "expected the id (a string or an "
		    "integer) of the request to cancel");
	return json_null();
}

bool
rpc_cancels_current(const struct rpc_session *s, const char *line, size_t len)
{
	json_t *req, *m, *params;
	bool yes;

	if (s->current_id == NULL || json_is_null(s->current_id))
		return false;
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	if (req == NULL)
		return false;
	m = json_object_get(req, "method");
	params = json_object_get(req, "params");
	yes = json_is_string(m) &&
	    strcmp(json_string_value(m), "$/cancelRequest") == 0 &&
	    json_is_object(params) &&
	    json_equal(json_object_get(params, "id"), s->current_id);
	json_decref(req);
	return yes;
}

struct method {
	const char *name;
	json_t *(*fn)(struct call *c, struct rawpath *p);
};

/* Every method of docs/protocol.md; nothing else is dispatched. */
static const struct method methods[] = {
    {"exec", rpc_exec},
    {"fs.write", rpc_fs_write},
    {"fs.read", rpc_fs_read},
    {"fs.list", rpc_fs_list},
    {"fs.stat", rpc_fs_stat},
    {"fs.mkdir", rpc_fs_mkdir},
    {"fs.remove", rpc_fs_remove},
    {"fs.rename", rpc_fs_rename},
    {"fs.changes", rpc_fs_changes},
    {"fs.diff", rpc_fs_diff},
    {"fs.commit", rpc_fs_commit},
    {"fs.rollback", rpc_fs_rollback},
    {"fs.unpack", rpc_fs_unpack},
    {"fs.pack", rpc_fs_pack},
    {"$/cancelRequest", m_cancel_request},
};

void
rpc_session_init(struct rpc_session *s, int root, const struct policy *pol,
    struct supervisor *sup)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	fsapi_ctx_init(&s->fs, root, &pol->files);
	s->policy = pol;
	s->sup = sup;
	s->client_fd = -1;
	s->root_mode = fstat(root, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

void
rpc_session_free(struct rpc_session *s)
{
	rpc_stage_free_all(s);
}

/* Runs the request REQ (an object); returns the result or NULL with C's
 * error set. *NOTIFY is set when REQ is a well-formed notification. */
static json_t *
dispatch(struct call *c, json_t *req, json_t **id, bool *notify)
{
	json_t *v, *params, *r;
	struct rawpath p = {NULL, 0};
	const char *method;

	*id = json_object_get(req, "id");
	if (*id != NULL && !json_is_string(*id) && !json_is_number(*id) &&
	    !json_is_null(*id)) {
		*id = NULL;
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: id "
		    "must be a string, a number or null");
	}
	v = json_object_get(req, "jsonrpc");
	if (!json_is_string(v) || json_string_length(v) != 3 ||
	    strcmp(json_string_value(v), "2.0") != 0)
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: "
		    "jsonrpc must be \"2.0\"");
	v = json_object_get(req, "method");
	if (!json_is_string(v))
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: "
		    "method must be a string");
	method = json_string_value(v);
	params = json_object_get(req, "params");
	if (params != NULL && !json_is_object(params) && !json_is_array(params))
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: "
		    "params must be an object");
	if (c->nfds > RPC_MAX_FDS)
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: "
		    "more than %d descriptors",
		    RPC_MAX_FDS);
	*notify = *id == NULL;
	c->s->current_id = *id;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(method, methods[i].name) != 0 ||
		    strlen(method) != json_string_length(v))
			continue;
		if (params != NULL && json_is_array(params))
			return rpc_fail(c, RPC_INVALID_PARAMS, NULL,
			    "invalid "
			    "params: params must be an object (by "
			    "name)");
		if (params == NULL && (params = json_object()) != NULL)
			json_object_set_new(req, "params", params);
		if (params == NULL)
			return rpc_out_of_memory(c);
		c->params = params;
		r = methods[i].fn(c, &p);
		free(p.p);
		return r;
	}
	return rpc_fail(c, RPC_METHOD_NOT_FOUND, NULL, "method not found");
}

json_t *
rpc_call(struct rpc_session *s, const char *method, json_t *params, int *fds,
    size_t nfds, int *code, char **message, json_t **data)
{
	struct call c = {s, NULL, fds, nfds, 0, NULL, NULL};
	struct rawpath p = {NULL, 0};
	json_t *own = NULL, *r = NULL;
	size_t i;

	*code = 0;
	*message = NULL;
	*data = NULL;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(method, methods[i].name) == 0)
			break;
	if (i == sizeof(methods) / sizeof(methods[0]))
		rpc_fail(&c, RPC_METHOD_NOT_FOUND, NULL, "method not found");
	else if (nfds > RPC_MAX_FDS)
		rpc_fail(&c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: more "
		    "than %d descriptors",
		    RPC_MAX_FDS);
	else if (params == NULL && (params = own = json_object()) == NULL)
		rpc_out_of_memory(&c);
	else if (!json_is_object(params))
		rpc_fail(&c, RPC_INVALID_PARAMS, NULL,
		    "invalid params: params "
		    "must be an object (by name)");
	else {
		c.params = params;
		r = methods[i].fn(&c, &p);
		free(p.p);
	}
	for (i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	json_decref(own);
	if (r == NULL) {
		*code = c.code != 0 ? c.code : RPC_INTERNAL_ERROR;
		*message = c.message != NULL ? c.message
					     : strdup("out of memory");
		*data = c.data;
	}
	return r;
}

static char *
dump_line(json_t *o)
{
	return rpc_json_dumps(o);
}

char *
rpc_error_line(int code, const char *message)
{
	json_t *o = json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
	    "error", "code", code, "message", message);
	char *line = o != NULL ? dump_line(o) : NULL;

	json_decref(o);
	return line;
}

int
rpc_handle(struct rpc_session *s, const char *line, size_t len, int *fds,
    size_t nfds, char **response)
{
	struct call c = {s, NULL, fds, nfds, 0, NULL, NULL};
	json_error_t jerr;
	json_t *req, *id = NULL, *result = NULL, *resp = NULL, *err;
	bool notify = false, oom;

	*response = NULL;
	/* Duplicate keys are refused: {"path":"a","path":"../x"} must not
	 * mean one thing here and another to a proxy that checked it. NUL
	 * is allowed in strings so that a path holding one is refused as
	 * invalid_path by name, like every other bad path. */
	req = rpc_json_loadb(line, len,
	    JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr,
	    &oom);
	/* The broker's memory, not the line: -32603 (docs/protocol.md). */
	if (oom)
		rpc_out_of_memory(&c);
	else if (req == NULL)
		rpc_fail(&c, RPC_PARSE_ERROR, NULL,
		    "parse error: %s (column %d)", jerr.text, jerr.column);
	else if (json_is_array(req))
		rpc_fail(&c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: batches "
		    "are not supported");
	else if (!json_is_object(req))
		rpc_fail(&c, RPC_INVALID_REQUEST, NULL,
		    "invalid request: not an "
		    "object");
	else
		result = dispatch(&c, req, &id, &notify);
	s->current_id = NULL;
	for (size_t i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);

	if (notify) {
		json_decref(result);
	} else {
		resp = json_pack("{s:s,s:O}", "jsonrpc", "2.0", "id",
		    id != NULL ? id : json_null());
		if (resp != NULL && result != NULL) {
			if (json_object_set_new(resp, "result", result) < 0) {
				json_decref(resp);
				resp = NULL;
			}
		} else if (resp != NULL) {
			if (c.code == 0)
				c.code = RPC_INTERNAL_ERROR;
			err = json_pack("{s:i,s:s}", "code", c.code, "message",
			    c.message != NULL ? c.message : "out of memory");
			if (err != NULL && c.data != NULL &&
			    json_object_set(err, "data", c.data) < 0) {
				json_decref(err);
				err = NULL;
			}
			if (err == NULL ||
			    json_object_set_new(resp, "error", err) < 0) {
				json_decref(resp);
				resp = NULL;
			}
		} else {
			json_decref(result);
		}
		if (resp != NULL)
			*response = dump_line(resp);
	}
	json_decref(resp);
	json_decref(req);
	json_decref(c.data);
	free(c.message);
	return notify || *response != NULL ? 0 : -ENOMEM;
}
