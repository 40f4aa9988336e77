/*
 * probe_boundary.c: stockade-probe's commands for the boundary checks
 * (verify/check/check_boundary.c).
 *
 *   mark-then-mark FIRST MS SECOND   a job: makes the file FIRST, sleeps
 *                                    MS milliseconds, makes SECOND; a
 *                                    jail that outlives its launcher
 *                                    leaves SECOND behind.
 *   heartbeat FILE MS COUNT          a job: appends one byte to FILE
 *                                    every MS milliseconds, COUNT times;
 *                                    a jail that outlives its broker
 *                                    keeps FILE growing.
 *   --ipc-fd N                       a hostile stockade-launcher: the
 *                                    broker starts its launcher as
 *                                    "stockade-launcher --ipc-fd 3" with
 *                                    an empty environment, so the check
 *                                    puts a copy of this probe beside a
 *                                    copy of stockade under that name,
 *                                    and what to do wrong is the first
 *                                    line of the file FAKE_MODE_FILE
 *                                    beside it (fake_modes[]).
 *
 * The fake launcher writes the wire format by hand from proto.h (the
 * probe links no stockade code): a launcher of someone else's making, as
 * the broker must expect one to be after a compromise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "shared/proto.h"

/* Beside the fake launcher: what it is to do wrong. */
#define FAKE_MODE_FILE "fake-launcher.mode"

/* ---- mark-then-mark ------------------------------------------------------ */

static int
make_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int e = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, "x\n", 2) != 2)
		e = -EIO;
	close(fd);
	return e;
}

static int
cmd_mark_then_mark(int argc, char **argv)
{
	struct timespec ts;
	long ms;
	int e;

	if (argc != 4 || (ms = atol(argv[2])) < 0 || ms > 10000) {
		fprintf(stderr, "usage: mark-then-mark FIRST MS SECOND\n");
		return 2;
	}
	if ((e = make_file(argv[1])) < 0) {
		probe_errno("first", -e);
		return 1;
	}
	probe_kv("first", "%s", argv[1]);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	e = make_file(argv[3]);
	probe_errno("second", -e);
	return e < 0 ? 1 : 0;
}

/* ---- heartbeat ------------------------------------------------------------ */

static int
cmd_heartbeat(int argc, char **argv)
{
	struct timespec ts;
	long ms, count;
	int fd;

	if (argc != 4 || (ms = atol(argv[2])) <= 0 || ms > 10000 ||
	    (count = atol(argv[3])) <= 0 || count > 10000) {
		fprintf(stderr, "usage: heartbeat FILE MS COUNT\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		probe_errno("heartbeat", errno);
		return 1;
	}
	for (long i = 0; i < count; i++) {
		if (write(fd, ".", 1) != 1) {
			probe_errno("heartbeat", errno);
			close(fd);
			return 1;
		}
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (ms % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	close(fd);
	probe_kv("beats", "%ld", count);
	return 0;
}

/* ---- the fake launcher --------------------------------------------------- */

enum fake_mode {
	FAKE_SMUGGLE_FD, /* OUTPUT "a", then OUTPUT "b" carrying a
			     * descriptor of the host's /, then RESULT ok */
	FAKE_WRONG_VERSION, /* HELLO_REPLY with PROTO_VERSION - 1; RESULT ok
			     * if a RUN comes all the same */
	FAKE_FOREIGN_RESULT, /* OUTPUT "a", then RESULT ok for the next job
			     * id, not the one sent */
	FAKE_SOUND, /* OUTPUT "a", RESULT ok: what a launcher may */
};

static const char *const fake_modes[] = {
    [FAKE_SMUGGLE_FD] = "smuggle-fd",
    [FAKE_WRONG_VERSION] = "wrong-version",
    [FAKE_FOREIGN_RESULT] = "foreign-result",
    [FAKE_SOUND] = "sound",
};

/* A message being written: header, then the body (little-endian). */
struct fmsg {
	uint8_t b[512];
	size_t n;
};

static void
put(struct fmsg *m, uint64_t v, size_t width)
{
	for (size_t i = 0; i < width && m->n < sizeof(m->b); i++)
		m->b[m->n++] = (uint8_t)(v >> (8 * i));
}

static void
put_str(struct fmsg *m, const char *s)
{
	size_t len = strlen(s);

	put(m, len, 4);
	for (size_t i = 0; i < len && m->n < sizeof(m->b); i++)
		m->b[m->n++] = (uint8_t)s[i];
}

static void
fmsg_start(struct fmsg *m, uint16_t type)
{
	m->n = 0;
	put(m, type, 2);
	put(m, 0, 2);
	put(m, 0, 4); /* the body length, set by fmsg_send */
}

/* Sends M with descriptor FD when FD >= 0. Returns 0 or -1. */
static int
fmsg_send(int sock, struct fmsg *m, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	uint32_t body = (uint32_t)(m->n - PROTO_HEADER_SIZE);
	struct iovec iov = {.iov_base = m->b, .iov_len = m->n};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	for (size_t i = 0; i < 4; i++)
		m->b[4 + i] = (uint8_t)(body >> (8 * i));
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
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)m->n ? 0 : -1;
}

static int
send_output(int sock, uint64_t job, const char *data, int fd)
{
	struct fmsg m;

	fmsg_start(&m, PROTO_OUTPUT);
	put(&m, job, 8);
	put(&m, 1, 1); /* stdout */
	put_str(&m, data);
	return fmsg_send(sock, &m, fd);
}

/* RESULT ok (exit 0) for JOB, which wrote STDOUT_BYTES to stdout. */
static int
send_result_ok(int sock, uint64_t job, uint64_t stdout_bytes)
{
	struct fmsg m;

	fmsg_start(&m, PROTO_RESULT);
	put(&m, job, 8);
	put(&m, JOB_OK, 4);
	put(&m, 0, 4); /* exit code */
	put(&m, 0, 4); /* signal */
	put(&m, 1, 8); /* wall_ms */
	put(&m, 0, 8); /* cpu_ms */
	put(&m, 100, 8); /* peak_memory_kb */
	put(&m, 1, 4); /* peak_processes */
	put(&m, ENFORCE_MONITOR, 1);
	put(&m, 0, 4); /* landlock_abi */
	put(&m, 0, 4); /* no denials */
	put(&m, stdout_bytes, 8);
	put(&m, 0, 8); /* stderr_bytes */
	put(&m, MEASURE_RSS_SUM, 1); /* memory_measure (protocol 9) */
	put(&m, 0, 1); /* no limit reached */
	put_str(&m, ""); /* detail */
	return fmsg_send(sock, &m, -1);
}

/* The mode named in FAKE_MODE_FILE beside this binary, or -1. */
static int
fake_mode(void)
{
	char self[4096], line[64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;
	FILE *f;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL ||
	    (size_t)(slash - self) + sizeof("/" FAKE_MODE_FILE) > sizeof(self))
		return -1;
	strcpy(slash + 1, FAKE_MODE_FILE);
	if ((f = fopen(self, "re")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	for (size_t i = 0; i < sizeof(fake_modes) / sizeof(fake_modes[0]); i++)
		if (strcmp(line, fake_modes[i]) == 0)
			return (int)i;
	return -1;
}

/* Receives one message into BUF (closing any descriptor that came with
 * it); returns its length, 0 at EOF, -1 on error. */
static ssize_t
fake_recv(int sock, uint8_t *buf, size_t size)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = buf, .iov_len = size};
	struct msghdr mh = {.msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = u.buf,
	    .msg_controllen = sizeof(u.buf)};
	ssize_t n;

	do
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); n >= 0 && c != NULL;
	     c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0;
			     i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			     i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int),
				    sizeof(int));
				close(fd);
			}
	return n;
}

static uint64_t
get_le(const uint8_t *p, size_t width)
{
	uint64_t v = 0;

	for (size_t i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Answers RUN for JOB as MODE says. Returns 0 or -1. */
static int
fake_run(int sock, enum fake_mode mode, uint64_t job)
{
	int root, e;

	switch (mode) {
	case FAKE_SMUGGLE_FD:
		/* The host's root directory: what a compromised launcher
		 * would most like a broker to hold for it. */
		root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (root < 0)
			return -1;
		/* Said first: a sound broker kills us at the descriptor. */
		fprintf(stderr,
		    "stockade-probe: fake launcher: sends OUTPUT "
		    "with a descriptor of /\n");
		e = send_output(sock, job, "a", -1);
		if (e == 0)
			e = send_output(sock, job, "b", root);
		close(root);
		return e == 0 ? send_result_ok(sock, job, 2) : -1;
	case FAKE_FOREIGN_RESULT:
		fprintf(stderr,
		    "stockade-probe: fake launcher: RESULT for "
		    "job %llu, not %llu\n",
		    (unsigned long long)job + 1, (unsigned long long)job);
		if (send_output(sock, job, "a", -1) < 0)
			return -1;
		return send_result_ok(sock, job + 1, 1);
	case FAKE_WRONG_VERSION:
		return send_result_ok(sock, job, 0);
	case FAKE_SOUND:
		if (send_output(sock, job, "a", -1) < 0)
			return -1;
		return send_result_ok(sock, job, 1);
	}
	return -1;
}

/* The fake launcher: serves until EOF. */
static int
cmd_fake_launcher(int argc, char **argv)
{
	static uint8_t buf[PROTO_MAX_MSG + 1];
	int sock, mode;

	if (argc != 2 || (sock = atoi(argv[1])) < 3) {
		fprintf(stderr,
		    "usage: --ipc-fd N (started by stockade as "
		    "its launcher)\n");
		return 2;
	}
	if ((mode = fake_mode()) < 0) {
		fprintf(stderr,
		    "stockade-probe: fake launcher: no valid %s "
		    "beside this binary\n",
		    FAKE_MODE_FILE);
		return 2;
	}
	for (;;) {
		ssize_t n = fake_recv(sock, buf, sizeof(buf));
		uint16_t type;

		if (n <= 0)
			return n == 0 ? 0 : 1;
		if ((size_t)n < PROTO_HEADER_SIZE)
			return 1;
		type = (uint16_t)get_le(buf, 2);
		if (type == PROTO_HELLO) {
			struct fmsg m;
			uint32_t v = mode == FAKE_WRONG_VERSION
			    ? PROTO_VERSION - 1
			    : PROTO_VERSION;

			fmsg_start(&m, PROTO_HELLO_REPLY);
			put(&m, v, 4);
			put(&m, (uint64_t)getpid(), 4);
			if (mode == FAKE_WRONG_VERSION)
				fprintf(stderr,
				    "stockade-probe: fake launcher: "
				    "HELLO_REPLY with version %u\n",
				    v);
			if (fmsg_send(sock, &m, -1) < 0)
				return 1;
		} else if (type == PROTO_RUN &&
		    (size_t)n >= PROTO_HEADER_SIZE + 8) {
			if (fake_run(sock, (enum fake_mode)mode,
				get_le(buf + PROTO_HEADER_SIZE, 8)) < 0)
				return 1;
		}
		/* CANCEL and anything else: ignored. */
	}
}

const struct probe_cmd probe_boundary_cmds[] = {
    {"mark-then-mark",
	"FIRST MS SECOND: makes FIRST, sleeps MS ms, makes "
	"SECOND; prints first=, second=",
	cmd_mark_then_mark},
    {"heartbeat",
	"FILE MS COUNT: appends a byte to FILE every MS ms, "
	"COUNT times; prints beats=",
	cmd_heartbeat},
    {"--ipc-fd",
	"N: a hostile stockade-launcher for the boundary checks "
	"(what it does wrong: the file " FAKE_MODE_FILE " beside it)",
	cmd_fake_launcher},
    {NULL, NULL, NULL},
};
