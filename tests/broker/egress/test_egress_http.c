/*
 * test_egress_http.c: the HTTP request head parser of the egress proxy
 * (broker/egress/egress_http.c, egress_http_parse and
 * egress_http_upstream): what it accepts, each refusal by its name, the
 * bounds at their edges, every split of every sample.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "egress_test.h"

/* Parses S (N bytes), checks every split, and returns the why (NONE
 * when accepted) with *REQ filled. */
static enum egress_why
parse_n(const char *s, size_t n, struct egress_http_req *req)
{
	enum egress_why why;
	enum egress_status st;

	st = egress_http_parse((const uint8_t *)s, n, req, &why);
	cr_assert_eq(egress_check_splits(P_HTTP, (const uint8_t *)s, n), st);
	cr_assert_neq(st, EGRESS_NEED_MORE, "\"%.*s\": need more", (int)n, s);
	cr_assert_eq(st == EGRESS_DONE, why == EGRESS_WHY_NONE);
	return why;
}

static enum egress_why
parse(const char *s, struct egress_http_req *req)
{
	return parse_n(s, strlen(s), req);
}

#define REFUSED(s, w)                                              \
	do {                                                       \
		struct egress_http_req r_;                         \
		enum egress_why got_ = parse((s), &r_);            \
		cr_assert_eq(got_, (w), "\"%s\": %s, not %s", (s), \
		    egress_why_name(got_), egress_why_name(w));    \
	} while (0)

/* Asserts that BUF[SP] is the string LIT. */
#define SPAN_EQ(buf, sp, lit)                                      \
	cr_assert((sp).len == strlen(lit) &&                       \
		memcmp((buf) + (sp).off, (lit), strlen(lit)) == 0, \
	    "\"%.*s\", not \"%s\"", (int)(sp).len, (buf) + (sp).off, (lit))

Test(egress_http, connect_authority_form)
{
	const char *s = "CONNECT example.com:443 HTTP/1.1\r\n"
			"Host: example.com:443\r\nUser-Agent: curl\r\n\r\n";
	struct egress_http_req r;

	cr_assert_eq(parse(s, &r), EGRESS_WHY_NONE);
	cr_assert_eq(r.form, EGRESS_HTTP_CONNECT);
	SPAN_EQ(s, r.method, "CONNECT");
	SPAN_EQ(s, r.host, "example.com");
	cr_assert_not(r.host_ipv6);
	cr_assert_eq(r.port, 443);
	cr_assert_eq(r.minor, 1);
	cr_assert_eq(r.head_len, strlen(s));
	cr_assert_eq(r.nfields, 2);
	/* Host without a port on CONNECT: the same host is enough. */
	cr_assert_eq(parse("CONNECT a.example:8443 HTTP/1.0\r\n"
			   "Host: A.Example\r\n\r\n",
			 &r),
	    EGRESS_WHY_NONE);
	cr_assert_eq(r.port, 8443);
	cr_assert_eq(r.minor, 0);
}

Test(egress_http, connect_ipv6_literal)
{
	const char *s = "CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n";
	struct egress_http_req r;

	cr_assert_eq(parse(s, &r), EGRESS_WHY_NONE);
	SPAN_EQ(s, r.host, "2001:db8::1");
	cr_assert(r.host_ipv6);
	cr_assert_eq(r.port, 443);
	cr_assert_eq(parse("CONNECT [::ffff:127.0.0.1]:80 HTTP/1.1\r\n\r\n",
			 &r),
	    EGRESS_WHY_NONE);
	REFUSED("CONNECT [::1]443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_IPV6);
	REFUSED("CONNECT [::g]:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_IPV6);
	REFUSED("CONNECT [::1:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_IPV6);
	REFUSED("CONNECT []:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_IPV6);
	REFUSED("CONNECT [v1.x]:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_IPV6);
	REFUSED("CONNECT [1.2.3.4]:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_IPV6);
	/* A zone identifier is percent-encoding (RFC 6874). */
	REFUSED("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_PERCENT);
	REFUSED("CONNECT ::1:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_EMPTY_HOST);
}

Test(egress_http, connect_port_rules)
{
	struct egress_http_req r;

	cr_assert_eq(parse("CONNECT h:1 HTTP/1.1\r\n\r\n", &r), 0);
	cr_assert_eq(r.port, 1);
	cr_assert_eq(parse("CONNECT h:65535 HTTP/1.1\r\n\r\n", &r), 0);
	cr_assert_eq(r.port, 65535);
	REFUSED("CONNECT h HTTP/1.1\r\n\r\n", EGRESS_WHY_MISSING_PORT);
	REFUSED("CONNECT h: HTTP/1.1\r\n\r\n", EGRESS_WHY_EMPTY_PORT);
	REFUSED("CONNECT h:0 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:65536 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:+443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:-1 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:0443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:44a HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:100000 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:443:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	REFUSED("CONNECT h:0x1bb HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_PORT);
	/* A method is case-sensitive: "connect" asks for absolute-form. */
	REFUSED("connect h:443 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_SCHEME);
}

Test(egress_http, absolute_form_rewritten_upstream)
{
	const char *s = "GET http://example.com/a/b?q=1 HTTP/1.1\r\n"
			"Host: example.com\r\n"
			"User-Agent: pip/23\r\n"
			"Proxy-Authorization: Basic Zm9vOmJhcg==\r\n"
			"Proxy-Connection: keep-alive\r\n"
			"Connection: keep-alive, X-Hop\r\n"
			"X-Hop: 1\r\n"
			"Keep-Alive: timeout=5\r\n"
			"Upgrade: h2c\r\n"
			"TE: trailers\r\n"
			"Accept:  */* \t\r\n\r\n";
	const char *want = "GET /a/b?q=1 HTTP/1.1\r\nHost: example.com\r\n"
			   "User-Agent: pip/23\r\nAccept: */*\r\n"
			   "Connection: close\r\n\r\n";
	struct egress_http_req r;
	char out[EGRESS_HTTP_HEAD_MAX + 64];
	long n;

	cr_assert_eq(parse(s, &r), EGRESS_WHY_NONE);
	cr_assert_eq(r.form, EGRESS_HTTP_ABSOLUTE);
	SPAN_EQ(s, r.host, "example.com");
	cr_assert_eq(r.port, 80);
	SPAN_EQ(s, r.target, "/a/b?q=1");
	n = egress_http_upstream((const uint8_t *)s, &r, out, r.head_len + 64);
	cr_assert_eq(n, (long)strlen(want), "%ld: %.*s", n, (int)n, out);
	cr_assert_eq(memcmp(out, want, (size_t)n), 0, "%.*s", (int)n, out);
	cr_assert_eq(egress_http_upstream((const uint8_t *)s, &r, out, 10),
	    -ENOSPC);
}

Test(egress_http, absolute_form_port_and_empty_path)
{
	struct egress_http_req r;
	char out[256];
	long n;
	const char *s = "HEAD HTTP://Example.COM:8080 HTTP/1.0\r\n\r\n";
	const char *q = "GET http://e.example?x=1 HTTP/1.1\r\n\r\n";
	const char *want = "HEAD / HTTP/1.1\r\nHost: Example.COM:8080\r\n"
			   "Connection: close\r\n\r\n";

	cr_assert_eq(parse(s, &r), EGRESS_WHY_NONE);
	cr_assert_eq(r.port, 8080);
	n = egress_http_upstream((const uint8_t *)s, &r, out, sizeof(out));
	cr_assert_eq(n, (long)strlen(want), "%.*s", (int)n, out);
	cr_assert_eq(memcmp(out, want, strlen(want)), 0);
	cr_assert_eq(parse(q, &r), EGRESS_WHY_NONE);
	n = egress_http_upstream((const uint8_t *)q, &r, out, sizeof(out));
	cr_assert_eq(memcmp(out, "GET /?x=1 HTTP/1.1\r\n", 20), 0);
	cr_assert_eq(parse("GET http://[::1]:8000/x HTTP/1.1\r\n"
			   "Host: [::1]:8000\r\n\r\n",
			 &r),
	    EGRESS_WHY_NONE);
	cr_assert(r.host_ipv6);
	cr_assert_eq(r.port, 8000);
}

Test(egress_http, upstream_only_for_absolute_form)
{
	const char *s = "CONNECT h:443 HTTP/1.1\r\n\r\n";
	struct egress_http_req r;
	char out[256];

	cr_assert_eq(parse(s, &r), EGRESS_WHY_NONE);
	cr_assert_eq(egress_http_upstream((const uint8_t *)s, &r, out,
			 sizeof(out)),
	    -EINVAL);
}

Test(egress_http, forms_without_a_host_refused)
{
	REFUSED("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n",
	    EGRESS_WHY_ORIGIN_FORM);
	REFUSED("OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n",
	    EGRESS_WHY_ORIGIN_FORM);
	REFUSED("GET https://example.com/ HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_HTTPS_URI);
	REFUSED("GET HTTPS://example.com/ HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_HTTPS_URI);
	REFUSED("GET ftp://example.com/ HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_BAD_SCHEME);
	REFUSED("GET example.com:80 HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_SCHEME);
	REFUSED("GET http:/example.com/ HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_BAD_TARGET);
	REFUSED("GET http://example.com/#x HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_BAD_TARGET);
	REFUSED("GET http://example.com/\x80 HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_BAD_TARGET);
	REFUSED("GET http:///x HTTP/1.1\r\n\r\n", EGRESS_WHY_EMPTY_HOST);
	REFUSED("GET http://exa mple.com/ HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_BAD_REQUEST_LINE);
}

Test(egress_http, request_line_rules)
{
	REFUSED("\r\nGET http://h/ HTTP/1.1\r\n\r\n",
	    EGRESS_WHY_BAD_REQUEST_LINE);
	REFUSED("GET  http://h/ HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_REQUEST_LINE);
	REFUSED(" GET http://h/ HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_REQUEST_LINE);
	REFUSED("GET\thttp://h/ HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_REQUEST_LINE);
	REFUSED("GE(T http://h/ HTTP/1.1\r\n\r\n", EGRESS_WHY_BAD_REQUEST_LINE);
	REFUSED("GET http://h/ HTTP/1.1 \r\n\r\n", EGRESS_WHY_BAD_REQUEST_LINE);
	REFUSED("GET http://h/\r\n\r\n", EGRESS_WHY_BAD_REQUEST_LINE);
	REFUSED("GET http://h/ HTTP/2.0\r\n\r\n", EGRESS_WHY_BAD_VERSION);
	REFUSED("GET http://h/ HTTP/1.2\r\n\r\n", EGRESS_WHY_BAD_VERSION);
	REFUSED("GET http://h/ http/1.1\r\n\r\n", EGRESS_WHY_BAD_VERSION);
	REFUSED("GET http://h/ HTTP/1.10\r\n\r\n", EGRESS_WHY_BAD_VERSION);
	REFUSED("GET http://h/ HTTP/0.9\r\n\r\n", EGRESS_WHY_BAD_VERSION);
}

Test(egress_http, line_bytes)
{
	struct egress_http_req r;

	cr_assert_eq(parse_n("GET http://h/ HTTP/1.1\r\nX: a\0b\r\n\r\n", 34,
			 &r),
	    EGRESS_WHY_NUL);
	REFUSED("GET http://h/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
	    EGRESS_WHY_BARE_CR);
	REFUSED("GET http://h/ HTTP/1.1\nX: a\r\n\r\n", EGRESS_WHY_BARE_LF);
	REFUSED("GET http://h/ HTTP/1.1\r\nX: a\n\r\n", EGRESS_WHY_BARE_LF);
	REFUSED("GET http://h/ HTTP/1.1\r\nX: a\r\n\n", EGRESS_WHY_BARE_LF);
	REFUSED("GET http://h/ HTTP/1.1\r\nX: \x1b[31m\r\n\r\n",
	    EGRESS_WHY_CTL);
	REFUSED("GET http://h/ HTTP/1.1\r\nX: \x7f\r\n\r\n", EGRESS_WHY_CTL);
	REFUSED("GET http://h/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
	    EGRESS_WHY_OBS_FOLD);
	REFUSED("GET http://h/ HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n",
	    EGRESS_WHY_OBS_FOLD);
	REFUSED("GET http://h/ HTTP/1.1\r\nX : a\r\n\r\n",
	    EGRESS_WHY_BAD_HEADER);
	REFUSED("GET http://h/ HTTP/1.1\r\nX\t: a\r\n\r\n",
	    EGRESS_WHY_BAD_HEADER);
	REFUSED("GET http://h/ HTTP/1.1\r\n: a\r\n\r\n", EGRESS_WHY_BAD_HEADER);
	REFUSED("GET http://h/ HTTP/1.1\r\nno colon\r\n\r\n",
	    EGRESS_WHY_BAD_HEADER);
	/* HTAB and obs-text are allowed in a value (RFC 9110 section 5.5). */
	cr_assert_eq(parse("GET http://h/ HTTP/1.1\r\nX: a\tb\xe9\r\n\r\n", &r),
	    EGRESS_WHY_NONE);
}

/* A head of request line "GET http://h/ HTTP/1.1" and header lines of
 * LINE bytes each (CRLF included), NLINES of them, into a new buffer;
 * *LEN its length. */
static char *
big_head(size_t line, size_t nlines, size_t *len)
{
	const char *rl = "GET http://h/ HTTP/1.1\r\n";
	size_t n = strlen(rl) + line * nlines + 2, at, i;
	char *b = malloc(n);

	cr_assert_not_null(b);
	memcpy(b, rl, strlen(rl));
	at = strlen(rl);
	for (i = 0; i < nlines; i++, at += line) {
		memset(b + at, 'v', line - 2);
		memcpy(b + at, "X:", 2);
		memcpy(b + at + line - 2, "\r\n", 2);
	}
	memcpy(b + at, "\r\n", 2);
	*len = n;
	return b;
}

Test(egress_http, line_and_head_bounds)
{
	struct egress_http_req r;
	enum egress_why why;
	size_t n;
	char *b;

	b = big_head(EGRESS_HTTP_LINE_MAX, 1, &n);
	cr_assert_eq(parse_n(b, n, &r), EGRESS_WHY_NONE);
	free(b);
	b = big_head(EGRESS_HTTP_LINE_MAX + 1, 1, &n);
	cr_assert_eq(parse_n(b, n, &r), EGRESS_WHY_LINE_TOO_LONG);
	/* Incomplete: decided once the line passes the bound. */
	cr_assert_eq(egress_http_parse((const uint8_t *)b,
			 24 + EGRESS_HTTP_LINE_MAX, &r, &why),
	    EGRESS_NEED_MORE);
	cr_assert_eq(egress_http_parse((const uint8_t *)b,
			 25 + EGRESS_HTTP_LINE_MAX, &r, &why),
	    EGRESS_REFUSED);
	cr_assert_eq(why, EGRESS_WHY_LINE_TOO_LONG);
	free(b);
	/* 24 + 4 * 8000 + 2 = 32026: within; one more line is not. */
	b = big_head(8000, 4, &n);
	cr_assert_eq(parse_n(b, n, &r), EGRESS_WHY_NONE);
	free(b);
	b = big_head(8000, 5, &n);
	cr_assert_eq(parse_n(b, n, &r), EGRESS_WHY_HEAD_TOO_BIG);
	free(b);
}

Test(egress_http, header_count_bound)
{
	struct egress_http_req r;
	size_t n;
	char *b;

	b = big_head(8, EGRESS_HTTP_MAX_HEADERS, &n);
	cr_assert_eq(parse_n(b, n, &r), EGRESS_WHY_NONE);
	cr_assert_eq(r.nfields, EGRESS_HTTP_MAX_HEADERS);
	free(b);
	b = big_head(8, EGRESS_HTTP_MAX_HEADERS + 1, &n);
	cr_assert_eq(parse_n(b, n, &r), EGRESS_WHY_TOO_MANY_HEADERS);
	free(b);
}

Test(egress_http, host_field_rules)
{
	struct egress_http_req r;

	REFUSED("GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\n"
		"Host: a.example\r\n\r\n",
	    EGRESS_WHY_DUPLICATE_HOST);
	REFUSED(
	    "GET http://a.example/ HTTP/1.1\r\nHost: a.example:8080\r\n\r\n",
	    EGRESS_WHY_HOST_MISMATCH);
	REFUSED(
	    "GET http://a.example:8080/ HTTP/1.1\r\nHost: a.example\r\n\r\n",
	    EGRESS_WHY_HOST_MISMATCH);
	REFUSED("CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:80\r\n\r\n",
	    EGRESS_WHY_HOST_MISMATCH);
	REFUSED("CONNECT [::1]:443 HTTP/1.1\r\nHost: ::1\r\n\r\n",
	    EGRESS_WHY_EMPTY_HOST);
	REFUSED("GET http://a.example/ HTTP/1.1\r\nHost:\r\n\r\n",
	    EGRESS_WHY_EMPTY_HOST);
	REFUSED("GET http://a.example/ HTTP/1.1\r\nHost: u@a.example\r\n\r\n",
	    EGRESS_WHY_USERINFO);
	cr_assert_eq(parse("GET http://a.example/ HTTP/1.1\r\n"
			   "hOsT:  A.EXAMPLE:80 \r\n\r\n",
			 &r),
	    EGRESS_WHY_NONE);
}

Test(egress_http, body_length_rules)
{
	struct egress_http_req r;

	cr_assert_eq(parse("POST http://h/ HTTP/1.1\r\nContent-Length: 0042\r\n"
			   "\r\n",
			 &r),
	    EGRESS_WHY_NONE);
	cr_assert_eq(r.content_length, 42);
	cr_assert_eq(parse("POST http://h/ HTTP/1.1\r\nContent-Length: "
			   "9007199254740992\r\n\r\n",
			 &r),
	    EGRESS_WHY_NONE);
	REFUSED(
	    "POST http://h/ HTTP/1.1\r\nContent-Length: 9007199254740993\r\n"
	    "\r\n",
	    EGRESS_WHY_BAD_CL);
	REFUSED("POST http://h/ HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n",
	    EGRESS_WHY_BAD_CL);
	REFUSED("POST http://h/ HTTP/1.1\r\nContent-Length: +1\r\n\r\n",
	    EGRESS_WHY_BAD_CL);
	REFUSED("POST http://h/ HTTP/1.1\r\nContent-Length:\r\n\r\n",
	    EGRESS_WHY_BAD_CL);
	REFUSED("POST http://h/ HTTP/1.1\r\nContent-Length: 1\r\n"
		"content-length: 1\r\n\r\n",
	    EGRESS_WHY_MULTIPLE_CL);
	REFUSED("POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	    EGRESS_WHY_TRANSFER_ENCODING);
	REFUSED("CONNECT h:443 HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
	    EGRESS_WHY_CONNECT_BODY);
	cr_assert_eq(
	    parse("CONNECT h:443 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &r),
	    EGRESS_WHY_NONE);
	REFUSED("POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
		"Connection: Content-Length\r\n\r\n",
	    EGRESS_WHY_BAD_HEADER);
}

Test(egress_http, incomplete_heads_need_more)
{
	const char *s = "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n";
	struct egress_http_req r;
	enum egress_why why;
	size_t k;

	for (k = 0; k < strlen(s); k++)
		cr_assert_eq(egress_http_parse((const uint8_t *)s, k, &r, &why),
		    EGRESS_NEED_MORE, "%zu bytes", k);
	/* What follows the head is not read: a body, or a tunnel. */
	cr_assert_eq(parse_n("CONNECT h:443 HTTP/1.1\r\n\r\n\x16\x03\x01", 29,
			 &r),
	    EGRESS_WHY_NONE);
	cr_assert_eq(r.head_len, 26);
}
