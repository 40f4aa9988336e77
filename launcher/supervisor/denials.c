/* denials.c: see denials.h. */
#include "denials.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "utf8.h"

int
denials_init(struct denial_log *log, bool kill)
{
	memset(log, 0, sizeof(*log));
	log->listener = -1;
	log->kill = kill;
	log->tokens = DENIALS_BURST;
	if (seccomp_notify_alloc(&log->req, &log->resp) < 0)
		return -ENOMEM;
	return 0;
}

/* The record of NAME, made when it is new (NULL when the table is full). */
static struct job_denial *
entry(struct denial_log *log, const char *name, uint64_t now_ms)
{
	for (uint32_t i = 0; i < log->n; i++)
		if (strcmp(log->d[i].syscall, name) == 0)
			return &log->d[i];
	if (log->n == JOB_MAX_DENIALS)
		return NULL;
	snprintf(log->d[log->n].syscall, sizeof(log->d[0].syscall), "%s", name);
	log->d[log->n].first_ms = now_ms;
	return &log->d[log->n++];
}

/* The name of ARCH as the result spells a foreign ABI. */
static const char *
arch_name(uint32_t arch)
{
	switch (arch) {
	case SCMP_ARCH_X86:
		return "i386";
	case SCMP_ARCH_X32:
		return "x32";
	default:
		return "abi";
	}
}

/*
 * The caller of a notified call was interrupted by a signal or died before
 * its answer: the kernel says ENOENT (seccomp_unotify(2)), which
 * libseccomp 2.5 reports as ECANCELED. Nothing to answer; not an error.
 */
static bool
gone(int e)
{
	return e == -ENOENT || e == -ECANCELED;
}

int
denials_answer(struct denial_log *log, uint64_t now_ms)
{
	struct seccomp_notif *req = log->req;
	struct seccomp_notif_resp *resp = log->resp;
	bool foreign, ends;
	char name[JOB_DENIAL_NAME];
	struct job_denial *d;
	int nr, e;

	memset(req, 0, sizeof(*req));
	if ((e = seccomp_notify_receive(log->listener, req)) < 0)
		return gone(e) ? 0 : e;
	if (log->tokens > 0)
		log->tokens--;
	nr = req->data.nr;
	/* An x32 call shows the native arch with the x32 bit in its number. */
	foreign = req->data.arch != SCMP_ARCH_X86_64 || (nr & 0x40000000);
	if (foreign) {
		/* Unsigned: a program may ask for any number, -1 too, and a
		 * name holds only [a-z0-9_:] (proto_check.c). */
		snprintf(name, sizeof(name), "%s:%u",
		    req->data.arch == SCMP_ARCH_X86_64
			? "x32"
			: arch_name(req->data.arch),
		    req->data.arch == SCMP_ARCH_X86_64
			? (unsigned)nr & ~0x40000000u
			: (unsigned)nr);
	} else {
		char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64,
		    nr);

		if (s != NULL && strlen(s) < sizeof(name))
			snprintf(name, sizeof(name), "%s", s);
		else
			snprintf(name, sizeof(name), "nr:%u", (unsigned)nr);
		free(s);
	}
	if ((d = entry(log, name, now_ms)) == NULL)
		log->dropped++;
	else
		d->count++;
	ends = foreign || log->kill;
	if (ends && !log->ended) {
		log->ended = true;
		fmt_words(log->detail, sizeof(log->detail),
		    "%s system call %s, "
		    "refused by the seccomp filter, ended the job",
		    foreign ? "the foreign-ABI" : "the", name);
	}
	/* The job ends: the call never returns (the caller kills). */
	if (log->ended)
		return 0;
	memset(resp, 0, sizeof(*resp));
	resp->id = req->id;
	resp->error = strcmp(name, "socket") == 0 ? -EAFNOSUPPORT : -EPERM;
	e = seccomp_notify_respond(log->listener, resp);
	return gone(e) ? 0 : e;
}

/* Adds the answers earned since LOG->refill_ms, up to DENIALS_BURST. */
static void
refill(struct denial_log *log, uint64_t now_ms)
{
	uint64_t add;

	if (now_ms <= log->refill_ms)
		return;
	add = (now_ms - log->refill_ms) * (DENIALS_RATE / 1000);
	log->tokens = add >= DENIALS_BURST - log->tokens
	    ? DENIALS_BURST
	    : (uint32_t)(log->tokens + add);
	log->refill_ms = now_ms;
}

int
denials_hold_ms(struct denial_log *log, uint64_t now_ms)
{
	refill(log, now_ms);
	if (log->tokens > 0)
		return 0;
	return DENIALS_BATCH / (DENIALS_RATE / 1000);
}

void
denials_result(const struct denial_log *log, struct job_result *res)
{
	res->ndenials = log->n;
	memcpy(res->denials, log->d, log->n * sizeof(log->d[0]));
}

void
denials_free(struct denial_log *log)
{
	if (log->listener >= 0)
		close(log->listener);
	log->listener = -1;
	seccomp_notify_free(log->req, log->resp);
	log->req = NULL;
	log->resp = NULL;
}
