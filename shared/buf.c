/* buf.c: bounds-checked little-endian codec; see buf.h. Pure: no I/O. */
#include "buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void
wbuf_init(struct wbuf *w, void *data, size_t cap)
{
	w->data = data;
	w->cap = cap;
	w->len = 0;
	w->overflow = false;
}

static int
wbuf_put_raw(struct wbuf *w, const void *p, size_t n)
{
	if (w->overflow || n > w->cap - w->len) {
		w->overflow = true;
		return -ENOBUFS;
	}
	if (n > 0)
		memcpy(w->data + w->len, p, n);
	w->len += n;
	return 0;
}

static int
wbuf_put_le(struct wbuf *w, uint64_t v, size_t width)
{
	uint8_t b[8];

	for (size_t i = 0; i < width; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	return wbuf_put_raw(w, b, width);
}

int
wbuf_put_u8(struct wbuf *w, uint8_t v)
{
	return wbuf_put_le(w, v, 1);
}

int
wbuf_put_u16(struct wbuf *w, uint16_t v)
{
	return wbuf_put_le(w, v, 2);
}

int
wbuf_put_u32(struct wbuf *w, uint32_t v)
{
	return wbuf_put_le(w, v, 4);
}

int
wbuf_put_u64(struct wbuf *w, uint64_t v)
{
	return wbuf_put_le(w, v, 8);
}

int
wbuf_put_i32(struct wbuf *w, int32_t v)
{
	return wbuf_put_le(w, (uint32_t)v, 4);
}

int
wbuf_put_bytes(struct wbuf *w, const void *data, size_t len)
{
	int r;

	if (len > UINT32_MAX) {
		w->overflow = true;
		return -ENOBUFS;
	}
	/* Check the whole run fits before writing its length. */
	if (w->overflow || w->cap - w->len < 4 || len > w->cap - w->len - 4) {
		w->overflow = true;
		return -ENOBUFS;
	}
	r = wbuf_put_u32(w, (uint32_t)len);
	if (r < 0)
		return r;
	return wbuf_put_raw(w, data, len);
}

int
wbuf_put_str(struct wbuf *w, const char *s)
{
	if (s == NULL) {
		w->overflow = true;
		return -EINVAL;
	}
	return wbuf_put_bytes(w, s, strlen(s));
}

bool
wbuf_ok(const struct wbuf *w)
{
	return !w->overflow;
}

void
rbuf_init(struct rbuf *r, const void *data, size_t len)
{
	r->data = data;
	r->len = len;
	r->pos = 0;
}

static int
rbuf_get_le(struct rbuf *r, uint64_t *out, size_t width)
{
	uint64_t v = 0;

	*out = 0;
	if (r->len - r->pos < width)
		return -EBADMSG;
	for (size_t i = 0; i < width; i++)
		v |= (uint64_t)r->data[r->pos + i] << (8 * i);
	r->pos += width;
	*out = v;
	return 0;
}

int
rbuf_get_u8(struct rbuf *r, uint8_t *out)
{
	uint64_t v;
	int e = rbuf_get_le(r, &v, 1);

	*out = (uint8_t)v;
	return e;
}

int
rbuf_get_u16(struct rbuf *r, uint16_t *out)
{
	uint64_t v;
	int e = rbuf_get_le(r, &v, 2);

	*out = (uint16_t)v;
	return e;
}

int
rbuf_get_u32(struct rbuf *r, uint32_t *out)
{
	uint64_t v;
	int e = rbuf_get_le(r, &v, 4);

	*out = (uint32_t)v;
	return e;
}

int
rbuf_get_u64(struct rbuf *r, uint64_t *out)
{
	return rbuf_get_le(r, out, 8);
}

int
rbuf_get_i32(struct rbuf *r, int32_t *out)
{
	uint64_t v;
	int e = rbuf_get_le(r, &v, 4);

	*out = (int32_t)(uint32_t)v;
	return e;
}

int
rbuf_get_bytes(struct rbuf *r, const uint8_t **out, size_t *outlen, size_t max)
{
	size_t start = r->pos;
	uint32_t n;
	int e;

	*out = NULL;
	*outlen = 0;
	e = rbuf_get_u32(r, &n);
	if (e < 0)
		return e;
	if (n > max) {
		r->pos = start;
		return -EMSGSIZE;
	}
	if (r->len - r->pos < n) {
		r->pos = start;
		return -EBADMSG;
	}
	*out = r->data + r->pos;
	*outlen = n;
	r->pos += n;
	return 0;
}

int
rbuf_get_str(struct rbuf *r, char **out, size_t max)
{
	size_t start = r->pos;
	const uint8_t *p;
	size_t n;
	char *s;
	int e;

	*out = NULL;
	e = rbuf_get_bytes(r, &p, &n, max);
	if (e < 0)
		return e;
	if (n > 0 && memchr(p, '\0', n) != NULL) {
		r->pos = start;
		return -EBADMSG;
	}
	s = malloc(n + 1);
	if (s == NULL) {
		r->pos = start;
		return -ENOMEM;
	}
	if (n > 0)
		memcpy(s, p, n);
	s[n] = '\0';
	*out = s;
	return 0;
}

size_t
rbuf_remaining(const struct rbuf *r)
{
	return r->len - r->pos;
}

int
rbuf_end(const struct rbuf *r)
{
	return r->pos == r->len ? 0 : -EBADMSG;
}
