/*
 * handover.c: the exec block a warm jail's init sends its waiting
 * payload (handover.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "handover.h"

int
handover_buf_init(struct handover_buf *hb)
{
	hb->bytes = malloc(HANDOVER_MAX_BYTES);
	hb->argv = calloc(JOB_MAX_ARGS + 1, sizeof(*hb->argv));
	hb->envp = calloc(JOB_MAX_ENV + 1, sizeof(*hb->envp));
	return hb->bytes != NULL && hb->argv != NULL && hb->envp != NULL
	    ? 0
	    : -ENOMEM;
}

/* Appends the N strings V, each with its NUL, at *AT in BUF (SIZE
 * bytes). Returns 0 or -EMSGSIZE. */
static int
put_strings(uint8_t *buf, size_t size, size_t *at, char *const *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		size_t len = strlen(v[i]) + 1;

		if (len > size - *at)
			return -EMSGSIZE;
		memcpy(buf + *at, v[i], len);
		*at += len;
	}
	return 0;
}

/* Sends LEN bytes of BUF on SOCK with FD (or none) by SCM_RIGHTS. */
static int
send_block(int sock, const uint8_t *buf, size_t len, int fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = {(void *)(uintptr_t)buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = sizeof(ctl.b);
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(&ctl.h), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int
handover_send(int sock, const struct job_spec *job, int stdin_fd)
{
	uint8_t *buf;
	size_t at = 2 * sizeof(uint32_t);
	uint32_t counts[2] = {job->argc, job->envc};
	int e;

	if (job->argc > JOB_MAX_ARGS || job->envc > JOB_MAX_ENV)
		return -EMSGSIZE;
	if ((buf = malloc(HANDOVER_MAX_BYTES)) == NULL)
		return -ENOMEM;
	memcpy(buf, counts, sizeof(counts));
	e = put_strings(buf, HANDOVER_MAX_BYTES, &at, job->argv, job->argc);
	if (e == 0)
		e = put_strings(buf, HANDOVER_MAX_BYTES, &at, job->envp,
		    job->envc);
	if (e == 0)
		e = send_block(sock, buf, at, stdin_fd);
	free(buf);
	return e;
}

/* Points V[0, N) at the next N strings of BUF from *AT (LEN bytes in
 * all), V[N] at NULL. Returns 0, or -EBADMSG for a string without its
 * NUL. */
static int
take_strings(uint8_t *buf, size_t len, size_t *at, char **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *nul = memchr(buf + *at, 0, len - *at);

		if (nul == NULL)
			return -EBADMSG;
		v[i] = (char *)(buf + *at);
		*at = (size_t)(nul - buf) + 1;
	}
	v[n] = NULL;
	return 0;
}

/* The descriptors in MH's control data: the one into *FD when exactly
 * one came as SCM_RIGHTS; any others closed. Returns 0 or -EBADMSG. */
static int
take_fd(struct msghdr *mh, int *fd)
{
	int got = 0;

	*fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL;
	     c = CMSG_NXTHDR(mh, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int one;

			memcpy(&one, CMSG_DATA(c) + i * sizeof(int),
			    sizeof(int));
			if (got++ == 0)
				*fd = one;
			else
				close(one);
		}
	}
	if (got > 1) {
		close(*fd);
		*fd = -1;
		return -EBADMSG;
	}
	return 0;
}

int
handover_recv(int sock, struct handover_buf *hb, char ***argv, char ***envp,
    int *stdin_fd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = {hb->bytes, HANDOVER_MAX_BYTES};
	struct msghdr mh = {.msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = ctl.b,
	    .msg_controllen = sizeof(ctl.b)};
	uint32_t counts[2];
	size_t at = sizeof(counts);
	ssize_t n;
	int e;

	*stdin_fd = -1;
	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n == 0 ? 0 : -errno;
	e = take_fd(&mh, stdin_fd);
	if (e == 0 &&
	    ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
		(size_t)n < sizeof(counts)))
		e = -EBADMSG;
	if (e == 0) {
		memcpy(counts, hb->bytes, sizeof(counts));
		if (counts[0] < 1 || counts[0] > JOB_MAX_ARGS ||
		    counts[1] > JOB_MAX_ENV)
			e = -EBADMSG;
	}
	if (e == 0)
		e = take_strings(hb->bytes, (size_t)n, &at, hb->argv,
		    counts[0]);
	if (e == 0)
		e = take_strings(hb->bytes, (size_t)n, &at, hb->envp,
		    counts[1]);
	if (e == 0 && at != (size_t)n)
		e = -EBADMSG;
	if (e < 0 && *stdin_fd >= 0) {
		close(*stdin_fd);
		*stdin_fd = -1;
	}
	*argv = hb->argv;
	*envp = hb->envp;
	return e < 0 ? e : 1;
}
