/* proto.c: encoders, decoders and datagram I/O for proto.h (the RUN
 * decoder is proto_run.c's). */
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "proto_internal.h"

static const char *const msg_names[] = {
    [PROTO_HELLO] = "HELLO",
    [PROTO_HELLO_REPLY] = "HELLO_REPLY",
    [PROTO_RUN] = "RUN",
    [PROTO_OUTPUT] = "OUTPUT",
    [PROTO_RESULT] = "RESULT",
    [PROTO_CANCEL] = "CANCEL",
    [PROTO_POOL] = "POOL",
    [PROTO_NET] = "NET",
    [PROTO_STAGE] = "STAGE",
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
	wbuf_put_u32(w, l->nproc);
	wbuf_put_u32(w, l->cpu_percent);
	return wbuf_put_u64(w, l->workspace_bytes);
}

int
proto_encode_run(uint8_t *buf, size_t size, const struct job_spec *s)
{
	struct wbuf w;

	if (proto_check_encodable(s) < 0)
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
	wbuf_put_u8(&w, (uint8_t)s->enforcement);
	wbuf_put_str(&w, s->cgroup ? s->cgroup : "");
	wbuf_put_u64(&w, s->workspace_allow);
	wbuf_put_str(&w, s->seccomp_profile ? s->seccomp_profile : "default");
	wbuf_put_u32(&w, s->layers_off);
	wbuf_put_u16(&w, s->proxy_port);
	wbuf_put_u64(&w, s->stage_files);
	return finish(&w, PROTO_RUN);
}

int
proto_encode_output(uint8_t *buf, size_t size, uint64_t job_id, uint8_t stream,
    const void *data, size_t len)
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

int
proto_encode_result(uint8_t *buf, size_t size, const struct job_result *r)
{
	struct wbuf w;
	const char *detail = r->detail ? r->detail : "";

	/* Exactly what proto_decode_result accepts. */
	if ((unsigned)r->status > JOB_STATUS_MAX ||
	    strlen(detail) > JOB_MAX_DETAIL ||
	    proto_check_result((uint32_t)r->status, r, detail) < 0)
		return -EINVAL;
	start(&w, buf, size);
	wbuf_put_u64(&w, r->job_id);
	wbuf_put_u32(&w, (uint32_t)r->status);
	wbuf_put_i32(&w, r->exit_code);
	wbuf_put_i32(&w, r->signal);
	wbuf_put_u64(&w, r->wall_ms);
	wbuf_put_u64(&w, r->cpu_ms);
	wbuf_put_u64(&w, r->peak_memory_kb);
	wbuf_put_u32(&w, r->peak_processes);
	wbuf_put_u8(&w, (uint8_t)r->enforcement);
	wbuf_put_i32(&w, r->landlock_abi);
	wbuf_put_u32(&w, r->ndenials);
	for (uint32_t i = 0; i < r->ndenials && i < JOB_MAX_DENIALS; i++) {
		wbuf_put_str(&w, r->denials[i].syscall);
		wbuf_put_u32(&w, r->denials[i].count);
		wbuf_put_u64(&w, r->denials[i].first_ms);
	}
	wbuf_put_u64(&w, r->stdout_bytes);
	wbuf_put_u64(&w, r->stderr_bytes);
	wbuf_put_u8(&w, r->memory_measure);
	wbuf_put_u8(&w, (uint8_t)r->nreached);
	for (uint32_t i = 0; i < r->nreached && i < JOB_MAX_REACHED; i++) {
		wbuf_put_u8(&w, r->reached[i].limit);
		wbuf_put_u32(&w, r->reached[i].times);
	}
	wbuf_put_str(&w, detail);
	return finish(&w, PROTO_RESULT);
}

int
proto_encode_cancel(uint8_t *buf, size_t size, uint64_t job_id, uint32_t reason)
{
	struct wbuf w;

	if (reason < 1 || reason > JOB_CANCEL_MAX)
		return -EINVAL;
	start(&w, buf, size);
	wbuf_put_u64(&w, job_id);
	wbuf_put_u32(&w, reason);
	return finish(&w, PROTO_CANCEL);
}

int
proto_encode_pool(uint8_t *buf, size_t size, uint32_t jails)
{
	struct wbuf w;

	if (jails > PROTO_MAX_POOL)
		return -EINVAL;
	start(&w, buf, size);
	wbuf_put_u32(&w, jails);
	return finish(&w, PROTO_POOL);
}

int
proto_encode_net(uint8_t *buf, size_t size, uint64_t job_id)
{
	struct wbuf w;

	start(&w, buf, size);
	wbuf_put_u64(&w, job_id);
	return finish(&w, PROTO_NET);
}

int
proto_encode_stage(uint8_t *buf, size_t size, uint64_t job_id,
    const uint8_t token[PROTO_STAGE_TOKEN_BYTES])
{
	struct wbuf w;

	start(&w, buf, size);
	wbuf_put_u64(&w, job_id);
	/* Raw bytes: wbuf_put_bytes would prefix a length. */
	for (size_t i = 0; i < PROTO_STAGE_TOKEN_BYTES; i++)
		wbuf_put_u8(&w, token[i]);
	return finish(&w, PROTO_STAGE);
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
	if (n > (PROTO_MAX_BODY))
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
	int e;

	rbuf_init(&r, body, len);
	e = rbuf_get_u32(&r, version);
	if (e == 0)
		e = rbuf_end(&r);
	if (e < 0) {
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

/* The denials of a RESULT: a count, then each name (a C string that fits
 * JOB_DENIAL_NAME), count and first_ms. */
static int
get_denials(struct rbuf *r, struct job_result *res)
{
	int e;

	if (rbuf_get_u32(r, &res->ndenials) < 0)
		return -EBADMSG;
	if (res->ndenials > JOB_MAX_DENIALS)
		return -EMSGSIZE;
	for (uint32_t i = 0; i < res->ndenials; i++) {
		struct job_denial *d = &res->denials[i];
		char *name = NULL;

		if ((e = rbuf_get_str(r, &name, JOB_DENIAL_NAME - 1)) < 0)
			return e;
		snprintf(d->syscall, sizeof(d->syscall), "%s", name);
		free(name);
		if (rbuf_get_u32(r, &d->count) < 0 ||
		    rbuf_get_u64(r, &d->first_ms) < 0)
			return -EBADMSG;
	}
	return 0;
}

int
proto_decode_result(const uint8_t *body, size_t len, struct job_result *res)
{
	struct rbuf r;
	uint8_t enforcement, nreached;
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
	    rbuf_get_u32(&r, &res->peak_processes) < 0 ||
	    rbuf_get_u8(&r, &enforcement) < 0 ||
	    rbuf_get_i32(&r, &res->landlock_abi) < 0)
		goto fail;
	e = get_denials(&r, res);
	if (e < 0)
		goto fail;
	e = -EBADMSG;
	if (rbuf_get_u64(&r, &res->stdout_bytes) < 0 ||
	    rbuf_get_u64(&r, &res->stderr_bytes) < 0 ||
	    rbuf_get_u8(&r, &res->memory_measure) < 0 ||
	    rbuf_get_u8(&r, &nreached) < 0)
		goto fail;
	e = -EMSGSIZE;
	if (nreached > JOB_MAX_REACHED)
		goto fail;
	e = -EBADMSG;
	res->nreached = nreached;
	for (uint32_t i = 0; i < res->nreached; i++)
		if (rbuf_get_u8(&r, &res->reached[i].limit) < 0 ||
		    rbuf_get_u32(&r, &res->reached[i].times) < 0)
			goto fail;
	e = rbuf_get_str(&r, &res->detail, JOB_MAX_DETAIL);
	if (e < 0)
		goto fail;
	e = rbuf_end(&r);
	if (e < 0)
		goto fail;
	e = -EINVAL;
	if (enforcement != ENFORCE_MONITOR && enforcement != ENFORCE_CGROUP2)
		goto fail;
	res->enforcement = (enum job_enforcement)enforcement;
	e = proto_check_result(status, res, res->detail);
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
proto_decode_cancel(const uint8_t *body, size_t len, uint64_t *job_id,
    uint32_t *reason)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	if (rbuf_get_u64(&r, job_id) < 0 || rbuf_get_u32(&r, reason) < 0 ||
	    rbuf_end(&r) < 0) {
		*job_id = 0;
		*reason = 0;
		return -EBADMSG;
	}
	if (*reason < 1 || *reason > JOB_CANCEL_MAX) {
		*job_id = 0;
		*reason = 0;
		return -EINVAL;
	}
	return 0;
}

int
proto_decode_pool(const uint8_t *body, size_t len, uint32_t *jails)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	if (rbuf_get_u32(&r, jails) < 0 || rbuf_end(&r) < 0) {
		*jails = 0;
		return -EBADMSG;
	}
	if (*jails > PROTO_MAX_POOL) {
		*jails = 0;
		return -EINVAL;
	}
	return 0;
}

int
proto_decode_net(const uint8_t *body, size_t len, uint64_t *job_id)
{
	struct rbuf r;

	rbuf_init(&r, body, len);
	if (rbuf_get_u64(&r, job_id) < 0 || rbuf_end(&r) < 0) {
		*job_id = 0;
		return -EBADMSG;
	}
	return 0;
}

int
proto_decode_stage(const uint8_t *body, size_t len, uint64_t *job_id,
    uint8_t token[PROTO_STAGE_TOKEN_BYTES])
{
	if (len != 8 + PROTO_STAGE_TOKEN_BYTES ||
	    proto_decode_net(body, 8, job_id) < 0) {
		*job_id = 0;
		memset(token, 0, PROTO_STAGE_TOKEN_BYTES);
		return -EBADMSG;
	}
	memcpy(token, body + 8, PROTO_STAGE_TOKEN_BYTES);
	return 0;
}

uint32_t
job_spec_layers_off(const struct job_spec *s)
{
	return s->layers_off |
	    ((s->flags & JOB_F_UNSAFE_NO_SECCOMP)
		    ? JOB_LAYER_BIT(JOB_LAYER_SECCOMP)
		    : 0);
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
	free(s->cgroup);
	free(s->seccomp_profile);
	if (s->mounts != NULL)
		for (uint32_t i = 0; i < s->nmounts; i++) {
			free(s->mounts[i].source);
			free(s->mounts[i].target);
		}
	free(s->mounts);
	memset(s, 0, sizeof(*s));
}
