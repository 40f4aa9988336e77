/*
 * notify.c: the supervisor's reader of a jail's notify socket (the
 * notify channel of shared/wire.h; monitor_internal.h, job_notify_read).
 * Three messages come there, in this order, each at most once:
 *   WIRE_NET_SOCKETS       from jail init, for a job with a proxy port
 *                          only (issue 25): the proxy's listener and the
 *                          packet socket, checked here and forwarded to
 *                          the broker as PROTO_NET, our copies closed;
 *   WIRE_STAGE             from jail init, for a job with a stage
 *                          (job_spec_staged; issue 26): the root of the job's stage
 *                          tmpfs, checked and forwarded as PROTO_STAGE,
 *                          our copy closed;
 *   WIRE_SECCOMP_LISTENER  from the payload, with layer seccomp on: the
 *                          filter's listener, kept for denials.c.
 * Anything else, or either out of its place, fails the job closed: the
 * caller kills the jail.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "launcher.h"
#include "log.h"
#include "monitor_internal.h"

/* The int socket option OPT of FD at level SOL_SOCKET, or -1. */
static int
sockopt_int(int fd, int opt)
{
	int v = -1;
	socklen_t n = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &n) < 0 || n != sizeof(v))
		return -1;
	return v;
}

/* Whether FD is a socket of DOMAIN and TYPE. */
static bool
socket_of(int fd, int domain, int type)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    sockopt_int(fd, SO_DOMAIN) == domain &&
	    sockopt_int(fd, SO_TYPE) == type;
}

bool
job_net_sockets_ok(int listener, int packet, uint16_t port)
{
	struct sockaddr_in a;
	socklen_t n = sizeof(a);

	if (!socket_of(listener, AF_INET, SOCK_STREAM) ||
	    sockopt_int(listener, SO_ACCEPTCONN) != 1 ||
	    !socket_of(packet, AF_PACKET, SOCK_DGRAM))
		return false;
	memset(&a, 0, sizeof(a));
	return getsockname(listener, (struct sockaddr *)&a, &n) == 0 &&
	    n == sizeof(a) && a.sin_family == AF_INET &&
	    a.sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
	    ntohs(a.sin_port) == port;
}

/* WIRE_NET_SOCKETS (M, its descriptors FDS, ours to close): checked,
 * then sent to the broker as PROTO_NET. 0 or a negative errno. */
static int
forward_net(struct launcher *l, const struct job_spec *spec,
    struct job_state *s, const struct wire_msg *m, const int *fds)
{
	int pair[2] = {wire_fd(m, fds, WIRE_FD_PROXY_LISTENER),
	    wire_fd(m, fds, WIRE_FD_PACKET)};
	uint8_t buf[PROTO_HEADER_SIZE + 8];
	int n;

	if (spec->proxy_port == 0 || s->net_sent || s->den.listener >= 0 ||
	    m->body_len != 2 ||
	    (uint16_t)(m->body[0] | m->body[1] << 8) != spec->proxy_port ||
	    !job_net_sockets_ok(pair[0], pair[1], spec->proxy_port))
		return -EPROTO;
	if ((n = proto_encode_net(buf, sizeof(buf), spec->job_id)) < 0)
		return n;
	if ((n = proto_send_fds(l->ipc, buf, (size_t)n, pair, 2)) < 0)
		return n;
	s->net_sent = true;
	return 0;
}

/* Whether FD is the root of a stage: a directory of a tmpfs, open for
 * reading (not O_PATH), as stage.c sends it. */
static bool
stage_ok(int fd)
{
	struct statfs sf;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_PATH) == 0 && (fl & O_ACCMODE) == O_RDONLY &&
	    fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) &&
	    fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* The file system type of FD (fstatfs(2)), or 0. */
static long
fs_type_of(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 ? (long)sf.f_type : 0;
}

/* WIRE_STAGE (M; its descriptor FD and the jail's mount namespace MNT_NS
 * or -1, the caller's to close): for SPEC's
 * job with a stage (job_spec_staged), once, after the proxy's sockets;
 * checked, then sent to the broker as PROTO_STAGE with the token M
 * carries; a duplicate of MNT_NS kept in S->mnt_ns. 0 or a negative
 * errno. */
static int
forward_stage(struct launcher *l, const struct job_spec *spec,
    struct job_state *s, const struct wire_msg *m, int fd, int mnt_ns)
{
	uint8_t buf[PROTO_HEADER_SIZE + 8 + PROTO_STAGE_TOKEN_BYTES];
	int n;

	if (!job_spec_staged(spec) || s->stage_sent || s->den.listener >= 0 ||
	    (spec->proxy_port != 0 && !s->net_sent) ||
	    m->body_len != PROTO_STAGE_TOKEN_BYTES || !stage_ok(fd))
		return -EPROTO;
	if ((n = proto_encode_stage(buf, sizeof(buf), spec->job_id, m->body)) <
	    0)
		return n;
	if ((n = proto_send_fds(l->ipc, buf, (size_t)n, &fd, 1)) < 0)
		return n;
	s->stage_sent = true;
	/* The jail's mount namespace, held until RESULT is sent (wire.h,
	 * WIRE_FD_MNT_NS); only a namespace file is kept. */
	if (mnt_ns >= 0 && s->mnt_ns < 0 && fs_type_of(mnt_ns) == NSFS_MAGIC)
		s->mnt_ns = fcntl(mnt_ns, F_DUPFD_CLOEXEC, 3);
	return 0;
}

/* WIRE_SECCOMP_LISTENER: the listener FD kept in S's denial log, once,
 * and after the proxy's sockets when the job has a port, after the stage
 * when it has one. */
static int
take_listener(const struct job_spec *spec, struct job_state *s, int fd)
{
	if (s->den.listener >= 0 || (spec->proxy_port != 0 && !s->net_sent) ||
	    (job_spec_staged(spec) && !s->stage_sent))
		return -EPROTO;
	s->den.listener = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return s->den.listener < 0 ? -errno : 0;
}

int
job_notify_read(struct launcher *l, const struct job_spec *spec,
    struct job_state *s)
{
	uint8_t buf[WIRE_HEADER_SIZE + PROTO_STAGE_TOKEN_BYTES + 16];
	int fds[WIRE_MAX_FDS];
	struct wire_msg m;
	int n, e;

	n = wire_recv(s->jail.notify_sock, buf, sizeof(buf), fds, WIRE_MAX_FDS,
	    &m);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return 0;
	if (n == 0) {
		s->notify_eof = true;
		return 0;
	}
	if (n < 0)
		return n;
	if (m.type == WIRE_NET_SOCKETS)
		e = forward_net(l, spec, s, &m, fds);
	else if (m.type == WIRE_STAGE)
		e = forward_stage(l, spec, s, &m,
		    wire_fd(&m, fds, WIRE_FD_STAGE),
		    wire_fd(&m, fds, WIRE_FD_MNT_NS));
	else if (m.type == WIRE_SECCOMP_LISTENER)
		e = take_listener(spec, s,
		    wire_fd(&m, fds, WIRE_FD_SECCOMP_LISTENER));
	else
		e = -EPROTO;
	for (size_t i = 0; i < m.nfds; i++)
		close(fds[i]);
	if (e < 0)
		log_error("the jail's notify socket: %s %s",
		    wire_msg_desc(m.type) ? wire_msg_desc(m.type)->name : "?",
		    strerror(-e));
	return e < 0 ? e : 1;
}

void
job_notify_drain(struct launcher *l, const struct job_spec *spec,
    struct job_state *s)
{
	/* At most the three messages of the channel. */
	for (int i = 0; i < 3 && !s->notify_eof; i++)
		if (job_notify_read(l, spec, s) <= 0)
			break;
}
