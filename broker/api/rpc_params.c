/*
 * rpc_params.c: what every method of `stockade serve` uses to read its
 * request and to answer (rpc_internal.h): the errors (-32602 for a bad
 * parameter, -32001 for a file error), the parameter checks (known
 * names, booleans, integers in range, paths as strings or base64,
 * descriptors sent with the request) and the answer objects that name a
 * path. The dispatcher is rpc.c; the methods are rpc_exec.c and
 * rpc_fs.c.
 */
#include "rpc_internal.h"

#include <errno.h>
#include <fcntl.h>
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
#include "utf8.h"
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
	return rpc_fail(c, RPC_INVALID_PARAMS,
	    json_pack("{s:s}", "param", param), "invalid params: %s: %s", param,
	    buf);
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
		    to != NULL ? to->p : NULL, to != NULL ? to->len : 0);
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

	json_object_foreach(c->params, key, v)
	{
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
		e = rpc_b64_decode(json_string_value(vb),
		    json_string_length(vb), SIZE_MAX, &raw, &p->len);
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
		rpc_bad_param(c, name, "missing (give %s or %s)", name,
		    name_b64);
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
		rpc_bad_param(c, name,
		    "expected the index of a descriptor sent "
		    "with this request (%zu sent)",
		    c->nfds);
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
		rpc_bad_param(c, name,
		    "expected a regular file, a pipe or a "
		    "socket");
		return false;
	}
	if (S_ISSOCK(st.st_mode) && !stream_connected(*fd)) {
		rpc_bad_param(c, name,
		    "a socket must be a connected stream socket "
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
