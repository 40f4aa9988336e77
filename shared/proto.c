/* proto.c: encoders, decoders and datagram I/O for proto.h. */
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"

static const char *const msg_names[] = {
	[PROTO_HELLO] = "HELLO",   [PROTO_HELLO_REPLY] = "HELLO_REPLY",
	[PROTO_RUN] = "RUN",       [PROTO_OUTPUT] = "OUTPUT",
	[PROTO_RESULT] = "RESULT", [PROTO_CANCEL] = "CANCEL",
};

const char *
proto_msg_name(uint16_t type)
{
	if (type == 0 || type > PROTO_MSG_TYPE_MAX)
		return "unknown";
	return msg_names[type];
}

/* Writes the header of a message of TYPE whose body is w->len - 8 bytes. */
static int
finish(struct wbuf *w, uint16_t type)
{
	size_t body;

	if (!wbuf_ok(w) || w->len < PROTO_HEADER_SIZE)
		return -ENOBUFS;
	body = w->len - PROTO_HEADER_SIZE;
	if (body > PROTO_MAX_BODY)
		return -ENOBUFS;
	{
		struct wbuf h;

		wbuf_init(&h, w->data, PROTO_HEADER_SIZE);
		wbuf_put_u16(&h, type);
		wbuf_put_u16(&h, 0);
		wbuf_put_u32(&h, (uint32_t)body);
	}
	return (int)w->len;
}

static void
start(struct wbuf *w, uint8_t *buf, size_t size)
{
	static const uint8_t zero[PROTO_HEADER_SIZE];

	wbuf_init(w, buf, size < PROTO_MAX_MSG ? size : PROTO_MAX_MSG);
	/* Reserve the header; finish() fills it once the body length is known. */
	if (w->cap >= PROTO_HEADER_SIZE)
		memcpy(w->data, zero, PROTO_HEADER_SIZE);
	w->len = PROTO_HEADER_SIZE;
	if (w->cap < PROTO_HEADER_SIZE)
		w->overflow = true;
}

int
proto_encode_hello(uint8_t *buf, size_t size, uint32_t version)
{
	struct wbuf w;

	start(&w, buf, size);
	wbuf_put_u32(&w, version);
	return finish(&w, PROTO_HELLO);
}

int
proto_encode_hello_reply(uint8_t *buf, size_t size, uint32_t version,
			 uint32_t launcher_pid)
{
	struct wbuf w;

	start(&w, buf, size);
	wbuf_put_u32(&w, version);
	wbuf_put_u32(&w, launcher_pid);
	return finish(&w, PROTO_HELLO_REPLY);
}

static int
put_limits(struct wbuf *w, const struct job_limits *l)
{
	wbuf_put_u64(w, l->wall_ms);
	wbuf_put_u64(w, l->cpu_ms);
	wbuf_put_u64(w, l->memory_bytes);
	wbuf_put_u64(w, l->tmp_bytes);
	wbuf_put_u64(w, l->home_bytes);
	wbuf_put_u64(w, l->fsize_bytes);
	wbuf_put_u64(w, l->stdout_bytes);
	wbuf_put_u64(w, l->stderr_bytes);
	wbuf_put_u32(w, l->nofile);
	return wbuf_put_u32(w, l->nproc);
}

static int check_spec(const struct job_spec *s);
static int check_limits(const struct job_limits *l);

/* True when each of the N strings of V is present and at most MAX bytes. */
static bool
strv_fits(char *const *v, uint32_t n, size_t max)
{
	if (n > 0 && v == NULL)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == NULL || strlen(v[i]) > max)
			return false;
	return true;
}

/*
 * -EINVAL for every spec proto_decode_run would refuse (proto.h), so that
 * the sender finds its own mistake instead of ending the peer's session.
 */
static int
check_encodable(const struct job_spec *s)
{
	if (s->argc < 1 || s->argc > JOB_MAX_ARGS || s->envc > JOB_MAX_ENV ||
	    s->nmounts > JOB_MAX_MOUNTS || s->hostname == NULL ||
	    strlen(s->hostname) > JOB_MAX_HOSTNAME || s->user == NULL ||
	    strlen(s->user) > JOB_MAX_USER || s->home == NULL ||
	    strlen(s->home) > JOB_MAX_STR ||
	    !strv_fits(s->argv, s->argc, JOB_MAX_STR) ||
	    !strv_fits(s->envp, s->envc, JOB_MAX_STR) ||
	    (s->nmounts > 0 && s->mounts == NULL))
		return -EINVAL;
	for (uint32_t i = 0; i < s->nmounts; i++) {
		const struct mount_entry *m = &s->mounts[i];

		if (m->source == NULL || m->target == NULL ||
		    strlen(m->source) > JOB_MAX_STR ||
		    strlen(m->target) > JOB_MAX_STR)
			return -EINVAL;
	}
	if (check_spec(s) < 0 || check_limits(&s->limits) < 0)
		return -EINVAL;
	return 0;
}

int
proto_encode_run(uint8_t *buf, size_t size, const struct job_spec *s)
{
	struct wbuf w;

	if (check_encodable(s) < 0)
		return -EINVAL;
	start(&w, buf, size);
	wbuf_put_u64(&w, s->job_id);
	wbuf_put_u32(&w, s->flags);
	wbuf_put_u32(&w, s->uid);
	wbuf_put_u32(&w, s->gid);
	wbuf_put_u32(&w, s->argc);
	for (uint32_t i = 0; i < s->argc; i++)
		wbuf_put_str(&w, s->argv[i]);
	wbuf_put_u32(&w, s->envc);
	for (uint32_t i = 0; i < s->envc; i++)
		wbuf_put_str(&w, s->envp[i]);
	wbuf_put_str(&w, s->hostname);
	wbuf_put_str(&w, s->user);
	wbuf_put_str(&w, s->home);
	wbuf_put_u32(&w, s->nmounts);
	for (uint32_t i = 0; i < s->nmounts; i++) {
		wbuf_put_u8(&w, (uint8_t)s->mounts[i].kind);
		wbuf_put_str(&w, s->mounts[i].source);
		wbuf_put_str(&w, s->mounts[i].target);
	}
	put_limits(&w, &s->limits);
	return finish(&w, PROTO_RUN);
}

int
proto_encode_output(uint8_t *buf, size_t size, uint64_t job_id,
		    uint8_t stream, const void *data, size_t len)
{
	struct wbuf w;

	if ((stream != 1 && stream != 2) || len > PROTO_OUTPUT_CHUNK)
		return -EINVAL;
	start(&w, buf, size);
	wbuf_put_u64(&w, job_id);
	wbuf_put_u8(&w, stream);
	wbuf_put_bytes(&w, data, len);
	return finish(&w, PROTO_OUTPUT);
}

/*
 * A detail a person may read on a terminal: no control character but
 * tab, neither C0 nor DEL nor a C1 control written as UTF-8 (U+0080 to
 * U+009F, bytes C2 80 to C2 9F), which would let a launcher's text move
 * the cursor or rewrite the screen. Other bytes, even invalid UTF-8, are
 * the reader's to sanitize (result_json.c).
 */
static bool
detail_ok(const char *d)
{
	for (const unsigned char *p = (const unsigned char *)d; *p; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
			return false;
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return false;
	}
	return true;
}

/*
 * What every RESULT must be, for proto_encode_result and
 * proto_decode_result alike: STATUS known; exit code -1..255 and signal
 * 0..64, consistent with the status (ok: exit 0 and no signal;
 * exit_nonzero: exit 1..255 and no signal; crash: a signal 1..64 and no
 * exit code); every figure at most INT64_MAX, so that it stays a
 * non-negative JSON integer; the detail as detail_ok says. -EINVAL
 * otherwise. (The detail's length is the caller's to check.)
 */
static int
check_result(uint32_t status, const struct job_result *r, const char *detail)
{
	if (status > JOB_STATUS_MAX || r->exit_code < -1 ||
	    r->exit_code > 255 || r->signal < 0 || r->signal > 64)
		return -EINVAL;
	switch (status) {
	case JOB_OK:
		if (r->exit_code != 0 || r->signal != 0)
			return -EINVAL;
		break;
	case JOB_EXIT_NONZERO:
		if (r->exit_code < 1 || r->signal != 0)
			return -EINVAL;
		break;
	case JOB_CRASH:
		if (r->signal < 1 || r->exit_code != -1)
			return -EINVAL;
		break;
	default:
		break;
	}
	if (r->wall_ms > INT64_MAX || r->cpu_ms > INT64_MAX ||
	    r->peak_memory_kb > INT64_MAX || r->stdout_bytes > INT64_MAX ||
	    r->stderr_bytes > INT64_MAX)
		return -EINVAL;
	if (!detail_ok(detail))
		return -EINVAL;
	return 0;
}

int
proto_encode_result(uint8_t *buf, size_t size, const struct job_result *r)
{
	struct wbuf w;
	const char *detail = r->detail ? r->detail : "";

	/* Exactly what proto_decode_result accepts. */
	if ((unsigned)r->status > JOB_STATUS_MAX ||
	    strlen(detail) > JOB_MAX_DETAIL ||
	    check_result((uint32_t)r->status, r, detail) < 0)
		return -EINVAL;
	start(&w, buf, size);
	wbuf_put_u64(&w, r->job_id);
	wbuf_put_u32(&w, (uint32_t)r->status);
	wbuf_put_i32(&w, r->exit_code);
	wbuf_put_i32(&w, r->signal);
	wbuf_put_u64(&w, r->wall_ms);
	wbuf_put_u64(&w, r->cpu_ms);
	wbuf_put_u64(&w, r->peak_memory_kb);
	wbuf_put_u64(&w, r->stdout_bytes);
	wbuf_put_u64(&w, r->stderr_bytes);
	wbuf_put_str(&w, detail);
	return finish(&w, PROTO_RESULT);
}

int
proto_encode_cancel(uint8_t *buf, size_t size, uint64_t job_id)
{
	struct wbuf w;

	start(&w, buf, size);
	wbuf_put_u64(&w, job_id);
	return finish(&w, PROTO_CANCEL);
}

int
proto_decode_header(const uint8_t *msg, size_t len, uint16_t *type,
		    const uint8_t **body, size_t *body_len)
{
	struct rbuf r;
	uint16_t t, reserved;
	uint32_t n;

	*type = 0;
	*body = NULL;
	*body_len = 0;
	rbuf_init(&r, msg, len);
	if (rbuf_get_u16(&r, &t) < 0 || rbuf_get_u16(&r, &reserved) < 0 ||
	    rbuf_get_u32(&r, &n) < 0)
		return -EBADMSG;
	if (reserved != 0)
		return -EBADMSG;
	if (n > PROTO_MAX_BODY)
		return -EMSGSIZE;
	if (n != len - PROTO_HEADER_SIZE)
		return -EBADMSG;
	if (t == 0 || t > PROTO_MSG_TYPE_MAX)
		return -EPROTO;
	*type = t;
	*body = msg + PROTO_HEADER_SIZE;
	*body_len = n;
	return 0;
}

int
proto_decode_hello(const uint8_t *body, size_t len, uint32_t *version)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	if (rbuf_get_u32(&r, version) < 0 || rbuf_end(&r) < 0) {
		*version = 0;
		return -EBADMSG;
	}
	return 0;
}

int
proto_decode_hello_reply(const uint8_t *body, size_t len, uint32_t *version,
			 uint32_t *launcher_pid)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	if (rbuf_get_u32(&r, version) < 0 ||
	    rbuf_get_u32(&r, launcher_pid) < 0 || rbuf_end(&r) < 0) {
		*version = 0;
		*launcher_pid = 0;
		return -EBADMSG;
	}
	return 0;
}

/* Reads COUNT strings into a new NULL-terminated array. */
static int
get_strv(struct rbuf *r, uint32_t count, size_t max, char ***out)
{
	char **v = calloc((size_t)count + 1, sizeof(*v));
	int e;

	*out = NULL;
	if (v == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		e = rbuf_get_str(r, &v[i], max);
		if (e < 0) {
			for (uint32_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			return e;
		}
	}
	*out = v;
	return 0;
}

/* Every limit is required: a zero would mean "unlimited" somewhere. */
static int
check_limits(const struct job_limits *l)
{
	if (l->wall_ms == 0 || l->cpu_ms == 0 || l->memory_bytes == 0 ||
	    l->tmp_bytes == 0 || l->home_bytes == 0 || l->fsize_bytes == 0 ||
	    l->stdout_bytes == 0 || l->stderr_bytes == 0 || l->nofile == 0 ||
	    l->nproc == 0)
		return -EINVAL;
	return 0;
}

static int
get_limits(struct rbuf *r, struct job_limits *l)
{
	if (rbuf_get_u64(r, &l->wall_ms) < 0 ||
	    rbuf_get_u64(r, &l->cpu_ms) < 0 ||
	    rbuf_get_u64(r, &l->memory_bytes) < 0 ||
	    rbuf_get_u64(r, &l->tmp_bytes) < 0 ||
	    rbuf_get_u64(r, &l->home_bytes) < 0 ||
	    rbuf_get_u64(r, &l->fsize_bytes) < 0 ||
	    rbuf_get_u64(r, &l->stdout_bytes) < 0 ||
	    rbuf_get_u64(r, &l->stderr_bytes) < 0 ||
	    rbuf_get_u32(r, &l->nofile) < 0 || rbuf_get_u32(r, &l->nproc) < 0)
		return -EBADMSG;
	return check_limits(l);
}

/* An absolute path with no empty, "." or ".." component. */
static int
check_abs_path(const char *p)
{
	const char *c;

	if (p[0] != '/' || p[1] == '\0')
		return -EINVAL;
	for (c = p + 1; *c != '\0';) {
		const char *end = strchrnul(c, '/');
		size_t n = (size_t)(end - c);

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
		c = *end ? end + 1 : end;
		if (*end && *c == '\0')
			return -EINVAL; /* trailing slash */
	}
	return 0;
}

/* True for /tmp, /proc, /dev, /work or below: the launcher mounts these
 * itself, and a bind of the host's /proc or /dev would hand them over. */
static bool
jail_owned(const char *target)
{
	static const char *const dirs[] = {"/tmp", "/proc", "/dev", "/work"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t n = strlen(dirs[i]);

		if (strncmp(target, dirs[i], n) == 0 &&
		    (target[n] == '\0' || target[n] == '/'))
			return true;
	}
	return false;
}

static int
check_spec(const struct job_spec *s)
{
	if (s->argv[0][0] == '\0')
		return -EINVAL;
	if (s->uid == 0 || s->gid == 0)
		return -EINVAL;
	if ((s->flags & ~JOB_F_KNOWN) != 0)
		return -EINVAL;
	for (uint32_t i = 0; i < s->envc; i++) {
		const char *eq = strchr(s->envp[i], '=');

		if (eq == NULL || eq == s->envp[i])
			return -EINVAL;
	}
	/* The hostname goes into the jail's /etc/hosts and /etc/hostname:
	 * letters, digits and '-' only (RFC 1123), as the policy demands. */
	if (s->hostname[0] == '\0' || s->hostname[0] == '-' ||
	    strspn(s->hostname, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") !=
		    strlen(s->hostname))
		return -EINVAL;
	/* The user name goes into the jail's /etc/passwd: no separator, no
	 * newline, nothing but the useradd alphabet. */
	if (s->user[0] == '\0' ||
	    strspn(s->user, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
		    strlen(s->user) ||
	    s->user[0] == '-' || (s->user[0] >= '0' && s->user[0] <= '9'))
		return -EINVAL;
	if (check_abs_path(s->home) < 0 || strcmp(s->home, "/work") == 0 ||
	    strcmp(s->home, "/tmp") == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < s->nmounts; i++) {
		const struct mount_entry *m = &s->mounts[i];

		if (m->kind != MOUNT_RO_BIND && m->kind != MOUNT_RO_BIND_TRY)
			return -EINVAL;
		if (check_abs_path(m->source) < 0 ||
		    check_abs_path(m->target) < 0 || jail_owned(m->target))
			return -EINVAL;
	}
	return 0;
}

int
proto_decode_run(const uint8_t *body, size_t len, struct job_spec *s)
{
	struct rbuf r;
	int e = -EBADMSG;

	memset(s, 0, sizeof(*s));
	rbuf_init(&r, body, len);
	if (rbuf_get_u64(&r, &s->job_id) < 0 ||
	    rbuf_get_u32(&r, &s->flags) < 0 || rbuf_get_u32(&r, &s->uid) < 0 ||
	    rbuf_get_u32(&r, &s->gid) < 0 || rbuf_get_u32(&r, &s->argc) < 0)
		goto fail;
	if (s->argc < 1 || s->argc > JOB_MAX_ARGS) {
		e = -EMSGSIZE;
		goto fail;
	}
	/* Each string costs at least 4 bytes: refuse counts the body cannot
	 * hold before allocating for them (length before allocation). */
	if ((size_t)s->argc * 4 > rbuf_remaining(&r))
		goto fail;
	e = get_strv(&r, s->argc, JOB_MAX_STR, &s->argv);
	if (e < 0) {
		s->argc = 0;
		goto fail;
	}
	e = -EBADMSG;
	if (rbuf_get_u32(&r, &s->envc) < 0)
		goto fail;
	if (s->envc > JOB_MAX_ENV) {
		e = -EMSGSIZE;
		s->envc = 0;
		goto fail;
	}
	if ((size_t)s->envc * 4 > rbuf_remaining(&r)) {
		s->envc = 0;
		goto fail;
	}
	e = get_strv(&r, s->envc, JOB_MAX_STR, &s->envp);
	if (e < 0) {
		s->envc = 0;
		goto fail;
	}
	e = rbuf_get_str(&r, &s->hostname, JOB_MAX_HOSTNAME);
	if (e < 0)
		goto fail;
	e = rbuf_get_str(&r, &s->user, JOB_MAX_USER);
	if (e < 0)
		goto fail;
	e = rbuf_get_str(&r, &s->home, JOB_MAX_STR);
	if (e < 0)
		goto fail;
	e = -EBADMSG;
	if (rbuf_get_u32(&r, &s->nmounts) < 0)
		goto fail;
	if (s->nmounts > JOB_MAX_MOUNTS) {
		e = -EMSGSIZE;
		s->nmounts = 0;
		goto fail;
	}
	s->mounts = calloc(s->nmounts ? s->nmounts : 1, sizeof(*s->mounts));
	if (s->mounts == NULL) {
		e = -ENOMEM;
		s->nmounts = 0;
		goto fail;
	}
	for (uint32_t i = 0; i < s->nmounts; i++) {
		uint8_t kind;

		e = rbuf_get_u8(&r, &kind);
		if (e < 0)
			goto fail;
		s->mounts[i].kind = (enum mount_kind)kind;
		e = rbuf_get_str(&r, &s->mounts[i].source, JOB_MAX_STR);
		if (e < 0)
			goto fail;
		e = rbuf_get_str(&r, &s->mounts[i].target, JOB_MAX_STR);
		if (e < 0)
			goto fail;
	}
	e = get_limits(&r, &s->limits);
	if (e < 0)
		goto fail;
	e = rbuf_end(&r);
	if (e < 0)
		goto fail;
	e = check_spec(s);
	if (e < 0)
		goto fail;
	return 0;
fail:
	job_spec_clear(s);
	return e;
}

int
proto_decode_output(const uint8_t *body, size_t len, uint64_t *job_id,
		    uint8_t *stream, const uint8_t **data, size_t *data_len)
{
	struct rbuf r;
	int e;

	rbuf_init(&r, body, len);
	e = -EBADMSG;
	if (rbuf_get_u64(&r, job_id) < 0 || rbuf_get_u8(&r, stream) < 0)
		goto fail;
	e = rbuf_get_bytes(&r, data, data_len, PROTO_OUTPUT_CHUNK);
	if (e < 0)
		goto fail;
	e = rbuf_end(&r);
	if (e < 0)
		goto fail;
	if (*stream != 1 && *stream != 2) {
		e = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	*job_id = 0;
	*stream = 0;
	*data = NULL;
	*data_len = 0;
	return e;
}

int
proto_decode_result(const uint8_t *body, size_t len, struct job_result *res)
{
	struct rbuf r;
	uint32_t status;
	int e = -EBADMSG;

	memset(res, 0, sizeof(*res));
	rbuf_init(&r, body, len);
	if (rbuf_get_u64(&r, &res->job_id) < 0 ||
	    rbuf_get_u32(&r, &status) < 0 ||
	    rbuf_get_i32(&r, &res->exit_code) < 0 ||
	    rbuf_get_i32(&r, &res->signal) < 0 ||
	    rbuf_get_u64(&r, &res->wall_ms) < 0 ||
	    rbuf_get_u64(&r, &res->cpu_ms) < 0 ||
	    rbuf_get_u64(&r, &res->peak_memory_kb) < 0 ||
	    rbuf_get_u64(&r, &res->stdout_bytes) < 0 ||
	    rbuf_get_u64(&r, &res->stderr_bytes) < 0)
		goto fail;
	e = rbuf_get_str(&r, &res->detail, JOB_MAX_DETAIL);
	if (e < 0)
		goto fail;
	e = rbuf_end(&r);
	if (e < 0)
		goto fail;
	e = check_result(status, res, res->detail);
	if (e < 0)
		goto fail;
	res->status = (enum job_status)status;
	return 0;
fail:
	job_result_clear(res);
	memset(res, 0, sizeof(*res));
	return e;
}

int
proto_decode_cancel(const uint8_t *body, size_t len, uint64_t *job_id)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	if (rbuf_get_u64(&r, job_id) < 0 || rbuf_end(&r) < 0) {
		*job_id = 0;
		return -EBADMSG;
	}
	return 0;
}

void
job_spec_clear(struct job_spec *s)
{
	if (s == NULL)
		return;
	if (s->argv != NULL)
		for (uint32_t i = 0; s->argv[i] != NULL; i++)
			free(s->argv[i]);
	free(s->argv);
	if (s->envp != NULL)
		for (uint32_t i = 0; s->envp[i] != NULL; i++)
			free(s->envp[i]);
	free(s->envp);
	free(s->hostname);
	free(s->user);
	free(s->home);
	if (s->mounts != NULL)
		for (uint32_t i = 0; i < s->nmounts; i++) {
			free(s->mounts[i].source);
			free(s->mounts[i].target);
		}
	free(s->mounts);
	memset(s, 0, sizeof(*s));
}

int
proto_send(int sock, const uint8_t *msg, size_t len, int fd)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)msg, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

/* Closes every descriptor carried by the control messages of MH. */
static int
collect_fds(struct msghdr *mh, int *fd)
{
	int count = 0, bad = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (count == 0 && *fd < 0)
				*fd = f;
			else
				close(f);
			count++;
		}
	}
	if (bad || count > (int)PROTO_MAX_FDS) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EBADMSG;
	}
	return 0;
}

int
proto_recv(int sock, uint8_t *buf, size_t size, int *fd)
{
	/* Never more than PROTO_MAX_MSG, whatever SIZE: a longer datagram is
	 * MSG_TRUNC, so a bigger buffer cannot raise the cap (rule 4). */
	struct iovec iov = {.iov_base = buf, .iov_len = PROTO_MAX_MSG};
	union {
		/* Room for more than we accept, so extras are seen and closed. */
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	ssize_t n;
	int e;

	*fd = -1;
	if (size < PROTO_MAX_MSG)
		return -EINVAL;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	e = collect_fds(&mh, fd);
	if (mh.msg_flags & MSG_CTRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EBADMSG;
	}
	if (e < 0)
		return e;
	if (mh.msg_flags & MSG_TRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EMSGSIZE;
	}
	return (int)n;
}
