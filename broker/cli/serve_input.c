/*
 * serve_input.c: the input of a `stockade serve` connection
 * (serve_input.h): reads from standard input or a unix socket, the
 * descriptors received with SCM_RIGHTS (unix(7)) attached to the line
 * they came with, and the queue of complete lines not yet handled. What
 * a line means is rpc.c's business; when it is handled, serve.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "rpc.h"
#include "serve_input.h"

#define READ_CHUNK (64u << 10)
/* Room for SCM_MAX_FD (253, include/net/scm.h) descriptors in one
 * recvmsg: a sender within the kernel's own limit never truncates the
 * control data; what a line may carry is capped after receipt. */
#define CMSG_FDS 253

/* Adds FD to the list FDS (*N of them, at most RPC_MAX_FDS + 1 kept: one
 * more than allowed so that rpc_handle refuses the request). */
void
fds_add(int *fds, size_t *n, int fd)
{
	if (*n < RPC_MAX_FDS + 1)
		fds[(*n)++] = fd;
	else
		close(fd);
}

void
fds_close(int *fds, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		close(fds[i]);
	*n = 0;
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

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0)) {
			bad = true;
			continue;
		}
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			    sizeof(fd));
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
struct line *
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

void
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
ssize_t
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
			  "descriptors: the connection ends",
		    CMSG_FDS);
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
				 "ignored",
			    c->len);
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
