/* capture.c: see capture.h. */
#include "capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int
capture_init(struct capture *c, size_t cap)
{
	memset(c, 0, sizeof(*c));
	if (cap < 2)
		cap = 2;
	c->half = cap / 2;
	c->tail_cap = cap - c->half;
	return 0;
}

int
capture_init_tail(struct capture *c, size_t cap)
{
	capture_init(c, cap);
	c->head_passed = true;
	return 0;
}

size_t
capture_head_room(const struct capture *c)
{
	return c->half - c->head_len;
}

/* Makes room for N more head bytes, growing the head geometrically up to
 * half; false when memory runs out (the bytes are then dropped). */
static bool
head_room(struct capture *c, size_t n)
{
	size_t want = c->head_len + n, size = c->head_size;
	uint8_t *p;

	if (want <= size)
		return true;
	if (size == 0)
		size = 4096;
	while (size < want)
		size = size > c->half / 2 ? c->half : size * 2;
	if (size > c->half)
		size = c->half;
	p = realloc(c->head, size);
	if (p == NULL)
		return false;
	c->head = p;
	c->head_size = size;
	return true;
}

void
capture_add(struct capture *c, const uint8_t *data, size_t len)
{
	c->total += len;
	if (c->head_len < c->half) {
		size_t n = c->half - c->head_len;

		if (n > len)
			n = len;
		if (c->head_passed) {
			c->head_len += n;
		} else if (head_room(c, n)) {
			memcpy(c->head + c->head_len, data, n);
			c->head_len += n;
		} else {
			c->lost = true;
		}
		data += n;
		len -= n;
	}
	if (len == 0)
		return;
	if (c->tail == NULL && (c->tail = malloc(c->tail_cap)) == NULL) {
		c->lost = true;
		return;
	}
	if (len > c->tail_cap) {
		data += len - c->tail_cap;
		len = c->tail_cap;
	}
	while (len > 0) {
		size_t n = c->tail_cap - c->tail_pos;

		if (n > len)
			n = len;
		memcpy(c->tail + c->tail_pos, data, n);
		c->tail_pos = (c->tail_pos + n) % c->tail_cap;
		c->tail_len = c->tail_len + n > c->tail_cap ? c->tail_cap
							    : c->tail_len + n;
		data += n;
		len -= n;
	}
}

bool
capture_truncated(const struct capture *c)
{
	return c->lost || c->total > c->head_len + c->tail_len;
}

uint8_t *
capture_collect(const struct capture *c, const char *marker, size_t *len)
{
	size_t mlen = capture_truncated(c) ? strlen(marker) : 0;
	size_t hlen = c->head_passed ? 0 : c->head_len;
	size_t n = hlen + mlen + c->tail_len;
	uint8_t *out = malloc(n + 1), *p;
	size_t start;

	if (out == NULL)
		return NULL;
	p = out;
	if (hlen > 0)
		memcpy(p, c->head, hlen);
	p += hlen;
	memcpy(p, marker, mlen);
	p += mlen;
	/* The ring's oldest byte is at tail_pos once it has wrapped. */
	start = c->tail_len == c->tail_cap ? c->tail_pos : 0;
	for (size_t i = 0; i < c->tail_len; i++)
		*p++ = c->tail[(start + i) % c->tail_cap];
	*p = 0;
	*len = n;
	return out;
}

void
capture_free(struct capture *c)
{
	free(c->head);
	free(c->tail);
	memset(c, 0, sizeof(*c));
}
