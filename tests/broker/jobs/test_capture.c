/*
 * test_capture.c: head-and-tail capture of a job's output (broker/jobs/capture.c).
 *
 * The reference model: with a cap C, half H = C / 2 and tail T = C - H, a
 * stream of N bytes is kept whole when N <= C, and otherwise as its first H
 * bytes, the marker, and its last T bytes. However the stream is split into
 * capture_add() calls, the result is the same and memory stays at C bytes.
 */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

#define MARKER "\n[... output truncated ...]\n"

static uint64_t rng_state = UINT64_C(0x243f6a8885a308d3);

static uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static void
fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rng();
}

/* What capture_collect must return for DATA[0..N) under CAP. */
static uint8_t *
model(const uint8_t *data, size_t n, size_t cap, size_t *len)
{
	size_t half = cap / 2, tail = cap - half;
	uint8_t *out = malloc(n + sizeof(MARKER) + 1);

	cr_assert_not_null(out);
	if (n <= cap) {
		memcpy(out, data, n);
		*len = n;
		return out;
	}
	memcpy(out, data, half);
	memcpy(out + half, MARKER, strlen(MARKER));
	memcpy(out + half + strlen(MARKER), data + n - tail, tail);
	*len = half + strlen(MARKER) + tail;
	return out;
}

static void
expect_collect(const struct capture *c, const uint8_t *want, size_t want_len,
    const char *what)
{
	size_t len = 0;
	uint8_t *got = capture_collect(c, MARKER, &len);

	cr_assert_not_null(got);
	cr_assert_eq(len, want_len, "%s: collected %zu bytes, want %zu", what,
	    len, want_len);
	cr_assert_eq(memcmp(got, want, want_len), 0, "%s: wrong bytes", what);
	free(got);
}

/* Captures DATA[0..N) under CAP in pieces cut at random points. */
static void
add_in_random_pieces(struct capture *c, const uint8_t *data, size_t n)
{
	size_t off = 0;

	while (off < n) {
		size_t piece = 1 + rng() % (rng() % 4 == 0 ? n : 8);

		if (piece > n - off)
			piece = n - off;
		capture_add(c, data + off, piece);
		off += piece;
	}
}

Test(capture, under_the_cap_everything_is_kept)
{
	struct capture c;
	uint8_t data[60];

	fill_random(data, sizeof(data));
	cr_assert_eq(capture_init(&c, 100), 0);
	capture_add(&c, data, 25);
	capture_add(&c, data + 25, 35);
	cr_assert_not(capture_truncated(&c));
	cr_assert_eq(c.total, 60);
	expect_collect(&c, data, sizeof(data), "60 of 100");
	capture_free(&c);
}

Test(capture, exactly_the_cap_is_not_truncated)
{
	struct capture c;
	uint8_t data[101];

	fill_random(data, sizeof(data));
	cr_assert_eq(capture_init(&c, 100), 0);
	capture_add(&c, data, 100);
	cr_assert_not(capture_truncated(&c));
	expect_collect(&c, data, 100, "100 of 100");
	capture_add(&c, data + 100, 1);
	cr_assert(capture_truncated(&c), "one byte over the cap");
	cr_assert_eq(c.total, 101);
	capture_free(&c);
}

Test(capture, nothing_added)
{
	struct capture c;
	size_t len = 99;
	uint8_t *got;

	cr_assert_eq(capture_init(&c, 16), 0);
	cr_assert_not(capture_truncated(&c));
	got = capture_collect(&c, MARKER, &len);
	cr_assert_not_null(got);
	cr_assert_eq(len, 0);
	free(got);
	capture_free(&c);
}

Test(capture, over_the_cap_head_marker_tail)
{
	struct capture c;
	uint8_t data[250];
	uint8_t want[50 + sizeof(MARKER) + 50];
	size_t m = strlen(MARKER);

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	cr_assert_eq(capture_init(&c, 100), 0);
	capture_add(&c, data, sizeof(data));
	cr_assert(capture_truncated(&c));
	cr_assert_eq(c.total, 250);
	memcpy(want, data, 50);
	memcpy(want + 50, MARKER, m);
	memcpy(want + 50 + m, data + 200, 50);
	expect_collect(&c, want, 100 + m, "250 into 100");
	capture_free(&c);
}

/* capture_init_tail: the head is counted, not kept; collect gives the
 * marker and the tail, and the head room says what of the next chunk is
 * head. */
Test(capture, tail_only)
{
	struct capture c;
	uint8_t data[250];
	uint8_t want[sizeof(MARKER) + 50];
	size_t m = strlen(MARKER), len;
	uint8_t *got;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	cr_assert_eq(capture_init_tail(&c, 100), 0);
	cr_assert_eq(capture_head_room(&c), 50);
	capture_add(&c, data, 30);
	cr_assert_eq(capture_head_room(&c), 20);
	cr_assert_null(c.head, "the head is kept");
	/* Within the head: nothing to show at the end. */
	got = capture_collect(&c, MARKER, &len);
	cr_assert_eq(len, 0);
	free(got);
	capture_add(&c, data + 30, 220);
	cr_assert_eq(capture_head_room(&c), 0);
	cr_assert(capture_truncated(&c));
	cr_assert_eq(c.total, 250);
	cr_assert_null(c.head, "the head is kept");
	memcpy(want, MARKER, m);
	memcpy(want + m, data + 200, 50);
	expect_collect(&c, want, m + 50, "250 into 100, tail only");
	capture_free(&c);

	/* Past the head but within the cap: the rest, no marker. */
	cr_assert_eq(capture_init_tail(&c, 100), 0);
	capture_add(&c, data, 80);
	cr_assert_not(capture_truncated(&c));
	expect_collect(&c, data + 50, 30, "80 into 100, tail only");
	capture_free(&c);
}

/* With an odd cap the tail gets the extra byte. */
Test(capture, odd_cap)
{
	struct capture c;
	uint8_t data[40];
	uint8_t *want;
	size_t want_len;

	fill_random(data, sizeof(data));
	cr_assert_eq(capture_init(&c, 11), 0);
	cr_assert_eq(c.half, 5);
	cr_assert_eq(c.tail_cap, 6);
	capture_add(&c, data, sizeof(data));
	want = model(data, sizeof(data), 11, &want_len);
	expect_collect(&c, want, want_len, "40 into 11");
	free(want);
	capture_free(&c);
}

Test(capture, tiny_caps)
{
	static const size_t caps[] = {0, 1, 2};
	uint8_t data[7] = {'a', 'b', 'c', 'd', 'e', 'f', 'g'};

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		struct capture c;
		uint8_t *want;
		size_t want_len;

		cr_assert_eq(capture_init(&c, caps[i]), 0);
		capture_add(&c, data, sizeof(data));
		/* A cap under 2 is raised to 2: one byte at each end. */
		want = model(data, sizeof(data), 2, &want_len);
		expect_collect(&c, want, want_len, "tiny cap");
		free(want);
		capture_free(&c);
	}
}

/* The total counts past 32 bits, while nothing past the cap is copied. */
Test(capture, total_is_64_bit)
{
	struct capture c;
	size_t big = 8u << 20;
	uint8_t *chunk = calloc(big, 1);

	cr_assert_not_null(chunk);
	chunk[big - 1] = 'Z';
	cr_assert_eq(capture_init(&c, 16), 0);
	for (int i = 0; i < 600; i++)
		capture_add(&c, chunk, big);
	cr_assert_eq(c.total, (uint64_t)600 * big);
	cr_assert(c.total > UINT32_MAX);
	cr_assert(capture_truncated(&c));
	cr_assert_eq(c.tail[(c.tail_pos + c.tail_cap - 1) % c.tail_cap], 'Z');
	free(chunk);
	capture_free(&c);
}

/* The model and the capture agree for random lengths around the cap. */
Test(capture, matches_the_model)
{
	static const size_t caps[] = {2, 3, 4, 7, 10, 64, 1000};
	uint8_t data[5000];

	for (size_t ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++) {
		size_t cap = caps[ci];

		for (int iter = 0; iter < 60; iter++) {
			size_t n = rng() % (cap * 3 + 2);
			struct capture c;
			uint8_t *want;
			size_t want_len;

			if (n > sizeof(data))
				n = sizeof(data);
			fill_random(data, n);
			cr_assert_eq(capture_init(&c, cap), 0);
			add_in_random_pieces(&c, data, n);
			cr_assert_eq(c.total, n);
			cr_assert_eq(capture_truncated(&c), n > cap,
			    "cap %zu n %zu", cap, n);
			want = model(data, n, cap, &want_len);
			expect_collect(&c, want, want_len, "model");
			free(want);
			capture_free(&c);
		}
	}
}

/*
 * Adding in 1-byte pieces, in random pieces and all at once gives the same
 * collected bytes.
 */
Test(capture, split_points_do_not_matter)
{
	static const size_t caps[] = {2, 3, 9, 100, 4096};
	uint8_t data[10000];

	for (size_t ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++) {
		for (int iter = 0; iter < 20; iter++) {
			size_t cap = caps[ci];
			size_t n = rng() % sizeof(data);
			struct capture whole, bytes, pieces;
			uint8_t *a, *b, *p;
			size_t alen, blen, plen;

			fill_random(data, n);
			cr_assert_eq(capture_init(&whole, cap), 0);
			cr_assert_eq(capture_init(&bytes, cap), 0);
			cr_assert_eq(capture_init(&pieces, cap), 0);
			capture_add(&whole, data, n);
			for (size_t i = 0; i < n; i++)
				capture_add(&bytes, data + i, 1);
			add_in_random_pieces(&pieces, data, n);

			a = capture_collect(&whole, MARKER, &alen);
			b = capture_collect(&bytes, MARKER, &blen);
			p = capture_collect(&pieces, MARKER, &plen);
			cr_assert(a && b && p);
			cr_assert_eq(alen, blen, "cap %zu n %zu", cap, n);
			cr_assert_eq(alen, plen, "cap %zu n %zu", cap, n);
			cr_assert_eq(memcmp(a, b, alen), 0, "cap %zu n %zu",
			    cap, n);
			cr_assert_eq(memcmp(a, p, alen), 0, "cap %zu n %zu",
			    cap, n);
			cr_assert_eq(whole.total, bytes.total);
			cr_assert_eq(capture_truncated(&whole),
			    capture_truncated(&bytes));
			free(a);
			free(b);
			free(p);
			capture_free(&whole);
			capture_free(&bytes);
			capture_free(&pieces);
		}
	}
}

/*
 * Memory follows what is added and stops at the cap: nothing is
 * allocated before the first byte, the head grows to at most half the
 * cap, the tail ring is made once, at its size, when a byte first goes
 * past the head, and neither moves or grows after that.
 */
Test(capture, memory_is_bounded)
{
	struct capture c;
	uint8_t chunk[4096];
	uint8_t *head, *tail;
	size_t head_size, tail_size;

	cr_assert_eq(capture_init(&c, 1000), 0);
	cr_assert_null(c.head);
	cr_assert_null(c.tail);
	capture_add(&c, chunk, 10);
	cr_assert_not_null(c.head);
	cr_assert_null(c.tail, "the tail ring before the head is full");
	capture_add(&c, chunk, 600);
	head = c.head;
	tail = c.tail;
	cr_assert_not_null(tail);
	head_size = malloc_usable_size(c.head);
	tail_size = malloc_usable_size(c.tail);
	cr_assert(head_size >= 500 && tail_size >= 500);
	for (int i = 0; i < 2000; i++) {
		fill_random(chunk, sizeof(chunk));
		capture_add(&c, chunk, 1 + rng() % sizeof(chunk));
		cr_assert_eq(c.head, head);
		cr_assert_eq(c.tail, tail);
		cr_assert_eq(c.half, 500);
		cr_assert_eq(c.tail_cap, 500);
		cr_assert(c.head_len <= c.half);
		cr_assert(c.head_size <= c.half);
		cr_assert(c.tail_len <= c.tail_cap);
		cr_assert(c.tail_pos < c.tail_cap);
	}
	cr_assert_eq(malloc_usable_size(c.head), head_size);
	cr_assert_eq(malloc_usable_size(c.tail), tail_size);
	capture_free(&c);
}

/* A 1 GiB cap on a program that prints one line costs one small buffer. */
Test(capture, a_large_cap_costs_nothing_until_used)
{
	struct capture c;

	cr_assert_eq(capture_init(&c, (size_t)1 << 30), 0);
	capture_add(&c, (const uint8_t *)"hello\n", 6);
	cr_assert_leq(malloc_usable_size(c.head), 8192);
	cr_assert_null(c.tail);
	cr_assert_not(capture_truncated(&c));
	capture_free(&c);
}

Test(capture, free_is_idempotent)
{
	struct capture c;

	memset(&c, 0, sizeof(c));
	capture_free(&c);
	cr_assert_eq(capture_init(&c, 8), 0);
	capture_free(&c);
	cr_assert_null(c.head);
	cr_assert_null(c.tail);
	capture_free(&c);
}
