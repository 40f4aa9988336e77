/*
 * progress.h: the progress a person at a terminal sees (issue 8, item 5;
 * README.md, "Progress on a terminal"): a meter for `stockade put` and
 * `get` (bytes, percentage when the total is known, rate, elapsed time)
 * and a status line for a job of `stockade run` that has run for a second
 * ("running 12.3 s of 30 s (limit)").
 *
 * Both are drawn on standard error as one line, redrawn in place with a
 * carriage return and erased with ESC [ K (ECMA-48 EL, "erase in line":
 * every terminal since the VT100), at most every PROGRESS_REDRAW_MS. They
 * appear only when standard output and standard error are both terminals
 * and the command prints no JSON (progress_mode): piped, redirected or
 * --json, the output is byte for byte what it was without them. TERM=dumb
 * (a terminal that cannot erase a line: Emacs' shell, some CI logs) gets
 * no redraws, only the meter's final line.
 *
 * The terminal question is answered once, before the command confines
 * itself (confine.h): isatty is an ioctl (TCGETS) on descriptors opened
 * before, which confinement leaves alone, but nothing here needs to ask
 * it later. Drawing is write(2) to standard error and clock_gettime.
 */
#ifndef STOCKADE_PROGRESS_H
#define STOCKADE_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Redraws at most this often, milliseconds. */
#define PROGRESS_REDRAW_MS 150

/* A transfer shows its meter once it has moved this many bytes or run
 * this long: a small file, the most common put, prints nothing. */
#define PROGRESS_MIN_BYTES (1u << 20)
#define PROGRESS_MIN_MS 500

/* What a command draws. */
enum progress_mode {
	PROGRESS_OFF = 0, /* nothing */
	PROGRESS_FINAL, /* TERM=dumb: the meter's last line only */
	PROGRESS_LIVE, /* a line redrawn in place */
};

/*
 * The mode for a command whose caller said OFF (--no-progress, --json,
 * or output that is the data itself): PROGRESS_OFF when OFF, or when
 * standard output or standard error is not a terminal (isatty(3));
 * PROGRESS_FINAL when TERM is "dumb"; else PROGRESS_LIVE. Call it before
 * confinement. Never fails.
 */
enum progress_mode progress_mode(bool off);

/*
 * BYTES as a human size into BUF (SIZE bytes, at least 16): "512 B",
 * "1.5 KiB", "64.0 MiB", "2.3 GiB" (IEC binary prefixes, one decimal,
 * GiB the largest unit). Returns BUF.
 */
char *progress_bytes(uint64_t bytes, char *buf, size_t size);

/* The meter of one transfer (put, get). */
struct progress {
	enum progress_mode mode;
	int fd; /* drawn on (borrowed): standard error */
	const char *verb; /* "put", "get" (static storage) */
	uint64_t total; /* bytes expected; UINT64_MAX: unknown */
	uint64_t done; /* bytes moved so far */
	int64_t start_ns; /* CLOCK_MONOTONIC at progress_begin */
	int64_t drawn_ns; /* at the last draw; 0: never drawn */
	bool shown; /* a live line is on the terminal */
	bool started; /* past the threshold: the final line is due */
};

/*
 * Sets P up for a transfer of TOTAL bytes (UINT64_MAX: unknown, from a
 * pipe) under MODE, drawn on FD (borrowed) with the word VERB (static).
 * Draws nothing yet.
 */
void progress_begin(struct progress *p, enum progress_mode mode, int fd,
    const char *verb, uint64_t total);

/*
 * Counts BYTES more moved for the meter ARG (a struct progress: the
 * signature of fsapi_set_progress's hook) and redraws the line when the
 * transfer is past the threshold and the last draw is PROGRESS_REDRAW_MS
 * old. Never blocks on anything but the terminal; a failed write stops
 * the drawing. Nothing in PROGRESS_OFF.
 */
void progress_add(void *arg, uint64_t bytes);

/*
 * Erases the live line if one is shown (before a message on stderr);
 * the next progress_add may draw it again. Idempotent.
 */
void progress_clear(struct progress *p);

/*
 * Ends the meter: erases the live line, and when OK and the transfer
 * went past the threshold, prints the final line ("stockade: put 64.0
 * MiB (100%) in 0.4 s, 160.0 MiB/s"). P draws nothing after. Idempotent.
 */
void progress_end(struct progress *p, bool ok);

/*
 * The status line of a running job (`stockade run`, --format stream),
 * ticked by a thread of its own, which the job's output passing through
 * on the same terminal holds off (progress_run_hold/release). The line is
 * drawn only at the start of a line (after the program's output ended
 * with a newline), so that it never erases a line the program has not
 * finished.
 */
struct progress_run {
	bool active; /* the thread runs (false: every call no-op) */
	int fd; /* drawn on (borrowed) */
	uint64_t limit_ms; /* the wall-clock limit shown */
	int64_t start_ns; /* CLOCK_MONOTONIC at progress_run_start */
	bool stop; /* asks the thread to end (under LOCK) */
	bool shown; /* the line is on the terminal (under LOCK) */
	bool at_bol; /* the cursor is at a line's start (LOCK) */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/*
 * Starts the status line of a job with the wall-clock limit LIMIT_MS
 * drawn on FD (borrowed) when MODE is PROGRESS_LIVE (anything else: R
 * stays inactive). The thread blocks every signal, so that they reach
 * the main thread (jobrun's handler, which needs its blocking calls to
 * return EINTR), and draws only once the job has run for 1 s. Returns 0,
 * or a negative errno (pthread_create's) with R inactive: the job runs
 * without a status line.
 */
int progress_run_start(struct progress_run *r, enum progress_mode mode, int fd,
    uint64_t limit_ms);

/*
 * Before the job's output is written to the terminal: takes R's lock and
 * erases the status line. Must be followed by progress_run_release on
 * the same thread. No-op when R is inactive.
 */
void progress_run_hold(struct progress_run *r);

/*
 * After the job's output DATA (LEN bytes, as written; LEN 0: nothing
 * was) went to the terminal: notes whether it ended a line, and gives the
 * lock back. The thread redraws at its next tick.
 */
void progress_run_release(struct progress_run *r, const uint8_t *data,
    size_t len);

/*
 * Stops the thread, waits for it (pthread_join) and erases the line: after
 * this nothing of R writes, so the summary that follows stands alone. R
 * is inactive after. Idempotent.
 */
void progress_run_stop(struct progress_run *r);

#endif
