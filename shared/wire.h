/*
 * wire.h: the private wires between the processes of stockade, one
 * table for all of them: the launcher's supervisor
 * (launcher/supervisor/zygote_client.c) and its zygote
 * (launcher/zygote/zygote.c); the supervisor and a waiting (pooled)
 * jail's init (launcher/supervisor/pool.c, launcher/init/pool_job.c);
 * jail init and the payload to the supervisor (the status pipe:
 * launcher/common/jail_common.c, launcher/supervisor/job_end.c); the
 * confined broker and its spawner (broker/jobs/spawner.c). The broker <->
 * launcher protocol is proto.h's, which includes this header, so every
 * message between the processes is defined in these two places.
 *
 * Every message, on every wire, is
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
 * Channels (transport, and the types each carries):
 *   zygote  one AF_UNIX SOCK_SEQPACKET socketpair made by zygote_start;
 *           one datagram is one message.
 *   go      a waiting jail's SOCK_SEQPACKET socket (jail_start), the
 *           supervisor's end handed over in WIRE_PREPARE_REPLY; one
 *           message, then closed.
 *   status  jail init's status pipe (jail_start), written by init and
 *           by the payload before exec, read by the supervisor after
 *           init is reaped. A pipe carries no descriptors: every record
 *           is WIRE_STATUS_SIZE bytes (one atomic write, PIPE_BUF), its
 *           header's count and roles 0 (wire_status_write,
 *           wire_status_read; anything else is refused, -EPROTO).
 *   spawn   the broker's socketpair to its spawner (spawner_start), one
 *           SOCK_SEQPACKET datagram a message.
 *   notify  the jail's seccomp-notify socket (jail_start), written by
 *           jail init before it starts the payload (WIRE_NET_SOCKETS,
 *           with a proxy port only; then WIRE_STAGE, with layer
 *           mount_ns on), then by the payload before its exec
 *           (WIRE_SECCOMP_LISTENER, with layer seccomp on), in that
 *           order; read by the supervisor (supervisor/notify.c).
 *   proxy   the broker's SOCK_SEQPACKET socketpair to its egress proxy
 *           (stockade-proxy; bodies in egress_ctl.h).
 *
 *   type               dir   body                     descriptors, in order
 *   zygote:
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
 *   go:
 *   WIRE_GO            s->i  the job's RUN message    stdin pipe (opt.:
 *                            (proto.h), as the        exactly when the
 *                            broker sent it           RUN has JOB_F_STDIN)
 *   status (every body i32 a, i32 b; no descriptors):
 *   INIT_REC_SETUP_FAILED i->s  a = stage (enum jail_stage), b = errno
 *   INIT_REC_PAYLOAD_EXIT i->s  a = the payload's wait status, b =
 *                               INIT_FULL_* flags (jail.h)
 *   INIT_REC_LANDLOCK     p->s  a = the Landlock ABI the payload is
 *                               under (sent before exec), b = 0
 *   INIT_REC_BIND_FAILED  i->s  set-up failed at STAGE_BIND: a = the
 *                               bind's index in the job's mounts, b =
 *                               errno
 *   INIT_REC_TASKS        i->s  just before INIT_REC_PAYLOAD_EXIT, in a
 *                               pid namespace: a = its tasks as the
 *                               payload ended (init's and the
 *                               payload's included), b = 0
 *   spawn:
 *   WIRE_SPAWN         b->sp empty: "start a launcher"  none
 *   WIRE_SPAWN_REPLY   sp->b u32 the launcher's pid   our end of the
 *                                                     launcher's socket,
 *                                                     its pidfd (both
 *                                                     required)
 *   WIRE_SPAWN_FAILED  sp->b u32 errno (socketpair,   none
 *                            clone3)
 *   WIRE_STAGE_OPEN    b->sp u8 token[32], u32 flags the stage's root, the
 *                            (0: a directory, 1: a   directory to open in
 *                            regular file), the      (both required; may
 *                            name (1..255 bytes,     be one descriptor
 *                            one component, no NUL)  twice): spawner.h
 *   WIRE_STAGE_OPEN_REPLY sp->b none                 the entry, opened
 *                                                     O_RDONLY (required)
 *   WIRE_STAGE_OPEN_FAILED sp->b u32 errno (the      none
 *                            refusal: spawner.h)
 *   notify:
 *   WIRE_NET_SOCKETS   i->s  u16 the listener's port  the proxy's
 *                                                     listener, the
 *                                                     packet socket (both
 *                                                     required)
 *   WIRE_STAGE         i->s  u8 token[32], the bytes  the root of the
 *                            of the stage's "token"  job's stage tmpfs,
 *                            file (PROTO_STAGE_TOKEN) a directory
 *                                                     (required; issue 26);
 *                                                     the jail's mount
 *                                                     namespace (optional;
 *                                                     issue 27)
 *   WIRE_SECCOMP_LISTENER p->s none                  the seccomp filter's
 *                                                     listener (required)
 *   proxy:
 *   WIRE_PROXY_READY   px->b u32 the Landlock ABI     none
 *   WIRE_PROXY_FAILED  px->b i32 errno, str why       none
 *   WIRE_PROXY_JOB     b->px struct egress_job        the proxy's listener
 *                            (egress_job_encode)      (required), the
 *                                                     packet socket (opt.)
 *   WIRE_PROXY_END     b->px u64 job id               none
 *   WIRE_PROXY_REPORT  px->b struct egress_report     none
 *                            (egress_report_encode)
 *
 * (s: the launcher's supervisor, z: its zygote, i: jail init, p: the
 * payload before exec, b: the broker, sp: its spawner, px: the egress
 * proxy.)
 * A jail reply's body: i32 refusal (enum zygote_refusal), i32 errno, u8
 * kill_on_denial, i32 pid, u64 start seconds, u64 start nanoseconds
 * (CLOCK_MONOTONIC at the clone), u64 token, str why. A measure reply's
 * four u64 and last u32: Pss sum, resident sum, 0, 0, fallbacks; a
 * count's: watches, maps, locks, files in flight, unreadable processes.
 * Replies come in the order of the requests that have one (KILL has
 * none). A message the zygote cannot take is answered with a
 * WIRE_JAIL_REPLY refusing it (ZYGOTE_BAD_REQUEST). Every other
 * receiver refuses a type it does not expect there.
 */
#ifndef STOCKADE_WIRE_H
#define STOCKADE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WIRE_HEADER_SIZE 8u
/* The largest message, bytes: a header and a whole RUN of the broker's
 * protocol, which the launcher forwards as it came (PROTO_MAX_MSG):
 * WIRE_JAIL, WIRE_PREPARE and WIRE_GO. */
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
	WIRE_GO = 10,
	/* The status pipe's records, named as their users know them. */
	INIT_REC_SETUP_FAILED = 11,
	INIT_REC_PAYLOAD_EXIT = 12,
	INIT_REC_LANDLOCK = 13,
	INIT_REC_BIND_FAILED = 14,
	INIT_REC_TASKS = 15,
	WIRE_SPAWN = 16,
	WIRE_SPAWN_REPLY = 17,
	WIRE_SPAWN_FAILED = 18,
	WIRE_NET_SOCKETS = 19,
	WIRE_PROXY_READY = 20,
	WIRE_PROXY_FAILED = 21,
	WIRE_PROXY_JOB = 22,
	WIRE_PROXY_END = 23,
	WIRE_PROXY_REPORT = 24,
	WIRE_SECCOMP_LISTENER = 25,
	WIRE_STAGE = 26,
	WIRE_STAGE_OPEN = 27,
	WIRE_STAGE_OPEN_REPLY = 28,
	WIRE_STAGE_OPEN_FAILED = 29,
};
#define WIRE_MSG_TYPE_MAX WIRE_STAGE_OPEN_FAILED

/* The wire a message type travels on (the table's sections). */
enum wire_channel {
	WIRE_CH_ZYGOTE = 1,
	WIRE_CH_GO,
	WIRE_CH_STATUS,
	WIRE_CH_SPAWN,
	WIRE_CH_NOTIFY,
	WIRE_CH_PROXY,
};

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
	WIRE_FD_LAUNCHER_SOCK, /* the broker's end of a new launcher's
				* SOCK_SEQPACKET socketpair */
	WIRE_FD_LAUNCHER_PIDFD, /* that launcher's pidfd */
	WIRE_FD_PROXY_LISTENER, /* a TCP socket listening on the jail's
				 * loopback, made in its network namespace */
	WIRE_FD_PACKET, /* an AF_PACKET socket on the jail's lo */
	WIRE_FD_SECCOMP_LISTENER, /* the payload's seccomp filter's
				   * listener (seccomp_unotify(2)) */
	WIRE_FD_STAGE, /* the root of a job's stage tmpfs (issue 26), a
			* directory open O_RDONLY */
	WIRE_FD_STAGE_DIR, /* a directory of a stage tmpfs to open an
			    * entry in (O_PATH or O_RDONLY) */
	WIRE_FD_STAGE_ENTRY, /* an entry of a stage tmpfs the spawner
			      * opened O_RDONLY for the broker */
	WIRE_FD_MNT_NS, /* a jail's mount namespace (/proc/self/ns/mnt),
			 * held by the launcher until the job's RESULT is
			 * sent (issue 27) */
};

/* The most descriptors one message carries (a prepare reply's six). */
#define WIRE_MAX_FDS 6u

/* One message type's row of the table above. */
struct wire_msg_desc {
	uint16_t type;
	const char *name; /* "JAIL" */
	enum wire_channel channel;
	uint8_t nroles;
	enum wire_fd_role roles[WIRE_MAX_FDS]; /* in their order */
	uint32_t required; /* roles always present, as a ROLES mask */
	uint32_t exclusive; /* roles of which at most one is present */
};

/* The row of TYPE, or NULL for a type on no wire. */
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
 * Receives one message on SOCK into BUF of SIZE bytes (at least
 * WIRE_HEADER_SIZE, else -EINVAL): a datagram longer than SIZE or than
 * WIRE_MAX_MSG is -EMSGSIZE (proto_recv_fds_max, up to MAXFDS
 * descriptors into FDS). A receiver that takes only short messages (the
 * spawner's) passes a small buffer; one that takes a RUN, WIRE_MAX_MSG.
 * It checks the header into *M:
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

/* A status record's size, bytes: the header and its body's two i32. */
#define WIRE_STATUS_SIZE (WIRE_HEADER_SIZE + 8u)

/*
 * Writes the status record TYPE (a type of the status channel) with A and
 * B on the pipe FD, in one write(2) (EINTR retried). Only
 * async-signal-safe calls. Returns 0; -EINVAL for a type not on the
 * status channel; or write(2)'s negative errno (-EIO for a short write).
 */
int wire_status_write(int fd, uint16_t type, int32_t a, int32_t b);

/*
 * Reads one status record from the pipe FD (EINTR retried) into REC:
 * its type, A and B. Returns 1; 0 at EOF; -EBADMSG for a record cut
 * short; -EPROTO for a header that fails its check (a type not on the
 * status channel, a nonzero descriptor count or roles), with REC[0] the
 * type read; or read(2)'s negative errno.
 */
int wire_status_read(int fd, int32_t rec[3]);

#endif
