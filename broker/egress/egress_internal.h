/*
 * egress_internal.h: what the parsers of broker/egress/ share and do not
 * export (egress_parse.h is the interface).
 */
#ifndef STOCKADE_EGRESS_INTERNAL_H
#define STOCKADE_EGRESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_parse.h"

/* An authority "host[:port]" as egress_authority_parse reads it. */
struct egress_authority {
	struct egress_span host; /* an IPv6 literal without its brackets */
	bool ipv6;
	bool has_port;
	uint16_t port; /* 0 unless has_port */
};

/*
 * Reads BUF[OFF, OFF + LEN) as RFC 3986 section 3.2's authority without
 * userinfo: a host name (egress_host_why) or "[IPv6]" (inet_pton), then
 * ":port" or nothing. Fills *A; returns EGRESS_WHY_NONE or the rule it
 * breaks: EGRESS_WHY_USERINFO or EGRESS_WHY_PERCENT for the first '@'
 * or '%' anywhere in it (before any other rule: "user:pw@host" is
 * userinfo, not a bad port), EGRESS_WHY_BAD_IPV6, egress_host_why's,
 * EGRESS_WHY_EMPTY_PORT, EGRESS_WHY_BAD_PORT (not 1..65535, a sign, a
 * leading zero, more than 5 digits).
 */
enum egress_why egress_authority_parse(const uint8_t *buf, size_t off,
    size_t len, struct egress_authority *a);

/* Whether BUF[SPAN] equals the NUL-terminated LIT, ASCII case
 * ignored. */
bool egress_span_is(const uint8_t *buf, struct egress_span span,
    const char *lit);

/* Whether BUF[A] and BUF[B] are equal, ASCII case ignored. */
bool egress_span_eq(const uint8_t *buf, struct egress_span a,
    struct egress_span b);

/* Whether C is a tchar of RFC 9110 section 5.6.2 (a token's byte). */
bool egress_tchar(uint8_t c);

#endif
