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
 * escaped (fsname.h, through fsreport.h), never raw.
 */
#include "rpc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
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
#include "utf8.h"
#include "wspath.h"

/* One request being answered. */
struct call {
	struct rpc_session *s;
	json_t *params;      /* an object, borrowed */
	int *fds;            /* borrowed: rpc_handle closes them */
	size_t nfds;
	int code;            /* the error when a method returns NULL */
	char *message;       /* owned, valid UTF-8 */
	json_t *data;        /* owned, may be NULL */
};

/* A path from a request: LEN bytes at P (owned, NUL-terminated after
 * LEN; a NUL within LEN makes it invalid). */
struct rawpath {
	char *p;
	size_t len;
};

/* Sets C's error; returns NULL for the method to return. DATA is
 * stolen. The message is made valid UTF-8: it may quote the request. */
static json_t *__attribute__((format(printf, 4, 5)))
fail(struct call *c, int code, json_t *data, const char *fmt, ...)
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

static json_t *
out_of_memory(struct call *c)
{
	return fail(c, RPC_INTERNAL_ERROR, NULL, "out of memory");
}

/* -32602 for PARAM (its name in data.param). */
static json_t *__attribute__((format(printf, 3, 4)))
bad_param(struct call *c, const char *param, const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return fail(c, RPC_INVALID_PARAMS, json_pack("{s:s}", "param", param),
		    "invalid params: %s: %s", param, buf);
}

/*
 * Decodes the base64 string S (LEN bytes; b64_pton, which also skips
 * whitespace and refuses non-zero pad bits) into *OUT (NUL-terminated
 * after *OUTLEN; the caller frees it). Returns 0, -EINVAL when S is not
 * base64 (or holds a NUL), -EFBIG when the bytes are over MAX, -ENOMEM.
 */
static int
b64_decode(const char *s, size_t len, size_t max, uint8_t **out,
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
static json_t *
named(const char *p, size_t len, json_t *rest)
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
static json_t *
file_error(struct call *c, enum fs_error why, const struct rawpath *p,
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
		return out_of_memory(c);
	}
	return fail(c, RPC_FILE_ERROR, data, "%s: %s", fs_error_name(why),
		    text);
}

/* Refuses a parameter not in NAMES (NULL-terminated). */
static bool
known_params(struct call *c, const char *const *names)
{
	const char *key;
	json_t *v;

	json_object_foreach(c->params, key, v) {
		bool found = false;

		for (size_t i = 0; names[i] != NULL && !found; i++)
			found = strcmp(key, names[i]) == 0;
		if (!found) {
			bad_param(c, key, "unknown parameter");
			return false;
		}
	}
	return true;
}

static bool
opt_bool(struct call *c, const char *name, bool dflt, bool *out)
{
	json_t *v = json_object_get(c->params, name);

	*out = dflt;
	if (v == NULL)
		return true;
	if (!json_is_boolean(v)) {
		bad_param(c, name, "expected true or false");
		return false;
	}
	*out = json_is_true(v);
	return true;
}

/* An integer parameter in [MIN, MAX] (MAX <= INT64_MAX). */
static bool
opt_uint(struct call *c, const char *name, uint64_t dflt, uint64_t min,
	 uint64_t max, uint64_t *out)
{
	json_t *v = json_object_get(c->params, name);
	json_int_t n;

	*out = dflt;
	if (v == NULL)
		return true;
	n = json_is_integer(v) ? json_integer_value(v) : -1;
	if (n < 0 || (uint64_t)n < min || (uint64_t)n > max) {
		bad_param(c, name, "expected an integer from %llu to %llu",
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
static bool
get_path(struct call *c, const char *name, const char *name_b64,
	 const char *dflt, struct rawpath *p)
{
	json_t *v = json_object_get(c->params, name);
	json_t *vb = json_object_get(c->params, name_b64);
	uint8_t *raw;
	int e;

	p->p = NULL;
	p->len = 0;
	if (v != NULL && vb != NULL) {
		bad_param(c, name_b64, "give %s or %s, not both", name,
			  name_b64);
		return false;
	}
	if (v != NULL) {
		if (!json_is_string(v)) {
			bad_param(c, name, "expected a string");
			return false;
		}
		p->len = json_string_length(v);
		p->p = malloc(p->len + 1);
		if (p->p == NULL) {
			out_of_memory(c);
			return false;
		}
		memcpy(p->p, json_string_value(v), p->len + 1);
	} else if (vb != NULL) {
		if (!json_is_string(vb)) {
			bad_param(c, name_b64, "expected a base64 string");
			return false;
		}
		e = b64_decode(json_string_value(vb), json_string_length(vb),
			       SIZE_MAX, &raw, &p->len);
		if (e == -ENOMEM) {
			out_of_memory(c);
			return false;
		}
		if (e < 0) {
			bad_param(c, name_b64, "not base64");
			return false;
		}
		p->p = (char *)raw;
	} else if (dflt != NULL) {
		p->len = strlen(dflt);
		if ((p->p = strdup(dflt)) == NULL) {
			out_of_memory(c);
			return false;
		}
	} else {
		bad_param(c, name, "missing (give %s or %s)", name, name_b64);
		return false;
	}
	if (memchr(p->p, '\0', p->len) != NULL) {
		file_error(c, FS_INVALID_PATH, p, NULL,
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
static bool
get_fd(struct call *c, bool readable, int *fd)
{
	json_t *v = json_object_get(c->params, "fd");
	json_int_t i = json_is_integer(v) ? json_integer_value(v) : -1;
	struct stat st;
	int fl, acc;

	if (i < 0 || (size_t)i >= c->nfds) {
		bad_param(c, "fd", "expected the index of a descriptor sent "
			  "with this request (%zu sent)", c->nfds);
		return false;
	}
	*fd = c->fds[i];
	fl = fcntl(*fd, F_GETFL);
	acc = fl & O_ACCMODE;
	if (fl < 0 || (fl & O_PATH) ||
	    (readable ? acc == O_WRONLY : acc == O_RDONLY)) {
		bad_param(c, "fd", "the descriptor is not open for %s",
			  readable ? "reading" : "writing");
		return false;
	}
	if (fl & O_NONBLOCK) {
		bad_param(c, "fd", "the descriptor is non-blocking");
		return false;
	}
	if (fstat(*fd, &st) < 0 ||
	    !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) ||
	      S_ISSOCK(st.st_mode))) {
		bad_param(c, "fd", "expected a regular file, a pipe or a "
			  "socket");
		return false;
	}
	if (S_ISSOCK(st.st_mode) && !stream_connected(*fd)) {
		bad_param(c, "fd", "a socket must be a connected stream socket "
			  "(not datagram, listening or unconnected)");
		return false;
	}
	return true;
}

/* An anonymous memory file holding DATA[0..LEN), at offset 0. */
static int
memfd_with(const void *data, size_t len)
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
static json_t *
path_size(struct call *c, const struct rawpath *p, uint64_t size)
{
	json_t *o = named(p->p, p->len,
			  json_pack("{s:I}", "size", (json_int_t)size));

	return o != NULL ? o : out_of_memory(c);
}

/*
 * How long a write from a pipe without "size" waits, once the pipe has
 * ended, for a sign that the client died, milliseconds. A killed client
 * releases its descriptors one by one (task_work_run, which may
 * reschedule between them), its pipe's write end possibly before its
 * connection: the pipe's end of file can come first. A live client is
 * waiting for the answer and never hangs up, so it pays this once per
 * such write; "size" makes the check exact and the wait unnecessary.
 */
#define CLIENT_SETTLE_MS 50

/* Whether the client's connection is closed, or closes within WAIT_MS
 * (POLLHUP: both directions; a client that only shut down its writing
 * still reads its answers and has not gone). */
static bool
client_gone(const struct rpc_session *s, int wait_ms)
{
	struct pollfd p = {.fd = s->client_fd, .events = 0};
	int n;

	if (s->client_fd < 0)
		return false;
	do
		n = poll(&p, 1, wait_ms);
	while (n < 0 && errno == EINTR);
	return n == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

static json_t *
m_write(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "data", "text",
					    "fd", "size", "mode", "overwrite",
					    NULL};
	static const char *const sources[] = {"data", "text", "fd"};
	const char *source = NULL;
	uint64_t mode, inline_max = c->s->fs.quota.inline_bytes, written = 0;
	uint64_t size, got, limit = c->s->fs.quota.file_bytes;
	_cleanup_close_ int mfd = -1;
	_cleanup_free_ uint8_t *raw = NULL;
	enum fs_error why;
	struct stat st;
	bool overwrite;
	size_t len = 0;
	int in = -1, e;

	if (!known_params(c, names) || !get_path(c, "path", "path_b64", NULL, p) ||
	    !opt_uint(c, "mode", 0644, 0, 07777, &mode) ||
	    !opt_bool(c, "overwrite", false, &overwrite) ||
	    !opt_uint(c, "size", UINT64_MAX, 0, INT64_MAX, &size))
		return NULL;
	for (size_t i = 0; i < 3; i++) {
		if (json_object_get(c->params, sources[i]) == NULL)
			continue;
		if (source != NULL)
			return bad_param(c, sources[i], "give only one of data, "
					 "text and fd");
		source = sources[i];
	}
	if (source == NULL)
		return bad_param(c, "data", "missing (give data, text or fd)");
	if (size != UINT64_MAX && strcmp(source, "fd") != 0)
		return bad_param(c, "size", "only with fd");
	if (strcmp(source, "fd") == 0) {
		if (!get_fd(c, true, &in))
			return NULL;
		if (fstat(in, &st) == 0 && S_ISREG(st.st_mode)) {
			off_t off = lseek(in, 0, SEEK_CUR);

			if (size != UINT64_MAX && off >= 0 &&
			    (uint64_t)(st.st_size > off ? st.st_size - off : 0) !=
				    size)
				return file_error(c, FS_IO_ERROR, p, NULL,
						  "the file does not hold size "
						  "bytes from its offset");
		} else {
			if (size != UINT64_MAX && size < limit)
				limit = size;
			/* Staged (fsapi_stage): nothing is named before the
			 * data has ended and its size and the client are
			 * checked. A regular file needs no staging: its
			 * content is all there. */
			if ((mfd = fsapi_stage(c->s->fs.root, in, limit, &got,
					       &why)) < 0)
				return file_error(c, why, p, NULL, NULL);
			if (size != UINT64_MAX && got != size)
				return file_error(c, got > size ? FS_TOO_LARGE :
						  FS_IO_ERROR, p, NULL,
						  "the descriptor did not give "
						  "size bytes: nothing written");
			if (got > limit)
				return file_error(c, FS_TOO_LARGE, p, NULL, NULL);
			if (client_gone(c->s, size != UINT64_MAX ? 0 :
					   CLIENT_SETTLE_MS))
				return file_error(c, FS_IO_ERROR, p, NULL,
						  "the client went away before "
						  "the data ended: nothing "
						  "written");
			in = mfd;
		}
	} else {
		json_t *v = json_object_get(c->params, source);
		const void *bytes;

		if (!json_is_string(v))
			return bad_param(c, source, "expected a string");
		if (strcmp(source, "data") == 0) {
			e = b64_decode(json_string_value(v),
				       json_string_length(v), inline_max, &raw,
				       &len);
			if (e == -ENOMEM)
				return out_of_memory(c);
			if (e == -EINVAL)
				return bad_param(c, "data", "not base64");
			bytes = raw;
		} else {
			len = json_string_length(v);
			e = len > inline_max ? -EFBIG : 0;
			bytes = json_string_value(v);
		}
		if (e == -EFBIG)
			return file_error(c, FS_TOO_LARGE, p, NULL,
					  "an inline payload is at most "
					  "inline_kb: pass a descriptor");
		if ((mfd = memfd_with(bytes, len)) < 0)
			return fail(c, RPC_INTERNAL_ERROR, NULL, "cannot buffer "
				    "the data: %s", strerror(-mfd));
		in = mfd;
	}
	if (fsapi_put(&c->s->fs, p->p, in, (mode_t)mode, overwrite, &written,
		      &why) < 0)
		return file_error(c, why, p, NULL, NULL);
	return path_size(c, p, written);
}

static json_t *
m_read(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "offset",
					    "length", "fd", NULL};
	uint64_t offset, length, copied = 0;
	uint64_t inline_max = c->s->fs.quota.inline_bytes;
	_cleanup_close_ int mfd = -1;
	_cleanup_free_ char *b64 = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	enum fs_error why;
	json_t *o;
	int out;

	if (!known_params(c, names) || !get_path(c, "path", "path_b64", NULL, p) ||
	    !opt_uint(c, "offset", 0, 0, INT64_MAX, &offset) ||
	    !opt_uint(c, "length", UINT64_MAX, 0, INT64_MAX, &length))
		return NULL;
	if (json_object_get(c->params, "fd") != NULL) {
		if (!get_fd(c, false, &out))
			return NULL;
		if (fsapi_get(&c->s->fs, p->p, offset, length, out, &copied,
			      &why) < 0)
			return file_error(c, why, p, NULL, NULL);
		return path_size(c, p, copied);
	}
	/* Inline: at most inline_max bytes, decided on what is copied (one
	 * byte more than allowed means too large), never on a size read
	 * before: the file may grow meanwhile. */
	if ((mfd = memfd_create("stockade-rpc", MFD_CLOEXEC)) < 0)
		return fail(c, RPC_INTERNAL_ERROR, NULL, "cannot buffer the "
			    "data: %s", strerror(errno));
	if (inline_max < UINT64_MAX && length > inline_max + 1)
		length = inline_max + 1;
	if (fsapi_get(&c->s->fs, p->p, offset, length, mfd, &copied, &why) <
	    0)
		return file_error(c, why, p, NULL, NULL);
	if (copied > inline_max)
		return file_error(c, FS_TOO_LARGE, p, NULL, "over inline_kb: "
				  "pass a descriptor, or an offset and length");
	if ((buf = malloc(copied + 1)) == NULL)
		return out_of_memory(c);
	if (pread(mfd, buf, copied, 0) != (ssize_t)copied)
		return file_error(c, FS_IO_ERROR, p, NULL, NULL);
	if ((b64 = fsreport_base64(buf, copied)) == NULL ||
	    (o = path_size(c, p, copied)) == NULL)
		return out_of_memory(c);
	if (json_object_set_new(o, "data", json_string(b64)) < 0) {
		json_decref(o);
		return out_of_memory(c);
	}
	return o;
}

/* The most bytes of entries one fs.list reply holds (compact JSON): the
 * broker builds the whole reply in memory, and a client reads it as one
 * line (docs/protocol.md). */
#define LIST_MAX_BYTES (16u << 20)

struct list_reply {
	json_t *entries;
	size_t bytes;		/* their compact JSON, with commas */
};

static int
list_one(void *arg, const struct fs_entry *e)
{
	struct list_reply *l = arg;
	json_t *o = fsreport_entry(e, false);
	size_t n;

	if (o == NULL)
		return -ENOMEM;
	/* json_dumpb with no buffer: the size it would write. */
	n = json_dumpb(o, NULL, 0, JSON_COMPACT) + 1;
	if (n > LIST_MAX_BYTES - l->bytes) {
		json_decref(o);
		return 1;	/* truncated */
	}
	l->bytes += n;
	/* json_array_append_new takes O even when it fails. */
	if (json_array_append_new(l->entries, o) < 0)
		return -ENOMEM;
	return 0;
}

static json_t *
m_list(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "recursive",
					    "limit", NULL};
	uint64_t max = c->s->fs.quota.max_files, limit;
	enum fs_error why;
	bool recursive, truncated = false;
	struct list_reply l = {NULL, 0};

	if (max == 0 || max > INT64_MAX)
		max = INT64_MAX;
	if (!known_params(c, names) || !get_path(c, "path", "path_b64", ".", p) ||
	    !opt_bool(c, "recursive", false, &recursive) ||
	    !opt_uint(c, "limit", max, 1, INT64_MAX, &limit))
		return NULL;
	if (limit > max)
		limit = max;
	if ((l.entries = json_array()) == NULL)
		return out_of_memory(c);
	if (fsapi_list(&c->s->fs, p->p, recursive, (size_t)limit, list_one,
		       &l, &truncated, &why) < 0) {
		json_decref(l.entries);
		return file_error(c, why, p, NULL, NULL);
	}
	return json_pack("{s:o,s:b}", "entries", l.entries, "truncated",
			 truncated);
}

static json_t *
m_stat(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", NULL};
	struct fs_entry e;
	enum fs_error why;
	json_t *o;

	if (!known_params(c, names) || !get_path(c, "path", "path_b64", NULL, p))
		return NULL;
	if (fsapi_stat(&c->s->fs, p->p, &e, &why) < 0)
		return file_error(c, why, p, NULL, NULL);
	if ((o = fsreport_entry(&e, true)) == NULL)
		return out_of_memory(c);
	return o;
}

static json_t *
m_mkdir(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "parents",
					    "mode", NULL};
	enum fs_error why;
	uint64_t mode;
	bool parents;

	if (!known_params(c, names) || !get_path(c, "path", "path_b64", NULL, p) ||
	    !opt_bool(c, "parents", false, &parents) ||
	    !opt_uint(c, "mode", 0755, 0, 07777, &mode))
		return NULL;
	if (fsapi_mkdir(&c->s->fs, p->p, (mode_t)mode, parents, &why) < 0)
		return file_error(c, why, p, NULL, NULL);
	return json_object();
}

static json_t *
m_remove(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"path", "path_b64", "recursive",
					    NULL};
	enum fs_error why;
	bool recursive;

	if (!known_params(c, names) || !get_path(c, "path", "path_b64", NULL, p) ||
	    !opt_bool(c, "recursive", false, &recursive))
		return NULL;
	if (fsapi_remove(&c->s->fs, p->p, recursive, &why) < 0)
		return file_error(c, why, p, NULL, NULL);
	return json_object();
}

static json_t *
m_rename(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {"from", "from_b64", "to", "to_b64",
					    "overwrite", NULL};
	struct rawpath to = {NULL, 0};
	enum fs_error why;
	bool overwrite;
	json_t *r = NULL;

	if (known_params(c, names) && get_path(c, "from", "from_b64", NULL, p) &&
	    get_path(c, "to", "to_b64", NULL, &to) &&
	    opt_bool(c, "overwrite", false, &overwrite)) {
		if (fsapi_rename(&c->s->fs, p->p, to.p, overwrite, &why) < 0)
			file_error(c, why, p, &to, NULL);
		else if ((r = json_object()) == NULL)
			out_of_memory(c);
	}
	free(to.p);
	return r;
}

/* One item of fs.changes: {"path", "type", "size", "sha256"}. */
static json_t *
change_json(const struct snap_entry *e)
{
	char hex[65];

	snap_hex(e, hex);
	return named(e->path, strlen(e->path),
		     json_pack("{s:s,s:I,s:o}", "type", fs_type_name(e->type),
			       "size", (json_int_t)e->size, "sha256",
			       e->hashed ? json_string(hex) : json_null()));
}

static json_t *
m_changes(struct call *c, struct rawpath *p)
{
	static const char *const names[] = {NULL};
	static const char *const kinds[] = {"created", "modified", "deleted"};
	struct rpc_session *s = c->s;
	struct changes ch = {NULL, 0, false, 0};
	json_t *o, *lists[3];

	if (!known_params(c, names))
		return NULL;
	if (s->changes_failed) {
		p->p = strdup(".");
		p->len = 1;
		if (p->p == NULL)
			return out_of_memory(c);
		return file_error(c, FS_IO_ERROR, p, NULL, "the workspace "
				  "could not be read around the last exec");
	}
	if (s->before.valid && s->after.valid &&
	    snapshot_diff(&s->before, &s->after, &ch) < 0)
		return out_of_memory(c);
	o = json_pack("{s:[],s:[],s:[],s:b,s:I}", kinds[0], kinds[1],
		      kinds[2], "truncated", ch.truncated, "unhashed",
		      (json_int_t)ch.unhashed);
	for (size_t k = 0; o != NULL && k < 3; k++)
		lists[k] = json_object_get(o, kinds[k]);
	for (size_t i = 0; o != NULL && i < ch.n; i++) {
		json_t *item = change_json(ch.c[i].entry);

		if (item == NULL ||
		    json_array_append_new(lists[ch.c[i].kind], item) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	changes_free(&ch);
	return o != NULL ? o : out_of_memory(c);
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
		bad_param(c, "argv", "expected an array of 1 to %u strings",
			  JOB_MAX_ARGS);
		return false;
	}
	if ((*argv = calloc(n + 1, sizeof(char *))) == NULL) {
		out_of_memory(c);
		return false;
	}
	json_array_foreach(v, i, s) {
		if (!json_is_string(s) ||
		    strlen(json_string_value(s)) != json_string_length(s)) {
			bad_param(c, "argv", "element %zu is not a string "
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
			bad_param(c, "timeout_seconds", "expected seconds "
				  "above 0 and at most %.3f (the policy's "
				  "wall_time_ms)", (double)lim->wall_ms / 1000.0);
			return false;
		}
		ov->wall_ms = (uint64_t)ceil(v * 1000.0);
	}
	if (!opt_uint(c, "memory_mb", 0, max_mb < 16 ? max_mb : 16, max_mb,
		      &mb))
		return false;
	ov->memory_bytes = mb << 20;
	return true;
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
					    "memory_mb", NULL};
	struct rpc_session *s = c->s;
	struct snapshot before, after;
	struct jobrun_overrides ov;
	struct jobrun jr;
	char err[256];
	_cleanup_free_ char **argv = NULL;
	json_t *r;
	int argc, e;

	(void)p;
	if (!known_params(c, names) || !get_argv(c, &argv, &argc) ||
	    !get_overrides(c, &ov))
		return NULL;
	if ((e = jobrun_init(&jr, s->policy, argc, argv, &ov)) < 0) {
		if (e == -ENOMEM)
			return out_of_memory(c);
		return bad_param(c, "argv", "%s",
				 jobrun_spec_error(e, err, sizeof(err)));
	}
	if (s->sup == NULL) {
		jobrun_free(&jr);
		return fail(c, RPC_JOB_ERROR, NULL, "no launcher in this "
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
		if (e == -EINTR)
			return fail(c, RPC_JOB_ERROR, NULL, "the broker was "
				    "interrupted before the job");
		return fail(c, RPC_JOB_ERROR, NULL, "cannot read the workspace "
			    "before the job: %s", strerror(-e));
	}
	e = jobrun_exec(&jr, s->sup, s->fs.root, false);
	s->fs.usage_valid = false;
	if (e < 0) {
		r = fail(c, RPC_JOB_ERROR, NULL, "%s",
			 jr.res.detail ? jr.res.detail : strerror(-e));
		snapshot_free(&before);
		jobrun_free(&jr);
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
	return r != NULL ? r : out_of_memory(c);
}

struct method {
	const char *name;
	json_t *(*fn)(struct call *c, struct rawpath *p);
};

/* Every method of docs/protocol.md; nothing else is dispatched. */
static const struct method methods[] = {
	{"exec", m_exec},
	{"fs.write", m_write},
	{"fs.read", m_read},
	{"fs.list", m_list},
	{"fs.stat", m_stat},
	{"fs.mkdir", m_mkdir},
	{"fs.remove", m_remove},
	{"fs.rename", m_rename},
	{"fs.changes", m_changes},
};

void
rpc_session_init(struct rpc_session *s, int root, const struct policy *pol,
		 struct supervisor *sup)
{
	memset(s, 0, sizeof(*s));
	fsapi_ctx_init(&s->fs, root, &pol->files);
	s->policy = pol;
	s->sup = sup;
	s->client_fd = -1;
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
		return fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: id "
			    "must be a string, a number or null");
	}
	v = json_object_get(req, "jsonrpc");
	if (!json_is_string(v) || json_string_length(v) != 3 ||
	    strcmp(json_string_value(v), "2.0") != 0)
		return fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "jsonrpc must be \"2.0\"");
	v = json_object_get(req, "method");
	if (!json_is_string(v))
		return fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "method must be a string");
	method = json_string_value(v);
	params = json_object_get(req, "params");
	if (params != NULL && !json_is_object(params) &&
	    !json_is_array(params))
		return fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "params must be an object");
	if (c->nfds > RPC_MAX_FDS)
		return fail(c, RPC_INVALID_REQUEST, NULL, "invalid request: "
			    "more than %d descriptors", RPC_MAX_FDS);
	*notify = *id == NULL;
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(method, methods[i].name) != 0 ||
		    strlen(method) != json_string_length(v))
			continue;
		if (params != NULL && json_is_array(params))
			return fail(c, RPC_INVALID_PARAMS, NULL, "invalid "
				    "params: params must be an object (by "
				    "name)");
		if (params == NULL && (params = json_object()) != NULL)
			json_object_set_new(req, "params", params);
		if (params == NULL)
			return out_of_memory(c);
		c->params = params;
		r = methods[i].fn(c, &p);
		free(p.p);
		return r;
	}
	return fail(c, RPC_METHOD_NOT_FOUND, NULL, "method not found");
}

static char *
dump_line(json_t *o)
{
	return json_dumps(o, JSON_COMPACT);
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
	bool notify = false;

	*response = NULL;
	/* Duplicate keys are refused: {"path":"a","path":"../x"} must not
	 * mean one thing here and another to a proxy that checked it. NUL
	 * is allowed in strings so that a path holding one is refused as
	 * invalid_path by name, like every other bad path. */
	req = json_loadb(line, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES |
					    JSON_ALLOW_NUL,
			 &jerr);
	if (req == NULL)
		fail(&c, RPC_PARSE_ERROR, NULL, "parse error: %s (column %d)",
		     jerr.text, jerr.column);
	else if (json_is_array(req))
		fail(&c, RPC_INVALID_REQUEST, NULL, "invalid request: batches "
		     "are not supported");
	else if (!json_is_object(req))
		fail(&c, RPC_INVALID_REQUEST, NULL, "invalid request: not an "
		     "object");
	else
		result = dispatch(&c, req, &id, &notify);
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
