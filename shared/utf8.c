/* utf8.c: see utf8.h. Decoding follows RFC 3629 section 4's syntax. */
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the well-formed sequence at P (N bytes left), or 0. */
static size_t
seq_len(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];

	if (c >= 0x01 && c <= 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return n >= 2 && (p[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		uint8_t lo = c == 0xe0 ? 0xa0 : 0x80;
		uint8_t hi = c == 0xed ? 0x9f : 0xbf;

		return n >= 3 && p[1] >= lo && p[1] <= hi &&
			(p[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		uint8_t lo = c == 0xf0 ? 0x90 : 0x80;
		uint8_t hi = c == 0xf4 ? 0x8f : 0xbf;

		return n >= 4 && p[1] >= lo && p[1] <= hi &&
			(p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
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
