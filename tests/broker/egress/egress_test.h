/*
 * egress_test.h: what the tests of broker/egress/ share
 * (egress_test.c): running each parser on a whole buffer and on every
 * split of it, the fixtures, hand-made ClientHellos.
 */
#ifndef STOCKADE_EGRESS_TEST_H
#define STOCKADE_EGRESS_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "egress_parse.h"

/* What one parser answered, comparable with memcmp-free equality
 * (egress_outcome_eq). */
struct egress_outcome {
	enum egress_status st;
	enum egress_why why;
	struct egress_http_req http;
	size_t greeting_len;
	struct egress_socks5_req socks;
	struct egress_tls_hello tls;
};

enum egress_parser { P_HTTP, P_SOCKS, P_TLS };

/* Runs parser P on BUF (LEN bytes) into *O. For P_SOCKS: the greeting,
 * then, when it is done, the request after it. */
void egress_run(enum egress_parser p, const uint8_t *buf, size_t len,
    struct egress_outcome *o);

/*
 * Asserts that every split of BUF into a first read of K bytes (0 <= K <=
 * LEN) and the rest gets the whole buffer's answer: the prefix answers
 * EGRESS_NEED_MORE or exactly what the whole answers. Returns the
 * whole's status.
 */
enum egress_status egress_check_splits(enum egress_parser p, const uint8_t *buf,
    size_t len);

/* A fixture of tests/broker/egress/hellos/ (malloc'd; *LEN its size). */
uint8_t *egress_fixture(const char *name, size_t *len);

/* A server_name extension holding one host_name NAME (N bytes) into
 * OUT; returns its length. */
size_t egress_sni_ext(const char *name, size_t n, uint8_t *out);

/* A minimal ClientHello in one record, its extension block EXT (N
 * bytes, verbatim), into OUT; returns its length. */
size_t egress_mk_hello(const uint8_t *ext, size_t n, uint8_t *out);

/* The handshake message of the one-record hello IN (LEN bytes) reframed
 * into records of at most CHUNK bytes, into OUT; returns its length. */
size_t egress_reframe(const uint8_t *in, size_t len, size_t chunk,
    uint8_t *out);

#endif
