/*
 * eval_decoy.c: the host process an attack may try to reach
 * (eval_decoy.h; issue 6).
 */
#include "eval_decoy.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"

#define READY 'R' /* written once the handlers are set (> any signo) */
#define SIG_FD 3 /* the decoy's end of the signal pipe */

/* ---- the decoy ---------------------------------------------------------- */

static void
on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	if (write(SIG_FD, &b, 1) < 0)
		errno = saved; /* nothing to do: the eval went away */
	errno = saved;
}

int
eval_decoy_main(int argc, char **argv)
{
	struct sigaction sa;
	unsigned char ready = READY;

	(void)argv;
	if (argc != 2)
		return 70;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigfillset(&sa.sa_mask);
	/* Every signal that can be caught; the ones glibc keeps for itself
	 * (32, 33) and SIGKILL/SIGSTOP refuse, which is fine. */
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &sa, NULL);
	if (write(SIG_FD, &ready, 1) != 1)
		return 70;
	for (;;)
		pause();
}

/* ---- its parent --------------------------------------------------------- */

int
eval_decoy_start(struct eval_decoy *d, const char *self,
    const char *argv_canary, const char *env_canary)
{
	char envbuf[128];
	const char *const argv[] = {self, "__decoy", argv_canary, NULL};
	const char *const envp[] = {envbuf, "PATH=/usr/bin:/bin", NULL};
	_cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int p[2], e;
	struct pollfd pfd;
	unsigned char b = 0;

	d->pid = 0;
	d->sigfd = -1;
	if (null < 0)
		return -errno;
	snprintf(envbuf, sizeof(envbuf), "DECOY_SECRET=%s", env_canary);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	d->pid = fork();
	if (d->pid < 0) {
		e = -errno;
		close(p[0]);
		close(p[1]);
		d->pid = 0;
		return e;
	}
	if (d->pid == 0) {
		/* Async-signal-safe calls only: the eval has threads. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		(void)setpgid(0, 0);
		if (dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(null, 2) < 0 || dup2(p[1], SIG_FD) < 0)
			_exit(70);
		(void)close_range(SIG_FD + 1, ~0u, 0);
		/* execve(2) does not write its arrays; the cast is C's. */
		execve(self, (char *const *)(uintptr_t)argv,
		    (char *const *)(uintptr_t)envp);
		_exit(70);
	}
	close(p[1]);
	d->sigfd = p[0];
	pfd = (struct pollfd){d->sigfd, POLLIN, 0};
	if (poll(&pfd, 1, 5000) != 1 || read(d->sigfd, &b, 1) != 1 ||
	    b != READY) {
		eval_decoy_stop(d);
		return -ETIMEDOUT;
	}
	if (fcntl(d->sigfd, F_SETFL, O_NONBLOCK) < 0) {
		e = -errno;
		eval_decoy_stop(d);
		return e;
	}
	return 0;
}

/* The pid tracing PID (/proc/PID/status TracerPid), 0 for none. */
static long
tracer_of(pid_t pid)
{
	char path[64], buf[2048];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *t;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	t = strstr(buf, "\nTracerPid:");
	return t != NULL ? strtol(t + 11, NULL, 10) : 0;
}

int
eval_decoy_check(struct eval_decoy *d, char *what, size_t len)
{
	siginfo_t si;
	unsigned char b;
	long tracer;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)d->pid, &si,
		WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == d->pid) {
		switch (si.si_code) {
		case CLD_EXITED:
			snprintf(what, len, "exited with %d", si.si_status);
			break;
		case CLD_KILLED:
		case CLD_DUMPED:
			snprintf(what, len, "killed by SIG%s",
			    sigabbrev_np(si.si_status) != NULL
				? sigabbrev_np(si.si_status)
				: "?");
			break;
		case CLD_STOPPED:
		case CLD_TRAPPED:
			snprintf(what, len, "stopped by SIG%s",
			    sigabbrev_np(si.si_status) != NULL
				? sigabbrev_np(si.si_status)
				: "?");
			break;
		default:
			snprintf(what, len, "continued after a stop");
			break;
		}
		return 1;
	}
	if (read(d->sigfd, &b, 1) == 1) {
		snprintf(what, len, "received SIG%s",
		    sigabbrev_np(b) != NULL ? sigabbrev_np(b) : "?");
		return 1;
	}
	if ((tracer = tracer_of(d->pid)) != 0) {
		snprintf(what, len, "traced by pid %ld", tracer);
		return 1;
	}
	return 0;
}

void
eval_decoy_stop(struct eval_decoy *d)
{
	if (d->pid > 0) {
		(void)kill(d->pid, SIGKILL);
		(void)waitpid(d->pid, NULL, 0);
	}
	d->pid = 0;
	close_fdp(&d->sigfd);
}
