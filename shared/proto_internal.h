/* proto_internal.h: the wire checks proto.c, proto_run.c and
 * proto_check.c share. */
#ifndef STOCKADE_PROTO_INTERNAL_H
#define STOCKADE_PROTO_INTERNAL_H

#include <stdint.h>

#include "proto.h"

/* 0, or -EINVAL for a limit of 0 (each one is required). */
int proto_check_limits(const struct job_limits *l);
/* 0, or -EINVAL for a spec the launcher must refuse (proto.h, RUN). */
int proto_check_spec(const struct job_spec *s);
/* As proto_check_spec plus bounds and NULLs, for the encoder. */
int proto_check_encodable(const struct job_spec *s);
/* 0, or -EINVAL for an inconsistent result (STATUS as on the wire). */
int proto_check_result(uint32_t status, const struct job_result *r,
    const char *detail);

#endif
