/*
 * job_begin.c: the first phase of a job in the supervisor (monitor.c,
 * launcher_run_job): the enforcement chosen, the denial log made, a warm
 * jail taken from the pool or a new one asked of the zygote, and the job
 * refused with its RESULT when no jail can run it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "cgroup.h"
#include "enforce.h"
#include "launcher.h"
#include "log.h"
#include "monitor_internal.h"
#include "pool.h"
#include "utf8.h"
#include "zygote.h"

/* The jail could not even be cloned: no process exists. */
static int
clone_failed(struct launcher *l, const struct job_spec *spec, int e)
{
	char detail[256];
	struct job_result r = {.job_id = spec->job_id,
	    .status = JOB_SANDBOX_ERROR,
	    .exit_code = -1,
	    .enforcement = ENFORCE_MONITOR};

	if (e == -EPERM || e == -ENOSPC || e == -EINVAL || e == -EUSERS)
		fmt_words(detail, sizeof(detail),
		    "cannot create the jail's namespaces (%s): unprivileged "
		    "user namespaces are unavailable; run `stockade doctor`",
		    strerror(-e));
	else
		fmt_words(detail, sizeof(detail), "clone3: %s", strerror(-e));
	r.detail = detail;
	return job_send_result(l, &r);
}

/* Running as root without an id-mapped workspace: refuse, never fall back
 * to a payload that is host root. */
static int
setup_refused(struct launcher *l, const struct job_spec *spec, int e)
{
	char detail[300];
	struct job_result r = {.job_id = spec->job_id,
	    .status = JOB_SANDBOX_ERROR,
	    .exit_code = -1,
	    .enforcement = ENFORCE_MONITOR};

	if (e == -EPERM)
		fmt_words(detail, sizeof(detail),
		    "running as root, stockade refuses a workspace owned by "
		    "uid or gid 0: give the job a directory owned by an "
		    "ordinary user, or run stockade as that user");
	else
		fmt_words(detail, sizeof(detail),
		    "running as root, stockade maps the job to uid %u and "
		    "needs an id-mapped mount of the workspace, which failed "
		    "(%s): put the workspace on a file system with idmapped "
		    "mounts (ext4, xfs, btrfs, tmpfs) or run stockade as an "
		    "ordinary user",
		    (unsigned)l->outer_uid, strerror(-e));
	r.detail = detail;
	return job_send_result(l, &r);
}

/* The spec asks for limits this host cannot hold: refuse the job. */
static int
limits_refused(struct launcher *l, const struct job_spec *spec, const char *why)
{
	char detail[JOB_MAX_DETAIL];
	struct job_result r = {.job_id = spec->job_id,
	    .status = JOB_SANDBOX_ERROR,
	    .exit_code = -1,
	    .enforcement = ENFORCE_MONITOR};

	fmt_words(detail, sizeof(detail), "%s", why);
	r.detail = detail;
	return job_send_result(l, &r);
}

/*
 * The jail for SPEC into S->jail: a warm one when POOLABLE and the pool
 * has one built for this kind of job (pool.h), else one the zygote builds
 * now (zygote.h): this process is confined and could not. Its filter is
 * the monitor's unless a cgroup leaf (S->cg_leaf) holds the limits. WSFD
 * and TTY_FD are borrowed. Returns 0 with *ZR the zygote's answer
 * (ZYGOTE_OK, kill_on_denial set, for a warm jail), or a negative errno:
 * the zygote is gone or broken.
 */
static int
take_jail(struct launcher *l, const struct job_spec *spec, int wsfd, int tty_fd,
    bool poolable, struct job_state *s, struct zygote_reply *zr)
{
	/* A job's stdin pipe goes to a waiting jail with its RUN (pool.h);
	 * the caller's terminal needs a jail built with it (no setsid). */
	int stdin_pipe = (spec->flags & JOB_F_STDIN) != 0 ? tty_fd : -1;
	int warm, e = 0;

	memset(zr, 0, sizeof(*zr));
	warm = poolable ? pool_take(&l->pool, &l->zygote, spec, l->run,
			      l->run_len, stdin_pipe,
			      &s->jail, &zr->kill_on_denial)
			: 0;
	/* A jail being prepared answers before any new request: take it
	 * (it may be the one this job can have). */
	if (warm == 0 && l->zygote.prepare_pending) {
		warm = pool_refill_finish(&l->pool, &l->zygote);
		if (warm == 0 && poolable)
			warm = pool_take(&l->pool, &l->zygote, spec, l->run,
			    l->run_len, stdin_pipe, &s->jail,
			    &zr->kill_on_denial);
	}
	if (warm < 0) {
		e = warm;
	} else if (warm == 0) {
		e = zygote_start_jail(&l->zygote, spec, l->run, l->run_len,
		    wsfd, s->cg_leaf, tty_fd, &s->jail, zr);
	}
	return e;
}

/*
 * What launcher_run_job returns when no jail runs SPEC: E, the zygote's
 * failure (negative errno: the session ends), or the RESULT sent for the
 * zygote's refusal ZR; -EPROTO for a refusal the launcher cannot have
 * caused (a request it encoded that did not decode, or one outside the
 * session's authority: the launcher is not itself).
 */
static int
not_started(struct launcher *l, const struct job_spec *spec, int e,
    const struct zygote_reply *zr)
{
	if (e < 0) {
		log_error("the zygote is gone or broken: %s", strerror(-e));
		return e;
	}
	switch (zr->refusal) {
	case ZYGOTE_ROOT_WORKSPACE:
		return setup_refused(l, spec, -EPERM);
	case ZYGOTE_IDMAP:
		return setup_refused(l, spec, -zr->err);
	case ZYGOTE_FILTER:
	case ZYGOTE_LAYERS:
		return limits_refused(l, spec, zr->why);
	case ZYGOTE_CLONE:
		return clone_failed(l, spec, -zr->err);
	case ZYGOTE_OK:
	case ZYGOTE_BAD_REQUEST:
	case ZYGOTE_NOT_SESSION:
		break;
	}
	/* A job the launcher decoded, or one that asks for what the
	 * session's first did not: the launcher is not itself. */
	log_error("the zygote refused the job (%s)",
	    zr->refusal == ZYGOTE_NOT_SESSION
		? "not what the session's first job fixed"
		: "malformed");
	return -EPROTO;
}

bool
job_begin(struct launcher *l, const struct job_spec *spec, int wsfd, int tty_fd,
    struct job_state *s, const char *leaf_name, enum job_enforcement *mode,
    bool *poolable, int *ret)
{
	char why[JOB_MAX_DETAIL];
	struct zygote_reply zr;
	int e;

	if (enforce_choose(l, spec, leaf_name, mode, &s->cg_leaf, why,
		sizeof(why)) < 0) {
		close(wsfd);
		if (tty_fd >= 0)
			close(tty_fd);
		*ret = limits_refused(l, spec, why);
		return false;
	}
	if (denials_init(&s->den, false) < 0) {
		close(wsfd);
		if (tty_fd >= 0)
			close(tty_fd);
		if (s->cg_leaf >= 0) {
			close(s->cg_leaf);
			(void)cg_leaf_remove(l->cg_parent, leaf_name);
		}
		*ret = limits_refused(l, spec, "out of memory");
		return false;
	}
	*poolable = (tty_fd < 0 || (spec->flags & JOB_F_STDIN) != 0) &&
	    s->cg_leaf < 0;
	e = take_jail(l, spec, wsfd, tty_fd, *poolable, s, &zr);
	s->den.kill = zr.kill_on_denial;
	if (tty_fd >= 0)
		close(tty_fd);
	if (e < 0 || zr.refusal != ZYGOTE_OK) {
		close(wsfd);
		denials_free(&s->den);
		if (s->cg_leaf >= 0) {
			close(s->cg_leaf);
			(void)cg_leaf_remove(l->cg_parent, leaf_name);
		}
		*ret = not_started(l, spec, e, &zr);
		return false;
	}
	return true;
}
