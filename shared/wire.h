/*
 * wire.h: the launcher's private wire between its supervisor
 * (launcher/supervisor/zygote_client.c) and its zygote
 * (launcher/zygote/zygote.c). This header owns it; proto.h includes it,
 * so the broker-launcher protocol and this one are defined side by side.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET socketpair made by zygote_start;
 * one datagram is one message. Every message is
 *
 *     u16 type | u16 descriptor count | u32 roles | body
 *
 * little-endian. ROLES is a mask of the type's descriptor roles present
 * (bit i: the i-th role of the type's row below); the descriptors come
 * by SCM_RIGHTS in the row's order, those absent skipped, and their
 * count is the header's, which is the number of bits set. A receiver
 * takes a descriptor by its role's position (wire_fd), never by what it
 * looks like; it may fstat one to verify it and refuse a mismatch.
 *
 *   type               dir   body                     descriptors, in order
 *   WIRE_JAIL          s->z  a RUN message (proto.h)  workspace directory;
 *                                                     cgroup leaf (opt.);
 *                                                     stdin pipe (opt.,
 *                                                     JOB_F_STDIN) or the
 *                                                     caller's terminal
 *                                                     (opt., layer
 *                                                     no_terminal off)
 *   WIRE_PREPARE       s->z  a RUN message            workspace directory
 *   WIRE_KILL          s->z  i32 signal, u64 token    none
 *   WIRE_MEASURE       s->z  u32 seq, u64 token,      none
 *                            u32 max_procs
 *   WIRE_KOBJ          s->z  as MEASURE, u64 cap      none
 *   WIRE_JAIL_REPLY    z->s  the reply (below)        init's pidfd, stdout,
 *                                                     stderr, status pipe,
 *                                                     seccomp-notify socket
 *                                                     (all with ZYGOTE_OK,
 *                                                     else none)
 *   WIRE_PREPARE_REPLY z->s  the reply                as JAIL_REPLY, then
 *                                                     the socket the job
 *                                                     goes to (go_fd)
 *   WIRE_MEASURE_REPLY z->s  i32 -errno or 0, u32     none
 *                            seq, u64 x 4, u32
 *   WIRE_KOBJ_REPLY    z->s  as MEASURE_REPLY         none
 *
 * A jail reply's body: i32 refusal (enum zygote_refusal), i32 errno, u8
 * kill_on_denial, i32 pid, u64 start seconds, u64 start nanoseconds
 * (CLOCK_MONOTONIC at the clone), u64 token, str why. A measure reply's
 * four u64 and last u32: Pss sum, resident sum, 0, 0, fallbacks; a
 * count's: watches, maps, locks, files in flight, unreadable processes.
 * Replies come in the order of the requests that have one (KILL has
 * none). A message the zygote cannot take is answered with a
 * WIRE_JAIL_REPLY refusing it (ZYGOTE_BAD_REQUEST).
 */
#ifndef STOCKADE_WIRE_H
#define STOCKADE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_HEADER_SIZE 8u
/* The largest message, bytes: a header and a whole RUN of the broker's
 * protocol, which the launcher forwards as it came (PROTO_MAX_MSG). */
#define WIRE_MAX_MSG (PROTO_MAX_MSG + WIRE_HEADER_SIZE)

enum wire_msg_type {
	WIRE_JAIL = 1,
	WIRE_PREPARE = 2,
	WIRE_KILL = 3,
	WIRE_MEASURE = 4,
	WIRE_KOBJ = 5,
	WIRE_JAIL_REPLY = 6,
	WIRE_PREPARE_REPLY = 7,
	WIRE_MEASURE_REPLY = 8,
	WIRE_KOBJ_REPLY = 9,
};
#define WIRE_MSG_TYPE_MAX WIRE_KOBJ_REPLY

/* What a descriptor on this wire is. */
enum wire_fd_role {
	WIRE_FD_WORKSPACE = 1, /* the job's workspace, a directory */
	WIRE_FD_CGROUP_LEAF, /* the job's cgroup v2 leaf, a directory */
	WIRE_FD_STDIN_PIPE, /* the job's stdin: a FIFO open read-only */
	WIRE_FD_TERMINAL, /* the caller's terminal, a character device */
	WIRE_FD_PIDFD, /* jail init's pidfd */
	WIRE_FD_STDOUT, /* the read end of the payload's stdout pipe */
	WIRE_FD_STDERR, /* the read end of the payload's stderr pipe */
	WIRE_FD_STATUS, /* the read end of init's status pipe */
	WIRE_FD_NOTIFY, /* the socket the seccomp listener comes on */
	WIRE_FD_GO, /* a waiting jail's socket for its job's RUN */
};

/* The most descriptors one message carries (a prepare reply's six). */
#define WIRE_MAX_FDS 6u

/* One message type's row of the table above. */
struct wire_msg_desc {
	uint16_t type;
	const char *name; /* "JAIL" */
	uint8_t nroles;
	enum wire_fd_role roles[WIRE_MAX_FDS]; /* in their order */
	uint32_t required; /* roles always present, as a ROLES mask */
	uint32_t exclusive; /* roles of which at most one is present */
};

/* The row of TYPE, or NULL for a type not on this wire. */
const struct wire_msg_desc *wire_msg_desc(uint16_t type);

/* The name of ROLE for diagnostics ("workspace"), or "unknown". */
const char *wire_fd_role_name(enum wire_fd_role role);

/* A ROLES mask bit: the I-th role of a type's row. */
#define WIRE_ROLE_BIT(i) (1u << (i))

/*
 * Sends the message of type TYPE whose body is MSG[WIRE_HEADER_SIZE,
 * LEN) on SOCK, writing the header into MSG[0, WIRE_HEADER_SIZE), with
 * the descriptors FDS, one for each role in ROLES in the row's order.
 * Does not close them. Returns 0; -EINVAL for a type not on the wire, a
 * LEN shorter than the header or ROLES the row does not allow; or
 * proto_send_fds' errno.
 */
int wire_send(int sock, uint8_t *msg, size_t len, uint16_t type, uint32_t roles,
    const int *fds);

/* A received message, as wire_recv checked it. */
struct wire_msg {
	uint16_t type;
	uint32_t roles; /* the roles present (ROLES mask) */
	size_t nfds; /* their count, and that of the descriptors taken */
	const uint8_t *body; /* points into the receive buffer */
	size_t body_len;
};

/*
 * Receives one message of at most WIRE_MAX_MSG bytes on SOCK into BUF
 * of SIZE bytes (-EINVAL when SIZE is less; proto_recv_fds_max, up to
 * MAXFDS descriptors into FDS) and checks its header into *M:
 * a known type, a count equal to the descriptors that came and to the
 * roles set, roles the row allows, its required ones present, at most
 * one of its exclusive ones. Returns the datagram's length; 0 at EOF;
 * -EPROTO for a header that fails a check, with every descriptor
 * closed and M->nfds 0; or proto_recv_fds' errno (-EBADMSG for more
 * than MAXFDS descriptors). The caller owns
 * FDS[0, M->nfds).
 */
int wire_recv(int sock, uint8_t *buf, size_t size, int *fds, size_t maxfds,
    struct wire_msg *m);

/*
 * The descriptor of role ROLE in M's FDS (by its position: the roles
 * present before it in the row's order), or -1 when M carries none.
 */
int wire_fd(const struct wire_msg *m, const int *fds, enum wire_fd_role role);

#endif
