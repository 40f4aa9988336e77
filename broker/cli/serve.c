/*
 * serve.c: `stockade serve --workspace DIR [--policy FILE] [--socket
 * PATH]`, one JSON-RPC 2.0 session on one workspace (docs/protocol.md).
 *
 * This file is the transport: lines in, lines out, descriptors received
 * with SCM_RIGHTS (unix(7)) and attached to the line they came with (the
 * reading and the queue of lines are serve_input.c's). What a line means
 * is rpc.c's business.
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
#include "serve_input.h"
#include "supervisor.h"
#include "workspace.h"

#define EXIT_SESSION 1 /* the stdio session ended on a protocol error */

struct server {
	struct rpc_session rpc;
	sigset_t waitmask; /* the mask while waiting: signals let in */
};

/* Most bytes and lines queued while a job runs: past them the
 * connection is not read until the job ends. */
#define QUEUE_MAX_BYTES (2u * RPC_MAX_LINE)
#define QUEUE_MAX_LINES 4096u

enum conn_end { CONN_EOF, CONN_INTERRUPTED, CONN_BROKEN };

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: stockade serve --workspace DIR [--policy FILE] "
	    "[--socket PATH]\n");
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
		resp[n] = '\n'; /* over the NUL; written by length */
		e = write_all(c->out, resp, n + 1);
	} else if (e == -ENOMEM) {
		/* No memory to build the answer: one that needs none, so
		 * that the client is never left waiting (its id is not
		 * known here: -32603 with a null id, docs/protocol.md). */
		static const char oom[] =
		    "{\"jsonrpc\":\"2.0\",\"id\":null,"
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
	if (!c->sock &&
	    (c->eof || c->broken != 0 || (in->revents & (POLLHUP | POLLERR))))
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

			c->watch.fds[0] =
			    (struct pollfd){.fd = reading || c->sock ? c->in
								     : -1,
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
				  "the session ends",
			    RPC_MAX_LINE);
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
	int dirfd; /* the directory of PATH, O_PATH */
	char *base; /* PATH's last component */
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
		log_error("--socket: %s: %s", path,
		    e == EADDRINUSE ? "exists; remove it or choose another path"
				    : strerror(e));
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
			log_warn("refused a client of uid %ld", (long)cred.uid);
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

/*
 * Everything host-side is open: the workspace (WSFD), the socket and its
 * directory (DIRFD, or -1 without --socket). From here on the broker gets
 * launchers from a spawner (it cannot exec one itself) and confines
 * itself: every right beneath the workspace, and in the socket's
 * directory only the removal of the socket at the end (confine.h;
 * docs/decisions.md, "The confined broker gets launchers from an
 * unconfined spawner"). Returns 0 or an exit status (session_confine).
 */
static int
serve_confine(struct supervisor *sup, int wsfd, int dirfd,
    const struct ckpt_dir *cd)
{
	struct confine_rule rules[4] = {{.fd = wsfd, .access = CONFINE_ALL}};
	size_t n = 1;

	if (dirfd >= 0)
		rules[n++] = (struct confine_rule){dirfd,
		    LANDLOCK_ACCESS_FS_REMOVE_FILE};
	/* The checkpoint store (checkpoint.h): all of it, and its removal
	 * from $TMPDIR at the end, as `stockade mcp`'s temporary
	 * workspace. */
	if (cd->fd >= 0) {
		rules[n++] = (struct confine_rule){cd->fd, CONFINE_ALL};
		rules[n++] = (struct confine_rule){cd->parent_fd,
		    LANDLOCK_ACCESS_FS_REMOVE_DIR};
	}
	return session_confine(sup, rules, n);
}

/* The options of `stockade serve`. */
static const struct option serve_options[] = {
    {"policy", required_argument, NULL, 'p'},
    {"workspace", required_argument, NULL, 'w'},
    {"socket", required_argument, NULL, 's'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int
cmd_serve(int argc, char **argv)
{
	const char *policy_file = NULL, *workspace = NULL, *socket_path = NULL;
	struct listener l = {.fd = -1, .dirfd = -1};
	struct ckpt_dir cd = {-1, -1, ""};
	struct server sv;
	struct policy pol;
	struct workspace ws;
	struct supervisor sup;
	struct egress_proxy px;
	int c, rc, e;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", serve_options, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy_file = optarg;
			break;
		case 'w':
			workspace = optarg;
			break;
		case 's':
			socket_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (workspace == NULL || optind != argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if ((rc = session_prepare("serve", policy_file, workspace, &pol, &ws,
		 &sup, &px)) != 0)
		return rc;
	if (socket_path != NULL && (rc = listen_at(&l, socket_path)) != 0)
		goto out;

	session_ckpt_dir(&pol, &cd);
	if ((rc = serve_confine(&sup, ws.fd, l.dirfd, &cd)) != 0)
		goto out;

	/* The signals are caught for the whole session and let in only
	 * while waiting or handling a request (top of this file). */
	session_block_end_signals(&sv.waitmask);
	jobrun_catch_signals();
	/* A blocked transfer stops at the signal: no SA_RESTART, so the
	 * call returns EINTR and the copy asks jobrun (fsapi.h). */
	fsapi_set_interrupted(jobrun_interrupted);
	rpc_session_init(&sv.rpc, ws.fd, &pol, &sup);
	rpc_session_take_ckpt_dir(&sv.rpc, &cd);
	sv.rpc.proxy = policy_has_network(&pol) ? &px : NULL;
	if (l.fd >= 0) {
		rc = serve_socket(&sv, &l);
	} else {
		struct conn conn = {.in = 0,
		    .out = 1,
		    .sock = is_unix_socket(0)};

		rc = serve_conn(&sv, &conn) == CONN_BROKEN ? EXIT_SESSION : 0;
		conn_free(&conn);
	}
	/* The signals stay blocked to the end: one more now must not cut
	 * the clean-up short (the socket file, the launcher). */
	rpc_session_free(&sv.rpc);
out:
	ckpt_dir_remove(&cd);
	listener_close(&l);
	supervisor_free(&sup);
	egress_proxy_stop(&px);
	if ((e = workspace_close(&ws, true)) < 0)
		log_warn("could not close the workspace %s: %s", ws.path,
		    strerror(-e));
	policy_clear(&pol);
	return rc;
}
