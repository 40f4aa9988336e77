/*
 * fuzz_proto.c: the broker <-> launcher wire codec (shared/proto.h) and
 * the launcher's dispatch of a message by type and phase to its decoder
 * (launcher/supervisor/dispatch.c, compiled in unchanged; the handlers' work is
 * stubbed below: no jail, no zygote, nothing spawned).
 *
 * Input: one control byte, then one datagram (header and body).
 * Control bits 0-1: the launcher's phase (HELLO, READY, RUNNING, READY
 * after job 5); bit 2: send the datagram with a directory descriptor
 * (RUN's workspace); bit 3: and with /dev/null (not a terminal); bit 4:
 * a POOL was already received.
 *
 * Properties, each an abort when broken:
 *  - every body decoder, run on the datagram's body and on the bare
 *    bytes: a body it accepts re-encodes with the matching encoder to
 *    the very same bytes (the codec is canonical: proto.h, "exactly
 *    what the decoder accepts"); a refusal owns nothing (ASan/LSan);
 *  - the dispatcher answers every message in one call, never blocks,
 *    leaks no descriptor, starts a job only for a RUN in phase READY
 *    with the workspace descriptor, a directory, and answers a HELLO in
 *    phase HELLO with a HELLO_REPLY of PROTO_VERSION.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "launcher.h"
#include "log.h"
#include "pool.h"
#include "proto.h"

static uint8_t *enc; /* PROTO_MAX_MSG bytes, re-encodings */
static struct launcher l;
static int peer = -1; /* the broker's end of the socketpair */
static int dirfd_ws = -1, devnull = -1;
static int lowest_free = -1; /* the lowest free descriptor at rest */
static bool job_started;
static uint8_t pool_mark; /* pool.buf after a stubbed pool_init */

/* The stubs: launcher/supervisor/monitor.c, launcher/supervisor/pool.c. */

int
launcher_run_job(struct launcher *ln, const struct job_spec *spec, int wsfd,
    int tty_fd)
{
	struct stat st;

	(void)ln;
	FUZZ_ASSERT(!job_started);
	job_started = true;
	FUZZ_ASSERT(fstat(wsfd, &st) == 0 && S_ISDIR(st.st_mode));
	/* /dev/null is never the caller's terminal. */
	FUZZ_ASSERT(tty_fd < 0);
	/* What the launcher accepts, the broker could have sent. */
	FUZZ_ASSERT(proto_encode_run(enc, PROTO_MAX_MSG, spec) > 0);
	close(wsfd);
	return 0;
}

int
pool_init(struct pool *p)
{
	memset(p, 0, sizeof(*p));
	p->wsfd = -1;
	p->buf = &pool_mark;
	return 0;
}

int
pool_refill_start(struct pool *p, struct zygote *z)
{
	(void)p;
	(void)z;
	return 0;
}

int
pool_refill_finish(struct pool *p, struct zygote *z)
{
	(void)p;
	(void)z;
	fuzz_fail("pool_refill_finish without a zygote");
}

int
pool_reap_failed(struct pool *p, struct zygote *z)
{
	(void)p;
	(void)z;
	fuzz_fail("pool_reap_failed without a pool");
}

static void
prepare(void)
{
	char path[4096];
	int sv[2];

	log_set_level(LOG_LVL_ERROR);
	if ((enc = malloc(PROTO_MAX_MSG)) == NULL ||
	    (l.msg = malloc(PROTO_MAX_MSG)) == NULL ||
	    (l.out = malloc(PROTO_MAX_MSG)) == NULL)
		fuzz_fail("out of memory");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		fuzz_fail("socketpair: %s", strerror(errno));
	l.ipc = sv[0];
	peer = sv[1];
	/* No zygote, no jail, no cgroup: descriptors -1, not 0. */
	l.zygote.sock = -1;
	l.zygote.pid = -1;
	l.self_pidfd = l.proc_fd = l.cg_parent = -1;
	dirfd_ws = fuzz_tmpdir(path, sizeof(path));
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		fuzz_fail("/dev/null: %s", strerror(errno));
	lowest_free = fcntl(devnull, F_DUPFD_CLOEXEC, 0);
	close(lowest_free);
}

/* Decodes BODY (LEN bytes) with every body decoder; each accepted one
 * must re-encode to the same bytes. */
static void
decoders(const uint8_t *body, size_t len)
{
	struct job_spec spec;
	struct job_result res;
	const uint8_t *data;
	size_t data_len;
	uint64_t id;
	uint32_t a, b;
	uint8_t stream;
	int n = 0;

#define SAME(expr)                                                   \
	do {                                                         \
		n = (expr);                                          \
		if (n < (int)PROTO_HEADER_SIZE ||                    \
		    (size_t)n - PROTO_HEADER_SIZE != len ||          \
		    memcmp(enc + PROTO_HEADER_SIZE, body, len) != 0) \
			fuzz_fail("%s: a decoded body re-encodes "   \
				  "differently (%d)",                \
			    #expr, n);                               \
	} while (0)

	if (proto_decode_hello(body, len, &a) == 0)
		SAME(proto_encode_hello(enc, PROTO_MAX_MSG, a));
	if (proto_decode_hello_reply(body, len, &a, &b) == 0)
		SAME(proto_encode_hello_reply(enc, PROTO_MAX_MSG, a, b));
	if (proto_decode_run(body, len, &spec) == 0) {
		SAME(proto_encode_run(enc, PROTO_MAX_MSG, &spec));
		job_spec_clear(&spec);
	}
	FUZZ_ASSERT(spec.argv == NULL && spec.mounts == NULL);
	if (proto_decode_output(body, len, &id, &stream, &data, &data_len) ==
	    0) {
		FUZZ_ASSERT(data_len <= len &&
		    (data_len == 0 ||
			(data >= body && data + data_len <= body + len)));
		SAME(proto_encode_output(enc, PROTO_MAX_MSG, id, stream, data,
		    data_len));
	}
	if (proto_decode_result(body, len, &res) == 0) {
		SAME(proto_encode_result(enc, PROTO_MAX_MSG, &res));
		job_result_clear(&res);
	}
	FUZZ_ASSERT(res.detail == NULL);
	if (proto_decode_cancel(body, len, &id, &a) == 0)
		SAME(proto_encode_cancel(enc, PROTO_MAX_MSG, id, a));
	if (proto_decode_pool(body, len, &a) == 0)
		SAME(proto_encode_pool(enc, PROTO_MAX_MSG, a));
	if (proto_decode_net(body, len, &id) == 0)
		SAME(proto_encode_net(enc, PROTO_MAX_MSG, id));
#undef SAME
}

/* Reads what the launcher sent back (never blocking): a HELLO_REPLY of
 * PROTO_VERSION when EXPECT_REPLY, else nothing. */
static void
drain(bool expect_reply)
{
	const uint8_t *body;
	size_t body_len;
	uint16_t type;
	uint32_t version, pid;
	ssize_t n;
	size_t got = 0;

	while ((n = recv(peer, enc, PROTO_MAX_MSG, MSG_DONTWAIT)) >= 0) {
		got++;
		FUZZ_ASSERT(expect_reply && got == 1);
		FUZZ_ASSERT(proto_decode_header(enc, (size_t)n, &type, &body,
				&body_len) == 0);
		FUZZ_ASSERT(type == PROTO_HELLO_REPLY);
		FUZZ_ASSERT(proto_decode_hello_reply(body, body_len, &version,
				&pid) == 0);
		FUZZ_ASSERT(version == PROTO_VERSION);
	}
	FUZZ_ASSERT(errno == EAGAIN || errno == EWOULDBLOCK);
	FUZZ_ASSERT(got == (expect_reply ? 1u : 0u));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum launcher_phase phases[] = {
	    PHASE_HELLO,
	    PHASE_READY,
	    PHASE_RUNNING,
	    PHASE_READY,
	};
	const uint8_t *msg, *body;
	size_t len, body_len, nfds = 0;
	enum launcher_phase before;
	uint16_t type;
	int fds[2], r, probe;
	uint8_t ctl;

	if (enc == NULL)
		prepare();
	if (size < 1)
		return 0;
	ctl = data[0];
	msg = data + 1;
	len = size - 1;

	/* The codec, broker side and launcher side alike. */
	decoders(msg, len);
	if (proto_decode_header(msg, len, &type, &body, &body_len) == 0) {
		FUZZ_ASSERT(body == msg + PROTO_HEADER_SIZE &&
		    body_len == len - PROTO_HEADER_SIZE);
		FUZZ_ASSERT(strcmp(proto_msg_name(type), "unknown") != 0);
		decoders(body, body_len);
	} else {
		type = 0;
	}

	/* The launcher's dispatcher, in the phase the control byte says.
	 * An empty datagram would read as the broker closing its end. */
	if (len == 0 || len > PROTO_MAX_MSG)
		return 0;
	memset(&l.pool, 0, sizeof(l.pool));
	l.pool.wsfd = -1;
	if (ctl & 0x10)
		l.pool.buf = &pool_mark;
	before = phases[ctl & 3];
	l.phase = before;
	l.last_job_id = (ctl & 3) == 3 ? 5 : 0;
	l.running_job_id = l.phase == PHASE_RUNNING ? 1 : 0;
	if (l.phase == PHASE_RUNNING)
		l.last_job_id = 1;
	l.cancel_requested = false;
	l.peer_gone = false;
	l.zygote.prepare_pending = false;
	l.zygote.sock = -1;
	job_started = false;
	if (ctl & 0x04)
		fds[nfds++] = dirfd_ws;
	if (ctl & 0x08)
		fds[nfds++] = devnull;
	if (proto_send_fds(peer, msg, len, fds, nfds) < 0)
		return 0;
	r = launcher_dispatch_one(&l);
	FUZZ_ASSERT(r == 1 || r < 0);
	FUZZ_ASSERT(!l.peer_gone);
	if (job_started)
		FUZZ_ASSERT(type == PROTO_RUN && before == PHASE_READY &&
		    r == 1 && (ctl & 0x04));
	if (r == 1 && type == PROTO_HELLO)
		FUZZ_ASSERT(before == PHASE_HELLO && l.phase == PHASE_READY);
	if (r == 1 && type == PROTO_CANCEL)
		FUZZ_ASSERT(l.phase == before);
	drain(r == 1 && type == PROTO_HELLO);
	/* Every descriptor that came with the message was closed. */
	probe = fcntl(devnull, F_DUPFD_CLOEXEC, 0);
	close(probe);
	if (probe != lowest_free)
		fuzz_fail("a descriptor leaked: the lowest free is %d, was %d",
		    probe, lowest_free);
	return 0;
}
