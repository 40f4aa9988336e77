/* stdin_feed.c: see stdin_feed.h. */
#include "stdin_feed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"

int
stdin_feed_init_fd(struct stdin_feed *f, int fd)
{
	memset(f, 0, sizeof(*f));
	f->src = fd;
	f->pipe_w = -1;
	f->buf = malloc(STDIN_FEED_BUF);
	return f->buf == NULL ? -ENOMEM : 0;
}

void
stdin_feed_init_data(struct stdin_feed *f, const void *data, size_t len)
{
	memset(f, 0, sizeof(*f));
	f->src = -1;
	f->pipe_w = -1;
	f->data = data;
	f->len = len;
}

int
stdin_feed_start(struct stdin_feed *f, int *read_end)
{
	int p[2];

	*read_end = -1;
	stdin_feed_stop(f);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	/* Only our end is non-blocking: the flag is the file
	 * description's, and the program's end is its own. */
	if (fcntl(p[1], F_SETFL, O_NONBLOCK) < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	f->pipe_w = p[1];
	f->doff = 0;
	f->sent = 0;
	*read_end = p[0];
	return 0;
}

/* The bytes waiting to be written, at *P. */
static size_t
pending(const struct stdin_feed *f, const uint8_t **p)
{
	if (f->src < 0) {
		*p = f->data + f->doff;
		return f->len - f->doff;
	}
	*p = f->buf + f->off;
	return f->have - f->off;
}

bool
stdin_feed_pollfd(struct stdin_feed *f, struct pollfd *p)
{
	const uint8_t *d;

	if (f->pipe_w < 0)
		return false;
	if (pending(f, &d) > 0) {
		*p = (struct pollfd){.fd = f->pipe_w, .events = POLLOUT};
		return true;
	}
	if (f->src >= 0 && !f->src_end && f->error == 0) {
		*p = (struct pollfd){.fd = f->src, .events = POLLIN};
		return true;
	}
	/* All given: the program reads end of file. */
	stdin_feed_stop(f);
	return false;
}

/* Writes what is pending until the pipe is full; false when the feeding
 * is over (the reader is gone, or another write error). */
static bool
drain(struct stdin_feed *f)
{
	const uint8_t *d;
	size_t n;
	ssize_t w;

	while ((n = pending(f, &d)) > 0) {
		w = write(f->pipe_w, d, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return true;
		if (w <= 0)
			return false;
		f->sent += (uint64_t)w;
		if (f->src < 0)
			f->doff += (size_t)w;
		else
			f->off += (size_t)w;
	}
	f->off = f->have = 0;
	return true;
}

void
stdin_feed_step(struct stdin_feed *f, const struct pollfd *p)
{
	ssize_t n;

	if (f->pipe_w < 0 || p->revents == 0)
		return;
	if (p->fd == f->pipe_w) {
		/* POLLERR: the reader is gone; the write says so (EPIPE,
		 * SIGPIPE being ignored by the broker: main.c). */
		if (!drain(f))
			stdin_feed_stop(f);
		return;
	}
	/* POLLIN or POLLHUP (end of file, or data before it): one read,
	 * which poll said would not block. A non-blocking source may
	 * still say EAGAIN (another reader took the data). */
	n = read(f->src, f->buf, STDIN_FEED_BUF);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n < 0) {
		f->error = errno;
		stdin_feed_stop(f);
		return;
	}
	if (n == 0) {
		f->src_end = true;
		return;
	}
	f->off = 0;
	f->have = (size_t)n;
	if (!drain(f))
		stdin_feed_stop(f);
}

void
stdin_feed_stop(struct stdin_feed *f)
{
	close_fdp(&f->pipe_w);
}

bool
stdin_feed_restartable(const struct stdin_feed *f)
{
	return f->src < 0 || f->sent == 0;
}

void
stdin_feed_free(struct stdin_feed *f)
{
	stdin_feed_stop(f);
	free(f->buf);
	memset(f, 0, sizeof(*f));
	f->src = f->pipe_w = -1;
}
