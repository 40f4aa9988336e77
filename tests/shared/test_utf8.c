/*
 * test_utf8.c: utf8_sanitize (shared/utf8.c). Valid UTF-8 passes unchanged;
 * every byte that does not start a well-formed sequence (RFC 3629) becomes
 * U+FFFD, and so does NUL; the output is always valid UTF-8, which random
 * inputs check against an independent validator written below.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

#define FFFD "\xef\xbf\xbd"

/*
 * An independent RFC 3629 validator: decodes each sequence to its code
 * point and rejects overlong forms by the minimum value of each length,
 * surrogates, values over U+10FFFF, bad continuations and NUL (which the
 * sanitizer must not emit). Returns the offset of the first bad byte, or
 * -1 when all of S is valid.
 */
static long
first_invalid(const uint8_t *s, size_t n)
{
	static const uint32_t min_cp[] = {0, 0x1, 0x80, 0x800, 0x10000};
	size_t i = 0;

	while (i < n) {
		uint8_t b = s[i];
		size_t len;
		uint32_t cp;

		if (b < 0x80) {
			len = 1;
			cp = b;
		} else if ((b & 0xe0) == 0xc0) {
			len = 2;
			cp = b & 0x1fu;
		} else if ((b & 0xf0) == 0xe0) {
			len = 3;
			cp = b & 0x0fu;
		} else if ((b & 0xf8) == 0xf0) {
			len = 4;
			cp = b & 0x07u;
		} else {
			return (long)i;
		}
		if (n - i < len)
			return (long)i;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (long)i;
			cp = (cp << 6) | (s[i + k] & 0x3fu);
		}
		if (cp < min_cp[len] || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return (long)i;
		i += len;
	}
	return -1;
}

/* Appends the UTF-8 encoding of CP (assumed valid) to OUT; returns bytes. */
static size_t
encode(uint32_t cp, uint8_t *out)
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xc0 | (cp >> 6));
		out[1] = (uint8_t)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xe0 | (cp >> 12));
		out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (uint8_t)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (uint8_t)(0xf0 | (cp >> 18));
	out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (uint8_t)(0x80 | (cp & 0x3f));
	return 4;
}

/* A fixed-seed generator, so that a failure can be replayed. */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

/* Sanitizes IN (LEN bytes) and expects exactly WANT (WANT_LEN bytes). */
static void
expect(const void *in, size_t len, const char *want, size_t want_len)
{
	size_t outlen = 12345;
	char *out = utf8_sanitize(in, len, &outlen);

	cr_assert_not_null(out);
	cr_assert_eq(outlen, want_len, "length %zu, want %zu", outlen,
	    want_len);
	cr_assert_eq(memcmp(out, want, want_len), 0, "wrong bytes");
	cr_assert_eq(out[outlen], '\0', "not NUL-terminated");
	free(out);
}

#define EXPECT(in, want) expect(in, sizeof(in) - 1, want, sizeof(want) - 1)
#define SAME(in) EXPECT(in, in)

/* ---- valid input is unchanged ---- */

Test(utf8, empty)
{
	size_t n = 99;
	char *out = utf8_sanitize("", 0, &n);

	cr_assert_not_null(out);
	cr_assert_eq(n, 0);
	cr_assert_str_eq(out, "");
	free(out);
}

Test(utf8, outlen_may_be_null)
{
	char *out = utf8_sanitize("ab\xff", 3, NULL);

	cr_assert_not_null(out);
	cr_assert_str_eq(out, "ab" FFFD);
	free(out);
}

Test(utf8, ascii_unchanged)
{
	char all[128];

	SAME("hello, world\n\ttabs and \x01\x1f\x7f controls");
	for (int i = 1; i < 128; i++)
		all[i - 1] = (char)i;
	expect(all, 127, all, 127);
}

Test(utf8, multibyte_unchanged)
{
	SAME("\xc2\x80"); /* U+0080, smallest 2-byte */
	SAME("\xc3\xa9t\xc3\xa9"); /* "été" */
	SAME("\xdf\xbf"); /* U+07FF, largest 2-byte */
	SAME("\xe0\xa0\x80"); /* U+0800, smallest 3-byte */
	SAME("\xe2\x82\xac"); /* U+20AC euro sign */
	SAME("\xed\x9f\xbf"); /* U+D7FF, below the surrogates */
	SAME("\xee\x80\x80"); /* U+E000, above the surrogates */
	SAME("\xef\xbf\xbd"); /* U+FFFD itself */
	SAME("\xef\xbf\xbf"); /* U+FFFF */
	SAME("\xf0\x90\x80\x80"); /* U+10000, smallest 4-byte */
	SAME("\xf0\x9f\x98\x80"); /* U+1F600 */
	SAME("\xf4\x8f\xbf\xbf"); /* U+10FFFF, the largest */
	SAME("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z");
}

/* ---- each invalid byte becomes U+FFFD ---- */

Test(utf8, lone_continuation_bytes)
{
	EXPECT("\x80", FFFD);
	EXPECT("\xbf", FFFD);
	EXPECT("a\x80"
	       "b",
	    "a" FFFD "b");
	EXPECT("\x80\x80\x80", FFFD FFFD FFFD);
	/* A valid sequence followed by one continuation too many. */
	EXPECT("\xc3\xa9\xa9", "\xc3\xa9" FFFD);
}

Test(utf8, overlong_forms)
{
	EXPECT("\xc0\x80", FFFD FFFD); /* overlong NUL */
	EXPECT("\xc1\xbf", FFFD FFFD); /* overlong U+007F */
	EXPECT("\xc0\xaf", FFFD FFFD); /* overlong '/' */
	EXPECT("\xe0\x80\x80", FFFD FFFD FFFD); /* overlong NUL, 3 bytes */
	EXPECT("\xe0\x9f\xbf", FFFD FFFD FFFD); /* overlong U+07FF */
	EXPECT("\xf0\x80\x80\x80", FFFD FFFD FFFD FFFD);
	EXPECT("\xf0\x8f\xbf\xbf", FFFD FFFD FFFD FFFD); /* overlong U+FFFF */
}

Test(utf8, surrogates)
{
	EXPECT("\xed\xa0\x80", FFFD FFFD FFFD); /* U+D800 */
	EXPECT("\xed\xbf\xbf", FFFD FFFD FFFD); /* U+DFFF */
	EXPECT("\xed\xa0\xbd\xed\xb8\x80", /* CESU-8 pair */
	    FFFD FFFD FFFD FFFD FFFD FFFD);
}

Test(utf8, beyond_u10ffff)
{
	EXPECT("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD);
	EXPECT("\xf7\xbf\xbf\xbf", FFFD FFFD FFFD FFFD);
}

Test(utf8, bytes_f5_to_ff)
{
	for (int b = 0xf5; b <= 0xff; b++) {
		uint8_t in[2] = {(uint8_t)b, 'x'};

		expect(in, 2, FFFD "x", 4);
	}
	EXPECT("\xfe\xff", FFFD FFFD);
	/* Five- and six-byte forms of the old ISO 10646 are not UTF-8. */
	EXPECT("\xf8\x88\x80\x80\x80", FFFD FFFD FFFD FFFD FFFD);
	EXPECT("\xfc\x84\x80\x80\x80\x80", FFFD FFFD FFFD FFFD FFFD FFFD);
}

Test(utf8, truncated_sequence_at_end)
{
	EXPECT("a\xc3", "a" FFFD);
	EXPECT("a\xe2\x82", "a" FFFD FFFD);
	EXPECT("a\xe2", "a" FFFD);
	EXPECT("a\xf0\x9f\x98", "a" FFFD FFFD FFFD);
	EXPECT("a\xf0\x9f", "a" FFFD FFFD);
	EXPECT("a\xf0", "a" FFFD);
}

Test(utf8, truncated_sequence_in_the_middle)
{
	EXPECT("\xe2\x82z", FFFD FFFD "z");
	EXPECT("\xf0\x9f\x98z", FFFD FFFD FFFD "z");
	EXPECT("\xc3\xc3\xa9", FFFD "\xc3\xa9");
	EXPECT("\xe2\xe2\x82\xac", FFFD "\xe2\x82\xac");
}

Test(utf8, nul_becomes_fffd)
{
	EXPECT("\0", FFFD);
	EXPECT("a\0b", "a" FFFD "b");
	EXPECT("\0\0", FFFD FFFD);
}

/* The result is a C string: strlen() sees all of it. */
Test(utf8, result_is_a_c_string)
{
	static const uint8_t in[] = {'a', 0, 0xff, 0, 'b'};
	size_t n;
	char *out = utf8_sanitize(in, sizeof(in), &n);

	cr_assert_not_null(out);
	cr_assert_eq(strlen(out), n);
	free(out);
}

Test(utf8, worst_case_growth)
{
	uint8_t in[4096];
	size_t n;
	char *out;

	memset(in, 0xff, sizeof(in));
	out = utf8_sanitize(in, sizeof(in), &n);
	cr_assert_not_null(out);
	cr_assert_eq(n, 3 * sizeof(in));
	cr_assert_eq(first_invalid((const uint8_t *)out, n), -1);
	free(out);
}

/* ---- the validator itself, so that the random test means something ---- */

Test(utf8_validator, agrees_on_known_cases)
{
	cr_assert_eq(first_invalid((const uint8_t *)"a\xc3\xa9", 3), -1);
	cr_assert_eq(first_invalid((const uint8_t *)"\xf4\x8f\xbf\xbf", 4), -1);
	cr_assert_eq(first_invalid((const uint8_t *)"a\x80", 2), 1);
	cr_assert_eq(first_invalid((const uint8_t *)"\xc0\x80", 2), 0);
	cr_assert_eq(first_invalid((const uint8_t *)"\xe0\x80\x80", 3), 0);
	cr_assert_eq(first_invalid((const uint8_t *)"\xed\xa0\x80", 3), 0);
	cr_assert_eq(first_invalid((const uint8_t *)"\xf4\x90\x80\x80", 4), 0);
	cr_assert_eq(first_invalid((const uint8_t *)"\xf5", 1), 0);
	cr_assert_eq(first_invalid((const uint8_t *)"ab\xe2\x82", 4), 2);
	cr_assert_eq(first_invalid((const uint8_t *)"a\0", 2), 1);
}

/* ---- properties over random input ---- */

/* Bytes that exercise the decoder's edges more often than uniform bytes. */
static uint8_t
interesting_byte(void)
{
	static const uint8_t pick[] = {
	    0x00,
	    'a',
	    0x7f,
	    0x80,
	    0x8f,
	    0x90,
	    0x9f,
	    0xa0,
	    0xbf,
	    0xc0,
	    0xc1,
	    0xc2,
	    0xdf,
	    0xe0,
	    0xe1,
	    0xec,
	    0xed,
	    0xee,
	    0xef,
	    0xf0,
	    0xf1,
	    0xf3,
	    0xf4,
	    0xf5,
	    0xf8,
	    0xfe,
	    0xff,
	};
	uint32_t r = rng();

	if (r & 1)
		return (uint8_t)(r >> 8);
	return pick[(r >> 8) % sizeof(pick)];
}

Test(utf8, random_input_gives_valid_output)
{
	uint8_t in[256];

	for (int iter = 0; iter < 10000; iter++) {
		size_t len = rng() % sizeof(in);
		size_t n, n2;
		char *out, *again;
		long bad;

		for (size_t i = 0; i < len; i++)
			in[i] = interesting_byte();
		out = utf8_sanitize(in, len, &n);
		cr_assert_not_null(out);
		cr_assert(n <= 3 * len);
		cr_assert_eq(out[n], '\0');
		bad = first_invalid((const uint8_t *)out, n);
		cr_assert_eq(bad, -1, "iteration %d: invalid output at %ld",
		    iter, bad);
		/* Valid input comes back unchanged, so sanitizing is idempotent. */
		again = utf8_sanitize(out, n, &n2);
		cr_assert_not_null(again);
		cr_assert_eq(n2, n, "iteration %d: not idempotent", iter);
		cr_assert_eq(memcmp(out, again, n), 0);
		/* And input the validator accepts is returned as it was. */
		if (first_invalid(in, len) == -1) {
			cr_assert_eq(n, len);
			cr_assert_eq(memcmp(out, in, len), 0);
		}
		free(again);
		free(out);
	}
}

Test(utf8, random_valid_text_unchanged)
{
	uint8_t in[4 * 64];

	for (int iter = 0; iter < 2000; iter++) {
		size_t len = 0, n;
		int count = (int)(rng() % 64);
		char *out;

		for (int k = 0; k < count; k++) {
			uint32_t cp;

			/* Spread code points over every encoded length. */
			switch (rng() % 4) {
			case 0:
				cp = 1 + rng() % 0x7f;
				break;
			case 1:
				cp = 0x80 + rng() % (0x800 - 0x80);
				break;
			case 2:
				cp = 0x800 + rng() % (0x10000 - 0x800);
				if (cp >= 0xd800 && cp <= 0xdfff)
					cp -= 0x800;
				break;
			default:
				cp = 0x10000 + rng() % (0x110000 - 0x10000);
				break;
			}
			len += encode(cp, in + len);
		}
		cr_assert_eq(first_invalid(in, len), -1);
		out = utf8_sanitize(in, len, &n);
		cr_assert_not_null(out);
		cr_assert_eq(n, len, "iteration %d", iter);
		cr_assert_eq(memcmp(out, in, len), 0, "iteration %d", iter);
		free(out);
	}
}

/*
 * Every way of corrupting one byte of valid text still gives valid output
 * that keeps the untouched text around it.
 */
Test(utf8, single_byte_corruption)
{
	static const char text[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
	uint8_t in[sizeof(text) - 1];

	for (size_t pos = 0; pos < sizeof(in); pos++)
		for (int b = 0; b < 256; b++) {
			size_t n;
			char *out;

			memcpy(in, text, sizeof(in));
			in[pos] = (uint8_t)b;
			out = utf8_sanitize(in, sizeof(in), &n);
			cr_assert_not_null(out);
			cr_assert_eq(first_invalid((const uint8_t *)out, n), -1,
			    "pos %zu byte 0x%02x", pos, b);
			if (pos != 0)
				cr_assert_eq(out[0], 'a');
			if (pos != sizeof(in) - 1)
				cr_assert_eq(out[n - 1], 'z');
			free(out);
		}
}

/* ---- term_escape --------------------------------------------------------- */

static void
expect_escaped(const char *in, size_t len, const char *want)
{
	char out[256];
	size_t n;

	cr_assert_leq(len * 4, sizeof(out));
	n = term_escape(in, len, out);
	cr_assert_eq(n, strlen(want), "got %zu bytes, want %zu", n,
	    strlen(want));
	cr_assert_eq(memcmp(out, want, n), 0, "got \"%.*s\", want \"%s\"",
	    (int)n, out, want);
}

Test(term_escape, printable_tab_newline_cr_and_utf8_pass)
{
	expect_escaped("a b\tc\nd\r", 8, "a b\tc\nd\r");
	expect_escaped("\xc3\xa9\xe2\x82\xac", 5, "\xc3\xa9\xe2\x82\xac");
	expect_escaped("\xc2\xa0", 2, "\xc2\xa0"); /* NBSP is not C1 */
}

Test(term_escape, controls_are_made_visible)
{
	/* OSC 52 clipboard write, CSI cursor move, BEL, NUL, DEL. */
	expect_escaped("\x1b]52;c;aGk=\x07", 12, "^[]52;c;aGk=^G");
	expect_escaped("\x1b[2J", 4, "^[[2J");
	expect_escaped("\0\x7f", 2, "^@^?");
	/* C1 CSI (U+009B) and OSC (U+009D) as UTF-8. */
	expect_escaped("\xc2\x9b"
		       "6n\xc2\x9d",
	    6, "^[[6n^[]");
}

/* Bytes that start no well-formed sequence become U+FFFD, a sequence
 * cut by the end too: the terminal never completes one itself. */
Test(term_escape, invalid_and_truncated_become_fffd)
{
	expect_escaped("a\xff"
		       "b",
	    3,
	    "a\xef\xbf\xbd"
	    "b");
	expect_escaped("\x9b"
		       "2J",
	    3,
	    "\xef\xbf\xbd"
	    "2J");
	expect_escaped("x\xc2", 2, "x\xef\xbf\xbd");
	expect_escaped("\xe2\x82", 2, "\xef\xbf\xbd\xef\xbf\xbd");
}

/*
 * Issue 23: a stream escaped chunk by chunk (stockade run on a
 * terminal) gives what the whole gives, wherever the chunks are cut:
 * every input below is cut at every point into two chunks and at every
 * pair of points into three, and the concatenated output must equal
 * term_escape of the whole. Today's stateless code passed "\xC2" and
 * then "\x9B2J" through raw: CSI on the terminal.
 */
static void
expect_split_invariant(const char *in, size_t len)
{
	char whole[256], got[512];
	size_t nwhole = term_escape(in, len, whole);

	cr_assert_leq(len, 48);
	for (size_t a = 0; a <= len; a++) {
		for (size_t b = a; b <= len; b++) {
			struct term_escape_state st = {0};
			size_t n = 0;

			n += term_escape_chunk(&st, in, a, got + n);
			n += term_escape_chunk(&st, in + a, b - a, got + n);
			n += term_escape_chunk(&st, in + b, len - b, got + n);
			n += term_escape_end(&st, got + n);
			cr_assert(n == nwhole && memcmp(got, whole, n) == 0,
			    "cut at %zu and %zu: got \"%.*s\", want "
			    "\"%.*s\"",
			    a, b, (int)n, got, (int)nwhole, whole);
			/* Nothing raw: no ESC, no C1 as UTF-8, no lone
			 * 0x80..0x9F byte outside a sequence. */
			for (size_t i = 0; i < n; i++) {
				cr_assert_neq((unsigned char)got[i], 0x1b);
				cr_assert(!((unsigned char)got[i] == 0xc2 &&
					      i + 1 < n &&
					      (unsigned char)got[i + 1] <=
						  0x9f),
				    "raw C1 at %zu (cuts %zu %zu)", i, a, b);
			}
		}
	}
}

Test(term_escape, split_c1_csi_osc_st_at_every_point)
{
	/* CSI 2J; OSC 52 clipboard write ended by ST; all as C1 UTF-8. */
	expect_split_invariant("\xc2\x9b"
			       "2J",
	    4);
	expect_split_invariant("\xc2\x9d"
			       "52;c;aGk=\xc2\x9c",
	    14);
	expect_split_invariant("a\xc2\x9b\xc2\x9d\xc2\x9c"
			       "b",
	    8);
	/* Ordinary characters of 2, 3 and 4 bytes pass whole. */
	expect_split_invariant("\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	    11);
	/* Invalid and truncated sequences among them. */
	expect_split_invariant("\xe2\x82\xc2\x9b\xf0\x9f\x98\xff\xed\xa0\x80",
	    11);
	expect_split_invariant("\x1b]0;t\x07\xc2", 7);
}

/* The example of issue 23, as two writes, each escaped on arrival. */
Test(term_escape, c1_in_two_writes_is_escaped)
{
	struct term_escape_state st = {0};
	char out[64];
	size_t n;

	n = term_escape_chunk(&st, "\xc2", 1, out);
	cr_assert_eq(n, 0, "the lead byte is held, not written");
	n += term_escape_chunk(&st,
	    "\x9b"
	    "2J",
	    3, out + n);
	n += term_escape_end(&st, out + n);
	cr_assert_eq(n, 5);
	cr_assert_eq(memcmp(out, "^[[2J", 5), 0, "got \"%.*s\"", (int)n, out);
}

/* fmt_words: a text that fits is vsnprintf's; one that does not ends at
 * a word with " ..." (issue 22: a detail or hint never cut mid-word),
 * and a single long word is cut on a UTF-8 boundary. */
Test(fmt_words, fits_or_ends_at_a_word)
{
	char buf[24];
	size_t n;

	n = fmt_words(buf, sizeof(buf), "%s %d", "short", 42);
	cr_assert_str_eq(buf, "short 42");
	cr_assert_eq(n, 8);
	n = fmt_words(buf, sizeof(buf), "the program was killed by %s",
	    "SIGSEGV after a while");
	cr_assert_str_eq(buf, "the program was ...");
	cr_assert_eq(n, strlen(buf));
	cr_assert_lt(n, sizeof(buf));
	/* Punctuation before the cut goes too. */
	n = fmt_words(buf, sizeof(buf), "limits: memory, cpu; and more");
	cr_assert_str_eq(buf, "limits: memory, cpu ...");
	/* One word of two-byte characters: never half of one. */
	n = fmt_words(buf, sizeof(buf), "%s",
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	cr_assert_eq(utf8_decode(buf, 2, &(uint32_t){0}), 2);
	cr_assert_str_eq(buf + n - 4, " ...");
	for (size_t i = 0; i < n - 4; i += 2)
		cr_assert_eq((unsigned char)buf[i], 0xc3, "byte %zu", i);
}
