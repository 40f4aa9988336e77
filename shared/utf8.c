/* utf8.c: see utf8.h. Decoding follows RFC 3629 section 4's syntax. */
#include "utf8.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t
utf8_decode(const void *p, size_t n, uint32_t *cp)
{
	const unsigned char *s = p;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1fu;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0fu;
		if (s[0] == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (s[0] == 0xed)
			/* surrogates U+D800..U+DFFF */
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07u;
		if (s[0] == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (s[0] == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0; /* continuation byte, C0, C1, F5..FF */
	}
	if (n < len)
		return 0;
	/* The second byte has the narrowed range, the others 80..BF. */
	for (i = 1; i < len; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;
		c = (c << 6) | (s[i] & 0x3fu);
		lo = 0x80;
		hi = 0xbf;
	}
	*cp = c;
	return len;
}

/* Length of the well-formed sequence at P (N bytes left), or 0; a NUL
 * byte is not one here (utf8_sanitize replaces it). */
static size_t
seq_len(const uint8_t *p, size_t n)
{
	uint32_t cp;

	return p[0] == 0 ? 0 : utf8_decode(p, n, &cp);
}

char *
utf8_sanitize(const void *data, size_t len, size_t *outlen)
{
	const uint8_t *p = data;
	char *out, *o;
	size_t i = 0;

	/* Worst case: every byte becomes the 3-byte U+FFFD. */
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	out = malloc(len * 3 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	while (i < len) {
		size_t n = seq_len(p + i, len - i);

		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(o, p + i, n);
		o += n;
		i += n;
	}
	*o = '\0';
	if (outlen != NULL)
		*outlen = (size_t)(o - out);
	return out;
}

/* Whether P[0..N) (N < 4) is a proper prefix of a well-formed sequence
 * (utf8_decode): its length if so, else 0. The missing bytes are filled
 * with 0x80 and then with 0xA0, between them in range after every lead
 * byte (E0 needs A0..BF, ED 80..9F, F0 90..BF, F4 80..8F). */
static size_t
utf8_prefix(const uint8_t *p, size_t n)
{
	static const uint8_t pad[] = {0x80, 0xa0};
	uint8_t t[4];
	uint32_t cp;
	size_t l;

	if (n == 0 || n >= sizeof(t))
		return 0;
	for (size_t k = 0; k < sizeof(pad); k++) {
		memcpy(t, p, n);
		memset(t + n, pad[k], sizeof(t) - n);
		if ((l = utf8_decode(t, sizeof(t), &cp)) > n)
			return l;
	}
	return 0;
}

/* Escapes the character at P (N >= 1 bytes) to *O, moving *O on.
 * Returns the bytes of P used, or 0 when P[0..N) is a proper prefix of
 * a sequence (nothing written: more input is needed). */
static size_t
escape_one(const uint8_t *p, size_t n, char **o)
{
	uint8_t c = p[0];
	uint32_t cp;
	size_t l;

	if (c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c < 0x7f)) {
		*(*o)++ = (char)c;
		return 1;
	}
	if (c == 0x7f) {
		*(*o)++ = '^';
		*(*o)++ = '?';
		return 1;
	}
	if (c < 0x20) {
		*(*o)++ = '^';
		*(*o)++ = (char)(c + 0x40);
		return 1;
	}
	l = utf8_decode(p, n, &cp);
	if (l == 0 && n < 4 && utf8_prefix(p, n) != 0)
		return 0;
	if (l == 0) {
		memcpy(*o, "\xef\xbf\xbd", 3); /* U+FFFD */
		*o += 3;
		return 1;
	}
	if (cp >= 0x80 && cp <= 0x9f) {
		/* C1 control U+0080..U+009F: ESC plus its 7-bit form. */
		*(*o)++ = '^';
		*(*o)++ = '[';
		*(*o)++ = (char)(cp - 0x40);
		return l;
	}
	memcpy(*o, p, l);
	*o += l;
	return l;
}

size_t
term_escape_chunk(struct term_escape_state *st, const void *in, size_t len,
    char *out)
{
	const uint8_t *p = in;
	char *o = out;
	size_t i = 0, l;

	/* First the sequence the last chunk ended inside of, completed
	 * with this chunk's first bytes. */
	while (st->nheld > 0) {
		uint8_t t[4];
		size_t h = st->nheld, k = len < 4 - h ? len : 4 - h;

		memcpy(t, st->held, h);
		memcpy(t + h, p, k);
		l = escape_one(t, h + k, &o);
		if (l == 0) {
			/* Still a prefix: this whole chunk (k == len) is
			 * part of it. */
			memcpy(st->held + h, p, k);
			st->nheld = (uint8_t)(h + k);
			return (size_t)(o - out);
		}
		if (l >= h) {
			i = l - h;
			st->nheld = 0;
		} else {
			/* A held byte that turned out to start nothing:
			 * written as U+FFFD; the rest is judged again. */
			memmove(st->held, st->held + l, h - l);
			st->nheld = (uint8_t)(h - l);
		}
	}
	while (i < len) {
		l = escape_one(p + i, len - i, &o);
		if (l == 0) {
			/* A proper prefix (under 4 bytes) ends the chunk. */
			memcpy(st->held, p + i, len - i);
			st->nheld = (uint8_t)(len - i);
			break;
		}
		i += l;
	}
	return (size_t)(o - out);
}

size_t
term_escape_end(struct term_escape_state *st, char *out)
{
	size_t n = 0;

	for (size_t k = 0; k < st->nheld; k++, n += 3)
		memcpy(out + n, "\xef\xbf\xbd", 3);
	st->nheld = 0;
	return n;
}

size_t
term_escape(const void *in, size_t len, char *out)
{
	struct term_escape_state st = {0};
	size_t n = term_escape_chunk(&st, in, len, out);

	return n + term_escape_end(&st, out + n);
}

size_t
fmt_words(char *buf, size_t size, const char *fmt, ...)
{
	static const char more[] = " ...";
	va_list ap;
	size_t cut;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (size > 0)
			buf[0] = '\0';
		return 0;
	}
	if ((size_t)n < size)
		return (size_t)n;
	if (size <= sizeof(more)) {
		/* No room for a word and the marker: nothing rather than
		 * a fragment. */
		if (size > 0)
			buf[0] = '\0';
		return 0;
	}
	/* Cut: the marker must fit after the last kept byte. */
	cut = size - sizeof(more);
	/* The last word that ends within the room: a space or a
	 * punctuation mark right after it. */
	while (
	    cut > 0 && (buf[cut] == '\0' || strchr(" ,;:.)", buf[cut]) == NULL))
		cut--;
	if (cut == 0) {
		/* One long word: cut on a UTF-8 boundary (never before a
		 * continuation byte). */
		cut = size - sizeof(more);
		while (cut > 0 && ((unsigned char)buf[cut] & 0xc0) == 0x80)
			cut--;
	}
	while (cut > 0 &&
	    (buf[cut - 1] == ' ' || buf[cut - 1] == ',' ||
		buf[cut - 1] == ';' || buf[cut - 1] == ':'))
		cut--;
	memcpy(buf + cut, more, sizeof(more));
	return cut + sizeof(more) - 1;
}
