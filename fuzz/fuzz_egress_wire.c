/*
 * fuzz_egress_wire.c: the egress proxy's wire parsers (broker/egress/,
 * egress_parse.h).
 *
 * Input: a control byte choosing the parser (modulo 3: the HTTP request
 * head; the SOCKS5 greeting, then the request after it; the TLS
 * ClientHello), two bytes of a split point (big-endian, modulo the
 * length + 1), then the bytes a client sends. Properties, each an abort
 * when broken:
 *  - no crash, no read past the bytes given (each run is on a copy of
 *    exactly that many bytes, so AddressSanitizer sees an over-read);
 *  - incremental = whole: the first SPLIT bytes alone answer "need more"
 *    or exactly what the whole input answers (status, why, every field);
 *  - an answer is "done" exactly when no why is given;
 *  - an accepted host (the HTTP target's, the SOCKS5 name, the SNI) is
 *    inside what was read and holds no NUL, CR, LF, '@' or '%';
 *  - an accepted absolute-form request's upstream head
 *    (egress_http_upstream, in head_len + 64 bytes) fits, ends in the
 *    one empty line that ends it, holds no NUL nor bare CR or LF, and
 *    closes the connection: no second request can be in it.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "egress_parse.h"
#include "fuzz.h"

struct outcome {
	enum egress_status st;
	enum egress_why why;
	struct egress_http_req http;
	size_t greeting;
	struct egress_socks5_req socks;
	struct egress_tls_hello tls;
};

/* Runs parser P on a copy of BUF's first LEN bytes into *O. */
static void
run(unsigned p, const uint8_t *buf, size_t len, struct outcome *o)
{
	uint8_t *copy = malloc(len + 1);

	if (copy == NULL)
		fuzz_fail("out of memory");
	memcpy(copy, buf, len);
	memset(o, 0, sizeof(*o));
	if (p == 0) {
		o->st = egress_http_parse(copy, len, &o->http, &o->why);
		if (o->st != EGRESS_DONE)
			memset(&o->http, 0, sizeof(o->http));
	} else if (p == 1) {
		o->st = egress_socks5_greeting(copy, len, &o->greeting,
		    &o->why);
		FUZZ_ASSERT(o->st != EGRESS_DONE || o->greeting <= len);
		if (o->st == EGRESS_DONE)
			o->st = egress_socks5_request(copy + o->greeting,
			    len - o->greeting, &o->socks, &o->why);
		if (o->st == EGRESS_NEED_MORE)
			o->greeting = 0;
	} else {
		o->st = egress_tls_hello(copy, len, &o->tls, &o->why);
	}
	free(copy);
}

static bool
same_span(struct egress_span a, struct egress_span b)
{
	return a.off == b.off && a.len == b.len;
}

static bool
same_http(const struct egress_http_req *a, const struct egress_http_req *b)
{
	size_t i;

	if (a->form != b->form || !same_span(a->host, b->host) ||
	    !same_span(a->target, b->target) || a->port != b->port ||
	    a->host_ipv6 != b->host_ipv6 || a->head_len != b->head_len ||
	    a->content_length != b->content_length || a->nfields != b->nfields)
		return false;
	for (i = 0; i < a->nfields; i++)
		if (a->field[i].drop != b->field[i].drop ||
		    !same_span(a->field[i].value, b->field[i].value))
			return false;
	return true;
}

static bool
same(const struct outcome *a, const struct outcome *b)
{
	return a->st == b->st && a->why == b->why &&
	    same_http(&a->http, &b->http) && a->greeting == b->greeting &&
	    strcmp(a->socks.host, b->socks.host) == 0 &&
	    a->socks.port == b->socks.port &&
	    a->socks.consumed == b->socks.consumed &&
	    a->socks.rep == b->socks.rep && a->tls.kind == b->tls.kind &&
	    strcmp(a->tls.sni, b->tls.sni) == 0 && a->tls.ech == b->tls.ech &&
	    a->tls.wire_len == b->tls.wire_len;
}

/* Aborts if the host H (N bytes) holds a byte no decision may see. */
static void
check_host(const uint8_t *h, size_t n)
{
	size_t i;

	FUZZ_ASSERT(n > 0 && n <= EGRESS_HOST_MAX);
	for (i = 0; i < n; i++)
		FUZZ_ASSERT(h[i] != '\0' && h[i] != '\r' && h[i] != '\n' &&
		    h[i] != '@' && h[i] != '%');
}

/* The upstream head of the accepted absolute-form request in BUF. */
static void
check_upstream(const uint8_t *buf, const struct egress_http_req *req)
{
	size_t size = req->head_len + 64, i;
	char *out = malloc(size);
	long n;

	if (out == NULL)
		fuzz_fail("out of memory");
	n = egress_http_upstream(buf, req, out, size);
	FUZZ_ASSERT(n >= 4);
	FUZZ_ASSERT(memcmp(out + n - 4, "\r\n\r\n", 4) == 0);
	FUZZ_ASSERT(memmem(out, (size_t)n - 2, "\r\n\r\n", 4) == NULL);
	FUZZ_ASSERT(memmem(out, (size_t)n, "\r\nConnection: close\r\n\r\n",
			23) == out + n - 23);
	for (i = 0; i < (size_t)n; i++) {
		FUZZ_ASSERT(out[i] != '\0');
		if (out[i] == '\r')
			FUZZ_ASSERT(i + 1 < (size_t)n && out[i + 1] == '\n');
		if (out[i] == '\n')
			FUZZ_ASSERT(i > 0 && out[i - 1] == '\r');
	}
	free(out);
}

/* What an accepted answer O of parser P on BUF (LEN bytes) promises. */
static void
check_done(unsigned p, const uint8_t *buf, size_t len, const struct outcome *o)
{
	const struct egress_http_req *r = &o->http;

	if (p == 0) {
		FUZZ_ASSERT(r->head_len >= 4 && r->head_len <= len &&
		    r->head_len <= EGRESS_HTTP_HEAD_MAX);
		FUZZ_ASSERT(memcmp(buf + r->head_len - 4, "\r\n\r\n", 4) == 0);
		FUZZ_ASSERT(r->host.off + r->host.len <= r->head_len);
		if (r->host_ipv6)
			FUZZ_ASSERT(memchr(buf + r->host.off, '%',
					r->host.len) == NULL &&
			    memchr(buf + r->host.off, '@', r->host.len) ==
				NULL);
		else
			check_host(buf + r->host.off, r->host.len);
		FUZZ_ASSERT(r->port != 0);
		if (r->form == EGRESS_HTTP_ABSOLUTE)
			check_upstream(buf, r);
	} else if (p == 1) {
		FUZZ_ASSERT(o->greeting + o->socks.consumed <= len);
		FUZZ_ASSERT(strlen(o->socks.host) == o->socks.host_len);
		if (o->socks.atyp == EGRESS_SOCKS5_ATYP_DOMAIN)
			check_host((const uint8_t *)o->socks.host,
			    o->socks.host_len);
		FUZZ_ASSERT(o->socks.port != 0);
	} else {
		FUZZ_ASSERT(o->tls.wire_len <= len);
		FUZZ_ASSERT(strlen(o->tls.sni) == o->tls.sni_len);
		if (o->tls.kind == EGRESS_TLS_SNI)
			check_host((const uint8_t *)o->tls.sni, o->tls.sni_len);
		else
			FUZZ_ASSERT(o->tls.sni_len == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome whole, part;
	unsigned p;
	size_t split;

	if (size < 3)
		return 0;
	p = data[0] % 3;
	split = ((size_t)data[1] << 8 | data[2]) % (size - 3 + 1);
	data += 3;
	size -= 3;
	run(p, data, size, &whole);
	FUZZ_ASSERT(
	    (whole.st == EGRESS_DONE) == (whole.why == EGRESS_WHY_NONE) ||
	    whole.st == EGRESS_NEED_MORE);
	FUZZ_ASSERT(
	    whole.st != EGRESS_NEED_MORE || whole.why == EGRESS_WHY_NONE);
	if (whole.st == EGRESS_DONE)
		check_done(p, data, size, &whole);
	run(p, data, split, &part);
	if (part.st != EGRESS_NEED_MORE && !same(&part, &whole))
		fuzz_fail("split at %zu of %zu: status %d why %s, whole %d %s",
		    split, size, part.st, egress_why_name(part.why), whole.st,
		    egress_why_name(whole.why));
	return 0;
}
