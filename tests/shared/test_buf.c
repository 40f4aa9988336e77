/*
 * test_buf.c: the bounds-checked buffer (shared/buf.c), style.md rule 5.
 *
 * Every getter on short input must return -EBADMSG, leave the cursor where it
 * was and clear its output; integers are little-endian byte by byte; a writer
 * that overflowed stays overflowed and never writes past its capacity.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

#define CANARY 0xa5

/* What a string output holds before a getter must clear it. */
static char poison;

/* A reader over DATA[0..LEN) whose cursor is already at SKIP. */
static void
reader_at(struct rbuf *r, const uint8_t *data, size_t len, size_t skip)
{
	uint8_t dummy;

	rbuf_init(r, data, len);
	for (size_t i = 0; i < skip; i++)
		cr_assert_eq(rbuf_get_u8(r, &dummy), 0);
	cr_assert_eq(r->pos, skip);
}

static void
assert_all(const uint8_t *p, size_t n, uint8_t v, const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(p[i], v, "%s: byte %zu is 0x%02x, not 0x%02x",
		    what, i, p[i], v);
}

/* ---- little-endian layout ---- */

Test(wbuf, little_endian_layout_byte_by_byte)
{
	uint8_t b[64];
	struct wbuf w;
	static const uint8_t want[] = {
	    0x7f, /* u8 */
	    0x02, 0x01, /* u16 */
	    0x04, 0x03, 0x02, 0x01, /* u32 */
	    0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, /* u64 */
	    0xfe, 0xff, 0xff, 0xff, /* i32 -2 */
	    0x00, 0x00, 0x00, 0x80, /* i32 min */
	    0x03, 0x00, 0x00, 0x00, 'a', 0x00, 'b', /* bytes */
	    0x02, 0x00, 0x00, 0x00, 'h', 'i', /* str, no NUL */
	    0x00, 0x00, 0x00, 0x00, /* "" */
	};

	memset(b, CANARY, sizeof(b));
	wbuf_init(&w, b, sizeof(b));
	cr_assert_eq(wbuf_put_u8(&w, 0x7f), 0);
	cr_assert_eq(wbuf_put_u16(&w, 0x0102), 0);
	cr_assert_eq(wbuf_put_u32(&w, 0x01020304u), 0);
	cr_assert_eq(wbuf_put_u64(&w, UINT64_C(0x0102030405060708)), 0);
	cr_assert_eq(wbuf_put_i32(&w, -2), 0);
	cr_assert_eq(wbuf_put_i32(&w, INT32_MIN), 0);
	cr_assert_eq(wbuf_put_bytes(&w, "a\0b", 3), 0);
	cr_assert_eq(wbuf_put_str(&w, "hi"), 0);
	cr_assert_eq(wbuf_put_str(&w, ""), 0);
	cr_assert(wbuf_ok(&w));
	cr_assert_eq(w.len, sizeof(want));
	for (size_t i = 0; i < sizeof(want); i++)
		cr_assert_eq(b[i], want[i], "byte %zu: 0x%02x, want 0x%02x", i,
		    b[i], want[i]);
	assert_all(b + sizeof(want), sizeof(b) - sizeof(want), CANARY,
	    "past the end");
}

Test(rbuf, little_endian_read_back)
{
	static const uint8_t in[] = {
	    0x7f,
	    0x02,
	    0x01,
	    0x04,
	    0x03,
	    0x02,
	    0x01,
	    0x08,
	    0x07,
	    0x06,
	    0x05,
	    0x04,
	    0x03,
	    0x02,
	    0x01,
	    0xfe,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	    0xff,
	};
	struct rbuf r;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	int32_t i32;

	rbuf_init(&r, in, sizeof(in));
	cr_assert_eq(rbuf_get_u8(&r, &u8), 0);
	cr_assert_eq(u8, 0x7f);
	cr_assert_eq(rbuf_get_u16(&r, &u16), 0);
	cr_assert_eq(u16, 0x0102);
	cr_assert_eq(rbuf_get_u32(&r, &u32), 0);
	cr_assert_eq(u32, 0x01020304u);
	cr_assert_eq(rbuf_get_u64(&r, &u64), 0);
	cr_assert_eq(u64, UINT64_C(0x0102030405060708));
	cr_assert_eq(rbuf_get_i32(&r, &i32), 0);
	cr_assert_eq(i32, -2);
	cr_assert_eq(rbuf_get_u64(&r, &u64), 0);
	cr_assert_eq(u64, UINT64_MAX);
	cr_assert_eq(rbuf_remaining(&r), 0);
	cr_assert_eq(rbuf_end(&r), 0);
}

Test(buf, round_trip_extremes)
{
	uint8_t b[128];
	struct wbuf w;
	struct rbuf r;
	static const uint64_t u64s[] = {0, 1, 0xff, 0x100, UINT32_MAX,
	    UINT64_C(1) << 32, UINT64_MAX};
	static const int32_t i32s[] = {0, 1, -1, INT32_MIN, INT32_MAX};

	wbuf_init(&w, b, sizeof(b));
	for (size_t i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++)
		wbuf_put_u64(&w, u64s[i]);
	for (size_t i = 0; i < sizeof(i32s) / sizeof(i32s[0]); i++)
		wbuf_put_i32(&w, i32s[i]);
	wbuf_put_u16(&w, UINT16_MAX);
	cr_assert(wbuf_ok(&w));

	rbuf_init(&r, b, w.len);
	for (size_t i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++) {
		uint64_t v;

		cr_assert_eq(rbuf_get_u64(&r, &v), 0);
		cr_assert_eq(v, u64s[i]);
	}
	for (size_t i = 0; i < sizeof(i32s) / sizeof(i32s[0]); i++) {
		int32_t v;

		cr_assert_eq(rbuf_get_i32(&r, &v), 0);
		cr_assert_eq(v, i32s[i]);
	}
	{
		uint16_t v;

		cr_assert_eq(rbuf_get_u16(&r, &v), 0);
		cr_assert_eq(v, UINT16_MAX);
	}
	cr_assert_eq(rbuf_end(&r), 0);
}

/* ---- getters on short input ---- */

/*
 * For each fixed-width getter, every input shorter than its width (with the
 * cursor at 0 and at 3) fails with -EBADMSG, output 0, cursor unchanged.
 */
Test(rbuf, fixed_getters_short_input)
{
	uint8_t in[16];

	memset(in, 0xff, sizeof(in));
	for (size_t skip = 0; skip <= 3; skip += 3) {
		for (size_t avail = 0; avail < 8; avail++) {
			struct rbuf r;
			size_t len = skip + avail;

			if (avail < 1) {
				uint8_t v = 0x55;

				reader_at(&r, in, len, skip);
				cr_assert_eq(rbuf_get_u8(&r, &v), -EBADMSG);
				cr_assert_eq(v, 0);
				cr_assert_eq(r.pos, skip);
			}
			if (avail < 2) {
				uint16_t v = 0x5555;

				reader_at(&r, in, len, skip);
				cr_assert_eq(rbuf_get_u16(&r, &v), -EBADMSG);
				cr_assert_eq(v, 0);
				cr_assert_eq(r.pos, skip);
			}
			if (avail < 4) {
				uint32_t v = 0x55555555;
				int32_t s = 0x55555555;

				reader_at(&r, in, len, skip);
				cr_assert_eq(rbuf_get_u32(&r, &v), -EBADMSG);
				cr_assert_eq(v, 0);
				cr_assert_eq(r.pos, skip);
				reader_at(&r, in, len, skip);
				cr_assert_eq(rbuf_get_i32(&r, &s), -EBADMSG);
				cr_assert_eq(s, 0);
				cr_assert_eq(r.pos, skip);
			}
			{
				uint64_t v = 0x5555555555555555;

				reader_at(&r, in, len, skip);
				cr_assert_eq(rbuf_get_u64(&r, &v), -EBADMSG,
				    "u64 with %zu bytes", avail);
				cr_assert_eq(v, 0);
				cr_assert_eq(r.pos, skip);
				cr_assert_eq(rbuf_remaining(&r), avail);
			}
		}
	}
}

Test(rbuf, get_bytes_short_length_prefix)
{
	static const uint8_t in[] = {0x01, 0x00, 0x00};

	for (size_t len = 0; len < 4; len++) {
		const uint8_t *p = in;
		size_t n = 99;
		struct rbuf r;

		rbuf_init(&r, in, len);
		cr_assert_eq(rbuf_get_bytes(&r, &p, &n, 100), -EBADMSG);
		cr_assert_null(p);
		cr_assert_eq(n, 0);
		cr_assert_eq(r.pos, 0);
	}
}

Test(rbuf, get_bytes_short_body)
{
	static const uint8_t in[] = {0xee, 0x05, 0x00, 0x00, 0x00, 'a', 'b',
	    'c', 'd'};
	const uint8_t *p = in;
	size_t n = 99;
	struct rbuf r;

	reader_at(&r, in, sizeof(in), 1);
	cr_assert_eq(rbuf_get_bytes(&r, &p, &n, 100), -EBADMSG);
	cr_assert_null(p);
	cr_assert_eq(n, 0);
	cr_assert_eq(r.pos, 1);
}

Test(rbuf, get_bytes_over_max)
{
	static const uint8_t in[] = {0x04, 0x00, 0x00, 0x00, 'a', 'b', 'c',
	    'd'};
	const uint8_t *p = in;
	size_t n = 99;
	struct rbuf r;

	rbuf_init(&r, in, sizeof(in));
	cr_assert_eq(rbuf_get_bytes(&r, &p, &n, 3), -EMSGSIZE);
	cr_assert_null(p);
	cr_assert_eq(n, 0);
	cr_assert_eq(r.pos, 0);

	/* Exactly MAX is fine, borrowed from the input. */
	cr_assert_eq(rbuf_get_bytes(&r, &p, &n, 4), 0);
	cr_assert_eq(p, in + 4);
	cr_assert_eq(n, 4);
	cr_assert_eq(rbuf_end(&r), 0);
}

Test(rbuf, get_bytes_huge_length_is_not_trusted)
{
	static const uint8_t in[] = {0xff, 0xff, 0xff, 0xff, 'a'};
	const uint8_t *p;
	size_t n;
	struct rbuf r;

	rbuf_init(&r, in, sizeof(in));
	cr_assert_eq(rbuf_get_bytes(&r, &p, &n, SIZE_MAX), -EBADMSG);
	cr_assert_null(p);
	cr_assert_eq(n, 0);
	cr_assert_eq(r.pos, 0);
}

Test(rbuf, get_bytes_empty_and_with_nul)
{
	static const uint8_t in[] = {0, 0, 0, 0, 2, 0, 0, 0, 0, 0};
	const uint8_t *p;
	size_t n;
	struct rbuf r;

	rbuf_init(&r, in, sizeof(in));
	cr_assert_eq(rbuf_get_bytes(&r, &p, &n, 0), 0);
	cr_assert_eq(n, 0);
	/* Bytes, unlike strings, may contain NUL. */
	cr_assert_eq(rbuf_get_bytes(&r, &p, &n, 2), 0);
	cr_assert_eq(n, 2);
	cr_assert_eq(p[0], 0);
	cr_assert_eq(rbuf_end(&r), 0);
}

Test(rbuf, get_str_ok)
{
	static const uint8_t in[] = {3, 0, 0, 0, 'a', 'b', 'c', 0, 0, 0, 0};
	char *s = NULL, *e = NULL;
	struct rbuf r;

	rbuf_init(&r, in, sizeof(in));
	cr_assert_eq(rbuf_get_str(&r, &s, 3), 0);
	cr_assert_str_eq(s, "abc");
	cr_assert_eq(rbuf_get_str(&r, &e, 0), 0);
	cr_assert_str_eq(e, "");
	cr_assert_eq(rbuf_end(&r), 0);
	free(s);
	free(e);
}

Test(rbuf, get_str_refuses_interior_nul)
{
	static const struct {
		uint8_t in[8];
		size_t len;
	} cases[] = {
	    {{3, 0, 0, 0, 'a', 0, 'c'}, 7},
	    {{3, 0, 0, 0, 0, 'b', 'c'}, 7},
	    {{3, 0, 0, 0, 'a', 'b', 0}, 7}, /* a NUL inside the length */
	    {{1, 0, 0, 0, 0}, 5},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = &poison;
		struct rbuf r;

		rbuf_init(&r, cases[i].in, cases[i].len);
		cr_assert_eq(rbuf_get_str(&r, &s, 100), -EBADMSG, "case %zu",
		    i);
		cr_assert_null(s);
		cr_assert_eq(r.pos, 0);
	}
}

Test(rbuf, get_str_over_max_and_short)
{
	static const uint8_t in[] = {0xaa, 4, 0, 0, 0, 'a', 'b', 'c', 'd'};
	char *s = &poison;
	struct rbuf r;

	reader_at(&r, in, sizeof(in), 1);
	cr_assert_eq(rbuf_get_str(&r, &s, 3), -EMSGSIZE);
	cr_assert_null(s);
	cr_assert_eq(r.pos, 1);

	for (size_t len = 1; len < sizeof(in); len++) {
		s = &poison;
		reader_at(&r, in, len, 1);
		cr_assert_eq(rbuf_get_str(&r, &s, 4), -EBADMSG, "len %zu", len);
		cr_assert_null(s);
		cr_assert_eq(r.pos, 1);
	}

	reader_at(&r, in, sizeof(in), 1);
	cr_assert_eq(rbuf_get_str(&r, &s, 4), 0);
	cr_assert_str_eq(s, "abcd");
	free(s);
}

/* ---- rbuf_end ---- */

Test(rbuf, end_and_trailing_bytes)
{
	static const uint8_t in[] = {1, 2, 3, 4, 5};
	uint32_t v;
	struct rbuf r;

	rbuf_init(&r, in, 0);
	cr_assert_eq(rbuf_end(&r), 0);

	rbuf_init(&r, in, sizeof(in));
	cr_assert_eq(rbuf_end(&r), -EBADMSG);
	cr_assert_eq(rbuf_get_u32(&r, &v), 0);
	cr_assert_eq(rbuf_remaining(&r), 1);
	cr_assert_eq(rbuf_end(&r), -EBADMSG, "one trailing byte");
	cr_assert_eq(rbuf_end(&r), -EBADMSG, "rbuf_end does not consume");

	rbuf_init(&r, in, 4);
	cr_assert_eq(rbuf_get_u32(&r, &v), 0);
	cr_assert_eq(rbuf_end(&r), 0);
}

Test(rbuf, never_writes_input)
{
	uint8_t in[12] = {4, 0, 0, 0, 'a', 'b', 'c', 'd', 1, 2, 3, 4};
	uint8_t copy[sizeof(in)];
	char *s;
	uint32_t v;
	struct rbuf r;

	memcpy(copy, in, sizeof(in));
	rbuf_init(&r, in, sizeof(in));
	cr_assert_eq(rbuf_get_str(&r, &s, 10), 0);
	cr_assert_eq(rbuf_get_u32(&r, &v), 0);
	cr_assert_eq(memcmp(in, copy, sizeof(in)), 0);
	free(s);
}

/* ---- writer overflow ---- */

Test(wbuf, overflow_is_sticky)
{
	uint8_t b[16];
	struct wbuf w;

	memset(b, CANARY, sizeof(b));
	wbuf_init(&w, b, 5);
	cr_assert_eq(wbuf_put_u32(&w, 0x11223344u), 0);
	cr_assert(wbuf_ok(&w));
	cr_assert_eq(wbuf_put_u16(&w, 0xbeef), -ENOBUFS);
	cr_assert_not(wbuf_ok(&w));
	cr_assert_eq(w.len, 4);
	/* One byte would fit, but the writer stays in overflow. */
	cr_assert_eq(wbuf_put_u8(&w, 1), -ENOBUFS);
	cr_assert_eq(wbuf_put_bytes(&w, "", 0), -ENOBUFS);
	cr_assert_eq(wbuf_put_str(&w, ""), -ENOBUFS);
	cr_assert_not(wbuf_ok(&w));
	cr_assert_eq(w.len, 4);
	cr_assert_eq(b[4], CANARY, "nothing written after overflow");
	assert_all(b + 5, sizeof(b) - 5, CANARY, "past the capacity");
}

Test(wbuf, exact_fit)
{
	uint8_t b[15];
	struct wbuf w;

	wbuf_init(&w, b, sizeof(b));
	cr_assert_eq(wbuf_put_u64(&w, 1), 0);
	cr_assert_eq(wbuf_put_bytes(&w, "abc", 3), 0);
	cr_assert_eq(w.len, sizeof(b));
	cr_assert(wbuf_ok(&w));
	cr_assert_eq(wbuf_put_bytes(&w, NULL, 0), -ENOBUFS);
	cr_assert_not(wbuf_ok(&w));
}

Test(wbuf, zero_capacity)
{
	struct wbuf w;

	wbuf_init(&w, NULL, 0);
	cr_assert(wbuf_ok(&w));
	cr_assert_eq(wbuf_put_u8(&w, 1), -ENOBUFS);
	cr_assert_eq(w.len, 0);
	cr_assert_not(wbuf_ok(&w));
}

/* A length-prefixed run that does not fit writes not even its length. */
Test(wbuf, bytes_fit_whole_or_not_at_all)
{
	for (size_t cap = 0; cap < 4 + 3; cap++) {
		uint8_t b[16];
		struct wbuf w;

		memset(b, CANARY, sizeof(b));
		wbuf_init(&w, b, cap);
		cr_assert_eq(wbuf_put_bytes(&w, "xyz", 3), -ENOBUFS, "cap %zu",
		    cap);
		cr_assert_eq(w.len, 0);
		cr_assert_not(wbuf_ok(&w));
		assert_all(b, sizeof(b), CANARY, "after a refused run");
	}
}

Test(wbuf, fixed_width_does_not_partially_write)
{
	for (size_t cap = 0; cap < 8; cap++) {
		uint8_t b[16];
		struct wbuf w;

		memset(b, CANARY, sizeof(b));
		wbuf_init(&w, b, cap);
		cr_assert_eq(wbuf_put_u64(&w, 0), -ENOBUFS);
		cr_assert_eq(w.len, 0);
		assert_all(b, sizeof(b), CANARY, "after a refused u64");
	}
}

Test(wbuf, put_str_null_is_einval)
{
	uint8_t b[16];
	struct wbuf w;

	wbuf_init(&w, b, sizeof(b));
	cr_assert_eq(wbuf_put_str(&w, NULL), -EINVAL);
	cr_assert_not(wbuf_ok(&w), "a refused string poisons the message");
	cr_assert_eq(w.len, 0);
}
