/* pool.c: the warm jail pool of a session (pool.h). */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"

int
pool_init(struct pool *p)
{
	memset(p, 0, sizeof(*p));
	p->wsfd = -1;
	p->buf = malloc(PROTO_MAX_MSG);
	p->go = malloc(WIRE_MAX_MSG);
	return p->buf != NULL && p->go != NULL ? 0 : -ENOMEM;
}

/* Ends waiting jail J (no payload yet): SIGKILL from its zygote, then
 * reaped. Returns 0 or -EPIPE when the zygote is gone. */
static int
drop_one(struct zygote *z, struct jail *j)
{
	siginfo_t si;
	int e = zygote_kill(z, j->token, SIGKILL) < 0 ? -EPIPE : 0;

	if (e == 0)
		(void)syscall(SYS_waitid, P_PIDFD, j->pidfd, &si, WEXITED,
		    NULL);
	jail_close(j);
	return e;
}

int
pool_drain(struct pool *p, struct zygote *z)
{
	int e = pool_refill_finish(p, z);

	while (p->n > 0)
		if (drop_one(z, &p->ready[--p->n].jail) < 0)
			e = -EPIPE;
	return e;
}

/* Decodes the RUN message RUN (LEN bytes) into OUT. Returns 0 or a
 * negative errno. */
static int
decode_run(const uint8_t *run, size_t len, struct job_spec *out)
{
	const uint8_t *body;
	size_t body_len;
	uint16_t type;

	if (proto_decode_header(run, len, &type, &body, &body_len) < 0 ||
	    type != PROTO_RUN)
		return -EPROTO;
	return proto_decode_run(body, body_len, out);
}

int
pool_remember(struct pool *p, struct zygote *z, const struct job_spec *spec,
    const uint8_t *run, size_t run_len, int wsfd)
{
	struct job_spec next;
	int e;

	if (p->size == 0)
		return 0;
	p->stalled = false;
	if (p->have_template && jail_pool_compatible(&p->template, spec))
		return 0;
	memset(&next, 0, sizeof(next));
	if (run_len > PROTO_MAX_MSG)
		return -EMSGSIZE;
	if ((e = decode_run(run, run_len, &next)) < 0)
		return e;
	if (p->wsfd < 0 && (p->wsfd = fcntl(wsfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		job_spec_clear(&next);
		return -errno;
	}
	e = pool_drain(p, z);
	job_spec_clear(&p->template);
	memcpy(p->buf, run, run_len);
	p->template_len = run_len;
	/* NEXT's strings and arrays move to the template (struct job_spec:
	 * one owner), NEXT left owning nothing. */
	p->template = next;
	memset(&next, 0, sizeof(next));
	p->have_template = true;
	return e;
}

bool
pool_short(const struct pool *p)
{
	return p->have_template && !p->stalled && p->n < p->size;
}

/* Whether jail J's init has exited (its pidfd is readable). */
static bool
gone(const struct jail *j)
{
	struct pollfd pf = {.fd = j->pidfd, .events = POLLIN};

	return poll(&pf, 1, 0) != 0;
}

/* Logs why waiting jail J's set-up failed (its status record). */
static void
log_failed(const struct jail *j)
{
	int32_t v[3] = {0, 0, 0};
	int n;

	/* A warm jail's payload says its Landlock ABI before it waits
	 * (jail_wait_payload): the reason comes after. */
	for (int i = 0; i < 4; i++)
		if ((n = wire_status_read(j->status_fd, v)) != 1 ||
		    v[0] != INIT_REC_LANDLOCK)
			break;

	if (n == -EPROTO)
		log_warn("warm pool: a waiting jail's status record of type %d "
			 "with descriptors or of no status type: refused",
		    (int)v[0]);
	if (n != 1)
		v[0] = 0;
	if (v[0] == INIT_REC_SETUP_FAILED)
		log_warn("warm pool: a waiting jail's set-up failed at %s: %s; "
			 "jobs are built cold until the next one ends",
		    jail_stage_name(v[1]), strerror(v[2]));
	else if (v[0] == INIT_REC_BIND_FAILED)
		log_warn("warm pool: a waiting jail's set-up failed at %s "
			 "(bind %d of the policy): %s; jobs are built cold "
			 "until the next one ends",
		    jail_stage_name(STAGE_BIND), v[1] + 1, strerror(v[2]));
	else
		log_warn("warm pool: a waiting jail ended before its job; jobs "
			 "are built cold until the next one ends");
}

int
pool_reap_failed(struct pool *p, struct zygote *z)
{
	uint32_t k = 0;
	int e = 0;

	for (uint32_t i = 0; i < p->n; i++) {
		if (!gone(&p->ready[i].jail)) {
			p->ready[k++] = p->ready[i];
			continue;
		}
		log_failed(&p->ready[i].jail);
		p->stalled = true;
		if (drop_one(z, &p->ready[i].jail) < 0)
			e = -EPIPE;
	}
	p->n = k;
	return e;
}

int
pool_refill_start(struct pool *p, struct zygote *z)
{
	if (z->prepare_pending || !pool_short(p))
		return 0;
	return zygote_prepare_send(z, p->buf, p->template_len, p->wsfd);
}

int
pool_refill_finish(struct pool *p, struct zygote *z)
{
	struct zygote_reply r;
	struct jail j;
	int e;

	if (!z->prepare_pending)
		return 0;
	if ((e = zygote_prepare_recv(z, &j, &r)) < 0)
		return e;
	if (r.refusal != ZYGOTE_OK) {
		/* The job this template came from was built cold by the
		 * same zygote: a refusal now is a slot or descriptor
		 * shortage. Stop refilling until the next job. */
		log_warn("warm pool: the zygote did not prepare a jail (%d, "
			 "%s): no refill until the next job ends",
		    (int)r.refusal, strerror(r.err));
		p->stalled = true;
		return 0;
	}
	/* The template went away meanwhile, or one too many: not kept. */
	if (!p->have_template || p->n >= p->size)
		return drop_one(z, &j);
	p->ready[p->n].jail = j;
	p->ready[p->n].kill_on_denial = r.kill_on_denial;
	p->n++;
	return 0;
}

/* Sends the job's RUN message RUN (RUN_LEN bytes, copied into P->go
 * after the header) on a waiting jail's GO_FD as a WIRE_GO message
 * (shared/wire.h), with the job's stdin pipe STDIN_FD (borrowed) by its
 * role when >= 0. Returns 0, -ENOBUFS for a RUN too long, or
 * wire_send's negative errno. */
static int
send_go(struct pool *p, int go_fd, const uint8_t *run, size_t run_len,
    int stdin_fd)
{
	if (run_len > WIRE_MAX_MSG - WIRE_HEADER_SIZE)
		return -ENOBUFS;
	memcpy(p->go + WIRE_HEADER_SIZE, run, run_len);
	return wire_send(go_fd, p->go, WIRE_HEADER_SIZE + run_len, WIRE_GO,
	    stdin_fd >= 0 ? WIRE_ROLE_BIT(0) : 0, &stdin_fd);
}

int
pool_take(struct pool *p, struct zygote *z, const struct job_spec *spec,
    const uint8_t *run, size_t run_len, int stdin_fd, struct jail *j,
    bool *kill_on_denial)
{
	int e;

	/* A waiting jail's /work is built already: an overlay over the
	 * workspace whose stage has the template's size (issue 26), which
	 * is why another allowance goes cold; launcher/init/stage.c says
	 * why the broker's writes between jobs reach it all the same. */
	if (p->n == 0 || !jail_pool_compatible(&p->template, spec))
		return 0;
	while (p->n > 0) {
		struct pool_jail pj = p->ready[0];

		/* Oldest first: it has had the most time to be built. */
		memmove(&p->ready[0], &p->ready[1],
		    (p->n - 1) * sizeof(p->ready[0]));
		p->n--;
		if (gone(&pj.jail)) {
			/* Its set-up failed; a cold jail will say why. */
			log_failed(&pj.jail);
			p->stalled = true;
			if (drop_one(z, &pj.jail) < 0)
				return -EPIPE;
			continue;
		}
		e = send_go(p, pj.jail.go_fd, run, run_len, stdin_fd);
		if (e < 0) {
			if (drop_one(z, &pj.jail) < 0)
				return -EPIPE;
			continue;
		}
		close_fdp(&pj.jail.go_fd);
		clock_gettime(CLOCK_MONOTONIC, &pj.jail.start);
		*j = pj.jail;
		*kill_on_denial = pj.kill_on_denial;
		log_debug("warm pool: job %llu takes a waiting jail (%u left)",
		    (unsigned long long)spec->job_id, p->n);
		return 1;
	}
	return 0;
}
