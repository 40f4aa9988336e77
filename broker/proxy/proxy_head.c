/*
 * proxy_head.c: the request of a client of stockade-proxy (proxy.h):
 * the protocol from its first byte (egress_sniff), then an HTTP head
 * (egress_http_parse) or a SOCKS5 greeting and request, read with the
 * pure parsers of broker/egress/ into the connection's client buffer.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "proxy.h"

/* Bytes a head may take of the buffer: the rest leaves room for the
 * upstream head egress_http_upstream writes in its place. */
#define HEAD_ROOM (PROXY_BUF - 256u)

static void
consume(struct proxy_conn *c, size_t n)
{
	memmove(c->toup, c->toup + n, c->toup_len - n);
	c->toup_len -= n;
}

/* An absolute-form request: the upstream head replaces the client's,
 * followed by the body bytes already read (at most Content-Length). */
static int
forward_head(struct proxy_conn *c, const struct egress_http_req *req)
{
	static char up[EGRESS_HTTP_HEAD_MAX + 64];
	long n = egress_http_upstream(c->toup, req, up, sizeof(up));
	size_t body = c->toup_len - req->head_len;

	if (n < 0)
		return (int)n;
	if (body > req->content_length)
		body = (size_t)req->content_length;
	memmove(c->toup + n, c->toup + req->head_len, body);
	memcpy(c->toup, up, (size_t)n);
	c->toup_len = (size_t)n + body;
	c->body_left = req->content_length - body;
	return 0;
}

static void
http_step(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	static struct egress_http_req req;
	enum egress_why why;
	char host[EGRESS_HOST_MAX + 1];
	enum egress_status st = egress_http_parse(c->toup, c->toup_len, &req,
	    &why);

	if (st == EGRESS_NEED_MORE)
		return;
	if (st == EGRESS_REFUSED) {
		proxy_conn_refuse(px, slot, "", 0, EGRESS_REASON_BAD_REQUEST,
		    egress_why_name(why));
		return;
	}
	memcpy(host, c->toup + req.host.off, req.host.len);
	host[req.host.len] = '\0';
	c->kind = req.form == EGRESS_HTTP_CONNECT ? CK_CONNECT : CK_FORWARD;
	if (c->kind == CK_CONNECT)
		consume(c, req.head_len);
	else if (forward_head(c, &req) < 0) {
		proxy_conn_refuse(px, slot, host, req.host.len,
		    EGRESS_REASON_BAD_REQUEST, "head_too_big");
		return;
	}
	proxy_decide(px, slot, host, req.host.len, req.port);
}

static void
socks_step(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	static struct egress_socks5_req req;
	enum egress_why why;
	enum egress_status st;
	uint8_t r[2];
	size_t used;

	if (!c->socks_greeted) {
		st = egress_socks5_greeting(c->toup, c->toup_len, &used, &why);
		if (st == EGRESS_NEED_MORE)
			return;
		if (st == EGRESS_REFUSED) {
			proxy_conn_refuse(px, slot, "", 0,
			    EGRESS_REASON_BAD_REQUEST, egress_why_name(why));
			return;
		}
		consume(c, used);
		c->socks_greeted = true;
		proxy_to_client(c, r, egress_socks5_method_reply(true, r));
	}
	st = egress_socks5_request(c->toup, c->toup_len, &req, &why);
	if (st == EGRESS_NEED_MORE)
		return;
	c->port = req.port;
	if (st == EGRESS_REFUSED) {
		c->socks_rep = (uint8_t)req.rep;
		proxy_conn_refuse(px, slot, req.host,
		    strnlen(req.host, sizeof(req.host)),
		    EGRESS_REASON_BAD_REQUEST, egress_why_name(why));
		return;
	}
	consume(c, req.consumed);
	c->kind = CK_SOCKS;
	proxy_decide(px, slot, req.host, req.host_len, req.port);
}

/* Runs the parser of the client's protocol over what was read. */
static void
head_step(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];

	switch (egress_sniff(c->toup, c->toup_len)) {
	case EGRESS_PROTO_HTTP:
		c->http = true;
		http_step(px, slot);
		break;
	case EGRESS_PROTO_SOCKS5:
		c->socks = true;
		socks_step(px, slot);
		break;
	case EGRESS_PROTO_OTHER:
		proxy_conn_refuse(px, slot, "", 0, EGRESS_REASON_BAD_REQUEST,
		    c->toup[0] == 4 ? "socks4" : "protocol");
		break;
	case EGRESS_PROTO_UNKNOWN:
		break;
	}
}

void
proxy_head_read(struct proxy *px, unsigned slot)
{
	struct proxy_conn *c = &px->conn[slot];
	ssize_t n;

	if (!proxy_flush_client(c)) { /* a SOCKS5 method reply */
		proxy_conn_close(px, slot);
		return;
	}
	n = read(c->cfd, c->toup + c->toup_len, HEAD_ROOM - c->toup_len);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		proxy_conn_close(px, slot);
		return;
	}
	if (n < 0)
		return;
	c->toup_len += (size_t)n;
	head_step(px, slot);
	if (c->state == CS_HEAD) {
		if (c->toup_len >= HEAD_ROOM || !proxy_flush_client(c)) {
			proxy_conn_close(px, slot); /* a parser's bug */
			return;
		}
		proxy_conn_arm(px, slot);
	}
}
