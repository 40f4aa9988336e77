/*
 * dispatch.c: who may send what, when, on the launcher's side
 * (style.md rule 3). An unknown type, a type outside its phase, a missing
 * or unexpected descriptor, or a malformed body is a protocol violation:
 * the caller ends the session, killing any jail.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "launcher.h"
#include "log.h"

/* A handler may take the descriptor *FD (then it sets *FD to -1);
 * otherwise the dispatcher closes it. */
typedef int (*handler_fn)(struct launcher *l, const uint8_t *body,
			  size_t len, int *fd);

static int
handle_hello(struct launcher *l, const uint8_t *body, size_t len, int *fd)
{
	uint32_t version;
	int n, e;

	if ((e = proto_decode_hello(body, len, &version)) < 0)
		return e;
	if (version != PROTO_VERSION) {
		log_error("broker speaks protocol version %u, this launcher %u",
			  version, PROTO_VERSION);
		return -EPROTO;
	}
	n = proto_encode_hello_reply(l->out, PROTO_MAX_MSG, PROTO_VERSION,
				     (uint32_t)getpid());
	if (n < 0)
		return n;
	if ((e = proto_send(l->ipc, l->out, (size_t)n, -1)) < 0)
		return e;
	l->phase = PHASE_READY;
	return 0;
}

/*
 * RUN: the broker has validated the job against its policy; we re-check
 * what the decoder can (bounds, non-zero ids, absolute normalised mount
 * paths, every limit set) and that the descriptor is a directory, since
 * a job whose /work is not a directory must never start.
 */
static int
handle_run(struct launcher *l, const uint8_t *body, size_t len, int *fd)
{
	struct job_spec spec;
	struct stat st;
	int wsfd = *fd;
	int e;

	if (fstat(wsfd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_error("RUN: the descriptor is not a directory");
		return -EBADMSG;
	}
	if ((e = proto_decode_run(body, len, &spec)) < 0)
		return e;
	if (spec.job_id <= l->last_job_id) {
		log_error("RUN: job id %llu does not increase",
			  (unsigned long long)spec.job_id);
		job_spec_clear(&spec);
		return -EPROTO;
	}
	l->last_job_id = spec.job_id;
	l->running_job_id = spec.job_id;
	l->cancel_requested = false;
	l->phase = PHASE_RUNNING;
	*fd = -1; /* launcher_run_job closes it as soon as the jail holds it */
	e = launcher_run_job(l, &spec, wsfd);
	l->phase = PHASE_READY;
	job_spec_clear(&spec);
	return e;
}

/* CANCEL may race with the job's end: a stale id is ignored, a future
 * one is a violation. */
static int
handle_cancel(struct launcher *l, const uint8_t *body, size_t len, int *fd)
{
	uint64_t id;
	int e;

	if ((e = proto_decode_cancel(body, len, &id)) < 0)
		return e;
	if (id > l->last_job_id)
		return -EPROTO;
	if (l->phase == PHASE_RUNNING && id == l->running_job_id)
		l->cancel_requested = true;
	return 0;
}

static const struct {
	uint16_t type;
	unsigned phases;  /* enum launcher_phase mask */
	bool fd;          /* exactly one descriptor expected */
	handler_fn fn;
} table[] = {
	{PROTO_HELLO, PHASE_HELLO, false, handle_hello},
	{PROTO_RUN, PHASE_READY, true, handle_run},
	{PROTO_CANCEL, PHASE_READY | PHASE_RUNNING, false, handle_cancel},
};

int
launcher_dispatch_one(struct launcher *l)
{
	_cleanup_close_ int fd = -1;
	const uint8_t *body;
	size_t body_len;
	uint16_t type;
	int n, e;

	n = proto_recv(l->ipc, l->msg, PROTO_MAX_MSG, &fd);
	if (n == 0) {
		l->peer_gone = true;
		return 0;
	}
	if (n < 0) {
		if (n == -ECONNRESET)
			l->peer_gone = true;
		return n;
	}
	if ((e = proto_decode_header(l->msg, (size_t)n, &type, &body,
				     &body_len)) < 0) {
		log_error("malformed message from the broker: %s",
			  strerror(-e));
		return e;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].type != type)
			continue;
		if (!(table[i].phases & l->phase)) {
			log_error("%s not allowed in this phase",
				  proto_msg_name(type));
			return -EPROTO;
		}
		if (table[i].fd != (fd >= 0)) {
			log_error("%s: descriptor %s", proto_msg_name(type),
				  fd >= 0 ? "not allowed" : "missing");
			return -EPROTO;
		}
		e = table[i].fn(l, body, body_len, &fd);
		if (e < 0) {
			log_error("%s: %s", proto_msg_name(type), strerror(-e));
			return e;
		}
		return 1;
	}
	log_error("%s is not a broker-to-launcher message",
		  proto_msg_name(type));
	return -EPROTO;
}
