/*
 * zygote_client.c: the launcher's side of its zygote (zygote.h): starting
 * and stopping it, and the requests the supervisor sends it (a jail, a
 * warm jail, a kill, a measure) on the wire of shared/wire.h.
 */
#include "zygote.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "log.h"
#include "usage.h"
#include "zygote_wire.h"

/* How long the launcher waits for a measure's reply at most, ms
 * (zygote.h): past it the reply is dropped when it comes, and the caller
 * keeps its upper bound. A walk of 61 processes mapping 500 MiB each
 * took 2.2 s on the benchmark machine (docs/benchmarks.md). */
#define MEAS_WAIT_MS ZYGOTE_REPLY_WAIT_MS

int
zygote_kill(struct zygote *z, uint64_t token, int sig)
{
	uint8_t msg[WIRE_HEADER_SIZE + 12];
	struct wbuf w;

	wbuf_init(&w, msg, sizeof(msg));
	w.len = WIRE_HEADER_SIZE;
	wbuf_put_i32(&w, sig);
	wbuf_put_u64(&w, token);
	if (!wbuf_ok(&w))
		return -ENOBUFS;
	return wire_send(z->sock, msg, w.len, WIRE_KILL, 0, NULL);
}

static bool measure_reply(const struct wire_msg *m);

/* Sends the request TYPE (WIRE_MEASURE or WIRE_KOBJ, with CAP) for the
 * jail TOKEN and waits for its reply, whose four figures go to VALUE and
 * its last word to *FALLBACKS: zygote_measure and
 * zygote_kernel_objects. */
static int
ask(struct zygote *z, uint16_t type, uint64_t token, uint32_t max_procs,
    uint64_t cap, uint64_t value[4], uint32_t *fallbacks)
{
	const uint16_t want = type == WIRE_KOBJ ? WIRE_KOBJ_REPLY
						: WIRE_MEASURE_REPLY;
	uint8_t msg[WIRE_HEADER_SIZE + 24];
	struct pollfd p = {.fd = z->sock, .events = POLLIN};
	struct wbuf w;
	struct rbuf r;
	struct wire_msg m;
	uint32_t seq;
	int fds[WIRE_MAX_FDS];
	int32_t err;
	int n;
	struct timespec t0, t1;
	long spent, wait_ms;

	if (z->prepare_pending)
		return -EBUSY;
	wbuf_init(&w, msg, sizeof(msg));
	w.len = WIRE_HEADER_SIZE;
	wbuf_put_u32(&w, ++z->measure_seq);
	wbuf_put_u64(&w, token);
	wbuf_put_u32(&w, max_procs);
	if (type == WIRE_KOBJ)
		wbuf_put_u64(&w, cap);
	if (!wbuf_ok(&w))
		return -ENOBUFS;
	if ((n = wire_send(z->sock, msg, w.len, type, 0, NULL)) < 0)
		return n;
	wait_ms = z->reply_wait_ms > 0 && z->reply_wait_ms < MEAS_WAIT_MS
	    ? z->reply_wait_ms
	    : MEAS_WAIT_MS;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Replies to earlier requests that timed out are dropped here. */
	for (;;) {
		do {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			spent = (t1.tv_sec - t0.tv_sec) * 1000 +
			    (t1.tv_nsec - t0.tv_nsec) / 1000000;
			n = spent >= wait_ms
			    ? 0
			    : poll(&p, 1, (int)(wait_ms - spent));
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if (n == 0) {
			z->late_replies++;
			return -ETIMEDOUT;
		}
		n = wire_recv(z->sock, z->buf, WIRE_MAX_MSG, fds, 0, &m);
		if (n <= 0)
			return n == 0 ? -EPIPE : n;
		rbuf_init(&r, m.body, m.body_len);
		if (!measure_reply(&m) || rbuf_get_i32(&r, &err) < 0 ||
		    rbuf_get_u32(&r, &seq) < 0 ||
		    rbuf_get_u64(&r, &value[0]) < 0 ||
		    rbuf_get_u64(&r, &value[1]) < 0 ||
		    rbuf_get_u64(&r, &value[2]) < 0 ||
		    rbuf_get_u64(&r, &value[3]) < 0 ||
		    rbuf_get_u32(&r, fallbacks) < 0 || rbuf_end(&r) < 0)
			return -EPROTO;
		if (seq == z->measure_seq)
			return err > 0 || m.type != want ? -EPROTO : err;
		if (z->late_replies > 0)
			z->late_replies--;
	}
}

/* Whether M is a measure's or a count's reply (by its type). */
static bool
measure_reply(const struct wire_msg *m)
{
	return m->type == WIRE_MEASURE_REPLY || m->type == WIRE_KOBJ_REPLY;
}

int
zygote_drop_late(struct zygote *z)
{
	int fds[WIRE_MAX_FDS];
	struct wire_msg m;
	int n;

	if (z->late_replies == 0)
		return -EAGAIN;
	n = wire_recv(z->sock, z->buf, WIRE_MAX_MSG, fds, 0, &m);
	if (n <= 0)
		return n == 0 ? -EPIPE : n;
	if (!measure_reply(&m))
		return -EAGAIN;
	z->late_replies--;
	return 0;
}

int
zygote_measure(struct zygote *z, uint64_t token, uint32_t max_procs,
    uint64_t *bytes, uint32_t *fallbacks, uint64_t *resident)
{
	uint64_t v[4] = {0};
	int r;

	r = ask(z, WIRE_MEASURE, token, max_procs, 0, v, fallbacks);
	*bytes = v[0];
	*resident = v[1];
	return r;
}

int
zygote_kernel_objects(struct zygote *z, uint64_t token, uint32_t max_procs,
    uint64_t cap, struct kernel_objects *k)
{
	uint64_t v[4] = {0};
	uint32_t unreadable = 0;
	int r;

	r = ask(z, WIRE_KOBJ, token, max_procs, cap, v, &unreadable);
	k->watches = v[0];
	k->maps = v[1];
	k->locks = v[2];
	k->inflight = v[3];
	k->unreadable = unreadable;
	return r;
}

int
zygote_start(const struct zygote_config *c, struct zygote *z)
{
	pid_t launcher = getpid();
	int sv[2], e;

	z->pid = -1;
	z->sock = -1;
	z->prepare_pending = false;
	z->reply_wait_ms = 0;
	z->late_replies = 0;
	z->buf = malloc(WIRE_MAX_MSG);
	if (z->buf == NULL)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		e = -errno;
		free(z->buf);
		z->buf = NULL;
		return e;
	}
	z->pid = fork();
	if (z->pid == 0) {
		int lo = sv[1] < c->launcher_pidfd ? sv[1] : c->launcher_pidfd;
		int hi = sv[1] ^ c->launcher_pidfd ^ lo;

		/* Standard input and output are /dev/null (the spawner
		 * made them so); standard error is the broker's, for
		 * diagnostics. Nothing else of the launcher's stays, the
		 * broker's socket least of all. */
		if (lo > 3)
			syscall(SYS_close_range, 3u, (unsigned)lo - 1, 0u);
		if (hi > lo + 1)
			syscall(SYS_close_range, (unsigned)lo + 1,
			    (unsigned)hi - 1, 0u);
		syscall(SYS_close_range, (unsigned)hi + 1, ~0u, 0u);
		zygote_main(c, sv[1], launcher);
	}
	e = z->pid < 0 ? -errno : 0;
	close(sv[1]);
	if (e < 0) {
		close(sv[0]);
		free(z->buf);
		z->buf = NULL;
		return e;
	}
	z->sock = sv[0];
	return 0;
}

/* Sends one request to Z (a prepare one when POOLED) for the jail of
 * the RUN message RUN (RUN_LEN bytes, copied after the wire's header),
 * with its descriptors by role (wire.h): the workspace WSFD, the cgroup
 * leaf CGROUP_FD and the payload's stdin TTY_FD (the job's stdin pipe
 * when STDIN_PIPE, else the caller's terminal) when >= 0. */
static int
send_request(struct zygote *z, bool pooled, const uint8_t *run,
    size_t run_len, int wsfd, int cgroup_fd, int tty_fd, bool stdin_pipe)
{
	int fds[WIRE_MAX_FDS] = {wsfd};
	uint32_t roles = WIRE_ROLE_BIT(0);
	size_t nsend = 1;

	if (run_len > WIRE_MAX_MSG - WIRE_HEADER_SIZE)
		return -ENOBUFS;
	memcpy(z->buf + WIRE_HEADER_SIZE, run, run_len);
	if (cgroup_fd >= 0) {
		fds[nsend++] = cgroup_fd;
		roles |= WIRE_ROLE_BIT(1);
	}
	if (tty_fd >= 0) {
		fds[nsend++] = tty_fd;
		roles |= stdin_pipe ? WIRE_ROLE_BIT(2) : WIRE_ROLE_BIT(3);
	}
	return wire_send(z->sock, z->buf, WIRE_HEADER_SIZE + run_len,
	    pooled ? WIRE_PREPARE : WIRE_JAIL, roles, fds);
}

/* Receives the reply to Z's oldest request (a prepare one when POOLED)
 * into J and R: its type the request's, its descriptors all of the
 * type's row (wire.h) with ZYGOTE_OK and none without. */
static int
recv_reply(struct zygote *z, bool pooled, struct jail *j,
    struct zygote_reply *r)
{
	const uint16_t type = pooled ? WIRE_PREPARE_REPLY : WIRE_JAIL_REPLY;
	const size_t want = wire_msg_desc(type)->nroles;
	int fds[WIRE_MAX_FDS];
	char *why = NULL;
	uint64_t sec, nsec, token;
	struct wire_msg m;
	struct rbuf rb;
	int32_t refusal, err, pid;
	uint8_t kill;
	int n;

	memset(j, 0, sizeof(*j));
	j->pidfd = j->out_fd = j->err_fd = j->status_fd = j->notify_sock = -1;
	j->go_fd = -1;
	memset(r, 0, sizeof(*r));
	/* A measure's reply that came after its wait ended is dropped. */
	do
		n = wire_recv(z->sock, z->buf, WIRE_MAX_MSG, fds, want, &m);
	while (n > 0 && z->late_replies > 0 && measure_reply(&m) &&
	    z->late_replies--);
	if (n <= 0)
		return n == 0 ? -EPIPE : n;
	rbuf_init(&rb, m.body, m.body_len);
	if (m.type != type || rbuf_get_i32(&rb, &refusal) < 0 ||
	    rbuf_get_i32(&rb, &err) < 0 ||
	    rbuf_get_u8(&rb, &kill) < 0 || rbuf_get_i32(&rb, &pid) < 0 ||
	    rbuf_get_u64(&rb, &sec) < 0 || rbuf_get_u64(&rb, &nsec) < 0 ||
	    rbuf_get_u64(&rb, &token) < 0 ||
	    rbuf_get_str(&rb, &why, sizeof(r->why) - 1) < 0 ||
	    rbuf_end(&rb) < 0 || refusal < ZYGOTE_OK ||
	    refusal > ZYGOTE_REFUSAL_MAX ||
	    m.nfds != (refusal == ZYGOTE_OK ? want : 0u) ||
	    (refusal == ZYGOTE_OK && (pid <= 0 || token == 0))) {
		for (size_t i = 0; i < m.nfds; i++)
			close(fds[i]);
		free(why);
		return -EPROTO;
	}
	r->refusal = (enum zygote_refusal)refusal;
	r->err = err;
	r->kill_on_denial = kill != 0;
	snprintf(r->why, sizeof(r->why), "%s", why);
	free(why);
	if (refusal != ZYGOTE_OK)
		return 0;
	j->pid = (pid_t)pid;
	j->token = token;
	j->start.tv_sec = (time_t)sec;
	j->start.tv_nsec = (long)nsec;
	j->pidfd = wire_fd(&m, fds, WIRE_FD_PIDFD);
	j->out_fd = wire_fd(&m, fds, WIRE_FD_STDOUT);
	j->err_fd = wire_fd(&m, fds, WIRE_FD_STDERR);
	j->status_fd = wire_fd(&m, fds, WIRE_FD_STATUS);
	j->notify_sock = wire_fd(&m, fds, WIRE_FD_NOTIFY);
	j->go_fd = wire_fd(&m, fds, WIRE_FD_GO);
	return 0;
}

int
zygote_start_jail(struct zygote *z, const struct job_spec *spec,
    const uint8_t *run, size_t run_len, int wsfd, int cgroup_fd, int tty_fd,
    struct jail *j, struct zygote_reply *r)
{
	int e;

	memset(r, 0, sizeof(*r));
	if (z->prepare_pending)
		return -EBUSY;
	if ((e = send_request(z, false, run, run_len, wsfd, cgroup_fd, tty_fd,
		 (spec->flags & JOB_F_STDIN) != 0)) < 0)
		return e;
	return recv_reply(z, false, j, r);
}

int
zygote_prepare_send(struct zygote *z, const uint8_t *run, size_t run_len,
    int wsfd)
{
	int e;

	if (z->prepare_pending)
		return -EBUSY;
	if ((e = send_request(z, true, run, run_len, wsfd, -1, -1, false)) < 0)
		return e;
	z->prepare_pending = true;
	return 0;
}

int
zygote_prepare_recv(struct zygote *z, struct jail *j, struct zygote_reply *r)
{
	if (!z->prepare_pending)
		return -EINVAL;
	z->prepare_pending = false;
	return recv_reply(z, true, j, r);
}

void
zygote_stop(struct zygote *z)
{
	siginfo_t si;

	close_fdp(&z->sock);
	if (z->pid > 0)
		while (waitid(P_PID, (id_t)z->pid, &si, WEXITED) < 0 &&
		    errno == EINTR)
			;
	z->pid = -1;
	free(z->buf);
	z->buf = NULL;
}
