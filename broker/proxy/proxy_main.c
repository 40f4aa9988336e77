/*
 * proxy_main.c: stockade-proxy --fd N, the egress proxy of one session
 * (issue 25; docs/egress.md). N is its end of the broker's
 * SOCK_SEQPACKET socketpair (the proxy channel of wire.h). It resolves
 * with c-ares (DNS only, /etc/resolv.conf read before confinement, or
 * the one server --dns names, "127.0.0.1:5353", "[::1]:53": for tests),
 * confines itself (proxy_confine.c), says WIRE_PROXY_READY and serves
 * the jobs the broker hands it until the socket ends; then exits 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "proxy.h"
#include "wire.h"

static struct proxy the_proxy;

struct proxy *
proxy_self(void)
{
	return &the_proxy;
}

int64_t
proxy_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t
proxy_ev(enum proxy_ev kind, uint32_t slot)
{
	return (uint64_t)kind << 56 | slot;
}

/* Sends WIRE_PROXY_FAILED {i32 errno, str why}. */
static void
send_failed(int ctl, int err, const char *why)
{
	uint8_t msg[WIRE_HEADER_SIZE + 600];
	struct wbuf w;

	wbuf_init(&w, msg + WIRE_HEADER_SIZE, sizeof(msg) - WIRE_HEADER_SIZE);
	wbuf_put_i32(&w, err);
	wbuf_put_str(&w, why);
	if (wbuf_ok(&w))
		wire_send(ctl, msg, WIRE_HEADER_SIZE + w.len, WIRE_PROXY_FAILED,
		    0, NULL);
}

static int
send_ready(int ctl, int abi)
{
	uint8_t msg[WIRE_HEADER_SIZE + 4];
	struct wbuf w;

	wbuf_init(&w, msg + WIRE_HEADER_SIZE, 4);
	wbuf_put_u32(&w, (uint32_t)abi);
	return wire_send(ctl, msg, sizeof(msg), WIRE_PROXY_READY, 0, NULL);
}

/* "--fd N [--dns ADDR:PORT]": N, or -1; *DNS the server or NULL. */
static int
parse_args(int argc, char **argv, const char **dns)
{
	char *end;
	long fd;

	*dns = NULL;
	if (argc == 5 && strcmp(argv[3], "--dns") == 0)
		*dns = argv[4];
	else if (argc != 3)
		return -1;
	if (strcmp(argv[1], "--fd") != 0)
		return -1;
	errno = 0;
	fd = strtol(argv[2], &end, 10);
	if (errno != 0 || *end != '\0' || end == argv[2] || fd < 3 ||
	    fd > 65535)
		return -1;
	return (int)fd;
}

/* Everything before confinement: epoll, c-ares, the host's addresses. */
static int
setup(struct proxy *px, const char *dns, char *err, size_t errlen)
{
	struct epoll_event ev = {.events = EPOLLIN};
	int e;

	for (unsigned i = 0; i < PROXY_MAX_JOBS; i++)
		px->job[i].lfd = px->job[i].pfd = -1;
	for (unsigned i = 0; i < PROXY_MAX_CONNS; i++)
		px->conn[i].cfd = px->conn[i].ufd = -1;
	px->ep = epoll_create1(EPOLL_CLOEXEC);
	ev.data.u64 = proxy_ev(PEV_CTL, 0);
	if (px->ep < 0 || epoll_ctl(px->ep, EPOLL_CTL_ADD, px->ctl, &ev) < 0) {
		e = -errno;
		snprintf(err, errlen, "epoll: %s", strerror(errno));
		return e;
	}
	if ((e = proxy_dns_init(px, dns)) < 0) {
		snprintf(err, errlen, "c-ares: %s", ares_strerror(-e));
		return -EIO;
	}
	if ((e = egress_local_addrs(&px->local)) < 0) {
		snprintf(err, errlen, "the host's addresses: %s", strerror(-e));
		return e;
	}
	return 0;
}

/* The epoll timeout: the nearest deadline of a connection or c-ares. */
static int
next_timeout(struct proxy *px)
{
	int64_t now = proxy_now(), best = -1;
	int dns = proxy_dns_timeout_ms(px);

	for (unsigned i = 0; i < PROXY_MAX_CONNS; i++) {
		const struct proxy_conn *c = &px->conn[i];
		int64_t left;

		if (c->state == CS_FREE)
			continue;
		left = c->deadline > now ? c->deadline - now : 0;
		if (best < 0 || left < best)
			best = left;
	}
	if (dns >= 0 && (best < 0 || dns < best))
		best = dns;
	return best < 0 ? -1 : (int)(best > 60000 ? 60000 : best);
}

static void
dispatch(struct proxy *px, const struct epoll_event *ev)
{
	enum proxy_ev kind = (enum proxy_ev)(ev->data.u64 >> 56);
	uint32_t slot = (uint32_t)ev->data.u64;

	switch (kind) {
	case PEV_CTL:
		proxy_ctl_read(px);
		break;
	case PEV_LISTEN:
		proxy_accept(px, slot);
		break;
	case PEV_PACKET:
		proxy_packet_read(px, slot);
		break;
	case PEV_CLIENT:
	case PEV_UPSTREAM:
		proxy_conn_event(px, slot, kind == PEV_UPSTREAM, ev->events);
		break;
	case PEV_ARES:
		proxy_dns_event(px, (int)slot, ev->events);
		break;
	default:
		break;
	}
}

static void
serve(struct proxy *px)
{
	struct epoll_event ev[64];

	while (!px->done) {
		int n = epoll_wait(px->ep, ev, 64, next_timeout(px));

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n && !px->done; i++)
			dispatch(px, &ev[i]);
		proxy_dns_timeouts(px);
		proxy_conn_timeouts(px, proxy_now());
	}
	for (unsigned i = 0; i < PROXY_MAX_JOBS; i++)
		if (px->job[i].used)
			proxy_job_end(px, i);
}

int
main(int argc, char **argv)
{
	struct proxy *px = &the_proxy;
	char err[512] = "";
	const char *dns;
	int abi, e;

	px->ctl = parse_args(argc, argv, &dns);
	if (px->ctl < 0 || fcntl(px->ctl, F_GETFD) < 0) {
		fprintf(stderr,
		    "usage: stockade-proxy --fd N [--dns ADDR:PORT] (the "
		    "broker starts it; N its control socket)\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	e = setup(px, dns, err, sizeof(err));
	abi = e < 0 ? e : proxy_confine(err, sizeof(err));
	if (abi < 0) {
		fprintf(stderr, "stockade-proxy: %s\n", err);
		send_failed(px->ctl, -abi, err);
		return 1;
	}
	if (send_ready(px->ctl, abi) < 0)
		return 1;
	serve(px);
	return 0;
}
