/*
 * dispatch.c: who may send what, when, on the launcher's side
 * (style.md rule 3). An unknown type, a type outside its phase, a missing
 * or unexpected descriptor, or a malformed body is a protocol violation:
 * the caller ends the session, killing any jail.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsutil.h"
#include "launcher.h"
#include "log.h"

/* A handler may take a descriptor FDS[i] (then it sets FDS[i] to -1);
 * the dispatcher closes the others. */
typedef int (
    *handler_fn)(struct launcher *l, const uint8_t *body, size_t len, int *fds);

static int
handle_hello(struct launcher *l, const uint8_t *body, size_t len, int *fds)
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
 * A terminal, by its device numbers (the kernel's
 * Documentation/admin-guide/devices.txt): the virtual consoles and
 * serial ports (4), /dev/tty, the console and ptmx (5), and the
 * pseudo-terminal slaves (136 to 143). isatty(3) would need an ioctl the
 * launcher's filter does not answer for this.
 */
static bool
is_terminal(const struct stat *st)
{
	unsigned m = major(st->st_rdev);

	return S_ISCHR(st->st_mode) &&
	    (m == 4 || m == 5 || (m >= 136 && m <= 143));
}

/*
 * The job's standard input as JOB_F_STDIN promises it (proto.h): FD is
 * a pipe or FIFO open for reading only. fstat(2), fcntl(2) F_GETFL.
 */
static bool
is_stdin_pipe(int fd)
{
	struct stat st;
	int fl;

	return fd >= 0 && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
	    (fl = fcntl(fd, F_GETFL)) >= 0 &&
	    (fl & (O_ACCMODE | O_PATH)) == O_RDONLY;
}

/*
 * RUN: the broker has validated the job against its policy; we re-check
 * what the decoder can (bounds, non-zero ids, absolute normalised mount
 * paths, every limit set, no unknown layer bit) and that the descriptor
 * is a directory, since a job whose /work is not a directory must never
 * start. A second descriptor is the job's standard input, exactly when
 * the spec says JOB_F_STDIN, and then only the read end of a pipe (a
 * FIFO open read-only: nothing the payload could write through, seek or
 * reopen as a host file; issue 22); otherwise it is the caller's
 * terminal: only with layer no_terminal off, and only a terminal
 * (issue 6).
 */
static int
handle_run(struct launcher *l, const uint8_t *body, size_t len, int *fds)
{
	struct job_spec spec;
	struct stat st;
	int wsfd = fds[0], in = fds[1];
	int e;

	if (fstat(wsfd, &st) < 0)
		st.st_mode = 0;
	if (!S_ISDIR(st.st_mode)) {
		log_error("RUN: the descriptor is not a directory");
		return -EBADMSG;
	}
	if ((e = proto_decode_run(body, len, &spec)) < 0)
		return e;
	if ((spec.flags & JOB_F_STDIN) != 0 && !is_stdin_pipe(in)) {
		log_error("RUN: JOB_F_STDIN without the read end of a pipe");
		job_spec_clear(&spec);
		return -EPROTO;
	}
	if ((spec.flags & JOB_F_STDIN) == 0 && in >= 0 &&
	    (!job_spec_layer_off(&spec, JOB_LAYER_NO_TERMINAL) ||
		fstat(in, &st) < 0 || !is_terminal(&st))) {
		log_error("RUN: a second descriptor that is not allowed (the "
			  "caller's terminal with layer no_terminal off only)");
		job_spec_clear(&spec);
		return -EPROTO;
	}
	if (spec.job_id <= l->last_job_id) {
		log_error("RUN: job id %llu does not increase",
		    (unsigned long long)spec.job_id);
		job_spec_clear(&spec);
		return -EPROTO;
	}
	l->last_job_id = spec.job_id;
	l->running_job_id = spec.job_id;
	l->cancel_requested = false;
	l->cancel_reason = JOB_CANCEL_NONE;
	l->phase = PHASE_RUNNING;
	/* launcher_run_job closes them as soon as the jail holds them */
	fds[0] = fds[1] = -1;
	l->run = l->msg;
	l->run_len = PROTO_HEADER_SIZE + len;
	e = launcher_run_job(l, &spec, wsfd, in);
	l->run = NULL;
	l->run_len = 0;
	l->phase = PHASE_READY;
	job_spec_clear(&spec);
	return e;
}

/*
 * POOL: the session's warm pool size, once, before the first RUN (a
 * later one would be a broker that is not itself).
 */
static int
handle_pool(struct launcher *l, const uint8_t *body, size_t len, int *fds)
{
	uint32_t jails;
	int e;

	(void)fds;
	if ((e = proto_decode_pool(body, len, &jails)) < 0)
		return e;
	if (l->pool.buf != NULL || l->last_job_id != 0) {
		log_error("POOL: only once, before the first RUN");
		return -EPROTO;
	}
	if ((e = pool_init(&l->pool)) < 0)
		return e;
	l->pool.size = jails;
	return 0;
}

/* CANCEL may race with the job's end: a stale id is ignored, a future
 * one is a violation. The first CANCEL of a job gives its reason. */
static int
handle_cancel(struct launcher *l, const uint8_t *body, size_t len, int *fds)
{
	uint64_t id;
	uint32_t reason;
	int e;

	if ((e = proto_decode_cancel(body, len, &id, &reason)) < 0)
		return e;
	if (id > l->last_job_id)
		return -EPROTO;
	if (l->phase == PHASE_RUNNING && id == l->running_job_id &&
	    !l->cancel_requested) {
		l->cancel_requested = true;
		l->cancel_reason = reason;
	}
	return 0;
}

static const struct {
	uint16_t type;
	unsigned phases; /* enum launcher_phase mask */
	uint8_t min_fds; /* descriptors expected: at least ... */
	uint8_t max_fds; /* ... and at most (<= PROTO_MAX_FDS) */
	handler_fn fn;
} table[] = {
    {PROTO_HELLO, PHASE_HELLO, 0, 0, handle_hello},
    /* The workspace; the terminal too with no_terminal off. */
    {PROTO_RUN, PHASE_READY, 1, 2, handle_run},
    {PROTO_CANCEL, PHASE_READY | PHASE_RUNNING, 0, 0, handle_cancel},
    {PROTO_POOL, PHASE_READY, 0, 0, handle_pool},
};

static void
close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close_fdp(&fds[i]);
}

static int
dispatch(struct launcher *l, int *fds, size_t nfds, int n)
{
	const uint8_t *body;
	size_t body_len;
	uint16_t type;
	int e;

	if ((e = proto_decode_header(l->msg, (size_t)n, &type, &body,
		 &body_len)) < 0) {
		log_error("malformed message from the broker: %s",
		    strerror(-e));
		return e;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		unsigned phases = table[i].phases;
		uint8_t max_fds = table[i].max_fds;

		if (table[i].type != type)
			continue;
		if (!(phases & l->phase)) {
			log_error("%s not allowed in this phase",
			    proto_msg_name(type));
			return -EPROTO;
		}
		if (nfds < table[i].min_fds || nfds > max_fds) {
			log_error("%s: %zu descriptors, expected %u to %u",
			    proto_msg_name(type), nfds, table[i].min_fds,
			    max_fds);
			return -EPROTO;
		}
		e = table[i].fn(l, body, body_len, fds);
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

/*
 * Between jobs, until a message of the broker comes: asks the zygote for
 * the warm pool's missing jails one after another, taking each reply as
 * it comes (pool.h), so a RUN never waits for a jail being prepared, and
 * reaps a waiting jail whose set-up failed as soon as its init exits.
 * The zygote's socket is watched even with no reply pending: a zygote
 * that died between jobs ends the session at once (-EPIPE), so the
 * broker sees this launcher gone before it sends the next job and
 * starts a new one for it, instead of the job failing for want of a
 * zygote (broker/jobs/supervisor.h, supervisor_start).
 * Returns 0 or a negative errno (the zygote is gone).
 */
static int
refill(struct launcher *l)
{
	struct pool *pl = &l->pool;
	int e;

	while (l->phase == PHASE_READY) {
		/* The broker, the zygote, then each waiting jail's init: one
		 * that exits before its job failed its set-up. */
		struct pollfd p[2 + PROTO_MAX_POOL];
		uint32_t n = pl->n;

		if ((e = pool_refill_start(pl, &l->zygote)) < 0)
			return e;
		p[0] = (struct pollfd){.fd = l->ipc, .events = POLLIN};
		p[1] = (struct pollfd){.fd = l->zygote.sock, .events = POLLIN};
		for (uint32_t i = 0; i < n; i++)
			p[2 + i] =
			    (struct pollfd){.fd = pl->ready[i].jail.pidfd,
				.events = POLLIN};
		if (!l->zygote.prepare_pending && n == 0 && l->zygote.sock < 0)
			return 0;
		if (poll(p, 2 + n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* Without a reply pending, the zygote speaks only by
		 * ending (POLLHUP; end of file reads as POLLIN too). */
		if (p[1].revents != 0 && !l->zygote.prepare_pending)
			return -EPIPE;
		if (p[1].revents != 0 &&
		    (e = pool_refill_finish(pl, &l->zygote)) < 0)
			return e;
		for (uint32_t i = 0; i < n; i++)
			if (p[2 + i].revents != 0) {
				if ((e = pool_reap_failed(pl, &l->zygote)) < 0)
					return e;
				break;
			}
		if (p[0].revents != 0)
			return 0;
	}
	return 0;
}

int
launcher_dispatch_one(struct launcher *l)
{
	int fds[PROTO_MAX_FDS] = {-1, -1};
	size_t nfds = 0;
	int n;

	if ((n = refill(l)) < 0) {
		log_error("the zygote is gone: %s", strerror(-n));
		return n;
	}
	_Static_assert(PROTO_MAX_FDS == 2,
	    "fds[] holds the workspace and "
	    "the terminal");
	n = proto_recv_fds(l->ipc, l->msg, PROTO_MAX_MSG, fds, PROTO_MAX_FDS,
	    &nfds);
	if (n == 0) {
		close_fds(fds, nfds);
		l->peer_gone = true;
		return 0;
	}
	if (n < 0) {
		if (n == -ECONNRESET)
			l->peer_gone = true;
		return n;
	}
	n = dispatch(l, fds, nfds, n);
	close_fds(fds, PROTO_MAX_FDS);
	return n;
}
