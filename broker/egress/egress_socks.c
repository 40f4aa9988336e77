/*
 * egress_socks.c: SOCKS5 as the egress proxy serves it (egress_parse.h;
 * RFC 1928): the greeting, a CONNECT request, the replies. Every field
 * is decided as soon as its bytes are in, in wire order, so a split
 * request gets the same answer as the whole of it.
 */
#include <arpa/inet.h>
#include <string.h>

#include "egress_parse.h"

enum egress_status
egress_socks5_greeting(const uint8_t *buf, size_t len, size_t *consumed,
    enum egress_why *why)
{
	size_t n;

	*consumed = 0;
	*why = EGRESS_WHY_NONE;
	if (len < 1)
		return EGRESS_NEED_MORE;
	if (buf[0] != 0x05) {
		*why = buf[0] == 0x04 ? EGRESS_WHY_SOCKS4
				      : EGRESS_WHY_SOCKS_VERSION;
		return EGRESS_REFUSED;
	}
	if (len < 2)
		return EGRESS_NEED_MORE;
	if ((n = buf[1]) == 0) {
		*why = EGRESS_WHY_SOCKS_NO_METHOD;
		return EGRESS_REFUSED;
	}
	if (len < 2 + n)
		return EGRESS_NEED_MORE;
	if (memchr(buf + 2, 0x00, n) == NULL) {
		*why = EGRESS_WHY_SOCKS_NO_METHOD;
		return EGRESS_REFUSED;
	}
	*consumed = 2 + n;
	return EGRESS_DONE;
}

/* Refuses with WHY, REP the reply code to send. */
static enum egress_status
refuse(struct egress_socks5_req *req, enum egress_why *why, enum egress_why w,
    enum egress_socks5_rep rep)
{
	*why = w;
	req->rep = rep;
	return EGRESS_REFUSED;
}

/* The first four bytes of a request, as far as LEN has them: VER 5, CMD
 * CONNECT (1), RSV 0, a known ATYP (RFC 1928 section 4). */
static enum egress_status
request_header(const uint8_t *buf, size_t len, struct egress_socks5_req *req,
    enum egress_why *why)
{
	if (len < 1)
		return EGRESS_NEED_MORE;
	if (buf[0] != 0x05)
		return refuse(req, why, EGRESS_WHY_SOCKS_VERSION,
		    EGRESS_SOCKS5_GENERAL_FAILURE);
	if (len < 2)
		return EGRESS_NEED_MORE;
	if (buf[1] != 0x01)
		return refuse(req, why, EGRESS_WHY_SOCKS_COMMAND,
		    EGRESS_SOCKS5_COMMAND_NOT_SUPPORTED);
	if (len < 3)
		return EGRESS_NEED_MORE;
	if (buf[2] != 0x00)
		return refuse(req, why, EGRESS_WHY_SOCKS_RSV,
		    EGRESS_SOCKS5_GENERAL_FAILURE);
	if (len < 4)
		return EGRESS_NEED_MORE;
	if (buf[3] != EGRESS_SOCKS5_ATYP_IPV4 &&
	    buf[3] != EGRESS_SOCKS5_ATYP_DOMAIN &&
	    buf[3] != EGRESS_SOCKS5_ATYP_IPV6)
		return refuse(req, why, EGRESS_WHY_SOCKS_ATYP,
		    EGRESS_SOCKS5_ATYP_NOT_SUPPORTED);
	req->atyp = buf[3];
	return EGRESS_DONE;
}

/* DST.ADDR of a domain name at BUF + 4: its length byte, then the name,
 * which egress_host_why must accept. *END gets the offset after it. */
static enum egress_status
request_domain(const uint8_t *buf, size_t len, struct egress_socks5_req *req,
    enum egress_why *why, size_t *end)
{
	enum egress_why w;
	size_t n;

	if (len < 5)
		return EGRESS_NEED_MORE;
	if ((n = buf[4]) == 0)
		return refuse(req, why, EGRESS_WHY_EMPTY_HOST,
		    EGRESS_SOCKS5_NOT_ALLOWED);
	if (len < 5 + n)
		return EGRESS_NEED_MORE;
	if ((w = egress_host_why(buf + 5, n)) != EGRESS_WHY_NONE)
		return refuse(req, why, w, EGRESS_SOCKS5_NOT_ALLOWED);
	memcpy(req->host, buf + 5, n);
	req->host[n] = '\0';
	req->host_len = n;
	*end = 5 + n;
	return EGRESS_DONE;
}

/* DST.ADDR of an IPv4 or IPv6 address at BUF + 4, read into req->addr
 * and written as text into req->host. *END gets the offset after it. */
static enum egress_status
request_address(const uint8_t *buf, size_t len, struct egress_socks5_req *req,
    size_t *end)
{
	bool v4 = req->atyp == EGRESS_SOCKS5_ATYP_IPV4;
	size_t n = v4 ? 4 : 16;

	if (len < 4 + n)
		return EGRESS_NEED_MORE;
	memcpy(req->addr, buf + 4, n);
	/* Cannot fail: the buffer holds INET6_ADDRSTRLEN. */
	inet_ntop(v4 ? AF_INET : AF_INET6, req->addr, req->host,
	    sizeof(req->host));
	req->host_len = strlen(req->host);
	*end = 4 + n;
	return EGRESS_DONE;
}

enum egress_status
egress_socks5_request(const uint8_t *buf, size_t len,
    struct egress_socks5_req *req, enum egress_why *why)
{
	enum egress_status st;
	size_t end = 0;

	memset(req, 0, sizeof(*req));
	*why = EGRESS_WHY_NONE;
	if ((st = request_header(buf, len, req, why)) != EGRESS_DONE)
		return st;
	if (req->atyp == EGRESS_SOCKS5_ATYP_DOMAIN)
		st = request_domain(buf, len, req, why, &end);
	else
		st = request_address(buf, len, req, &end);
	if (st != EGRESS_DONE)
		return st;
	if (len < end + 2)
		return EGRESS_NEED_MORE;
	req->port = (uint16_t)(buf[end] << 8 | buf[end + 1]);
	if (req->port == 0)
		return refuse(req, why, EGRESS_WHY_BAD_PORT,
		    EGRESS_SOCKS5_NOT_ALLOWED);
	req->consumed = end + 2;
	return EGRESS_DONE;
}

size_t
egress_socks5_method_reply(bool ok, uint8_t out[2])
{
	out[0] = 0x05;
	out[1] = ok ? 0x00 : 0xff;
	return 2;
}

size_t
egress_socks5_reply(enum egress_socks5_rep rep,
    uint8_t out[EGRESS_SOCKS5_REPLY_LEN])
{
	memset(out, 0, EGRESS_SOCKS5_REPLY_LEN);
	out[0] = 0x05;
	out[1] = (uint8_t)rep;
	out[3] = EGRESS_SOCKS5_ATYP_IPV4;
	return EGRESS_SOCKS5_REPLY_LEN;
}
