/*
 * check_seccomp.h: what the seccomp checks share: check_seccomp.c (the
 * table, checks_seccomp in check.h, and the checks of the calls each
 * profile refuses) and check_seccomp_abi.c (the foreign ABIs, the strict
 * profile's kill, the rate of refusals).
 */
#ifndef STOCKADE_CHECK_SECCOMP_H
#define STOCKADE_CHECK_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "check.h"

/* Every job here is a few probe calls: a hang is a defect. */
#define JOB_DEADLINE_MS 10000

/* A denial the result must list, with its exact count. */
struct denial_want {
	const char *name;
	unsigned count;
};

/* J's result's denials as "name xCOUNT, name xCOUNT", or "none", into
 * BUF (LEN bytes). */
void seccomp_denials_text(const struct check_job *j, char *buf, size_t len);

/*
 * Compares J's denials with the N wanted ones WANT (exactly those, with
 * their counts, each with a first_ms). Returns true when they match;
 * otherwise writes what differs into WHY (LEN bytes).
 */
bool seccomp_denials_match(const struct check_job *j,
    const struct denial_want *want, size_t n, char *why, size_t len);

/* check_seccomp_abi.c: checks that end the job or bound it (each
 * commented there). */
void seccomp_x32_abi(struct check_ctx *c, struct check_result *r);
void seccomp_i386_abi(struct check_ctx *c, struct check_result *r);
void seccomp_strict_kills(struct check_ctx *c, struct check_result *r);
void seccomp_refusal_rate(struct check_ctx *c, struct check_result *r);

#endif
