/*
 * spawner_internal.h: what spawner.c (the spawner's loop, launching) and
 * spawner_stage.c (opening a stage's entry) share. Not an interface for
 * other files: they use spawner.h.
 */
#ifndef STOCKADE_SPAWNER_INTERNAL_H
#define STOCKADE_SPAWNER_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "wire.h"

/* The longest name a WIRE_STAGE_OPEN carries, bytes (NAME_MAX). */
#define SPAWNER_STAGE_NAME_MAX 255u

/* The largest message on the spawner's wire, bytes: a WIRE_STAGE_OPEN
 * (a header, the token, the flags and a name), with room for one more
 * byte, so that anything longer is refused as -EMSGSIZE, not cut. */
#define SPAWNER_MSG_MAX (WIRE_HEADER_SIZE + 32u + 4u + SPAWNER_STAGE_NAME_MAX + 1u)

/* Held by the broker for each round trip on a spawner's socket
 * (spawner_launch, spawner_stage_open): one request, then its answer,
 * whatever thread asks. Never taken in the spawner. */
extern pthread_mutex_t spawner_mu;

/* Little-endian u32 helpers of the spawner's wire. */
void spawner_put_le32(uint8_t *p, uint32_t v);
uint32_t spawner_get_le32(const uint8_t *p);

/*
 * In the spawner: answers the WIRE_STAGE_OPEN M (its descriptors FDS,
 * the caller's to close) on SOCK, with WIRE_STAGE_OPEN_REPLY and the
 * entry, or WIRE_STAGE_OPEN_FAILED and the refusal's errno (spawner.h
 * says what is checked). Only system calls. Returns 0, or -1 when the
 * broker can no longer be answered.
 */
int spawner_serve_stage_open(int sock, const struct wire_msg *m,
    const int *fds);

#endif
