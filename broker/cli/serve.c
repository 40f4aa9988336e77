/*
 * serve.c: `stockade serve --workspace DIR [--policy FILE] [--socket
 * PATH]`, one JSON-RPC 2.0 session on one workspace (docs/protocol.md).
 *
 * This file is the transport: lines in, lines out, descriptors received
 * with SCM_RIGHTS (unix(7)) and attached to the line they came with.
 * What a line means is rpc.c's business.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are caught by jobrun's handler
 * (jobrun.h: a running job is cancelled) and kept blocked except while
 * the session waits in ppoll and while a request is handled, so a signal
 * is never lost between a check of the flag and a wait: it is either seen
 * by the check or interrupts the wait. The session then ends cleanly (the
 * socket unlinked, the launcher stopped); a second signal kills the
 * broker at once (SA_RESETHAND). The handler is installed without
 * SA_RESTART, so a request blocked in a transfer (a pipe nobody drains)
 * is interrupted too: its copy stops (fsapi_set_interrupted), the request
 * is answered io_error and the session ends.
 *
 * While a job runs the connection is still read (supervisor_watch): the
 * lines that come are queued for their turn, and a $/cancelRequest for
 * the running request cancels its job at once (rpc_cancels_current); a
 * client gone (its connection hung up, or no reader left on standard
 * output) cancels it too (jobrun_cancel), so nothing runs for nobody.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/landlock.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "fsapi.h"
#include "fsutil.h"
#include "jobrun.h"
#include "log.h"
#include "doctor.h"
#include "preflight.h"
#include "rpc.h"
#include "supervisor.h"
#include "workspace.h"

#define EXIT_SESSION 1  /* the stdio session ended on a protocol error */
#define READ_CHUNK (64u << 10)
/* Room for SCM_MAX_FD (253, include/net/scm.h) descriptors in one
 * recvmsg: a sender within the kernel's own limit never truncates the
 * control data; what a line may carry is capped after receipt. */
#define CMSG_FDS 253

struct server {
	struct rpc_session rpc;
	sigset_t waitmask;      /* the mask while waiting: signals let in */
};

/* A complete request line read and not yet handled, with its
 * descriptors. */
struct line {
	struct line *next;
	char *text;             /* LEN bytes without the '\n' */
	size_t len;
	int fds[RPC_MAX_FDS + 1];
	size_t nfds;
};

/* Most bytes and lines queued while a job runs: past them the
 * connection is not read until the job ends. */
#define QUEUE_MAX_BYTES (2u * RPC_MAX_LINE)
#define QUEUE_MAX_LINES 4096u

/* A connection's input: the complete lines not yet handled (a queue),
 * the bytes of the line not yet complete, and the descriptors that came
 * with it. */
struct conn {
	int in, out;
	bool sock;              /* recvmsg with SCM_RIGHTS */
	char *buf;
	size_t len, cap;
	int pending[RPC_MAX_FDS + 1];
	size_t npending;
	struct line *head, *tail;
	size_t queued_bytes, queued_lines;
	bool eof;               /* the input ended (read returned 0) */
	int broken;             /* 0, or the read's error ended the input:
				 * -EPROTO, -EMSGSIZE or another errno */
	struct server *sv;      /* for the watch during a job */
	struct supervisor_watch watch;
};

enum conn_end { CONN_EOF, CONN_INTERRUPTED, CONN_BROKEN };

static void
usage(FILE *f)
{
	fprintf(f, "usage: stockade serve --workspace DIR [--policy FILE] "
		   "[--socket PATH]\n");
}

/* Adds FD to the list FDS (*N of them, at most RPC_MAX_FDS + 1 kept: one
 * more than allowed so that rpc_handle refuses the request). */
static void
fds_add(int *fds, size_t *n, int fd)
{
	if (*n < RPC_MAX_FDS + 1)
		fds[(*n)++] = fd;
	else
		close(fd);
}

static void
fds_close(int *fds, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		close(fds[i]);
	*n = 0;
}

/* Waits until FD is readable or a signal comes. Returns 1 (readable), 0
 * (a signal: jobrun_interrupted says so), or a negative errno. An EINTR
 * that no caught signal explains (a stop and continue, ptrace) waits
 * again: only jobrun's flag ends the session. */
static int
wait_readable(const struct server *sv, int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	for (;;) {
		if (jobrun_interrupted())
			return 0;
		if (ppoll(&p, 1, NULL, &sv->waitmask) >= 0)
			return 1;
		if (errno != EINTR)
			return -errno;
	}
}

/* Handles one line with its descriptors and writes the answer, with the
 * signals let in (a job is cancelled by them). Returns 0 or a negative
 * errno (the answer could not be written: the connection is over). */
static int
handle_line(struct server *sv, struct conn *c, const char *line, size_t len,
	    int *fds, size_t nfds)
{
	sigset_t old;
	char *resp = NULL;
	size_t n;
	int e;

	sigprocmask(SIG_SETMASK, &sv->waitmask, &old);
	e = rpc_handle(&sv->rpc, line, len, fds, nfds, &resp);
	if (e == 0 && resp != NULL) {
		n = strlen(resp);
		resp[n] = '\n';  /* over the NUL; written by length */
		e = write_all(c->out, resp, n + 1);
	} else if (e == -ENOMEM) {
		/* No memory to build the answer: one that needs none, so
		 * that the client is never left waiting (its id is not
		 * known here: -32603 with a null id, docs/protocol.md). */
		static const char oom[] = "{\"jsonrpc\":\"2.0\",\"id\":null,"
			"\"error\":{\"code\":-32603,\"message\":"
			"\"out of memory\"}}\n";

		log_error("cannot answer a request: %s", strerror(-e));
		e = write_all(c->out, oom, sizeof(oom) - 1);
	} else if (e < 0) {
		log_error("cannot answer a request: %s", strerror(-e));
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(resp);
	return e;
}

/* Reads once: data into C's buffer, descriptors into FDS (*NFDS). Returns
 * the bytes read (0 at end of input) or a negative errno; -EPROTO for
 * control data that is not SCM_RIGHTS or was truncated (MSG_CTRUNC). */
static ssize_t
conn_read(struct conn *c, int *fds, size_t *nfds)
{
	union {
		char buf[CMSG_SPACE(CMSG_FDS * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = {.iov_base = c->buf + c->len,
			    .iov_len = c->cap - c->len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;
	bool bad = false;
	ssize_t n;

	*nfds = 0;
	if (iov.iov_len > READ_CHUNK)
		iov.iov_len = READ_CHUNK;
	if (!c->sock) {
		n = read(c->in, iov.iov_base, iov.iov_len);
		return n < 0 ? -errno : n;
	}
	msg.msg_control = control.buf;
	msg.msg_controllen = sizeof(control.buf);
	n = recvmsg(c->in, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0)) {
			bad = true;
			continue;
		}
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
			fds_add(fds, nfds, fd);
		}
	}
	if (bad || (msg.msg_flags & MSG_CTRUNC)) {
		fds_close(fds, nfds);
		return -EPROTO;
	}
	return n;
}

/* Appends the line C->buf[START..END) with the descriptors FDS (N) to
 * C's queue; they pass to the queue (closed here on ENOMEM, the line
 * then lost: -ENOMEM). */
static int
queue_line(struct conn *c, size_t start, size_t end, int *fds, size_t n)
{
	struct line *l = calloc(1, sizeof(*l));

	if (l == NULL || (l->text = malloc(end - start + 1)) == NULL) {
		free(l);
		fds_close(fds, &n);
		return -ENOMEM;
	}
	memcpy(l->text, c->buf + start, end - start);
	l->text[end - start] = '\0';
	l->len = end - start;
	memcpy(l->fds, fds, n * sizeof(int));
	l->nfds = n;
	if (c->tail != NULL)
		c->tail->next = l;
	else
		c->head = l;
	c->tail = l;
	c->queued_bytes += l->len;
	c->queued_lines++;
	return 0;
}

/* Takes the first queued line of C, or NULL. */
static struct line *
queue_pop(struct conn *c)
{
	struct line *l = c->head;

	if (l != NULL) {
		c->head = l->next;
		if (c->head == NULL)
			c->tail = NULL;
		c->queued_bytes -= l->len;
		c->queued_lines--;
	}
	return l;
}

static void
line_free(struct line *l)
{
	if (l != NULL) {
		fds_close(l->fds, &l->nfds);
		free(l->text);
		free(l);
	}
}

/*
 * Reads once from C (it must be readable) and queues every line it
 * completes. Which line descriptors belong to: a client sends a line and
 * its descriptors in one sendmsg, so they ride on the first byte of that
 * line; unix(7) stream sockets never let one recvmsg read past data that
 * carried descriptors. The descriptors of a recvmsg therefore belong to
 * the line that holds the last byte it read; those of a line not yet
 * complete wait in C->pending for it.
 *
 * Returns the bytes read (0 at end of input: C->eof set, a last line
 * without its '\n' dropped, as a client killed mid-send cut it: it is
 * not a request, and is never carried out, however it parses), -EAGAIN
 * or -EINTR to try again, or a negative errno that ends the connection
 * (C->broken set): -EMSGSIZE for a line over RPC_MAX_LINE (serve_conn
 * answers it with a parse error once the lines before it are answered),
 * -EPROTO for bad control data, -ENOMEM.
 */
static ssize_t
conn_fill(struct conn *c)
{
	int fds[RPC_MAX_FDS + 1], linefds[RPC_MAX_FDS + 1];
	size_t nfds, nline, start = 0, mark;
	bool first = true, fds_given = false;
	ssize_t n;
	char *nl;

	if (c->len == c->cap) {
		size_t cap = c->cap > 0 ? c->cap * 2 : READ_CHUNK;
		char *b;

		if (c->cap >= RPC_MAX_LINE + 1)
			return c->broken = -EMSGSIZE; /* serve_conn says it */
		if (cap > RPC_MAX_LINE + 1)
			cap = RPC_MAX_LINE + 1;
		if ((b = realloc(c->buf, cap)) == NULL) {
			log_error("out of memory");
			return c->broken = -ENOMEM;
		}
		c->buf = b;
		c->cap = cap;
	}
	n = conn_read(c, fds, &nfds);
	if (n == -EINTR || n == -EAGAIN)
		return n;
	if (n == -EPROTO) {
		log_error("a client sent control data other than up to %d "
			  "descriptors: the connection ends", CMSG_FDS);
		return c->broken = -EPROTO;
	}
	if (n < 0) {
		log_error("cannot read a request: %s", strerror((int)-n));
		return c->broken = (int)n;
	}
	if (n == 0) {
		fds_close(fds, &nfds);
		if (c->len > 0)
			log_warn("input ended inside a line of %zu bytes: "
				 "ignored", c->len);
		c->len = 0;
		c->eof = true;
		return 0;
	}
	mark = c->len + (size_t)n - 1;
	c->len += (size_t)n;
	while (start < c->len &&
	       (nl = memchr(c->buf + start, '\n', c->len - start)) != NULL) {
		size_t end = (size_t)(nl - c->buf);

		nline = 0;
		if (first) {
			for (size_t i = 0; i < c->npending; i++)
				fds_add(linefds, &nline, c->pending[i]);
			c->npending = 0;
			first = false;
		}
		if (!fds_given && end >= mark) {
			for (size_t i = 0; i < nfds; i++)
				fds_add(linefds, &nline, fds[i]);
			fds_given = true;
		}
		if (queue_line(c, start, end, linefds, nline) < 0) {
			if (!fds_given)
				fds_close(fds, &nfds);
			log_error("out of memory");
			return c->broken = -ENOMEM;
		}
		start = end + 1;
	}
	if (!fds_given)
		for (size_t i = 0; i < nfds; i++)
			fds_add(c->pending, &c->npending, fds[i]);
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	return n;
}

/*
 * The watch during a job (supervisor_watch): fds[0] the input, fds[1]
 * standard output when it is another descriptor. Reads what came into
 * the queue, up to QUEUE_MAX_*, and cancels the job for a
 * $/cancelRequest that names it, or for a client gone: a connection
 * hung up (a socket's POLLHUP: both directions closed; a client that
 * only shut down its writing still reads its answer) or an output
 * without a reader (a pipe's POLLERR).
 */
static void
watch_client(struct supervisor_watch *w)
{
	struct conn *c = w->arg;
	struct pollfd *in = &w->fds[0], *out = &w->fds[1];
	bool gone = (out->revents & (POLLERR | POLLHUP)) ||
		    (c->sock && (in->revents & (POLLERR | POLLHUP)));

	if ((in->revents & POLLIN) && !c->eof && c->broken == 0)
		(void)conn_fill(c);
	if (c->eof || c->broken != 0 || c->queued_bytes >= QUEUE_MAX_BYTES ||
	    c->queued_lines >= QUEUE_MAX_LINES)
		in->events &= (short)~POLLIN;
	/* A pipe that ended says POLLHUP for good: no longer polled. */
	if (!c->sock && (c->eof || c->broken != 0 ||
			 (in->revents & (POLLHUP | POLLERR))))
		in->fd = -1;
	for (struct line *l = c->head; l != NULL; l = l->next)
		if (rpc_cancels_current(&c->sv->rpc, l->text, l->len)) {
			jobrun_cancel(JOB_CANCEL_REQUEST);
			break;
		}
	if (gone) {
		log_warn("the client went away during a job: it is cancelled");
		jobrun_cancel(JOB_CANCEL_CLIENT_GONE);
		in->fd = out->fd = -1;
	}
}

/* Serves one connection until its end of input, a signal, or a protocol
 * error (a line over RPC_MAX_LINE, bad control data), which is answered
 * when it can be and ends the connection. */
static enum conn_end
serve_conn(struct server *sv, struct conn *c)
{
	struct line *l;
	int e;

	sv->rpc.client_fd = c->in;
	c->sv = sv;
	c->watch.arg = c;
	c->watch.fn = watch_client;
	if (sv->rpc.sup != NULL)
		sv->rpc.sup->watch = &c->watch;
	for (;;) {
		while ((l = queue_pop(c)) != NULL) {
			/* The input stays watched for the job this line may
			 * run (watch_client), unless it has ended. */
			bool reading = !c->eof && c->broken == 0;

			c->watch.fds[0] = (struct pollfd){
				.fd = reading || c->sock ? c->in : -1,
				.events = reading ? POLLIN : 0};
			c->watch.fds[1] = (struct pollfd){
				.fd = c->out != c->in ? c->out : -1};
			jobrun_cancel_reset();
			e = handle_line(sv, c, l->text, l->len, l->fds,
					l->nfds);
			/* rpc_handle closed them */
			l->nfds = 0;
			line_free(l);
			if (e < 0) {
				log_error("cannot write an answer: %s",
					  strerror(-e));
				return CONN_BROKEN;
			}
			if (jobrun_interrupted())
				return CONN_INTERRUPTED;
		}
		if (c->broken == -EMSGSIZE) {
			char *line = rpc_error_line(RPC_PARSE_ERROR,
				"parse error: a line is longer than "
				"16 MiB; the session ends");

			log_error("a request line is longer than %u bytes: "
				  "the session ends", RPC_MAX_LINE);
			if (line != NULL) {
				size_t k = strlen(line);

				line[k] = '\n';
				(void)write_all(c->out, line, k + 1);
			}
			free(line);
		}
		if (c->broken != 0)
			return CONN_BROKEN;
		if (c->eof)
			return CONN_EOF;
		if ((e = wait_readable(sv, c->in)) <= 0) {
			if (e < 0)
				log_error("cannot read a request: %s",
					  strerror(-e));
			return e == 0 ? CONN_INTERRUPTED : CONN_BROKEN;
		}
		/* Its errors end the connection once the lines before
		 * are answered (C->broken). */
		(void)conn_fill(c);
	}
}

static void
conn_free(struct conn *c)
{
	struct line *l;

	while ((l = queue_pop(c)) != NULL)
		line_free(l);
	if (c->sv != NULL && c->sv->rpc.sup != NULL)
		c->sv->rpc.sup->watch = NULL;
	fds_close(c->pending, &c->npending);
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
}

static bool
is_unix_socket(int fd)
{
	struct stat st;
	int domain;
	socklen_t len = sizeof(domain);

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
	       domain == AF_UNIX;
}

/* The listening socket of --socket PATH and what is needed to remove
 * exactly it at the end. */
struct listener {
	int fd;
	int dirfd;              /* the directory of PATH, O_PATH */
	char *base;             /* PATH's last component */
	dev_t dev;
	ino_t ino;
};

/*
 * Binds a unix stream socket at PATH with mode 0600 (umask 0177 around
 * bind: the mode of a socket file is what the umask leaves), refusing an
 * existing PATH (bind fails with EADDRINUSE: nothing is removed first).
 * Returns 0 or an exit status after complaining.
 */
static int
listen_at(struct listener *l, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = NULL;
	struct stat st;
	mode_t um;
	int e;

	l->fd = l->dirfd = -1;
	l->base = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_error("--socket: %s: longer than %zu bytes", path,
			  sizeof(sa.sun_path) - 1);
		return EXIT_USAGE;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (slash == NULL)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	l->base = strdup(slash != NULL ? slash + 1 : path);
	if (dir == NULL || l->base == NULL) {
		log_error("out of memory");
		return EXIT_SANDBOX;
	}
	if (l->base[0] == '\0') {
		log_error("--socket: %s: expected a file name", path);
		return EXIT_USAGE;
	}
	if ((l->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		log_error("--socket: %s: %s", dir, strerror(errno));
		return EXIT_USAGE;
	}
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0) {
		log_error("socket: %s", strerror(errno));
		return EXIT_SANDBOX;
	}
	um = umask(0177);
	e = bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
	umask(um);
	if (e != 0) {
		log_error("--socket: %s: %s", path, e == EADDRINUSE ?
			  "exists; remove it or choose another path" :
			  strerror(e));
		close(l->fd);
		l->fd = -1;
		return EXIT_USAGE;
	}
	if (fstatat(l->dirfd, l->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		l->dev = st.st_dev;
		l->ino = st.st_ino;
	}
	if (listen(l->fd, 4) < 0) {
		log_error("listen: %s", strerror(errno));
		return EXIT_SANDBOX;
	}
	return 0;
}

/* Closes L and removes its socket file, if it is still the one bound. */
static void
listener_close(struct listener *l)
{
	struct stat st;

	if (l->fd >= 0) {
		close(l->fd);
		if (fstatat(l->dirfd, l->base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISSOCK(st.st_mode) && st.st_dev == l->dev &&
		    st.st_ino == l->ino)
			(void)unlinkat(l->dirfd, l->base, 0);
	}
	if (l->dirfd >= 0)
		close(l->dirfd);
	free(l->base);
	l->fd = l->dirfd = -1;
	l->base = NULL;
}

/* Serves clients of L one at a time until a signal. Returns 0 or an exit
 * status. */
static int
serve_socket(struct server *sv, struct listener *l)
{
	struct ucred cred;
	socklen_t clen;
	int fd, e;

	for (;;) {
		struct conn c = {.sock = true};

		if ((e = wait_readable(sv, l->fd)) < 0) {
			log_error("cannot wait for a client: %s", strerror(-e));
			return EXIT_SANDBOX;
		}
		if (e == 0 && jobrun_interrupted())
			return 0;
		fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ECONNABORTED)
				continue;
			log_error("accept: %s", strerror(errno));
			return EXIT_SANDBOX;
		}
		/* The socket is 0600, so only our user (or root) can
		 * connect; checked again on the peer's credentials in case
		 * the directory let someone in before the mode was set. */
		clen = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
		    (cred.uid != geteuid() && cred.uid != 0)) {
			log_warn("refused a client of uid %ld",
				 (long)cred.uid);
			close(fd);
			continue;
		}
		c.in = c.out = fd;
		(void)serve_conn(sv, &c);
		sv->rpc.client_fd = -1;
		conn_free(&c);
		close(fd);
		if (jobrun_interrupted())
			return 0;
	}
}

/* Refuses, for COMMAND, a policy only an evaluation may run (commands.h,
 * session_prepare). Returns 0 or EXIT_USAGE, saying why. */
static int
session_policy_refused(const struct policy *pol, const char *command)
{
	char names[256];

	/* A session serves an agent: never with layers off, which only an
	 * evaluation may ask for (docs/layers.md). */
	if (policy_layers_off(pol) != 0) {
		log_error("refused: the policy switches layers off (%s): "
			  "`stockade %s` never runs such a policy (only "
			  "`stockade eval` or `stockade run "
			  "--unsafe-evaluation` do)",
			  job_layers_format(policy_layers_off(pol), names,
					    sizeof(names)), command);
		return EXIT_USAGE;
	}
	/* Nor with a bind given no Landlock rule, the other evaluation-only
	 * key ([filesystem] unsafe_ro_bind_no_landlock). */
	if (policy_unsafe_mount(pol) != NULL) {
		log_error("refused: the policy binds %s with "
			  "unsafe_ro_bind_no_landlock (no Landlock rule for "
			  "it): `stockade %s` never runs such a policy (only "
			  "`stockade eval` or `stockade run "
			  "--unsafe-evaluation` do)",
			  policy_unsafe_mount(pol)->target, command);
		return EXIT_USAGE;
	}
	return 0;
}

int
session_prepare(const char *command, const char *policy_file,
		const char *workspace, struct policy *pol,
		struct workspace *ws, struct supervisor *sup)
{
	char err[POLICY_ERR_MAX + 256];
	int rc;

	memset(pol, 0, sizeof(*pol));
	if ((rc = load_policy_or_complain(pol, policy_file)) != 0)
		return rc;
	if ((rc = session_policy_refused(pol, command)) != 0) {
		policy_clear(pol);
		return rc;
	}
	if (doctor_cached_verdict(err, sizeof(err)) < 0) {
		log_error("refused: %s", err);
		policy_clear(pol);
		return EXIT_REFUSED;
	}
	if ((rc = open_workspace_or_complain(ws, workspace)) != 0) {
		policy_clear(pol);
		return rc;
	}
	if (supervisor_init(sup, err, sizeof(err)) < 0) {
		log_error("%s", err);
		(void)workspace_close(ws, false);
		policy_clear(pol);
		return EXIT_SANDBOX;
	}
	/* Sessions keep warm jails; `stockade run` does not. */
	sup->pool_size = pol->pool_size;
	return 0;
}

int
session_confine(struct supervisor *sup, const struct confine_rule *rules,
		size_t nrules)
{
	int e;

	if ((e = supervisor_use_spawner(sup)) < 0) {
		log_error("cannot start the launcher spawner: %s", strerror(-e));
		return EXIT_SANDBOX;
	}
	return confine_or_complain(rules, nrules);
}

int
cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{"policy", required_argument, NULL, 'p'},
		{"workspace", required_argument, NULL, 'w'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *policy_file = NULL, *workspace = NULL, *socket_path = NULL;
	struct listener l = {.fd = -1, .dirfd = -1};
	struct server sv;
	struct policy pol;
	struct workspace ws;
	struct supervisor sup;
	sigset_t block;
	int c, rc, e;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': policy_file = optarg; break;
		case 'w': workspace = optarg; break;
		case 's': socket_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (workspace == NULL || optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((rc = session_prepare("serve", policy_file, workspace, &pol, &ws,
				  &sup)) != 0)
		return rc;
	if (socket_path != NULL && (rc = listen_at(&l, socket_path)) != 0)
		goto out;

	/*
	 * Everything host-side is open: the workspace (ws.fd), the socket
	 * (l.fd) and its directory (l.dirfd). From here on the broker gets
	 * launchers from a spawner (it cannot exec one itself) and confines
	 * itself: every right beneath the workspace, and in the socket's
	 * directory only the removal of the socket at the end (confine.h;
	 * docs/decisions.md, "The confined broker gets launchers from an
	 * unconfined spawner").
	 */
	{
		struct confine_rule rules[2] = {
			{.fd = ws.fd, .access = CONFINE_ALL},
			{.fd = l.dirfd,
			 .access = LANDLOCK_ACCESS_FS_REMOVE_FILE},
		};

		if ((rc = session_confine(&sup, rules,
					  l.dirfd >= 0 ? 2 : 1)) != 0)
			goto out;
	}

	/* The signals are caught for the whole session and let in only
	 * while waiting or handling a request (top of this file). */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &sv.waitmask);
	sigdelset(&sv.waitmask, SIGINT);
	sigdelset(&sv.waitmask, SIGTERM);
	sigdelset(&sv.waitmask, SIGHUP);
	jobrun_catch_signals();
	/* A transfer blocked on a descriptor (fs.read into a pipe nobody
	 * reads, fs.write from one that never ends) stops at the signal:
	 * the handler has no SA_RESTART, so the blocked call returns EINTR,
	 * and the copy asks jobrun whether to go on (fsapi.h). */
	fsapi_set_interrupted(jobrun_interrupted);
	rpc_session_init(&sv.rpc, ws.fd, &pol, &sup);
	if (l.fd >= 0) {
		rc = serve_socket(&sv, &l);
	} else {
		struct conn conn = {.in = 0, .out = 1,
				    .sock = is_unix_socket(0)};

		rc = serve_conn(&sv, &conn) == CONN_BROKEN ? EXIT_SESSION : 0;
		conn_free(&conn);
	}
	/* The signals stay blocked to the end: one more now must not cut
	 * the clean-up short (the socket file, the launcher). */
	rpc_session_free(&sv.rpc);
out:
	listener_close(&l);
	supervisor_free(&sup);
	if ((e = workspace_close(&ws, true)) < 0)
		log_warn("could not close the workspace %s: %s", ws.path,
			 strerror(-e));
	policy_clear(&pol);
	return rc;
}
