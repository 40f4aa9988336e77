/*
 * fsname.c: showing workspace names escaped (fsname.h). Pure.
 *
 * UTF-8 well-formedness is RFC 3629 section 4 (utf8_decode,
 * shared/utf8.h): no overlong forms, no surrogates U+D800..U+DFFF,
 * nothing above U+10FFFF. Escaping is byte-wise and C-like so that it can
 * be undone without ambiguity: a backslash in the name is itself escaped,
 * so every backslash in the output starts an escape.
 */
#include "fsname.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Control characters a terminal acts on: C0, DEL and C1. */
static bool
is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

bool
fsname_is_plain(const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t i = 0;

	while (i < len) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);

		if (n == 0 || is_control(cp) || cp == '\\')
			return false;
		i += n;
	}
	return true;
}

char *
fsname_escape(const char *name, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)name;
	size_t i = 0, o = 0;
	char *out;

	/* At most 4 output bytes per input byte ("\xHH"). */
	if (len > (SIZE_MAX - 1) / 4)
		return NULL;
	out = malloc(4 * len + 1);
	if (out == NULL)
		return NULL;
	while (i < len) {
		uint32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp), k;

		if (n > 0 && !is_control(cp) && cp != '\\') {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		out[o++] = '\\';
		switch (n == 1 ? cp : UINT32_MAX) {
		case '\\': out[o++] = '\\'; break;
		case '\n': out[o++] = 'n'; break;
		case '\t': out[o++] = 't'; break;
		case '\r': out[o++] = 'r'; break;
		case 0x1b: out[o++] = 'e'; break;
		default:
			/* A C1 control (two valid bytes) or a byte that
			 * is not UTF-8: each byte as \xHH. */
			if (n == 0)
				n = 1;
			for (k = 0; k < n; k++) {
				if (k > 0)
					out[o++] = '\\';
				out[o++] = 'x';
				out[o++] = hex[s[i + k] >> 4];
				out[o++] = hex[s[i + k] & 0xf];
			}
			break;
		}
		i += n;
	}
	out[o] = '\0';
	return out;
}
