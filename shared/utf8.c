/* utf8.c: see utf8.h. Decoding follows RFC 3629 section 4's syntax. */
#include "utf8.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plant.h"

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
			hi = PLANTED(utf8_surrogates_accepted) ? 0xbf : 0x9f;
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

size_t
term_escape(const void *in, size_t len, char *out)
{
	const uint8_t *p = in;
	char *o = out;

	for (size_t i = 0; i < len; i++) {
		uint8_t c = p[i];

		if (c == '\t' || c == '\n' || c == '\r' ||
		    (c >= 0x20 && c < 0x7f) || (c >= 0x80 && c != 0xc2)) {
			*o++ = (char)c;
		} else if (c == 0x7f) {
			*o++ = '^';
			*o++ = '?';
		} else if (c < 0x20) {
			*o++ = '^';
			*o++ = (char)(c + 0x40);
		} else if (i + 1 < len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f) {
			/* C1 control U+0080..U+009F: ESC plus its 7-bit form. */
			*o++ = '^';
			*o++ = '[';
			*o++ = (char)(p[i + 1] - 0x40);
			i++;
		} else {
			*o++ = (char)c; /* 0xc2 starting an ordinary character */
		}
	}
	return (size_t)(o - out);
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
	while (cut > 0 && (buf[cut] == '\0' ||
			   strchr(" ,;:.)", buf[cut]) == NULL))
		cut--;
	if (cut == 0) {
		/* One long word: cut on a UTF-8 boundary (never before a
		 * continuation byte). */
		cut = size - sizeof(more);
		while (cut > 0 && ((unsigned char)buf[cut] & 0xc0) == 0x80)
			cut--;
	}
	while (cut > 0 && (buf[cut - 1] == ' ' || buf[cut - 1] == ',' ||
			   buf[cut - 1] == ';' || buf[cut - 1] == ':'))
		cut--;
	memcpy(buf + cut, more, sizeof(more));
	return cut + sizeof(more) - 1;
}
