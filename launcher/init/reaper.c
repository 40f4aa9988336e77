/*
 * reaper.c: jail init as the jail's reaper once the payload runs
 * (jail_init_reap, init_internal.h), and ending a job that has no pid
 * namespace of its own (layer pid_ns off, process_group on;
 * docs/layers.md): without a namespace whose init's death kills
 * everything, init kills the tree below it itself (jail_kill_tree).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "init_internal.h"
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

/*
 * The tasks (threads) of init's pid namespace, init's included, counted
 * in its /proc (one entry of /proc/PID/task per thread: proc(5)), or -1
 * when /proc cannot be read. What the payload left as it ended is the
 * evidence a fork refused at the process limit leaves when the job ends
 * between two of the monitor's samples (docs/results.md, limits_reached).
 */
static int
count_tasks(void)
{
	DIR *d = opendir("/proc"), *t;
	struct dirent *e, *f;
	char path[sizeof("/proc//task") + sizeof(e->d_name)];
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", e->d_name);
		if ((t = opendir(path)) == NULL)
			continue; /* gone since */
		while ((f = readdir(t)) != NULL)
			if (isdigit((unsigned char)f->d_name[0]))
				n++;
		closedir(t);
	}
	closedir(d);
	return n;
}

/* Forwarded to the payload; everything else but SIGCHLD is dropped. */
static bool
forwarded(int sig)
{
	return sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
	    sig == SIGQUIT || sig == SIGUSR1 || sig == SIGUSR2 ||
	    sig == SIGCONT || sig == SIGWINCH;
}

static bool
is_full(int fd)
{
	struct statfs sf;

	return fd >= 0 && fstatfs(fd, &sf) == 0 && sf.f_bavail == 0;
}

/* Whether the stage STAGE (or -1) is full: no block, or no inode left
 * (stage_files bounds the entries). */
static bool
stage_full(int stage)
{
	struct statfs sf;

	return stage >= 0 && fstatfs(stage, &sf) == 0 &&
	    (sf.f_bavail == 0 || sf.f_ffree == 0);
}

/* INIT_FULL_* for the file systems of C's /tmp, home and stage (this
 * one with layer limits on only: off, no disk_full is reported). */
static int32_t
full_flags(const struct init_ctx *c)
{
	return (is_full(c->tmp_fd) ? INIT_FULL_TMP : 0) |
	    (is_full(c->home_fd) ? INIT_FULL_HOME : 0) |
	    (!job_spec_layer_off(c->spec, JOB_LAYER_LIMITS) &&
			stage_full(c->stage_fd)
		    ? INIT_FULL_WORK
		    : 0);
}

_Noreturn void
jail_init_reap(const struct init_ctx *c, pid_t payload, const sigset_t *all)
{
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(all, &si);

		if (sig < 0)
			continue;
		if (sig == SIGCHLD) {
			int st, n;
			pid_t p;

			while ((p = waitpid(-1, &st, WNOHANG | __WALL)) > 0) {
				if (p != payload)
					continue;
				/* The payload, just reaped, counts as
				 * the one it was a moment ago. Only in
				 * the jail's own /proc: without a mount
				 * namespace /proc is the host's. */
				if (c->pidns &&
				    !job_spec_layer_off(c->spec,
					JOB_LAYER_MOUNT_NS) &&
				    (n = count_tasks()) >= 0)
					jail_send_record(c->status_fd,
					    INIT_REC_TASKS, n + 1, 0);
				jail_send_record(c->status_fd,
				    INIT_REC_PAYLOAD_EXIT, st, full_flags(c));
				/* Exiting kills whatever the payload left,
				 * in a pid namespace; without one, init
				 * does it (or, with process_group off,
				 * leaves it). */
				if (!c->pidns && c->group)
					jail_kill_tree(c->proc_fd);
				_exit(0);
			}
		} else if (sig == JAIL_KILL_SIGNAL) {
			/* The launcher ends the job (or died). Without
			 * process_group, only the program it started. */
			if (!c->pidns && c->group)
				jail_kill_tree(c->proc_fd);
			else if (!c->pidns)
				kill(payload, SIGKILL);
			_exit(0);
		} else if (forwarded(sig)) {
			kill(payload, sig);
		}
	}
}
