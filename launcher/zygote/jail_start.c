/*
 * jail_start.c: the zygote cloning a jail's init (jail.h, jail_start):
 * the pipes and sockets between init and the launcher, the namespaces of
 * clone3, and the id maps written before init is released. What init
 * does next is init/jail_init.c.
 */

#include "jail.h"
#include "jail_init.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"

static void
close_pair(int p[2])
{
	close_fdp(&p[0]);
	close_fdp(&p[1]);
}

/*
 * The namespaces of a jail's init, each with the layer it belongs to: an
 * evaluation that turns a layer off (docs/layers.md) leaves its flags
 * out, here and nowhere else.
 */
static const struct {
	enum job_layer layer;
	uint64_t flag;
} namespace_flags[] = {
    {JOB_LAYER_USER_NS, CLONE_NEWUSER},
    {JOB_LAYER_PID_NS, CLONE_NEWPID},
    {JOB_LAYER_NETWORK_NS, CLONE_NEWNET},
    {JOB_LAYER_IPC_UTS, CLONE_NEWUTS},
    {JOB_LAYER_IPC_UTS, CLONE_NEWIPC},
    {JOB_LAYER_IPC_UTS, CLONE_NEWCGROUP},
};

/*
 * Fills CA, the clone3(2) arguments of SPEC's jail init: CLONE_PIDFD into
 * *PIDFD, a new namespace for each namespace layer on (namespace_flags),
 * born in H's cgroup leaf when it has one, and CLONE_PARENT when H asks
 * for init as the launcher's child (h->sibling). Takes and returns
 * nothing else.
 */
static void
clone_args_for(const struct job_spec *spec, const struct jail_host *h,
    int *pidfd, struct clone_args *ca)
{
	memset(ca, 0, sizeof(*ca));
	ca->flags = CLONE_PIDFD;
	for (size_t i = 0;
	     i < sizeof(namespace_flags) / sizeof(namespace_flags[0]); i++)
		if (!job_spec_layer_off(spec, namespace_flags[i].layer))
			ca->flags |= namespace_flags[i].flag;
	/* Born in its cgroup leaf (clone3(2), Linux 5.7): no moment where
	 * the jail runs outside its limits. */
	if (h->cgroup_fd >= 0) {
		ca->flags |= CLONE_INTO_CGROUP;
		ca->cgroup = (uint64_t)h->cgroup_fd;
	}
	ca->pidfd = (uint64_t)(uintptr_t)pidfd;
	ca->exit_signal = SIGCHLD;
	/* The launcher's child, not ours: it reaps init and waits on its
	 * pidfd. clone3 wants exit_signal 0 with CLONE_PARENT; the kernel
	 * then uses our own exit signal, SIGCHLD (we were forked). */
	if (h->sibling) {
		ca->flags |= CLONE_PARENT;
		ca->exit_signal = 0;
	}
}

int
jail_start(const struct job_spec *spec, int wsfd, int work_tree_fd,
    const struct jail_host *h, struct jail *j)
{
	int sync[2] = {-1, -1}, status[2] = {-1, -1};
	int out[2] = {-1, -1}, err[2] = {-1, -1}, notify[2] = {-1, -1};
	int go[2] = {-1, -1};
	int pidfd = -1, e;
	struct clone_args ca;
	long pid;

	memset(j, 0, sizeof(*j));
	j->pidfd = j->out_fd = j->err_fd = j->status_fd = -1;
	j->notify_sock = j->go_fd = -1;
	if (pipe2(sync, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, notify) < 0 ||
	    (h->pooled &&
		socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) <
		    0)) {
		e = -errno;
		goto fail;
	}

	clone_args_for(spec, h, &pidfd, &ca);
	clock_gettime(CLOCK_MONOTONIC, &j->start);
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid == 0) {
		close(sync[1]);
		close(status[0]);
		close(out[0]);
		close(err[0]);
		close(notify[0]);
		if (go[0] >= 0)
			close(go[0]);
		jail_init_main(spec, wsfd, work_tree_fd, h, sync[0], status[1],
		    out[1], err[1], notify[1], go[1]);
	}
	if (pid < 0) {
		e = -errno;
		goto fail;
	}
	close_fdp(&sync[0]);
	close_fdp(&status[1]);
	close_fdp(&out[1]);
	close_fdp(&err[1]);
	close_fdp(&notify[1]);
	close_fdp(&go[1]);
	j->go_fd = go[0];
	j->notify_sock = notify[0];
	fcntl(j->notify_sock, F_SETFL, O_NONBLOCK);
	j->pid = (pid_t)pid;
	j->pidfd = pidfd;
	j->status_fd = status[0];
	j->out_fd = out[0];
	j->err_fd = err[0];
	fcntl(j->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(j->err_fd, F_SETFL, O_NONBLOCK);

	/* On failure init reads EOF, reports STAGE_ID_MAPS and exits: the
	 * job ends as sandbox_error through the usual path. No user
	 * namespace (layer user_ns off), no maps: init is released at
	 * once. */
	e = (ca.flags & CLONE_NEWUSER) != 0
	    ? jail_write_id_maps(j->pid, j->pidfd, spec, h)
	    : 0;
	if (e < 0)
		log_error("cannot write the jail's id maps: %s", strerror(-e));
	else if (write(sync[1], "1", 1) != 1)
		log_error("cannot release jail init: %s", strerror(errno));
	close_fdp(&sync[1]);
	return 0;
fail:
	close_pair(sync);
	close_pair(status);
	close_pair(out);
	close_pair(err);
	close_pair(notify);
	close_pair(go);
	return e;
}
