/*
 * progress.c: the meter of `stockade put/get` and the status line of
 * `stockade run` on a terminal (progress.h).
 */
#include "progress.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

/* ECMA-48: carriage return, then EL (erase from the cursor to the end of
 * the line): the line as it was before anything was drawn on it. */
#define ERASE "\r\033[K"

#define NS_PER_MS INT64_C(1000000)

static int64_t
now_ns(void)
{
	struct timespec ts;

	/* Through the vDSO: no system call in the usual case. */
	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

enum progress_mode
progress_mode(bool off)
{
	const char *term = getenv("TERM");

	if (off || isatty(STDOUT_FILENO) != 1 || isatty(STDERR_FILENO) != 1)
		return PROGRESS_OFF;
	if (term != NULL && strcmp(term, "dumb") == 0)
		return PROGRESS_FINAL;
	return PROGRESS_LIVE;
}

char *
progress_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {"KiB", "MiB", "GiB"};
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return buf;
	}
	v /= 1024.0;
	while (u + 1 < sizeof(units) / sizeof(units[0]) && v >= 1024.0) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

void
progress_begin(struct progress *p, enum progress_mode mode, int fd,
    const char *verb, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->fd = fd;
	p->verb = verb;
	p->total = total;
	p->start_ns = now_ns();
}

/* Writes LINE (LEN bytes) to P's terminal; a failure stops the meter
 * (a terminal gone: nothing more to show). */
static void
meter_write(struct progress *p, const char *line, size_t len)
{
	if (write_all(p->fd, line, len) < 0)
		p->mode = PROGRESS_OFF;
}

/* ", 95.3 MiB/s" of P after ELAPSED ns into BUF (SIZE bytes); empty
 * when no time has passed on the clock. */
static void
meter_rate(const struct progress *p, int64_t elapsed, char *buf, size_t size)
{
	char b[32];
	double rate;

	if (elapsed <= 0) {
		buf[0] = '\0';
		return;
	}
	rate = (double)p->done * 1e9 / (double)elapsed;
	progress_bytes(rate >= 1.8e19 ? UINT64_MAX : (uint64_t)rate, b,
	    sizeof(b));
	snprintf(buf, size, ", %s/s", b);
}

/* " (18%)" when the total is known, floored (100% only when all of it
 * has moved); else empty. */
static void
meter_percent(const struct progress *p, char *buf, size_t size)
{
	unsigned pc;

	if (p->total == UINT64_MAX) {
		buf[0] = '\0';
		return;
	}
	if (p->done >= p->total)
		pc = 100;
	else
		pc = (unsigned)((double)p->done * 100.0 / (double)p->total);
	snprintf(buf, size, " (%u%%)", pc > 100 ? 100 : pc);
}

/* Draws P's live line at NOW: "stockade: put 12.0 MiB of 64.0 MiB (18%),
 * 95.3 MiB/s, 0.1 s". At most about 80 columns, so that it never wraps
 * on a terminal of the usual width (a wrapped line cannot be redrawn
 * with a carriage return). */
static void
meter_draw(struct progress *p, int64_t now)
{
	char line[192], done[32], total[32], pc[16], rate[48];
	int64_t elapsed = now - p->start_ns;
	int n;

	progress_bytes(p->done, done, sizeof(done));
	meter_percent(p, pc, sizeof(pc));
	meter_rate(p, elapsed, rate, sizeof(rate));
	if (p->total != UINT64_MAX)
		progress_bytes(p->total, total, sizeof(total));
	n = snprintf(line, sizeof(line),
	    ERASE "stockade: %s %s%s%s%s%s, "
		  "%.1f s",
	    p->verb, done, p->total != UINT64_MAX ? " of " : "",
	    p->total != UINT64_MAX ? total : "", pc, rate,
	    (double)elapsed / 1e9);
	if (n < 0)
		return;
	meter_write(p, line,
	    (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	p->shown = p->mode == PROGRESS_LIVE;
	p->drawn_ns = now;
}

void
progress_add(void *arg, uint64_t bytes)
{
	struct progress *p = arg;
	int64_t now;

	if (p->mode == PROGRESS_OFF)
		return;
	p->done = p->done + bytes < p->done ? UINT64_MAX : p->done + bytes;
	now = now_ns();
	if (!p->started)
		p->started = p->done >= PROGRESS_MIN_BYTES ||
		    now - p->start_ns >= PROGRESS_MIN_MS * NS_PER_MS;
	if (!p->started || p->mode != PROGRESS_LIVE)
		return;
	if (p->drawn_ns != 0 &&
	    now - p->drawn_ns < PROGRESS_REDRAW_MS * NS_PER_MS)
		return;
	meter_draw(p, now);
}

void
progress_clear(struct progress *p)
{
	if (!p->shown)
		return;
	p->shown = false;
	/* The next progress_add may draw at once. */
	p->drawn_ns = 0;
	meter_write(p, ERASE, sizeof(ERASE) - 1);
}

void
progress_end(struct progress *p, bool ok)
{
	char line[192], done[32], pc[16], rate[48];
	int64_t elapsed;
	int n;

	progress_clear(p);
	if (p->mode == PROGRESS_OFF || !ok || !p->started) {
		p->mode = PROGRESS_OFF;
		return;
	}
	elapsed = now_ns() - p->start_ns;
	progress_bytes(p->done, done, sizeof(done));
	meter_percent(p, pc, sizeof(pc));
	meter_rate(p, elapsed, rate, sizeof(rate));
	n = snprintf(line, sizeof(line), "stockade: %s %s%s in %.1f s%s\n",
	    p->verb, done, pc, (double)elapsed / 1e9, rate);
	if (n > 0)
		meter_write(p, line,
		    (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	p->mode = PROGRESS_OFF;
}

/* MS as seconds, as short as exact: "30", "0.25", "1.5". */
static void
seconds_text(uint64_t ms, char *buf, size_t size)
{
	char frac[8];
	size_t len;

	if (ms % 1000 == 0) {
		snprintf(buf, size, "%" PRIu64, ms / 1000);
		return;
	}
	snprintf(frac, sizeof(frac), "%03u", (unsigned)(ms % 1000));
	len = strlen(frac);
	while (len > 1 && frac[len - 1] == '0')
		frac[--len] = '\0';
	snprintf(buf, size, "%" PRIu64 ".%s", ms / 1000, frac);
}

/* Draws or erases R's line; R's lock held. */
static void
status_draw(struct progress_run *r)
{
	char line[128], limit[32];
	int64_t elapsed = now_ns() - r->start_ns;
	int n;

	if (elapsed < 1000 * NS_PER_MS || !r->at_bol)
		return;
	seconds_text(r->limit_ms, limit, sizeof(limit));
	n = snprintf(line, sizeof(line),
	    ERASE "stockade: running %.1f s of "
		  "%s s (limit)",
	    (double)elapsed / 1e9, limit);
	if (n > 0 && (size_t)n < sizeof(line) &&
	    write_all(r->fd, line, (size_t)n) == 0)
		r->shown = true;
}

static void
status_erase(struct progress_run *r)
{
	if (!r->shown)
		return;
	r->shown = false;
	(void)write_all(r->fd, ERASE, sizeof(ERASE) - 1);
}

static void *
status_thread(void *arg)
{
	struct progress_run *r = arg;
	struct timespec until;

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += PROGRESS_REDRAW_MS * NS_PER_MS;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		/* Until the tick or progress_run_stop, whichever first (0:
		 * signalled, or woken spuriously; ETIMEDOUT: the tick). */
		while (!r->stop &&
		    pthread_cond_timedwait(&r->cond, &r->lock, &until) == 0)
			;
		if (!r->stop)
			status_draw(r);
	}
	status_erase(r);
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

int
progress_run_start(struct progress_run *r, enum progress_mode mode, int fd,
    uint64_t limit_ms)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int e;

	memset(r, 0, sizeof(*r));
	if (mode != PROGRESS_LIVE)
		return 0;
	r->fd = fd;
	r->limit_ms = limit_ms;
	r->at_bol = true;
	r->start_ns = now_ns();
	if ((e = pthread_condattr_init(&ca)) != 0)
		return -e;
	/* The tick is measured on the clock the elapsed time is. */
	if ((e = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC)) != 0 ||
	    (e = pthread_cond_init(&r->cond, &ca)) != 0) {
		pthread_condattr_destroy(&ca);
		return -e;
	}
	pthread_condattr_destroy(&ca);
	if ((e = pthread_mutex_init(&r->lock, NULL)) != 0) {
		pthread_cond_destroy(&r->cond);
		return -e;
	}
	/* The thread inherits the mask: every signal blocked in it. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&r->thread, NULL, status_thread, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->cond);
		return -e;
	}
	r->active = true;
	return 0;
}

void
progress_run_hold(struct progress_run *r)
{
	if (!r->active)
		return;
	pthread_mutex_lock(&r->lock);
	status_erase(r);
}

void
progress_run_release(struct progress_run *r, const uint8_t *data, size_t len)
{
	if (!r->active)
		return;
	if (len > 0)
		r->at_bol = data[len - 1] == '\n';
	pthread_mutex_unlock(&r->lock);
}

void
progress_run_stop(struct progress_run *r)
{
	if (!r->active)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	r->active = false;
}
