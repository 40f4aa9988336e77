/*
 * buf.h: the one bounds-checked buffer through which every wire message is
 * built and parsed (style.md rules 4-6).
 *
 * Encoding: fixed-width little-endian integers; a string or byte run is a
 * u32 length followed by that many bytes (no terminator on the wire).
 * Getters never read past the end: on any failure they return a negative
 * errno, leave the cursor where it was and clear their outputs.
 */
#ifndef STOCKADE_BUF_H
#define STOCKADE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A writer over caller-owned storage of fixed capacity (bytes). */
struct wbuf {
	uint8_t *data;
	size_t cap;
	size_t len;
	bool overflow; /* set once a put did not fit; later puts are no-ops */
};

/* A reader over caller-owned bytes; never writes to them. */
struct rbuf {
	const uint8_t *data;
	size_t len;
	size_t pos;
};

/* Starts a writer over DATA[0..CAP). Does not take ownership. */
void wbuf_init(struct wbuf *w, void *data, size_t cap);
/*
 * Appenders. Each returns 0, or -ENOBUFS when the value does not fit; after
 * the first -ENOBUFS the writer stays in overflow and wbuf_ok() is false.
 */
int wbuf_put_u8(struct wbuf *w, uint8_t v);
int wbuf_put_u16(struct wbuf *w, uint16_t v);
int wbuf_put_u32(struct wbuf *w, uint32_t v);
int wbuf_put_u64(struct wbuf *w, uint64_t v);
int wbuf_put_i32(struct wbuf *w, int32_t v);
/* LEN bytes of DATA (may contain NULs), prefixed by a u32 length. */
int wbuf_put_bytes(struct wbuf *w, const void *data, size_t len);
/* A C string without its NUL, prefixed by a u32 length. NULL is -EINVAL. */
int wbuf_put_str(struct wbuf *w, const char *s);
/* True when no put has overflowed. */
bool wbuf_ok(const struct wbuf *w);

/* Starts a reader over DATA[0..LEN). Does not take ownership. */
void rbuf_init(struct rbuf *r, const void *data, size_t len);
/* Fixed-width getters: 0, or -EBADMSG when fewer bytes remain (out = 0). */
int rbuf_get_u8(struct rbuf *r, uint8_t *out);
int rbuf_get_u16(struct rbuf *r, uint16_t *out);
int rbuf_get_u32(struct rbuf *r, uint32_t *out);
int rbuf_get_u64(struct rbuf *r, uint64_t *out);
int rbuf_get_i32(struct rbuf *r, int32_t *out);
/*
 * A length-prefixed byte run, borrowed (points into the reader's data, valid
 * as long as it is). -EBADMSG when short, -EMSGSIZE when longer than MAX.
 */
int rbuf_get_bytes(struct rbuf *r, const uint8_t **out, size_t *outlen,
    size_t max);
/*
 * A length-prefixed string copied into a new NUL-terminated allocation that
 * the caller frees. Refuses an interior NUL (-EBADMSG), a length over MAX
 * bytes (-EMSGSIZE), short input (-EBADMSG) and allocation failure (-ENOMEM).
 */
int rbuf_get_str(struct rbuf *r, char **out, size_t max);
/* Bytes not yet consumed. */
size_t rbuf_remaining(const struct rbuf *r);
/* 0 when everything was consumed, -EBADMSG on trailing bytes (rule 6). */
int rbuf_end(const struct rbuf *r);

#endif
