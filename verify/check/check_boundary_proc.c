/*
 * check_boundary_proc.c: the processes the boundary checks of `stockade
 * check` start and talk to (check_boundary.h): a session with the real
 * stockade-launcher, started the way the broker starts it, for the
 * launcher's side (check_boundary.c); a `stockade run` in the background
 * and the /proc look-ups around it, for the broker's side
 * (check_broker_side.c).
 *
 * Nothing here starts a thread or keeps a descriptor past its owner's
 * end; every child started is reaped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "check_boundary.h"
#include "proto.h"

/* Moves FD to a number above 9 (close-on-exec), so that a dup2 onto 3
 * in the child never meets it there. Returns the new one or -1. */
static int
fd_high(int fd)
{
	int h;

	if (fd < 0 || fd > 9)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	return h;
}

void
boundary_drain(int *fd, char *buf, size_t *len, size_t cap)
{
	char chunk[4096];
	ssize_t n;

	while (*fd >= 0) {
		n = read(*fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(*fd);
			*fd = -1;
			return;
		}
		size_t k = (size_t)n < cap - 1 - *len ? (size_t)n
						      : cap - 1 - *len;
		memcpy(buf + *len, chunk, k);
		*len += k;
		buf[*len] = '\0';
	}
}

int
boundary_exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st)
			     : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Closes every descriptor a received message MH carried. */
static void
close_received(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0;
			     i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			     i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
				    sizeof(int));
				close(fd);
			}
}

/* ---- a session with the real launcher ------------------------------------ */

int
ls_start(struct check_ctx *c, struct lsession *s)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char *argv[] = {check_unconst(c->launcher), check_unconst("--ipc-fd"),
	    check_unconst("3"), NULL};
	char *envp[4];
	size_t n = 0;
	int sv[2], ep[2], e;

	memset(s, 0, sizeof(*s));
	s->sock = s->err = -1;
	s->status = -1;
	envp[n] = NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	sv[1] = fd_high(sv[1]);
	ep[1] = fd_high(ep[1]);
	/* Room for the oversized datagram of oversized_datagram_refused. */
	(void)setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF,
	    &(int){4 * (int)PROTO_MAX_MSG}, sizeof(int));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
	check_spawnattr_init(&at);
	e = -posix_spawn(&s->pid, c->launcher, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(sv[1]);
	close(ep[1]);
	if (e < 0) {
		s->pid = 0;
		close(sv[0]);
		close(ep[0]);
		return e;
	}
	s->sock = sv[0];
	s->err = ep[0];
	fcntl(s->err, F_SETFL, O_NONBLOCK);
	return 0;
}

int
ls_send(struct lsession *s, const void *msg, size_t len, const int *fds,
    size_t nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = check_unconst(msg), .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (nfds > 4)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	return sendmsg(s->sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

void
ls_watch(struct lsession *s, int ms)
{
	static uint8_t buf[PROTO_MAX_MSG + 64];
	int64_t deadline = check_now_ms() + ms;

	s->answer = 0;
	s->timed_out = false;
	for (;;) {
		struct pollfd p[2] = {{s->sock, POLLIN, 0},
		    {s->err, POLLIN, 0}};
		int64_t left = deadline - check_now_ms();

		if (left <= 0) {
			s->timed_out = true;
			return;
		}
		if (poll(p, 2, (int)left) < 0 && errno != EINTR) {
			s->timed_out = true;
			return;
		}
		if (p[1].revents != 0)
			boundary_drain(&s->err, s->errbuf, &s->errlen,
			    sizeof(s->errbuf));
		if (p[0].revents != 0) {
			union {
				char b[CMSG_SPACE(sizeof(int) * 8)];
				struct cmsghdr align;
			} u;
			struct iovec iov = {.iov_base = buf,
			    .iov_len = sizeof(buf)};
			struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.b,
			    .msg_controllen = sizeof(u.b)};
			ssize_t n = recvmsg(s->sock, &mh,
			    MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n > 0)
				close_received(&mh);
			if (n <= 0) {
				s->eof = true;
				return;
			}
			s->answer = n >= 2 ? (uint16_t)(buf[0] | buf[1] << 8)
					   : 0xffff;
			return;
		}
	}
}

void
ls_end(struct lsession *s)
{
	int64_t deadline = check_now_ms() + 1000;
	int st = 0;

	if (s->sock >= 0)
		close(s->sock);
	s->sock = -1;
	if (s->pid > 0) {
		for (;;) {
			siginfo_t si;

			/* Exited, not yet reaped: its pid still names its
			 * process group below. */
			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, (id_t)s->pid, &si,
				WEXITED | WNOHANG | WNOWAIT) < 0 &&
			    errno != EINTR)
				break;
			if (si.si_pid == s->pid)
				break;
			if (check_now_ms() >= deadline) {
				kill(s->pid, SIGKILL);
				break;
			}
			if (s->err >= 0) {
				struct pollfd p = {s->err, POLLIN, 0};

				if (poll(&p, 1, 5) > 0)
					boundary_drain(&s->err, s->errbuf,
					    &s->errlen, sizeof(s->errbuf));
			} else {
				usleep(2000);
			}
		}
		/* Whatever it left in its group (its zygote, a jail). */
		kill(-s->pid, SIGKILL);
		while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
			;
		s->status = boundary_exit_code(st);
		s->pid = 0;
	}
	deadline = check_now_ms() + 500;
	while (s->err >= 0 && check_now_ms() < deadline) {
		struct pollfd p = {s->err, POLLIN, 0};

		if (poll(&p, 1, 20) > 0)
			boundary_drain(&s->err, s->errbuf, &s->errlen,
			    sizeof(s->errbuf));
	}
	if (s->err >= 0)
		close(s->err);
	s->err = -1;
}

bool
ls_reason(const struct lsession *s, char *buf, size_t len)
{
	const char *end = strstr(s->errbuf, "ending the session: ");
	const char *line, *prev = NULL;
	char why[160], cause[200];

	if (end == NULL)
		return false;
	snprintf(why, sizeof(why), "%.*s", (int)strcspn(end, "\n"), end);
	/* The line before: what the launcher gave as the cause. */
	line = end;
	while (line > s->errbuf && line[-1] != '\n')
		line--;
	if (line > s->errbuf) {
		prev = line - 1;
		while (prev > s->errbuf && prev[-1] != '\n')
			prev--;
	}
	cause[0] = '\0';
	if (prev != NULL) {
		const char *p = strstr(prev, ": ");
		size_t n = strcspn(prev, "\n");

		if (p != NULL && p < prev + n)
			snprintf(cause, sizeof(cause), "%.*s",
			    (int)(prev + n - (p + 2)), p + 2);
	}
	if (cause[0] != '\0')
		snprintf(buf, len, "\"%s\" (%s)", cause, why);
	else
		snprintf(buf, len, "\"%s\"", why);
	return true;
}

const char *
ls_last_words(const struct lsession *s, char *buf, size_t len)
{
	size_t n = s->errlen;

	while (n > 0 && s->errbuf[n - 1] == '\n')
		n--;
	size_t b = n;
	while (b > 0 && s->errbuf[b - 1] != '\n')
		b--;
	snprintf(buf, len, "%.*s", (int)(n - b), s->errbuf + b);
	return buf;
}

void
ls_verdict(const struct lsession *s, struct check_result *r, const char *what)
{
	char reason[400], last[200];

	if (s->answer != 0)
		check_fail(r,
		    "the launcher answered %s after %s: it took the "
		    "message as good",
		    proto_msg_name(s->answer), what);
	else if (s->timed_out)
		check_fail(r,
		    "the launcher neither answered nor ended the "
		    "session within %d ms after %s (last words: %s)",
		    SESSION_MS, what, ls_last_words(s, last, sizeof(last)));
	else if (s->status == 1 && ls_reason(s, reason, sizeof(reason)))
		check_pass(r,
		    "after %s the launcher ended the session: %s, "
		    "no answer",
		    what, reason);
	else
		check_fail(r,
		    "after %s the launcher closed the session "
		    "without a named error, exit status %d (stderr: %s)",
		    what, s->status, ls_last_words(s, last, sizeof(last)));
}

bool
ls_hello(struct check_ctx *c, struct lsession *s, struct check_result *r)
{
	uint8_t m[64];
	char last[200];
	int n, e;

	if ((e = ls_start(c, s)) < 0) {
		check_fail(r, "cannot start %s: %s", c->launcher, strerror(-e));
		return false;
	}
	n = proto_encode_hello(m, sizeof(m), PROTO_VERSION);
	if (n < 0 || ls_send(s, m, (size_t)n, NULL, 0) < 0) {
		ls_end(s);
		check_fail(r, "cannot send HELLO to the launcher");
		return false;
	}
	ls_watch(s, SESSION_MS);
	if (s->answer != PROTO_HELLO_REPLY) {
		ls_end(s);
		check_fail(r,
		    "the launcher did not answer a valid HELLO "
		    "(exit status %d: %s)",
		    s->status, ls_last_words(s, last, sizeof(last)));
		return false;
	}
	return true;
}

/* ---- a `stockade run` in the background ------------------------------------ */

pid_t
boundary_find_child(pid_t parent, char *comm, size_t len)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	if (d == NULL)
		return 0;
	while (found == 0 && (de = readdir(d)) != NULL) {
		char path[300], st[512], *p;
		int fd;
		ssize_t n;
		long ppid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, st, sizeof(st) - 1);
		close(fd);
		if (n <= 0)
			continue;
		st[n] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything */
		if ((p = strrchr(st, ')')) == NULL ||
		    sscanf(p + 1, " %*c %ld", &ppid) != 1 || ppid != parent)
			continue;
		found = (pid_t)atol(de->d_name);
		{
			char *open_paren = strchr(st, '(');

			snprintf(comm, len, "%.*s",
			    open_paren != NULL ? (int)(p - open_paren - 1) : 0,
			    open_paren != NULL ? open_paren + 1 : "");
		}
		/* The launcher, not the broker's other children (its
		 * spawner, the checkpoint store's reaper). */
		if (strncmp(comm, "stockade-launch", 15) != 0)
			found = 0;
	}
	closedir(d);
	return found;
}

bool
boundary_exists_in(int dir, const char *name)
{
	struct stat st;

	return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int
bgrun_start(struct check_ctx *c, const char *const argv[], struct bgrun *b)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int op[2], ep[2], e;

	memset(b, 0, sizeof(*b));
	b->out = b->err = -1;
	b->status = -1;
	if (pipe2(op, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		e = -errno;
		close(op[0]);
		close(op[1]);
		return e;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, op[1], 1);
	posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
	check_spawnattr_init(&at);
	{
		char *args[32];
		size_t k = 0;

		for (; argv[k] != NULL && k < 31; k++)
			args[k] = check_unconst(argv[k]);
		args[k] = NULL;
		e = -posix_spawn(&b->pid, argv[0], &fa, &at, args, c->envp);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(op[1]);
	close(ep[1]);
	if (e < 0) {
		b->pid = 0;
		close(op[0]);
		close(ep[0]);
		return e;
	}
	b->out = op[0];
	b->err = ep[0];
	fcntl(b->out, F_SETFL, O_NONBLOCK);
	fcntl(b->err, F_SETFL, O_NONBLOCK);
	return 0;
}

bool
bgrun_poll(struct bgrun *b, int ms)
{
	struct pollfd p[2] = {{b->out, POLLIN, 0}, {b->err, POLLIN, 0}};
	int st;

	if (b->pid == 0)
		return true;
	if (b->out >= 0 || b->err >= 0) {
		if (poll(p, 2, ms) > 0) {
			if (p[0].revents != 0)
				boundary_drain(&b->out, b->obuf, &b->olen,
				    sizeof(b->obuf));
			if (p[1].revents != 0)
				boundary_drain(&b->err, b->ebuf, &b->elen,
				    sizeof(b->ebuf));
		}
	} else {
		usleep((useconds_t)ms * 1000);
	}
	if (b->out < 0 && waitpid(b->pid, &st, WNOHANG) == b->pid) {
		b->status = boundary_exit_code(st);
		b->pid = 0;
		return true;
	}
	return false;
}

void
bgrun_end(struct bgrun *b)
{
	int st;

	if (b->pid > 0) {
		kill(-b->pid, SIGKILL);
		kill(b->pid, SIGKILL);
		waitpid(b->pid, &st, 0);
		b->status = boundary_exit_code(st);
		b->pid = 0;
	}
	if (b->out >= 0)
		close(b->out);
	if (b->err >= 0)
		close(b->err);
	b->out = b->err = -1;
}
