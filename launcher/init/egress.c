/*
 * egress.c: jail init's side of controlled egress (issue 25;
 * init_internal.h): in the jail's own network namespace, while init still
 * holds CAP_NET_ADMIN and CAP_NET_RAW in the user namespace that owns it,
 *   - a TCP listener at 127.0.0.1:PORT for the broker's egress proxy;
 *   - every other address made local to lo (AnyIP: "local 0.0.0.0/0 dev
 *     lo table local" and "local ::/0 dev lo table local", rtnetlink(7)),
 *     so that a direct connect(2) anywhere is refused at once by lo's RST
 *     (ECONNREFUSED) and a UDP datagram anywhere gets lo's ICMP port
 *     unreachable (ECONNREFUSED on the next receive): no timeouts;
 *   - an AF_PACKET socket on lo (packet(7)) whose locked classic BPF
 *     filter passes only what the jail sends out: TCP segments with SYN
 *     set and ACK clear, and UDP datagrams, IPv4 or IPv6; the proxy reads
 *     there what the job tried to reach directly.
 * Both descriptors go to the launcher's supervisor on the notify socket
 * (WIRE_NET_SOCKETS, shared/wire.h), which forwards them to the broker
 * (PROTO_NET). Nothing here forwards a byte: the jail runs no relay.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init_internal.h"
#include "wire.h"

/* One RTM_NEWROUTE request: its header, the route and RTA_OIF. */
struct route_req {
	struct nlmsghdr nh;
	struct rtmsg rt;
	struct rtattr oif_attr;
	uint32_t oif;
};

/* Reads the kernel's answer to request SEQ on the netlink socket FD: its
 * NLMSG_ERROR. Returns 0 (an ack) or the negative errno it carries. */
static int
netlink_ack(int fd, uint32_t seq)
{
	union {
		struct nlmsghdr nh;
		char buf[1024];
	} u;
	ssize_t n;

	do
		n = recv(fd, u.buf, sizeof(u.buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n < NLMSG_LENGTH(sizeof(struct nlmsgerr)) ||
	    u.nh.nlmsg_type != NLMSG_ERROR || u.nh.nlmsg_seq != seq)
		return -EPROTO;
	return ((const struct nlmsgerr *)NLMSG_DATA(&u.nh))->error;
}

/*
 * Adds "local ADDR/0 dev IFINDEX table local" for FAMILY (AF_INET or
 * AF_INET6) on the NETLINK_ROUTE socket FD (rtnetlink(7), as `ip route
 * add local 0.0.0.0/0 dev lo table local` sends it). 0 or -errno.
 */
static int
add_local_default(int fd, int family, unsigned ifindex, uint32_t seq)
{
	struct route_req r;

	memset(&r, 0, sizeof(r));
	r.nh.nlmsg_len = sizeof(r);
	r.nh.nlmsg_type = RTM_NEWROUTE;
	r.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
	    NLM_F_EXCL;
	r.nh.nlmsg_seq = seq;
	r.rt.rtm_family = (unsigned char)family;
	r.rt.rtm_dst_len = 0;
	r.rt.rtm_table = RT_TABLE_LOCAL;
	r.rt.rtm_protocol = RTPROT_BOOT;
	r.rt.rtm_scope = RT_SCOPE_HOST;
	r.rt.rtm_type = RTN_LOCAL;
	r.oif_attr.rta_len = RTA_LENGTH(sizeof(uint32_t));
	r.oif_attr.rta_type = RTA_OIF;
	r.oif = ifindex;
	if (send(fd, &r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -errno;
	return netlink_ack(fd, seq);
}

int
jail_egress_routes(void)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	unsigned lo = if_nametoindex("lo");
	int fd, e;

	if (lo == 0)
		return -errno;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		e = -errno;
	else if ((e = add_local_default(fd, AF_INET, lo, 1)) == 0)
		e = add_local_default(fd, AF_INET6, lo, 2);
	close(fd);
	return e;
}

/* A socket(2) of DOMAIN, TYPE (close-on-exec, non-blocking) and PROTO,
 * numbered above the standard streams init has closed. The descriptor,
 * or a negative errno. */
static int
socket_above_stdio(int domain, int type, int proto)
{
	int fd = socket(domain, type | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);

	return above_stdio(fd < 0 ? -errno : fd, F_DUPFD_CLOEXEC);
}

int
jail_egress_listener(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	    .sin_port = htons(port),
	    .sin_addr = {htonl(INADDR_LOOPBACK)}};
	int fd, e;

	fd = socket_above_stdio(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return fd;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, JAIL_EGRESS_BACKLOG) < 0) {
		e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/* The filter's verdicts: drop, or keep the first JAIL_EGRESS_SNAP bytes. */
#define DROP BPF_STMT(BPF_RET | BPF_K, 0)
#define KEEP BPF_STMT(BPF_RET | BPF_K, JAIL_EGRESS_SNAP)
#define TCP_SYN 0x02
#define TCP_ACK 0x10

/*
 * The packet socket's program (classic BPF, filter(2) of socket(7)): for
 * a SOCK_DGRAM packet socket the packet starts at its network header,
 * and the ancillary loads give the packet type and skb->protocol.
 */
/* Not const: struct sock_fprog points to a mutable array. */
static struct sock_filter egress_prog[] = {
    /* 0: only what the jail sends (PACKET_OUTGOING), never lo's echo */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 1, 0),
    DROP,
    /* 3 */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 10, 0),
    DROP,
    /* 7: IPv4: UDP kept; TCP's first fragment read for its flags */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 13, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 1, 0),
    DROP,
    /* 11 */
    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 6),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, 10, 0),
    BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),
    BPF_STMT(BPF_LD | BPF_B | BPF_IND, 13),
    BPF_JUMP(BPF_JMP | BPF_JA, 4, 0, 0),
    /* 16: IPv6, without extension headers */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 6),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 4, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 0, 4),
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 40 + 13),
    /* 20: the TCP flags in A: SYN without ACK */
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, TCP_SYN | TCP_ACK),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TCP_SYN, 0, 1),
    /* 22 */
    KEEP,
    DROP,
};

void
jail_egress_filter(struct sock_fprog *prog)
{
	prog->len = (unsigned short)(sizeof(egress_prog) /
	    sizeof(egress_prog[0]));
	prog->filter = egress_prog;
}

/* The filter attached to FD and locked (SO_LOCK_FILTER: nobody who gets
 * the socket may change or remove it), the receive buffer bounded. */
static int
packet_setup(int fd)
{
	struct sock_fprog prog;
	int one = 1, rcvbuf = JAIL_EGRESS_RCVBUF;

	jail_egress_filter(&prog);
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) <
		0 ||
	    setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
		return -errno;
	return 0;
}

int
jail_egress_packet_socket(void)
{
	struct sockaddr_ll ll = {.sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_ALL)};
	int fd, e;

	if ((ll.sll_ifindex = (int)if_nametoindex("lo")) == 0)
		return -errno;
	/* Protocol 0: the socket takes no packet until it is bound, which
	 * is after its filter is attached (packet(7)). */
	fd = socket_above_stdio(AF_PACKET, SOCK_DGRAM, 0);
	if (fd < 0)
		return fd;
	if ((e = packet_setup(fd)) == 0 &&
	    bind(fd, (struct sockaddr *)&ll, sizeof(ll)) < 0)
		e = -errno;
	if (e < 0) {
		close(fd);
		return e;
	}
	return fd;
}

int
jail_egress_make(uint16_t port, int *listener, int *packet)
{
	int e;

	*listener = *packet = -1;
	if (port == 0)
		return -EINVAL;
	if ((e = jail_egress_routes()) < 0)
		return e;
	if ((*listener = jail_egress_listener(port)) < 0) {
		e = *listener;
		*listener = -1;
		return e;
	}
	if ((*packet = jail_egress_packet_socket()) < 0) {
		e = *packet;
		*packet = -1;
		close(*listener);
		*listener = -1;
		return e;
	}
	return 0;
}

int
jail_egress_send(int notify_fd, uint16_t port, int *listener, int *packet)
{
	uint8_t msg[WIRE_HEADER_SIZE + 2] = {0};
	int fds[2] = {*listener, *packet};
	int e;

	msg[WIRE_HEADER_SIZE] = (uint8_t)port;
	msg[WIRE_HEADER_SIZE + 1] = (uint8_t)(port >> 8);
	e = wire_send(notify_fd, msg, sizeof(msg), WIRE_NET_SOCKETS,
	    WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), fds);
	close(*listener);
	close(*packet);
	*listener = *packet = -1;
	return e;
}

void
jail_init_make_egress(struct init_setup *s)
{
	struct init_ctx *c = s->c;
	int e;

	if (c->spec->proxy_port == 0)
		return;
	if ((e = jail_egress_make(c->spec->proxy_port, &c->egress_listener,
		 &c->egress_packet)) < 0)
		setup_failed(c->status_fd, STAGE_EGRESS, -e);
}

void
jail_init_send_egress(struct init_ctx *c, int notify_fd)
{
	int e;

	if (c->spec->proxy_port == 0 && c->egress_listener < 0)
		return;
	if (c->spec->proxy_port == 0 || c->egress_listener < 0)
		setup_failed(c->status_fd, STAGE_EGRESS, EPROTO);
	if ((e = jail_egress_send(notify_fd, c->spec->proxy_port,
		 &c->egress_listener, &c->egress_packet)) < 0)
		setup_failed(c->status_fd, STAGE_EGRESS, -e);
}

/* The token jail_stage_build (stage.c) wrote at the stage's root
 * (proto.h, PROTO_STAGE_TOKEN), read from STAGE_ROOT (borrowed) into
 * TOKEN: 0, or a negative errno (-EPROTO for a token file that is not a
 * regular file of PROTO_STAGE_TOKEN_BYTES bytes). */
static int
stage_token(int stage_root, uint8_t token[PROTO_STAGE_TOKEN_BYTES])
{
	struct stat st;
	ssize_t n;
	int fd, e = 0;

	fd = openat(stage_root, PROTO_STAGE_TOKEN,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != PROTO_STAGE_TOKEN_BYTES)
		e = -EPROTO;
	while (e == 0 &&
	    (n = pread(fd, token, PROTO_STAGE_TOKEN_BYTES, 0)) !=
		PROTO_STAGE_TOKEN_BYTES)
		if (n >= 0 || errno != EINTR)
			e = n < 0 ? -errno : -EPROTO;
	close(fd);
	return e;
}

void
jail_init_send_stage(struct init_ctx *c, int notify_fd)
{
	uint8_t msg[WIRE_HEADER_SIZE + PROTO_STAGE_TOKEN_BYTES];
	int e, fds[2];

	if (!job_spec_staged(c->spec) && c->stage_fd < 0)
		return;
	if (c->stage_fd < 0)
		setup_failed(c->status_fd, STAGE_WORK_STAGE, EPROTO);
	/* The token goes with the descriptor: the broker's spawner opens
	 * the stage only with it (proto.h, PROTO_STAGE_TOKEN). */
	if ((e = stage_token(c->stage_fd, msg + WIRE_HEADER_SIZE)) < 0)
		setup_failed(c->status_fd, STAGE_WORK_STAGE, -e);
	/* Init keeps its copy, to tell disk_full when the payload ends
	 * (reaper.c); the payload closes it before its exec. With it, when
	 * it opens, the jail's mount namespace: the launcher holds it until
	 * the job's RESULT is sent, so that the namespace's tear-down (its
	 * umounts wait for an RCU grace period) is not done by init's exit,
	 * before the launcher sees init end (wire.h, WIRE_FD_MNT_NS). */
	fds[0] = c->stage_fd;
	fds[1] = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	e = wire_send(notify_fd, msg, sizeof(msg), WIRE_STAGE,
	    WIRE_ROLE_BIT(0) | (fds[1] >= 0 ? WIRE_ROLE_BIT(1) : 0), fds);
	explicit_bzero(msg, sizeof(msg));
	if (fds[1] >= 0)
		close(fds[1]);
	if (e < 0)
		setup_failed(c->status_fd, STAGE_WORK_STAGE, -e);
}
