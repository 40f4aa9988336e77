/*
 * denials.h: the launcher's side of the jail's seccomp filter: choosing
 * the filter for a job, taking its listener from the payload, answering
 * every refused call and recording it for the result (seccomp_unotify(2)).
 */
#ifndef STOCKADE_DENIALS_H
#define STOCKADE_DENIALS_H

#include <stdbool.h>
#include <stdint.h>

#include <seccomp.h>

#include "proto.h"

/* One job's refused calls. */
struct denial_log {
	int listener; /* the filter's listener (owned), or -1; the
			  * payload sends it (WIRE_SECCOMP_LISTENER, taken
			  * by supervisor/notify.c) */
	bool kill; /* the profile ends the job at a refusal */
	bool ended; /* a refusal that ends the job came */
	char detail[160]; /* why it ended, for the result */
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	uint32_t n; /* entries of the result's denials */
	struct job_denial d[JOB_MAX_DENIALS];
	uint64_t dropped; /* refusals of calls past JOB_MAX_DENIALS */
	/* The answer budget (denials_hold_ms): answers left, and the
	 * milliseconds of the job when it was last refilled. */
	uint32_t tokens;
	uint64_t refill_ms;
};

/* DENIALS_RATE and DENIALS_BURST: shared/result.h (the check reads
 * them too). */
#define DENIALS_BATCH 10 /* answers a hold waits for (10 ms' worth) */

/* Prepares LOG for a job whose profile has `denied = kill` when KILL.
 * Returns 0 or -ENOMEM. */
int denials_init(struct denial_log *log, bool kill);

/*
 * Answers one notification waiting on LOG's listener: records the call
 * (by name, or "ARCH:NR" for a foreign ABI; its count and, the first
 * time, NOW_MS) and answers EPERM (EAFNOSUPPORT for socket). A foreign
 * ABI, or any refusal under a `denied = kill` profile, sets LOG->ended and
 * is not answered: the caller kills the jail, and the call never returns.
 * Returns 0, or -ENOENT when the caller went away meanwhile (nothing to
 * answer), or another negative errno when the listener is unusable.
 */
int denials_answer(struct denial_log *log, uint64_t now_ms);

/*
 * Whether LOG's listener may be read at NOW_MS (milliseconds of the job,
 * not decreasing): 0 when an answer is in the budget (DENIALS_RATE), else
 * the milliseconds until DENIALS_BATCH answers are, during which the
 * caller leaves the listener unread (and wakes when they are up). Each
 * denials_answer that receives a notification spends one answer; the
 * counts of the result are unchanged, every refused call is still
 * answered and recorded, later.
 */
int denials_hold_ms(struct denial_log *log, uint64_t now_ms);

/* Copies the record into RES (denials, ndenials). */
void denials_result(const struct denial_log *log, struct job_result *res);

/* Frees LOG's buffers and closes its listener. */
void denials_free(struct denial_log *log);

#endif
