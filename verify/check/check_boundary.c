/*
 * check_boundary.c: the boundary checks of `stockade check` (check.h)
 * on the launcher's side of the broker <-> launcher protocol
 * (shared/proto.h): what the launcher does with a broker that breaks it.
 * The broker's side is check_broker_side.c.
 *
 * Each check starts the real stockade-launcher the way the broker does
 * (its end of a SOCK_SEQPACKET socketpair at fd 3, "--ipc-fd 3", an
 * empty environment; check_boundary_proc.c) and sends it hand-made messages. A sound
 * launcher ends the session at the first bad one with a named error on
 * stderr ("ending the session: ...") and closes the socket; it never
 * answers as if the message were good. To see a launcher that took a
 * bad message quietly (CANCEL has no answer), a check follows the bad
 * message with a valid RUN: a launcher still in session answers it.
 *
 * Each session has a deadline of SESSION_MS, so that a defect that hangs
 * costs seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "check_boundary.h"
#include "proto.h"

#define NO_PROGRAM "/stockade-check-boundary-no-such-program"

/*
 * Fills S (zeroed first) with a valid job 1 of LAYERS_OFF that runs
 * NO_PROGRAM, its argv with room for NARGS arguments (NULL after the
 * first). S owns its strings and arrays, like every job_spec (proto.h):
 * the caller frees it with job_spec_clear, on failure too. Returns 0 or
 * -ENOMEM.
 */
static int
spec_init(struct job_spec *s, size_t nargs, uint32_t layers_off)
{
	memset(s, 0, sizeof(*s));
	s->job_id = 1;
	s->uid = s->gid = 1000;
	s->limits.wall_ms = 2000;
	s->limits.cpu_ms = 2000;
	s->limits.memory_bytes = 256u << 20;
	s->limits.tmp_bytes = 1u << 20;
	s->limits.home_bytes = 1u << 20;
	s->limits.fsize_bytes = 1u << 20;
	s->limits.stdout_bytes = 65536;
	s->limits.stderr_bytes = 65536;
	s->limits.nofile = 64;
	s->limits.nproc = 16;
	s->limits.workspace_bytes = 1u << 20;
	s->enforcement = ENFORCE_MONITOR;
	s->workspace_allow = 1u << 20;
	s->layers_off = layers_off;
	s->argv = calloc(nargs + 1, sizeof(char *));
	s->hostname = strdup("sandbox");
	s->user = strdup("sandbox");
	s->home = strdup("/home/sandbox");
	s->cgroup = strdup("");
	s->seccomp_profile = strdup("default");
	if (s->argv == NULL || s->hostname == NULL || s->user == NULL ||
	    s->home == NULL || s->cgroup == NULL ||
	    s->seccomp_profile == NULL ||
	    (s->argv[0] = strdup(NO_PROGRAM)) == NULL)
		return -ENOMEM;
	s->argc = 1;
	return 0;
}

/*
 * Encodes a valid RUN (job 1, LAYERS_OFF) into BUF (PROTO_MAX_MSG bytes).
 * With PAD, arguments of 'x' are added until the message is exactly
 * PROTO_MAX_MSG bytes. Returns its length or a negative errno.
 */
static int
encode_run(uint8_t *buf, uint32_t layers_off, bool pad)
{
	struct job_spec s;
	size_t room, k, bytes;
	int n;

	if ((n = spec_init(&s, 19, layers_off)) < 0)
		goto out;
	n = proto_encode_run(buf, PROTO_MAX_MSG, &s);
	if (n < 0 || !pad)
		goto out;
	/* Each argument costs its length and 4; at most JOB_MAX_STR. */
	room = PROTO_MAX_MSG - (size_t)n;
	k = (room + 4 + JOB_MAX_STR - 1) / (4 + JOB_MAX_STR);
	if (k == 0 || k > 18 || room < 4 * k) {
		n = -EINVAL;
		goto out;
	}
	bytes = room - 4 * k;
	for (size_t i = 0; i < k; i++) {
		size_t len = bytes / k + (i < bytes % k ? 1 : 0);

		if ((s.argv[1 + i] = malloc(len + 1)) == NULL) {
			n = -ENOMEM;
			goto out;
		}
		memset(s.argv[1 + i], 'x', len);
		s.argv[1 + i][len] = '\0';
	}
	s.argc = (uint32_t)(1 + k);
	n = proto_encode_run(buf, PROTO_MAX_MSG, &s);
	if (n >= 0 && (size_t)n != PROTO_MAX_MSG)
		n = -EINVAL;
out:
	job_spec_clear(&s);
	return n;
}

/* Opens a fresh workspace directory (O_RDONLY, close-on-exec) for a RUN's
 * descriptor, or returns a negative errno. */
static int
open_workspace(struct check_ctx *c)
{
	char ws[4096];
	int e, fd;

	if ((e = check_workspace(c, ws, sizeof(ws))) < 0)
		return e;
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * One launcher session: HELLO first when READY, then the LEN bytes of
 * BAD with its NFDS descriptors FDS, then, with FOLLOW, a valid RUN with
 * a workspace (a launcher that took BAD answers it); watched until an
 * answer, the end of the session or SESSION_MS. The verdict says WHAT;
 * with SAID, the launcher's stderr must hold it (its own refusal, not a
 * later part's).
 */
static void
bad_message(struct check_ctx *c, struct check_result *r, const char *said,
    bool ready, const void *bad, size_t len, const int *fds, size_t nfds,
    bool follow, const char *what)
{
	char last[400];
	struct lsession s;
	uint8_t *run = NULL;
	int ws = -1, n = 0, e;

	if (follow) {
		if ((run = malloc(PROTO_MAX_MSG)) == NULL ||
		    (n = encode_run(run, 0, false)) < 0 ||
		    (ws = open_workspace(c)) < 0) {
			check_fail(r, "cannot make the RUN that follows: %s",
			    strerror(n < 0   ? -n
				    : ws < 0 ? -ws
					     : ENOMEM));
			free(run);
			return;
		}
	}
	if (ready) {
		if (!ls_hello(c, &s, r))
			goto out;
	} else if ((e = ls_start(c, &s)) < 0) {
		check_fail(r, "cannot start %s: %s", c->launcher, strerror(-e));
		goto out;
	}
	(void)ls_send(&s, bad, len, fds, nfds);
	if (follow)
		(void)ls_send(&s, run, (size_t)n, &ws, 1);
	ls_watch(&s, SESSION_MS);
	ls_end(&s);
	ls_verdict(&s, r, what);
	if (said != NULL && r->verdict == CHECK_PASS &&
	    strstr(s.errbuf, said) == NULL)
		check_fail(r,
		    "after %s the session ended, but the launcher "
		    "never said \"%s\": %s",
		    what, said,
		    ls_reason(&s, last, sizeof(last))
			? last
			: ls_last_words(&s, last, sizeof(last)));
out:
	if (ws >= 0)
		close(ws);
	free(run);
}

/* A header: TYPE, reserved 0, body length BODY, into M (8 bytes). */
static void
header(uint8_t *m, uint16_t type, uint32_t body)
{
	m[0] = (uint8_t)type;
	m[1] = (uint8_t)(type >> 8);
	m[2] = m[3] = 0;
	for (int i = 0; i < 4; i++)
		m[4 + i] = (uint8_t)(body >> (8 * i));
}

/* ---- the launcher's checks ----------------------------------------------- */

/* boundary.oversized_length_refused_by_header: a datagram that is only a
 * header announcing PROTO_MAX_BODY + 1 bytes, then a valid HELLO. The
 * length is refused from the header for what it is, too long (EMSGSIZE),
 * before anything is allocated or awaited for it (proto.h; CWE-789): a
 * decoder that bounds it with the wrong limit lets it through to the
 * next test, which names another error; one that waits for the body
 * takes the HELLO as part of it and never answers. */
static void
oversized_length(struct check_ctx *c, struct check_result *r)
{
	const char *why = strerror(EMSGSIZE);
	uint8_t m[8 + 8];
	struct lsession s;
	char last[200];
	int e;

	if ((e = ls_start(c, &s)) < 0) {
		check_fail(r, "cannot start %s: %s", c->launcher, strerror(-e));
		return;
	}
	header(m, PROTO_HELLO, PROTO_MAX_BODY + 1);
	(void)ls_send(&s, m, PROTO_HEADER_SIZE, NULL, 0);
	e = proto_encode_hello(m, sizeof(m), PROTO_VERSION);
	(void)ls_send(&s, m, (size_t)e, NULL, 0);
	ls_watch(&s, SESSION_MS);
	ls_end(&s);
	ls_verdict(&s, r,
	    "a header announcing a body of PROTO_MAX_BODY + 1 "
	    "bytes, then a valid HELLO");
	if (r->verdict == CHECK_PASS && strstr(s.errbuf, why) == NULL)
		check_fail(r,
		    "the launcher ended the session, but not for the "
		    "length (\"%s\" never said): %s",
		    why, ls_last_words(&s, last, sizeof(last)));
}

/* boundary.datagram_trailing_bytes_refused: a HELLO datagram with four
 * bytes after the body its header announces (proto.h: the length agrees
 * with the datagram; style.md rule 6, no trailing bytes). */
static void
datagram_trailing(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16] = {0};
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION);

	if (n < 0 || (size_t)n + 4 > sizeof(m)) {
		check_fail(r, "cannot encode HELLO");
		return;
	}
	memcpy(m + n, "\xde\xad\xbe\xef", 4);
	bad_message(c, r, NULL, false, m, (size_t)n + 4, NULL, 0, true,
	    "a HELLO datagram 4 bytes longer than its header says");
}

/* boundary.hello_trailing_bytes_refused: a HELLO whose body (and header
 * length) holds 4 more bytes after the version (proto.h: each body
 * decoder consumes the body exactly). */
static void
hello_trailing(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];

	header(m, PROTO_HELLO, 8);
	for (int i = 0; i < 4; i++)
		m[8 + i] = (uint8_t)(PROTO_VERSION >> (8 * i));
	memcpy(m + 12, "\xde\xad\xbe\xef", 4);
	bad_message(c, r, NULL, false, m, sizeof(m), NULL, 0, true,
	    "a HELLO whose 8-byte body has 4 bytes after the version");
}

/* A descriptor to attach: /dev/null, close-on-exec, or -1. */
static int
devnull(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* boundary.descriptor_on_hello_refused: HELLO with a descriptor attached
 * (proto.h: HELLO carries none; unix(7) SCM_RIGHTS). */
static void
fd_on_hello(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION);
	int fd = devnull();

	if (n < 0 || fd < 0) {
		check_fail(r, "cannot make the message: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	bad_message(c, r, NULL, false, m, (size_t)n, &fd, 1, true,
	    "a HELLO carrying a descriptor");
	close(fd);
}

/* boundary.descriptor_on_cancel_refused: after HELLO, CANCEL with a
 * descriptor attached, then a valid RUN (proto.h: CANCEL carries none;
 * it has no answer, so only the RUN after it shows that the launcher
 * went on). */
static void
fd_on_cancel(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[32];
	int n = proto_encode_cancel(m, sizeof(m), 0, JOB_CANCEL_REQUEST);
	int fd = devnull();

	if (n < 0 || fd < 0) {
		check_fail(r, "cannot make the message: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	bad_message(c, r, NULL, true, m, (size_t)n, &fd, 1, true,
	    "a CANCEL carrying a descriptor, then a valid RUN");
	close(fd);
}

/* boundary.too_many_descriptors_refused: after HELLO, a RUN with three
 * descriptors (proto.h: PROTO_MAX_FDS is 2, the workspace and the
 * caller's terminal with layer no_terminal off). The first two are a
 * workspace and a terminal (a pseudo-terminal master) and the layer is
 * off, so a launcher that drops the third and keeps the message runs it. */
static void
too_many_fds(struct check_ctx *c, struct check_result *r)
{
	uint8_t *m = malloc(PROTO_MAX_MSG);
	int fds[3] = {-1, -1, -1}, n = -ENOMEM;
	bool tty;

	fds[1] = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	tty = fds[1] >= 0;
	if (m != NULL)
		n = encode_run(m,
		    tty ? JOB_LAYER_BIT(JOB_LAYER_NO_TERMINAL) : 0, false);
	fds[0] = open_workspace(c);
	if (!tty)
		fds[1] = fds[0] >= 0 ? dup(fds[0]) : -1;
	fds[2] = devnull();
	if (n < 0 || fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
		check_fail(r, "cannot make the RUN: %s",
		    strerror(n < 0	 ? -n
			    : fds[0] < 0 ? -fds[0]
					 : errno));
	else
		bad_message(c, r, NULL, true, m, (size_t)n, fds, 3, false,
		    tty ? "a RUN with 3 descriptors (workspace, "
			  "terminal, /dev/null)"
			: "a RUN with 3 descriptors (no /dev/ptmx "
			  "here: workspace twice, /dev/null)");
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(m);
}

/* boundary.unknown_type_refused: after HELLO, a message of type 7 (no
 * such type) and, in a second session, an OUTPUT (a launcher-to-broker
 * type), each followed by a valid RUN (proto.h: who sends what; an
 * unknown type ends the session). */
static void
unknown_type(struct check_ctx *c, struct check_result *r)
{
	static const uint16_t bad[] = {PROTO_MSG_TYPE_MAX + 1, PROTO_OUTPUT};
	char first[CHECK_OBSERVED_MAX], what[100];
	uint8_t m[8 + 13] = {0};

	for (size_t i = 0; i < 2; i++) {
		if (bad[i] == PROTO_OUTPUT)
			snprintf(what, sizeof(what),
			    "an OUTPUT (the "
			    "launcher's to send), then a valid RUN");
		else
			snprintf(what, sizeof(what),
			    "a message of type %u "
			    "(none such), then a valid RUN",
			    bad[i]);
		/* OUTPUT's body: job 1, stream 1, no data */
		header(m, bad[i], 13);
		m[8] = 1;
		m[16] = 1;
		bad_message(c, r, NULL, true, m, sizeof(m), NULL, 0, true,
		    what);
		if (r->verdict != CHECK_PASS)
			return;
		if (i == 0)
			snprintf(first, sizeof(first), "%s", r->observed);
	}
	check_pass(r, "both refused; %s", first);
}

/* boundary.wrong_version_refused: HELLO with PROTO_VERSION - 1 (proto.h:
 * the launcher answers the same version or the session ends). */
static void
wrong_version(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];
	char what[64];
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION - 1);

	if (n < 0) {
		check_fail(r, "cannot encode HELLO");
		return;
	}
	snprintf(what, sizeof(what), "a HELLO with protocol version %u",
	    PROTO_VERSION - 1);
	bad_message(c, r, NULL, false, m, (size_t)n, NULL, 0, true, what);
}

/* boundary.run_before_hello_refused: a valid RUN as the first message
 * (proto.h: HELLO first; launcher/supervisor/dispatch.c phase table). */
static void
run_before_hello(struct check_ctx *c, struct check_result *r)
{
	uint8_t *m = malloc(PROTO_MAX_MSG);
	int n = m != NULL ? encode_run(m, 0, false) : -ENOMEM;
	int ws = open_workspace(c);

	if (n < 0 || ws < 0)
		check_fail(r, "cannot make the RUN: %s",
		    strerror(n < 0 ? -n : -ws));
	else
		bad_message(c, r, NULL, false, m, (size_t)n, &ws, 1, false,
		    "a valid RUN before any HELLO");
	if (ws >= 0)
		close(ws);
	free(m);
}

/* boundary.second_hello_refused: a second HELLO after the first was
 * answered (launcher/supervisor/dispatch.c phase table: HELLO only first). */
static void
second_hello(struct check_ctx *c, struct check_result *r)
{
	uint8_t m[16];
	int n = proto_encode_hello(m, sizeof(m), PROTO_VERSION);

	if (n < 0) {
		check_fail(r, "cannot encode HELLO");
		return;
	}
	bad_message(c, r, NULL, true, m, (size_t)n, NULL, 0, true,
	    "a second HELLO");
}

/* boundary.oversized_datagram_refused: after HELLO, a datagram of
 * PROTO_MAX_MSG + 64 bytes whose first PROTO_MAX_MSG bytes are a valid
 * RUN (proto.h: MSG_TRUNC on receipt is fatal; recvmsg(2)). A launcher
 * that ignores the truncation runs that RUN. */
static void
oversized_datagram(struct check_ctx *c, struct check_result *r)
{
	size_t len = PROTO_MAX_MSG + 64;
	uint8_t *m = calloc(1, len);
	int n = m != NULL ? encode_run(m, 0, true) : -ENOMEM;
	int ws = open_workspace(c);

	if (n < 0 || ws < 0)
		check_fail(r, "cannot make the RUN: %s",
		    strerror(n < 0 ? -n : -ws));
	else
		bad_message(c, r, NULL, true, m, len, &ws, 1, false,
		    "a datagram of PROTO_MAX_MSG + 64 bytes (a valid "
		    "RUN, then 64 more)");
	if (ws >= 0)
		close(ws);
	free(m);
}

/* boundary.run_with_file_as_workspace_refused: after HELLO, a valid RUN
 * whose workspace descriptor is a regular file and, in a second session,
 * a unix socket (launcher/supervisor/dispatch.c handle_run: a job whose /work is
 * not a directory must never start; inode(7): the file type is
 * S_IFMT's field, not a bit of it). The launcher refuses it itself
 * ("the descriptor is not a directory"), before its zygote, which holds
 * the privileges, is asked. */
static void
file_as_workspace(struct check_ctx *c, struct check_result *r)
{
	static const char *const kind[] = {"a regular file", "a unix socket"};
	uint8_t *m = malloc(PROTO_MAX_MSG);
	char path[4096], first[CHECK_OBSERVED_MAX], what[120];
	int n = m != NULL ? encode_run(m, 0, false) : -ENOMEM;
	int fd, e;

	check_tmpname(c, "boundary-not-a-dir", path, sizeof(path));
	if (n < 0 ||
	    (e = check_write_file(path, "x\n", 2, true, c->root)) < 0) {
		check_fail(r, "cannot make the RUN or %s: %s", path,
		    strerror(n < 0 ? -n : -e));
		free(m);
		return;
	}
	for (size_t i = 0; i < 2; i++) {
		fd = i == 0 ? open(path, O_RDONLY | O_CLOEXEC)
			    : socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			check_fail(r, "cannot make %s: %s", kind[i],
			    strerror(errno));
			break;
		}
		snprintf(what, sizeof(what),
		    "a valid RUN whose workspace "
		    "descriptor is %s",
		    kind[i]);
		bad_message(c, r, "the descriptor is not a directory", true, m,
		    (size_t)n, &fd, 1, false, what);
		close(fd);
		if (r->verdict != CHECK_PASS)
			break;
		if (i == 0)
			snprintf(first, sizeof(first), "%s", r->observed);
		else
			check_pass(r, "both refused; %s", first);
	}
	free(m);
}

const struct check checks_boundary[] = {
    {"boundary.oversized_length_refused_by_header", "boundary",
	"a header announcing PROTO_MAX_BODY + 1 bytes ends the session at "
	"once, before any body is awaited",
	oversized_length},
    {"boundary.datagram_trailing_bytes_refused", "boundary",
	"a datagram longer than its header says ends the session",
	datagram_trailing},
    {"boundary.hello_trailing_bytes_refused", "boundary",
	"a HELLO body with bytes after the version ends the session",
	hello_trailing},
    {"boundary.descriptor_on_hello_refused", "boundary",
	"a HELLO carrying a descriptor ends the session", fd_on_hello},
    {"boundary.descriptor_on_cancel_refused", "boundary",
	"a CANCEL carrying a descriptor ends the session; the RUN after it "
	"is never answered",
	fd_on_cancel},
    {"boundary.too_many_descriptors_refused", "boundary",
	"a RUN carrying 3 descriptors ends the session, no job runs",
	too_many_fds},
    {"boundary.unknown_type_refused", "boundary",
	"type 7 and OUTPUT sent to the launcher end the session", unknown_type},
    {"boundary.wrong_version_refused", "boundary",
	"a HELLO with another protocol version ends the session unanswered",
	wrong_version},
    {"boundary.run_before_hello_refused", "boundary",
	"a RUN before HELLO ends the session, no job runs", run_before_hello},
    {"boundary.second_hello_refused", "boundary",
	"a second HELLO ends the session unanswered", second_hello},
    {"boundary.oversized_datagram_refused", "boundary",
	"a datagram over PROTO_MAX_MSG (MSG_TRUNC) ends the session, no job "
	"runs",
	oversized_datagram},
    {"boundary.run_with_file_as_workspace_refused", "boundary",
	"a RUN whose workspace descriptor is a regular file, or a socket, "
	"ends the session, no job runs",
	file_as_workspace},
    {NULL, NULL, NULL, NULL},
};
