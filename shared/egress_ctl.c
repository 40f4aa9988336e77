/* egress_ctl.c: the bodies of the broker<->proxy messages and the job's
 * network report (egress_ctl.h). Pure: no I/O. */
#include "egress_ctl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"

void
egress_job_clear(struct egress_job *job)
{
	if (job == NULL)
		return;
	egress_rules_clear(&job->rules);
	memset(job, 0, sizeof(*job));
}

/* ---- The job ------------------------------------------------------------ */

/* S with its NUL. */
static int
wbuf_put_cstr(struct wbuf *w, const char *s)
{
	size_t n = strlen(s) + 1;

	for (size_t i = 0; i < n; i++)
		if (wbuf_put_u8(w, (uint8_t)s[i]) < 0)
			return -ENOBUFS;
	return 0;
}

long
egress_job_encode(const struct egress_job *job, uint8_t *out, size_t size)
{
	char text[EGRESS_RULE_BUF];
	struct wbuf w;

	if (job->rules.n > EGRESS_MAX_RULES)
		return -EINVAL;
	wbuf_init(&w, out, size);
	wbuf_put_u64(&w, job->job_id);
	wbuf_put_u64(&w, job->max_bytes_out);
	wbuf_put_u64(&w, job->max_bytes_in);
	wbuf_put_u32(&w, job->max_connections);
	wbuf_put_u32(&w, job->max_concurrent);
	wbuf_put_u16(&w, job->port);
	wbuf_put_u16(&w, (uint16_t)job->rules.n);
	for (size_t i = 0; i < job->rules.n; i++) {
		const struct egress_rule *r = &job->rules.v[i];

		if (egress_rule_format(r, text, sizeof(text)) < 0)
			return -EINVAL;
		wbuf_put_u8(&w, (uint8_t)r->kind);
		wbuf_put_cstr(&w, text);
	}
	if (!wbuf_ok(&w))
		return -ENOBUFS;
	return (long)w.len;
}

/* One rule: u8 kind, NUL-terminated text, into RULES. */
static int
decode_rule(struct rbuf *r, struct egress_rules *rules)
{
	const uint8_t *text = r->data + r->pos;
	size_t left = rbuf_remaining(r);
	const uint8_t *nul;
	struct egress_rule rule;
	uint8_t kind;
	int e;

	if (rbuf_get_u8(r, &kind) < 0)
		return -EBADMSG;
	text++;
	left--;
	nul = memchr(text, '\0',
	    left < EGRESS_RULE_BUF ? left : EGRESS_RULE_BUF);
	if (nul == NULL)
		return left < EGRESS_RULE_BUF ? -EBADMSG : -EINVAL;
	r->pos += (size_t)(nul - text) + 1;
	e = egress_rule_parse((enum egress_rule_kind)kind, (const char *)text,
	    &rule);
	if (e < 0)
		return -EINVAL;
	return egress_rules_add(rules, &rule);
}

/* The fixed head of the job, up to the count of rules (into *NRULES). */
static int
decode_job_head(struct rbuf *r, struct egress_job *job, uint16_t *nrules)
{
	if (rbuf_get_u64(r, &job->job_id) < 0 ||
	    rbuf_get_u64(r, &job->max_bytes_out) < 0 ||
	    rbuf_get_u64(r, &job->max_bytes_in) < 0 ||
	    rbuf_get_u32(r, &job->max_connections) < 0 ||
	    rbuf_get_u32(r, &job->max_concurrent) < 0 ||
	    rbuf_get_u16(r, &job->port) < 0 || rbuf_get_u16(r, nrules) < 0)
		return -EBADMSG;
	if (job->port == 0)
		return -EINVAL;
	if (*nrules > EGRESS_MAX_RULES)
		return -E2BIG;
	return 0;
}

int
egress_job_decode(const uint8_t *body, size_t len, struct egress_job *job)
{
	struct rbuf r;
	uint16_t nrules = 0;
	int e;

	rbuf_init(&r, body, len);
	e = decode_job_head(&r, job, &nrules);
	for (uint16_t i = 0; e == 0 && i < nrules; i++)
		e = decode_rule(&r, &job->rules);
	if (e == 0)
		e = rbuf_end(&r);
	if (e < 0)
		egress_job_clear(job);
	return e;
}

/* ---- The report ---------------------------------------------------------- */

/* A string field of SIZE bytes, written whole (NUL-padded). */
static void
wbuf_put_field(struct wbuf *w, const char *s, size_t size)
{
	size_t n = strnlen(s, size - 1);

	for (size_t i = 0; i < size; i++)
		wbuf_put_u8(w, i < n ? (uint8_t)s[i] : 0);
}

/* Reads a field of SIZE bytes into OUT (SIZE bytes); -EBADMSG when short
 * or without a NUL. */
static int
rbuf_get_field(struct rbuf *r, char *out, size_t size)
{
	if (rbuf_remaining(r) < size ||
	    memchr(r->data + r->pos, '\0', size) == NULL)
		return -EBADMSG;
	memcpy(out, r->data + r->pos, size);
	r->pos += size;
	return 0;
}

static void
put_conn(struct wbuf *w, const struct egress_conn_rec *c)
{
	wbuf_put_field(w, c->host, sizeof(c->host));
	wbuf_put_u16(w, c->port);
	wbuf_put_field(w, c->address, sizeof(c->address));
	wbuf_put_u32(w, c->count);
	wbuf_put_u64(w, c->bytes_out);
	wbuf_put_u64(w, c->bytes_in);
}

static void
put_refusal(struct wbuf *w, const struct egress_refusal_rec *f)
{
	wbuf_put_field(w, f->host, sizeof(f->host));
	wbuf_put_u16(w, f->port);
	wbuf_put_u8(w, (uint8_t)f->reason);
	wbuf_put_field(w, f->detail, sizeof(f->detail));
	wbuf_put_u32(w, f->count);
}

/*
 * Layout: u64 job_id, connections, refusals, bytes_out, bytes_in; u32
 * nconn, nrefusal; u8 truncated, proxy_failed; then NCONN entries (host
 * EGRESS_HOST_BUF bytes, u16 port, address INET6_ADDRSTRLEN bytes, u32
 * count, u64 bytes_out, bytes_in) and NREFUSAL entries (host, u16 port,
 * u8 reason, detail EGRESS_DETAIL_MAX bytes, u32 count); a string field
 * is NUL-padded and holds a NUL.
 */
long
egress_report_encode(const struct egress_report *report, uint8_t *out,
    size_t size)
{
	struct wbuf w;

	if (report->nconn > EGRESS_REPORT_MAX ||
	    report->nrefusal > EGRESS_REPORT_MAX)
		return -ENOBUFS;
	wbuf_init(&w, out, size);
	wbuf_put_u64(&w, report->job_id);
	wbuf_put_u64(&w, report->connections);
	wbuf_put_u64(&w, report->refusals);
	wbuf_put_u64(&w, report->bytes_out);
	wbuf_put_u64(&w, report->bytes_in);
	wbuf_put_u32(&w, report->nconn);
	wbuf_put_u32(&w, report->nrefusal);
	wbuf_put_u8(&w, report->truncated ? 1 : 0);
	wbuf_put_u8(&w, report->proxy_failed ? 1 : 0);
	for (uint32_t i = 0; i < report->nconn; i++)
		put_conn(&w, &report->conn[i]);
	for (uint32_t i = 0; i < report->nrefusal; i++)
		put_refusal(&w, &report->refusal[i]);
	if (!wbuf_ok(&w))
		return -ENOBUFS;
	return (long)w.len;
}

static int
get_conn(struct rbuf *r, struct egress_conn_rec *c)
{
	if (rbuf_get_field(r, c->host, sizeof(c->host)) < 0 ||
	    rbuf_get_u16(r, &c->port) < 0 ||
	    rbuf_get_field(r, c->address, sizeof(c->address)) < 0 ||
	    rbuf_get_u32(r, &c->count) < 0 ||
	    rbuf_get_u64(r, &c->bytes_out) < 0 ||
	    rbuf_get_u64(r, &c->bytes_in) < 0)
		return -EBADMSG;
	return 0;
}

static int
get_refusal(struct rbuf *r, struct egress_refusal_rec *f)
{
	uint8_t reason;

	if (rbuf_get_field(r, f->host, sizeof(f->host)) < 0 ||
	    rbuf_get_u16(r, &f->port) < 0 || rbuf_get_u8(r, &reason) < 0 ||
	    rbuf_get_field(r, f->detail, sizeof(f->detail)) < 0 ||
	    rbuf_get_u32(r, &f->count) < 0)
		return -EBADMSG;
	if (reason > EGRESS_REASON_LAST)
		return -EINVAL;
	f->reason = (enum egress_reason)reason;
	return 0;
}

static int
get_report_head(struct rbuf *r, struct egress_report *report)
{
	uint8_t truncated, failed;

	if (rbuf_get_u64(r, &report->job_id) < 0 ||
	    rbuf_get_u64(r, &report->connections) < 0 ||
	    rbuf_get_u64(r, &report->refusals) < 0 ||
	    rbuf_get_u64(r, &report->bytes_out) < 0 ||
	    rbuf_get_u64(r, &report->bytes_in) < 0 ||
	    rbuf_get_u32(r, &report->nconn) < 0 ||
	    rbuf_get_u32(r, &report->nrefusal) < 0 ||
	    rbuf_get_u8(r, &truncated) < 0 || rbuf_get_u8(r, &failed) < 0)
		return -EBADMSG;
	if (report->nconn > EGRESS_REPORT_MAX ||
	    report->nrefusal > EGRESS_REPORT_MAX || truncated > 1 || failed > 1)
		return -EBADMSG;
	report->truncated = truncated != 0;
	report->proxy_failed = failed != 0;
	return 0;
}

int
egress_report_decode(const uint8_t *body, size_t len,
    struct egress_report *report)
{
	struct rbuf r;
	int e;

	memset(report, 0, sizeof(*report));
	rbuf_init(&r, body, len);
	e = get_report_head(&r, report);
	for (uint32_t i = 0; e == 0 && i < report->nconn; i++)
		e = get_conn(&r, &report->conn[i]);
	for (uint32_t i = 0; e == 0 && i < report->nrefusal; i++)
		e = get_refusal(&r, &report->refusal[i]);
	if (e == 0)
		e = rbuf_end(&r);
	if (e < 0)
		memset(report, 0, sizeof(*report));
	return e;
}

/* ---- Adding to a report ------------------------------------------------- */

/* Copies S into OUT (SIZE bytes), cut to fit. */
static void
copy_cut(char *out, size_t size, const char *s)
{
	size_t n = strnlen(s, size - 1);

	memcpy(out, s, n);
	out[n] = '\0';
}

void
egress_report_conn(struct egress_report *report, const char *host,
    uint16_t port, const char *address, uint64_t bytes_out, uint64_t bytes_in)
{
	struct egress_conn_rec *c = NULL;

	report->connections++;
	report->bytes_out += bytes_out;
	report->bytes_in += bytes_in;
	for (uint32_t i = 0; i < report->nconn && c == NULL; i++)
		if (report->conn[i].port == port &&
		    strncmp(report->conn[i].host, host, EGRESS_HOST_BUF - 1) ==
			0)
			c = &report->conn[i];
	if (c == NULL && report->nconn >= EGRESS_REPORT_MAX) {
		report->truncated = true;
		return;
	}
	if (c == NULL) {
		c = &report->conn[report->nconn++];
		memset(c, 0, sizeof(*c));
		copy_cut(c->host, sizeof(c->host), host);
		c->port = port;
	}
	copy_cut(c->address, sizeof(c->address), address ? address : "");
	c->count++;
	c->bytes_out += bytes_out;
	c->bytes_in += bytes_in;
}

/* HOST[0..LEN) made printable into OUT (SIZE bytes): every byte outside
 * 0x21..0x7e (and the backslash, so that the text reads back) as \xHH,
 * cut before an escape that does not fit. */
static void
printable(const char *host, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];
		bool plain = c >= 0x21 && c <= 0x7e && c != '\\';
		size_t need = plain ? 1 : 4;

		if (o + need >= size)
			break;
		if (plain)
			out[o] = (char)c;
		else
			snprintf(out + o, 5, "\\x%02x", c);
		o += need;
	}
	out[o] = '\0';
}

void
egress_report_refusal(struct egress_report *report, const char *host,
    size_t len, uint16_t port, enum egress_reason reason, const char *detail)
{
	char text[EGRESS_HOST_BUF] = {0};
	struct egress_refusal_rec *f = NULL;

	printable(host, len, text, sizeof(text));
	report->refusals++;
	for (uint32_t i = 0; i < report->nrefusal && f == NULL; i++)
		if (report->refusal[i].port == port &&
		    report->refusal[i].reason == reason &&
		    strcmp(report->refusal[i].host, text) == 0)
			f = &report->refusal[i];
	if (f == NULL && report->nrefusal >= EGRESS_REPORT_MAX) {
		report->truncated = true;
		return;
	}
	if (f == NULL) {
		f = &report->refusal[report->nrefusal++];
		memset(f, 0, sizeof(*f));
		memcpy(f->host, text, sizeof(text));
		f->port = port;
		f->reason = reason;
	}
	copy_cut(f->detail, sizeof(f->detail), detail ? detail : "");
	f->count++;
}
