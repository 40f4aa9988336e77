/*
 * proxy_conn.c: one client connection of stockade-proxy (proxy.h) from
 * accept to the decision: the request (an HTTP head, CONNECT or
 * absolute-form, or SOCKS5), egress_decide, the job's caps, and the
 * answer to a refused one. proxy_dial.c takes an allowed one on,
 * proxy_relay.c relays it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "proxy.h"

#define CLOSING_MS 2000 /* to flush a last answer and drain the client */

static struct proxy_job *
job_of(struct proxy *px, struct proxy_conn *c)
{
	return &px->job[c->job];
}

/* A free connection slot with its buffers, or -1. */
static int
conn_new(struct proxy *px, unsigned job, int fd)
{
	for (unsigned i = 0; i < PROXY_MAX_CONNS; i++) {
		struct proxy_conn *c = &px->conn[i];
		uint32_t gen = c->gen + 1;
		uint8_t *buf;

		if (c->state != CS_FREE)
			continue;
		buf = malloc(2 * PROXY_BUF);
		if (buf == NULL)
			return -1;
		memset(c, 0, sizeof(*c));
		c->gen = gen;
		c->state = CS_HEAD;
		c->job = job;
		c->cfd = fd;
		c->ufd = -1;
		c->pipe[0] = c->pipe[1] = -1;
		c->toup = buf;
		c->tocli = buf + PROXY_BUF;
		c->deadline = proxy_now() + PROXY_HEAD_MS;
		return (int)i;
	}
	return -1;
}

/* Whether job J holds its share of the slots, or every slot is taken:
 * its listener is then not watched, and new connections wait in the
 * kernel's backlog. */
static bool
job_full(const struct proxy *px, const struct proxy_job *j)
{
	if (j->slots >= j->spec.max_concurrent + PROXY_JOB_PENDING)
		return true;
	for (unsigned i = 0; i < PROXY_MAX_CONNS; i++)
		if (px->conn[i].state == CS_FREE)
			return false;
	return true;
}

static void
watch_listener(struct proxy *px, unsigned job, bool on)
{
	struct proxy_job *j = &px->job[job];
	struct epoll_event ev = {.events = on ? EPOLLIN : 0,
	    .data.u64 = proxy_ev(PEV_LISTEN, job)};

	if (j->paused == !on || j->lfd < 0)
		return;
	epoll_ctl(px->ep, EPOLL_CTL_MOD, j->lfd, &ev);
	j->paused = !on;
}

void
proxy_accept(struct proxy *px, unsigned job)
{
	struct proxy_job *j = &px->job[job];

	for (int n = 0; n < 64; n++) {
		int fd, slot;

		if (job_full(px, j)) {
			watch_listener(px, job, false);
			return;
		}
		fd = accept4(j->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		slot = conn_new(px, job, fd);
		if (slot < 0) {
			close(fd); /* no memory */
			continue;
		}
		j->slots++;
		proxy_conn_arm(px, (unsigned)slot);
	}
}

/* A slot freed: every paused listener that may take one is watched. */
static void
resume_listeners(struct proxy *px)
{
	for (unsigned i = 0; i < PROXY_MAX_JOBS; i++)
		if (px->job[i].used && px->job[i].paused &&
		    !job_full(px, &px->job[i]))
			watch_listener(px, i, true);
}

void
proxy_conn_close(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	struct proxy_job *j = job_of(px, c);

	if (c->state == CS_FREE)
		return;
	if (c->counted && j->open > 0)
		j->open--;
	if (j->slots > 0)
		j->slots--;
	if (c->connected)
		egress_report_conn(&j->rep, c->host, c->port, c->addr_text,
		    c->bytes_out, c->bytes_in);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	if (c->pipe[0] >= 0) {
		close(c->pipe[0]);
		close(c->pipe[1]);
		px->pipes--;
	}
	if (c->big_pipe)
		px->big_pipes--;
	free(c->toup);
	uint32_t gen = c->gen;
	memset(c, 0, sizeof(*c));
	c->gen = gen + 1;
	c->cfd = c->ufd = -1;
	c->pipe[0] = c->pipe[1] = -1;
	resume_listeners(px);
}

/* ---- Answers ------------------------------------------------------------ */

/* Queues an HTTP answer CODE with a short text body. */
static void
http_answer(struct proxy_conn *c, const char *status, const char *text)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
	    "HTTP/1.1 %s\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	    status, strlen(text));

	if (n > 0 && (size_t)n < sizeof(head) &&
	    proxy_to_client(c, head, (size_t)n))
		proxy_to_client(c, text, strlen(text));
}

/* Flushes what is queued for the client, then closes. */
static void
closing(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];

	if (c->ufd >= 0)
		close(c->ufd);
	c->ufd = -1;
	c->ev_u = 0;
	c->connected = false;
	c->state = CS_CLOSING;
	c->deadline = proxy_now() + CLOSING_MS;
	if (!proxy_flush_client(c)) {
		proxy_conn_close(px, slot);
		return;
	}
	if (proxy_tocli_pending(c) == 0) {
		shutdown(c->cfd, SHUT_WR);
		c->cli_shut = true;
	}
	proxy_conn_arm(px, slot);
}

void
proxy_conn_fail(struct proxy *px, unsigned slot, const char *status,
    enum egress_socks5_rep rep, const char *text)
{
	struct proxy_conn *c = &px->conn[slot];
	uint8_t r[EGRESS_SOCKS5_REPLY_LEN];

	if (c->state == CS_HELLO || c->state == CS_RELAY) {
		c->connected = false; /* refused: not a connection made */
		proxy_conn_close(px, slot); /* the tunnel was answered */
		return;
	}
	if (c->socks && !c->socks_greeted)
		proxy_to_client(c, r, egress_socks5_method_reply(false, r));
	else if (c->socks)
		proxy_to_client(c, r, egress_socks5_reply(rep, r));
	else if (c->http)
		http_answer(c, status, text);
	closing(px, slot);
}

void
proxy_conn_unreachable(struct proxy *px, unsigned slot, const char *status,
    enum egress_socks5_rep rep, const char *text, const char *detail)
{
	struct proxy_conn *c = &px->conn[slot];

	egress_report_refusal(&job_of(px, c)->rep, c->host, strlen(c->host),
	    c->port, EGRESS_REASON_UNREACHABLE, detail);
	proxy_conn_fail(px, slot, status, rep, text);
}

void
proxy_conn_refuse(struct proxy *px, unsigned slot, const char *host,
    size_t hostlen, enum egress_reason reason, const char *detail)
{
	struct proxy_conn *c = &px->conn[slot];
	char text[EGRESS_HOST_BUF + 160];
	bool bad = reason == EGRESS_REASON_BAD_REQUEST;

	egress_report_refusal(&job_of(px, c)->rep, host, hostlen, c->port,
	    reason, detail);
	snprintf(text, sizeof(text),
	    "stockade: refused by the [network] policy: %s:%u: %s%s%s\n",
	    c->host[0] != '\0' ? c->host : "(no valid host)", (unsigned)c->port,
	    egress_reason_name(reason),
	    detail != NULL && detail[0] != '\0' ? ", " : "",
	    detail != NULL ? detail : "");
	proxy_conn_fail(px, slot, bad ? "400 Bad Request" : "403 Forbidden",
	    c->socks_rep != 0 ? (enum egress_socks5_rep)c->socks_rep
			      : EGRESS_SOCKS5_NOT_ALLOWED,
	    text);
}

/* ---- The decision ------------------------------------------------------- */

/* Whether the canonical HOST (of KIND) at PORT is the proxy's own
 * listener: any loopback address, "localhost", or its own address. */
static bool
is_self(const struct proxy_job *j, const char *host, int kind, unsigned port)
{
	struct egress_addr a;

	if (port != j->spec.port)
		return false;
	if (kind == EGRESS_HOST_NAME)
		return strcmp(host, "localhost") == 0 ||
		    strncmp(host, "localhost.", 10) == 0;
	if (egress_addr_parse(host, &a) < 0)
		return true;
	return egress_addr_classify(&a) == EGRESS_ADDR_LOOPBACK ||
	    egress_addr_classify(&a) == EGRESS_ADDR_UNSPECIFIED ||
	    egress_addr_eq(&a, &j->self);
}

const char *
proxy_decision_detail(const struct egress_decision *d)
{
	if (d->reason == EGRESS_REASON_BAD_REQUEST)
		return d->error != 0 ? egress_name_errname(d->error) : "port";
	if (d->reason == EGRESS_REASON_PRIVATE_ADDRESS)
		return d->cls == EGRESS_ADDR_PUBLIC
		    ? "local"
		    : egress_addr_class_name(d->cls);
	return NULL;
}

/* The caps a new connection of J would pass, or NULL. */
static const char *
cap_passed(const struct proxy_job *j)
{
	if (j->made >= j->spec.max_connections)
		return "max_connections";
	if (j->open >= j->spec.max_concurrent)
		return "max_concurrent_connections";
	if (j->bytes_out >= j->spec.max_bytes_out)
		return "max_bytes_out_mb";
	if (j->bytes_in >= j->spec.max_bytes_in)
		return "max_bytes_in_mb";
	return NULL;
}

void
proxy_decide(struct proxy *px, unsigned slot, const char *host, size_t len,
    unsigned port)
{
	struct proxy_conn *c = &px->conn[slot];
	struct proxy_job *j = job_of(px, c);
	struct egress_decision d;
	int kind = egress_host_canon(host, len, c->host, sizeof(c->host));
	const char *cap;

	c->port = (uint16_t)port;
	if (kind < 0) {
		proxy_conn_refuse(px, slot, host, len,
		    EGRESS_REASON_BAD_REQUEST, egress_name_errname(kind));
		return;
	}
	c->host_is_addr = kind != EGRESS_HOST_NAME;
	if (is_self(j, c->host, kind, port)) {
		proxy_conn_refuse(px, slot, host, len,
		    EGRESS_REASON_NOT_ALLOWED, "the proxy itself");
		return;
	}
	if (!egress_decide(&j->spec.rules, host, len, port, &d)) {
		proxy_conn_refuse(px, slot, host, len, d.reason,
		    proxy_decision_detail(&d));
		return;
	}
	if ((cap = cap_passed(j)) != NULL) {
		proxy_conn_refuse(px, slot, host, len, EGRESS_REASON_BUDGET,
		    cap);
		return;
	}
	c->counted = true;
	j->made++;
	j->open++;
	proxy_dial(px, slot);
}

/* ---- Events ------------------------------------------------------------- */

static void
set_events(struct proxy *px, int fd, uint32_t *have, uint32_t want,
    uint64_t data)
{
	struct epoll_event ev = {.events = want, .data.u64 = data};

	if (fd < 0 || (*have & ~0x80000000u) == want)
		return;
	if (*have & 0x80000000u)
		epoll_ctl(px->ep, EPOLL_CTL_MOD, fd, &ev);
	else
		epoll_ctl(px->ep, EPOLL_CTL_ADD, fd, &ev);
	*have = want | 0x80000000u;
}

static uint32_t
client_events(const struct proxy_conn *c)
{
	uint32_t ev = proxy_tocli_pending(c) > 0 ? EPOLLOUT : 0;

	switch (c->state) {
	case CS_HEAD:
	case CS_CLOSING:
		return ev | EPOLLIN;
	case CS_HELLO:
	case CS_RELAY:
		if (!c->cli_eof && c->toup_len < PROXY_BUF &&
		    (c->kind != CK_FORWARD || c->body_left > 0))
			ev |= EPOLLIN;
		return ev;
	case CS_FREE:
	case CS_RESOLVE:
	case CS_CONNECT:
		return ev;
	}
	return ev;
}

static uint32_t
upstream_events(const struct proxy_conn *c)
{
	uint32_t ev = 0;

	if (c->state == CS_CONNECT)
		return EPOLLOUT;
	if (c->state != CS_HELLO && c->state != CS_RELAY)
		return 0;
	if (!c->up_eof && !proxy_tocli_full(c))
		ev |= EPOLLIN;
	if (c->state == CS_RELAY && c->toup_len > 0)
		ev |= EPOLLOUT;
	return ev;
}

void
proxy_conn_arm(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];

	set_events(px, c->cfd, &c->ev_c, client_events(c),
	    proxy_ev(PEV_CLIENT, slot));
	set_events(px, c->ufd, &c->ev_u, upstream_events(c),
	    proxy_ev(PEV_UPSTREAM, slot));
}

/* CS_CLOSING: the answer is out; read and drop until the client ends. */
static void
drain(struct proxy *px, unsigned slot, uint32_t events)
{
	struct proxy_conn *c = &px->conn[slot];
	uint8_t sink[4096];
	ssize_t n;

	if (events & EPOLLOUT) {
		if (!proxy_flush_client(c)) {
			proxy_conn_close(px, slot);
			return;
		}
		if (proxy_tocli_pending(c) == 0 && !c->cli_shut) {
			shutdown(c->cfd, SHUT_WR);
			c->cli_shut = true;
		}
	}
	while ((n = read(c->cfd, sink, sizeof(sink))) > 0)
		;
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
	    (events & (EPOLLERR | EPOLLHUP))) {
		proxy_conn_close(px, slot);
		return;
	}
	proxy_conn_arm(px, slot);
}

void
proxy_conn_event(struct proxy *px, unsigned slot, bool upstream,
    uint32_t events)
{
	struct proxy_conn *c = &px->conn[slot];

	if (slot >= PROXY_MAX_CONNS || c->state == CS_FREE)
		return;
	if (c->state == CS_CLOSING) {
		if (!upstream)
			drain(px, slot, events);
		return;
	}
	if (c->state == CS_HEAD && !upstream) {
		proxy_head_read(px, slot);
		return;
	}
	if (c->state == CS_CONNECT && upstream) {
		proxy_dial_done(px, slot);
		return;
	}
	if (c->state == CS_RESOLVE || c->state == CS_CONNECT) {
		/* The client waits: a SOCKS5 method reply may be queued. */
		if ((events & (EPOLLERR | EPOLLHUP)) || !proxy_flush_client(c))
			proxy_conn_close(px, slot);
		else
			proxy_conn_arm(px, slot);
		return;
	}
	proxy_relay(px, slot, upstream, events);
}

void
proxy_conn_timeouts(struct proxy *px, int64_t now)
{
	for (unsigned i = 0; i < PROXY_MAX_CONNS; i++) {
		struct proxy_conn *c = &px->conn[i];

		if (c->state == CS_FREE || c->deadline > now)
			continue;
		if (c->state == CS_RESOLVE || c->state == CS_CONNECT)
			proxy_conn_unreachable(px, i, "504 Gateway Timeout",
			    EGRESS_SOCKS5_TTL_EXPIRED,
			    "stockade: the host did not answer in time\n",
			    c->state == CS_RESOLVE ? "resolve_timeout"
						   : "connect_timeout");
		else
			proxy_conn_close(px, i);
	}
}
