/*
 * payload_start.c: jail init starting its payload (init_internal.h):
 * forked once the jail is built, either to run its job at once (a cold
 * jail) or, in a warm pool's jail, to confine itself and wait for the
 * job init hands over (handover.h; issue 27).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "handover.h"
#include "init_internal.h"
#include "jail.h"

/* Forks S's payload with OUT_FD and ERR_FD as its stdout and stderr and
 * NOTIFY_FD, then closes init's copies of those, of the Landlock ruleset,
 * of IN_FD and of HAND_FD (each -1 when absent). With HAND_FD >= 0 the
 * payload is a warm jail's (jail_wait_payload), else it runs S's job at
 * once (jail_exec_payload). Returns its pid. */
static pid_t
fork_payload(struct init_setup *s, int out_fd, int err_fd, int notify_fd,
    int in_fd, int hand_fd)
{
	const struct init_ctx *c = s->c;
	pid_t payload = fork();

	if (payload < 0)
		setup_failed(c->status_fd, STAGE_FORK_PAYLOAD, errno);
	if (payload == 0) {
		if (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
			setup_failed(c->status_fd, STAGE_STDIO, errno);
		if (hand_fd >= 0)
			jail_wait_payload(c->spec, c->h->filter, s->landlock_rs,
			    s->landlock_abi, c->status_fd, notify_fd, hand_fd);
		jail_exec_payload(c->spec, c->h->filter, s->landlock_rs,
		    s->landlock_abi, c->status_fd, notify_fd, in_fd);
	}
	close(out_fd);
	close(err_fd);
	/* A warm jail's init sends on it once the job has come. */
	if (hand_fd < 0)
		close(notify_fd);
	if (s->landlock_rs >= 0)
		close(s->landlock_rs);
	if (in_fd >= 0)
		close(in_fd);
	if (hand_fd >= 0)
		close(hand_fd);
	return payload;
}

/*
 * Waits until GO_FD has the job (true) or the payload's end of the
 * hand-over socket HAND is closed first (false: the payload ended while
 * it waited, its set-up failed). Signals are blocked; EINTR retried.
 */
static bool
job_before_payload_end(int go_fd, int hand, int status_fd)
{
	struct pollfd p[2] = {{.fd = go_fd, .events = POLLIN},
	    {.fd = hand, .events = POLLIN}};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			setup_failed(status_fd, STAGE_POOL_JOB, errno);
		}
		if (p[0].revents != 0)
			return true;
		if (p[1].revents != 0)
			return false;
	}
}

/* The warm jail's case of jail_init_start_payload (init_internal.h). */
static pid_t
warm_payload(struct init_setup *s, int go_fd, int out_fd, int err_fd,
    int notify_fd)
{
	struct init_ctx *c = s->c;
	int hand[2], in_fd = -1, e;
	pid_t payload;

	/* Above 2: init has closed its standard streams, which the
	 * payload's dup2 of stdout and stderr would take over. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, hand) < 0 ||
	    (hand[0] = above_stdio(hand[0], F_DUPFD_CLOEXEC)) < 0 ||
	    (hand[1] = above_stdio(hand[1], F_DUPFD_CLOEXEC)) < 0)
		setup_failed(c->status_fd, STAGE_POOL_JOB, errno);
	payload = fork_payload(s, out_fd, err_fd, notify_fd, -1, hand[1]);
	if (!job_before_payload_end(go_fd, hand[0], c->status_fd)) {
		/* The payload said why on the status pipe; the reaper
		 * reports its end, and the launcher's pool sees init go. */
		close(hand[0]);
		close(go_fd);
		close(notify_fd);
		return payload;
	}
	c->spec = jail_init_take_job(c->spec, go_fd, c->status_fd, &in_fd);
	/* Sent now, not while the jail waits: descriptors in flight in a
	 * unix socket count against the host user's RLIMIT_NOFILE
	 * (unix(7), ETOOMANYREFS), across every waiting jail. Before the
	 * payload's listener, notify.c's order. */
	jail_init_send_egress(c, notify_fd);
	jail_init_send_stage(c, notify_fd);
	close(notify_fd);
	if ((e = handover_send(hand[0], c->spec, in_fd)) < 0)
		setup_failed(c->status_fd, STAGE_POOL_JOB, -e);
	close(hand[0]);
	if (in_fd >= 0)
		close(in_fd);
	return payload;
}

pid_t
jail_init_start_payload(struct init_setup *s, int go_fd, int out_fd, int err_fd,
    int notify_fd, int in_fd)
{
	struct init_ctx *c = s->c;

	if (go_fd >= 0 && c->mountns)
		return warm_payload(s, go_fd, out_fd, err_fd, notify_fd);
	if (go_fd >= 0)
		c->spec = jail_init_take_job(c->spec, go_fd, c->status_fd,
		    &in_fd);
	jail_init_send_egress(c, notify_fd);
	jail_init_send_stage(c, notify_fd);
	return fork_payload(s, out_fd, err_fd, notify_fd, in_fd, -1);
}
