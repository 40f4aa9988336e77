/* proto_io.c: sending and receiving one datagram with its descriptor
 * (proto.h: proto_send, proto_recv). */
#include "proto.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
proto_send(int sock, const uint8_t *msg, size_t len, int fd)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)msg, .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
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

/* Closes every descriptor carried by the control messages of MH. */
static int
collect_fds(struct msghdr *mh, int *fd)
{
	int count = 0, bad = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
			bad = 1;
			continue;
		}
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (count == 0 && *fd < 0)
				*fd = f;
			else
				close(f);
			count++;
		}
	}
	if (bad || count > (int)PROTO_MAX_FDS) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EBADMSG;
	}
	return 0;
}

int
proto_recv(int sock, uint8_t *buf, size_t size, int *fd)
{
	/* Never more than PROTO_MAX_MSG, whatever SIZE: a longer datagram is
	 * MSG_TRUNC, so a bigger buffer cannot raise the cap (rule 4). */
	struct iovec iov = {.iov_base = buf, .iov_len = PROTO_MAX_MSG};
	union {
		/* Room for more than we accept, so extras are seen and closed. */
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	ssize_t n;
	int e;

	*fd = -1;
	if (size < PROTO_MAX_MSG)
		return -EINVAL;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	e = collect_fds(&mh, fd);
	if (mh.msg_flags & MSG_CTRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EBADMSG;
	}
	if (e < 0)
		return e;
	if (mh.msg_flags & MSG_TRUNC) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EMSGSIZE;
	}
	return (int)n;
}
