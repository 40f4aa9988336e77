/*
 * egress_test.c: the helpers of egress_test.h.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_test.h"

void
egress_run(enum egress_parser p, const uint8_t *buf, size_t len,
    struct egress_outcome *o)
{
	memset(o, 0, sizeof(*o));
	switch (p) {
	case P_HTTP:
		o->st = egress_http_parse(buf, len, &o->http, &o->why);
		if (o->st != EGRESS_DONE)
			memset(&o->http, 0, sizeof(o->http));
		break;
	case P_SOCKS:
		o->st = egress_socks5_greeting(buf, len, &o->greeting_len,
		    &o->why);
		if (o->st == EGRESS_DONE)
			o->st = egress_socks5_request(buf + o->greeting_len,
			    len - o->greeting_len, &o->socks, &o->why);
		break;
	case P_TLS:
		o->st = egress_tls_hello(buf, len, &o->tls, &o->why);
		break;
	}
}

/* Field by field: the structs have padding. */
static void
assert_same(const struct egress_outcome *a, const struct egress_outcome *b,
    size_t k)
{
	size_t i;

	cr_assert_eq(a->st, b->st, "split at %zu: status %d, whole %d", k,
	    a->st, b->st);
	cr_assert_eq(a->why, b->why, "split at %zu: %s, whole %s", k,
	    egress_why_name(a->why), egress_why_name(b->why));
	cr_assert_eq(a->http.form, b->http.form);
	cr_assert_eq(a->http.host.off, b->http.host.off);
	cr_assert_eq(a->http.host.len, b->http.host.len);
	cr_assert_eq(a->http.port, b->http.port);
	cr_assert_eq(a->http.head_len, b->http.head_len);
	cr_assert_eq(a->http.target.off, b->http.target.off);
	cr_assert_eq(a->http.target.len, b->http.target.len);
	cr_assert_eq(a->http.nfields, b->http.nfields);
	for (i = 0; i < a->http.nfields; i++)
		cr_assert_eq(a->http.field[i].drop, b->http.field[i].drop);
	cr_assert_eq(a->greeting_len, b->greeting_len);
	cr_assert_str_eq(a->socks.host, b->socks.host);
	cr_assert_eq(a->socks.port, b->socks.port);
	cr_assert_eq(a->socks.consumed, b->socks.consumed);
	cr_assert_eq(a->socks.rep, b->socks.rep);
	cr_assert_eq(a->tls.kind, b->tls.kind);
	cr_assert_str_eq(a->tls.sni, b->tls.sni);
	cr_assert_eq(a->tls.ech, b->tls.ech);
	cr_assert_eq(a->tls.wire_len, b->tls.wire_len);
}

enum egress_status
egress_check_splits(enum egress_parser p, const uint8_t *buf, size_t len)
{
	/* Long inputs (the bounds' tests) at a stride, and at their end. */
	size_t k = 0, step = len > 4096 ? len / 512 + 1 : 1;
	struct egress_outcome whole, part;
	uint8_t *copy;

	egress_run(p, buf, len, &whole);
	for (;;) {
		/* A copy of exactly K bytes: a read past them is ASan's. */
		copy = malloc(k + 1);
		cr_assert_not_null(copy);
		memcpy(copy, buf, k);
		egress_run(p, copy, k, &part);
		free(copy);
		if (part.st != EGRESS_NEED_MORE)
			assert_same(&part, &whole, k);
		if (k == len)
			break;
		k = k + step < len ? k + step : len;
	}
	return whole.st;
}

uint8_t *
egress_fixture(const char *name, size_t *len)
{
	const char *root = getenv("STOCKADE_SOURCE_ROOT");
	char path[4096];
	uint8_t *buf;
	FILE *f;
	long n;

	cr_assert(root && *root, "STOCKADE_SOURCE_ROOT is not set");
	snprintf(path, sizeof(path), "%s/tests/broker/egress/hellos/%s", root,
	    name);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	cr_assert(n > 0 && n < 65536, "%s: %ld bytes", path, n);
	rewind(f);
	buf = malloc((size_t)n);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static size_t
put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

size_t
egress_sni_ext(const char *name, size_t n, uint8_t *out)
{
	size_t at = 0;

	at += put16(out + at, 0x0000);
	at += put16(out + at, n + 5);
	at += put16(out + at, n + 3);
	out[at++] = 0x00;
	at += put16(out + at, n);
	memcpy(out + at, name, n);
	return at + n;
}

size_t
egress_mk_hello(const uint8_t *ext, size_t n, uint8_t *out)
{
	size_t body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + n, at = 0;

	out[at++] = 0x16;
	at += put16(out + at, 0x0301);
	at += put16(out + at, 4 + body);
	out[at++] = 0x01;
	out[at++] = (uint8_t)(body >> 16);
	at += put16(out + at, body & 0xffff);
	at += put16(out + at, 0x0303);
	memset(out + at, 0x5a, 32);
	at += 32;
	out[at++] = 0; /* legacy_session_id */
	at += put16(out + at, 2);
	at += put16(out + at, 0x1301); /* TLS_AES_128_GCM_SHA256 */
	out[at++] = 1;
	out[at++] = 0; /* null compression */
	at += put16(out + at, n);
	memcpy(out + at, ext, n);
	return at + n;
}

size_t
egress_reframe(const uint8_t *in, size_t len, size_t chunk, uint8_t *out)
{
	size_t at = 0, i, k;

	for (i = 5; i < len; i += k) {
		k = len - i < chunk ? len - i : chunk;
		out[at++] = 0x16;
		at += put16(out + at, 0x0301);
		at += put16(out + at, k);
		memcpy(out + at, in + i, k);
		at += k;
	}
	return at;
}
