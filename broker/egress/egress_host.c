/*
 * egress_host.c: what every egress parser shares (egress_parse.h): the
 * host name rule, the authority of an HTTP target, the refusal names,
 * the first-byte sniff.
 */
#include <arpa/inet.h>
#include <string.h>

#include "egress_internal.h"
#include "egress_parse.h"

static const char *const why_names[] = {
    [EGRESS_WHY_NONE] = "none",
    [EGRESS_WHY_NUL] = "nul",
    [EGRESS_WHY_EMPTY_HOST] = "empty_host",
    [EGRESS_WHY_HOST_TOO_LONG] = "host_too_long",
    [EGRESS_WHY_HOST_BYTE] = "host_byte",
    [EGRESS_WHY_USERINFO] = "userinfo",
    [EGRESS_WHY_PERCENT] = "percent",
    [EGRESS_WHY_BAD_IPV6] = "bad_ipv6",
    [EGRESS_WHY_EMPTY_PORT] = "empty_port",
    [EGRESS_WHY_BAD_PORT] = "bad_port",
    [EGRESS_WHY_MISSING_PORT] = "missing_port",
    [EGRESS_WHY_LINE_TOO_LONG] = "line_too_long",
    [EGRESS_WHY_HEAD_TOO_BIG] = "head_too_big",
    [EGRESS_WHY_TOO_MANY_HEADERS] = "too_many_headers",
    [EGRESS_WHY_BARE_CR] = "bare_cr",
    [EGRESS_WHY_BARE_LF] = "bare_lf",
    [EGRESS_WHY_CTL] = "control_byte",
    [EGRESS_WHY_OBS_FOLD] = "obs_fold",
    [EGRESS_WHY_BAD_REQUEST_LINE] = "bad_request_line",
    [EGRESS_WHY_BAD_VERSION] = "bad_version",
    [EGRESS_WHY_ORIGIN_FORM] = "origin_form",
    [EGRESS_WHY_HTTPS_URI] = "https_uri",
    [EGRESS_WHY_BAD_SCHEME] = "bad_scheme",
    [EGRESS_WHY_BAD_TARGET] = "bad_target",
    [EGRESS_WHY_BAD_HEADER] = "bad_header",
    [EGRESS_WHY_DUPLICATE_HOST] = "duplicate_host",
    [EGRESS_WHY_HOST_MISMATCH] = "host_mismatch",
    [EGRESS_WHY_MULTIPLE_CL] = "multiple_content_length",
    [EGRESS_WHY_BAD_CL] = "bad_content_length",
    [EGRESS_WHY_CL_AND_TE] = "content_length_and_transfer_encoding",
    [EGRESS_WHY_TRANSFER_ENCODING] = "transfer_encoding",
    [EGRESS_WHY_CONNECT_BODY] = "connect_body",
    [EGRESS_WHY_SOCKS4] = "socks4",
    [EGRESS_WHY_SOCKS_VERSION] = "socks_version",
    [EGRESS_WHY_SOCKS_NO_METHOD] = "socks_no_method",
    [EGRESS_WHY_SOCKS_COMMAND] = "socks_command",
    [EGRESS_WHY_SOCKS_RSV] = "socks_rsv",
    [EGRESS_WHY_SOCKS_ATYP] = "socks_atyp",
    [EGRESS_WHY_TLS_RECORD] = "tls_record",
    [EGRESS_WHY_TLS_NOT_HELLO] = "tls_not_client_hello",
    [EGRESS_WHY_TLS_LENGTH] = "tls_length",
    [EGRESS_WHY_TLS_TOO_BIG] = "tls_too_big",
    [EGRESS_WHY_TLS_TWO_SNI] = "tls_two_server_name",
    [EGRESS_WHY_TLS_TWO_NAMES] = "tls_two_host_names",
    [EGRESS_WHY_TLS_NAME_TYPE] = "tls_name_type",
    [EGRESS_WHY_TLS_TWO_ECH] = "tls_two_ech",
};

const char *
egress_why_name(enum egress_why why)
{
	if ((size_t)why >= sizeof(why_names) / sizeof(why_names[0]) ||
	    why_names[why] == NULL)
		return "unknown";
	return why_names[why];
}

/* Whether C may be in a host name (egress_host_why). */
static bool
host_byte(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.';
}

enum egress_why
egress_host_why(const uint8_t *host, size_t len)
{
	size_t i;

	if (len == 0)
		return EGRESS_WHY_EMPTY_HOST;
	if (len > EGRESS_HOST_MAX)
		return EGRESS_WHY_HOST_TOO_LONG;
	for (i = 0; i < len; i++) {
		if (host_byte(host[i]))
			continue;
		switch (host[i]) {
		case '\0':
			return EGRESS_WHY_NUL;
		case '@':
			return EGRESS_WHY_USERINFO;
		case '%':
			return EGRESS_WHY_PERCENT;
		default:
			return EGRESS_WHY_HOST_BYTE;
		}
	}
	return EGRESS_WHY_NONE;
}

bool
egress_tchar(uint8_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static uint8_t
lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c - 'A' + 'a') : c;
}

bool
egress_span_is(const uint8_t *buf, struct egress_span span, const char *lit)
{
	size_t i, n = strlen(lit);

	if (span.len != n)
		return false;
	for (i = 0; i < n; i++)
		if (lower(buf[span.off + i]) != lower((uint8_t)lit[i]))
			return false;
	return true;
}

bool
egress_span_eq(const uint8_t *buf, struct egress_span a, struct egress_span b)
{
	size_t i;

	if (a.len != b.len)
		return false;
	for (i = 0; i < a.len; i++)
		if (lower(buf[a.off + i]) != lower(buf[b.off + i]))
			return false;
	return true;
}

/* The port in P (N bytes): 1..65535 in decimal digits, no sign, no
 * leading zero. */
static enum egress_why
port_parse(const uint8_t *p, size_t n, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0)
		return EGRESS_WHY_EMPTY_PORT;
	if (n > 5 || p[0] == '0')
		return EGRESS_WHY_BAD_PORT;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return EGRESS_WHY_BAD_PORT;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	if (v > 65535)
		return EGRESS_WHY_BAD_PORT;
	*port = (uint16_t)v;
	return EGRESS_WHY_NONE;
}

/* "[IPv6]" at P (N bytes, P[0] == '['): *HOSTLEN gets the bytes inside
 * the brackets; returns the bytes up to and including ']'. 0 when it is
 * no IPv6 address inet_pton reads. */
static size_t
ipv6_literal(const uint8_t *p, size_t n, size_t *hostlen)
{
	const uint8_t *close = memchr(p, ']', n);
	char text[INET6_ADDRSTRLEN];
	struct in6_addr a;
	size_t in;

	if (close == NULL)
		return 0;
	in = (size_t)(close - p) - 1;
	if (in == 0 || in >= sizeof(text) || memchr(p + 1, '\0', in) != NULL)
		return 0;
	memcpy(text, p + 1, in);
	text[in] = '\0';
	if (inet_pton(AF_INET6, text, &a) != 1)
		return 0;
	*hostlen = in;
	return in + 2;
}

enum egress_why
egress_authority_parse(const uint8_t *buf, size_t off, size_t len,
    struct egress_authority *a)
{
	const uint8_t *p = buf + off;
	size_t i, hlen, end;
	enum egress_why w;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < len; i++) {
		if (p[i] == '@')
			return EGRESS_WHY_USERINFO;
		if (p[i] == '%')
			return EGRESS_WHY_PERCENT;
	}
	if (len > 0 && p[0] == '[') {
		if ((end = ipv6_literal(p, len, &hlen)) == 0)
			return EGRESS_WHY_BAD_IPV6;
		a->host = (struct egress_span){off + 1, hlen};
		a->ipv6 = true;
		if (end < len && p[end] != ':')
			return EGRESS_WHY_BAD_IPV6;
	} else {
		const uint8_t *colon = memchr(p, ':', len);

		end = colon ? (size_t)(colon - p) : len;
		if ((w = egress_host_why(p, end)) != EGRESS_WHY_NONE)
			return w;
		a->host = (struct egress_span){off, end};
	}
	if (end == len)
		return EGRESS_WHY_NONE;
	a->has_port = true;
	return port_parse(p + end + 1, len - end - 1, &a->port);
}

enum egress_proto
egress_sniff(const uint8_t *buf, size_t len)
{
	if (len == 0)
		return EGRESS_PROTO_UNKNOWN;
	if (buf[0] == 0x05)
		return EGRESS_PROTO_SOCKS5;
	if ((buf[0] >= 'A' && buf[0] <= 'Z') ||
	    (buf[0] >= 'a' && buf[0] <= 'z'))
		return EGRESS_PROTO_HTTP;
	return EGRESS_PROTO_OTHER;
}
