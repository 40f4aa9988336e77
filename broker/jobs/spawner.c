/*
 * spawner.c: starting launchers from outside the broker's confinement
 * (spawner.h says why and what it can be made to do).
 *
 * The spawner side (spawner_main) runs in a process forked from the
 * broker: no malloc, no stdio, no logging, only system calls, so that a
 * lock some other part of the broker held at the fork cannot hang it.
 */
#include "spawner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "proto.h"
#include "spawner_internal.h"

/* The spawner's own descriptors after it has tidied up. */
#define SP_SOCK_FD 3
#define SP_EXE_FD 4

#define STOP_GRACE_MS 5000u

/* Signals a terminal sends to its whole foreground process group: the
 * broker handles them; the spawner must outlive them. */
static const int tty_signals[] = {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN,
    SIGTTOU};

void
spawner_clear(struct spawner *sp)
{
	sp->pid = 0;
	sp->pidfd = -1;
	sp->sock = -1;
}

/* Makes the descriptors FROM[0..N) become TO[0..N) exactly, whatever
 * numbers they had (one may already sit where another must go), with
 * close-on-exec set as CLOEXEC[i] says. Returns 0 or -1. */
static int
place_fds(const int *from, const int *to, const bool *cloexec, int n)
{
	int tmp[4];

	/* First above every target, so that no dup2 below clobbers a
	 * source not yet moved. */
	for (int i = 0; i < n; i++) {
		tmp[i] = fcntl(from[i], F_DUPFD_CLOEXEC, 16);
		if (tmp[i] < 0)
			return -1;
	}
	for (int i = 0; i < n; i++) {
		if (dup3(tmp[i], to[i], cloexec[i] ? O_CLOEXEC : 0) < 0)
			return -1;
		close(tmp[i]);
	}
	return 0;
}

/* Default dispositions for every signal and an empty mask: what a fresh
 * process would have (exec resets handlers but keeps SIG_IGN and the
 * mask, and the broker may ignore or block some). */
static void
reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL); /* SIGKILL, SIGSTOP: EINVAL */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

_Noreturn void
spawner_exec_helper(int sock, int exe_fd, char *const argv[])
{
	char debug[] = "STOCKADE_DEBUG=1";
	char *envp[3] = {NULL, NULL, NULL};
	int null, from[4], to[4], n = 0;
	bool cloexec[4] = {false, false, false, true};

	if (getenv("STOCKADE_DEBUG") != NULL)
		envp[n++] = debug;
	reset_signals();
	/* stdin and stdout: /dev/null; stderr: ours, for diagnostics. The
	 * binary goes to SPAWNER_LAUNCHER_FD + 1, close-on-exec: execveat
	 * needs it open, the program does not. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		_exit(127);
	from[0] = null, to[0] = 0;
	from[1] = null, to[1] = 1;
	from[2] = sock, to[2] = SPAWNER_LAUNCHER_FD;
	from[3] = exe_fd, to[3] = SPAWNER_LAUNCHER_FD + 1;
	if (place_fds(from, to, cloexec, 4) < 0)
		_exit(127);
	closefrom(SPAWNER_LAUNCHER_FD + 2);
	syscall(SYS_execveat, SPAWNER_LAUNCHER_FD + 1, "", argv, envp,
	    AT_EMPTY_PATH);
	_exit(127);
}

_Noreturn void
spawner_exec_launcher(int sock, int exe_fd)
{
	char arg0[] = SPAWNER_LAUNCHER_NAME, arg1[] = "--ipc-fd", arg2[] = "3";
	char *argv[] = {arg0, arg1, arg2, NULL};

	spawner_exec_helper(sock, exe_fd, argv);
}

pthread_mutex_t spawner_mu = PTHREAD_MUTEX_INITIALIZER;

void
spawner_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

uint32_t
spawner_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Sends the answer to the broker (shared/wire.h): WIRE_SPAWN_FAILED
 * with ERR when it is not 0, else WIRE_SPAWN_REPLY with PID and FDS, the
 * broker's end of the launcher's socket and the launcher's pidfd, by
 * their roles. Returns 0 or -1. */
static int
reply(int err, pid_t pid, const int *fds)
{
	uint8_t msg[WIRE_HEADER_SIZE + 4];

	spawner_put_le32(msg + WIRE_HEADER_SIZE,
	    err != 0 ? (uint32_t)err : (uint32_t)pid);
	if (err != 0)
		return wire_send(SP_SOCK_FD, msg, sizeof(msg),
			   WIRE_SPAWN_FAILED, 0, NULL) < 0
		    ? -1
		    : 0;
	return wire_send(SP_SOCK_FD, msg, sizeof(msg), WIRE_SPAWN_REPLY,
		   WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), fds) < 0
	    ? -1
	    : 0;
}

/* Starts one launcher as the broker's child and hands it over. Returns
 * 0, or -1 when the broker can no longer be answered. */
static int
launch_one(void)
{
	struct clone_args ca;
	int sv[2], pidfd = -1, fds[2], rc;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return reply(errno, 0, NULL);
	memset(&ca, 0, sizeof(ca));
	/* CLONE_PARENT: the broker's child (it reaps it and gets the
	 * exit signal, which the kernel takes from our own, SIGCHLD;
	 * clone3 insists on exit_signal 0 with CLONE_PARENT); the
	 * pidfd lets it signal that child without a pid-reuse race. */
	ca.flags = CLONE_PARENT | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = 0;
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return reply(e, 0, NULL);
	}
	if (pid == 0)
		spawner_exec_launcher(sv[1], SP_EXE_FD);
	close(sv[1]);
	fds[0] = sv[0];
	fds[1] = pidfd;
	rc = reply(0, pid, fds);
	/* The broker has its copies now (or never will: it is gone, and the
	 * launcher will read EOF and exit). */
	close(sv[0]);
	close(pidfd);
	return rc;
}

/* One request (shared/wire.h, spawn channel) from the broker, received
 * into a buffer of SPAWNER_MSG_MAX bytes: WIRE_SPAWN, a bare header and
 * no descriptor, starts a launcher; WIRE_STAGE_OPEN, with its two
 * descriptors, is answered by spawner_serve_stage_open. Returns 0 to go
 * on, 1 at EOF, -1 for anything else (the spawner ends). */
static int
serve_one(void)
{
	uint8_t request[SPAWNER_MSG_MAX];
	struct wire_msg m;
	int fds[2], n, r = -1;

	n = wire_recv(SP_SOCK_FD, request, sizeof(request), fds, 2, &m);
	if (n == 0)
		return 1;
	if (n < 0)
		return -1;
	if (m.type == WIRE_SPAWN && m.body_len == 0)
		r = launch_one();
	else if (m.type == WIRE_STAGE_OPEN)
		r = spawner_serve_stage_open(SP_SOCK_FD, &m, fds);
	for (size_t i = 0; i < m.nfds; i++)
		close(fds[i]);
	return r < 0 ? -1 : 0;
}

/* The spawner process: never returns. */
static _Noreturn void
spawner_main(int sock, int exe_fd, pid_t broker)
{
	int from[2] = {sock, exe_fd}, to[2] = {SP_SOCK_FD, SP_EXE_FD};
	bool cloexec[2] = {true, true};
	struct sigaction sa;
	int null;

	/* Die with the broker; it may have died before the prctl. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != broker)
		_exit(1);
	/* Our two descriptors first: the broker may have started with
	 * stdin or stdout closed, so they may sit at 0 or 1. */
	if (place_fds(from, to, cloexec, 2) < 0)
		_exit(1);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
		_exit(1);
	closefrom(SP_EXE_FD + 1);
	reset_signals();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < sizeof(tty_signals) / sizeof(tty_signals[0]);
	     i++)
		sigaction(tty_signals[i], &sa, NULL);

	for (;;) {
		int r = serve_one();

		if (r != 0)
			_exit(r > 0 ? 0 : 1);
	}
}

int
spawner_start(struct spawner *sp, int exe_fd)
{
	pid_t self = getpid(), pid;
	int sv[2], pidfd = -1, e;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = (pid_t)syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
	if (pid < 0) {
		e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0)
		spawner_main(sv[1], exe_fd, self);
	close(sv[1]);
	sp->pid = pid;
	sp->pidfd = pidfd;
	sp->sock = sv[0];
	return 0;
}

uint64_t
spawner_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int
spawner_wait_readable(int fd, uint64_t deadline_ms)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint64_t now = spawner_now_ms();
		uint64_t left = now >= deadline_ms ? 0 : deadline_ms - now;
		int n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);

		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && left <= INT_MAX)
			return -ETIMEDOUT;
	}
}

void
spawner_end_child(pid_t *pid, int *pidfd, int *sock, uint64_t grace_ms)
{
	uint64_t now, deadline;

	if (*pid > 0) {
		/* Closing our end is the child's signal to exit; one that
		 * does not within GRACE_MS is killed, not waited for. */
		if (grace_ms > 0)
			close_fdp(sock);
		now = spawner_now_ms();
		deadline = grace_ms > UINT64_MAX - now ? UINT64_MAX
						       : now + grace_ms;
		if (grace_ms == 0 ||
		    spawner_wait_readable(*pidfd, deadline) < 0)
			syscall(SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL,
			    0);
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close_fdp(sock);
	close_fdp(pidfd);
	*pid = 0;
}

/* Checks the answer M (with FDS) from the spawner: 0 for a
 * WIRE_SPAWN_REPLY whose pid is plausible and whose launcher socket is a
 * socket, the spawner's errno (negated) for a WIRE_SPAWN_FAILED with a
 * plausible one, -EPROTO for anything else. */
static int
check_answer(const struct wire_msg *m, const int *fds, pid_t *pid)
{
	uint32_t v = m->body_len == 4 ? spawner_get_le32(m->body) : 0;
	int sock = wire_fd(m, fds, WIRE_FD_LAUNCHER_SOCK);
	struct stat st;

	if (m->type == WIRE_SPAWN_FAILED)
		return v > 0 && v < 4096 ? -(int)v : -EPROTO;
	if (m->type != WIRE_SPAWN_REPLY || v == 0 || v > INT32_MAX ||
	    fstat(sock, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -EPROTO;
	*pid = (pid_t)v;
	return 0;
}

/* Receives the answer (shared/wire.h) into BUF (SPAWNER_MSG_MAX bytes): 0
 * with FDS[0] the launcher's socket and FDS[1] its pidfd, taken by role;
 * the spawner's errno (negated); -EPROTO for a malformed answer; or
 * -ENOTCONN. */
static int
recv_answer(struct spawner *sp, uint8_t *buf, int fds[2], pid_t *pid)
{
	int got[2];
	struct wire_msg m;
	int n, e;

	n = wire_recv(sp->sock, buf, SPAWNER_MSG_MAX, got, 2, &m);
	if (n == 0 || n == -ECONNRESET)
		return -ENOTCONN;
	if (n == -EPROTO || n == -EBADMSG || n == -EMSGSIZE)
		return -EPROTO;
	if (n < 0)
		return n;
	if ((e = check_answer(&m, got, pid)) == 0) {
		fds[0] = wire_fd(&m, got, WIRE_FD_LAUNCHER_SOCK);
		fds[1] = wire_fd(&m, got, WIRE_FD_LAUNCHER_PIDFD);
		return 0;
	}
	for (size_t i = 0; i < m.nfds; i++)
		close(got[i]);
	return e;
}

/* spawner_launch with the spawner's lock held. */
static int
launch_locked(struct spawner *sp, uint64_t deadline_ms, int *sock, int *pidfd,
    pid_t *pid)
{
	uint8_t req[WIRE_HEADER_SIZE], buf[SPAWNER_MSG_MAX];
	int fds[2], e;

	if (sp->sock < 0)
		return -ENOTCONN;
	if (wire_send(sp->sock, req, sizeof(req), WIRE_SPAWN, 0, NULL) < 0) {
		e = -ENOTCONN;
		goto broken;
	}
	if ((e = spawner_wait_readable(sp->sock, deadline_ms)) < 0)
		goto broken;
	e = recv_answer(sp, buf, fds, pid);
	if (e == -ENOTCONN || e == -EPROTO)
		goto broken;
	if (e < 0)
		return e;
	*sock = fds[0];
	*pidfd = fds[1];
	return 0;
broken:
	/* An answer may still be on its way: nothing later could tell it
	 * from the answer to the next request. */
	spawner_end_child(&sp->pid, &sp->pidfd, &sp->sock, 0);
	return e == -ETIMEDOUT ? e : e == -EPROTO ? e : -ENOTCONN;
}

int
spawner_launch(struct spawner *sp, uint64_t deadline_ms, int *sock, int *pidfd,
    pid_t *pid)
{
	int e;

	pthread_mutex_lock(&spawner_mu);
	e = launch_locked(sp, deadline_ms, sock, pidfd, pid);
	pthread_mutex_unlock(&spawner_mu);
	return e;
}

void
spawner_stop(struct spawner *sp)
{
	pthread_mutex_lock(&spawner_mu);
	spawner_end_child(&sp->pid, &sp->pidfd, &sp->sock, STOP_GRACE_MS);
	pthread_mutex_unlock(&spawner_mu);
}
