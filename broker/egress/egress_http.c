/*
 * egress_http.c: the HTTP/1.1 request head a client sends the egress
 * proxy (egress_parse.h, egress_http_parse; RFC 9112, RFC 9110).
 *
 * The head is read line by line from the start of the buffer on every
 * call. Every rule is decided on a complete line, except the two bounds,
 * which are decided as soon as a line or the head passes one; both
 * depend on byte positions only, so a head split anywhere gets the same
 * answer as the whole of it.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "egress_internal.h"
#include "egress_parse.h"

/* What the parse knows between lines. */
struct http_pass {
	const uint8_t *buf;
	struct egress_http_req *req;
	bool host_seen;
	bool cl_seen;
	bool te_seen;
};

/*
 * The bound a line [START, END) passes, if any: the line's
 * (EGRESS_HTTP_LINE_MAX bytes from START) or the head's
 * (EGRESS_HTTP_HEAD_MAX bytes from 0), whichever comes first. END may
 * be the end of an incomplete line: the answer is then the one the
 * complete line will get.
 */
static enum egress_why
bound_why(size_t start, size_t end)
{
	size_t line_limit = start + EGRESS_HTTP_LINE_MAX;

	if (line_limit <= EGRESS_HTTP_HEAD_MAX) {
		if (end > line_limit)
			return EGRESS_WHY_LINE_TOO_LONG;
	} else if (end > EGRESS_HTTP_HEAD_MAX) {
		return EGRESS_WHY_HEAD_TOO_BIG;
	}
	return EGRESS_WHY_NONE;
}

/*
 * The bytes of the complete line P (N bytes, its LF last): no NUL, no CR
 * but the one before the LF, no control byte but HTAB, and CRLF at the
 * end (RFC 9112 section 2.2: a bare CR or LF is refused, not read as a
 * line end). *CONTENT gets the length without CRLF.
 */
static enum egress_why
line_why(const uint8_t *p, size_t n, size_t *content)
{
	size_t i, end = n - 1;
	bool crlf = end > 0 && p[end - 1] == '\r';

	if (crlf)
		end--;
	for (i = 0; i < end; i++) {
		if (p[i] == '\0')
			return EGRESS_WHY_NUL;
		if (p[i] == '\r')
			return EGRESS_WHY_BARE_CR;
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
			return EGRESS_WHY_CTL;
	}
	if (!crlf)
		return EGRESS_WHY_BARE_LF;
	*content = end;
	return EGRESS_WHY_NONE;
}

/* The CONNECT target BUF[T]: "host:port", the port required (RFC 9110
 * section 9.3.6). */
static enum egress_why
connect_target(struct http_pass *p, struct egress_span t)
{
	struct egress_authority a;
	enum egress_why w;

	if ((w = egress_authority_parse(p->buf, t.off, t.len, &a)) != 0)
		return w;
	if (!a.has_port)
		return EGRESS_WHY_MISSING_PORT;
	p->req->form = EGRESS_HTTP_CONNECT;
	p->req->authority = t;
	p->req->host = a.host;
	p->req->host_ipv6 = a.ipv6;
	p->req->port = a.port;
	return EGRESS_WHY_NONE;
}

/* Whether C may start or continue an RFC 3986 scheme. */
static bool
scheme_byte(uint8_t c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return !first &&
	    ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

/* The scheme of the absolute-form target P (N bytes): 0 when it is
 * "http://" (*SKIP its 7 bytes), else the why. */
static enum egress_why
absolute_scheme(const uint8_t *p, size_t n, size_t *skip)
{
	size_t i = 0;

	if (n > 0 && (p[0] == '/' || (n == 1 && p[0] == '*')))
		return EGRESS_WHY_ORIGIN_FORM;
	while (i < n && scheme_byte(p[i], i == 0))
		i++;
	if (i == 0 || i == n || p[i] != ':')
		return EGRESS_WHY_BAD_TARGET;
	if (i == 5 && strncasecmp((const char *)p, "https", 5) == 0)
		return EGRESS_WHY_HTTPS_URI;
	if (i != 4 || strncasecmp((const char *)p, "http", 4) != 0)
		return EGRESS_WHY_BAD_SCHEME;
	if (n < 7 || p[5] != '/' || p[6] != '/')
		return EGRESS_WHY_BAD_TARGET;
	*skip = 7;
	return EGRESS_WHY_NONE;
}

/* The absolute-form target BUF[T]: "http://authority[/path][?query]",
 * every byte a VCHAR, no fragment (RFC 9112 section 3.2.2). */
static enum egress_why
absolute_target(struct http_pass *p, struct egress_span t)
{
	const uint8_t *s = p->buf + t.off;
	struct egress_authority a;
	size_t i, skip = 0, aend;
	enum egress_why w;

	for (i = 0; i < t.len; i++)
		if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '#')
			return EGRESS_WHY_BAD_TARGET;
	if ((w = absolute_scheme(s, t.len, &skip)) != EGRESS_WHY_NONE)
		return w;
	for (aend = skip; aend < t.len && s[aend] != '/' && s[aend] != '?';
	     aend++)
		;
	w = egress_authority_parse(p->buf, t.off + skip, aend - skip, &a);
	if (w != EGRESS_WHY_NONE)
		return w;
	p->req->form = EGRESS_HTTP_ABSOLUTE;
	p->req->authority = (struct egress_span){t.off + skip, aend - skip};
	p->req->host = a.host;
	p->req->host_ipv6 = a.ipv6;
	p->req->port = a.has_port ? a.port : 80;
	p->req->target = (struct egress_span){t.off + aend, t.len - aend};
	return EGRESS_WHY_NONE;
}

/* The request line BUF[START, START + N), CRLF excluded (RFC 9112
 * section 3): "method SP target SP HTTP/1.x", single spaces. */
static enum egress_why
request_line(struct http_pass *p, size_t start, size_t n)
{
	const uint8_t *s = p->buf + start;
	const uint8_t *sp1 = memchr(s, ' ', n), *sp2;
	struct egress_span t;
	size_t i, vlen;

	if (sp1 == NULL || sp1 == s)
		return EGRESS_WHY_BAD_REQUEST_LINE;
	for (i = 0; s + i < sp1; i++)
		if (!egress_tchar(s[i]))
			return EGRESS_WHY_BAD_REQUEST_LINE;
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - s));
	if (sp2 == NULL || sp2 == sp1 + 1)
		return EGRESS_WHY_BAD_REQUEST_LINE;
	vlen = n - (size_t)(sp2 + 1 - s);
	if (memchr(sp2 + 1, ' ', vlen) != NULL)
		return EGRESS_WHY_BAD_REQUEST_LINE;
	if (vlen != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return EGRESS_WHY_BAD_VERSION;
	p->req->minor = sp2[8] - '0';
	p->req->method = (struct egress_span){start, (size_t)(sp1 - s)};
	t = (struct egress_span){start + (size_t)(sp1 + 1 - s),
	    (size_t)(sp2 - sp1) - 1};
	/* Methods are case-sensitive (RFC 9110 section 9.1). */
	if (p->req->method.len == 7 && memcmp(s, "CONNECT", 7) == 0)
		return connect_target(p, t);
	return absolute_target(p, t);
}

/* A Host field's value BUF[V] against the target (RFC 9112 section
 * 3.2.2): the same host, ASCII case ignored, and the same port (80 when
 * the field has none, but for CONNECT, whose field may omit it). */
static enum egress_why
host_field(struct http_pass *p, struct egress_span v)
{
	struct egress_http_req *req = p->req;
	struct egress_authority a;
	enum egress_why w;

	if (p->host_seen)
		return EGRESS_WHY_DUPLICATE_HOST;
	p->host_seen = true;
	if ((w = egress_authority_parse(p->buf, v.off, v.len, &a)) != 0)
		return w;
	if (a.ipv6 != req->host_ipv6 ||
	    !egress_span_eq(p->buf, a.host, req->host))
		return EGRESS_WHY_HOST_MISMATCH;
	if (a.has_port ? a.port != req->port
		       : req->form == EGRESS_HTTP_ABSOLUTE && req->port != 80)
		return EGRESS_WHY_HOST_MISMATCH;
	return EGRESS_WHY_NONE;
}

/* A Content-Length field's value BUF[V]: one, plain digits, at most
 * EGRESS_HTTP_CL_MAX (RFC 9112 section 6.3: a list or two fields are
 * refused, not reconciled), never with Transfer-Encoding. */
static enum egress_why
content_length(struct http_pass *p, struct egress_span v)
{
	const uint8_t *s = p->buf + v.off;
	uint64_t n = 0;
	size_t i;

	if (p->te_seen)
		return EGRESS_WHY_CL_AND_TE;
	if (p->cl_seen)
		return EGRESS_WHY_MULTIPLE_CL;
	p->cl_seen = true;
	if (v.len == 0 || v.len > 16)
		return EGRESS_WHY_BAD_CL;
	for (i = 0; i < v.len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return EGRESS_WHY_BAD_CL;
		n = n * 10 + (uint64_t)(s[i] - '0');
	}
	if (n > EGRESS_HTTP_CL_MAX)
		return EGRESS_WHY_BAD_CL;
	p->req->content_length = n;
	return EGRESS_WHY_NONE;
}

/* The header line BUF[START, START + N), CRLF excluded: "name:" OWS
 * value OWS (RFC 9112 section 5), then what the field means to us. */
static enum egress_why
header_line(struct http_pass *p, size_t start, size_t n)
{
	const uint8_t *s = p->buf + start;
	const uint8_t *colon = memchr(s, ':', n);
	struct egress_http_field *f;
	size_t i, vs, ve;

	if (s[0] == ' ' || s[0] == '\t')
		return EGRESS_WHY_OBS_FOLD;
	if (p->req->nfields == EGRESS_HTTP_MAX_HEADERS)
		return EGRESS_WHY_TOO_MANY_HEADERS;
	if (colon == NULL || colon == s)
		return EGRESS_WHY_BAD_HEADER;
	for (i = 0; s + i < colon; i++)
		if (!egress_tchar(s[i]))
			return EGRESS_WHY_BAD_HEADER;
	for (vs = (size_t)(colon - s) + 1;
	     vs < n && (s[vs] == ' ' || s[vs] == '\t'); vs++)
		;
	for (ve = n; ve > vs && (s[ve - 1] == ' ' || s[ve - 1] == '\t'); ve--)
		;
	f = &p->req->field[p->req->nfields++];
	f->name = (struct egress_span){start, (size_t)(colon - s)};
	f->value = (struct egress_span){start + vs, ve - vs};
	if (egress_span_is(p->buf, f->name, "host"))
		return host_field(p, f->value);
	if (egress_span_is(p->buf, f->name, "content-length"))
		return content_length(p, f->value);
	if (egress_span_is(p->buf, f->name, "transfer-encoding")) {
		if (p->cl_seen)
			return EGRESS_WHY_CL_AND_TE;
		p->te_seen = true;
	}
	return EGRESS_WHY_NONE;
}

/* Marks drop every field named NAME (BUF[NAME]). */
static void
drop_named(const uint8_t *buf, struct egress_http_req *req,
    struct egress_span name)
{
	size_t i;

	for (i = 0; i < req->nfields; i++)
		if (egress_span_eq(buf, req->field[i].name, name))
			req->field[i].drop = true;
}

/*
 * Marks drop every field that the Connection field F names, a list of
 * tokens separated by commas and OWS (RFC 9110 section 7.6.1). A list
 * naming Content-Length is refused (EGRESS_WHY_BAD_HEADER): dropped, it
 * would leave the body the proxy forwards for the server to read as a
 * second request.
 */
static enum egress_why
drop_connection_options(const uint8_t *buf, struct egress_http_req *req,
    const struct egress_http_field *f)
{
	size_t i = f->value.off, end = f->value.off + f->value.len, s;
	struct egress_span tok;

	while (i < end) {
		while (i < end && !egress_tchar(buf[i]))
			i++;
		for (s = i; i < end && egress_tchar(buf[i]); i++)
			;
		if (i == s)
			continue;
		tok = (struct egress_span){s, i - s};
		if (egress_span_is(buf, tok, "content-length"))
			return EGRESS_WHY_BAD_HEADER;
		drop_named(buf, req, tok);
	}
	return EGRESS_WHY_NONE;
}

/* The hop-by-hop fields of RFC 9110 section 7.6.1, and Host, which
 * egress_http_upstream writes from the target. */
static const char *const hop_by_hop[] = {"connection", "proxy-connection",
    "keep-alive", "te", "trailer", "upgrade", "proxy-authorization",
    "proxy-authenticate", "host"};

/* The empty line ends the head: the rules that need every field, then
 * the fields to drop. */
static enum egress_why
head_end(struct http_pass *p)
{
	struct egress_http_req *req = p->req;
	size_t i, j;

	if (p->te_seen)
		return EGRESS_WHY_TRANSFER_ENCODING;
	if (req->form == EGRESS_HTTP_CONNECT && req->content_length > 0)
		return EGRESS_WHY_CONNECT_BODY;
	for (i = 0; i < req->nfields; i++) {
		struct egress_http_field *f = &req->field[i];

		for (j = 0; j < sizeof(hop_by_hop) / sizeof(hop_by_hop[0]); j++)
			if (egress_span_is(p->buf, f->name, hop_by_hop[j]))
				f->drop = true;
		if (egress_span_is(p->buf, f->name, "connection") &&
		    drop_connection_options(p->buf, req, f) != EGRESS_WHY_NONE)
			return EGRESS_WHY_BAD_HEADER;
	}
	return EGRESS_WHY_NONE;
}

/* Reads the complete line BUF[START, END) (the NLINE-th, from 0). Sets
 * *DONE when it was the empty line that ends the head. */
static enum egress_why
one_line(struct http_pass *p, size_t start, size_t end, size_t nline,
    bool *done)
{
	size_t n = 0;
	enum egress_why w;

	if ((w = line_why(p->buf + start, end - start, &n)) != 0)
		return w;
	if (nline == 0)
		return n == 0 ? EGRESS_WHY_BAD_REQUEST_LINE
			      : request_line(p, start, n);
	if (n > 0)
		return header_line(p, start, n);
	*done = true;
	return head_end(p);
}

enum egress_status
egress_http_parse(const uint8_t *buf, size_t len, struct egress_http_req *req,
    enum egress_why *why)
{
	struct http_pass p = {.buf = buf, .req = req};
	size_t start = 0, nline = 0;
	bool done = false;

	memset(req, 0, sizeof(*req));
	*why = EGRESS_WHY_NONE;
	for (;;) {
		const uint8_t *lf = memchr(buf + start, '\n', len - start);
		size_t end = lf ? (size_t)(lf - buf) + 1 : len;

		if ((*why = bound_why(start, end)) != EGRESS_WHY_NONE)
			return EGRESS_REFUSED;
		if (lf == NULL)
			return EGRESS_NEED_MORE;
		*why = one_line(&p, start, end, nline++, &done);
		if (*why != EGRESS_WHY_NONE)
			return EGRESS_REFUSED;
		if (done) {
			req->head_len = end;
			return EGRESS_DONE;
		}
		start = end;
	}
}

/* Appends P (N bytes) to OUT (SIZE bytes) at *AT; false when it does
 * not fit. */
static bool
put(char *out, size_t size, size_t *at, const void *p, size_t n)
{
	if (n > size - *at)
		return false;
	memcpy(out + *at, p, n);
	*at += n;
	return true;
}

static bool
put_span(char *out, size_t size, size_t *at, const uint8_t *buf,
    struct egress_span s)
{
	return put(out, size, at, buf + s.off, s.len);
}

static bool
put_str(char *out, size_t size, size_t *at, const char *s)
{
	return put(out, size, at, s, strlen(s));
}

long
egress_http_upstream(const uint8_t *buf, const struct egress_http_req *req,
    char *out, size_t size)
{
	size_t i, at = 0;
	bool ok;

	if (req->form != EGRESS_HTTP_ABSOLUTE)
		return -EINVAL;
	ok = put_span(out, size, &at, buf, req->method) &&
	    put_str(out, size, &at, " ");
	if (ok && (req->target.len == 0 || buf[req->target.off] == '?'))
		ok = put_str(out, size, &at, "/");
	ok = ok && put_span(out, size, &at, buf, req->target) &&
	    put_str(out, size, &at, " HTTP/1.1\r\nHost: ") &&
	    put_span(out, size, &at, buf, req->authority) &&
	    put_str(out, size, &at, "\r\n");
	for (i = 0; ok && i < req->nfields; i++) {
		const struct egress_http_field *f = &req->field[i];

		if (f->drop)
			continue;
		ok = put_span(out, size, &at, buf, f->name) &&
		    put_str(out, size, &at, ": ") &&
		    put_span(out, size, &at, buf, f->value) &&
		    put_str(out, size, &at, "\r\n");
	}
	ok = ok && put_str(out, size, &at, "Connection: close\r\n\r\n");
	return ok ? (long)at : -ENOSPC;
}
