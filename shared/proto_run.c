/*
 * proto_run.c: the decoder of a RUN body into a job spec (proto.h:
 * proto_decode_run), every count and length checked before it is used;
 * its encoder and the other messages are proto.c's.
 */
#include "proto.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "proto_internal.h"

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
	    rbuf_get_u32(r, &l->nofile) < 0 || rbuf_get_u32(r, &l->nproc) < 0 ||
	    rbuf_get_u32(r, &l->cpu_percent) < 0 ||
	    rbuf_get_u64(r, &l->workspace_bytes) < 0)
		return -EBADMSG;
	return proto_check_limits(l);
}

/* Reads the argument and environment vectors of a RUN body into S (argc
 * already read): each count is checked against its maximum and against
 * the bytes left before anything is allocated. 0, or -EBADMSG, -EMSGSIZE
 * or -ENOMEM; a vector that failed to read leaves its count 0. */
static int
get_run_vectors(struct rbuf *r, struct job_spec *s)
{
	int e;

	if (s->argc < 1 || s->argc > JOB_MAX_ARGS)
		return -EMSGSIZE;
	/* Each string costs at least 4 bytes: refuse counts the body cannot
	 * hold before allocating for them (length before allocation). */
	if ((size_t)s->argc * 4 > rbuf_remaining(r))
		return -EBADMSG;
	e = get_strv(r, s->argc, JOB_MAX_STR, &s->argv);
	if (e < 0) {
		s->argc = 0;
		return e;
	}
	if (rbuf_get_u32(r, &s->envc) < 0)
		return -EBADMSG;
	if (s->envc > JOB_MAX_ENV) {
		s->envc = 0;
		return -EMSGSIZE;
	}
	if ((size_t)s->envc * 4 > rbuf_remaining(r)) {
		s->envc = 0;
		return -EBADMSG;
	}
	e = get_strv(r, s->envc, JOB_MAX_STR, &s->envp);
	if (e < 0) {
		s->envc = 0;
		return e;
	}
	return 0;
}

/* Reads the mount count and the mounts of a RUN body into S, the count
 * checked against JOB_MAX_MOUNTS before the array is allocated. 0, or
 * -EBADMSG, -EMSGSIZE or -ENOMEM (a refused count leaves nmounts 0). */
static int
get_run_mounts(struct rbuf *r, struct job_spec *s)
{
	int e;

	if (rbuf_get_u32(r, &s->nmounts) < 0)
		return -EBADMSG;
	if (s->nmounts > JOB_MAX_MOUNTS) {
		s->nmounts = 0;
		return -EMSGSIZE;
	}
	s->mounts = calloc(s->nmounts ? s->nmounts : 1, sizeof(*s->mounts));
	if (s->mounts == NULL) {
		s->nmounts = 0;
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->nmounts; i++) {
		uint8_t kind;

		e = rbuf_get_u8(r, &kind);
		if (e < 0)
			return e;
		s->mounts[i].kind = (enum mount_kind)kind;
		e = rbuf_get_str(r, &s->mounts[i].source, JOB_MAX_STR);
		if (e < 0)
			return e;
		e = rbuf_get_str(r, &s->mounts[i].target, JOB_MAX_STR);
		if (e < 0)
			return e;
	}
	return 0;
}

/* Reads what confines a RUN job, after its mounts: the limits, the
 * enforcement, the cgroup, the workspace allowance, the seccomp profile,
 * the layers turned off, the proxy's port (issue 25) and the stage's
 * files (issue 26), into S. 0, or -EBADMSG, -EMSGSIZE, -ENOMEM
 * or -EINVAL (a limit of 0). */
static int
get_run_confinement(struct rbuf *r, struct job_spec *s)
{
	uint8_t enforcement;
	int e;

	e = get_limits(r, &s->limits);
	if (e < 0)
		return e;
	if (rbuf_get_u8(r, &enforcement) < 0)
		return -EBADMSG;
	s->enforcement = (enum job_enforcement)enforcement;
	e = rbuf_get_str(r, &s->cgroup, JOB_MAX_STR);
	if (e < 0)
		return e;
	if (rbuf_get_u64(r, &s->workspace_allow) < 0)
		return -EBADMSG;
	e = rbuf_get_str(r, &s->seccomp_profile, JOB_MAX_PROFILE);
	if (e < 0)
		return e;
	if (rbuf_get_u32(r, &s->layers_off) < 0 ||
	    rbuf_get_u16(r, &s->proxy_port) < 0 ||
	    rbuf_get_u64(r, &s->stage_files) < 0)
		return -EBADMSG;
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
	e = get_run_vectors(&r, s);
	if (e < 0)
		goto fail;
	e = rbuf_get_str(&r, &s->hostname, JOB_MAX_HOSTNAME);
	if (e < 0)
		goto fail;
	e = rbuf_get_str(&r, &s->user, JOB_MAX_USER);
	if (e < 0)
		goto fail;
	e = rbuf_get_str(&r, &s->home, JOB_MAX_STR);
	if (e < 0)
		goto fail;
	e = get_run_mounts(&r, s);
	if (e < 0)
		goto fail;
	e = get_run_confinement(&r, s);
	if (e < 0)
		goto fail;
	e = rbuf_end(&r);
	if (e < 0)
		goto fail;
	e = proto_check_spec(s);
	if (e < 0)
		goto fail;
	return 0;
fail:
	job_spec_clear(s);
	return e;
}
