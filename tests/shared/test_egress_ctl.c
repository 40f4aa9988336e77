/*
 * test_egress_ctl.c: the broker<->proxy bodies and the job's network
 * report (shared/egress_ctl.c; issue 25): round trips, every malformed
 * body refused, the report's merging and its bounds.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "egress_ctl.h"

static void
add_rule(struct egress_rules *rules, enum egress_rule_kind kind,
    const char *text)
{
	struct egress_rule r;

	cr_assert_eq(egress_rule_parse(kind, text, &r), 0, "%s", text);
	cr_assert_eq(egress_rules_add(rules, &r), 0);
}

static struct egress_job
sample_job(void)
{
	struct egress_job job = {
	    .job_id = 0x0102030405060708ull,
	    .max_bytes_out = 1ull << 40,
	    .max_bytes_in = 12345,
	    .max_connections = 100,
	    .max_concurrent = 7,
	    .port = 3128,
	};

	add_rule(&job.rules, EGRESS_RULE_ALLOW, "*.example.org:8443");
	add_rule(&job.rules, EGRESS_RULE_ALLOW, "deb.debian.org");
	add_rule(&job.rules, EGRESS_RULE_ALLOW_ADDRESS, "[fd00::]/8:80-90");
	add_rule(&job.rules, EGRESS_RULE_ALLOW_ADDRESS, "127.0.0.1:8080");
	add_rule(&job.rules, EGRESS_RULE_DENY, "evil.example.org");
	return job;
}

static long
encode_sample(uint8_t *out, size_t size)
{
	struct egress_job job = sample_job();
	long n = egress_job_encode(&job, out, size);

	egress_job_clear(&job);
	return n;
}

Test(egress_ctl, job_round_trip)
{
	struct egress_job job = sample_job(), back = {0};
	uint8_t body[4096];
	long n = egress_job_encode(&job, body, sizeof(body));

	cr_assert_gt(n, 0);
	cr_assert_eq(egress_job_decode(body, (size_t)n, &back), 0);
	cr_assert_eq(back.job_id, job.job_id);
	cr_assert_eq(back.max_bytes_out, job.max_bytes_out);
	cr_assert_eq(back.max_bytes_in, job.max_bytes_in);
	cr_assert_eq(back.max_connections, job.max_connections);
	cr_assert_eq(back.max_concurrent, job.max_concurrent);
	cr_assert_eq(back.port, job.port);
	cr_assert_eq(back.rules.n, job.rules.n);
	for (size_t i = 0; i < job.rules.n; i++)
		cr_assert(egress_rule_eq(&back.rules.v[i], &job.rules.v[i]),
		    "rule %zu", i);
	egress_job_clear(&job);
	egress_job_clear(&back);
	cr_assert_null(back.rules.v);
}

Test(egress_ctl, job_no_rules)
{
	struct egress_job job = {.job_id = 1, .port = 1}, back = {0};
	uint8_t body[64];
	long n = egress_job_encode(&job, body, sizeof(body));

	cr_assert_eq(n, 8 * 3 + 4 * 2 + 2 * 2);
	cr_assert_eq(egress_job_decode(body, (size_t)n, &back), 0);
	cr_assert_eq(back.rules.n, 0);
}

Test(egress_ctl, job_encode_short_buffer)
{
	uint8_t body[4096];
	long n = encode_sample(body, sizeof(body));

	cr_assert_gt(n, 0);
	for (size_t size = 0; size < (size_t)n; size++)
		cr_assert_eq(encode_sample(body, size), -ENOBUFS, "%zu", size);
}

Test(egress_ctl, job_encode_bad_rule)
{
	struct egress_job job = sample_job();
	uint8_t body[4096];

	job.rules.v[0].ports.lo = 9; /* lo > hi */
	job.rules.v[0].ports.hi = 8;
	cr_assert_eq(egress_job_encode(&job, body, sizeof(body)), -EINVAL);
	egress_job_clear(&job);
}

/* Every proper prefix of a good body is malformed. */
Test(egress_ctl, job_truncated)
{
	uint8_t body[4096];
	long n = encode_sample(body, sizeof(body));

	for (size_t len = 0; len < (size_t)n; len++) {
		struct egress_job back = {0};

		cr_assert_eq(egress_job_decode(body, len, &back), -EBADMSG,
		    "%zu", len);
		cr_assert_null(back.rules.v);
		cr_assert_eq(back.job_id, 0);
	}
}

Test(egress_ctl, job_trailing_byte)
{
	uint8_t body[4096];
	long n = encode_sample(body, sizeof(body));
	struct egress_job back = {0};

	body[n] = 0;
	cr_assert_eq(egress_job_decode(body, (size_t)n + 1, &back), -EBADMSG);
	cr_assert_null(back.rules.v);
}

/* Offsets in the body: the port at 32, the count at 34, the first
 * rule's kind at 36 and its text at 37. */
Test(egress_ctl, job_bad_fields)
{
	uint8_t body[4096];
	long n = encode_sample(body, sizeof(body));
	struct egress_job back = {0};

	cr_assert_str_eq((const char *)body + 37, "*.example.org:8443");
	body[32] = body[33] = 0;
	cr_assert_eq(egress_job_decode(body, (size_t)n, &back), -EINVAL);
	n = encode_sample(body, sizeof(body));
	body[34] = 1; /* 257 rules */
	body[35] = 1;
	cr_assert_eq(egress_job_decode(body, (size_t)n, &back), -E2BIG);
	n = encode_sample(body, sizeof(body));
	body[36] = 3; /* no such kind */
	cr_assert_eq(egress_job_decode(body, (size_t)n, &back), -EINVAL);
	n = encode_sample(body, sizeof(body));
	body[37] = '@'; /* not a rule */
	cr_assert_eq(egress_job_decode(body, (size_t)n, &back), -EINVAL);
	n = encode_sample(body, sizeof(body));
	body[36] = EGRESS_RULE_ALLOW_ADDRESS; /* a name as an address */
	cr_assert_eq(egress_job_decode(body, (size_t)n, &back), -EINVAL);
	cr_assert_null(back.rules.v);
}

/* A rule text longer than any rule, without its NUL in reach. */
Test(egress_ctl, job_rule_without_nul)
{
	uint8_t body[1024] = {0};
	struct egress_job back = {0};
	size_t n = 36;

	body[32] = 1; /* port 1 */
	body[34] = 1; /* one rule */
	body[n++] = EGRESS_RULE_ALLOW;
	memset(body + n, 'a', EGRESS_RULE_BUF + 10);
	n += EGRESS_RULE_BUF + 10;
	body[n++] = '\0';
	cr_assert_eq(egress_job_decode(body, n, &back), -EINVAL);
	cr_assert_eq(egress_job_decode(body, n - 1, &back), -EINVAL);
	cr_assert_eq(egress_job_decode(body, 36 + 5, &back), -EBADMSG);
}

/* ---- The report ---------------------------------------------------------- */

static void
fill_report(struct egress_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->job_id = 42;
	egress_report_conn(rep, "deb.debian.org", 443, "203.0.113.80", 10,
	    2000);
	egress_report_conn(rep, "deb.debian.org", 443, "203.0.113.81", 5, 7);
	egress_report_conn(rep, "127.0.0.1", 8080, "127.0.0.1", 1, 1);
	egress_report_refusal(rep, "evil.org", 8, 443,
	    EGRESS_REASON_NOT_ALLOWED, NULL);
	egress_report_refusal(rep, "a\0b c", 5, 80, EGRESS_REASON_BAD_REQUEST,
	    "nul");
	egress_report_refusal(rep, "10.0.0.1", 8, 53,
	    EGRESS_REASON_DIRECT_CONNECT, "udp");
	egress_report_refusal(rep, "evil.org", 8, 443,
	    EGRESS_REASON_NOT_ALLOWED, NULL);
}

Test(egress_ctl, report_merges)
{
	struct egress_report rep;

	fill_report(&rep);
	cr_assert_eq(rep.connections, 3);
	cr_assert_eq(rep.bytes_out, 16);
	cr_assert_eq(rep.bytes_in, 2008);
	cr_assert_eq(rep.nconn, 2);
	cr_assert_eq(rep.conn[0].count, 2);
	cr_assert_eq(rep.conn[0].bytes_in, 2007);
	cr_assert_str_eq(rep.conn[0].address, "203.0.113.81");
	cr_assert_eq(rep.refusals, 4);
	cr_assert_eq(rep.nrefusal, 3);
	cr_assert_eq(rep.refusal[0].count, 2);
	cr_assert_str_eq(rep.refusal[1].host, "a\\x00b\\x20c");
	cr_assert_str_eq(rep.refusal[1].detail, "nul");
	cr_assert_str_eq(rep.refusal[2].detail, "udp");
	cr_assert_not(rep.truncated);
}

Test(egress_ctl, report_printable_cut)
{
	struct egress_report rep = {0};
	char host[600];

	memset(host, '\n', sizeof(host));
	egress_report_refusal(&rep, host, sizeof(host), 1,
	    EGRESS_REASON_BAD_REQUEST, "crlf");
	/* 63 whole escapes of 4 bytes fit in 253 characters. */
	cr_assert_eq(strlen(rep.refusal[0].host), 63 * 4);
	cr_assert_eq(strncmp(rep.refusal[0].host, "\\x0a\\x0a", 8), 0);
}

Test(egress_ctl, report_full_lists)
{
	struct egress_report rep = {0};
	char host[32];

	for (unsigned i = 0; i < EGRESS_REPORT_MAX + 3; i++) {
		snprintf(host, sizeof(host), "h%u.example", i);
		egress_report_conn(&rep, host, 443, "203.0.113.1", 1, 2);
		egress_report_refusal(&rep, host, strlen(host), 80,
		    EGRESS_REASON_NOT_ALLOWED, NULL);
	}
	cr_assert_eq(rep.nconn, EGRESS_REPORT_MAX);
	cr_assert_eq(rep.nrefusal, EGRESS_REPORT_MAX);
	cr_assert_eq(rep.connections, EGRESS_REPORT_MAX + 3);
	cr_assert_eq(rep.bytes_in, 2 * (EGRESS_REPORT_MAX + 3));
	cr_assert_eq(rep.refusals, EGRESS_REPORT_MAX + 3);
	cr_assert(rep.truncated);
}

Test(egress_ctl, report_round_trip)
{
	struct egress_report rep, back;
	static uint8_t body[EGRESS_REPORT_WIRE_MAX];
	long n;

	fill_report(&rep);
	rep.proxy_failed = true;
	n = egress_report_encode(&rep, body, sizeof(body));
	cr_assert_gt(n, 0);
	cr_assert_eq(egress_report_decode(body, (size_t)n, &back), 0);
	cr_assert_eq(memcmp(&rep, &back, sizeof(rep)), 0);
	cr_assert_eq(egress_report_encode(&rep, body, (size_t)n - 1), -ENOBUFS);
}

/* A full report fits in EGRESS_REPORT_WIRE_MAX. */
Test(egress_ctl, report_wire_max)
{
	static struct egress_report rep;
	static uint8_t body[EGRESS_REPORT_WIRE_MAX];
	char host[EGRESS_HOST_BUF];

	memset(host, 'x', sizeof(host));
	for (unsigned i = 0; i < EGRESS_REPORT_MAX; i++) {
		host[0] = (char)('A' + i);
		egress_report_conn(&rep, host, 1,
		    "ffff:ffff:ffff:ffff:ffff:ffff:"
		    "255.255.255.255",
		    1, 1);
		egress_report_refusal(&rep, host, sizeof(host), 1,
		    EGRESS_REASON_BUDGET, "max_concurrent_connections");
	}
	cr_assert_eq(rep.nconn, EGRESS_REPORT_MAX);
	cr_assert_eq(rep.nrefusal, EGRESS_REPORT_MAX);
	cr_assert_gt(egress_report_encode(&rep, body, sizeof(body)), 0);
}

Test(egress_ctl, report_bad_bodies)
{
	struct egress_report rep, back;
	static uint8_t body[EGRESS_REPORT_WIRE_MAX];
	/* the head is 50 bytes; the first conn's host field follows */
	size_t head = 8 * 5 + 4 * 2 + 2,
	       conn = EGRESS_HOST_BUF + 2 + INET6_ADDRSTRLEN + 4 + 8 + 8;
	long n;

	fill_report(&rep);
	n = egress_report_encode(&rep, body, sizeof(body));
	for (size_t len = 0; len < (size_t)n; len++)
		cr_assert_eq(egress_report_decode(body, len, &back), -EBADMSG);
	cr_assert_eq(egress_report_decode(body, (size_t)n + 1, &back),
	    -EBADMSG);
	body[40] = EGRESS_REPORT_MAX + 1; /* nconn */
	cr_assert_eq(egress_report_decode(body, (size_t)n, &back), -EBADMSG);
	body[40] = 2;
	body[48] = 2; /* truncated */
	cr_assert_eq(egress_report_decode(body, (size_t)n, &back), -EBADMSG);
	body[48] = 0;
	memset(body + head, 'x', EGRESS_HOST_BUF); /* no NUL in the host */
	cr_assert_eq(egress_report_decode(body, (size_t)n, &back), -EBADMSG);
	n = egress_report_encode(&rep, body, sizeof(body));
	body[head + 2 * conn + EGRESS_HOST_BUF + 2] = EGRESS_REASON_LAST + 1;
	cr_assert_eq(egress_report_decode(body, (size_t)n, &back), -EINVAL);
	cr_assert_eq(back.nconn, 0);
}
