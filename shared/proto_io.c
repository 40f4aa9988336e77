/* proto_io.c: sending and receiving one datagram with its descriptors
 * (proto.h: proto_send, proto_recv, proto_send_fds, proto_recv_fds). */
#include "proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
proto_send_fds(int sock, const uint8_t *msg, size_t len, const int *fds,
    size_t nfds)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)msg, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int) * PROTO_IO_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (nfds > PROTO_IO_MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

int
proto_send(int sock, const uint8_t *msg, size_t len, int fd)
{
	return proto_send_fds(sock, msg, len, &fd, fd >= 0 ? 1 : 0);
}

static void
close_all(int *fds, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		close(fds[i]);
	*n = 0;
}

/* Takes the descriptors carried by the control messages of MH into FDS
 * (MAX at most, *N of them); any beyond MAX, or a control message that is
 * not SCM_RIGHTS, closes them all and is -EBADMSG. */
static int
collect_fds(struct msghdr *mh, int *fds, size_t max, size_t *n)
{
	bool bad = false;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = true;
			continue;
		}
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*n < max)
				fds[(*n)++] = f;
			else {
				close(f);
				bad = true;
			}
		}
	}
	if (bad) {
		close_all(fds, n);
		return -EBADMSG;
	}
	return 0;
}

int
proto_recv_fds_max(int sock, uint8_t *buf, size_t cap, int *fds, size_t maxfds,
    size_t *nfds)
{
	/* Never more than CAP, whatever the buffer: a longer datagram is
	 * MSG_TRUNC, so a bigger buffer cannot raise the cap (rule 4). */
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	union {
		/* Room for more than we accept, so extras are seen and closed. */
		char buf[CMSG_SPACE(sizeof(int) * 2 * PROTO_IO_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = u.buf,
	    .msg_controllen = sizeof(u.buf),
	};
	ssize_t n;
	int e;

	*nfds = 0;
	if (maxfds > PROTO_IO_MAX_FDS)
		return -EINVAL;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	e = collect_fds(&mh, fds, maxfds, nfds);
	if (mh.msg_flags & MSG_CTRUNC) {
		close_all(fds, nfds);
		return -EBADMSG;
	}
	if (e < 0)
		return e;
	if ((mh.msg_flags & MSG_TRUNC)) {
		close_all(fds, nfds);
		return -EMSGSIZE;
	}
	return (int)n;
}

int
proto_recv_fds(int sock, uint8_t *buf, size_t size, int *fds, size_t maxfds,
    size_t *nfds)
{
	*nfds = 0;
	if (size < PROTO_MAX_MSG)
		return -EINVAL;
	return proto_recv_fds_max(sock, buf, PROTO_MAX_MSG, fds, maxfds, nfds);
}

int
proto_recv(int sock, uint8_t *buf, size_t size, int *fd)
{
	size_t n;
	int r = proto_recv_fds(sock, buf, size, fd, 1, &n);

	if (n == 0)
		*fd = -1;
	return r;
}
