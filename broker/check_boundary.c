/*
 * check_boundary.c: the boundary checks of `stockade check` (check.h):
 * what each side of the broker <-> launcher protocol (shared/proto.h)
 * does with a peer that breaks it.
 *
 * The launcher's side: the check starts the real stockade-launcher the
 * way the broker does (its end of a SOCK_SEQPACKET socketpair at fd 3,
 * "--ipc-fd 3", an empty environment but for STOCKADE_PLANT in a
 * planted-defects build) and sends it hand-made messages. A sound
 * launcher ends the session at the first bad one with a named error on
 * stderr ("ending the session: ...") and closes the socket; it never
 * answers as if the message were good. To see a launcher that took a
 * bad message quietly (CANCEL has no answer), a check follows the bad
 * message with a valid RUN: a launcher still in session answers it.
 *
 * The broker's side: a copy of the stockade under test, beside a copy of
 * stockade-probe named stockade-launcher (probe_boundary.c, "--ipc-fd"),
 * runs a job on that hostile launcher; and the real `stockade run` has
 * its real launcher killed in the middle of a job.
 *
 * Each session and job has a deadline of a second or two, so that a
 * defect that hangs costs seconds; the check process starts no thread,
 * keeps no descriptor and reaps every child it started.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "proto.h"

/* How long a launcher is given to answer or end its session after the
 * last message, ms: a sound one ends in a few. */
#define SESSION_MS 1500
/* mark-then-mark's sleep between its two files, ms, in the check of a
 * launcher killed mid-job. */
#define LATE_MS 500
/* How soon after its launcher's death a job must end as sandbox_error. */
#define DEATH_NOTICE_MS 2000

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A const string where an exec array wants char * (never written). */
static char *
unconst(const char *s)
{
	char *p;

	memcpy(&p, &s, sizeof(p));
	return p;
}

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

/* Appends what FD has now to BUF (LEN so far, CAP bytes, kept
 * NUL-terminated); at its end closes it and sets *FD to -1. */
static void
drain_into(int *fd, char *buf, size_t *len, size_t cap)
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

/* The exit status of a wait(2) status as check_proc gives it. */
static int
exit_code(int st)
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

struct lsession {
	pid_t pid;           /* the launcher, 0 when none */
	int sock;            /* our end of its socket */
	int err;             /* its stderr (a pipe), -1 at EOF */
	char errbuf[8192];   /* what it printed there */
	size_t errlen;
	int status;          /* its exit status, -1 while unknown */
	uint16_t answer;     /* the type of its first answer, 0 none */
	bool eof;            /* it closed the session */
	bool timed_out;      /* neither within SESSION_MS */
};

/*
 * Starts C's launcher as the broker does (spawner_exec_launcher): its
 * socket at fd 3, stdin and stdout /dev/null, stderr a pipe to us, only
 * STOCKADE_PLANT of C's environment. Returns 0 or a negative errno.
 */
static int
ls_start(struct check_ctx *c, struct lsession *s)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char *argv[] = {unconst(c->launcher), unconst("--ipc-fd"),
			unconst("3"), NULL};
	char *envp[4];
	size_t n = 0;
	int sv[2], ep[2], e;

	memset(s, 0, sizeof(*s));
	s->sock = s->err = -1;
	s->status = -1;
#ifdef STOCKADE_PLANTED_DEFECTS
	/* The test build's variable (plant.h); a default build neither
	 * sets nor names it. */
	for (size_t i = 0; c->envp[i] != NULL && n < 3; i++)
		if (strncmp(c->envp[i], "STOCKADE_PLANT=", 15) == 0)
			envp[n++] = c->envp[i];
#endif
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
	posix_spawnattr_init(&at);
	{
		sigset_t none, all;

		sigemptyset(&none);
		sigfillset(&all);
		posix_spawnattr_setsigmask(&at, &none);
		posix_spawnattr_setsigdefault(&at, &all);
	}
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
				 POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
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

/* Sends LEN bytes of MSG with the NFDS descriptors FDS. Errors are
 * returned, not judged: a sound launcher may be gone already. */
static int
ls_send(struct lsession *s, const void *msg, size_t len, const int *fds,
	size_t nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = unconst(msg), .iov_len = len};
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

/*
 * Waits up to MS milliseconds for the launcher's next answer (its type
 * into S->answer; the type is read from the bytes, not with the decoder
 * under test) or the end of the session (S->eof), reading its stderr
 * meanwhile. Neither: S->timed_out.
 */
static void
ls_watch(struct lsession *s, int ms)
{
	static uint8_t buf[PROTO_MAX_MSG + 64];
	int64_t deadline = now_ms() + ms;

	s->answer = 0;
	s->timed_out = false;
	for (;;) {
		struct pollfd p[2] = {{s->sock, POLLIN, 0}, {s->err, POLLIN, 0}};
		int64_t left = deadline - now_ms();

		if (left <= 0) {
			s->timed_out = true;
			return;
		}
		if (poll(p, 2, (int)left) < 0 && errno != EINTR) {
			s->timed_out = true;
			return;
		}
		if (p[1].revents != 0)
			drain_into(&s->err, s->errbuf, &s->errlen,
				   sizeof(s->errbuf));
		if (p[0].revents != 0) {
			union {
				char b[CMSG_SPACE(sizeof(int) * 8)];
				struct cmsghdr align;
			} u;
			struct iovec iov = {.iov_base = buf,
					    .iov_len = sizeof(buf)};
			struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
					    .msg_control = u.b,
					    .msg_controllen = sizeof(u.b)};
			ssize_t n = recvmsg(s->sock, &mh, MSG_DONTWAIT |
					    MSG_CMSG_CLOEXEC);

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

/*
 * Ends the session: closes our end (a live launcher reads EOF and
 * exits), gives it a second, then kills it; reaps it into S->status and
 * reads the rest of its stderr (its zygote holds a copy until it dies
 * with the launcher).
 */
static void
ls_end(struct lsession *s)
{
	int64_t deadline = now_ms() + 1000;
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
			if (waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG |
				   WNOWAIT) < 0 && errno != EINTR)
				break;
			if (si.si_pid == s->pid)
				break;
			if (now_ms() >= deadline) {
				kill(s->pid, SIGKILL);
				break;
			}
			if (s->err >= 0) {
				struct pollfd p = {s->err, POLLIN, 0};

				if (poll(&p, 1, 5) > 0)
					drain_into(&s->err, s->errbuf,
						   &s->errlen,
						   sizeof(s->errbuf));
			} else {
				usleep(2000);
			}
		}
		/* Whatever it left in its group (its zygote, a jail). */
		kill(-s->pid, SIGKILL);
		while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
			;
		s->status = exit_code(st);
		s->pid = 0;
	}
	deadline = now_ms() + 500;
	while (s->err >= 0 && now_ms() < deadline) {
		struct pollfd p = {s->err, POLLIN, 0};

		if (poll(&p, 1, 20) > 0)
			drain_into(&s->err, s->errbuf, &s->errlen,
				   sizeof(s->errbuf));
	}
	if (s->err >= 0)
		close(s->err);
	s->err = -1;
}

/*
 * Writes into BUF the launcher's reason for ending the session: the
 * error line before "ending the session: ..." and that line's cause, as
 * "CAUSE (ending the session: WHY)". Returns false when there is none.
 */
static bool
ls_reason(const struct lsession *s, char *buf, size_t len)
{
	const char *end = strstr(s->errbuf, "ending the session: ");
	const char *line, *prev = NULL;
	char why[160], cause[200];

	if (end == NULL)
		return false;
	snprintf(why, sizeof(why), "%.*s", (int)strcspn(end, "\n"), end);
	/* The line before, unless it is the planted build's warning. */
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

		if (p != NULL && p < prev + n && strstr(prev, "planted") == NULL)
			snprintf(cause, sizeof(cause), "%.*s",
				 (int)(prev + n - (p + 2)), p + 2);
	}
	if (cause[0] != '\0')
		snprintf(buf, len, "\"%s\" (%s)", cause, why);
	else
		snprintf(buf, len, "\"%s\"", why);
	return true;
}

/* The last line of the launcher's stderr, for an observation. */
static const char *
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

/*
 * The verdict on a session after the bad message WHAT: a sound launcher
 * ended it (EOF) without an answer, exiting 1 with "ending the session"
 * on stderr. S has been ended (ls_end).
 */
static void
ls_verdict(const struct lsession *s, struct check_result *r,
	   const char *what)
{
	char reason[400], last[200];

	if (s->answer != 0)
		check_fail(r, "the launcher answered %s after %s: it took the "
			   "message as good", proto_msg_name(s->answer), what);
	else if (s->timed_out)
		check_fail(r, "the launcher neither answered nor ended the "
			   "session within %d ms after %s (last words: %s)",
			   SESSION_MS, what,
			   ls_last_words(s, last, sizeof(last)));
	else if (s->status == 1 && ls_reason(s, reason, sizeof(reason)))
		check_pass(r, "after %s the launcher ended the session: %s, "
			   "no answer", what, reason);
	else
		check_fail(r, "after %s the launcher closed the session "
			   "without a named error, exit status %d (stderr: %s)",
			   what, s->status,
			   ls_last_words(s, last, sizeof(last)));
}

/* Starts a session and exchanges HELLO; on failure says why in R and
 * ends the session. Returns true when S is in the READY phase. */
static bool
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
		check_fail(r, "the launcher did not answer a valid HELLO "
			   "(exit status %d: %s)", s->status,
			   ls_last_words(s, last, sizeof(last)));
		return false;
	}
	return true;
}

/* A job spec every decoder accepts: ARGV (ARGC strings), nothing mounted,
 * every limit small, LAYERS_OFF (a JOB_LAYER_BIT mask) off. The program
 * does not exist in the jail, so a launcher that runs it answers at once. */
static void
spec_init(struct job_spec *s, char **argv, uint32_t argc,
	  uint32_t layers_off)
{
	memset(s, 0, sizeof(*s));
	s->job_id = 1;
	s->uid = s->gid = 1000;
	s->argv = argv;
	s->argc = argc;
	s->hostname = unconst("sandbox");
	s->user = unconst("sandbox");
	s->home = unconst("/home/sandbox");
	s->limits.wall_ms = 2000;
	s->limits.cpu_ms = 2000;
	s->limits.memory_bytes = 256u << 20;
	s->limits.tmp_bytes = 1u << 20;
	s->limits.home_bytes = 1u << 20;
	s->limits.fsize_bytes = 1u << 20;
	s->limits.stdout_bytes = 65536;
	s->limits.stderr_bytes = 65536;
	s->limits.nofile = 64;
	s->limits.nproc = 16;
	s->limits.workspace_bytes = 1u << 20;
	s->enforcement = ENFORCE_MONITOR;
	s->cgroup = unconst("");
	s->workspace_allow = 1u << 20;
	s->seccomp_profile = unconst("default");
	s->layers_off = layers_off;
}

#define NO_PROGRAM "/stockade-check-boundary-no-such-program"

/*
 * Encodes a valid RUN (job 1, LAYERS_OFF) into BUF (PROTO_MAX_MSG bytes).
 * With PAD, arguments of 'x' are added until the message is exactly
 * PROTO_MAX_MSG bytes. Returns its length or a negative errno.
 */
static int
encode_run(uint8_t *buf, uint32_t layers_off, bool pad)
{
	char *argv[20] = {unconst(NO_PROGRAM), NULL};
	struct job_spec s;
	size_t room, k, bytes;
	int n;

	spec_init(&s, argv, 1, layers_off);
	n = proto_encode_run(buf, PROTO_MAX_MSG, &s);
	if (n < 0 || !pad)
		return n;
	/* Each argument costs its length and 4; at most JOB_MAX_STR. */
	room = PROTO_MAX_MSG - (size_t)n;
	k = (room + 4 + JOB_MAX_STR - 1) / (4 + JOB_MAX_STR);
	if (k == 0 || k > 18 || room < 4 * k)
		return -EINVAL;
	bytes = room - 4 * k;
	for (size_t i = 0; i < k; i++) {
		size_t len = bytes / k + (i < bytes % k ? 1 : 0);

		if ((argv[1 + i] = malloc(len + 1)) == NULL) {
			n = -ENOMEM;
			goto out;
		}
		memset(argv[1 + i], 'x', len);
		argv[1 + i][len] = '\0';
	}
	s.argc = (uint32_t)(1 + k);
	n = proto_encode_run(buf, PROTO_MAX_MSG, &s);
	if (n >= 0 && (size_t)n != PROTO_MAX_MSG)
		n = -EINVAL;
out:
	for (size_t i = 1; i < 20 && argv[i] != NULL; i++)
		free(argv[i]);
	return n;
}

/* Opens a fresh workspace directory (O_RDONLY, close-on-exec) for a RUN's
 * descriptor, or returns a negative errno. */
static int
open_workspace(struct check_ctx *c)
{
	char ws[4096];
	int e, fd;

	if ((e = check_workspace(c, ws, sizeof(ws))) < 0)
		return e;
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * One launcher session: HELLO first when READY, then the LEN bytes of
 * BAD with its NFDS descriptors FDS, then, with FOLLOW, a valid RUN with
 * a workspace (a launcher that took BAD answers it); watched until an
 * answer, the end of the session or SESSION_MS. The verdict says WHAT.
 */
static void
bad_message(struct check_ctx *c, struct check_result *r, bool ready,
	    const void *bad, size_t len, const int *fds, size_t nfds,
	    bool follow, const char *what)
{
	struct lsession s;
	uint8_t *run = NULL;
	int ws = -1, n = 0, e;

	if (follow) {
		if ((run = malloc(PROTO_MAX_MSG)) == NULL ||
		    (n = encode_run(run, 0, false)) < 0 ||
		    (ws = open_workspace(c)) < 0) {
			check_fail(r, "cannot make the RUN that follows: %s",
				   strerror(n < 0 ? -n : ws < 0 ? -ws :
					    ENOMEM));
			free(run);
			return;
		}
	}
	if (ready) {
		if (!ls_hello(c, &s, r))
			goto out;
	} else if ((e = ls_start(c, &s)) < 0) {
		check_fail(r, "cannot start %s: %s", c->launcher, strerror(-e));
		goto out;
	}
	(void)ls_send(&s, bad, len, fds, nfds);
	if (follow)
		(void)ls_send(&s, run, (size_t)n, &ws, 1);
	ls_watch(&s, SESSION_MS);
	ls_end(&s);
	ls_verdict(&s, r, what);
out:
	if (ws >= 0)
		close(ws);
	free(run);
}

/* A header: TYPE, reserved 0, body length BODY, into M (8 bytes). */
static void
header(uint8_t *m, uint16_t type, uint32_t body)
{
	m[0] = (uint8_t)type;
	m[1] = (uint8_t)(type >> 8);
	m[2] = m[3] = 0;
	for (int i = 0; i < 4; i++)
		m[4 + i] = (uint8_t)(body >> (8 * i));
}

/* ---- the launcher's checks ----------------------------------------------- */

/* boundary.oversized_length_refused_by_header: a datagram that is only a
 * header announcing PROTO_MAX_BODY + 1 bytes, then a valid HELLO. The
 * length is refused from the header, before anything is allocated for
 * it (proto.h; CWE-789): a launcher that allocates the announced body
 * and waits for it takes the HELLO as part of it and never answers. */
static void
oversized_length(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[8 + 8];
	struct lsession s;
	int e;

	if ((e = ls_start(c, &s)) < 0) {
		check_fail(r, "cannot start %s: %s", c->launcher, strerror(-e));
		return;
	}
	header(m, PROTO_HELLO, PROTO_MAX_BODY + 1);
	(void)ls_send(&s, m, PROTO_HEADER_SIZE, NULL, 0);
	e = proto_encode_hello(m, sizeof(m), PROTO_VERSION);
	(void)ls_send(&s, m, (size_t)e, NULL, 0);
	ls_watch(&s, SESSION_MS);
	ls_end(&s);
	ls_verdict(&s, r, "a header announcing a body of PROTO_MAX_BODY + 1 "
		   "bytes, then a valid HELLO");
}

/* boundary.datagram_trailing_bytes_refused: a HELLO datagram with four
 * bytes after the body its header announces (proto.h: the length agrees
 * with the datagram; style.md rule 6, no trailing bytes). */
static void
datagram_trailing(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16] = {0};
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION);

	if (n < 0 || (size_t)n + 4 > sizeof(m)) {
		check_fail(r, "cannot encode HELLO");
		return;
	}
	memcpy(m + n, "\xde\xad\xbe\xef", 4);
	bad_message(c, r, false, m, (size_t)n + 4, NULL, 0, true,
		    "a HELLO datagram 4 bytes longer than its header says");
}

/* boundary.hello_trailing_bytes_refused: a HELLO whose body (and header
 * length) holds 4 more bytes after the version (proto.h: each body
 * decoder consumes the body exactly). */
static void
hello_trailing(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];

	header(m, PROTO_HELLO, 8);
	for (int i = 0; i < 4; i++)
		m[8 + i] = (uint8_t)(PROTO_VERSION >> (8 * i));
	memcpy(m + 12, "\xde\xad\xbe\xef", 4);
	bad_message(c, r, false, m, sizeof(m), NULL, 0, true,
		    "a HELLO whose 8-byte body has 4 bytes after the version");
}

/* A descriptor to attach: /dev/null, close-on-exec, or -1. */
static int
devnull(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* boundary.descriptor_on_hello_refused: HELLO with a descriptor attached
 * (proto.h: HELLO carries none; unix(7) SCM_RIGHTS). */
static void
fd_on_hello(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION);
	int fd = devnull();

	if (n < 0 || fd < 0) {
		check_fail(r, "cannot make the message: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	bad_message(c, r, false, m, (size_t)n, &fd, 1, true,
		    "a HELLO carrying a descriptor");
	close(fd);
}

/* boundary.descriptor_on_cancel_refused: after HELLO, CANCEL with a
 * descriptor attached, then a valid RUN (proto.h: CANCEL carries none;
 * it has no answer, so only the RUN after it shows that the launcher
 * went on). */
static void
fd_on_cancel(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[32];
	int n = proto_encode_cancel(m, sizeof(m), 0);
	int fd = devnull();

	if (n < 0 || fd < 0) {
		check_fail(r, "cannot make the message: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	bad_message(c, r, true, m, (size_t)n, &fd, 1, true,
		    "a CANCEL carrying a descriptor, then a valid RUN");
	close(fd);
}

/* boundary.too_many_descriptors_refused: after HELLO, a RUN with three
 * descriptors (proto.h: PROTO_MAX_FDS is 2, the workspace and the
 * caller's terminal with layer no_terminal off). The first two are a
 * workspace and a terminal (a pseudo-terminal master) and the layer is
 * off, so a launcher that drops the third and keeps the message runs it. */
static void
too_many_fds(struct check_ctx *c, struct check_result *r)
{
	uint8_t *m = malloc(PROTO_MAX_MSG);
	int fds[3] = {-1, -1, -1}, n = -ENOMEM;
	bool tty;

	fds[1] = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	tty = fds[1] >= 0;
	if (m != NULL)
		n = encode_run(m, tty ? JOB_LAYER_BIT(JOB_LAYER_NO_TERMINAL) : 0,
			       false);
	fds[0] = open_workspace(c);
	if (!tty)
		fds[1] = fds[0] >= 0 ? dup(fds[0]) : -1;
	fds[2] = devnull();
	if (n < 0 || fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
		check_fail(r, "cannot make the RUN: %s",
			   strerror(n < 0 ? -n : fds[0] < 0 ? -fds[0] : errno));
	else
		bad_message(c, r, true, m, (size_t)n, fds, 3, false,
			    tty ? "a RUN with 3 descriptors (workspace, "
				  "terminal, /dev/null)"
				: "a RUN with 3 descriptors (no /dev/ptmx "
				  "here: workspace twice, /dev/null)");
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(m);
}

/* boundary.unknown_type_refused: after HELLO, a message of type 7 (no
 * such type) and, in a second session, an OUTPUT (a launcher-to-broker
 * type), each followed by a valid RUN (proto.h: who sends what; an
 * unknown type ends the session). */
static void
unknown_type(struct check_ctx *c, struct check_result *r)
{
	static const uint16_t bad[] = {PROTO_MSG_TYPE_MAX + 1, PROTO_OUTPUT};
	char first[CHECK_OBSERVED_MAX], what[100];
	uint8_t m[8 + 13] = {0};

	for (size_t i = 0; i < 2; i++) {
		if (bad[i] == PROTO_OUTPUT)
			snprintf(what, sizeof(what), "an OUTPUT (the "
				 "launcher's to send), then a valid RUN");
		else
			snprintf(what, sizeof(what), "a message of type %u "
				 "(none such), then a valid RUN", bad[i]);
		/* OUTPUT's body: job 1, stream 1, no data */
		header(m, bad[i], 13);
		m[8] = 1;
		m[16] = 1;
		bad_message(c, r, true, m, sizeof(m), NULL, 0, true, what);
		if (r->verdict != CHECK_PASS)
			return;
		if (i == 0)
			snprintf(first, sizeof(first), "%s", r->observed);
	}
	check_pass(r, "both refused; %s", first);
}

/* boundary.wrong_version_refused: HELLO with PROTO_VERSION - 1 (proto.h:
 * the launcher answers the same version or the session ends). */
static void
wrong_version(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];
	char what[64];
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION - 1);

	if (n < 0) {
		check_fail(r, "cannot encode HELLO");
		return;
	}
	snprintf(what, sizeof(what), "a HELLO with protocol version %u",
		 PROTO_VERSION - 1);
	bad_message(c, r, false, m, (size_t)n, NULL, 0, true, what);
}

/* boundary.run_before_hello_refused: a valid RUN as the first message
 * (proto.h: HELLO first; launcher/dispatch.c phase table). */
static void
run_before_hello(struct check_ctx *c, struct check_result *r)
{
	uint8_t *m = malloc(PROTO_MAX_MSG);
	int n = m != NULL ? encode_run(m, 0, false) : -ENOMEM;
	int ws = open_workspace(c);

	if (n < 0 || ws < 0)
		check_fail(r, "cannot make the RUN: %s",
			   strerror(n < 0 ? -n : -ws));
	else
		bad_message(c, r, false, m, (size_t)n, &ws, 1, false,
			    "a valid RUN before any HELLO");
	if (ws >= 0)
		close(ws);
	free(m);
}

/* boundary.second_hello_refused: a second HELLO after the first was
 * answered (launcher/dispatch.c phase table: HELLO only first). */
static void
second_hello(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION);

	if (n < 0) {
		check_fail(r, "cannot encode HELLO");
		return;
	}
	bad_message(c, r, true, m, (size_t)n, NULL, 0, true,
		    "a second HELLO");
}

/* boundary.oversized_datagram_refused: after HELLO, a datagram of
 * PROTO_MAX_MSG + 64 bytes whose first PROTO_MAX_MSG bytes are a valid
 * RUN (proto.h: MSG_TRUNC on receipt is fatal; recvmsg(2)). A launcher
 * that ignores the truncation runs that RUN. */
static void
oversized_datagram(struct check_ctx *c, struct check_result *r)
{
	size_t len = PROTO_MAX_MSG + 64;
	uint8_t *m = calloc(1, len);
	int n = m != NULL ? encode_run(m, 0, true) : -ENOMEM;
	int ws = open_workspace(c);

	if (n < 0 || ws < 0)
		check_fail(r, "cannot make the RUN: %s",
			   strerror(n < 0 ? -n : -ws));
	else
		bad_message(c, r, true, m, len, &ws, 1, false,
			    "a datagram of PROTO_MAX_MSG + 64 bytes (a valid "
			    "RUN, then 64 more)");
	if (ws >= 0)
		close(ws);
	free(m);
}

/* ---- the broker's checks: a hostile launcher ----------------------------- */

/* Copies the file FROM to TO (mode 0755). Returns 0 or a negative errno. */
static int
copy_exe(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out, e = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0) {
		e = -errno;
		close(in);
		return e;
	}
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(out, buf, (size_t)n) != n) {
			e = n < 0 ? -errno : -EIO;
			break;
		}
	}
	close(in);
	if (close(out) < 0 && e == 0)
		e = -errno;
	return e;
}

/*
 * The hostile installation, made once per run under C's tmpdir: DIR/
 * stockade, a copy of the stockade under test, and DIR/stockade-launcher,
 * a copy of the probe, whose mode is DIR/fake-launcher.mode. The broker
 * finds its launcher beside itself (supervisor_init). Writes DIR into
 * BUF. Returns 0 or a negative errno.
 */
static int
fake_install(struct check_ctx *c, char *buf, size_t len)
{
	static char made_for[4096];
	char path[4200];
	int e;

	strlcpy(buf, c->tmpdir, len);
	strlcat(buf, "/boundary-fake", len);
	if (strcmp(made_for, c->tmpdir) == 0)
		return 0;
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/stockade", buf);
	if ((e = copy_exe(c->stockade, path)) < 0 && e != -EEXIST)
		return e;
	snprintf(path, sizeof(path), "%s/stockade-launcher", buf);
	if ((e = copy_exe(c->probe, path)) < 0 && e != -EEXIST)
		return e;
	snprintf(made_for, sizeof(made_for), "%s", c->tmpdir);
	return 0;
}

/* What a job on the fake launcher gave. */
struct fake_job {
	struct check_proc proc;
	json_t *result;
	const char *status, *detail, *out;
};

/*
 * Runs `stockade run --json -- fake-job` of the hostile installation with
 * its launcher in MODE (probe_boundary.c). Returns 0 when stockade ran
 * (J->result may still be NULL), else writes why into R.
 */
static int
fake_run(struct check_ctx *c, const char *mode, struct fake_job *j,
	 struct check_result *r)
{
	char dir[4096], exe[4200], mf[4200];
	int e;

	memset(j, 0, sizeof(*j));
	j->status = j->detail = j->out = "";
	if ((e = fake_install(c, dir, sizeof(dir))) < 0) {
		check_fail(r, "cannot make the hostile installation under %s: "
			   "%s", c->tmpdir, strerror(-e));
		return -1;
	}
	snprintf(exe, sizeof(exe), "%s/stockade", dir);
	snprintf(mf, sizeof(mf), "%s/fake-launcher.mode", dir);
	if ((e = check_write_file(mf, mode, strlen(mode), false, c->root)) <
	    0) {
		check_fail(r, "cannot write %s: %s", mf, strerror(-e));
		return -1;
	}
	const char *argv[] = {exe, "run", "--json", "--", "fake-job", NULL};
	if ((e = check_exec(c, argv, NULL, NULL, 0, 5000, &j->proc)) < 0) {
		check_fail(r, "cannot run %s: %s", exe, strerror(-e));
		check_proc_free(&j->proc);
		return -1;
	}
	j->result = json_loads(j->proc.out, 0, NULL);
	if (j->result != NULL) {
		const char *v;

		if ((v = json_string_value(json_object_get(j->result,
							    "status"))))
			j->status = v;
		if ((v = json_string_value(json_object_get(j->result,
							    "detail"))))
			j->detail = v;
		if ((v = json_string_value(json_object_get(j->result,
							    "stdout"))))
			j->out = v;
	}
	return 0;
}

static void
fake_free(struct fake_job *j)
{
	json_decref(j->result);
	check_proc_free(&j->proc);
}

/* "exit N, stderr: ..." of a fake job without a result. */
static const char *
fake_summary(const struct fake_job *j, char *buf, size_t len)
{
	size_t n = j->proc.errlen;

	while (n > 0 && j->proc.err[n - 1] == '\n')
		n--;
	snprintf(buf, len, "stockade exit %d%s, status \"%s\", detail \"%s\", "
		 "stderr: %.*s", j->proc.status,
		 j->proc.timed_out ? " (killed at its deadline)" : "",
		 j->status, j->detail, (int)(n > 200 ? 200 : n),
		 j->proc.err + (n > 200 ? n - 200 : 0));
	return buf;
}

/* boundary.launcher_descriptor_refused_by_broker: the launcher sends
 * OUTPUT "a", then OUTPUT "b" carrying a descriptor of the host's /, then
 * RESULT ok. The broker must close it and end the job as sandbox_error
 * (proto.h: the launcher's messages carry no descriptor; a descriptor
 * kept is a way out for a compromised launcher). */
static void
broker_refuses_fd(struct check_ctx *c, struct check_result *r)
{
	struct fake_job j;
	char why[400];

	if (fake_run(c, "smuggle-fd", &j, r) < 0)
		return;
	if (strstr(j.proc.err, "sends OUTPUT with a descriptor") == NULL)
		check_fail(r, "the hostile launcher did not get to send its "
			   "descriptor: %s", fake_summary(&j, why, sizeof(why)));
	else if (strcmp(j.status, "sandbox_error") == 0 &&
		 strstr(j.detail, "protocol") != NULL &&
		 strcmp(j.out, "a") == 0)
		check_pass(r, "sandbox_error \"%s\"; stdout \"a\": the OUTPUT "
			   "before it was taken", j.detail);
	else if (j.result == NULL)
		check_fail(r, "no result: %s", fake_summary(&j, why, sizeof(why)));
	else
		check_fail(r, "status %s, stdout \"%s\", detail \"%s\": the "
			   "broker took an OUTPUT carrying a descriptor of / "
			   "from its launcher", j.status, j.out, j.detail);
	fake_free(&j);
}

/* boundary.wrong_version_reply_refused_by_broker: the launcher answers
 * HELLO with PROTO_VERSION - 1 and would run the job all the same; the
 * broker must not start it (proto.h: the same version or the session
 * ends). */
static void
broker_refuses_version(struct check_ctx *c, struct check_result *r)
{
	struct fake_job j;
	char why[400];

	if (fake_run(c, "wrong-version", &j, r) < 0)
		return;
	if (strstr(j.proc.err, "HELLO_REPLY with version") == NULL)
		check_fail(r, "the hostile launcher did not get to answer "
			   "HELLO: %s", fake_summary(&j, why, sizeof(why)));
	else if (strcmp(j.status, "sandbox_error") == 0 &&
		 strncmp(j.detail, "cannot start the launcher", 25) == 0 &&
		 strstr(j.detail, "protocol") != NULL)
		check_pass(r, "the launcher answered HELLO with version %u and "
			   "no job ran: sandbox_error \"%s\"",
			   PROTO_VERSION - 1, j.detail);
	else if (j.result == NULL)
		check_fail(r, "no result: %s", fake_summary(&j, why, sizeof(why)));
	else
		check_fail(r, "status %s, detail \"%s\": the broker ran a job "
			   "on a launcher that answered HELLO with protocol "
			   "version %u", j.status, j.detail, PROTO_VERSION - 1);
	fake_free(&j);
}

/* boundary.foreign_job_result_refused: the launcher sends OUTPUT "a" and
 * then a RESULT ok for the next job id, not the running one (broker/
 * supervisor.c phase table: OUTPUT and RESULT of this job's id only). */
static void
broker_refuses_foreign_result(struct check_ctx *c, struct check_result *r)
{
	struct fake_job j;
	char why[400];

	if (fake_run(c, "foreign-result", &j, r) < 0)
		return;
	if (strstr(j.proc.err, "RESULT for job") == NULL)
		check_fail(r, "the hostile launcher did not get to send its "
			   "RESULT: %s", fake_summary(&j, why, sizeof(why)));
	else if (strcmp(j.status, "sandbox_error") == 0 &&
		 strstr(j.detail, "protocol") != NULL &&
		 strcmp(j.out, "a") == 0)
		check_pass(r, "sandbox_error \"%s\"; stdout \"a\": the OUTPUT "
			   "before it was taken", j.detail);
	else if (j.result == NULL)
		check_fail(r, "no result: %s", fake_summary(&j, why, sizeof(why)));
	else
		check_fail(r, "status %s, detail \"%s\": the broker ended job 1 "
			   "with a RESULT for job 2", j.status, j.detail);
	fake_free(&j);
}

/* ---- a launcher that dies -------------------------------------------------- */

/* The first child of PARENT found in /proc (its comm into COMM), or 0. */
static pid_t
find_child(pid_t parent, char *comm, size_t len)
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
				 open_paren != NULL ? (int)(p - open_paren - 1)
						    : 0,
				 open_paren != NULL ? open_paren + 1 : "");
		}
	}
	closedir(d);
	return found;
}

/* True when NAME exists in the directory DIR. */
static bool
exists_in(int dir, const char *name)
{
	struct stat st;

	return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A `stockade run` started in the background. */
struct bgrun {
	pid_t pid;
	int out, err;
	char obuf[16384], ebuf[4096];
	size_t olen, elen;
	int status;
};

static int
bg_start(struct check_ctx *c, const char *const argv[], struct bgrun *b)
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
	posix_spawnattr_init(&at);
	{
		sigset_t none, all;

		sigemptyset(&none);
		sigfillset(&all);
		posix_spawnattr_setsigmask(&at, &none);
		posix_spawnattr_setsigdefault(&at, &all);
	}
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
				 POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	{
		char *args[32];
		size_t k = 0;

		for (; argv[k] != NULL && k < 31; k++)
			args[k] = unconst(argv[k]);
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

/* Reads B's output for up to MS ms; returns true once it has exited
 * (reaped, B->status set). */
static bool
bg_poll(struct bgrun *b, int ms)
{
	struct pollfd p[2] = {{b->out, POLLIN, 0}, {b->err, POLLIN, 0}};
	int st;

	if (b->pid == 0)
		return true;
	if (b->out >= 0 || b->err >= 0) {
		if (poll(p, 2, ms) > 0) {
			if (p[0].revents != 0)
				drain_into(&b->out, b->obuf, &b->olen,
					   sizeof(b->obuf));
			if (p[1].revents != 0)
				drain_into(&b->err, b->ebuf, &b->elen,
					   sizeof(b->ebuf));
		}
	} else {
		usleep((useconds_t)ms * 1000);
	}
	if (b->out < 0 && waitpid(b->pid, &st, WNOHANG) == b->pid) {
		b->status = exit_code(st);
		b->pid = 0;
		return true;
	}
	return false;
}

/* Kills what is left of B (its process group) and reaps it. */
static void
bg_end(struct bgrun *b)
{
	int st;

	if (b->pid > 0) {
		kill(-b->pid, SIGKILL);
		kill(b->pid, SIGKILL);
		waitpid(b->pid, &st, 0);
		b->status = exit_code(st);
		b->pid = 0;
	}
	if (b->out >= 0)
		close(b->out);
	if (b->err >= 0)
		close(b->err);
	b->out = b->err = -1;
}

/*
 * boundary.launcher_death_ends_job: a real `stockade run` whose job
 * makes the file "started", sleeps LATE_MS and makes "late"; once
 * "started" is there, its launcher (the child of stockade run) is killed
 * with SIGKILL. The job must end as sandbox_error naming the launcher's
 * death within DEATH_NOTICE_MS, and the jail with it: "late" never
 * appears (proto.h, supervisor.h: a launcher that dies is a
 * sandbox_error; PR_SET_PDEATHSIG, prctl(2)).
 */
static void
launcher_death(struct check_ctx *c, struct check_result *r)
{
	char ws[4096], put[4200], ms[16], comm[64] = "", why[300];
	struct bgrun b;
	json_t *res = NULL;
	const char *status = "", *detail = "";
	int64_t t0, t_started = 0, t_kill, t_end = 0;
	pid_t launcher = 0;
	int wsfd = -1, e;

	if ((e = check_workspace(c, ws, sizeof(ws))) < 0 ||
	    (wsfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		check_fail(r, "cannot make a workspace: %s",
			   strerror(e < 0 ? -e : errno));
		return;
	}
	snprintf(put, sizeof(put), "%s:stockade-probe", c->probe);
	snprintf(ms, sizeof(ms), "%d", LATE_MS);
	const char *argv[] = {c->stockade, "run", "--json", "--workspace", ws,
			      "--put", put, "--", "./stockade-probe",
			      "mark-then-mark", "started", ms, "late", NULL};
	if ((e = bg_start(c, argv, &b)) < 0) {
		check_fail(r, "cannot run %s: %s", c->stockade, strerror(-e));
		close(wsfd);
		return;
	}
	t0 = now_ms();
	/* The job under way: "started" made, "late" LATE_MS away. */
	while (!exists_in(wsfd, "started")) {
		if (bg_poll(&b, 5) || now_ms() - t0 > 5000) {
			bg_end(&b);
			check_fail(r, "the job never started (stockade exit %d, "
				   "stdout %.150s, stderr %.150s)", b.status,
				   b.obuf, b.ebuf);
			close(wsfd);
			return;
		}
	}
	t_started = now_ms();
	launcher = find_child(b.pid, comm, sizeof(comm));
	if (launcher <= 0) {
		bg_end(&b);
		check_fail(r, "stockade run (pid %d) has no child in /proc: "
			   "no launcher to kill", (int)b.pid);
		close(wsfd);
		return;
	}
	kill(launcher, SIGKILL);
	t_kill = now_ms();
	while (!bg_poll(&b, 10))
		if (now_ms() - t_kill > DEATH_NOTICE_MS + 1000)
			break;
	if (b.pid == 0)
		t_end = now_ms();
	bg_end(&b);
	/* Past the moment a surviving jail would make "late". */
	while (now_ms() < t_started + LATE_MS + 250)
		usleep(10000);
	if ((res = json_loads(b.obuf, 0, NULL)) != NULL) {
		const char *v;

		if ((v = json_string_value(json_object_get(res, "status"))))
			status = v;
		if ((v = json_string_value(json_object_get(res, "detail"))))
			detail = v;
	}
	snprintf(why, sizeof(why), "after the launcher (pid %d, %s) was "
		 "killed mid-job", (int)launcher, comm);
	if (t_end == 0)
		check_fail(r, "no result within %d ms %s: its death went "
			   "unnoticed", DEATH_NOTICE_MS + 1000, why);
	else if (exists_in(wsfd, "late"))
		check_fail(r, "the job made \"late\" %d ms after it started, "
			   "%s: the jail outlived its launcher", LATE_MS, why);
	else if (strcmp(status, "sandbox_error") != 0 ||
		 strstr(detail, "launcher") == NULL ||
		 strstr(detail, "died") == NULL)
		check_fail(r, "status \"%s\", detail \"%s\" %s (stockade exit "
			   "%d)", status, detail, why, b.status);
	else if (t_end - t_kill > DEATH_NOTICE_MS)
		check_fail(r, "sandbox_error only %lld ms %s",
			   (long long)(t_end - t_kill), why);
	else
		check_pass(r, "sandbox_error \"%s\" %lld ms %s; the job's "
			   "later file never appeared", detail,
			   (long long)(t_end - t_kill), why);
	json_decref(res);
	close(wsfd);
}

const struct check checks_boundary[] = {
	{"boundary.oversized_length_refused_by_header", "boundary",
	 "a header announcing PROTO_MAX_BODY + 1 bytes ends the session at "
	 "once, before any body is awaited", oversized_length},
	{"boundary.datagram_trailing_bytes_refused", "boundary",
	 "a datagram longer than its header says ends the session",
	 datagram_trailing},
	{"boundary.hello_trailing_bytes_refused", "boundary",
	 "a HELLO body with bytes after the version ends the session",
	 hello_trailing},
	{"boundary.descriptor_on_hello_refused", "boundary",
	 "a HELLO carrying a descriptor ends the session", fd_on_hello},
	{"boundary.descriptor_on_cancel_refused", "boundary",
	 "a CANCEL carrying a descriptor ends the session; the RUN after it "
	 "is never answered", fd_on_cancel},
	{"boundary.too_many_descriptors_refused", "boundary",
	 "a RUN carrying 3 descriptors ends the session, no job runs",
	 too_many_fds},
	{"boundary.unknown_type_refused", "boundary",
	 "type 7 and OUTPUT sent to the launcher end the session",
	 unknown_type},
	{"boundary.wrong_version_refused", "boundary",
	 "a HELLO with another protocol version ends the session unanswered",
	 wrong_version},
	{"boundary.run_before_hello_refused", "boundary",
	 "a RUN before HELLO ends the session, no job runs",
	 run_before_hello},
	{"boundary.second_hello_refused", "boundary",
	 "a second HELLO ends the session unanswered", second_hello},
	{"boundary.oversized_datagram_refused", "boundary",
	 "a datagram over PROTO_MAX_MSG (MSG_TRUNC) ends the session, no job "
	 "runs", oversized_datagram},
	{"boundary.launcher_descriptor_refused_by_broker", "boundary",
	 "a descriptor sent by the launcher ends the job as sandbox_error",
	 broker_refuses_fd},
	{"boundary.wrong_version_reply_refused_by_broker", "boundary",
	 "a launcher answering another protocol version runs no job",
	 broker_refuses_version},
	{"boundary.foreign_job_result_refused", "boundary",
	 "a RESULT for another job id ends the job as sandbox_error",
	 broker_refuses_foreign_result},
	{"boundary.launcher_death_ends_job", "boundary",
	 "a launcher killed mid-job: sandbox_error naming its death within "
	 "2 s, and the job's processes gone", launcher_death},
	{NULL, NULL, NULL, NULL},
};
