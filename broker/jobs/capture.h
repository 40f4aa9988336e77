/*
 * capture.h: keeping a job's output for its result: the first and last
 * bytes of each stream within a cap, with a marker where the middle was
 * dropped. Pure; no I/O.
 */
#ifndef STOCKADE_CAPTURE_H
#define STOCKADE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct capture {
	size_t half; /* bytes kept at each end: cap / 2 (cap - half) */
	size_t tail_cap;
	uint8_t *head; /* first bytes, up to `half`; grown as they come */
	size_t head_len;
	size_t head_size; /* bytes allocated for head */
	uint8_t *tail; /* ring of the last tail_cap bytes, allocated when
			   * the first byte past the head arrives */
	size_t tail_pos; /* next write position in the ring */
	size_t tail_len; /* valid bytes in the ring */
	uint64_t total; /* every byte ever added */
	bool lost; /* memory ran out: some bytes could not be kept */
	bool head_passed; /* the head is counted in head_len, not kept
			   * (capture_init_tail) */
};

/* Prepares C to keep at most CAP bytes (>= 2). Allocates nothing yet:
 * memory follows what is added, up to CAP, so a large cap on a quiet
 * program costs nothing. Returns 0. */
int capture_init(struct capture *c, size_t cap);
/*
 * As capture_init, but the first CAP / 2 bytes are only counted, never
 * kept, and capture_collect gives MARKER (when truncated), then the tail:
 * for a caller that passes the head on as it comes (capture_head_room
 * says how much of the next chunk is head) and shows the rest when the
 * stream ends. Memory is the tail's ring alone, allocated only when the
 * head is full. Returns 0.
 */
int capture_init_tail(struct capture *c, size_t cap);
/* How many of the next bytes added go to the head: 0 once it is full. */
size_t capture_head_room(const struct capture *c);
/* Adds DATA[0..LEN). Never fails: memory stays bounded by the cap, and if
 * it runs out the bytes are dropped and the capture counts as truncated. */
void capture_add(struct capture *c, const uint8_t *data, size_t len);
/* True when bytes were dropped. */
bool capture_truncated(const struct capture *c);
/*
 * The kept bytes as one new buffer (head, then MARKER when truncated, then
 * tail), with its length in *LEN; the caller frees it. NULL on ENOMEM.
 */
uint8_t *capture_collect(const struct capture *c, const char *marker,
    size_t *len);
/* Frees C's buffers; accepts a zeroed struct. */
void capture_free(struct capture *c);

#endif
