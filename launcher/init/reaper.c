/*
 * reaper.c: jail init ending a job that has no pid namespace of its own
 * (layer pid_ns off, process_group on; docs/layers.md): without a
 * namespace whose init's death kills everything, init kills the tree
 * below it itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail.h"
#include "usage.h"

/* jail_kill_tree's bounds: the processes one walk lists, and the walks. */
#define KILL_WALK_MAX 65536u
#define KILL_ROUNDS 5000

/* A process of the tree jail_kill_tree walks: SIGKILL through a pidfd, once
 * the pidfd shows it is still the child of the process it was listed
 * under (its pid was not reused meanwhile). */
struct kill_ctx {
	int proc_fd;
	pid_t self;
	unsigned killed;
};

static void
kill_one(void *arg, const struct proc_stat *st)
{
	struct kill_ctx *k = arg;
	struct proc_stat now;
	char path[32], buf[1024];
	ssize_t n;
	int pidfd, fd;

	if (st->pid == k->self || st->state == 'Z' || st->state == 'X')
		return;
	pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
	if (pidfd < 0)
		return;
	snprintf(path, sizeof(path), "%d/stat", (int)st->pid);
	fd = openat(k->proc_fd, path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0 && usage_parse_stat(buf, (size_t)n, &now) == 0 &&
	    now.ppid == st->ppid &&
	    syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0)
		k->killed++;
	close(pidfd);
}

/* jail.h */
void
jail_kill_tree(int proc_fd)
{
	struct kill_ctx k = {.proc_fd = proc_fd, .self = getpid()};
	struct usage_walker w;
	struct jail_usage u;
	int r;

	if (proc_fd < 0 || usage_walker_init(&w, KILL_WALK_MAX) < 0)
		return;
	w.each = kill_one;
	w.each_arg = &k;
	for (int round = 0; round < KILL_ROUNDS; round++) {
		const struct timespec pause = {0, 1000000};

		k.killed = 0;
		r = usage_walk(&w, proc_fd, k.self, &u);
		while (waitpid(-1, NULL, WNOHANG | __WALL) > 0)
			;
		if (r == 0 && u.processes <= 1)
			break;
		/* The killed die and are reparented asynchronously. */
		nanosleep(&pause, NULL);
	}
	usage_walker_free(&w);
}
