/*
 * proxy_dial.c: from an allowed request to a connected upstream
 * (proxy.h): a name resolved with c-ares (A and AAAA, DNS only: the
 * channel's lookups are "b", /etc/hosts is not read), every address it
 * gives checked (egress_check_address: a name that resolves to a
 * private address, or one of the host's own, is refused; this defeats
 * DNS rebinding), the first that passes dialled and never re-resolved;
 * then the answer the client waits for.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "proxy.h"

/* ---- c-ares on the loop's epoll ------------------------------------------ */

static void
sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct proxy *px = data;
	struct epoll_event ev = {.events = (readable ? EPOLLIN : 0u) |
		(writable ? EPOLLOUT : 0u),
	    .data.u64 = proxy_ev(PEV_ARES, (uint32_t)fd)};

	if (ev.events == 0)
		epoll_ctl(px->ep, EPOLL_CTL_DEL, fd, NULL);
	else if (epoll_ctl(px->ep, EPOLL_CTL_MOD, fd, &ev) < 0 &&
	    errno == ENOENT)
		epoll_ctl(px->ep, EPOLL_CTL_ADD, fd, &ev);
}

int
proxy_dns_init(struct proxy *px, const char *server)
{
	static char lookups[] = "b"; /* DNS only: no /etc/hosts */
	struct ares_options opt;
	int e = ares_library_init(ARES_LIB_INIT_ALL);

	if (e != ARES_SUCCESS)
		return -e;
	memset(&opt, 0, sizeof(opt));
	opt.lookups = lookups;
	opt.sock_state_cb = sock_state;
	opt.sock_state_cb_data = px;
	e = ares_init_options(&px->ares, &opt,
	    ARES_OPT_LOOKUPS | ARES_OPT_SOCK_STATE_CB);
	if (e == ARES_SUCCESS && server != NULL)
		e = ares_set_servers_ports_csv(px->ares, server);
	return e == ARES_SUCCESS ? 0 : -e;
}

void
proxy_dns_event(struct proxy *px, int fd, uint32_t events)
{
	ares_process_fd(px->ares,
	    events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? fd : ARES_SOCKET_BAD,
	    events & EPOLLOUT ? fd : ARES_SOCKET_BAD);
}

void
proxy_dns_timeouts(struct proxy *px)
{
	ares_process_fd(px->ares, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

int
proxy_dns_timeout_ms(struct proxy *px)
{
	struct timeval tv, *t = ares_timeout(px->ares, NULL, &tv);

	if (t == NULL)
		return -1;
	return (int)(t->tv_sec * 1000 + (t->tv_usec + 999) / 1000);
}

/* ---- Connecting ---------------------------------------------------------- */

static void
connect_to(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	int fd = socket(c->addr.ss_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd >= 0 &&
	    (connect(fd, (struct sockaddr *)&c->addr, c->addrlen) == 0 ||
		errno == EINPROGRESS)) {
		c->ufd = fd;
		c->state = CS_CONNECT;
		proxy_conn_arm(px, slot);
		return;
	}
	int e = errno;

	if (fd >= 0)
		close(fd);
	proxy_conn_unreachable(px, slot, "502 Bad Gateway",
	    EGRESS_SOCKS5_HOST_UNREACHABLE,
	    "stockade: cannot connect to the host\n",
	    strerrorname_np(e) != NULL ? strerrorname_np(e) : "connect");
}

/* Keeps SA (LEN bytes) at PORT as SLOT's address to dial. */
static void
set_addr(struct proxy_conn *c, const struct sockaddr *sa, socklen_t len)
{
	struct egress_addr a;

	memcpy(&c->addr, sa, len);
	c->addrlen = len;
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)&c->addr)->sin_port = htons(c->port);
	else
		((struct sockaddr_in6 *)&c->addr)->sin6_port = htons(c->port);
	if (egress_addr_from_sockaddr(sa, &a) < 0 ||
	    egress_addr_format(&a, c->addr_text, sizeof(c->addr_text)) < 0)
		c->addr_text[0] = '\0';
}

/* The first address of RES that C's job may dial at C's port, or NULL
 * with *D the first refusal. */
static const struct ares_addrinfo_node *
pick(struct proxy *px, struct proxy_conn *c, const struct ares_addrinfo *res,
    struct egress_decision *d)
{
	struct egress_decision first = {.reason = EGRESS_REASON_NOT_ALLOWED};
	bool seen = false;

	for (const struct ares_addrinfo_node *n = res ? res->nodes : NULL;
	     n != NULL; n = n->ai_next) {
		if (n->ai_family != AF_INET && n->ai_family != AF_INET6)
			continue;
		if (egress_check_address(&px->job[c->job].spec.rules,
			n->ai_addr, c->port, &px->local, d))
			return n;
		if (!seen)
			first = *d;
		seen = true;
	}
	*d = first;
	return NULL;
}

/* The answer of c-ares for connection ARG (slot and generation). */
static void
resolved(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	struct proxy *px = NULL;
	uintptr_t v = (uintptr_t)arg;
	unsigned slot = (unsigned)(v & 0xffff);
	const struct ares_addrinfo_node *n;
	struct egress_decision d;

	(void)timeouts;
	px = proxy_self();
	if (px == NULL || slot >= PROXY_MAX_CONNS ||
	    px->conn[slot].gen != (uint32_t)(v >> 16) ||
	    px->conn[slot].state != CS_RESOLVE) {
		ares_freeaddrinfo(res);
		return;
	}
	struct proxy_conn *c = &px->conn[slot];

	if (status != ARES_SUCCESS || res == NULL || res->nodes == NULL) {
		ares_freeaddrinfo(res);
		proxy_conn_unreachable(px, slot, "502 Bad Gateway",
		    EGRESS_SOCKS5_HOST_UNREACHABLE,
		    "stockade: the host name does not resolve\n",
		    status == ARES_ENOTFOUND	 ? "no_such_name"
			: status == ARES_SUCCESS ? "no_address"
						 : "resolve_failed");
		return;
	}
	n = pick(px, c, res, &d);
	if (n == NULL) {
		ares_freeaddrinfo(res);
		proxy_conn_refuse(px, slot, c->host, strlen(c->host), d.reason,
		    proxy_decision_detail(&d));
		return;
	}
	set_addr(c, n->ai_addr, n->ai_addrlen);
	ares_freeaddrinfo(res);
	connect_to(px, slot);
}

/* An address request: its canonical text into C's address. */
static int
literal_addr(struct proxy_conn *c)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
	struct sockaddr_in s4 = {.sin_family = AF_INET};

	if (inet_pton(AF_INET, c->host, &s4.sin_addr) == 1)
		set_addr(c, (struct sockaddr *)&s4, sizeof(s4));
	else if (inet_pton(AF_INET6, c->host, &s6.sin6_addr) == 1)
		set_addr(c, (struct sockaddr *)&s6, sizeof(s6));
	else
		return -EINVAL;
	return 0;
}

void
proxy_dial(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	struct ares_addrinfo_hints hints = {
	    .ai_flags = ARES_AI_NOSORT,
	    .ai_family = AF_UNSPEC,
	    .ai_socktype = SOCK_STREAM,
	};
	uintptr_t arg = (uintptr_t)c->gen << 16 | slot;
	char fqdn[EGRESS_HOST_BUF + 1];

	c->deadline = proxy_now() + PROXY_DIAL_MS;
	if (c->host_is_addr) {
		if (literal_addr(c) < 0)
			proxy_conn_close(px, slot);
		else
			connect_to(px, slot);
		return;
	}
	/* With its root dot: the name as the rules matched it, never one
	 * resolv.conf's search list makes of it. */
	snprintf(fqdn, sizeof(fqdn), "%s.", c->host);
	c->state = CS_RESOLVE;
	proxy_conn_arm(px, slot);
	ares_getaddrinfo(px->ares, fqdn, NULL, &hints, resolved, (void *)arg);
}

/* The answer a client waits for once its upstream is connected. */
static void
answer_connected(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t r[EGRESS_SOCKS5_REPLY_LEN];

	c->connected = true;
	c->deadline = proxy_now() + PROXY_HEAD_MS;
	if (c->kind == CK_FORWARD) {
		c->state = CS_RELAY;
		c->deadline = proxy_now() + PROXY_IDLE_MS;
		return;
	}
	if (c->kind == CK_CONNECT)
		proxy_to_client(c, ok, sizeof(ok) - 1);
	else
		proxy_to_client(c, r,
		    egress_socks5_reply(EGRESS_SOCKS5_SUCCEEDED, r));
	c->state = CS_HELLO;
}

void
proxy_dial_done(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return;
	if (err != 0) {
		proxy_conn_unreachable(px, slot, "502 Bad Gateway",
		    err == ECONNREFUSED ? EGRESS_SOCKS5_CONNECTION_REFUSED
					: EGRESS_SOCKS5_HOST_UNREACHABLE,
		    "stockade: cannot connect to the host\n",
		    strerrorname_np(err) != NULL ? strerrorname_np(err)
						 : "connect");
		return;
	}
	answer_connected(px, slot);
	proxy_relay(px, slot, false, EPOLLOUT);
}
