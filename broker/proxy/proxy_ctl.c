/*
 * proxy_ctl.c: the broker's messages to stockade-proxy (proxy.h,
 * egress_ctl.h): WIRE_PROXY_JOB starts a job on the listener it brings,
 * WIRE_PROXY_END ends it and answers WIRE_PROXY_REPORT. The end of the
 * control socket ends the proxy.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "buf.h"
#include "proto.h"
#include "proxy.h"
#include "wire.h"

static void
close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* The job with id ID, or -1. */
static int
find_job(const struct proxy *px, uint64_t id)
{
	for (unsigned i = 0; i < PROXY_MAX_JOBS; i++)
		if (px->job[i].used && px->job[i].spec.job_id == id)
			return (int)i;
	return -1;
}

static int
watch(struct proxy *px, int fd, enum proxy_ev kind, unsigned slot)
{
	struct epoll_event ev = {.events = EPOLLIN,
	    .data.u64 = proxy_ev(kind, slot)};

	return epoll_ctl(px->ep, EPOLL_CTL_ADD, fd, &ev);
}

/* The listener's own address, so that a request for it is refused. */
static void
listener_addr(struct proxy_job *j)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(&j->self, 0, sizeof(j->self));
	if (getsockname(j->lfd, (struct sockaddr *)&ss, &len) == 0)
		egress_addr_from_sockaddr((struct sockaddr *)&ss, &j->self);
}

/* A job not served: its descriptors closed (the jail's connections to
 * the listener are refused), its END answered with proxy_failed. */
static void
refuse_job(struct egress_job *spec, int *fds, size_t n, const char *why)
{
	fprintf(stderr, "stockade-proxy: job %llu not served: %s\n",
	    (unsigned long long)spec->job_id, why);
	egress_job_clear(spec);
	close_fds(fds, n);
}

static int
nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void
start_job(struct proxy *px, const struct wire_msg *m, int *fds)
{
	int lfd = wire_fd(m, fds, WIRE_FD_PROXY_LISTENER);
	int pfd = wire_fd(m, fds, WIRE_FD_PACKET);
	struct egress_job spec = {0};
	int slot = -1;

	if (egress_job_decode(m->body, m->body_len, &spec) < 0 || lfd < 0) {
		refuse_job(&spec, fds, m->nfds, "a malformed body");
		return;
	}
	if (find_job(px, spec.job_id) >= 0) {
		refuse_job(&spec, fds, m->nfds, "its id is served already");
		return;
	}
	for (unsigned i = 0; i < PROXY_MAX_JOBS && slot < 0; i++)
		if (!px->job[i].used)
			slot = (int)i;
	/* Accepted and read until EAGAIN: non-blocking, whatever the
	 * broker sent (the flag is the open file's, shared). */
	if (slot < 0 || nonblocking(lfd) < 0 ||
	    (pfd >= 0 && nonblocking(pfd) < 0) ||
	    watch(px, lfd, PEV_LISTEN, (unsigned)slot) < 0 ||
	    (pfd >= 0 && watch(px, pfd, PEV_PACKET, (unsigned)slot) < 0)) {
		refuse_job(&spec, fds, m->nfds,
		    slot < 0 ? "too many jobs" : strerror(errno));
		return;
	}
	struct proxy_job *j = &px->job[slot];

	memset(j, 0, sizeof(*j));
	j->used = true;
	j->spec = spec;
	j->lfd = lfd;
	j->pfd = pfd;
	j->rep.job_id = spec.job_id;
	listener_addr(j);
}

static void
send_report(struct proxy *px, const struct egress_report *rep)
{
	static uint8_t msg[WIRE_HEADER_SIZE + EGRESS_REPORT_WIRE_MAX];
	long n = egress_report_encode(rep, msg + WIRE_HEADER_SIZE,
	    EGRESS_REPORT_WIRE_MAX);

	if (n >= 0)
		wire_send(px->ctl, msg, WIRE_HEADER_SIZE + (size_t)n,
		    WIRE_PROXY_REPORT, 0, NULL);
}

void
proxy_job_end(struct proxy *px, unsigned slot)
{
	struct proxy_job *j = &px->job[slot];

	for (unsigned i = 0; i < PROXY_MAX_CONNS; i++)
		if (px->conn[i].state != CS_FREE && px->conn[i].job == slot)
			proxy_conn_close(px, i);
	if (j->lfd >= 0)
		close(j->lfd);
	/* What the job sent just before it ended is still queued: a
	 * direct connect right before its exit is reported too. */
	for (int i = 0; j->pfd >= 0 && i < 64; i++)
		if (proxy_packet_read(px, slot) == 0)
			break;
	if (j->pfd >= 0)
		close(j->pfd);
	if (!px->done)
		send_report(px, &j->rep);
	egress_job_clear(&j->spec);
	memset(j, 0, sizeof(*j));
	j->lfd = j->pfd = -1;
}

static void
end_job(struct proxy *px, const struct wire_msg *m)
{
	struct rbuf r;
	uint64_t id;
	int slot;

	rbuf_init(&r, m->body, m->body_len);
	if (rbuf_get_u64(&r, &id) < 0 || rbuf_end(&r) < 0)
		return;
	slot = find_job(px, id);
	if (slot >= 0) {
		proxy_job_end(px, (unsigned)slot);
		return;
	}
	static struct egress_report none;

	memset(&none, 0, sizeof(none));
	none.job_id = id;
	none.proxy_failed = true; /* a job this proxy did not serve */
	send_report(px, &none);
}

void
proxy_ctl_read(struct proxy *px)
{
	static uint8_t buf[WIRE_MAX_MSG];
	int fds[WIRE_MAX_FDS];
	struct wire_msg m;
	int n = wire_recv(px->ctl, buf, sizeof(buf), fds, WIRE_MAX_FDS, &m);

	if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR)) {
		if (n < 0)
			fprintf(stderr, "stockade-proxy: control socket: %s\n",
			    strerror(-n));
		px->done = true;
		return;
	}
	if (n < 0)
		return;
	if (m.type == WIRE_PROXY_JOB)
		start_job(px, &m, fds);
	else {
		close_fds(fds, m.nfds);
		if (m.type == WIRE_PROXY_END)
			end_job(px, &m);
	}
}
