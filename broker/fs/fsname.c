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

/*
 * Invisible characters that change how a name reads: Unicode's format
 * characters (General_Category Cf: bidirectional controls, zero-width
 * characters, the soft hyphen, tag characters...), the line and paragraph
 * separators (Zl U+2028, Zp U+2029), and every Default_Ignorable_Code_Point
 * (fillers such as U+3164 HANGUL FILLER, the combining grapheme joiner
 * U+034F, variation selectors U+FE00..U+FE0F and U+E0100..U+E01EF), which
 * render as nothing. A right-to-left override (U+202E) makes "txt.exe"
 * show as "exe.txt" and a zero-width space or filler makes two different
 * names look the same (CVE-2021-42574, "Trojan Source"; Unicode Technical
 * Report #36). The ranges are every Cf, Zl and Zp code point of Unicode
 * 15.1 (DerivedGeneralCategory.txt) merged with Default_Ignorable_Code_Point
 * (DerivedCoreProperties.txt). Sorted, inclusive, disjoint.
 */
static const struct {
	uint32_t lo, hi;
} invisible[] = {
    {0x00ad, 0x00ad}, /* soft hyphen */
    {0x034f, 0x034f}, /* combining grapheme joiner */
    {0x0600, 0x0605}, /* Arabic number signs */
    {0x061c, 0x061c}, /* Arabic letter mark (bidi) */
    {0x06dd, 0x06dd}, {0x070f, 0x070f}, {0x0890, 0x0891}, {0x08e2, 0x08e2},
    {0x115f, 0x1160}, /* Hangul choseong and jungseong fillers */
    {0x17b4, 0x17b5}, /* Khmer inherent vowels */
    {0x180b, 0x180f}, /* Mongolian variation selectors, vowel sep. */
    {0x200b, 0x200f}, /* zero width space..right-to-left mark */
    {0x2028, 0x202e}, /* line, paragraph separator; bidi embeddings,
			     * overrides */
    {0x2060, 0x206f}, /* word joiner, invisible operators, bidi
			     * isolates, deprecated format characters */
    {0x3164, 0x3164}, /* Hangul filler */
    {0xfe00, 0xfe0f}, /* variation selectors */
    {0xfeff, 0xfeff}, /* zero width no-break space (BOM) */
    {0xffa0, 0xffa0}, /* halfwidth Hangul filler */
    {0xfff0, 0xfffb}, /* reserved ignorables; interlinear annotation */
    {0x110bd, 0x110bd}, {0x110cd, 0x110cd},
    {0x13430, 0x1343f}, /* Egyptian hieroglyph format controls */
    {0x1bca0, 0x1bca3}, /* shorthand format controls */
    {0x1d173, 0x1d17a}, /* musical symbol format controls */
    {0xe0000, 0xe0fff}, /* tags, variation selectors supplement and the
			     * rest of the ignorable plane-14 block */
};

/* Whether CP must be escaped: C0, DEL and C1 controls (a terminal acts
 * on them) and the invisible characters above. */
static bool
is_control(uint32_t cp)
{
	size_t lo = 0, hi = sizeof(invisible) / sizeof(invisible[0]);

	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return true;
	if (cp < invisible[0].lo)
		return false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < invisible[mid].lo)
			hi = mid;
		else if (cp > invisible[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
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
		case '\\':
			out[o++] = '\\';
			break;
		case '\n':
			out[o++] = 'n';
			break;
		case '\t':
			out[o++] = 't';
			break;
		case '\r':
			out[o++] = 'r';
			break;
		case 0x1b:
			out[o++] = 'e';
			break;
		default:
			/* A C1 control or an invisible character (two to
			 * four valid bytes) or a byte that is not UTF-8:
			 * each byte as \xHH. */
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
