/*
 * eval_job.c: `stockade run` under a terminal owner, and the file API
 * steps (eval_job.h; issue 6).
 */
#include "eval_job.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

int64_t
eval_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
eval_sleep_ms(int64_t ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

	while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void
eval_sink_read(struct eval_sink *s)
{
	unsigned char buf[65536];

	for (;;) {
		ssize_t n = read(s->fd, buf, sizeof(buf));
		size_t take;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) { /* EOF, or EIO: a pty whose slave closed */
			close_fdp(&s->fd);
			return;
		}
		s->total += (uint64_t)n;
		take = s->keep - s->len < (size_t)n ? s->keep - s->len
						    : (size_t)n;
		if (take > 0 && s->len + take > s->cap) {
			size_t ncap = s->cap ? s->cap : 65536;
			unsigned char *nd;

			while (ncap < s->len + take)
				ncap *= 2;
			if ((nd = realloc(s->data, ncap)) == NULL)
				take = 0;
			else {
				s->data = nd;
				s->cap = ncap;
			}
		}
		memcpy(s->data + s->len, buf, take);
		s->len += take;
	}
}

/* execve(2) of ARGV[0]; it does not write its arrays (the casts are
 * C's, which has no const-correct prototype for it). */
static void
exec_argv(const char *const argv[], const char *const envp[])
{
	execve(argv[0], (char *const *)(uintptr_t)argv,
	    (char *const *)(uintptr_t)envp);
}

/*
 * Runs ARGV (ARGV[0] the program's path) with ENVP, standard streams on
 * /dev/null, and waits at most MS milliseconds (then kills it). Returns
 * its exit status, 128 + a signal, or a negative errno.
 */
int
eval_spawn_wait(const char *const argv[], const char *const envp[], int64_t ms)
{
	_cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int status = 0;
	int64_t end = eval_now_ms() + ms;
	pid_t pid, r;

	if (null < 0)
		return -errno;
	if ((pid = fork()) < 0)
		return -errno;
	if (pid == 0) {
		if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		exec_argv(argv, envp);
		_exit(127);
	}
	while ((r = waitpid(pid, &status, WNOHANG)) == 0) {
		if (eval_now_ms() > end)
			(void)kill(pid, SIGKILL);
		eval_sleep_ms(5);
	}
	if (r < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- the job ------------------------------------------------------------ */

void
eval_job_init(struct eval_job *j, size_t out_keep, size_t err_keep,
    size_t pty_keep)
{
	memset(j, 0, sizeof(*j));
	j->out = (struct eval_sink){.keep = out_keep, .fd = -1};
	j->err = (struct eval_sink){.keep = err_keep, .fd = -1};
	j->pty = (struct eval_sink){.keep = pty_keep, .fd = -1};
	j->report = j->release = -1;
}

/* Closes every descriptor from 3 up but the N in KEEP (async-signal
 * safe: the terminal owner never executes anything, so CLOEXEC does not
 * close what it inherited, other runs' pipes included). */
static void
close_all_but(int *keep, int n)
{
	int lo = 3;

	for (int i = 1; i < n; i++) /* insertion sort, n is tiny */
		for (int k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
			int t = keep[k];

			keep[k] = keep[k - 1];
			keep[k - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		if (keep[i] > lo)
			(void)close_range((unsigned)lo, (unsigned)keep[i] - 1,
			    0);
		if (keep[i] + 1 > lo)
			lo = keep[i] + 1;
	}
	(void)close_range((unsigned)lo, ~0u, 0);
}

/* The terminal owner (a forked child of a threaded process: only
 * async-signal-safe calls until execve). Never returns. */
static void
owner_main(const char *const argv[], const char *const envp[],
    const char *slave, const char *cwd, int out, int err, int report,
    int release, const char *key, size_t keylen)
{
	int s, go[2], st = 0;
	int keep[4] = {out, err, report, release};
	pid_t pid;
	char b;

	close_all_but(keep, 4);
	/* Orphans of the job come to us, not to an init that may reap
	 * them late: a zombie still counts in its user's RLIMIT_NPROC
	 * (setrlimit(2)), which the next job would hit. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* A session keyring of the caller's with a secret in it, as a
	 * login session has one (keyrings(7)); a kernel without keys
	 * leaves nothing to find. */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) >= 0)
		(void)syscall(SYS_add_key, "user", "stockade-eval-secret", key,
		    keylen, KEY_SPEC_SESSION_KEYRING);
	if (setsid() < 0 || (s = open(slave, O_RDWR | O_CLOEXEC)) < 0 ||
	    ioctl(s, TIOCSCTTY, 0) < 0 || pipe2(go, O_CLOEXEC) < 0)
		_exit(127);
	if ((pid = fork()) < 0)
		_exit(127);
	if (pid == 0) {
		/* Wait until the terminal is ours (the owner made this
		 * process group the foreground one), then be stockade. */
		if (read(go[0], &b, 1) != 1 || dup2(s, 0) < 0 ||
		    dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		(void)close_range(3, ~0u, 0);
		if (chdir(cwd) < 0)
			_exit(127);
		exec_argv(argv, envp);
		_exit(127);
	}
	/* The job's output ends with stockade run, not with us. */
	close(out);
	close(err);
	(void)setpgid(pid, pid);
	(void)tcsetpgrp(s, pid);
	if (write(report, &pid, sizeof(pid)) != sizeof(pid) ||
	    write(go[1], "g", 1) != 1) {
		(void)kill(pid, SIGKILL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (write(report, &st, sizeof(st)) != sizeof(st))
		_exit(127);
	/* Until released, reap what the job's processes leave: the
	 * launcher's zygote, leftovers once the eval has killed them. */
	for (;;) {
		struct pollfd p = {release, POLLIN, 0};

		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (poll(&p, 1, 20) > 0)
			break;
	}
	/* The last ones, briefly: whatever is still alive goes to init. */
	for (int i = 0; i < 50; i++) {
		pid_t r = waitpid(-1, NULL, WNOHANG);

		if (r < 0)
			break; /* ECHILD: none left */
		if (r == 0) {
			struct timespec t = {0, 2000000};

			nanosleep(&t, NULL);
		}
	}
	_exit(0);
}

int
eval_job_start(struct eval_job *j, const char *const argv[],
    const char *const envp[], const char *slave, int master, const char *cwd,
    const char *key, size_t keylen)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, rep[2] = {-1, -1};
	int rel[2] = {-1, -1}, e = 0;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    pipe2(rep, O_CLOEXEC) < 0 || pipe2(rel, O_CLOEXEC) < 0)
		e = -errno;
	if (e == 0 && (j->owner = fork()) < 0)
		e = -errno;
	if (e == 0 && j->owner == 0)
		owner_main(argv, envp, slave, cwd, out[1], err[1], rep[1],
		    rel[0], key, keylen);
	for (int i = 0; i < 2; i++) {
		close_fdp(i == 0 ? &out[1] : &err[1]);
		close_fdp(i == 0 ? &rep[1] : &rel[0]);
	}
	if (e < 0) {
		j->owner = 0;
		close(master);
		close_fdp(&out[0]);
		close_fdp(&err[0]);
		close_fdp(&rep[0]);
		close_fdp(&rel[1]);
		return e;
	}
	j->out.fd = out[0];
	j->err.fd = err[0];
	j->pty.fd = master;
	j->report = rep[0];
	j->release = rel[1];
	(void)fcntl(out[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(err[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(master, F_SETFL, O_NONBLOCK);
	return 0;
}

/* One message of the terminal owner (an int), or -1 at its end. */
static int
owner_says(struct eval_job *j, int *v)
{
	ssize_t n;

	while ((n = read(j->report, v, sizeof(*v))) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(*v)) {
		close_fdp(&j->report);
		return -1;
	}
	return 0;
}

void
eval_job_wait(struct eval_job *j, int64_t deadline, int (*interrupted)(void))
{
	int64_t eof_by = 0;

	for (;;) {
		struct pollfd p[4];
		struct eval_sink *who[4];
		int n = 0;
		int64_t now = eval_now_ms();

		if (!j->exited && !j->killed && j->pid > 0 &&
		    (now > deadline ||
			(interrupted != NULL && interrupted()))) {
			/* SIGTERM first: the broker cancels the job and
			 * still answers; SIGKILL if it does not. */
			j->interrupted = now <= deadline;
			j->killed = true;
			(void)kill(j->pid, SIGTERM);
			deadline = now + 5000;
		} else if (!j->exited && j->killed && now > deadline) {
			(void)kill(j->pid, SIGKILL);
			deadline = now + 60000;
		}
		if (j->report < 0 && (eof_by == 0 || now > eof_by))
			break;
		if (j->report >= 0)
			p[n] = (struct pollfd){j->report, POLLIN, 0},
			who[n++] = NULL;
		if (j->out.fd >= 0)
			p[n] = (struct pollfd){j->out.fd, POLLIN, 0},
			who[n++] = &j->out;
		if (j->err.fd >= 0)
			p[n] = (struct pollfd){j->err.fd, POLLIN, 0},
			who[n++] = &j->err;
		if (j->pty.fd >= 0)
			p[n] = (struct pollfd){j->pty.fd, POLLIN, 0},
			who[n++] = &j->pty;
		if (poll(p, (nfds_t)n, 100) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			int v;

			if (p[i].revents == 0)
				continue;
			if (who[i] != NULL) {
				eval_sink_read(who[i]);
			} else if (owner_says(j, &v) == 0) {
				if (j->pid == 0) {
					j->pid = v;
				} else {
					j->status = v;
					j->exited = true;
					close_fdp(&j->report);
				}
			}
			if (who[i] == NULL && j->report < 0)
				/* Its pipes end with it; wait a little
				 * for their last bytes, not for a process
				 * that inherited them. */
				eof_by = eval_now_ms() + 200;
		}
		if (j->report < 0 && j->out.fd < 0 && j->err.fd < 0)
			break;
	}
	if (j->out.fd >= 0)
		eval_sink_read(&j->out);
	if (j->err.fd >= 0)
		eval_sink_read(&j->err);
	if (j->pty.fd >= 0)
		eval_sink_read(&j->pty);
}

void
eval_job_end(struct eval_job *j)
{
	close_fdp(&j->release);
	close_fdp(&j->report);
	if (j->owner > 0) {
		int64_t end = eval_now_ms() + 5000;

		while (waitpid(j->owner, NULL, WNOHANG) == 0) {
			if (eval_now_ms() > end) {
				(void)kill(j->owner, SIGKILL);
				(void)waitpid(j->owner, NULL, 0);
				break;
			}
			eval_sleep_ms(1);
		}
	}
	j->owner = 0;
}

void
eval_job_free(struct eval_job *j)
{
	eval_job_end(j);
	close_fdp(&j->out.fd);
	close_fdp(&j->err.fd);
	close_fdp(&j->pty.fd);
	free(j->out.data);
	free(j->err.data);
	free(j->pty.data);
	j->out.data = j->err.data = j->pty.data = NULL;
}
