/*
 * check_boundary.h: what the boundary checks of `stockade check` share
 * (check_boundary.c, the launcher's side; check_broker_side.c and
 * check_broker_death.c, the broker's side), defined in
 * check_boundary_proc.c: the processes they start and talk to.
 */
#ifndef STOCKADE_CHECK_BOUNDARY_H
#define STOCKADE_CHECK_BOUNDARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "check.h"

/* How long a launcher is given to answer or end its session after the
 * last message, ms: a sound one ends in a few. */
#define SESSION_MS 1500

/* Appends what the non-blocking FD has now to BUF (LEN bytes so far, CAP
 * bytes, kept NUL-terminated); at its end closes it and sets *FD to -1. */
void boundary_drain(int *fd, char *buf, size_t *len, size_t cap);

/* The exit status of a wait(2) status as check_proc gives it. */
int boundary_exit_code(int st);

/* ---- a session with the real launcher ----------------------------------- */

struct lsession {
	pid_t pid; /* the launcher, 0 when none */
	int sock; /* our end of its socket */
	int err; /* its stderr (a pipe), -1 at EOF */
	char errbuf[8192]; /* what it printed there */
	size_t errlen;
	int status; /* its exit status, -1 while unknown */
	uint16_t answer; /* the type of its first answer, 0 none */
	bool eof; /* it closed the session */
	bool timed_out; /* neither within SESSION_MS */
};

/*
 * Starts C's launcher as the broker does (spawner_exec_launcher): its
 * socket at fd 3, stdin and stdout /dev/null, stderr a pipe to us, only
 * STOCKADE_PLANT of C's environment. Returns 0 or a negative errno.
 */
int ls_start(struct check_ctx *c, struct lsession *s);

/* Sends LEN bytes of MSG with the NFDS (at most 4) descriptors FDS.
 * Errors are returned, not judged: a sound launcher may be gone
 * already. Returns 0 or a negative errno. */
int ls_send(struct lsession *s, const void *msg, size_t len, const int *fds,
    size_t nfds);

/*
 * Waits up to MS milliseconds for the launcher's next answer (its type
 * into S->answer; the type is read from the bytes, not with the decoder
 * under test) or the end of the session (S->eof), reading its stderr
 * meanwhile. Neither: S->timed_out.
 */
void ls_watch(struct lsession *s, int ms);

/* Ends the session: closes our end, gives the launcher a second, then
 * kills its process group; reaps it into S->status and reads the rest
 * of its stderr. */
void ls_end(struct lsession *s);

/* The verdict on an ended session after the bad message WHAT: a sound
 * launcher ended it (EOF) without an answer, exiting 1 with "ending the
 * session" on stderr. */
void ls_verdict(const struct lsession *s, struct check_result *r,
    const char *what);

/* Starts a session and exchanges HELLO; on failure says why in R and
 * ends the session. Returns true when S is in the READY phase. */
bool ls_hello(struct check_ctx *c, struct lsession *s, struct check_result *r);

/*
 * Writes into BUF the launcher's reason for ending the session: the
 * error line before "ending the session: ..." and that line's cause, as
 * "CAUSE (ending the session: WHY)". Returns false when there is none.
 */
bool ls_reason(const struct lsession *s, char *buf, size_t len);

/* The last line of the launcher's stderr, for an observation, in BUF. */
const char *ls_last_words(const struct lsession *s, char *buf, size_t len);

/* ---- a `stockade run` in the background --------------------------------- */

struct bgrun {
	pid_t pid; /* stockade run, 0 once reaped */
	int out, err; /* its stdout and stderr, -1 at EOF */
	char obuf[16384], ebuf[4096];
	size_t olen, elen;
	int status; /* its exit status, -1 while unknown */
};

/* Starts ARGV (ARGV[0] absolute, at most 31 words) with C's environment,
 * in a process group of its own, stdin /dev/null, stdout and stderr read
 * into B. Returns 0 or a negative errno. */
int bgrun_start(struct check_ctx *c, const char *const argv[], struct bgrun *b);

/* Reads B's output for up to MS ms; returns true once it has exited
 * (reaped, B->status set). */
bool bgrun_poll(struct bgrun *b, int ms);

/* Kills what is left of B (its process group) and reaps it. */
void bgrun_end(struct bgrun *b);

/* The first child of PARENT found in /proc whose comm is a launcher's
 * ("stockade-launch..."; into COMM, LEN bytes at least 16), or 0. */
pid_t boundary_find_child(pid_t parent, char *comm, size_t len);

/* True when NAME exists in the directory DIR. */
bool boundary_exists_in(int dir, const char *name);

/* boundary.broker_death_kills_jail (check_broker_death.c, commented
 * there): runs its job on C, its verdict in R. */
void boundary_broker_death(struct check_ctx *c, struct check_result *r);

#endif
