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
 * escaped (fsname.h, through fsreport.h), never raw. The fs.* methods
 * are in rpc_fs.c; what the two share is rpc_internal.h.
 */
#include "rpc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <resolv.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "fsreport.h"
#include "fsutil.h"
#include "jobrun.h"
#include "log.h"
#include "utf8.h"
#include "workspace.h"
#include "wspath.h"

/* Sets C's error; returns NULL for the method to return. DATA is
 * stolen. The message is made valid UTF-8: it may quote the request. */
json_t *__attribute__((format(printf, 4, 5)))
rpc_fail(struct call *c, int code, json_t *data, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(c->message);
	json_decref(c->data);
	c->code = code;
	c->message = utf8_sanitize(buf, strlen(buf), NULL);
	c->data = data;
	return NULL;
}

json_t *
rpc_out_of_memory(struct call *c)
{
	return rpc_fail(c, RPC_INTERNAL_ERROR, NULL, "out of memory");
}

/* -32602 for PARAM (its name in data.param). */
json_t *__attribute__((format(printf, 3, 4)))
rpc_bad_param(struct call *c, const char *param, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return rpc_fail(c, RPC_INVALID_PARAMS, json_pack("{s:s}", "param", param),
		    "invalid params: %s: %s", param, buf);
}

/*
 * Decodes the base64 string S (LEN bytes; b64_pton, which also skips
 * whitespace and refuses non-zero pad bits) into *OUT (NUL-terminated
 * after *OUTLEN; the caller frees it). Returns 0, -EINVAL when S is not
 * base64 (or holds a NUL), -EFBIG when the bytes are over MAX, -ENOMEM.
 */
int
rpc_b64_decode(const char *s, size_t len, size_t max, uint8_t **out,
	   size_t *outlen)
{
	size_t size = len / 4 * 3 + 3;
	uint8_t *buf;
	int n;

	*out = NULL;
	*outlen = 0;
	if (memchr(s, '\0', len) != NULL)
		return -EINVAL;
	if ((buf = malloc(size + 1)) == NULL)
		return -ENOMEM;
	if ((n = b64_pton(s, buf, size)) < 0) {
		free(buf);
		return -EINVAL;
	}
	if ((size_t)n > max) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*out = buf;
	*outlen = (size_t)n;
	return 0;
}

/* A new object whose first member is the name P (LEN bytes,
 * fsreport_set_name), then the members of REST (stolen, may be NULL:
 * then NULL). */
json_t *
rpc_named(const char *p, size_t len, json_t *rest)
{
	json_t *o = rest != NULL ? json_object() : NULL;

	if (o == NULL || !fsreport_set_name(o, "path", "path_b64", p, len) ||
	    json_object_update(o, rest) < 0) {
		json_decref(o);
		o = NULL;
	}
	json_decref(rest);
	return o;
}

/*
 * -32001 for WHY on the path P (and, for a rename, TO): message "NAME:
 * explanation" (TEXT, or the rule an invalid path breaks, or
 * fs_error_text), data {"error": NAME, "path": P escaped [, "path_b64"]
 * [, "to", "to_b64"]}.
 */
json_t *
rpc_file_error(struct call *c, enum fs_error why, const struct rawpath *p,
	   const struct rawpath *to, const char *text)
{
	json_t *data = json_pack("{s:s}", "error", fs_error_name(why));

	if (text == NULL)
		text = fsreport_explain(&c->s->fs, why, p->p, p->len,
					to != NULL ? to->p : NULL,
					to != NULL ? to->len : 0);
	if (data == NULL ||
	    !fsreport_set_name(data, "path", "path_b64", p->p, p->len) ||
	    (to != NULL &&
	     !fsreport_set_name(data, "to", "to_b64", to->p, to->len))) {
		json_decref(data);
		return rpc_out_of_memory(c);
	}
	return rpc_fail(c, RPC_FILE_ERROR, data, "%s: %s", fs_error_name(why),
		    text);
}

/* Refuses a parameter not in NAMES (NULL-terminated). */
bool
rpc_known_params(struct call *c, const char *const *names)
{
	const char *key;
	json_t *v;

	json_object_foreach(c->params, key, v) {
		bool found = false;

		for (size_t i = 0; names[i] != NULL && !found; i++)
			found = strcmp(key, names[i]) == 0;
		if (!found) {
			rpc_bad_param(c, key, "unknown parameter");
			return false;
		}
	}
	return true;
}

bool
rpc_opt_bool(struct call *c, const char *name, bool dflt, bool *out)
{
	json_t *v = json_object_get(c->params, name);

	*out = dflt;
	if (v == NULL)
		return true;
	if (!json_is_boolean(v)) {
		rpc_bad_param(c, name, "expected true or false");
		return false;
	}
	*out = json_is_true(v);
	return true;
}

/* An integer parameter in [MIN, MAX] (MAX <= INT64_MAX). */
bool
rpc_opt_uint(struct call *c, const char *name, uint64_t dflt, uint64_t min,
	 uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(c->params, name);
	json_int_t n;

	*out = dflt;
	if (v == NULL)
		return true;
	n = json_is_integer(v) ? json_integer_value(v) : -1;
	if (n < 0 || (uint64_t)n < min || (uint64_t)n > max) {
		rpc_bad_param(c, name, "expected an integer from %llu to %llu",
			  (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	*out = (uint64_t)n;
	return true;
}

/*
 * The path given as NAME (a JSON string) or NAME_B64 (its raw bytes in
 * base64), or DFLT when neither is given (NULL: one is required). A path
 * holding a NUL is invalid_path here: the file API takes C strings.
 */
bool
rpc_get_path(struct call *c, const char *name, const char *name_b64,
	 const char *dflt, struct rawpath *p)
{
	json_t *v = json_object_get(c->params, name);
	json_t *vb = json_object_get(c->params, name_b64);
	uint8_t *raw;
	int e;

	p->p = NULL;
	p->len = 0;
	if (v != NULL && vb != NULL) {
		rpc_bad_param(c, name_b64, "give %s or %s, not both", name,
			  name_b64);
		return false;
	}
	if (v != NULL) {
		if (!json_is_string(v)) {
			rpc_bad_param(c, name, "expected a string");
			return false;
		}
		p->len = json_string_length(v);
		p->p = malloc(p->len + 1);
		if (p->p == NULL) {
			rpc_out_of_memory(c);
			return false;
		}
		memcpy(p->p, json_string_value(v), p->len + 1);
	} else if (vb != NULL) {
		if (!json_is_string(vb)) {
			rpc_bad_param(c, name_b64, "expected a base64 string");
			return false;
		}
		e = rpc_b64_decode(json_string_value(vb), json_string_length(vb),
			       SIZE_MAX, &raw, &p->len);
		if (e == -ENOMEM) {
			rpc_out_of_memory(c);
			return false;
		}
		if (e < 0) {
			rpc_bad_param(c, name_b64, "not base64");
			return false;
		}
		p->p = (char *)raw;
	} else if (dflt != NULL) {
		p->len = strlen(dflt);
		if ((p->p = strdup(dflt)) == NULL) {
			rpc_out_of_memory(c);
			return false;
		}
	} else {
		rpc_bad_param(c, name, "missing (give %s or %s)", name, name_b64);
		return false;
	}
	if (memchr(p->p, '\0', p->len) != NULL) {
		rpc_file_error(c, FS_INVALID_PATH, p, NULL,
			   wspath_rule_text(WSPATH_NUL));
		return false;
	}
	return true;
}

/*
 * Whether the socket FD is one a transfer can end on: SOCK_STREAM (a
 * datagram socket has no end of file: a read waits for the next datagram
 * for ever), not listening (SO_ACCEPTCONN: it carries no data) and
 * connected (getpeername succeeds; an unconnected stream socket fails
 * reads with ENOTCONN only after they were tried, and is refused here
 * instead). socket(7), getpeername(2). A socketpair(2) end is connected.
 */
static bool
stream_connected(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(int), salen = sizeof(sa);
	int type = 0, listening = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_STREAM)
		return false;
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 ||
	    listening)
		return false;
	return getpeername(fd, (struct sockaddr *)&sa, &salen) == 0;
}

/*
 * The descriptor the parameter "fd" names: an index into the
 * descriptors that came with the request, checked before use (style.md
 * rule 10): open for reading (READABLE) or writing, blocking, not
 * O_PATH, and a regular file, a pipe or FIFO, or a connected stream
 * socket (stream_connected). A terminal or device could block the
 * session or never end; so could a datagram, listening or unconnected
 * socket. A pipe or socket whose peer never ends it still blocks the
 * transfer, but only until the session is interrupted (serve.c,
 * fsapi_set_interrupted).
 */
bool
rpc_get_fd(struct call *c, bool readable, int *fd)
{
	return rpc_get_fd_named(c, "fd", readable, fd);
}

bool
rpc_get_fd_named(struct call *c, const char *name, bool readable, int *fd)
{
	json_t *v = json_object_get(c->params, name);
	json_int_t i = json_is_integer(v) ? json_integer_value(v) : -1;
	struct stat st;
	int fl, acc;

	if (i < 0 || (size_t)i >= c->nfds) {
		rpc_bad_param(c, name, "expected the index of a descriptor sent "
			  "with this request (%zu sent)", c->nfds);
		return false;
	}
	*fd = c->fds[i];
	fl = fcntl(*fd, F_GETFL);
	acc = fl & O_ACCMODE;
	if (fl < 0 || (fl & O_PATH) ||
	    (readable ? acc == O_WRONLY : acc == O_RDONLY)) {
		rpc_bad_param(c, name, "the descriptor is not open for %s",
			  readable ? "reading" : "writing");
		return false;
	}
	if (fl & O_NONBLOCK) {
		rpc_bad_param(c, name, "the descriptor is non-blocking");
		return false;
	}
	if (fstat(*fd, &st) < 0 ||
	    !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ||
	      S_ISSOCK(st.st_mode))) {
		rpc_bad_param(c, name, "expected a regular file, a pipe or a "
			  "socket");
		return false;
	}
	if (S_ISSOCK(st.st_mode) && !stream_connected(*fd)) {
		rpc_bad_param(c, name, "a socket must be a connected stream socket "
			  "(not datagram, listening or unconnected)");
		return false;
	}
	return true;
}

/* An anonymous memory file holding DATA[0..LEN), at offset 0. */
int
rpc_memfd_with(const void *data, size_t len)
{
	int fd = memfd_create("stockade-rpc", MFD_CLOEXEC);
	int e;

	if (fd < 0)
		return -errno;
	if ((e = write_all(fd, data, len)) < 0 ||
	    (lseek(fd, 0, SEEK_SET) < 0 && (e = -errno) < 0)) {
		close(fd);
		return e;
	}
	return fd;
}

/* {"path": P [, "path_b64"], "size": SIZE}; NULL on ENOMEM. */
json_t *
rpc_path_size(struct call *c, const struct rawpath *p, uint64_t size)
{
	json_t *o = rpc_named(p->p, p->len,
			  json_pack("{s:I}", "size", (json_int_t)size));

	return o != NULL ? o : rpc_out_of_memory(c);
}

/* The "argv" parameter: a non-empty array of strings without NUL, as a
 * NULL-terminated vector of borrowed strings in *ARGV (freed by the
 * caller). */
static bool
get_argv(struct call *c, char ***argv, int *argc)
{
	json_t *v = json_object_get(c->params, "argv"), *s;
	size_t n = 0, i;

	*argv = NULL;
	*argc = 0;
	if (json_is_array(v))
		n = json_array_size(v);
	if (n == 0 || n > JOB_MAX_ARGS) {
		rpc_bad_param(c, "argv", "expected an array of 1 to %u strings",
			  JOB_MAX_ARGS);
		return false;
	}
	if ((*argv = calloc(n + 1, sizeof(char *))) == NULL) {
		rpc_out_of_memory(c);
		return false;
	}
	json_array_foreach(v, i, s) {
		if (!json_is_string(s) ||
		    strlen(json_string_value(s)) != json_string_length(s)) {
			rpc_bad_param(c, "argv", "element %zu is not a string "
				  "without NUL", i);
			return false;
		}
		/* Borrowed: the request keeps the string alive. */
		(*argv)[i] = (char *)(uintptr_t)json_string_value(s);
	}
	*argc = (int)n;
	return true;
}

/* timeout_seconds and memory_mb: at most the policy's limits. */
static bool
get_overrides(struct call *c, struct jobrun_overrides *ov)
{
	const struct job_limits *lim = &c->s->policy->limits;
	json_t *t = json_object_get(c->params, "timeout_seconds");
	uint64_t mb, max_mb = lim->memory_bytes >> 20;
	double v;

	memset(ov, 0, sizeof(*ov));
	if (t != NULL) {
		v = json_is_number(t) ? json_number_value(t) : -1.0;
		if (!(v > 0) || ceil(v * 1000.0) > (double)lim->wall_ms) {
			rpc_bad_param(c, "timeout_seconds", "expected seconds "
				  "above 0 and at most %.3f (the policy's "
				  "wall_time_ms)", (double)lim->wall_ms / 1000.0);
			return false;
		}
		ov->wall_ms = (uint64_t)ceil(v * 1000.0);
	}
	if (!rpc_opt_uint(c, "memory_mb", 0, max_mb < 16 ? max_mb : 16, max_mb,
		      &mb))
		return false;
	ov->memory_bytes = mb << 20;
	return true;
}

/*
 * The job's standard input (docs/protocol.md, exec): at most one of
 * "stdin" (a string, its bytes as they are, at most inline_kb),
 * "stdin_b64" (base64, at most inline_kb decoded) or "stdin_fd" (a
 * readable descriptor sent with the request, rpc_get_fd's kinds),
 * streamed to the program (stdin_feed.h). Inline bytes over the limit
 * are refused by name (too_large), never cut: a job must not run on part
 * of its input. *FEED_SET says whether F was set up; *RAW holds decoded
 * base64 (the caller frees it after the job).
 */
static bool
get_stdin(struct call *c, struct stdin_feed *f, bool *feed_set, uint8_t **raw)
{
	static const char *const names[] = {"stdin", "stdin_b64", "stdin_fd"};
	uint64_t limit = c->s->policy->files.inline_bytes;
	const char *given = NULL;
	json_t *v;
	size_t len;
	int fd, e;

	*feed_set = false;
	*raw = NULL;
	for (size_t i = 0; i < 3; i++) {
		if (json_object_get(c->params, names[i]) == NULL)
			continue;
		if (given != NULL) {
			rpc_bad_param(c, names[i], "give one of stdin, stdin_b64 "
				      "and stdin_fd, not %s and %s", given,
				      names[i]);
			return false;
		}
		given = names[i];
	}
	if (given == NULL)
		return true;
	v = json_object_get(c->params, given);
	if (strcmp(given, "stdin_fd") == 0) {
		if (!rpc_get_fd_named(c, "stdin_fd", true, &fd))
			return false;
		if (stdin_feed_init_fd(f, fd) < 0) {
			rpc_out_of_memory(c);
			return false;
		}
		*feed_set = true;
		return true;
	}
	if (!json_is_string(v)) {
		rpc_bad_param(c, given, "expected a %sstring",
			      given[5] == '_' ? "base64 " : "");
		return false;
	}
	len = json_string_length(v);
	if (given[5] == '_') {
		e = rpc_b64_decode(json_string_value(v), len, limit, raw, &len);
		if (e == -ENOMEM) {
			rpc_out_of_memory(c);
			return false;
		}
		if (e == -EINVAL) {
			rpc_bad_param(c, given, "not base64");
			return false;
		}
	} else {
		e = len > limit ? -EFBIG : 0;
	}
	if (e == -EFBIG) {
		rpc_fail(c, RPC_INVALID_PARAMS, json_pack("{s:s,s:s,s:I}",
			 "param", given, "error", "too_large", "limit_bytes",
			 (json_int_t)limit), "invalid params: %s: too_large: "
			 "inline standard input is at most %llu bytes (the "
			 "policy's [files] inline_kb); pass a descriptor as "
			 "stdin_fd for more", given, (unsigned long long)limit);
		return false;
	}
	stdin_feed_init_data(f, *raw != NULL ? (const void *)*raw :
			     (const void *)json_string_value(v), len);
	*feed_set = true;
	return true;
}

/*
 * The "env" parameter: an object of variable names and string values,
 * laid over the policy's [environment] (jobrun_set_env) as far as its
 * [jail] client_env allows. A refusal is -32602 with data.param "env",
 * data.error its name (invalid_env_name, invalid_env_value,
 * env_not_allowed, too_many_env) and data.name the variable.
 */
static bool
get_env(struct call *c, struct jobrun *jr)
{
	json_t *o = json_object_get(c->params, "env"), *v;
	enum jobenv_error je;
	const char *name;
	char why[512];
	bool oom;
	int e;

	if (o == NULL)
		return true;
	if (!json_is_object(o)) {
		rpc_bad_param(c, "env", "expected an object of variable names "
			      "and string values");
		return false;
	}
	json_object_foreach(o, name, v) {
		if (!json_is_string(v)) {
			rpc_fail(c, RPC_INVALID_PARAMS, json_pack("{s:s,s:s,s:s}",
				 "param", "env", "error", "invalid_env_value",
				 "name", name), "invalid params: env: "
				 "invalid_env_value: the value of %.64s is not a "
				 "string", name);
			return false;
		}
		je = jobrun_set_env(jr, c->s->policy, name, json_string_value(v),
				    json_string_length(v), &oom, why,
				    sizeof(why));
		if (oom) {
			rpc_out_of_memory(c);
			return false;
		}
		if (je != JOBENV_OK) {
			rpc_fail(c, RPC_INVALID_PARAMS, json_pack("{s:s,s:s,s:s}",
				 "param", "env", "error", jobenv_error_name(je),
				 "name", name), "invalid params: env: %s", why);
			return false;
		}
	}
	if ((e = jobrun_check_fits(jr)) < 0) {
		if (e == -ENOMEM)
			rpc_out_of_memory(c);
		else
			rpc_bad_param(c, "env", "%s",
				      jobrun_spec_error(e, why, sizeof(why)));
		return false;
	}
	return true;
}

/* Puts the workspace directory's permission bits back to the session's
 * (rpc_session.root_mode) when a job changed them; best effort. */
static void
restore_root_mode(struct rpc_session *s)
{
	int e;

	if (s->root_mode >= 0 &&
	    (e = workspace_restore_mode(s->fs.root,
					(unsigned)s->root_mode)) < 0)
		log_warn("cannot put back the workspace's mode %04o: %s",
			 (unsigned)s->root_mode, strerror(-e));
}

/*
 * exec: the job runs with the workspace at /work; a snapshot before and
 * one after make the manifest fs.changes reports. The snapshot before
 * borrows the hashes of the last one after (snapshot.h), so a workspace
 * the client did not touch between two jobs is not read twice.
 */
static json_t *
m_exec(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"argv", "timeout_seconds",
					    "memory_mb", "stdin", "stdin_b64",
					    "stdin_fd", "env", NULL};
	struct rpc_session *s = c->s;
	struct snapshot before, after;
	struct jobrun_overrides ov;
	struct jobrun jr;
	struct stdin_feed feed;
	char err[256];
	_cleanup_free_ char **argv = NULL;
	_cleanup_free_ uint8_t *raw = NULL;
	bool has_stdin;
	json_t *r;
	int argc, e;

	(void)p;
	stdin_feed_init_data(&feed, "", 0);
	if (!rpc_known_params(c, names) || !get_argv(c, &argv, &argc) ||
	    !get_overrides(c, &ov) || !get_stdin(c, &feed, &has_stdin, &raw)) {
		stdin_feed_free(&feed);
		return NULL;
	}
	if ((e = jobrun_init(&jr, s->policy, argc, argv, &ov)) < 0) {
		stdin_feed_free(&feed);
		if (e == -ENOMEM)
			return rpc_out_of_memory(c);
		return rpc_bad_param(c, "argv", "%s",
				 jobrun_spec_error(e, err, sizeof(err)));
	}
	if (!get_env(c, &jr)) {
		jobrun_free(&jr);
		stdin_feed_free(&feed);
		return NULL;
	}
	if (has_stdin)
		jr.feed = &feed;
	if (s->sup == NULL) {
		jobrun_free(&jr);
		stdin_feed_free(&feed);
		return rpc_fail(c, RPC_JOB_ERROR, NULL, "no launcher in this "
			    "session");
	}
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	/* Interrupted (-EINTR), the job is not run and the session ends
	 * after this answer (serve.c); after the job, fs.changes is then
	 * io_error. */
	e = snapshot_take(s->fs.root, &s->fs.quota,
			  s->after.valid ? &s->after : NULL,
			  jobrun_interrupted, &before);
	if (e < 0) {
		jobrun_free(&jr);
		stdin_feed_free(&feed);
		if (e == -EINTR)
			return rpc_fail(c, RPC_JOB_ERROR, NULL, "the broker was "
				    "interrupted before the job");
		return rpc_fail(c, RPC_JOB_ERROR, NULL, "cannot read the workspace "
			    "before the job: %s", strerror(-e));
	}
	e = jobrun_exec(&jr, s->sup, &s->fs, false);
	/* A job's chmod of /work itself (000 would lock the broker out of
	 * the next snapshot when it is not root) ends with the job, as at
	 * the end of `stockade run` (workspace_close). */
	restore_root_mode(s);
	if (e < 0) {
		r = rpc_fail(c, RPC_JOB_ERROR, NULL, "%s",
			 jr.res.detail ? jr.res.detail : strerror(-e));
		snapshot_free(&before);
		jobrun_free(&jr);
		stdin_feed_free(&feed);
		return r;
	}
	e = snapshot_take(s->fs.root, &s->fs.quota, &before,
			  jobrun_interrupted, &after);
	snapshot_free(&s->before);
	snapshot_free(&s->after);
	s->before = before;
	s->after = after;
	s->changes_failed = e < 0;
	if (e < 0)
		snapshot_free(&s->before);
	r = jobrun_result_json(&jr);
	jobrun_free(&jr);
	stdin_feed_free(&feed);
	return r != NULL ? r : rpc_out_of_memory(c);
}

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
		return rpc_bad_param(c, "id", "expected the id (a string or an "
				     "integer) of the request to cancel");
	return json_null();
}

bool
rpc_cancels_current(const struct rpc_session *s, const char *line,
		    size_t len)
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
	{"exec", m_exec},
	{"fs.write", rpc_fs_write},
	{"fs.read", rpc_fs_read},
	{"fs.list", rpc_fs_list},
	{"fs.stat", rpc_fs_stat},
	{"fs.mkdir", rpc_fs_mkdir},
	{"fs.remove", rpc_fs_remove},
	{"fs.rename", rpc_fs_rename},
	{"fs.changes", rpc_fs_changes},
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
	snapshot_free(&s->before);
	snapshot_free(&s->after);
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
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: id "
			    "must be a string, a number or null");
	}
	v = json_object_get(req, "jsonrpc");
	if (!json_is_string(v) || json_string_length(v) != 3 ||
	    strcmp(json_string_value(v), "2.0") != 0)
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "jsonrpc must be \"2.0\"");
	v = json_object_get(req, "method");
	if (!json_is_string(v))
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "method must be a string");
	method = json_string_value(v);
	params = json_object_get(req, "params");
	if (params != NULL && !json_is_object(params) &&
	    !json_is_array(params))
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "params must be an object");
	if (c->nfds > RPC_MAX_FDS)
		return rpc_fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "more than %d descriptors", RPC_MAX_FDS);
	*notify = *id == NULL;
	c->s->current_id = *id;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(method, methods[i].name) != 0 ||
		    strlen(method) != json_string_length(v))
			continue;
		if (params != NULL && json_is_array(params))
			return rpc_fail(c, RPC_INVALID_PARAMS, NULL, "invalid "
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
		rpc_fail(&c, RPC_INVALID_REQUEST, NULL, "invalid request: more "
			 "than %d descriptors", RPC_MAX_FDS);
	else if (params == NULL && (params = own = json_object()) == NULL)
		rpc_out_of_memory(&c);
	else if (!json_is_object(params))
		rpc_fail(&c, RPC_INVALID_PARAMS, NULL, "invalid params: params "
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
		*message = c.message != NULL ? c.message : strdup("out of memory");
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
	req = rpc_json_loadb(line, len, JSON_DECODE_ANY |
			     JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr,
			     &oom);
	/* The broker's memory, not the line: -32603 (docs/protocol.md). */
	if (oom)
		rpc_out_of_memory(&c);
	else if (req == NULL)
		rpc_fail(&c, RPC_PARSE_ERROR, NULL, "parse error: %s (column %d)",
		     jerr.text, jerr.column);
	else if (json_is_array(req))
		rpc_fail(&c, RPC_INVALID_REQUEST, NULL, "invalid request: batches "
		     "are not supported");
	else if (!json_is_object(req))
		rpc_fail(&c, RPC_INVALID_REQUEST, NULL, "invalid request: not an "
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
					c.message != NULL ? c.message :
							    "out of memory");
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
