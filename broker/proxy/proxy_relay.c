/*
 * proxy_relay.c: the bytes of a connected connection of stockade-proxy
 * (proxy.h): the TLS check of a tunnel's first bytes, then both
 * directions through one PROXY_BUF buffer each (a side is not read
 * while the other side's buffer is full), counted against the job's
 * caps; half-closes passed on; the end when both directions ended (an
 * absolute-form request: when the response ended). Once relaying, the
 * upstream's bytes go to the client through a pipe with splice(2)
 * (socket to pipe, pipe to socket: no copy through the proxy, which
 * halved a loopback download's throughput; docs/benchmarks.md), counted
 * as they enter the pipe, as read(2)'s were, and at most PROXY_BUF of
 * them in it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "proxy.h"

bool
proxy_to_client(struct proxy_conn *c, const void *data, size_t len)
{
	if (len > PROXY_BUF - c->tocli_len)
		return false;
	memcpy(c->tocli + c->tocli_len, data, len);
	c->tocli_len += len;
	return true;
}

/* Sends what BUF holds (*LEN bytes) on FD; false on an error. Adds the
 * bytes sent to *COUNT when COUNT is not NULL. */
static bool
flush(int fd, uint8_t *buf, size_t *len, uint64_t *count)
{
	while (*len > 0) {
		ssize_t n = send(fd, buf, *len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		memmove(buf, buf + n, *len - (size_t)n);
		*len -= (size_t)n;
		if (count != NULL)
			*count += (uint64_t)n;
	}
	return true;
}

size_t
proxy_tocli_pending(const struct proxy_conn *c)
{
	return c->tocli_len + c->piped;
}

bool
proxy_tocli_full(const struct proxy_conn *c)
{
	return c->pipe_full || c->tocli_len >= PROXY_BUF ||
	    (c->pipe_cap > 0 && c->piped >= c->pipe_cap);
}

bool
proxy_flush_client(struct proxy_conn *c)
{
	if (!flush(c->cfd, c->tocli, &c->tocli_len, NULL))
		return false;
	while (c->tocli_len == 0 && c->piped > 0) {
		ssize_t n = splice(c->pipe[0], NULL, c->cfd, NULL, c->piped,
		    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n <= 0)
			return n < 0 && (errno == EAGAIN || errno == EINTR);
		c->piped -= (size_t)n;
		c->pipe_full = false;
	}
	return true;
}

void
proxy_budget(struct proxy *px, unsigned slot, const char *cap)
{
	struct proxy_conn *c = &px->conn[slot];

	egress_report_refusal(&px->job[c->job].rep, c->host, strlen(c->host),
	    c->port, EGRESS_REASON_BUDGET, cap);
	proxy_flush_client(c); /* what came before, the 200 of a CONNECT */
	proxy_conn_close(px, slot);
}

/* CS_HELLO: the first client bytes of a tunnel. A TLS ClientHello must
 * name the host requested, unless the request named an address. */
static void
hello_check(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	struct egress_tls_hello h;
	enum egress_why why;
	char sni[EGRESS_HOST_BUF], detail[EGRESS_DETAIL_MAX];
	enum egress_status st = egress_tls_hello(c->toup, c->toup_len, &h,
	    &why);

	if (st == EGRESS_NEED_MORE && !c->cli_eof)
		return;
	if (st != EGRESS_DONE) {
		proxy_conn_refuse(px, slot, c->host, strlen(c->host),
		    EGRESS_REASON_BAD_REQUEST,
		    st == EGRESS_REFUSED ? egress_why_name(why)
					 : "tls_truncated");
		return;
	}
	/* A tunnel to a name carries TLS naming that host, nothing else:
	 * plain bytes would let a Host field behind a shared front (a
	 * CDN, a gateway) pick another site than the one decided. A
	 * tunnel to an address allow_address named may carry anything. */
	if (c->host_is_addr ||
	    (h.kind == EGRESS_TLS_SNI &&
		egress_host_canon(h.sni, h.sni_len, sni, sizeof(sni)) > 0 &&
		strcmp(sni, c->host) == 0)) {
		c->state = CS_RELAY;
		c->deadline = proxy_now() + PROXY_IDLE_MS;
		return;
	}
	snprintf(detail, sizeof(detail), "%s%.40s",
	    h.kind == EGRESS_TLS_SNI	      ? "sni="
		: h.kind == EGRESS_TLS_NO_SNI ? "no_sni"
					      : "not_tls",
	    h.kind == EGRESS_TLS_SNI ? h.sni : "");
	proxy_conn_refuse(px, slot, c->host, strlen(c->host),
	    EGRESS_REASON_SNI_MISMATCH, detail);
}

/* Reads the client into toup. Returns false when the connection ended. */
static bool
read_client(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	size_t room = PROXY_BUF - c->toup_len;
	ssize_t n;

	if (c->kind == CK_FORWARD && c->body_left < room)
		room = (size_t)c->body_left;
	if (c->cli_eof || room == 0)
		return true;
	n = read(c->cfd, c->toup + c->toup_len, room);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n < 0) {
		proxy_conn_close(px, slot);
		return false;
	}
	if (n == 0)
		c->cli_eof = true;
	c->toup_len += (size_t)n;
	if (c->kind == CK_FORWARD)
		c->body_left -= (uint64_t)n;
	if (c->state == CS_RELAY) /* a hello is not given more time */
		c->deadline = proxy_now() + PROXY_IDLE_MS;
	return true;
}

/* True when C's upstream bytes go through its pipe: relaying, nothing
 * in tocli before them (the order stays), a pipe made (none while
 * PROXY_MAX_PIPES are; pipe2 may fail: then read and send, as before). */
static bool
use_pipe(struct proxy *px, struct proxy_conn *c)
{
	if (c->state != CS_RELAY || c->tocli_len > 0 || c->no_pipe)
		return false;
	if (c->pipe[0] >= 0)
		return true;
	if (px->pipes >= PROXY_MAX_PIPES)
		return false;
	if (pipe2(c->pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
		c->pipe[0] = c->pipe[1] = -1;
		c->no_pipe = true;
		return false;
	}
	px->pipes++;
	c->pipe_cap = PROXY_PIPE_DEF;
	if (px->big_pipes < PROXY_BIG_PIPES &&
	    fcntl(c->pipe[1], F_SETPIPE_SZ, (int)PROXY_PIPE) >=
		(int)PROXY_PIPE) {
		c->pipe_cap = PROXY_PIPE;
		c->big_pipe = true;
		px->big_pipes++;
	}
	return true;
}

/* Reads the upstream into tocli or the pipe; -1 and errno as read(2).
 * EAGAIN with bytes in the pipe may be a full pipe (its buffers hold
 * less than a page each at worst): reading waits for the client then. */
static ssize_t
upstream_in(struct proxy *px, struct proxy_conn *c)
{
	ssize_t n;

	if (!use_pipe(px, c))
		return read(c->ufd, c->tocli + c->tocli_len,
		    PROXY_BUF - c->tocli_len);
	n = splice(c->ufd, NULL, c->pipe[1], NULL, c->pipe_cap - c->piped,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n < 0 && errno == EAGAIN && c->piped > 0)
		c->pipe_full = true;
	return n;
}

/* Reads the upstream, counted against max_bytes_in. */
static bool
read_upstream(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	struct proxy_job *j = &px->job[c->job];
	bool piped;
	ssize_t n;

	if (c->ufd < 0 || c->up_eof || proxy_tocli_full(c))
		return true;
	piped = use_pipe(px, c);
	n = upstream_in(px, c);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (n < 0) {
		proxy_conn_close(px, slot);
		return false;
	}
	if (n == 0)
		c->up_eof = true;
	if (j->bytes_in + (uint64_t)n > j->spec.max_bytes_in) {
		proxy_budget(px, slot, "max_bytes_in_mb");
		return false;
	}
	j->bytes_in += (uint64_t)n;
	c->bytes_in += (uint64_t)n;
	if (piped)
		c->piped += (size_t)n;
	else
		c->tocli_len += (size_t)n;
	if (c->state == CS_RELAY) /* a hello is not given more time */
		c->deadline = proxy_now() + PROXY_IDLE_MS;
	return true;
}

/* Sends toup upstream, counted against max_bytes_out. */
static bool
write_upstream(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	struct proxy_job *j = &px->job[c->job];
	uint64_t sent = 0;

	if (c->state != CS_RELAY || c->toup_len == 0)
		return true;
	if (j->bytes_out + c->toup_len > j->spec.max_bytes_out) {
		proxy_budget(px, slot, "max_bytes_out_mb");
		return false;
	}
	if (!flush(c->ufd, c->toup, &c->toup_len, &sent)) {
		proxy_conn_close(px, slot);
		return false;
	}
	j->bytes_out += sent;
	c->bytes_out += sent;
	return true;
}

/* Half-closes and the end. Returns false when the connection ended. */
static bool
ends(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	bool out_done = c->kind == CK_FORWARD
	    ? c->body_left == 0 && c->toup_len == 0
	    : c->cli_eof && c->toup_len == 0;

	/* The server ended before the client sent a byte (a banner, then
	 * its close): once the banner is out, the client gets the end. */
	if (c->state == CS_HELLO && c->up_eof && c->toup_len == 0 &&
	    proxy_tocli_pending(c) == 0) {
		proxy_conn_close(px, slot);
		return false;
	}
	if (c->state != CS_RELAY)
		return true;
	if (out_done && c->kind != CK_FORWARD && !c->up_shut) {
		shutdown(c->ufd, SHUT_WR);
		c->up_shut = true;
	}
	if (c->up_eof && proxy_tocli_pending(c) == 0 && !c->cli_shut) {
		shutdown(c->cfd, SHUT_WR);
		c->cli_shut = true;
	}
	if (c->cli_shut && (out_done || c->kind == CK_FORWARD)) {
		proxy_conn_close(px, slot);
		return false;
	}
	return true;
}

void
proxy_relay(struct proxy *px, unsigned slot, bool upstream, uint32_t events)
{
	struct proxy_conn *c = &px->conn[slot];

	/* An error, or a hang-up of a side not read now (its buffer
	 * full): epoll would report it again at once. */
	if ((events & (EPOLLERR | EPOLLHUP)) && !(events & EPOLLIN)) {
		proxy_conn_close(px, slot);
		return;
	}
	if (!read_client(px, slot) || !read_upstream(px, slot))
		return;
	if (c->state == CS_HELLO && c->toup_len > 0)
		hello_check(px, slot);
	else if (c->state == CS_HELLO && c->cli_eof)
		c->state = CS_RELAY; /* the client sent nothing, and ended */
	if (c->state == CS_FREE || c->state == CS_CLOSING)
		return;
	if (!write_upstream(px, slot))
		return;
	if (!proxy_flush_client(c)) {
		proxy_conn_close(px, slot);
		return;
	}
	if (!ends(px, slot))
		return;
	(void)upstream;
	proxy_conn_arm(px, slot);
}
