/*
 * proto.h: the broker <-> launcher wire protocol. This header owns it.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET socketpair; one datagram is one
 * message; MSG_TRUNC or MSG_CTRUNC on receipt is fatal. Every message is
 *
 *     u16 type | u16 reserved (0) | u32 body length | body
 *
 * little-endian, body length <= PROTO_MAX_BODY. The first message of a
 * session is HELLO carrying PROTO_VERSION; the launcher answers HELLO_REPLY
 * with the same version or the session ends. Numbers are never reused or
 * renumbered; a new message gets a new number.
 *
 * Requests and answers, with the descriptors each may carry:
 *
 *   broker -> launcher                 launcher -> broker
 *   PROTO_HELLO        (no fd)         PROTO_HELLO_REPLY  (no fd)
 *   PROTO_RUN          (1 fd: the      PROTO_OUTPUT       (no fd), 0..n
 *                       workspace dir; PROTO_RESULT       (no fd), exactly 1
 *                       a 2nd fd:
 *                       either the
 *                       job's standard
 *                       input, the
 *                       read end of a
 *                       pipe, exactly
 *                       when the spec
 *                       has JOB_F_STDIN;
 *                       or the caller's
 *                       terminal, only
 *                       with layer
 *                       no_terminal
 *                       off)
 *   PROTO_CANCEL       (no fd)          (answered by the RUN's RESULT,
 *                                        status cancelled unless the job
 *                                        had ended otherwise)
 *   PROTO_POOL         (no fd)          (no answer)
 *                                      PROTO_NET          (2 fds: the
 *                                                          proxy's
 *                                                          listener, the
 *                                                          packet
 *                                                          socket), 0..1
 *                                                          before RESULT
 *                                      PROTO_STAGE        (1 fd: the
 *                                                          job's stage
 *                                                          tmpfs's root),
 *                                                          0..1 before
 *                                                          RESULT
 *
 * Who may send what in which phase is a table on each side
 * (launcher/supervisor/dispatch.c, broker/jobs/supervisor.c).
 */
#ifndef STOCKADE_PROTO_H
#define STOCKADE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "result.h"
#include "wire.h"

/* Version 4: RUN grew layers_off and may carry the caller's terminal
 * (issue 6). Version 5: POOL (issue 9). Version 6: RUN's flag
 * JOB_F_OUTPUT_KILL; without it output past a cap is drained, no longer
 * killed (issue 22). Version 7: JOB_F_STDIN, a RUN that carries the
 * job's standard input (issue 22). Version 8: CANCEL grew its reason,
 * and RESULT may say JOB_CANCELLED (issue 22). Version 9: RESULT grew
 * memory_measure and the limits reached (issue 23). Version 10: RUN
 * grew proxy_port, and NET (issue 25). Version 11: RUN grew stage_files,
 * and STAGE (issue 26). Version 12: STAGE grew the stage's token (issue
 * 26: the broker's spawner opens the stage for a confined broker only
 * with it, broker/jobs/spawner.h). */
#define PROTO_VERSION 12u
#define PROTO_HEADER_SIZE 8u
#define PROTO_MAX_BODY (128u * 1024u)
#define PROTO_MAX_MSG (PROTO_HEADER_SIZE + PROTO_MAX_BODY)
/* Most descriptors on one broker-launcher message: RUN's workspace and
 * one more: the job's standard input (JOB_F_STDIN) or, with layer
 * no_terminal off, the caller's terminal; NET's listener and packet
 * socket. */
#define PROTO_MAX_FDS 2u
/* Largest OUTPUT chunk, bytes. */
#define PROTO_OUTPUT_CHUNK (64u * 1024u)

/*
 * Host uid and gid of every payload when the launcher runs as root: never
 * 0, which passes every check that looks at the uid alone (decisions.md).
 * The broker gives a root-run job's temporary workspace to these ids.
 */
#define PROTO_ROOT_PAYLOAD_ID 65534u

/* Bounds the decoder enforces on a job spec. */
#define JOB_MAX_ARGS 1024u
#define JOB_MAX_ENV 256u
#define JOB_MAX_MOUNTS 64u
#define JOB_MAX_STR 16384u /* one argument, variable or path, bytes */
#define JOB_MAX_HOSTNAME 64u
#define JOB_MAX_DETAIL 1024u
/* Largest cpu_percent (cgroup2 cpu.max): 1024 CPUs. */
#define PROTO_MAX_CPU_PERCENT 102400u

enum proto_msg_type {
	PROTO_HELLO = 1,
	PROTO_HELLO_REPLY = 2,
	PROTO_RUN = 3,
	PROTO_OUTPUT = 4,
	PROTO_RESULT = 5,
	PROTO_CANCEL = 6,
	/* The session's warm jail pool size (0..PROTO_MAX_POOL): sent by a
	 * session broker (serve, mcp) after HELLO_REPLY and before its
	 * first RUN, at most once (launcher/supervisor/pool.h). */
	PROTO_POOL = 7,
	/* Launcher to broker, issue 25: u64 job_id, with two descriptors
	 * (proto_send_fds): the proxy's listener jail init made in the
	 * job's network namespace, then its packet socket on lo
	 * (WIRE_NET_SOCKETS). Sent once, before the job's RESULT, for a
	 * job whose spec has a proxy_port. */
	PROTO_NET = 8,
	/* Launcher to broker, issue 26: u64 job_id and the stage's token
	 * (PROTO_STAGE_TOKEN_BYTES bytes), with one descriptor
	 * (proto_send_fds): the root of the job's stage, the tmpfs that
	 * holds the upper layer of the overlay at /work (PROTO_STAGE_UPPER,
	 * PROTO_STAGE_WORK in it), a directory opened O_RDONLY (jail init
	 * sends it as WIRE_STAGE). Sent once, before the job's RESULT,
	 * for a job with a stage (job_spec_staged). */
	PROTO_STAGE = 9,
};
#define PROTO_MSG_TYPE_MAX PROTO_STAGE

/* The directories jail init makes in a job's stage tmpfs (issue 26;
 * launcher/init/stage.c): the overlay's upper layer and its work
 * directory. broker/fs/stage.h reads them as STAGE_UPPER and STAGE_WORK,
 * the same strings. */
#define PROTO_STAGE_UPPER "upper"
#define PROTO_STAGE_WORK "work"
/* The stage's capability token (issue 26): a file of
 * PROTO_STAGE_TOKEN_BYTES random bytes (getrandom(2)), mode 0400, at the
 * stage tmpfs's root beside PROTO_STAGE_UPPER, which the job never sees;
 * the same bytes travel with the stage's descriptor (WIRE_STAGE, then
 * PROTO_STAGE). The broker's spawner opens entries of a stage for a
 * confined broker only when it is given them (broker/jobs/spawner.h). */
#define PROTO_STAGE_TOKEN "token"
#define PROTO_STAGE_TOKEN_BYTES 32u
/* Most jails a launcher keeps built and waiting ([jail] pool_size). */
#define PROTO_MAX_POOL 8u

/* The name of a message type for diagnostics ("RUN"), or "unknown". */
const char *proto_msg_name(uint16_t type);

/* A read-only bind mount the policy asks for. */
enum mount_kind {
	MOUNT_RO_BIND = 1, /* must exist, else the job is refused */
	MOUNT_RO_BIND_TRY = 2, /* skipped when the host path is missing */
	/* Test only (policy key unsafe_ro_bind_no_landlock): mounted as
	 * MOUNT_RO_BIND, but given no Landlock rule, so a test can show
	 * Landlock refusing what the mount layer lets through. */
	MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK = 3,
};

struct mount_entry {
	enum mount_kind kind;
	char *source; /* absolute host path, from the policy */
	char *target; /* absolute path inside the jail */
};

/* Job spec flags. */
#define JOB_F_UNSAFE_NO_SECCOMP 0x1u /* evaluation only (unsafe_ key) */
#define JOB_F_DEVPTS 0x2u /* a private /dev/pts ([jail] pty) */
/* Output past a cap ends the job (output_limit: [limits] on_output_limit
 * = kill). Without it the launcher reads and forwards every byte to the
 * end, and the broker keeps the head and the tail (broker/jobs/capture.h). */
#define JOB_F_OUTPUT_KILL 0x4u
/* The RUN carries a 2nd descriptor, the job's standard input: the read
 * end of a pipe (S_ISFIFO, open O_RDONLY), checked with fstat and
 * F_GETFL on receipt, whose write end the broker feeds from the
 * client's data and closes at its end (broker/jobs/stdin_feed.h). Without
 * it the payload's stdin is the jail's /dev/null. Not part of a jail's
 * authority (launcher/common/jail_common.c, jail_same_authority): it changes
 * where one job reads from, nothing the jail is built of. */
#define JOB_F_STDIN 0x8u
#define JOB_F_KNOWN                                                   \
	(JOB_F_UNSAFE_NO_SECCOMP | JOB_F_DEVPTS | JOB_F_OUTPUT_KILL | \
	    JOB_F_STDIN)
#define JOB_MAX_USER 32u
#define JOB_MAX_PROFILE 32u

/*
 * One job, as RUN carries it. Ownership, one rule on both sides of the
 * protocol (docs/decisions.md): a job_spec owns every string and array it
 * points to (argv and its strings, envp and its strings, hostname, user,
 * home, cgroup, seccomp_profile, mounts and their source and target), and
 * job_spec_clear frees them all. Whoever fills one (proto_decode_run,
 * jobspec_from_policy) allocates copies; whoever changes a pointer field
 * afterwards frees the old value and stores a copy of its own. A spec is
 * never copied as a struct while both copies live (that would free the
 * strings twice): it is moved (the source zeroed or dropped at once) or
 * passed by pointer. A spec zeroed with memset owns nothing.
 */
struct job_spec {
	uint64_t job_id;
	uint32_t flags; /* JOB_F_* */
	uint32_t uid, gid; /* ids of the payload inside the jail, != 0 */
	char **argv; /* argc entries, then NULL; argc >= 1 */
	uint32_t argc;
	char **envp; /* envc "NAME=value" entries, then NULL */
	uint32_t envc;
	char *hostname;
	char *user; /* passwd name of uid: [a-z_][a-z0-9_-]*, <= 32 */
	char *home; /* absolute, normalised; a tmpfs of home_bytes */
	struct mount_entry *mounts;
	uint32_t nmounts;
	struct job_limits limits;
	/* Limits (issue 4): how to hold them (ENFORCE_AUTO, MONITOR,
	 * CGROUP2: the policy's [limits] enforcement), the delegated cgroup
	 * v2 directory to make job leaves under ("" = the launcher's own;
	 * an absolute path from the policy, never from a client), and the
	 * bytes the job may add to the workspace before it is full (the
	 * quota less what the workspace held at the start, computed by the
	 * broker; with a stage, issue 26, its size: below). */
	enum job_enforcement enforcement;
	char *cgroup;
	uint64_t workspace_allow;
	/* The job's stage (issue 26; job_spec_staged): the job's writes to
	 * /work land in an overlay's upper layer on a tmpfs of
	 * workspace_allow bytes (0: nothing may be written, the overlay is
	 * read-only) and stage_files inodes, plus a fixed slack for the
	 * stage's own directories (launcher/init/stage.c). Both
	 * kernel-enforced (ENOSPC). Travels last in RUN (after
	 * proxy_port), u64; part of a warm jail's build
	 * (jail_pool_compatible). */
	uint64_t stage_files;
	/* The seccomp profile ([jail] seccomp_profile): a compiled-in
	 * profile's name, [a-z]+, at most JOB_MAX_PROFILE bytes. */
	char *seccomp_profile;
	/* The layers switched off ([jail] unsafe_layers_off, evaluation
	 * only): a JOB_LAYER_BIT mask (result.h) within JOB_LAYERS_ALL;
	 * docs/layers.md says what each bit changes. */
	uint32_t layers_off;
	/* Controlled egress (issue 25): 0, no network (the jail's
	 * namespace has lo alone, as always); else jail init makes a TCP
	 * listener at 127.0.0.1:proxy_port for the broker's proxy, routes
	 * every other address to lo, and sends both up (PROTO_NET). Only
	 * with layers network_ns and user_ns on (else the spec is
	 * refused, -EINVAL). Travels after the others in RUN, u16 (then
	 * stage_files). Part of a jail's
	 * authority (jail_same_authority). */
	uint16_t proxy_port;
};

/*
 * The layers SPEC runs without: its layers_off, and layer seccomp when
 * the older flag JOB_F_UNSAFE_NO_SECCOMP is set (the same switch).
 */
uint32_t job_spec_layers_off(const struct job_spec *spec);

/* True when SPEC runs without layer LAYER (enum job_layer). */
#define job_spec_layer_off(spec, layer) \
	((job_spec_layers_off(spec) & JOB_LAYER_BIT(layer)) != 0)

/*
 * True when SPEC's writes to /work go to a stage of their own (issue 26;
 * launcher/init/stage.c): layers mount_ns and user_ns both on. Without a
 * mount namespace there is no /work to build; without a user namespace
 * init lacks what overlayfs needs of its mounter (CAP_DAC_OVERRIDE: a
 * root zygote keeps CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID alone). Both
 * are evaluations (docs/layers.md): the workspace is then /work itself,
 * written directly, its quota watched by the launcher; no STAGE is sent.
 */
#define job_spec_staged(spec)                             \
	(!job_spec_layer_off(spec, JOB_LAYER_MOUNT_NS) && \
	    !job_spec_layer_off(spec, JOB_LAYER_USER_NS))

/* Frees every string and array SPEC points to (it owns them all: struct
 * job_spec) and zeroes it; accepts NULL and a zeroed SPEC. */
void job_spec_clear(struct job_spec *spec);

/*
 * Encoders: each writes one whole message (header and body) into BUF of
 * SIZE bytes and returns its length, or -ENOBUFS when it does not fit in
 * SIZE or PROTO_MAX_MSG, or -EINVAL for a value the decoder would refuse.
 */
int proto_encode_hello(uint8_t *buf, size_t size, uint32_t version);
int proto_encode_hello_reply(uint8_t *buf, size_t size, uint32_t version,
    uint32_t launcher_pid);
int proto_encode_run(uint8_t *buf, size_t size, const struct job_spec *spec);
int proto_encode_output(uint8_t *buf, size_t size, uint64_t job_id,
    uint8_t stream, const void *data, size_t len);
int proto_encode_result(uint8_t *buf, size_t size,
    const struct job_result *res);
/* CANCEL: u64 job_id | u32 reason (enum job_cancel_reason, 1..
 * JOB_CANCEL_MAX, else -EINVAL). */
int proto_encode_cancel(uint8_t *buf, size_t size, uint64_t job_id,
    uint32_t reason);
int proto_encode_pool(uint8_t *buf, size_t size, uint32_t jails);
/* NET (issue 25): u64 job_id, the job whose jail init made the two
 * descriptors the sender attaches with proto_send_fds (the proxy's
 * listener, then the packet socket; the encoder attaches nothing). */
int proto_encode_net(uint8_t *buf, size_t size, uint64_t job_id);

/*
 * Splits a received datagram MSG of LEN bytes into its type and body.
 * Returns 0, or -EBADMSG for a short header, a non-zero reserved field or a
 * length that disagrees with LEN; -EMSGSIZE for a body over PROTO_MAX_BODY;
 * -EPROTO for an unknown type. Body points into MSG.
 */
int proto_decode_header(const uint8_t *msg, size_t len, uint16_t *type,
    const uint8_t **body, size_t *body_len);

/*
 * Body decoders. Each consumes the body exactly (trailing bytes are
 * -EBADMSG), validates every field and returns 0 or a negative errno:
 * -EBADMSG malformed, -EMSGSIZE a bound exceeded, -EINVAL a value out of
 * range, -ENOMEM. On failure the outputs are cleared and own nothing.
 */
int proto_decode_hello(const uint8_t *body, size_t len, uint32_t *version);
int proto_decode_hello_reply(const uint8_t *body, size_t len, uint32_t *version,
    uint32_t *launcher_pid);
int proto_decode_run(const uint8_t *body, size_t len, struct job_spec *spec);
/* DATA points into BODY (borrowed). STREAM is 1 (stdout) or 2 (stderr). */
int proto_decode_output(const uint8_t *body, size_t len, uint64_t *job_id,
    uint8_t *stream, const uint8_t **data, size_t *data_len);
int proto_decode_result(const uint8_t *body, size_t len,
    struct job_result *res);
/* -EINVAL for a REASON outside 1..JOB_CANCEL_MAX. */
int proto_decode_cancel(const uint8_t *body, size_t len, uint64_t *job_id,
    uint32_t *reason);
/* -EINVAL for JAILS over PROTO_MAX_POOL. */
int proto_decode_pool(const uint8_t *body, size_t len, uint32_t *jails);
/* NET's body: the job id, *JOB_ID (0 on failure, -EBADMSG). The two
 * descriptors came beside it (proto_recv_fds): the receiver checks
 * their count and kind (a listening TCP socket, an AF_PACKET socket). */
int proto_decode_net(const uint8_t *body, size_t len, uint64_t *job_id);
/* STAGE (issue 26): u64 job_id, then the stage's token
 * (PROTO_STAGE_TOKEN_BYTES bytes, copied); its one descriptor (the stage
 * tmpfs's root, a directory) comes beside it and the receiver checks it
 * (fstat: S_ISDIR, a tmpfs by fstatfs). The decoder fills *JOB_ID and
 * TOKEN, or clears both and returns -EBADMSG for a body of another
 * length. */
int proto_encode_stage(uint8_t *buf, size_t size, uint64_t job_id,
    const uint8_t token[PROTO_STAGE_TOKEN_BYTES]);
int proto_decode_stage(const uint8_t *body, size_t len, uint64_t *job_id,
    uint8_t token[PROTO_STAGE_TOKEN_BYTES]);

/*
 * Sends one message of LEN bytes on the SEQPACKET socket SOCK, with FD
 * attached by SCM_RIGHTS when FD >= 0. Retries EINTR. Returns 0 or a
 * negative errno (-EPIPE when the peer is gone). Does not close FD.
 */
int proto_send(int sock, const uint8_t *msg, size_t len, int fd);

/*
 * Receives one message into BUF (at least PROTO_MAX_MSG bytes). Returns its
 * length; 0 when the peer closed the connection; -EMSGSIZE on MSG_TRUNC;
 * -EBADMSG on MSG_CTRUNC or an unexpected control message; another negative
 * errno on failure. A descriptor that arrived (SCM_RIGHTS, close-on-exec via
 * MSG_CMSG_CLOEXEC) is stored in *FD (else *FD = -1); more than one
 * descriptor is -EBADMSG, with all of them closed (a RUN with the
 * caller's terminal is received with proto_recv_fds). The caller owns *FD
 * and must close it, including when the message is refused.
 */
int proto_recv(int sock, uint8_t *buf, size_t size, int *fd);

/* The most descriptors proto_send_fds and proto_recv_fds carry at once. */
#define PROTO_IO_MAX_FDS 8u

/*
 * proto_send with NFDS descriptors FDS (0 to PROTO_IO_MAX_FDS, else
 * -EINVAL) in one SCM_RIGHTS message. Does not close them. For the
 * launcher's private channel to its zygote (launcher/zygote/zygote.h); the
 * broker-launcher protocol carries at most PROTO_MAX_FDS.
 */
int proto_send_fds(int sock, const uint8_t *msg, size_t len, const int *fds,
    size_t nfds);

/*
 * proto_recv taking up to MAXFDS (at most PROTO_IO_MAX_FDS) descriptors
 * into FDS, their count into *NFDS (0 on every error). More than MAXFDS,
 * or a control message other than SCM_RIGHTS, is -EBADMSG with all of
 * them closed. The caller owns FDS[0..*NFDS) and must close them.
 */
int proto_recv_fds(int sock, uint8_t *buf, size_t size, int *fds, size_t maxfds,
    size_t *nfds);

/*
 * proto_recv_fds for a datagram of at most CAP bytes, received into BUF,
 * which must hold CAP bytes (the caller's contract; nothing checks it).
 * A longer datagram is -EMSGSIZE (MSG_TRUNC). For the launcher-zygote
 * wire (wire.h), whose messages are a RUN of the broker's protocol and
 * a header of their own: WIRE_MAX_MSG.
 */
int proto_recv_fds_max(int sock, uint8_t *buf, size_t cap, int *fds,
    size_t maxfds, size_t *nfds);

#endif
