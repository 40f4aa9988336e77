/*
 * test_egress_bypass.c: the public bypasses of egress proxies that issue
 * 25 lists, as far as the wire parsers (broker/egress/) answer for them,
 * one test each, and the differential corpus: the same hostile host name
 * as an HTTP CONNECT, an absolute-form request, a SOCKS5 request and a
 * TLS server name, which the four must all refuse or all accept with
 * the same bytes (fuzz/corpus/egress_wire/ holds the same inputs).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "egress_test.h"

/* The HTTP why of S (N bytes), every split checked. */
static enum egress_why
http_n(const char *s, size_t n, struct egress_http_req *req)
{
	enum egress_why why;

	cr_assert_neq(egress_check_splits(P_HTTP, (const uint8_t *)s, n),
	    EGRESS_NEED_MORE);
	egress_http_parse((const uint8_t *)s, n, req, &why);
	return why;
}

static enum egress_why
http(const char *s)
{
	struct egress_http_req r;

	return http_n(s, strlen(s), &r);
}

/* The SOCKS5 why of a CONNECT to the domain NAME (N bytes), port 443. */
static enum egress_why
socks_name(const char *name, size_t n, struct egress_outcome *o)
{
	uint8_t b[3 + 5 + 255 + 2] = {5, 1, 0, 5, 1, 0, 3, (uint8_t)n};

	cr_assert(n <= 255);
	memcpy(b + 8, name, n);
	b[8 + n] = 1;
	b[9 + n] = 0xbb;
	cr_assert_neq(egress_check_splits(P_SOCKS, b, 10 + n),
	    EGRESS_NEED_MORE);
	egress_run(P_SOCKS, b, 10 + n, o);
	return o->why;
}

/* The TLS why of a hello whose SNI is NAME (N bytes). */
static enum egress_why
sni_name(const char *name, size_t n, struct egress_tls_hello *h)
{
	uint8_t ext[300], out[600];
	enum egress_why why;
	size_t m;

	m = egress_mk_hello(ext, egress_sni_ext(name, n, ext), out);
	cr_assert_neq(egress_check_splits(P_TLS, out, m), EGRESS_NEED_MORE);
	egress_tls_hello(out, m, h, &why);
	return why;
}

/* One agent CLI's proxy compared "allowed.com\0.evil.com" as a C string
 * and dialled the whole name (issue 25, "a NUL byte in a SOCKS5 host
 * name"). */
Test(egress_bypass, socks5_nul_in_host_name)
{
	static const char a[] = "allowed.com\0.evil.com";
	static const char b[] = "evil.com\0allowed.com";
	struct egress_outcome o;

	cr_assert_eq(socks_name(a, sizeof(a) - 1, &o), EGRESS_WHY_NUL);
	cr_assert_eq(o.st, EGRESS_REFUSED);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_NOT_ALLOWED);
	cr_assert_eq(socks_name(b, sizeof(b) - 1, &o), EGRESS_WHY_NUL);
	cr_assert_eq(o.socks.rep, EGRESS_SOCKS5_NOT_ALLOWED);
}

/* SOCKS4a carries the name after a NUL-terminated user id: refused
 * whole, so no NUL-terminated field is ever read. */
Test(egress_bypass, socks4a_refused)
{
	static const char s4a[] = "\4\1\1\273\0\0\0\1user\0allowed.com\0";
	struct egress_outcome o;

	egress_run(P_SOCKS, (const uint8_t *)s4a, sizeof(s4a) - 1, &o);
	cr_assert_eq(o.st, EGRESS_REFUSED);
	cr_assert_eq(o.why, EGRESS_WHY_SOCKS4);
}

/* Domain fronting: CONNECT names an allowed host, the TLS server name
 * another. The parsers return both, from the same bytes, for the
 * decision to compare (issue 25, "a fronting mismatch between the
 * CONNECT host and the TLS SNI"). */
Test(egress_bypass, connect_host_sni_mismatch_inputs)
{
	static const char head[] = "CONNECT allowed.example:443 HTTP/1.1\r\n"
				   "Host: allowed.example:443\r\n\r\n";
	uint8_t buf[1024], ext[300];
	struct egress_http_req r;
	struct egress_tls_hello h;
	enum egress_why why;
	size_t n = sizeof(head) - 1, m;

	memcpy(buf, head, n);
	m = egress_mk_hello(ext, egress_sni_ext("evil.example", 12, ext),
	    buf + n);
	cr_assert_eq(egress_http_parse(buf, n + m, &r, &why), EGRESS_DONE);
	cr_assert_eq(r.head_len, n);
	cr_assert_eq(egress_tls_hello(buf + r.head_len, n + m - r.head_len, &h,
			 &why),
	    EGRESS_DONE);
	cr_assert_eq(h.kind, EGRESS_TLS_SNI);
	cr_assert_eq(r.host.len, 15);
	cr_assert_eq(memcmp(buf + r.host.off, "allowed.example", 15), 0);
	cr_assert_str_eq(h.sni, "evil.example");
	/* A tunnel without a server name is reported as such. */
	m = egress_mk_hello(ext, 0, buf + n);
	cr_assert_eq(egress_tls_hello(buf + n, m, &h, &why), EGRESS_DONE);
	cr_assert_eq(h.kind, EGRESS_TLS_NO_SNI);
}

/* "http://allowed.com@evil.com/": a checker reading the part before '@'
 * as the host, a client dialling the part after. */
Test(egress_bypass, userinfo_in_authority)
{
	cr_assert_eq(http("CONNECT allowed.com@evil.com:443 HTTP/1.1\r\n\r\n"),
	    EGRESS_WHY_USERINFO);
	cr_assert_eq(http("GET http://allowed.com@evil.com/ HTTP/1.1\r\n\r\n"),
	    EGRESS_WHY_USERINFO);
	cr_assert_eq(http(
			 "GET http://u:allowed.com@evil.com/ HTTP/1.1\r\n\r\n"),
	    EGRESS_WHY_USERINFO);
	cr_assert_eq(http("GET http://evil.com/ HTTP/1.1\r\n"
			  "Host: allowed.com@evil.com\r\n\r\n"),
	    EGRESS_WHY_USERINFO);
}

/* "evil%2ecom", "allowed.com%00.evil.com": a decoder after the check. */
Test(egress_bypass, percent_encoded_host)
{
	struct egress_outcome o;
	struct egress_tls_hello h;

	cr_assert_eq(http("CONNECT evil%2ecom:443 HTTP/1.1\r\n\r\n"),
	    EGRESS_WHY_PERCENT);
	cr_assert_eq(
	    http("GET http://allowed.com%00.evil.com/ HTTP/1.1\r\n\r\n"),
	    EGRESS_WHY_PERCENT);
	cr_assert_eq(socks_name("evil%2ecom", 10, &o), EGRESS_WHY_PERCENT);
	cr_assert_eq(sni_name("evil%2ecom", 10, &h), EGRESS_WHY_PERCENT);
	/* In the path, percent-encoding is the client's business. */
	cr_assert_eq(http("GET http://h.example/a%20b HTTP/1.1\r\n\r\n"),
	    EGRESS_WHY_NONE);
}

/* Request smuggling through the forward proxy: a body length the proxy
 * and the server read differently (Content-Length against
 * Transfer-Encoding, two lengths, a folded or spaced field name). */
Test(egress_bypass, header_smuggling_cl_te)
{
	static const char post[] = "POST http://h.example/ HTTP/1.1\r\n"
				   "Content-Length: 5\r\n\r\n"
				   "helloGET http://evil.example/ HTTP/1.1\r\n";
	struct egress_http_req r;
	char out[256];
	long n;

	cr_assert_eq(http("POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n"),
	    EGRESS_WHY_CL_AND_TE);
	cr_assert_eq(http(
			 "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked"
			 "\r\nContent-Length: 5\r\n\r\n"),
	    EGRESS_WHY_CL_AND_TE);
	cr_assert_eq(http(
			 "POST http://h/ HTTP/1.1\r\nTransfer-Encoding: chunked"
			 "\r\n\r\n"),
	    EGRESS_WHY_TRANSFER_ENCODING);
	cr_assert_eq(
	    http("POST http://h/ HTTP/1.1\r\nTransfer-Encoding : chunked"
		 "\r\nContent-Length: 5\r\n\r\n"),
	    EGRESS_WHY_BAD_HEADER);
	cr_assert_eq(http("POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
			  "X: y\r\n Transfer-Encoding: chunked\r\n\r\n"),
	    EGRESS_WHY_OBS_FOLD);
	cr_assert_eq(http("POST http://h/ HTTP/1.1\r\nContent-Length: 5\r\n"
			  "Content-Length: 50\r\n\r\n"),
	    EGRESS_WHY_MULTIPLE_CL);
	/* An accepted request: its head ends where the parser says, the body
	 * is Content-Length bytes, and the upstream head closes. */
	cr_assert_eq(http_n(post, sizeof(post) - 1, &r), EGRESS_WHY_NONE);
	cr_assert_eq(r.content_length, 5);
	cr_assert_eq(memcmp(post + r.head_len, "hello", 5), 0);
	n = egress_http_upstream((const uint8_t *)post, &r, out, sizeof(out));
	cr_assert_gt(n, 0);
	cr_assert_eq(memcmp(out + n - 21, "Connection: close\r\n\r\n", 21), 0);
	cr_assert_null(memmem(out, (size_t)n - 4, "\r\n\r\n", 4));
}

/* A Host field that names another host than the target (virtual-host
 * fronting over plain HTTP), or two of them. */
Test(egress_bypass, host_header_mismatch)
{
	cr_assert_eq(http("GET http://allowed.example/ HTTP/1.1\r\n"
			  "Host: evil.example\r\n\r\n"),
	    EGRESS_WHY_HOST_MISMATCH);
	cr_assert_eq(http("CONNECT allowed.example:443 HTTP/1.1\r\n"
			  "Host: evil.example:443\r\n\r\n"),
	    EGRESS_WHY_HOST_MISMATCH);
	cr_assert_eq(http(
			 "GET http://allowed.example/ HTTP/1.1\r\n"
			 "Host: allowed.example\r\nHost: evil.example\r\n\r\n"),
	    EGRESS_WHY_DUPLICATE_HOST);
}

/* Plain HTTP left unfiltered: an absolute-form request names its host,
 * so it gets a decision like CONNECT; a request without one is refused
 * rather than sent to its Host field. */
Test(egress_bypass, plain_http_names_its_host)
{
	struct egress_http_req r;
	const char *s = "GET http://deb.example/debian/pool/x.deb HTTP/1.1\r\n"
			"Host: deb.example\r\n\r\n";

	cr_assert_eq(http_n(s, strlen(s), &r), EGRESS_WHY_NONE);
	cr_assert_eq(r.form, EGRESS_HTTP_ABSOLUTE);
	cr_assert_eq(memcmp(s + r.host.off, "deb.example", r.host.len), 0);
	cr_assert_eq(http("GET /debian/pool/x.deb HTTP/1.1\r\n"
			  "Host: deb.example\r\n\r\n"),
	    EGRESS_WHY_ORIGIN_FORM);
}

/* CR, LF and over-long lines: a second request or a header injected
 * through the host, a line past a buffer. */
Test(egress_bypass, crlf_and_long_lines)
{
	struct egress_outcome o;
	char line[EGRESS_HTTP_LINE_MAX + 64];

	cr_assert_eq(http("GET http://allowed.example\r/ HTTP/1.1\r\n\r\n"),
	    EGRESS_WHY_BARE_CR);
	cr_assert_eq(http("CONNECT allowed.example:443\nHost: evil HTTP/1.1\r\n"
			  "\r\n"),
	    EGRESS_WHY_BARE_LF);
	cr_assert_eq(socks_name("a.example\r\nX", 12, &o),
	    EGRESS_WHY_HOST_BYTE);
	memset(line, 'a', sizeof(line));
	memcpy(line, "GET http://", 11);
	cr_assert_eq(http_n(line, sizeof(line), &(struct egress_http_req){0}),
	    EGRESS_WHY_LINE_TOO_LONG);
}

/*
 * The differential corpus: each name as the four inputs. OK: all four
 * accept it, with the same bytes; otherwise all four refuse it, but for
 * a name holding '/' or '?', which end a URI's authority: the
 * absolute-form request then goes to the part before it, ABS_LEN bytes,
 * and says so.
 */
static const struct {
	const char *name;
	size_t len;
	bool ok;
	size_t abs_len;
} names[] = {
#define N(s, ok)                        \
	{                               \
		s, sizeof(s) - 1, ok, 0 \
	}
    N("allowed.example", true),
    N("ALLOWED.Example.", true),
    N("xn--bcher-kva.example", true),
    N("_dmarc.allowed.example", false),
    N("127.0.0.1", true),
    N("allowed.example\0.evil.example", false),
    N("evil.example\0allowed.example", false),
    N("allowed.example@evil.example", false),
    N("evil.example%2eallowed.example", false),
    N("allowed.example%00.evil.example", false),
    N("allowed.example\r\nX: y", false),
    N("allowed.example\n", false),
    N("allowed.example evil.example", false),
    N("allowed.example\tevil", false),
    N("allowed.example\\evil", false),
    N("allowed.example#evil", false),
    N("b\xc3\xbc"
      "cher.example",
	false),
    N("", false),
#undef N
    {"allowed.example/evil", 20, false, 15},
    {"allowed.example?evil", 20, false, 15},
};

Test(egress_bypass, differential_hostile_names)
{
	char head[512], absf[512];
	struct egress_http_req rc, ra;
	struct egress_outcome o;
	struct egress_tls_hello h;
	enum egress_why w[4];
	size_t i, n, m;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *s = names[i].name;

		memcpy(head, "CONNECT ", 8);
		memcpy(head + 8, s, names[i].len);
		memcpy(head + 8 + names[i].len, ":443 HTTP/1.1\r\n\r\n", 17);
		n = 8 + names[i].len + 17;
		memcpy(absf, "GET http://", 11);
		memcpy(absf + 11, s, names[i].len);
		memcpy(absf + 11 + names[i].len, "/ HTTP/1.1\r\n\r\n", 14);
		m = 11 + names[i].len + 14;
		w[0] = http_n(head, n, &rc);
		w[1] = http_n(absf, m, &ra);
		w[2] = socks_name(s, names[i].len, &o);
		w[3] = sni_name(s, names[i].len, &h);
		if (names[i].abs_len > 0) {
			cr_assert_eq(w[1], EGRESS_WHY_NONE, "name %zu", i);
			cr_assert_eq(ra.host.len, names[i].abs_len);
			w[1] = EGRESS_WHY_HOST_BYTE;
		}
		cr_assert((w[0] == 0) == names[i].ok &&
			(w[1] == 0) == names[i].ok &&
			(w[2] == 0) == names[i].ok &&
			(w[3] == 0) == names[i].ok,
		    "name %zu: %s %s %s %s", i, egress_why_name(w[0]),
		    egress_why_name(w[1]), egress_why_name(w[2]),
		    egress_why_name(w[3]));
		if (!names[i].ok)
			continue;
		cr_assert_eq(rc.host.len, names[i].len);
		cr_assert_eq(memcmp(head + rc.host.off, s, names[i].len), 0);
		cr_assert_eq(memcmp(absf + ra.host.off, s, names[i].len), 0);
		cr_assert_str_eq(o.socks.host, s);
		cr_assert_str_eq(h.sni, s);
	}
}
