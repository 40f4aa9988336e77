/*
 * proxy_main.c: stockade-proxy --fd N, the egress proxy of one session
 * (issue 25; docs/egress.md). N is its end of the broker's
 * SOCK_SEQPACKET socketpair (the proxy channel of wire.h). It resolves
 * with c-ares (DNS only, /etc/resolv.conf read before confinement, or
 * the one server --dns names, "127.0.0.1:5353", "[::1]:53"), confines
 * itself (proxy_confine.c; with --connect-ports, TCP connect to those
 * ports alone: the broker passes every port its policy's rules and its
 * resolver need), says WIRE_PROXY_READY and serves
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

/* The command line (usage()): the control socket, the DNS server, the
 * ports TCP connect is confined to. */
struct args {
	int fd; /* -1 until given */
	const char *dns; /* NULL: /etc/resolv.conf */
	uint16_t ports[PROXY_MAX_CONNECT_PORTS];
	size_t nports;
	bool has_ports; /* --connect-ports given */
};

/* Reads a port "1".."65535" from S[0..LEN). Returns it or -1. */
static long
port_of(const char *s, size_t len)
{
	long v = 0;

	if (len == 0 || len > 5 || s[0] == '0')
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v >= 1 && v <= 65535 ? v : -1;
}

/* Reads LIST, "P[,P...]" with P a port or "LO-HI", into A's ports (a
 * port given twice is kept once). Returns 0, or -1 for a bad list or
 * more than PROXY_MAX_CONNECT_PORTS ports. */
static int
parse_ports(const char *list, struct args *a)
{
	for (const char *p = list; *p != '\0';) {
		size_t n = strcspn(p, ","), dash = strcspn(p, "-");
		long lo, hi;

		if (dash < n) {
			lo = port_of(p, dash);
			hi = port_of(p + dash + 1, n - dash - 1);
		} else
			lo = hi = port_of(p, n);
		if (lo < 0 || hi < lo)
			return -1;
		for (long v = lo; v <= hi; v++) {
			size_t k = 0;

			while (k < a->nports && a->ports[k] != v)
				k++;
			if (k < a->nports)
				continue;
			if (a->nports == PROXY_MAX_CONNECT_PORTS)
				return -1;
			a->ports[a->nports++] = (uint16_t)v;
		}
		p += n;
		if (*p == ',' && *++p == '\0')
			return -1;
	}
	a->has_ports = true;
	return a->nports > 0 ? 0 : -1;
}

/* "--fd N [--dns ADDR:PORT] [--connect-ports LIST]", in any order.
 * Returns 0 or -1. */
static int
parse_args(int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	for (int i = 1; i + 1 < argc; i += 2) {
		char *end;
		long fd;

		if (strcmp(argv[i], "--fd") == 0 && a->fd < 0) {
			errno = 0;
			fd = strtol(argv[i + 1], &end, 10);
			if (errno != 0 || *end != '\0' || end == argv[i + 1] ||
			    fd < 3 || fd > 65535)
				return -1;
			a->fd = (int)fd;
		} else if (strcmp(argv[i], "--dns") == 0 && a->dns == NULL)
			a->dns = argv[i + 1];
		else if (strcmp(argv[i], "--connect-ports") == 0 &&
		    !a->has_ports) {
			if (parse_ports(argv[i + 1], a) < 0)
				return -1;
		} else
			return -1;
	}
	return argc % 2 == 1 && a->fd >= 0 ? 0 : -1;
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
	static struct args a;
	char err[512] = "";
	int abi, e;

	if (parse_args(argc, argv, &a) < 0 || fcntl(a.fd, F_GETFD) < 0) {
		fprintf(stderr,
		    "usage: stockade-proxy --fd N [--dns ADDR:PORT] "
		    "[--connect-ports P[,LO-HI...]] (the broker starts it; N "
		    "its control socket)\n");
		return 2;
	}
	px->ctl = a.fd;
	signal(SIGPIPE, SIG_IGN);
	e = setup(px, a.dns, err, sizeof(err));
	abi = e < 0 ? e
		    : proxy_confine(a.has_ports ? a.ports : NULL, a.nports, err,
			  sizeof(err));
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
