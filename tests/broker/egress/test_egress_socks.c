/*
 * test_egress_socks.c: SOCKS5 as the egress proxy reads it
 * (broker/egress/egress_socks.c; RFC 1928): the greeting, CONNECT to each
 * address type, every refusal with the reply code it sends, the reply
 * bytes, every split of every sample.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "egress_test.h"

/* Runs the greeting, then the request, on S (N bytes); checks every
 * split; returns the why with *O filled. */
static enum egress_why
run(const void *s, size_t n, struct egress_outcome *o)
{
	egress_run(P_SOCKS, s, n, o);
	cr_assert_eq(egress_check_splits(P_SOCKS, s, n), o->st);
	cr_assert_neq(o->st, EGRESS_NEED_MORE);
	return o->why;
}

#define RUN(lit, o) run((lit), sizeof(lit) - 1, (o))

Test(egress_socks, greeting)
{
	enum egress_why why;
	size_t used;

	cr_assert_eq(egress_socks5_greeting((const uint8_t *)"\5\1\0", 3, &used,
			 &why),
	    EGRESS_DONE);
	cr_assert_eq(used, 3);
	cr_assert_eq(egress_socks5_greeting((const uint8_t *)"\5\3\2\1\0", 5,
			 &used, &why),
	    EGRESS_DONE);
	cr_assert_eq(used, 5);
	cr_assert_eq(egress_socks5_greeting((const uint8_t *)"\5\1\2", 3, &used,
			 &why),
	    EGRESS_REFUSED);
	cr_assert_eq(why, EGRESS_WHY_SOCKS_NO_METHOD);
	cr_assert_eq(egress_socks5_greeting((const uint8_t *)"\5\0", 2, &used,
			 &why),
	    EGRESS_REFUSED);
	cr_assert_eq(why, EGRESS_WHY_SOCKS_NO_METHOD);
	cr_assert_eq(egress_socks5_greeting((const uint8_t *)"\5\2\0", 3, &used,
			 &why),
	    EGRESS_NEED_MORE);
	cr_assert_eq(egress_socks5_greeting((const uint8_t *)"G", 1, &used,
			 &why),
	    EGRESS_REFUSED);
	cr_assert_eq(why, EGRESS_WHY_SOCKS_VERSION);
}

Test(egress_socks, connect_domain_ipv4_ipv6)
{
	struct egress_outcome o;

	cr_assert_eq(RUN("\5\1\0\5\1\0\3\13example.com\1\273", &o), 0);
	cr_assert_eq(o.greeting_len, 3);
	cr_assert_eq(o.socks.atyp, EGRESS_SOCKS5_ATYP_DOMAIN);
	cr_assert_str_eq(o.socks.host, "example.com");
	cr_assert_eq(o.socks.host_len, 11);
	cr_assert_eq(o.socks.port, 443);
	cr_assert_eq(o.socks.consumed, 18);
	cr_assert_eq(RUN("\5\1\0\5\1\0\1\177\0\0\1\0\120", &o), 0);
	cr_assert_str_eq(o.socks.host, "127.0.0.1");
	cr_assert_eq(o.socks.port, 80);
	cr_assert_eq(o.socks.consumed, 10);
	cr_assert_eq(memcmp(o.socks.addr, "\177\0\0\1", 4), 0);
	cr_assert_eq(RUN("\5\1\0\5\1\0\4\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1\1\273",
			 &o),
	    0);
	cr_assert_str_eq(o.socks.host, "::1");
	cr_assert_eq(o.socks.consumed, 22);
}

Test(egress_socks, commands_and_types_refused_with_their_reply)
{
	struct egress_outcome o;

	cr_assert_eq(RUN("\5\1\0\5\2\0\1\0\0\0\0\0\0", &o),
	    EGRESS_WHY_SOCKS_COMMAND); /* BIND */
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_COMMAND_NOT_SUPPORTED);
	cr_assert_eq(RUN("\5\1\0\5\3\0\1\0\0\0\0\0\0", &o),
	    EGRESS_WHY_SOCKS_COMMAND); /* UDP ASSOCIATE */
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_COMMAND_NOT_SUPPORTED);
	cr_assert_eq(RUN("\5\1\0\5\11", &o), EGRESS_WHY_SOCKS_COMMAND);
	cr_assert_eq(RUN("\5\1\0\5\1\1", &o), EGRESS_WHY_SOCKS_RSV);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_GENERAL_FAILURE);
	cr_assert_eq(RUN("\5\1\0\5\1\0\2", &o), EGRESS_WHY_SOCKS_ATYP);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_ATYP_NOT_SUPPORTED);
	cr_assert_eq(RUN("\5\1\0\4", &o), EGRESS_WHY_SOCKS_VERSION);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_GENERAL_FAILURE);
	cr_assert_eq(RUN("\5\1\0\5\1\0\1\1\2\3\4\0\0", &o),
	    EGRESS_WHY_BAD_PORT);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_NOT_ALLOWED);
}

Test(egress_socks, domain_names_refused_at_parse)
{
	struct egress_outcome o;

	cr_assert_eq(RUN("\5\1\0\5\1\0\3\0\1\273", &o), EGRESS_WHY_EMPTY_HOST);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_NOT_ALLOWED);
	cr_assert_eq(RUN("\5\1\0\5\1\0\3\3a@b\1\273", &o), EGRESS_WHY_USERINFO);
	cr_assert_eq(RUN("\5\1\0\5\1\0\3\3a%b\1\273", &o), EGRESS_WHY_PERCENT);
	cr_assert_eq(RUN("\5\1\0\5\1\0\3\3a b\1\273", &o),
	    EGRESS_WHY_HOST_BYTE);
	cr_assert_eq(RUN("\5\1\0\5\1\0\3\3a\r\n\1\273", &o),
	    EGRESS_WHY_HOST_BYTE);
	cr_assert_eq(RUN("\5\1\0\5\1\0\3\3a:1\1\273", &o),
	    EGRESS_WHY_HOST_BYTE);
	cr_assert_eq(RUN("\5\1\0\5\1\0\3\3\303\274b\1\273", &o),
	    EGRESS_WHY_HOST_BYTE);
	cr_assert_eq(RUN("\5\1\0\5\1\0\3\3a\0b\1\273", &o), EGRESS_WHY_NUL);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_NOT_ALLOWED);
}

Test(egress_socks, longest_name)
{
	uint8_t b[3 + 5 + 255 + 2] = {5, 1, 0, 5, 1, 0, 3, 255};
	struct egress_outcome o;

	memset(b + 8, 'a', 255);
	b[8 + 255] = 0;
	b[8 + 256] = 80;
	cr_assert_eq(run(b, sizeof(b), &o), EGRESS_WHY_NONE);
	cr_assert_eq(o.socks.host_len, 255);
	cr_assert_eq(strlen(o.socks.host), 255);
}

Test(egress_socks, replies)
{
	uint8_t out[EGRESS_SOCKS5_REPLY_LEN];
	int rep;

	cr_assert_eq(egress_socks5_method_reply(true, out), 2);
	cr_assert_eq(memcmp(out, "\5\0", 2), 0);
	cr_assert_eq(egress_socks5_method_reply(false, out), 2);
	cr_assert_eq(memcmp(out, "\5\377", 2), 0);
	for (rep = EGRESS_SOCKS5_SUCCEEDED;
	     rep <= EGRESS_SOCKS5_ATYP_NOT_SUPPORTED; rep++) {
		uint8_t want[EGRESS_SOCKS5_REPLY_LEN] = {5, (uint8_t)rep, 0, 1};

		cr_assert_eq(egress_socks5_reply((enum egress_socks5_rep)rep,
				 out),
		    EGRESS_SOCKS5_REPLY_LEN);
		cr_assert_eq(memcmp(out, want, sizeof(want)), 0, "rep %d", rep);
	}
}
