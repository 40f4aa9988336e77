/* egress_name.c: the canonical form of a host (egress_name.h). Pure. */
#include "egress_name.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

struct errtab {
	int code;
	const char *token, *sentence;
};

#define EGRESS_X_TAB(name, n, token, sentence) {name, token, sentence},
static const struct errtab errtab[] = {EGRESS_NAME_ERRORS(EGRESS_X_TAB)};
#undef EGRESS_X_TAB

static const struct errtab *
find_error(int code)
{
	for (size_t i = 0; i < sizeof(errtab) / sizeof(errtab[0]); i++)
		if (errtab[i].code == code)
			return &errtab[i];
	return NULL;
}

const char *
egress_name_errname(int code)
{
	const struct errtab *e = find_error(code);

	if (e != NULL)
		return e->token;
	return code < 0 && code > -1000 ? "errno" : "unknown";
}

const char *
egress_name_strerror(int code)
{
	const struct errtab *e = find_error(code);

	if (e != NULL)
		return e->sentence;
	if (code < 0 && code > -1000)
		return strerror(-code);
	return "unknown error";
}

/*
 * These are refused before anything else looks at the text: each is how
 * a parser downstream (a resolver, a URL parser, a log line) has been
 * made to read another host than the one decided on.
 */
int
egress_host_hostile(const char *in, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '\0')
			return EGRESS_E_NUL;
		if (c == '\r' || c == '\n')
			return EGRESS_E_CRLF;
		if (c < 0x20 || c == 0x7f)
			return EGRESS_E_CONTROL;
		if (c == ' ')
			return EGRESS_E_SPACE;
		if (c >= 0x80)
			return EGRESS_E_NON_ASCII;
		if (c == '@')
			return EGRESS_E_USERINFO;
		if (c == '%')
			return EGRESS_E_PERCENT;
		if (c == '/' || c == '\\')
			return EGRESS_E_SLASH;
	}
	return 0;
}

/* Copies the address text of family AF, read by inet_pton from S, back in
 * inet_ntop's form into OUT. Returns KIND, BAD, or -ENOSPC. */
static int
canon_address(int af, const char *s, char *out, size_t outlen, int kind,
    int bad)
{
	struct in6_addr a;

	if (inet_pton(af, s, &a) != 1)
		return bad;
	if (inet_ntop(af, &a, out, (socklen_t)outlen) == NULL)
		return -ENOSPC;
	return kind;
}

/* An IPv6 address, "[ADDR]" or "ADDR" (IN holds no hostile byte). */
static int
canon_ipv6(const char *in, size_t len, char *out, size_t outlen)
{
	char buf[64];

	if (in[0] == '[') {
		if (len < 2 || in[len - 1] != ']')
			return EGRESS_E_BAD_IPV6;
		in++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof(buf))
		return EGRESS_E_BAD_IPV6;
	memcpy(buf, in, len);
	buf[len] = '\0';
	return canon_address(AF_INET6, buf, out, outlen, EGRESS_HOST_IPV6,
	    EGRESS_E_BAD_IPV6);
}

/* Whether the label S[0..N) is a number in the WHATWG URL standard's
 * sense ("ends in a number checker"): decimal digits, or "0x"/"0X"
 * followed by hex digits or nothing. */
static bool
numeric_label(const char *s, size_t n)
{
	size_t i = 0;
	bool hex = n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

	if (n == 0)
		return false;
	for (i = hex ? 2 : 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= '0' && c <= '9') ||
		    (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));

		if (!ok)
			return false;
	}
	return true;
}

/* Checks one label S[0..N) of a lower-cased name (RFC 1035 2.3.1 as
 * relaxed by RFC 1123 2.1: a digit may come first). */
static int
check_label(const char *s, size_t n)
{
	if (n == 0)
		return EGRESS_E_EMPTY_LABEL;
	if (n > EGRESS_LABEL_MAX)
		return EGRESS_E_LABEL_TOO_LONG;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return EGRESS_E_BAD_CHAR;
	/* An A-label is "xn--" and the punycode of its U-label (RFC 5890
	 * 2.3.2.1): never empty. */
	if (n == 4 && memcmp(s, "xn--", 4) == 0)
		return EGRESS_E_BAD_ALABEL;
	if (s[0] == '-' || s[n - 1] == '-')
		return EGRESS_E_HYPHEN;
	return 0;
}

/* Checks every label of the lower-cased name S (LEN bytes, no trailing
 * dot). */
static int
check_labels(const char *s, size_t len)
{
	size_t start = 0;
	int r;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		r = check_label(s + start, i - start);
		if (r < 0)
			return r;
		start = i + 1;
	}
	return 0;
}

/* A name or an IPv4 address, IN[0..LEN) holding no hostile byte, no ":"
 * and not starting with "[". */
static int
canon_name(const char *in, size_t len, char *out, size_t outlen)
{
	char buf[EGRESS_NAME_MAX + 2];
	const char *last;
	size_t i;
	int r;

	/* One trailing dot: the root, the same name (RFC 1034 3.1). */
	if (len > 0 && in[len - 1] == '.')
		len--;
	if (len == 0)
		return EGRESS_E_EMPTY;
	if (len > EGRESS_NAME_MAX)
		return EGRESS_E_NAME_TOO_LONG;
	for (i = 0; i < len; i++)
		buf[i] = (in[i] >= 'A' && in[i] <= 'Z') ? (char)(in[i] + 32)
							: in[i];
	buf[len] = '\0';
	/* A name whose last label is a number is an IPv4 address to a URL
	 * parser, and inet_aton(3) reads "127.1", "0x7f.1", "2130706433"
	 * and "0177.0.0.1" as 127.0.0.1: only the dotted quad is taken, as
	 * an address; the rest would be decided as names and dialled as
	 * addresses. */
	last = memrchr(buf, '.', len);
	last = last ? last + 1 : buf;
	if (numeric_label(last, len - (size_t)(last - buf)))
		return canon_address(AF_INET, buf, out, outlen,
		    EGRESS_HOST_IPV4, EGRESS_E_ODD_IPV4);
	r = check_labels(buf, len);
	if (r < 0)
		return r;
	if (outlen < len + 1)
		return -ENOSPC;
	memcpy(out, buf, len + 1);
	return EGRESS_HOST_NAME;
}

int
egress_host_canon(const char *in, size_t len, char *out, size_t outlen)
{
	int r;

	if (outlen > 0)
		out[0] = '\0';
	if (len == 0)
		return EGRESS_E_EMPTY;
	r = egress_host_hostile(in, len);
	if (r == 0 && (in[0] == '[' || memchr(in, ':', len) != NULL))
		r = canon_ipv6(in, len, out, outlen);
	else if (r == 0)
		r = canon_name(in, len, out, outlen);
	if (r < 0 && outlen > 0)
		out[0] = '\0';
	return r;
}
