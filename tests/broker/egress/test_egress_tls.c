/*
 * test_egress_tls.c: the ClientHello reader of the egress proxy
 * (broker/egress/egress_tls.c): real hellos of OpenSSL
 * (tests/broker/egress/hellos/, gen_hellos.py) whole, split at every
 * byte and reframed into many records; one made here on this machine;
 * hand-made hellos for each refusal.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress_test.h"

#define SNI "sni.example.org"

/* Runs S (N bytes) whole and at every split; returns the why, *H
 * filled. */
static enum egress_why
run(const uint8_t *s, size_t n, struct egress_tls_hello *h)
{
	enum egress_why why;
	enum egress_status st = egress_tls_hello(s, n, h, &why);

	cr_assert_eq(egress_check_splits(P_TLS, s, n), st);
	cr_assert_neq(st, EGRESS_NEED_MORE);
	return why;
}

static void
expect_fixture(const char *name, enum egress_tls_kind kind)
{
	struct egress_tls_hello h;
	size_t n;
	uint8_t *b = egress_fixture(name, &n);

	cr_assert_eq(run(b, n, &h), EGRESS_WHY_NONE, "%s", name);
	cr_assert_eq(h.kind, kind, "%s: kind %d", name, h.kind);
	cr_assert_str_eq(h.sni, kind == EGRESS_TLS_SNI ? SNI : "");
	cr_assert_not(h.ech);
	cr_assert_eq(h.wire_len, n, "%s: %zu of %zu", name, h.wire_len, n);
	free(b);
}

Test(egress_tls, openssl_hellos)
{
	expect_fixture("tls13-sni.bin", EGRESS_TLS_SNI);
	expect_fixture("tls12-sni.bin", EGRESS_TLS_SNI);
	expect_fixture("tls13-nosni.bin", EGRESS_TLS_NO_SNI);
	expect_fixture("tls12-nosni.bin", EGRESS_TLS_NO_SNI);
	expect_fixture("tls13-grease.bin", EGRESS_TLS_SNI);
}

/* A hello from this machine's OpenSSL now (gen_hellos.py --one). */
Test(egress_tls, fresh_hello_from_this_machine)
{
	const char *root = getenv("STOCKADE_SOURCE_ROOT");
	struct egress_tls_hello h;
	uint8_t b[EGRESS_TLS_WIRE_MAX];
	char cmd[4096];
	size_t n;
	FILE *p;

	cr_assert(root && *root);
	snprintf(cmd, sizeof(cmd),
	    "/usr/bin/python3 %s/tests/broker/egress/gen_hellos.py --one "
	    "fresh.example.net",
	    root);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	n = fread(b, 1, sizeof(b), p);
	cr_assert_eq(pclose(p), 0);
	cr_assert(n > 0);
	cr_assert_eq(run(b, n, &h), EGRESS_WHY_NONE);
	cr_assert_eq(h.kind, EGRESS_TLS_SNI);
	cr_assert_str_eq(h.sni, "fresh.example.net");
}

Test(egress_tls, hello_split_over_records)
{
	static const size_t chunks[] = {1000, 300, 64, 17};
	uint8_t out[EGRESS_TLS_WIRE_MAX + 4096];
	struct egress_tls_hello h;
	size_t n, m, i, need;
	uint8_t *b = egress_fixture("tls13-sni.bin", &n);

	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		m = egress_reframe(b, n, chunks[i], out);
		need = (n - 5 + chunks[i] - 1) / chunks[i];
		if (need > EGRESS_TLS_RECORDS_MAX) {
			cr_assert_eq(run(out, m, &h), EGRESS_WHY_TLS_TOO_BIG,
			    "%zu records", need);
			continue;
		}
		cr_assert_eq(run(out, m, &h), EGRESS_WHY_NONE, "chunk %zu",
		    chunks[i]);
		cr_assert_str_eq(h.sni, SNI);
		cr_assert_eq(h.wire_len, m);
	}
	/* The largest number of records that may carry it. */
	m = egress_reframe(b, n,
	    (n - 5 + EGRESS_TLS_RECORDS_MAX - 1) / EGRESS_TLS_RECORDS_MAX, out);
	cr_assert_eq(run(out, m, &h), EGRESS_WHY_NONE);
	cr_assert_str_eq(h.sni, SNI);
	free(b);
}

Test(egress_tls, not_tls)
{
	struct egress_tls_hello h;

	cr_assert_eq(run((const uint8_t *)"GET / HTTP/1.1\r\n", 16, &h), 0);
	cr_assert_eq(h.kind, EGRESS_TLS_NOT_TLS);
	cr_assert_eq(run((const uint8_t *)"\x16\x02", 2, &h), 0);
	cr_assert_eq(h.kind, EGRESS_TLS_NOT_TLS);
	cr_assert_eq(run((const uint8_t *)"\x16\x03\x09", 3, &h), 0);
	cr_assert_eq(h.kind, EGRESS_TLS_NOT_TLS);
	/* SSLv2-compatible CLIENT-HELLO (RFC 5246 appendix E.2). */
	cr_assert_eq(run((const uint8_t *)"\x80\x2e\x01\x03\x01", 5, &h), 0);
	cr_assert_eq(h.kind, EGRESS_TLS_SSLV2);
	cr_assert_eq(run((const uint8_t *)"\x80\x2e\x02", 3, &h), 0);
	cr_assert_eq(h.kind, EGRESS_TLS_NOT_TLS);
}

/* A hand-made hello with extension block EXT (N bytes): its why. */
static enum egress_why
made(const uint8_t *ext, size_t n, struct egress_tls_hello *h)
{
	uint8_t out[EGRESS_TLS_WIRE_MAX];

	return run(out, egress_mk_hello(ext, n, out), h);
}

Test(egress_tls, server_name_rules)
{
	struct egress_tls_hello h;
	uint8_t ext[1024];
	size_t n;

	n = egress_sni_ext("a.example", 9, ext);
	cr_assert_eq(made(ext, n, &h), EGRESS_WHY_NONE);
	cr_assert_str_eq(h.sni, "a.example");
	n += egress_sni_ext("b.example", 9, ext + n);
	cr_assert_eq(made(ext, n, &h), EGRESS_WHY_TLS_TWO_SNI);
	n = egress_sni_ext("", 0, ext);
	cr_assert_eq(made(ext, n, &h), EGRESS_WHY_EMPTY_HOST);
	n = egress_sni_ext("a.example\0evil", 14, ext);
	cr_assert_eq(made(ext, n, &h), EGRESS_WHY_NUL);
	n = egress_sni_ext("a%2eexample", 11, ext);
	cr_assert_eq(made(ext, n, &h), EGRESS_WHY_PERCENT);
	/* Two host_name entries in one list: "a.ex" then "b.ex". */
	memcpy(ext,
	    "\0\0\0\x10\0\x0e\0\0\x04"
	    "a.ex"
	    "\0\0\x04"
	    "b.ex",
	    20);
	cr_assert_eq(made(ext, 20, &h), EGRESS_WHY_TLS_TWO_NAMES);
	/* Name type 1 (none is defined but host_name). */
	memcpy(ext,
	    "\0\0\0\x09\0\x07\1\0\x04"
	    "a.ex",
	    13);
	cr_assert_eq(made(ext, 13, &h), EGRESS_WHY_TLS_NAME_TYPE);
	/* An empty list, a list longer than its extension. */
	cr_assert_eq(made((const uint8_t *)"\0\0\0\2\0\0", 6, &h),
	    EGRESS_WHY_TLS_LENGTH);
	cr_assert_eq(made((const uint8_t *)"\0\0\0\x09\0\x08\0\0\x04"
					   "a.ex",
			 13, &h),
	    EGRESS_WHY_TLS_LENGTH);
	/* A name longer than its list. */
	cr_assert_eq(made((const uint8_t *)"\0\0\0\x09\0\x07\0\0\x05"
					   "a.ex",
			 13, &h),
	    EGRESS_WHY_TLS_LENGTH);
}

Test(egress_tls, ech_noted)
{
	struct egress_tls_hello h;
	uint8_t ext[256];
	size_t n;

	memcpy(ext, "\xfe\x0d\0\3\0\1\2", 7);
	n = 7 + egress_sni_ext("public.example", 14, ext + 7);
	cr_assert_eq(made(ext, n, &h), EGRESS_WHY_NONE);
	cr_assert(h.ech);
	cr_assert_str_eq(h.sni, "public.example");
	memcpy(ext + n, "\xfe\x0d\0\0", 4);
	cr_assert_eq(made(ext, n + 4, &h), EGRESS_WHY_TLS_TWO_ECH);
}

Test(egress_tls, lengths_and_records)
{
	struct egress_tls_hello h;
	uint8_t out[EGRESS_TLS_WIRE_MAX], ext[64];
	size_t n, m;

	/* An extension longer than the block; the block shorter than the
	 * hello; no extensions at all (TLS 1.2 may). */
	cr_assert_eq(made((const uint8_t *)"\0\x17\0\5\0", 5, &h),
	    EGRESS_WHY_TLS_LENGTH);
	n = egress_sni_ext("a.example", 9, ext);
	m = egress_mk_hello(ext, n, out);
	out[m - n - 1]++; /* the extension block's length */
	cr_assert_eq(run(out, m, &h), EGRESS_WHY_TLS_LENGTH);
	m = egress_mk_hello(ext, 0, out) - 2;
	out[4] -= 2;
	out[8] -= 2;
	cr_assert_eq(run(out, m, &h), EGRESS_WHY_NONE);
	cr_assert_eq(h.kind, EGRESS_TLS_NO_SNI);
	/* A handshake that is no ClientHello. */
	m = egress_mk_hello(ext, n, out);
	out[5] = 2;
	cr_assert_eq(run(out, m, &h), EGRESS_WHY_TLS_NOT_HELLO);
	/* A record of length 0, or over 2^14. */
	cr_assert_eq(run((const uint8_t *)"\x16\x03\x01\0\0", 5, &h),
	    EGRESS_WHY_TLS_RECORD);
	cr_assert_eq(run((const uint8_t *)"\x16\x03\x01\x40\x01", 5, &h),
	    EGRESS_WHY_TLS_RECORD);
	/* A handshake message over the bound. */
	cr_assert_eq(run((const uint8_t *)"\x16\x03\x01\x40\0\1\0\x40\0", 9,
			 &h),
	    EGRESS_WHY_TLS_TOO_BIG);
	/* The second record of a split hello is an alert. */
	m = egress_reframe(out, egress_mk_hello(ext, n, out), 16, out + 4096);
	out[4096 + 5 + 16] = 0x15;
	cr_assert_eq(run(out + 4096, m, &h), EGRESS_WHY_TLS_RECORD);
}
