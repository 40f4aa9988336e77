/*
 * egress_tls.c: the server name of the ClientHello that opens a CONNECT
 * tunnel (egress_parse.h, egress_tls_hello; RFC 8446 sections 4.1.2 and
 * 5.1, RFC 6066 section 3).
 *
 * The handshake message may be split over several records; it is read
 * in place through a table of the records' fragments (struct hs_view),
 * never copied whole. The records are walked in wire order and each
 * rule is decided as soon as the bytes it reads are in; the hello's body
 * is read only once all of it is in. So a hello split anywhere gets the
 * same answer as the whole of it.
 */
#include <string.h>

#include "egress_parse.h"

#define TLS_HANDSHAKE 0x16
#define TLS_CLIENT_HELLO 0x01
#define EXT_SERVER_NAME 0x0000
#define EXT_ECH 0xfe0d
#define NAME_TYPE_HOST 0x00

/* The handshake bytes present: the fragments of the records so far. */
struct hs_view {
	const uint8_t *buf;
	size_t nrec;
	size_t off[EGRESS_TLS_RECORDS_MAX]; /* a fragment's offset in buf */
	size_t len[EGRESS_TLS_RECORDS_MAX]; /* its bytes present */
	size_t avail; /* the sum of len[] */
};

/* Copies N handshake bytes from offset AT into OUT; false unless all of
 * them are present. */
static bool
hs_read(const struct hs_view *v, size_t at, void *out, size_t n)
{
	uint8_t *o = out;
	size_t i, base = 0, k;

	if (n > v->avail || at > v->avail - n)
		return false;
	for (i = 0; i < v->nrec && n > 0; base += v->len[i], i++) {
		if (at >= base + v->len[i])
			continue;
		k = base + v->len[i] - at;
		k = k < n ? k : n;
		memcpy(o, v->buf + v->off[i] + (at - base), k);
		o += k;
		at += k;
		n -= k;
	}
	return true;
}

/* The offset in the input just after handshake byte END - 1 (END > 0,
 * present). */
static size_t
wire_end(const struct hs_view *v, size_t end)
{
	size_t i, base = 0;

	for (i = 0; i + 1 < v->nrec && end > base + v->len[i]; i++)
		base += v->len[i];
	return v->off[i] + (end - base);
}

/* A cursor over the handshake bytes [at, end). */
struct cursor {
	const struct hs_view *v;
	size_t at;
	size_t end;
};

static bool
get(struct cursor *c, size_t n, size_t *val)
{
	uint8_t b[3];
	size_t i;

	if (n > c->end - c->at || !hs_read(c->v, c->at, b, n))
		return false;
	*val = 0;
	for (i = 0; i < n; i++)
		*val = *val << 8 | b[i];
	c->at += n;
	return true;
}

static bool
skip(struct cursor *c, size_t n)
{
	if (n > c->end - c->at)
		return false;
	c->at += n;
	return true;
}

/* One host_name entry at C (its type byte read): the name, copied to
 * H->sni. */
static enum egress_why
host_name(struct cursor *c, struct egress_tls_hello *h)
{
	enum egress_why w;
	size_t n;

	if (!get(c, 2, &n) || n > c->end - c->at)
		return EGRESS_WHY_TLS_LENGTH;
	/* RFC 6066 section 3: one name of each type. */
	if (h->kind == EGRESS_TLS_SNI)
		return EGRESS_WHY_TLS_TWO_NAMES;
	if (n > EGRESS_HOST_MAX)
		return EGRESS_WHY_HOST_TOO_LONG;
	hs_read(c->v, c->at, h->sni, n);
	h->sni[n] = '\0';
	if ((w = egress_host_why((const uint8_t *)h->sni, n)) !=
	    EGRESS_WHY_NONE)
		return w;
	h->sni_len = n;
	h->kind = EGRESS_TLS_SNI;
	c->at += n;
	return EGRESS_WHY_NONE;
}

/* The server_name extension's data, N bytes at handshake offset AT: a
 * ServerNameList<1..2^16-1> of host_name entries (RFC 6066 section 3;
 * no other type is defined, and one's length could not be known). */
static enum egress_why
server_name(const struct hs_view *v, size_t at, size_t n,
    struct egress_tls_hello *h)
{
	struct cursor c = {v, at, at + n};
	enum egress_why w;
	size_t list, type;

	if (!get(&c, 2, &list) || list == 0 || list != c.end - c.at)
		return EGRESS_WHY_TLS_LENGTH;
	while (c.at < c.end) {
		if (!get(&c, 1, &type))
			return EGRESS_WHY_TLS_LENGTH;
		if (type != NAME_TYPE_HOST)
			return EGRESS_WHY_TLS_NAME_TYPE;
		if ((w = host_name(&c, h)) != EGRESS_WHY_NONE)
			return w;
	}
	return EGRESS_WHY_NONE;
}

/* The extensions at C, which must end exactly at C->end. GREASE values
 * (RFC 8701) and every other type are skipped by their length. */
static enum egress_why
extensions(struct cursor *c, struct egress_tls_hello *h)
{
	bool sni = false;
	enum egress_why w;
	size_t type, n;

	while (c->at < c->end) {
		if (!get(c, 2, &type) || !get(c, 2, &n) || n > c->end - c->at)
			return EGRESS_WHY_TLS_LENGTH;
		if (type == EXT_SERVER_NAME) {
			/* RFC 8446 section 4.2: one extension of a type. */
			if (sni)
				return EGRESS_WHY_TLS_TWO_SNI;
			sni = true;
			if ((w = server_name(c->v, c->at, n, h)) != 0)
				return w;
		} else if (type == EXT_ECH) {
			if (h->ech)
				return EGRESS_WHY_TLS_TWO_ECH;
			h->ech = true;
		}
		c->at += n;
	}
	return EGRESS_WHY_NONE;
}

/* The ClientHello's body, HLEN bytes after its 4-byte header, all
 * present (RFC 8446 section 4.1.2): legacy_version, random,
 * legacy_session_id<0..32>, cipher_suites<2..2^16-2>,
 * legacy_compression_methods<1..2^8-1>, then extensions, which TLS 1.2
 * may omit (RFC 5246 section 7.4.1.2). */
static enum egress_why
hello_body(const struct hs_view *v, size_t hlen, struct egress_tls_hello *h)
{
	struct cursor c = {v, 4, 4 + hlen};
	size_t n;

	if (!skip(&c, 2 + 32) || !get(&c, 1, &n) || n > 32 || !skip(&c, n))
		return EGRESS_WHY_TLS_LENGTH;
	if (!get(&c, 2, &n) || n < 2 || n % 2 != 0 || !skip(&c, n))
		return EGRESS_WHY_TLS_LENGTH;
	if (!get(&c, 1, &n) || n < 1 || !skip(&c, n))
		return EGRESS_WHY_TLS_LENGTH;
	if (c.at == c.end)
		return EGRESS_WHY_NONE;
	if (!get(&c, 2, &n) || n != c.end - c.at)
		return EGRESS_WHY_TLS_LENGTH;
	return extensions(&c, h);
}

/*
 * The record header at P (N bytes present, N >= 1), as far as N has it:
 * type handshake, version 3.0 to 3.4, a length 1..2^14 (RFC 8446
 * section 5.1). For the FIRST record a wrong version is "not TLS"
 * (H->kind), for a later one a refusal. *RLEN gets the length.
 */
static enum egress_status
record_header(const uint8_t *p, size_t n, bool first, size_t *rlen,
    struct egress_tls_hello *h, enum egress_why *why)
{
	if (p[0] != TLS_HANDSHAKE) {
		*why = EGRESS_WHY_TLS_RECORD;
		return EGRESS_REFUSED;
	}
	if ((n >= 2 && p[1] != 3) || (n >= 3 && p[2] > 4)) {
		if (first) {
			h->kind = EGRESS_TLS_NOT_TLS;
			return EGRESS_DONE;
		}
		*why = EGRESS_WHY_TLS_RECORD;
		return EGRESS_REFUSED;
	}
	if (n < 5)
		return EGRESS_NEED_MORE;
	*rlen = (size_t)p[3] << 8 | p[4];
	if (*rlen == 0 || *rlen > EGRESS_TLS_RECORD_MAX) {
		*why = EGRESS_WHY_TLS_RECORD;
		return EGRESS_REFUSED;
	}
	return EGRESS_DONE;
}

/* The handshake header, as far as V has it: a client_hello of at most
 * EGRESS_TLS_HELLO_MAX bytes. EGRESS_DONE with *HLEN once the whole
 * message is present. */
static enum egress_status
hs_header(const struct hs_view *v, size_t *hlen, enum egress_why *why)
{
	uint8_t hd[4];

	if (!hs_read(v, 0, hd, 1))
		return EGRESS_NEED_MORE;
	if (hd[0] != TLS_CLIENT_HELLO) {
		*why = EGRESS_WHY_TLS_NOT_HELLO;
		return EGRESS_REFUSED;
	}
	if (!hs_read(v, 0, hd, 4))
		return EGRESS_NEED_MORE;
	*hlen = (size_t)hd[1] << 16 | (size_t)hd[2] << 8 | hd[3];
	if (*hlen > EGRESS_TLS_HELLO_MAX - 4) {
		*why = EGRESS_WHY_TLS_TOO_BIG;
		return EGRESS_REFUSED;
	}
	return v->avail >= 4 + *hlen ? EGRESS_DONE : EGRESS_NEED_MORE;
}

/* Walks the records of BUF (LEN bytes) into V until the whole hello is
 * in (EGRESS_DONE, *HLEN), the first record is not TLS (EGRESS_DONE,
 * H->kind), more bytes are needed, or a rule is broken. */
static enum egress_status
gather(const uint8_t *buf, size_t len, struct hs_view *v, size_t *hlen,
    struct egress_tls_hello *h, enum egress_why *why)
{
	enum egress_status st;
	size_t w = 0, rlen = 0, have;

	for (;;) {
		if ((st = hs_header(v, hlen, why)) != EGRESS_NEED_MORE)
			return st;
		/* W is past the last record: a partial one ends beyond LEN. */
		if (len <= w)
			return EGRESS_NEED_MORE;
		if (v->nrec == EGRESS_TLS_RECORDS_MAX) {
			*why = EGRESS_WHY_TLS_TOO_BIG;
			return EGRESS_REFUSED;
		}
		st = record_header(buf + w, len - w, v->nrec == 0, &rlen, h,
		    why);
		if (st != EGRESS_DONE || h->kind == EGRESS_TLS_NOT_TLS)
			return st;
		have = len - w - 5;
		v->off[v->nrec] = w + 5;
		v->len[v->nrec] = have < rlen ? have : rlen;
		v->avail += v->len[v->nrec++];
		w += 5 + rlen;
	}
}

/* The first bytes of an SSLv2-compatible hello: a 2-byte length with
 * the high bit set, then message type 1 (RFC 5246 appendix E.2). */
static enum egress_status
sslv2(const uint8_t *buf, size_t len, struct egress_tls_hello *h)
{
	if (len < 3)
		return EGRESS_NEED_MORE;
	h->kind = buf[2] == TLS_CLIENT_HELLO ? EGRESS_TLS_SSLV2
					     : EGRESS_TLS_NOT_TLS;
	return EGRESS_DONE;
}

enum egress_status
egress_tls_hello(const uint8_t *buf, size_t len, struct egress_tls_hello *h,
    enum egress_why *why)
{
	struct hs_view v = {.buf = buf};
	enum egress_status st;
	size_t hlen = 0;

	memset(h, 0, sizeof(*h));
	*why = EGRESS_WHY_NONE;
	if (len == 0)
		return EGRESS_NEED_MORE;
	if (buf[0] & 0x80)
		return sslv2(buf, len, h);
	if (buf[0] != TLS_HANDSHAKE) {
		h->kind = EGRESS_TLS_NOT_TLS;
		return EGRESS_DONE;
	}
	st = gather(buf, len, &v, &hlen, h, why);
	if (st == EGRESS_DONE && h->kind != EGRESS_TLS_NOT_TLS &&
	    (*why = hello_body(&v, hlen, h)) != EGRESS_WHY_NONE)
		st = EGRESS_REFUSED;
	if (st != EGRESS_DONE) {
		memset(h, 0, sizeof(*h));
		return st;
	}
	if (h->kind == 0) {
		h->kind = EGRESS_TLS_NO_SNI;
		h->wire_len = wire_end(&v, 4 + hlen);
	} else if (h->kind == EGRESS_TLS_SNI) {
		h->wire_len = wire_end(&v, 4 + hlen);
	}
	return EGRESS_DONE;
}
