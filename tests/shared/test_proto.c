/*
 * test_proto.c: the broker <-> launcher wire codec and datagram I/O
 * (shared/proto.c, proto_run.c), style.md rules 4-6 and 10.
 *
 * Round trips of every message; every malformed header; trailing bytes and
 * truncation for every body decoder; bounds before allocation; semantic
 * refusals; encoders refusing what decoders refuse; and descriptors over a
 * real SOCK_SEQPACKET socketpair, counting open descriptors to prove that
 * refused ones are closed. Version 2 (issue 4): RUN's cpu_percent,
 * workspace_bytes, enforcement, cgroup and workspace_allow; RESULT's
 * peak_processes and enforcement. Version 3 (issue 5): RESULT's
 * landlock_abi and denials, with every rule of proto_check_result on them
 * at the encoder and the decoder alike; RUN's seccomp_profile (after
 * workspace_allow) and the test-only mount kind 3.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "proto.h"

#define MIB (UINT64_C(1024) * 1024)
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* One message buffer per test process (Criterion forks a worker per test);
 * room past PROTO_MAX_MSG for trailing-byte and oversize cases. */
static uint8_t msg[PROTO_MAX_MSG + 64];

/* ---- helpers: building job specs ---- */

static char *
xstrdup(const char *s)
{
	char *d = strdup(s);

	cr_assert_not_null(d);
	return d;
}

/* A string of N copies of C; the caller frees it. */
static char *
repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	cr_assert_not_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* A new NULL-terminated array of N copies of the given strings. */
static char **
strv(size_t n, ...)
{
	char **v = calloc(n + 1, sizeof(*v));
	va_list ap;

	cr_assert_not_null(v);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		v[i] = xstrdup(va_arg(ap, const char *));
	va_end(ap);
	return v;
}

/* A valid spec that owns everything (freed with job_spec_clear). */
static void
sample_spec(struct job_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->job_id = UINT64_C(0x0123456789abcdef);
	s->flags = JOB_F_UNSAFE_NO_SECCOMP;
	s->uid = 1000;
	s->gid = 1001;
	s->argc = 3;
	s->argv = strv(3, "/usr/bin/python3", "-c", "print('hi')");
	s->envc = 3;
	s->envp = strv(3, "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "EMPTY=");
	s->hostname = xstrdup("stockade");
	s->user = xstrdup("sandbox");
	s->home = xstrdup("/home/sandbox");
	s->nmounts = 2;
	s->mounts = calloc(2, sizeof(*s->mounts));
	cr_assert_not_null(s->mounts);
	s->mounts[0].kind = MOUNT_RO_BIND;
	s->mounts[0].source = xstrdup("/usr");
	s->mounts[0].target = xstrdup("/usr");
	s->mounts[1].kind = MOUNT_RO_BIND_TRY;
	s->mounts[1].source = xstrdup("/etc/ssl/certs");
	s->mounts[1].target = xstrdup("/etc/ssl/certs2");
	s->limits.wall_ms = 10000;
	s->limits.cpu_ms = 9000;
	s->limits.memory_bytes = (UINT64_C(1) << 40) + 7; /* past 32 bits */
	s->limits.tmp_bytes = 64 * MIB;
	s->limits.home_bytes = 32 * MIB;
	s->limits.fsize_bytes = 16 * MIB + 3;
	s->limits.stdout_bytes = 1 * MIB;
	s->limits.stderr_bytes = 2 * MIB;
	s->limits.nofile = 256;
	s->limits.nproc = 64;
	s->limits.cpu_percent = 150;
	s->limits.workspace_bytes = (UINT64_C(1) << 36) + 5; /* past 32 bits */
	s->enforcement = ENFORCE_CGROUP2;
	s->cgroup = xstrdup("/sys/fs/cgroup/stockade.slice/jobs");
	s->workspace_allow = (UINT64_C(1) << 35) + 11; /* past 32 bits */
	s->seccomp_profile = xstrdup("strict");
	s->stage_files = (UINT64_C(1) << 33) + 13; /* past 32 bits */
}

/* A zeroed result the wire accepts: every RESULT names how its limits
 * were held (ENFORCE_MONITOR or ENFORCE_CGROUP2, never 0). */
static void
result_init(struct job_result *r)
{
	memset(r, 0, sizeof(*r));
	r->enforcement = ENFORCE_MONITOR;
}

/* Replaces the string in SLOT (owned) by a copy of V. */
static void
set_str(char **slot, const char *v)
{
	free(*slot);
	*slot = xstrdup(v);
}

/* Sets denial D to NAME (copied whole, even past a NUL-free 32 bytes:
 * NAME may fill the array), COUNT and FIRST_MS. */
static void
set_denial(struct job_denial *d, const char *name, uint32_t count,
    uint64_t first_ms)
{
	size_t n = strlen(name);

	cr_assert(n <= sizeof(d->syscall));
	memset(d->syscall, 0, sizeof(d->syscall));
	memcpy(d->syscall, name, n);
	d->count = count;
	d->first_ms = first_ms;
}

/* A name of 31 bytes (the longest), of every kind of byte allowed. */
#define NAME_31 "abcdefghijklmnopqrstuvwxyz_:059"

/*
 * Writes N denial entries of D (str syscall, u32 count, u64 first_ms)
 * with no checks at all, however many that is, each name as the bytes up
 * to its NUL or the end of its array.
 */
static void
raw_denial_entries(struct wbuf *w, uint32_t n, const struct job_denial *d)
{
	for (uint32_t i = 0; i < n; i++) {
		wbuf_put_bytes(w, d[i].syscall,
		    strnlen(d[i].syscall, sizeof(d[i].syscall)));
		wbuf_put_u32(w, d[i].count);
		wbuf_put_u64(w, d[i].first_ms);
	}
}

/* The issue 5 part of a RESULT body: i32 landlock_abi, u32 ndenials = N,
 * then N entries of D (raw_denial_entries). */
static void
raw_denials(struct wbuf *w, int32_t abi, uint32_t n, const struct job_denial *d)
{
	wbuf_put_i32(w, abi);
	wbuf_put_u32(w, n);
	raw_denial_entries(w, n, d);
}

/* The denials of A and B agree, entry by entry. */
static void
assert_denials_eq(const struct job_result *a, const struct job_result *b)
{
	cr_assert_eq(a->landlock_abi, b->landlock_abi);
	cr_assert_eq(a->ndenials, b->ndenials);
	for (uint32_t i = 0; i < a->ndenials; i++) {
		cr_assert_str_eq(a->denials[i].syscall, b->denials[i].syscall,
		    "denial %u", i);
		cr_assert_eq(a->denials[i].count, b->denials[i].count,
		    "denial %u", i);
		cr_assert_eq(a->denials[i].first_ms, b->denials[i].first_ms,
		    "denial %u", i);
	}
}

/* A refused RESULT leaves no landlock_abi and no denial behind. */
static void
assert_no_denials(const struct job_result *r)
{
	static const struct job_denial zero[JOB_MAX_DENIALS];

	cr_assert_eq(r->landlock_abi, 0);
	cr_assert_eq(r->ndenials, 0);
	cr_assert_eq(memcmp(r->denials, zero, sizeof(zero)), 0,
	    "denials not cleared");
}

/*
 * Writes the RUN body of S into W exactly as the wire layout says, with no
 * checks at all, so that tests can build bodies the encoder refuses.
 */
static void
raw_run_body(struct wbuf *w, const struct job_spec *s)
{
	wbuf_put_u64(w, s->job_id);
	wbuf_put_u32(w, s->flags);
	wbuf_put_u32(w, s->uid);
	wbuf_put_u32(w, s->gid);
	wbuf_put_u32(w, s->argc);
	for (uint32_t i = 0; i < s->argc; i++)
		wbuf_put_str(w, s->argv[i]);
	wbuf_put_u32(w, s->envc);
	for (uint32_t i = 0; i < s->envc; i++)
		wbuf_put_str(w, s->envp[i]);
	wbuf_put_str(w, s->hostname);
	wbuf_put_str(w, s->user);
	wbuf_put_str(w, s->home);
	wbuf_put_u32(w, s->nmounts);
	for (uint32_t i = 0; i < s->nmounts; i++) {
		wbuf_put_u8(w, (uint8_t)s->mounts[i].kind);
		wbuf_put_str(w, s->mounts[i].source);
		wbuf_put_str(w, s->mounts[i].target);
	}
	wbuf_put_u64(w, s->limits.wall_ms);
	wbuf_put_u64(w, s->limits.cpu_ms);
	wbuf_put_u64(w, s->limits.memory_bytes);
	wbuf_put_u64(w, s->limits.tmp_bytes);
	wbuf_put_u64(w, s->limits.home_bytes);
	wbuf_put_u64(w, s->limits.fsize_bytes);
	wbuf_put_u64(w, s->limits.stdout_bytes);
	wbuf_put_u64(w, s->limits.stderr_bytes);
	wbuf_put_u32(w, s->limits.nofile);
	wbuf_put_u32(w, s->limits.nproc);
	wbuf_put_u32(w, s->limits.cpu_percent);
	wbuf_put_u64(w, s->limits.workspace_bytes);
	wbuf_put_u8(w, (uint8_t)s->enforcement);
	wbuf_put_str(w, s->cgroup ? s->cgroup : "");
	wbuf_put_u64(w, s->workspace_allow);
	wbuf_put_str(w, s->seccomp_profile ? s->seccomp_profile : "default");
	wbuf_put_u32(w, s->layers_off);
	wbuf_put_u16(w, s->proxy_port);
	wbuf_put_u64(w, s->stage_files);
}

static size_t
raw_run(uint8_t *buf, size_t size, const struct job_spec *s)
{
	struct wbuf w;

	wbuf_init(&w, buf, size);
	raw_run_body(&w, s);
	cr_assert(wbuf_ok(&w));
	return w.len;
}

static void
assert_spec_cleared(const struct job_spec *s)
{
	struct job_spec zero;

	memset(&zero, 0, sizeof(zero));
	cr_assert_null(s->argv);
	cr_assert_null(s->envp);
	cr_assert_null(s->hostname);
	cr_assert_null(s->user);
	cr_assert_null(s->home);
	cr_assert_null(s->cgroup);
	cr_assert_null(s->seccomp_profile);
	cr_assert_null(s->mounts);
	cr_assert_eq(s->argc, 0);
	cr_assert_eq(s->envc, 0);
	cr_assert_eq(s->nmounts, 0);
	cr_assert_eq(memcmp(s, &zero, sizeof(zero)), 0, "spec not cleared");
}

static void
assert_spec_eq(const struct job_spec *a, const struct job_spec *b)
{
	cr_assert_eq(a->job_id, b->job_id);
	cr_assert_eq(a->flags, b->flags);
	cr_assert_eq(a->uid, b->uid);
	cr_assert_eq(a->gid, b->gid);
	cr_assert_eq(a->argc, b->argc);
	for (uint32_t i = 0; i < a->argc; i++)
		cr_assert_str_eq(a->argv[i], b->argv[i]);
	cr_assert_null(a->argv[a->argc]);
	cr_assert_null(b->argv[b->argc]);
	cr_assert_eq(a->envc, b->envc);
	if (a->envc > 0)
		for (uint32_t i = 0; i < a->envc; i++)
			cr_assert_str_eq(a->envp[i], b->envp[i]);
	if (b->envp != NULL)
		cr_assert_null(b->envp[b->envc]);
	cr_assert_str_eq(a->hostname, b->hostname);
	cr_assert_str_eq(a->user, b->user);
	cr_assert_str_eq(a->home, b->home);
	cr_assert_eq(a->nmounts, b->nmounts);
	for (uint32_t i = 0; i < a->nmounts; i++) {
		cr_assert_eq(a->mounts[i].kind, b->mounts[i].kind);
		cr_assert_str_eq(a->mounts[i].source, b->mounts[i].source);
		cr_assert_str_eq(a->mounts[i].target, b->mounts[i].target);
	}
	cr_assert_eq(a->limits.wall_ms, b->limits.wall_ms);
	cr_assert_eq(a->limits.cpu_ms, b->limits.cpu_ms);
	cr_assert_eq(a->limits.memory_bytes, b->limits.memory_bytes);
	cr_assert_eq(a->limits.tmp_bytes, b->limits.tmp_bytes);
	cr_assert_eq(a->limits.home_bytes, b->limits.home_bytes);
	cr_assert_eq(a->limits.fsize_bytes, b->limits.fsize_bytes);
	cr_assert_eq(a->limits.stdout_bytes, b->limits.stdout_bytes);
	cr_assert_eq(a->limits.stderr_bytes, b->limits.stderr_bytes);
	cr_assert_eq(a->limits.nofile, b->limits.nofile);
	cr_assert_eq(a->limits.nproc, b->limits.nproc);
	cr_assert_eq(a->limits.cpu_percent, b->limits.cpu_percent);
	cr_assert_eq(a->limits.workspace_bytes, b->limits.workspace_bytes);
	cr_assert_eq(a->enforcement, b->enforcement);
	/* A NULL cgroup travels as "" and always decodes to a string. */
	cr_assert_not_null(b->cgroup);
	cr_assert_str_eq(a->cgroup ? a->cgroup : "", b->cgroup);
	cr_assert_eq(a->workspace_allow, b->workspace_allow);
	/* A NULL profile travels as "default". */
	cr_assert_not_null(b->seccomp_profile);
	cr_assert_str_eq(a->seccomp_profile ? a->seccomp_profile : "default",
	    b->seccomp_profile);
	cr_assert_eq(a->layers_off, b->layers_off);
	cr_assert_eq(a->proxy_port, b->proxy_port);
	cr_assert_eq(a->stage_files, b->stage_files);
}

/* Splits MSG[0..N) and expects TYPE; returns the body length. */
static size_t
header_ok(int n, uint16_t want_type, const uint8_t **body)
{
	uint16_t type = 0;
	size_t body_len = 0;

	cr_assert(n >= (int)PROTO_HEADER_SIZE, "encoder returned %d", n);
	cr_assert_eq(proto_decode_header(msg, (size_t)n, &type, body,
			 &body_len),
	    0);
	cr_assert_eq(type, want_type);
	cr_assert_eq(*body, msg + PROTO_HEADER_SIZE);
	cr_assert_eq(body_len, (size_t)n - PROTO_HEADER_SIZE);
	return body_len;
}

/* Encodes S, decodes it again and returns the decoder's verdict. */
static int
decode_raw_spec(const struct job_spec *s, struct job_spec *out)
{
	size_t n = raw_run(msg, sizeof(msg), s);

	return proto_decode_run(msg, n, out);
}

/*
 * A spec S that proto_decode_run must refuse with WANT: the encoder refuses
 * it too (-EINVAL, nothing written that a peer could take for a message)
 * and a body built by hand gets WANT with the output cleared.
 */
static void
expect_refused_spec(const struct job_spec *s, int want, const char *what)
{
	struct job_spec out;
	int e;

	e = proto_encode_run(msg, sizeof(msg), s);
	cr_assert_eq(e, -EINVAL, "%s: encoder returned %d, want -EINVAL", what,
	    e);
	memset(&out, 0x5a, sizeof(out));
	e = decode_raw_spec(s, &out);
	cr_assert_eq(e, want, "%s: decoder returned %d, want %d", what, e,
	    want);
	assert_spec_cleared(&out);
}

/* ---- message names ---- */

Test(proto, message_names)
{
	cr_assert_str_eq(proto_msg_name(PROTO_HELLO), "HELLO");
	cr_assert_str_eq(proto_msg_name(PROTO_HELLO_REPLY), "HELLO_REPLY");
	cr_assert_str_eq(proto_msg_name(PROTO_RUN), "RUN");
	cr_assert_str_eq(proto_msg_name(PROTO_OUTPUT), "OUTPUT");
	cr_assert_str_eq(proto_msg_name(PROTO_RESULT), "RESULT");
	cr_assert_str_eq(proto_msg_name(PROTO_CANCEL), "CANCEL");
	cr_assert_str_eq(proto_msg_name(PROTO_POOL), "POOL");
	cr_assert_str_eq(proto_msg_name(0), "unknown");
	cr_assert_str_eq(proto_msg_name(PROTO_MSG_TYPE_MAX + 1), "unknown");
	cr_assert_str_eq(proto_msg_name(UINT16_MAX), "unknown");
}

/* The numbers travel on the wire and are never renumbered (proto.h). */
Test(proto, numbers_are_fixed)
{
	cr_assert_eq(PROTO_HELLO, 1);
	cr_assert_eq(PROTO_HELLO_REPLY, 2);
	cr_assert_eq(PROTO_RUN, 3);
	cr_assert_eq(PROTO_OUTPUT, 4);
	cr_assert_eq(PROTO_RESULT, 5);
	cr_assert_eq(PROTO_CANCEL, 6);
	cr_assert_eq(PROTO_POOL, 7);
	cr_assert_eq(PROTO_NET, 8);
	cr_assert_eq(PROTO_STAGE, 9);
	cr_assert_eq(PROTO_MSG_TYPE_MAX, 9);
	cr_assert_eq(PROTO_HEADER_SIZE, 8);
	/* Version 2: RUN and RESULT grew the issue 4 fields; version 3:
	 * RESULT grew landlock_abi and denials (issue 5); version 4: RUN
	 * grew layers_off and may carry the caller's terminal (issue 6);
	 * version 5: POOL (issue 9); version 6: RUN's flag
	 * JOB_F_OUTPUT_KILL, output drained without it (issue 22); version
	 * 7: JOB_F_STDIN (issue 22); version 8: CANCEL's reason and the
	 * status cancelled (issue 22); version 9: RESULT's memory_measure
	 * and limits reached (issue 23); version 10: RUN's proxy_port and
	 * NET (issue 25); version 11: RUN's stage_files and STAGE (issue
	 * 26). */
	cr_assert_eq(PROTO_VERSION, 12);
	cr_assert_eq(JOB_F_UNSAFE_NO_SECCOMP, 0x1u);
	cr_assert_eq(JOB_F_DEVPTS, 0x2u);
	cr_assert_eq(JOB_F_OUTPUT_KILL, 0x4u);
	cr_assert_eq(JOB_F_STDIN, 0x8u);
	cr_assert_eq(PROTO_MAX_FDS, 2);
	/* The layers' numbers and names (result.h), on the wire. */
	cr_assert_eq(JOB_LAYER_LIMITS, 1);
	cr_assert_eq(JOB_LAYER_SECCOMP, 13);
	cr_assert_eq(JOB_LAYER_MAX, 13);
	cr_assert_eq(JOB_LAYERS_ALL, 0x1fffu);
	cr_assert_eq(JOB_MAX_DENIALS, 32);
	cr_assert_eq(JOB_DENIAL_NAME, 32);
}

/* ---- round trips ---- */

Test(round_trip, hello)
{
	const uint8_t *body;
	uint32_t v = 0;
	int n = proto_encode_hello(msg, sizeof(msg), PROTO_VERSION);
	size_t len;

	cr_assert_eq(n, 12);
	/* The header, byte by byte: type 1, reserved 0, body length 4. */
	cr_assert_eq(memcmp(msg, "\x01\x00\x00\x00\x04\x00\x00\x00", 8), 0);
	len = header_ok(n, PROTO_HELLO, &body);
	cr_assert_eq(proto_decode_hello(body, len, &v), 0);
	cr_assert_eq(v, PROTO_VERSION);

	n = proto_encode_hello(msg, sizeof(msg), UINT32_MAX);
	len = header_ok(n, PROTO_HELLO, &body);
	cr_assert_eq(proto_decode_hello(body, len, &v), 0);
	cr_assert_eq(v, UINT32_MAX);
}

Test(round_trip, hello_reply)
{
	const uint8_t *body;
	uint32_t v = 0, pid = 0;
	int n = proto_encode_hello_reply(msg, sizeof(msg), PROTO_VERSION,
	    4194304);
	size_t len = header_ok(n, PROTO_HELLO_REPLY, &body);

	cr_assert_eq(n, 16);
	cr_assert_eq(proto_decode_hello_reply(body, len, &v, &pid), 0);
	cr_assert_eq(v, PROTO_VERSION);
	cr_assert_eq(pid, 4194304);
}

Test(round_trip, run)
{
	struct job_spec in, out;
	const uint8_t *body;
	int n;
	size_t len;

	sample_spec(&in);
	n = proto_encode_run(msg, sizeof(msg), &in);
	len = header_ok(n, PROTO_RUN, &body);
	cr_assert_eq(proto_decode_run(body, len, &out), 0);
	assert_spec_eq(&in, &out);
	job_spec_clear(&out);
	job_spec_clear(&in);
	assert_spec_cleared(&in);
	job_spec_clear(NULL);
}

Test(round_trip, run_minimal)
{
	struct job_spec in, out;
	const uint8_t *body;
	int n;
	size_t len;

	sample_spec(&in);
	/* No environment, no mounts, one argument, the smallest limits. */
	for (uint32_t i = 0; i < in.envc; i++)
		free(in.envp[i]);
	free(in.envp);
	in.envp = NULL;
	in.envc = 0;
	free(in.mounts[0].source);
	free(in.mounts[0].target);
	free(in.mounts[1].source);
	free(in.mounts[1].target);
	free(in.mounts);
	in.mounts = NULL;
	in.nmounts = 0;
	free(in.argv[1]);
	free(in.argv[2]);
	in.argv[1] = in.argv[2] = NULL;
	in.argc = 1;
	in.flags = 0;
	in.uid = in.gid = 1;
	memset(&in.limits, 0, sizeof(in.limits));
	in.limits.wall_ms = in.limits.cpu_ms = in.limits.memory_bytes = 1;
	in.limits.tmp_bytes = in.limits.home_bytes = in.limits.fsize_bytes = 1;
	in.limits.stdout_bytes = in.limits.stderr_bytes = 1;
	in.limits.nofile = in.limits.nproc = 1;
	in.limits.workspace_bytes = 1;
	/* cpu_percent 0 (none), enforcement auto, no cgroup (NULL travels
	 * as ""), a full workspace (nothing may be added). */
	in.enforcement = ENFORCE_AUTO;
	free(in.cgroup);
	in.cgroup = NULL;
	in.workspace_allow = 0;
	free(in.seccomp_profile);
	in.seccomp_profile = NULL; /* travels as "default" */

	n = proto_encode_run(msg, sizeof(msg), &in);
	len = header_ok(n, PROTO_RUN, &body);
	cr_assert_eq(proto_decode_run(body, len, &out), 0);
	assert_spec_eq(&in, &out);
	/* An empty environment still decodes to a NULL-terminated array. */
	cr_assert_not_null(out.envp);
	cr_assert_null(out.envp[0]);
	job_spec_clear(&out);
	job_spec_clear(&in);
}

/* Every count at its bound, every string at its bound. */
Test(round_trip, run_at_the_bounds)
{
	struct job_spec in, out;
	const uint8_t *body;
	int n;
	size_t len;

	sample_spec(&in);
	for (uint32_t i = 0; i < in.argc; i++)
		free(in.argv[i]);
	free(in.argv);
	in.argc = JOB_MAX_ARGS;
	in.argv = calloc(JOB_MAX_ARGS + 1, sizeof(char *));
	cr_assert_not_null(in.argv);
	for (uint32_t i = 0; i < JOB_MAX_ARGS; i++)
		in.argv[i] = xstrdup(i == 0 ? "/bin/true" : "x");
	free(in.argv[1]);
	in.argv[1] = repeat('a', JOB_MAX_STR);

	for (uint32_t i = 0; i < in.envc; i++)
		free(in.envp[i]);
	free(in.envp);
	in.envc = JOB_MAX_ENV;
	in.envp = calloc(JOB_MAX_ENV + 1, sizeof(char *));
	cr_assert_not_null(in.envp);
	for (uint32_t i = 0; i < JOB_MAX_ENV; i++)
		in.envp[i] = xstrdup("V=1");

	free(in.hostname);
	in.hostname = repeat('h', JOB_MAX_HOSTNAME);

	for (uint32_t i = 0; i < in.nmounts; i++) {
		free(in.mounts[i].source);
		free(in.mounts[i].target);
	}
	free(in.mounts);
	in.nmounts = JOB_MAX_MOUNTS;
	in.mounts = calloc(JOB_MAX_MOUNTS, sizeof(*in.mounts));
	cr_assert_not_null(in.mounts);
	for (uint32_t i = 0; i < JOB_MAX_MOUNTS; i++) {
		in.mounts[i].kind = i % 2 ? MOUNT_RO_BIND : MOUNT_RO_BIND_TRY;
		in.mounts[i].source = xstrdup("/usr/lib");
		in.mounts[i].target = xstrdup("/usr/lib");
	}
	in.flags = JOB_F_KNOWN;
	in.uid = in.gid = UINT32_MAX;
	in.job_id = UINT64_MAX;
	in.limits.wall_ms = UINT64_MAX;
	in.limits.nproc = UINT32_MAX;
	in.limits.cpu_percent = PROTO_MAX_CPU_PERCENT;
	in.limits.workspace_bytes = UINT64_MAX;
	in.workspace_allow = UINT64_MAX;
	free(in.cgroup);
	in.cgroup = repeat('c', JOB_MAX_STR);
	in.cgroup[0] = '/';

	n = proto_encode_run(msg, sizeof(msg), &in);
	len = header_ok(n, PROTO_RUN, &body);
	cr_assert_eq(proto_decode_run(body, len, &out), 0);
	assert_spec_eq(&in, &out);
	job_spec_clear(&out);
	job_spec_clear(&in);
}

/* The issue 4 tail of RUN: every enforcement a spec may carry (auto,
 * monitor, cgroup2), the cgroup as NULL, "" or a path, and the workspace
 * allowance at 0, just past 32 bits and at its maximum. */
Test(round_trip, run_enforcement_cgroup_and_allowance)
{
	static const enum job_enforcement enf[] = {ENFORCE_AUTO,
	    ENFORCE_MONITOR, ENFORCE_CGROUP2};
	static const char *const cgroups[] = {NULL, "",
	    "/sys/fs/cgroup/user.slice/user-1000.slice/stockade", "/a"};
	static const uint64_t allow[] = {0, UINT64_C(1) << 32,
	    (UINT64_C(1) << 32) + 1, UINT64_MAX};
	static uint8_t raw[4096];
	int tried = 0;

	cr_assert_eq(ENFORCE_AUTO, 0);
	cr_assert_eq(ENFORCE_MONITOR, 1);
	cr_assert_eq(ENFORCE_CGROUP2, 2);
	for (size_t e = 0; e < NELEM(enf); e++)
		for (size_t c = 0; c < NELEM(cgroups); c++)
			for (size_t a = 0; a < NELEM(allow); a++) {
				struct job_spec in, out;
				const uint8_t *body;
				size_t len;
				int n;

				sample_spec(&in);
				in.enforcement = enf[e];
				free(in.cgroup);
				in.cgroup = cgroups[c] ? xstrdup(cgroups[c])
						       : NULL;
				in.workspace_allow = allow[a];
				n = proto_encode_run(msg, sizeof(msg), &in);
				len = header_ok(n, PROTO_RUN, &body);
				memset(&out, 0x5a, sizeof(out));
				cr_assert_eq(proto_decode_run(body, len, &out),
				    0, "enforcement %d, cgroup %s", (int)enf[e],
				    cgroups[c] ? cgroups[c] : "NULL");
				assert_spec_eq(&in, &out);
				cr_assert_eq(out.enforcement, enf[e]);
				cr_assert_eq(out.workspace_allow, allow[a]);
				/* The hand-built body (the layout the other
				 * tests rely on) is the encoder's, byte for
				 * byte. */
				cr_assert_eq(raw_run(raw, sizeof(raw), &in),
				    len);
				cr_assert_eq(memcmp(raw, body, len), 0);
				job_spec_clear(&out);
				job_spec_clear(&in);
				tried++;
			}
	cr_assert_eq(tried, 3 * 4 * 4);
}

/* cpu_percent and workspace_bytes at their ends: 0 (no CPU cap) and
 * PROTO_MAX_CPU_PERCENT; 1 byte and UINT64_MAX. */
Test(round_trip, run_new_limits_at_their_ends)
{
	static const uint32_t pct[] = {0, 1, 100, PROTO_MAX_CPU_PERCENT};
	static const uint64_t ws[] = {1, UINT64_C(1) << 32, UINT64_MAX};

	for (size_t i = 0; i < NELEM(pct); i++)
		for (size_t j = 0; j < NELEM(ws); j++) {
			struct job_spec in, out;
			const uint8_t *body;
			size_t len;
			int n;

			sample_spec(&in);
			in.limits.cpu_percent = pct[i];
			in.limits.workspace_bytes = ws[j];
			n = proto_encode_run(msg, sizeof(msg), &in);
			len = header_ok(n, PROTO_RUN, &body);
			cr_assert_eq(proto_decode_run(body, len, &out), 0,
			    "cpu_percent %u", pct[i]);
			assert_spec_eq(&in, &out);
			job_spec_clear(&out);
			job_spec_clear(&in);
		}
}

Test(round_trip, output_empty)
{
	const uint8_t *body, *data = NULL;
	uint64_t id = 0;
	uint8_t stream = 0;
	size_t len, dlen = 99;
	int n = proto_encode_output(msg, sizeof(msg), 42, 1, "", 0);

	len = header_ok(n, PROTO_OUTPUT, &body);
	cr_assert_eq(proto_decode_output(body, len, &id, &stream, &data, &dlen),
	    0);
	cr_assert_eq(id, 42);
	cr_assert_eq(stream, 1);
	cr_assert_eq(dlen, 0);

	/* NULL data with length 0 is an empty chunk too. */
	n = proto_encode_output(msg, sizeof(msg), 43, 2, NULL, 0);
	len = header_ok(n, PROTO_OUTPUT, &body);
	cr_assert_eq(proto_decode_output(body, len, &id, &stream, &data, &dlen),
	    0);
	cr_assert_eq(id, 43);
	cr_assert_eq(stream, 2);
	cr_assert_eq(dlen, 0);
}

Test(round_trip, output_full_chunk)
{
	static uint8_t chunk[PROTO_OUTPUT_CHUNK];
	const uint8_t *body, *data = NULL;
	uint64_t id = 0;
	uint8_t stream = 0;
	size_t len, dlen = 0;
	int n;

	for (size_t i = 0; i < sizeof(chunk); i++)
		chunk[i] = (uint8_t)(i * 7 + (i >> 8)); /* NULs included */
	n = proto_encode_output(msg, sizeof(msg), UINT64_MAX, 2, chunk,
	    sizeof(chunk));
	len = header_ok(n, PROTO_OUTPUT, &body);
	cr_assert_eq(proto_decode_output(body, len, &id, &stream, &data, &dlen),
	    0);
	cr_assert_eq(id, UINT64_MAX);
	cr_assert_eq(stream, 2);
	cr_assert_eq(dlen, sizeof(chunk));
	/* Borrowed from the body, not copied. */
	cr_assert(data >= body && data + dlen <= body + len);
	cr_assert_eq(memcmp(data, chunk, sizeof(chunk)), 0);
}

Test(round_trip, result)
{
	struct job_result in, out;
	const uint8_t *body;
	int n;
	size_t len;

	result_init(&in);
	in.job_id = 77;
	in.status = JOB_CRASH;
	in.exit_code = -1;
	in.signal = 11;
	in.wall_ms = 1234;
	in.cpu_ms = (UINT64_C(1) << 33) + 1;
	in.peak_memory_kb = 4096;
	in.peak_processes = UINT32_MAX; /* any u32 */
	in.enforcement = ENFORCE_CGROUP2;
	in.landlock_abi = 6;
	in.ndenials = 2;
	set_denial(&in.denials[0], "ptrace", 3, 12);
	set_denial(&in.denials[1], "i386:20", 1, 40);
	in.stdout_bytes = 10;
	in.stderr_bytes = INT64_MAX; /* the largest figure a RESULT carries */
	in.detail = xstrdup("killed by SIGSEGV at 0x0");
	n = proto_encode_result(msg, sizeof(msg), &in);
	len = header_ok(n, PROTO_RESULT, &body);
	cr_assert_eq(proto_decode_result(body, len, &out), 0);
	assert_denials_eq(&in, &out);
	cr_assert_eq(out.job_id, in.job_id);
	cr_assert_eq(out.status, in.status);
	cr_assert_eq(out.exit_code, in.exit_code);
	cr_assert_eq(out.signal, in.signal);
	cr_assert_eq(out.wall_ms, in.wall_ms);
	cr_assert_eq(out.cpu_ms, in.cpu_ms);
	cr_assert_eq(out.peak_memory_kb, in.peak_memory_kb);
	cr_assert_eq(out.peak_processes, in.peak_processes);
	cr_assert_eq(out.enforcement, in.enforcement);
	cr_assert_eq(out.stdout_bytes, in.stdout_bytes);
	cr_assert_eq(out.stderr_bytes, in.stderr_bytes);
	cr_assert_str_eq(out.detail, in.detail);
	cr_assert_neq(out.detail, in.detail);
	job_result_clear(&out);
	job_result_clear(&in);
}

/* The two enforcements a RESULT may name, with peak_processes at 0, 1
 * and the largest u32; each figure lands in its own field. */
Test(round_trip, result_enforcement_and_peak_processes)
{
	static const enum job_enforcement enf[] = {ENFORCE_MONITOR,
	    ENFORCE_CGROUP2};
	static const uint32_t peaks[] = {0, 1, 65536, UINT32_MAX};

	for (size_t e = 0; e < NELEM(enf); e++)
		for (size_t p = 0; p < NELEM(peaks); p++) {
			struct job_result in, out;
			const uint8_t *body;
			size_t len;
			int n;

			result_init(&in);
			in.status = JOB_PROCESS_LIMIT;
			in.exit_code = -1;
			in.signal = 9;
			in.wall_ms = 1001;
			in.cpu_ms = 1002;
			in.peak_memory_kb = 1003;
			in.peak_processes = peaks[p];
			in.enforcement = enf[e];
			in.stdout_bytes = 1004;
			in.stderr_bytes = 1005;
			n = proto_encode_result(msg, sizeof(msg), &in);
			len = header_ok(n, PROTO_RESULT, &body);
			cr_assert_eq(proto_decode_result(body, len, &out), 0);
			cr_assert_eq(out.peak_processes, peaks[p]);
			cr_assert_eq(out.enforcement, enf[e]);
			cr_assert_eq(out.wall_ms, 1001);
			cr_assert_eq(out.cpu_ms, 1002);
			cr_assert_eq(out.peak_memory_kb, 1003);
			cr_assert_eq(out.stdout_bytes, 1004);
			cr_assert_eq(out.stderr_bytes, 1005);
			job_result_clear(&out);
		}
}

/* Whether STATUS goes with CODE and SIG (the rule of proto.c's
 * check_result, written out independently). */
static bool
consistent(int status, int32_t code, int32_t sig)
{
	switch (status) {
	case JOB_OK:
		return code == 0 && sig == 0;
	case JOB_EXIT_NONZERO:
		return code >= 1 && code <= 255 && sig == 0;
	case JOB_CRASH:
	case JOB_CANCELLED:
		return code == -1 && sig >= 1 && sig <= 64;
	default:
		return true;
	}
}

Test(round_trip, result_every_status_and_range_ends)
{
	static const int32_t codes[] = {-1, 0, 1, 255};
	static const int32_t sigs[] = {0, 1, 64};
	int tried = 0;

	for (int st = 0; st <= JOB_STATUS_MAX; st++)
		for (size_t c = 0; c < NELEM(codes); c++)
			for (size_t s = 0; s < NELEM(sigs); s++) {
				struct job_result in, out;
				const uint8_t *body;
				size_t len;
				int n;

				/* The other combinations: result_consistency. */
				if (!consistent(st, codes[c], sigs[s]))
					continue;
				tried++;
				result_init(&in);
				in.status = (enum job_status)st;
				in.exit_code = codes[c];
				in.signal = sigs[s];
				n = proto_encode_result(msg, sizeof(msg), &in);
				len = header_ok(n, PROTO_RESULT, &body);
				cr_assert_eq(proto_decode_result(body, len,
						 &out),
				    0);
				cr_assert_eq(out.status, in.status);
				cr_assert_eq(out.exit_code, in.exit_code);
				cr_assert_eq(out.signal, in.signal);
				/* NULL detail travels as "". */
				cr_assert_str_eq(out.detail, "");
				job_result_clear(&out);
			}
	/* 9 statuses x 12 pairs; ok (0, 0); exit_nonzero (1, 0) and
	 * (255, 0); crash and cancelled (-1, 1) and (-1, 64). */
	cr_assert_eq(tried, 9 * 12 + 1 + 2 + 2 + 2);
}

Test(round_trip, result_longest_detail)
{
	struct job_result in, out;
	const uint8_t *body;
	size_t len;
	int n;

	result_init(&in);
	in.status = JOB_SANDBOX_ERROR;
	in.exit_code = -1;
	in.detail = repeat('d', JOB_MAX_DETAIL);
	n = proto_encode_result(msg, sizeof(msg), &in);
	len = header_ok(n, PROTO_RESULT, &body);
	cr_assert_eq(proto_decode_result(body, len, &out), 0);
	cr_assert_str_eq(out.detail, in.detail);
	job_result_clear(&out);
	job_result_clear(&in);
}

/*
 * Writes the whole RESULT body of R with status STATUS exactly as the
 * wire layout of version 3 says, with no checks at all: the issue 4
 * figures, then after enforcement the issue 5 part (raw_denials), then
 * the stream sizes and the detail (NULL as "").
 */
static void
raw_result_body(struct wbuf *w, uint32_t status, const struct job_result *r)
{
	wbuf_put_u64(w, r->job_id);
	wbuf_put_u32(w, status);
	wbuf_put_i32(w, r->exit_code);
	wbuf_put_i32(w, r->signal);
	wbuf_put_u64(w, r->wall_ms);
	wbuf_put_u64(w, r->cpu_ms);
	wbuf_put_u64(w, r->peak_memory_kb);
	wbuf_put_u32(w, r->peak_processes);
	wbuf_put_u8(w, (uint8_t)r->enforcement);
	raw_denials(w, r->landlock_abi,
	    r->ndenials < JOB_MAX_DENIALS ? r->ndenials : JOB_MAX_DENIALS,
	    r->denials);
	wbuf_put_u64(w, r->stdout_bytes);
	wbuf_put_u64(w, r->stderr_bytes);
	/* Version 9: the memory measure, then the limits reached. */
	wbuf_put_u8(w, r->memory_measure);
	wbuf_put_u8(w, (uint8_t)r->nreached);
	for (uint32_t i = 0; i < r->nreached; i++) {
		wbuf_put_u8(w, r->reached[i].limit);
		wbuf_put_u32(w, r->reached[i].times);
	}
	wbuf_put_str(w, r->detail ? r->detail : "");
}

/*
 * Version 9 (issue 23): every memory measure and a processes limit
 * reached N times travel and land in their fields, at the layout
 * raw_result_body writes; an unknown measure or kind, a kind twice, a
 * count of 0 or more entries than JOB_MAX_REACHED is refused.
 */
Test(round_trip, result_measure_and_limits_reached)
{
	static uint8_t hand[PROTO_MAX_MSG];

	for (int m = 0; m <= MEASURE_MAX; m++) {
		struct job_result in, out;
		const uint8_t *body;
		struct wbuf w;
		size_t len;
		int n;

		result_init(&in);
		in.status = JOB_OK;
		in.memory_measure = (uint8_t)m;
		in.nreached = 1;
		in.reached[0].limit = JOB_REACHED_PROCESSES;
		in.reached[0].times = 7u + (uint32_t)m;
		n = proto_encode_result(msg, sizeof(msg), &in);
		len = header_ok(n, PROTO_RESULT, &body);
		wbuf_init(&w, hand, sizeof(hand));
		raw_result_body(&w, JOB_OK, &in);
		cr_assert_eq(w.len, len);
		cr_assert_eq(memcmp(hand, body, len), 0, "measure %d", m);
		cr_assert_eq(proto_decode_result(body, len, &out), 0);
		cr_assert_eq(out.memory_measure, m);
		cr_assert_eq(out.nreached, 1);
		cr_assert_eq(out.reached[0].limit, JOB_REACHED_PROCESSES);
		cr_assert_eq(out.reached[0].times, 7u + (uint32_t)m);
		job_result_clear(&out);
	}
	for (int bad = 0; bad < 5; bad++) {
		struct job_result in, out;
		const uint8_t *body;
		struct wbuf w;
		size_t len;

		result_init(&in);
		in.status = JOB_OK;
		in.memory_measure = MEASURE_RSS_SUM;
		in.nreached = 1;
		in.reached[0].limit = JOB_REACHED_PROCESSES;
		in.reached[0].times = 1;
		switch (bad) {
		case 0:
			in.memory_measure = MEASURE_MAX + 1;
			break;
		case 1:
			in.reached[0].limit = JOB_REACHED_MAX + 1;
			break;
		case 2:
			in.reached[0].times = 0;
			break;
		case 3:
			in.nreached = 2;
			in.reached[1] = in.reached[0];
			break;
		default:
			in.nreached = JOB_MAX_REACHED + 1;
			break;
		}
		cr_assert_lt(proto_encode_result(msg, sizeof(msg), &in), 0,
		    "case %d encoded", bad);
		wbuf_init(&w, hand, sizeof(hand));
		wbuf_put_u32(&w, PROTO_RESULT);
		wbuf_put_u32(&w, 0);
		if (bad == 4) {
			/* More entries than fit: written by hand. */
			in.nreached = JOB_MAX_REACHED;
			raw_result_body(&w, JOB_OK, &in);
			/* The count: before the entries (5 bytes each)
			 * and the empty detail (its u32 length). */
			hand[w.len - 4 - JOB_MAX_REACHED * 5 - 1] =
			    JOB_MAX_REACHED + 1;
		} else {
			raw_result_body(&w, JOB_OK, &in);
		}
		body = hand + PROTO_HEADER_SIZE;
		len = w.len - PROTO_HEADER_SIZE;
		cr_assert_lt(proto_decode_result(body, len, &out), 0,
		    "case %d decoded", bad);
	}
}

/* Fills R with N denials: "ptrace", "i386:20", a 31-byte name, then
 * names of their own ("call3" ...), counts and times that differ. */
static void
fill_denials(struct job_result *r, uint32_t n)
{
	char name[JOB_DENIAL_NAME];

	r->ndenials = n;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "call%u", i);
		set_denial(&r->denials[i],
		    i == 0	 ? "ptrace"
			: i == 1 ? "i386:20"
			: i == 2 ? NAME_31
				 : name,
		    i == 3 ? UINT32_MAX : i + 1,
		    i == 4 ? (uint64_t)INT64_MAX : 1000u * i + 7);
	}
}

/*
 * Version 3: 0, 1 and 32 denials with landlock_abi 0, 6 and 1000; each
 * decodes to what went in, in order, and the encoder writes exactly the
 * body written by hand from the layout in the brief (so the fields sit
 * where proto.h says, after enforcement and before stdout_bytes).
 */
Test(round_trip, result_denials_and_landlock_abi)
{
	static const uint32_t counts[] = {0, 1, 2, 3, JOB_MAX_DENIALS};
	static const int32_t abis[] = {0, 6, 1000};
	static uint8_t hand[PROTO_MAX_MSG];

	for (size_t c = 0; c < NELEM(counts); c++)
		for (size_t a = 0; a < NELEM(abis); a++) {
			struct job_result in, out;
			const uint8_t *body;
			struct wbuf w;
			size_t len;
			int n;

			result_init(&in);
			in.job_id = 5;
			in.status = JOB_POLICY_VIOLATION;
			in.exit_code = -1;
			in.signal = 31;
			in.wall_ms = 17;
			in.peak_processes = 2;
			in.enforcement = ENFORCE_CGROUP2;
			in.landlock_abi = abis[a];
			fill_denials(&in, counts[c]);
			in.stdout_bytes = 8;
			in.stderr_bytes = 9;
			in.detail = xstrdup("killed for ptrace");
			n = proto_encode_result(msg, sizeof(msg), &in);
			len = header_ok(n, PROTO_RESULT, &body);

			wbuf_init(&w, hand, sizeof(hand));
			raw_result_body(&w, JOB_POLICY_VIOLATION, &in);
			cr_assert(wbuf_ok(&w));
			cr_assert_eq(w.len, len,
			    "%u denials, abi %d: %zu != %zu", counts[c],
			    abis[a], w.len, len);
			cr_assert_eq(memcmp(hand, body, len), 0,
			    "%u denials, abi %d: layout differs", counts[c],
			    abis[a]);

			memset(&out, 0x5a, sizeof(out));
			cr_assert_eq(proto_decode_result(body, len, &out), 0,
			    "%u denials, abi %d", counts[c], abis[a]);
			assert_denials_eq(&in, &out);
			cr_assert_eq(out.stdout_bytes, 8);
			cr_assert_eq(out.stderr_bytes, 9);
			cr_assert_eq(out.peak_processes, 2);
			cr_assert_eq(out.enforcement, ENFORCE_CGROUP2);
			cr_assert_str_eq(out.detail, "killed for ptrace");
			if (counts[c] >= 3) {
				cr_assert_str_eq(out.denials[0].syscall,
				    "ptrace");
				cr_assert_str_eq(out.denials[1].syscall,
				    "i386:20");
				cr_assert_str_eq(out.denials[2].syscall,
				    NAME_31);
				cr_assert_eq(strlen(out.denials[2].syscall),
				    31);
			}
			/* Entries past ndenials stay zero. */
			for (uint32_t i = counts[c]; i < JOB_MAX_DENIALS; i++)
				cr_assert_eq(out.denials[i].count, 0);
			job_result_clear(&out);
			job_result_clear(&in);
		}
}

/* Bytes after the name in its array, past the NUL, do not travel. */
Test(round_trip, result_denial_name_stops_at_its_nul)
{
	struct job_result in, out;
	const uint8_t *body;
	size_t len;
	int n;

	result_init(&in);
	in.ndenials = 1;
	set_denial(&in.denials[0], "bpf", 1, 0);
	memset(in.denials[0].syscall + 4, 'Z', JOB_DENIAL_NAME - 4);
	n = proto_encode_result(msg, sizeof(msg), &in);
	len = header_ok(n, PROTO_RESULT, &body);
	cr_assert_null(memmem(body, len, "Z", 1));
	cr_assert_eq(proto_decode_result(body, len, &out), 0);
	cr_assert_str_eq(out.denials[0].syscall, "bpf");
	job_result_clear(&out);
}

Test(round_trip, cancel)
{
	const uint8_t *body;
	uint64_t id = 0;
	uint32_t reason = 0;

	for (uint32_t r = 1; r <= JOB_CANCEL_MAX; r++) {
		int n = proto_encode_cancel(msg, sizeof(msg),
		    UINT64_C(0xfedcba9876543210), r);
		size_t len = header_ok(n, PROTO_CANCEL, &body);

		cr_assert_eq(n, 20);
		cr_assert_eq(proto_decode_cancel(body, len, &id, &reason), 0);
		cr_assert_eq(id, UINT64_C(0xfedcba9876543210));
		cr_assert_eq(reason, r);
	}
}

/* A CANCEL's reason is 1..JOB_CANCEL_MAX, on either side (issue 22). */
Test(round_trip, cancel_reason_out_of_range)
{
	static const uint32_t bad[] = {0, JOB_CANCEL_MAX + 1, UINT32_MAX};
	uint64_t id = 9;
	uint32_t reason = 9;
	int n;

	cr_assert_eq(JOB_CANCEL_SIGINT, 1);
	cr_assert_eq(JOB_CANCEL_SIGTERM, 2);
	cr_assert_eq(JOB_CANCEL_SIGHUP, 3);
	cr_assert_eq(JOB_CANCEL_REQUEST, 4);
	cr_assert_eq(JOB_CANCEL_CLIENT_GONE, 5);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(proto_encode_cancel(msg, sizeof(msg), 1, bad[i]),
		    -EINVAL);
		n = proto_encode_cancel(msg, sizeof(msg), 1,
		    JOB_CANCEL_REQUEST);
		cr_assert_eq(n, 20);
		/* The reason is the last four bytes, little-endian. */
		msg[16] = (uint8_t)bad[i];
		msg[17] = (uint8_t)(bad[i] >> 8);
		msg[18] = (uint8_t)(bad[i] >> 16);
		msg[19] = (uint8_t)(bad[i] >> 24);
		cr_assert_eq(proto_decode_cancel(msg + 8, 12, &id, &reason),
		    -EINVAL);
		cr_assert_eq(id, 0);
		cr_assert_eq(reason, 0);
	}
}

Test(round_trip, pool)
{
	const uint8_t *body;
	uint32_t jails = 99;
	int n = proto_encode_pool(msg, sizeof(msg), PROTO_MAX_POOL);
	size_t len = header_ok(n, PROTO_POOL, &body);

	cr_assert_eq(n, 12);
	cr_assert_eq(proto_decode_pool(body, len, &jails), 0);
	cr_assert_eq(jails, PROTO_MAX_POOL);
	/* Over the bound: refused both ways. */
	cr_assert_eq(proto_encode_pool(msg, sizeof(msg), PROTO_MAX_POOL + 1),
	    -EINVAL);
	msg[8] = (uint8_t)(PROTO_MAX_POOL + 1);
	cr_assert_eq(proto_decode_pool(body, len, &jails), -EINVAL);
	cr_assert_eq(jails, 0);
	/* Short and long bodies. */
	cr_assert_eq(proto_decode_pool(body, len - 1, &jails), -EBADMSG);
	cr_assert_eq(proto_decode_pool(body, len + 1, &jails), -EBADMSG);
}

/* NET (issue 25): the job id alone; the descriptors travel beside it. */
Test(round_trip, net)
{
	const uint8_t *body;
	uint64_t id = 5;
	int n = proto_encode_net(msg, sizeof(msg),
	    UINT64_C(0x0102030405060708));
	size_t len = header_ok(n, PROTO_NET, &body);

	cr_assert_eq(n, 16);
	cr_assert_eq(memcmp(msg, "\x08\x00\x00\x00\x08\x00\x00\x00", 8), 0);
	cr_assert_eq(proto_decode_net(body, len, &id), 0);
	cr_assert_eq(id, UINT64_C(0x0102030405060708));
	for (size_t l = 0; l < len; l++) {
		id = 5;
		cr_assert_eq(proto_decode_net(body, l, &id), -EBADMSG);
		cr_assert_eq(id, 0);
	}
	cr_assert_eq(proto_decode_net(body, len + 1, &id), -EBADMSG);
	cr_assert_eq(id, 0);
	cr_assert_eq(proto_encode_net(msg, 15, 1), -ENOBUFS);
	cr_assert_str_eq(proto_msg_name(PROTO_NET), "NET");
}

/* STAGE (issue 26): the job id and the stage's token; its descriptor
 * travels beside it. */
Test(round_trip, stage)
{
	const uint8_t *body;
	uint8_t token[PROTO_STAGE_TOKEN_BYTES], got[PROTO_STAGE_TOKEN_BYTES];
	uint64_t id = 5;
	int n;
	size_t len;

	for (size_t i = 0; i < sizeof(token); i++)
		token[i] = (uint8_t)(0xa0 + i);
	n = proto_encode_stage(msg, sizeof(msg), UINT64_C(0x0102030405060708),
	    token);
	len = header_ok(n, PROTO_STAGE, &body);
	cr_assert_eq(n, 16 + PROTO_STAGE_TOKEN_BYTES);
	cr_assert_eq(memcmp(msg, "\x09\x00\x00\x00\x28\x00\x00\x00", 8), 0);
	cr_assert_eq(proto_decode_stage(body, len, &id, got), 0);
	cr_assert_eq(id, UINT64_C(0x0102030405060708));
	cr_assert_eq(memcmp(got, token, sizeof(token)), 0);
	for (size_t l = 0; l < len; l++) {
		id = 5;
		got[0] = 1;
		cr_assert_eq(proto_decode_stage(body, l, &id, got), -EBADMSG);
		cr_assert_eq(id, 0);
		cr_assert_eq(got[0], 0);
	}
	cr_assert_eq(proto_decode_stage(body, len + 1, &id, got), -EBADMSG);
	cr_assert_eq(proto_encode_stage(msg, 15 + PROTO_STAGE_TOKEN_BYTES, 1,
			 token),
	    -ENOBUFS);
	cr_assert_str_eq(proto_msg_name(PROTO_STAGE), "STAGE");
}

/* stage_files (issue 26): every count travels, last in the body, as a
 * little-endian u64. */
Test(round_trip, run_stage_files)
{
	static const uint64_t counts[] = {0, 1, 4096, UINT64_MAX};

	for (size_t i = 0; i < NELEM(counts); i++) {
		struct job_spec in, out;
		const uint8_t *body;
		size_t len;
		int n;

		sample_spec(&in);
		in.stage_files = counts[i];
		n = proto_encode_run(msg, sizeof(msg), &in);
		len = header_ok(n, PROTO_RUN, &body);
		for (int b = 0; b < 8; b++)
			cr_assert_eq(body[len - 8 + (size_t)b],
			    (uint8_t)(counts[i] >> (8 * b)));
		cr_assert_eq(proto_decode_run(body, len, &out), 0);
		assert_spec_eq(&in, &out);
		job_spec_clear(&out);
		job_spec_clear(&in);
	}
}

/* proxy_port (issue 25): every port travels, last in the body, as a
 * little-endian u16; 0 is a job without network. */
Test(round_trip, run_proxy_port)
{
	static const uint16_t ports[] = {0, 1, 3128, 65535};

	for (size_t i = 0; i < NELEM(ports); i++) {
		struct job_spec in, out;
		const uint8_t *body;
		size_t len;
		int n;

		sample_spec(&in);
		in.proxy_port = ports[i];
		n = proto_encode_run(msg, sizeof(msg), &in);
		len = header_ok(n, PROTO_RUN, &body);
		cr_assert_eq(body[len - 10], (uint8_t)ports[i]);
		cr_assert_eq(body[len - 9], (uint8_t)(ports[i] >> 8));
		cr_assert_eq(proto_decode_run(body, len, &out), 0, "%u",
		    ports[i]);
		assert_spec_eq(&in, &out);
		job_spec_clear(&out);
		/* A body of the older versions (no port, no stage_files)
		 * is refused. */
		cr_assert_eq(proto_decode_run(body, len - 8, &out), -EBADMSG);
		cr_assert_eq(proto_decode_run(body, len - 10, &out), -EBADMSG);
		job_spec_clear(&in);
	}
}

/* A proxy port needs the jail's own network namespace and its user
 * namespace: init makes the listener and the routes there, never in
 * the host's (proto_check.c). */
Test(semantic, proxy_port_without_its_namespaces)
{
	static const uint32_t off[] = {JOB_LAYER_BIT(JOB_LAYER_NETWORK_NS),
	    JOB_LAYER_BIT(JOB_LAYER_USER_NS) | JOB_LAYER_BIT(JOB_LAYER_PID_NS) |
		JOB_LAYER_BIT(JOB_LAYER_MOUNT_NS) |
		JOB_LAYER_BIT(JOB_LAYER_IPC_UTS)};
	struct job_spec s;

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(off); i++) {
		s.layers_off = off[i];
		s.proxy_port = 3128;
		expect_refused_spec(&s, -EINVAL, "proxy without its netns");
		s.proxy_port = 0;
		cr_assert_gt(proto_encode_run(msg, sizeof(msg), &s), 0);
	}
	job_spec_clear(&s);
}

/* ---- malformed headers ---- */

static int
decode_header(size_t len, uint16_t *type, const uint8_t **body,
    size_t *body_len)
{
	*type = 0x5a5a;
	*body = msg;
	*body_len = 0x5a5a;
	return proto_decode_header(msg, len, type, body, body_len);
}

static void
assert_header_cleared(uint16_t type, const uint8_t *body, size_t body_len)
{
	cr_assert_eq(type, 0);
	cr_assert_null(body);
	cr_assert_eq(body_len, 0);
}

static void
put_header(uint16_t type, uint16_t reserved, uint32_t len)
{
	struct wbuf w;

	wbuf_init(&w, msg, PROTO_HEADER_SIZE);
	wbuf_put_u16(&w, type);
	wbuf_put_u16(&w, reserved);
	wbuf_put_u32(&w, len);
	cr_assert(wbuf_ok(&w));
}

Test(header, shorter_than_8_bytes)
{
	put_header(PROTO_HELLO, 0, 0);
	for (size_t len = 0; len < PROTO_HEADER_SIZE; len++) {
		uint16_t type;
		const uint8_t *body;
		size_t blen;

		cr_assert_eq(decode_header(len, &type, &body, &blen), -EBADMSG,
		    "length %zu", len);
		assert_header_cleared(type, body, blen);
	}
}

Test(header, empty_body_is_a_valid_header)
{
	uint16_t type;
	const uint8_t *body;
	size_t blen;
	uint64_t id = 1;
	uint32_t reason = 1;

	put_header(PROTO_CANCEL, 0, 0);
	cr_assert_eq(decode_header(8, &type, &body, &blen), 0);
	cr_assert_eq(type, PROTO_CANCEL);
	cr_assert_eq(blen, 0);
	/* ...but no body decoder takes an empty body. */
	cr_assert_eq(proto_decode_cancel(body, blen, &id, &reason), -EBADMSG);
	cr_assert_eq(id, 0);
}

Test(header, reserved_must_be_zero)
{
	static const uint16_t reserved[] = {1, 0x100, 0x8000, 0xffff};

	for (size_t i = 0; i < NELEM(reserved); i++) {
		uint16_t type;
		const uint8_t *body;
		size_t blen;

		proto_encode_hello(msg, sizeof(msg), PROTO_VERSION);
		msg[2] = (uint8_t)reserved[i];
		msg[3] = (uint8_t)(reserved[i] >> 8);
		cr_assert_eq(decode_header(12, &type, &body, &blen), -EBADMSG,
		    "reserved 0x%04x", reserved[i]);
		assert_header_cleared(type, body, blen);
	}
}

Test(header, body_length_larger_than_datagram)
{
	uint16_t type;
	const uint8_t *body;
	size_t blen;

	put_header(PROTO_HELLO, 0, 5);
	cr_assert_eq(decode_header(12, &type, &body, &blen), -EBADMSG);
	assert_header_cleared(type, body, blen);
	put_header(PROTO_HELLO, 0, 4);
	cr_assert_eq(decode_header(11, &type, &body, &blen), -EBADMSG);
	assert_header_cleared(type, body, blen);
	put_header(PROTO_HELLO, 0, PROTO_MAX_BODY);
	cr_assert_eq(decode_header(12, &type, &body, &blen), -EBADMSG);
	assert_header_cleared(type, body, blen);
}

Test(header, body_length_smaller_than_datagram)
{
	uint16_t type;
	const uint8_t *body;
	size_t blen;

	proto_encode_hello(msg, sizeof(msg), PROTO_VERSION);
	cr_assert_eq(decode_header(13, &type, &body, &blen), -EBADMSG,
	    "one trailing byte after the declared body");
	assert_header_cleared(type, body, blen);
	put_header(PROTO_HELLO, 0, 0);
	cr_assert_eq(decode_header(12, &type, &body, &blen), -EBADMSG);
	assert_header_cleared(type, body, blen);
}

Test(header, body_length_over_max)
{
	static const uint32_t lens[] = {PROTO_MAX_BODY + 1, UINT32_MAX};

	for (size_t i = 0; i < NELEM(lens); i++) {
		uint16_t type;
		const uint8_t *body;
		size_t blen;

		put_header(PROTO_OUTPUT, 0, lens[i]);
		/* Whether or not the datagram is that long. */
		cr_assert_eq(decode_header(8, &type, &body, &blen), -EMSGSIZE);
		assert_header_cleared(type, body, blen);
		cr_assert_eq(decode_header(PROTO_HEADER_SIZE + PROTO_MAX_BODY +
				     1,
				 &type, &body, &blen),
		    -EMSGSIZE);
		assert_header_cleared(type, body, blen);
	}
}

Test(header, body_length_exactly_max)
{
	uint16_t type;
	const uint8_t *body;
	size_t blen;

	put_header(PROTO_OUTPUT, 0, PROTO_MAX_BODY);
	cr_assert_eq(decode_header(PROTO_MAX_MSG, &type, &body, &blen), 0);
	cr_assert_eq(type, PROTO_OUTPUT);
	cr_assert_eq(blen, PROTO_MAX_BODY);
}

Test(header, unknown_types)
{
	static const uint16_t types[] = {0, PROTO_MSG_TYPE_MAX + 1, 0x100,
	    UINT16_MAX};

	for (size_t i = 0; i < NELEM(types); i++) {
		uint16_t type;
		const uint8_t *body;
		size_t blen;

		put_header(types[i], 0, 0);
		cr_assert_eq(decode_header(8, &type, &body, &blen), -EPROTO,
		    "type %u", types[i]);
		assert_header_cleared(type, body, blen);
	}
}

/* ---- trailing bytes after a valid body, for every body decoder ---- */

Test(trailing, hello)
{
	uint32_t v = 1;
	int n = proto_encode_hello(msg, sizeof(msg), 5);

	msg[n] = 0;
	cr_assert_eq(proto_decode_hello(msg + 8, (size_t)n - 8 + 1, &v),
	    -EBADMSG);
	cr_assert_eq(v, 0);
}

Test(trailing, hello_reply)
{
	uint32_t v = 1, pid = 1;
	int n = proto_encode_hello_reply(msg, sizeof(msg), 5, 6);

	msg[n] = 0;
	cr_assert_eq(proto_decode_hello_reply(msg + 8, (size_t)n - 8 + 1, &v,
			 &pid),
	    -EBADMSG);
	cr_assert_eq(v, 0);
	cr_assert_eq(pid, 0);
}

Test(trailing, run)
{
	struct job_spec in, out;
	int n;

	sample_spec(&in);
	n = proto_encode_run(msg, sizeof(msg), &in);
	cr_assert(n > 0);
	for (size_t extra = 1; extra <= 8; extra++) {
		memset(msg + n, 0, extra);
		cr_assert_eq(proto_decode_run(msg + 8, (size_t)n - 8 + extra,
				 &out),
		    -EBADMSG, "%zu trailing bytes", extra);
		assert_spec_cleared(&out);
	}
	job_spec_clear(&in);
}

Test(trailing, output)
{
	const uint8_t *data = msg;
	uint64_t id = 1;
	uint8_t stream = 1;
	size_t dlen = 1;
	int n = proto_encode_output(msg, sizeof(msg), 9, 1, "abc", 3);

	msg[n] = 'd';
	cr_assert_eq(proto_decode_output(msg + 8, (size_t)n - 8 + 1, &id,
			 &stream, &data, &dlen),
	    -EBADMSG);
	cr_assert_eq(id, 0);
	cr_assert_eq(stream, 0);
	cr_assert_null(data);
	cr_assert_eq(dlen, 0);
}

Test(trailing, result)
{
	struct job_result in, out;
	int n;

	result_init(&in);
	in.detail = xstrdup("detail");
	in.landlock_abi = 6;
	fill_denials(&in, 3);
	n = proto_encode_result(msg, sizeof(msg), &in);
	cr_assert(n > 0);
	for (size_t extra = 1; extra <= 8; extra++) {
		memset(msg + n, 0, extra);
		memset(&out, 0x5a, sizeof(out));
		cr_assert_eq(proto_decode_result(msg + 8, (size_t)n - 8 + extra,
				 &out),
		    -EBADMSG, "%zu trailing bytes", extra);
		cr_assert_null(out.detail);
		cr_assert_eq(out.job_id, 0);
		assert_no_denials(&out);
	}
	cr_assert_eq(proto_decode_result(msg + 8, (size_t)n - 8, &out), 0);
	job_result_clear(&out);
	job_result_clear(&in);
}

Test(trailing, cancel)
{
	uint64_t id = 1;
	uint32_t reason = 1;
	int n = proto_encode_cancel(msg, sizeof(msg), 5, JOB_CANCEL_SIGINT);

	msg[n] = 0;
	cr_assert_eq(proto_decode_cancel(msg + 8, (size_t)n - 8 + 1, &id,
			 &reason),
	    -EBADMSG);
	cr_assert_eq(id, 0);
}

/* ---- truncation at every length ---- */

Test(truncation, run_every_prefix)
{
	struct job_spec in, out;
	int n;

	sample_spec(&in);
	n = proto_encode_run(msg, sizeof(msg), &in);
	cr_assert(n > 0);
	for (size_t len = 0; len < (size_t)n - 8; len++) {
		memset(&out, 0x5a, sizeof(out));
		cr_assert_eq(proto_decode_run(msg + 8, len, &out), -EBADMSG,
		    "prefix of %zu bytes", len);
		assert_spec_cleared(&out);
	}
	cr_assert_eq(proto_decode_run(msg + 8, (size_t)n - 8, &out), 0);
	job_spec_clear(&out);
	job_spec_clear(&in);
}

Test(truncation, other_bodies_every_prefix)
{
	struct job_result res;
	uint32_t v, pid;
	uint64_t id;
	uint8_t stream;
	const uint8_t *data;
	size_t dlen;
	int n;

	n = proto_encode_hello(msg, sizeof(msg), 1);
	for (size_t len = 0; len < (size_t)n - 8; len++)
		cr_assert_eq(proto_decode_hello(msg + 8, len, &v), -EBADMSG);
	n = proto_encode_hello_reply(msg, sizeof(msg), 1, 2);
	for (size_t len = 0; len < (size_t)n - 8; len++)
		cr_assert_eq(proto_decode_hello_reply(msg + 8, len, &v, &pid),
		    -EBADMSG);
	n = proto_encode_cancel(msg, sizeof(msg), 1, JOB_CANCEL_SIGTERM);
	for (size_t len = 0; len < (size_t)n - 8; len++)
		cr_assert_eq(proto_decode_cancel(msg + 8, len, &id, &v),
		    -EBADMSG);
	n = proto_encode_output(msg, sizeof(msg), 1, 1, "hello", 5);
	for (size_t len = 0; len < (size_t)n - 8; len++) {
		cr_assert_eq(proto_decode_output(msg + 8, len, &id, &stream,
				 &data, &dlen),
		    -EBADMSG);
		cr_assert_null(data);
	}
	/* A RESULT with denials: prefixes that end inside the abi, the
	 * count, a name's length, a name, a count and a first_ms. */
	result_init(&res);
	res.detail = xstrdup("some detail");
	res.landlock_abi = 1000;
	fill_denials(&res, 3);
	n = proto_encode_result(msg, sizeof(msg), &res);
	job_result_clear(&res);
	for (size_t len = 0; len < (size_t)n - 8; len++) {
		memset(&res, 0x5a, sizeof(res));
		cr_assert_eq(proto_decode_result(msg + 8, len, &res), -EBADMSG,
		    "prefix of %zu bytes", len);
		cr_assert_null(res.detail);
		assert_no_denials(&res);
	}
	cr_assert_eq(proto_decode_result(msg + 8, (size_t)n - 8, &res), 0);
	cr_assert_eq(res.ndenials, 3);
	job_result_clear(&res);
}

/*
 * Random corruption of a valid RESULT with denials never crashes; a
 * refusal leaves the output cleared and an acceptance keeps every rule
 * of proto_check_result on the denials (valgrind checks for leaks).
 */
Test(truncation, result_random_corruption)
{
	uint64_t state = UINT64_C(0x9e3779b97f4a7c15);
	uint8_t good[2048];
	struct job_result in, out;
	int n, accepted = 0;

	result_init(&in);
	in.landlock_abi = 6;
	fill_denials(&in, 5);
	in.detail = xstrdup("d");
	n = proto_encode_result(good, sizeof(good), &in);
	cr_assert(n > 0);
	job_result_clear(&in);
	for (int iter = 0; iter < 20000; iter++) {
		int flips;

		memcpy(msg, good, (size_t)n);
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		flips = 1 + (int)(state % 3);
		for (int k = 0; k < flips; k++) {
			size_t pos = 8 +
			    (size_t)((state >> (8 + 16 * k)) %
				(uint64_t)(n - 8));

			msg[pos] = (uint8_t)(state >> (4 + 8 * k));
		}
		if (proto_decode_result(msg + 8, (size_t)n - 8, &out) == 0) {
			accepted++;
			cr_assert(
			    out.landlock_abi >= 0 && out.landlock_abi <= 1000);
			cr_assert(out.ndenials <= JOB_MAX_DENIALS);
			for (uint32_t i = 0; i < out.ndenials; i++) {
				size_t l = strlen(out.denials[i].syscall);

				cr_assert(l >= 1 && l < JOB_DENIAL_NAME);
				cr_assert_eq(strspn(out.denials[i].syscall,
						 "abcdefghijklmnopqrstuvwxyz"
						 "0123456789_:"),
				    l, "\"%s\"", out.denials[i].syscall);
				cr_assert_geq(out.denials[i].count, 1);
			}
			job_result_clear(&out);
		} else {
			cr_assert_null(out.detail);
			assert_no_denials(&out);
		}
	}
	/* Flips in figures nobody checks are accepted: the loop saw both. */
	cr_assert_gt(accepted, 0);
}

/*
 * Random corruption of a valid RUN never crashes, and any refusal leaves
 * the output cleared (the valgrind run checks that it leaks nothing).
 */
Test(truncation, run_random_corruption)
{
	uint64_t state = UINT64_C(0x853c49e6748fea9b);
	uint8_t good[1024];
	struct job_spec in, out;
	int n;

	sample_spec(&in);
	n = proto_encode_run(good, sizeof(good), &in);
	cr_assert(n > 0);
	job_spec_clear(&in);
	for (int iter = 0; iter < 20000; iter++) {
		int flips;

		memcpy(msg, good, (size_t)n);
		state ^= state << 13;
		state ^= state >> 7;
		state ^= state << 17;
		flips = 1 + (int)(state % 3);
		for (int k = 0; k < flips; k++) {
			size_t pos = 8 +
			    (size_t)((state >> (8 + 16 * k)) %
				(uint64_t)(n - 8));

			msg[pos] = (uint8_t)(state >> (4 + 8 * k));
		}
		if (proto_decode_run(msg + 8, (size_t)n - 8, &out) == 0)
			job_spec_clear(&out);
		else
			assert_spec_cleared(&out);
	}
}

/* ---- oversized counts and lengths ---- */

/* A RUN body that stops right after argc (or envc) = COUNT. */
static size_t
body_with_count(uint32_t count, bool env)
{
	struct wbuf w;

	wbuf_init(&w, msg, sizeof(msg));
	wbuf_put_u64(&w, 1);
	wbuf_put_u32(&w, 0);
	wbuf_put_u32(&w, 1000);
	wbuf_put_u32(&w, 1000);
	if (env) {
		wbuf_put_u32(&w, 1);
		wbuf_put_str(&w, "/bin/true");
	}
	wbuf_put_u32(&w, count);
	/* A few bytes, far fewer than COUNT strings need. */
	wbuf_put_u32(&w, 0);
	cr_assert(wbuf_ok(&w));
	return w.len;
}

Test(bounds, argc_zero)
{
	struct job_spec s, out;

	sample_spec(&s);
	s.argc = 0;
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	cr_assert_eq(decode_raw_spec(&s, &out), -EMSGSIZE);
	assert_spec_cleared(&out);
	s.argc = 3;
	job_spec_clear(&s);
}

Test(bounds, argc_over_max)
{
	struct job_spec s, out;

	sample_spec(&s);
	for (uint32_t i = 0; i < s.argc; i++)
		free(s.argv[i]);
	free(s.argv);
	s.argc = JOB_MAX_ARGS + 1;
	s.argv = calloc(JOB_MAX_ARGS + 2, sizeof(char *));
	cr_assert_not_null(s.argv);
	for (uint32_t i = 0; i < s.argc; i++)
		s.argv[i] = xstrdup("a");
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	cr_assert_eq(decode_raw_spec(&s, &out), -EMSGSIZE);
	assert_spec_cleared(&out);
	job_spec_clear(&s);
}

Test(bounds, envc_over_max)
{
	struct job_spec s, out;

	sample_spec(&s);
	for (uint32_t i = 0; i < s.envc; i++)
		free(s.envp[i]);
	free(s.envp);
	s.envc = JOB_MAX_ENV + 1;
	s.envp = calloc(JOB_MAX_ENV + 2, sizeof(char *));
	cr_assert_not_null(s.envp);
	for (uint32_t i = 0; i < s.envc; i++)
		s.envp[i] = xstrdup("A=b");
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	cr_assert_eq(decode_raw_spec(&s, &out), -EMSGSIZE);
	assert_spec_cleared(&out);
	job_spec_clear(&s);
}

Test(bounds, nmounts_over_max)
{
	struct job_spec s, out;

	sample_spec(&s);
	for (uint32_t i = 0; i < s.nmounts; i++) {
		free(s.mounts[i].source);
		free(s.mounts[i].target);
	}
	free(s.mounts);
	s.nmounts = JOB_MAX_MOUNTS + 1;
	s.mounts = calloc(s.nmounts, sizeof(*s.mounts));
	cr_assert_not_null(s.mounts);
	for (uint32_t i = 0; i < s.nmounts; i++) {
		s.mounts[i].kind = MOUNT_RO_BIND;
		s.mounts[i].source = xstrdup("/usr");
		s.mounts[i].target = xstrdup("/usr");
	}
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	cr_assert_eq(decode_raw_spec(&s, &out), -EMSGSIZE);
	assert_spec_cleared(&out);
	job_spec_clear(&s);
}

/* A count within bounds but more than the body can hold is refused before
 * any allocation for it (counts up to the cap and far beyond it). */
Test(bounds, huge_count_short_body)
{
	static const uint32_t counts[] = {2, JOB_MAX_ARGS, JOB_MAX_ARGS + 1,
	    UINT32_MAX};

	for (size_t i = 0; i < NELEM(counts); i++) {
		struct job_spec out;
		size_t n = body_with_count(counts[i], false);
		int e = proto_decode_run(msg, n, &out);

		cr_assert(e == -EBADMSG || e == -EMSGSIZE, "argc %u: %d",
		    counts[i], e);
		assert_spec_cleared(&out);

		n = body_with_count(counts[i], true);
		e = proto_decode_run(msg, n, &out);
		cr_assert(e == -EBADMSG || e == -EMSGSIZE, "envc %u: %d",
		    counts[i], e);
		assert_spec_cleared(&out);
	}
	{
		struct job_spec out;
		size_t n = body_with_count(JOB_MAX_ARGS, false);

		cr_assert_eq(proto_decode_run(msg, n, &out), -EBADMSG);
		n = body_with_count(JOB_MAX_ENV, true);
		cr_assert_eq(proto_decode_run(msg, n, &out), -EBADMSG);
		n = body_with_count(UINT32_MAX, false);
		cr_assert_eq(proto_decode_run(msg, n, &out), -EMSGSIZE);
	}
}

/* A string length prefix far past the end of the body. */
Test(bounds, string_length_past_the_body)
{
	struct wbuf w;
	struct job_spec out;

	wbuf_init(&w, msg, sizeof(msg));
	wbuf_put_u64(&w, 1);
	wbuf_put_u32(&w, 0);
	wbuf_put_u32(&w, 1000);
	wbuf_put_u32(&w, 1000);
	wbuf_put_u32(&w, 1);
	wbuf_put_u32(&w, JOB_MAX_STR); /* claims 16 KiB, has 4 bytes */
	wbuf_put_u32(&w, 0);
	cr_assert_eq(proto_decode_run(msg, w.len, &out), -EBADMSG);
	assert_spec_cleared(&out);
}

Test(bounds, string_longer_than_max)
{
	struct job_spec s, out;
	char *big = repeat('a', JOB_MAX_STR + 1);

	sample_spec(&s);
	free(s.argv[1]);
	s.argv[1] = big;
	expect_refused_spec(&s, -EMSGSIZE, "argv[1] over JOB_MAX_STR");

	memmove(big, "A=", 2);
	s.argv[1] = xstrdup("x");
	free(s.envp[0]);
	s.envp[0] = big;
	expect_refused_spec(&s, -EMSGSIZE, "env over JOB_MAX_STR");

	s.envp[0] = xstrdup("A=b");
	big[0] = '/';
	big[1] = 'a';
	free(s.mounts[1].target);
	s.mounts[1].target = big;
	expect_refused_spec(&s, -EMSGSIZE, "mount target over JOB_MAX_STR");

	/* One byte less is accepted. */
	big[JOB_MAX_STR] = '\0';
	cr_assert(proto_encode_run(msg, sizeof(msg), &s) > 0);
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	job_spec_clear(&out);
	job_spec_clear(&s);
}

Test(bounds, hostname_longer_than_max)
{
	struct job_spec s, out;

	sample_spec(&s);
	free(s.hostname);
	s.hostname = repeat('h', JOB_MAX_HOSTNAME + 1);
	expect_refused_spec(&s, -EMSGSIZE, "hostname over JOB_MAX_HOSTNAME");
	s.hostname[JOB_MAX_HOSTNAME] = '\0';
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	job_spec_clear(&out);
	job_spec_clear(&s);
}

/* Replaces the first occurrence of FROM in MSG[0..LEN) by TO (same size). */
static void
patch(size_t len, const char *from, const void *to, size_t n)
{
	uint8_t *p = memmem(msg, len, from, n);

	cr_assert_not_null(p, "\"%s\" not in the message", from);
	memcpy(p, to, n);
}

Test(bounds, interior_nul_in_strings)
{
	static const char *const where[] = {"ARGX", "VARX=1", "HOSTX", "/srcX",
	    "/tgtX", "/cgrpX"};
	struct job_spec s, out;
	size_t n;

	sample_spec(&s);
	set_str(&s.argv[1], "ARGX");
	set_str(&s.envp[1], "VARX=1");
	set_str(&s.hostname, "HOSTX");
	set_str(&s.mounts[0].source, "/srcX");
	set_str(&s.mounts[0].target, "/tgtX");
	set_str(&s.cgroup, "/cgrpX");
	n = raw_run(msg, sizeof(msg), &s);
	cr_assert_eq(proto_decode_run(msg, n, &out), 0);
	job_spec_clear(&out);
	for (size_t i = 0; i < NELEM(where); i++) {
		char *nul = xstrdup(where[i]);

		*strchr(nul, 'X') = '\0';
		n = raw_run(msg, sizeof(msg), &s);
		patch(n, where[i], nul, strlen(where[i]));
		memset(&out, 0x5a, sizeof(out));
		cr_assert_eq(proto_decode_run(msg, n, &out), -EBADMSG, "%s",
		    where[i]);
		assert_spec_cleared(&out);
		free(nul);
	}
	job_spec_clear(&s);
}

Test(bounds, interior_nul_in_result_detail)
{
	struct job_result r, out;
	int n;

	result_init(&r);
	r.detail = xstrdup("abcXdef");
	n = proto_encode_result(msg, sizeof(msg), &r);
	cr_assert(n > 0);
	patch((size_t)n, "abcX", "abc\0", 4);
	cr_assert_eq(proto_decode_result(msg + 8, (size_t)n - 8, &out),
	    -EBADMSG);
	cr_assert_null(out.detail);
	job_result_clear(&r);
}

Test(bounds, result_detail_over_max)
{
	struct job_result r, out;
	struct wbuf w;
	char *big = repeat('d', JOB_MAX_DETAIL + 1);

	result_init(&r);
	r.detail = big;
	cr_assert_eq(proto_encode_result(msg, sizeof(msg), &r), -EINVAL);

	wbuf_init(&w, msg, sizeof(msg));
	wbuf_put_u64(&w, 0); /* job id */
	for (int i = 0; i < 3; i++)
		wbuf_put_u32(&w, 0); /* status, exit code, signal */
	for (int i = 0; i < 3; i++)
		wbuf_put_u64(&w, 0); /* wall, cpu, peak memory */
	wbuf_put_u32(&w, 0); /* peak processes */
	wbuf_put_u8(&w, ENFORCE_MONITOR);
	raw_denials(&w, 0, 0, NULL); /* landlock_abi, no denial */
	for (int i = 0; i < 2; i++)
		wbuf_put_u64(&w, 0); /* stdout and stderr bytes */
	wbuf_put_str(&w, big);
	cr_assert(wbuf_ok(&w));
	cr_assert_eq(proto_decode_result(msg, w.len, &out), -EMSGSIZE);
	cr_assert_null(out.detail);
	free(big);
}

/* ---- semantic refusals in proto_decode_run ---- */

Test(semantic, uid_and_gid_zero)
{
	struct job_spec s;

	sample_spec(&s);
	s.uid = 0;
	expect_refused_spec(&s, -EINVAL, "uid 0");
	s.uid = 1000;
	s.gid = 0;
	expect_refused_spec(&s, -EINVAL, "gid 0");
	job_spec_clear(&s);
}

Test(semantic, unknown_flags)
{
	static const uint32_t flags[] = {0x10, 0x80000000u, ~JOB_F_KNOWN,
	    UINT32_MAX};
	struct job_spec s;

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(flags); i++) {
		s.flags = flags[i];
		expect_refused_spec(&s, -EINVAL, "unknown flag");
	}
	job_spec_clear(&s);
}

/* layers_off: every mask within JOB_LAYERS_ALL travels; any other bit
 * is refused by both sides. */
Test(round_trip, run_layers_off)
{
	static const uint32_t masks[] = {
	    0,
	    1,
	    JOB_LAYER_BIT(JOB_LAYER_SECCOMP),
	    JOB_LAYER_BIT(JOB_LAYER_NO_TERMINAL) | JOB_LAYER_BIT(1),
	    JOB_LAYERS_ALL,
	};

	for (size_t i = 0; i < NELEM(masks); i++) {
		struct job_spec in, out;
		const uint8_t *body;
		size_t len;
		int n;

		sample_spec(&in);
		in.layers_off = masks[i];
		n = proto_encode_run(msg, sizeof(msg), &in);
		len = header_ok(n, PROTO_RUN, &body);
		cr_assert_eq(proto_decode_run(body, len, &out), 0, "%#x",
		    masks[i]);
		assert_spec_eq(&in, &out);
		/* The older flag is layer seccomp too. */
		cr_assert_eq(job_spec_layers_off(&out),
		    masks[i] | JOB_LAYER_BIT(JOB_LAYER_SECCOMP));
		job_spec_clear(&out);
		job_spec_clear(&in);
	}
}

Test(semantic, unknown_layer_bits)
{
	static const uint32_t bad[] = {JOB_LAYER_BIT(JOB_LAYER_MAX + 1),
	    0x80000000u, ~JOB_LAYERS_ALL, UINT32_MAX};
	struct job_spec s;

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(bad); i++) {
		s.layers_off = bad[i];
		expect_refused_spec(&s, -EINVAL, "unknown layer bit");
	}
	job_spec_clear(&s);
}

Test(proto, layer_names)
{
	static const char *const names[] = {
	    "limits",
	    "process_group",
	    "scrubbed_env",
	    "private_cwd",
	    "user_ns",
	    "pid_ns",
	    "mount_ns",
	    "network_ns",
	    "ipc_uts",
	    "no_terminal",
	    "caps_nnp",
	    "landlock",
	    "seccomp",
	};
	char buf[256];

	for (int i = 1; i <= JOB_LAYER_MAX; i++) {
		cr_assert_str_eq(job_layer_name(i), names[i - 1]);
		cr_assert_eq(job_layer_parse(names[i - 1],
				 strlen(names[i - 1])),
		    i);
	}
	cr_assert_null(job_layer_name(0));
	cr_assert_null(job_layer_name(JOB_LAYER_MAX + 1));
	cr_assert_eq(job_layer_parse("pid_nsx", 7), -1);
	cr_assert_eq(job_layer_parse("pid_nsx", 6), JOB_LAYER_PID_NS);
	cr_assert_eq(job_layer_parse("", 0), -1);
	cr_assert_str_eq(job_layers_format(0, buf, sizeof(buf)), "");
	cr_assert_str_eq(job_layers_format(JOB_LAYER_BIT(JOB_LAYER_SECCOMP) |
				 JOB_LAYER_BIT(JOB_LAYER_LIMITS) | 0x80000000u,
			     buf, sizeof(buf)),
	    "limits, seccomp");
	/* Truncated, always terminated. */
	cr_assert_str_eq(job_layers_format(JOB_LAYERS_ALL, buf, 9), "limits, ");
}

Test(semantic, env_entries)
{
	static const char *const bad[] = {"NOEQUALS", "", "=value", "="};
	struct job_spec s, out;

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(bad); i++) {
		set_str(&s.envp[2], bad[i]);
		expect_refused_spec(&s, -EINVAL, bad[i]);
	}
	/* '=' in the value, or an empty value, are fine. */
	set_str(&s.envp[2], "A==b=c");
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	job_spec_clear(&out);
	job_spec_clear(&s);
}

static void
check_mount_paths(const char *const *paths, size_t n, bool ok)
{
	for (size_t i = 0; i < n; i++)
		for (int which = 0; which < 2; which++) {
			struct job_spec s, out;

			sample_spec(&s);
			set_str(which ? &s.mounts[1].target
				      : &s.mounts[1].source,
			    paths[i]);
			if (ok) {
				cr_assert(proto_encode_run(msg, sizeof(msg),
					      &s) > 0,
				    "%s", paths[i]);
				cr_assert_eq(decode_raw_spec(&s, &out), 0, "%s",
				    paths[i]);
				job_spec_clear(&out);
			} else {
				expect_refused_spec(&s, -EINVAL, paths[i]);
			}
			job_spec_clear(&s);
		}
}

Test(semantic, mount_paths_refused)
{
	static const char *const bad[] = {
	    "",
	    "usr",
	    "usr/lib",
	    "./usr",
	    "/",
	    "//",
	    "//usr",
	    "/usr//lib",
	    "/usr/",
	    "/usr/lib/",
	    "/.",
	    "/./usr",
	    "/usr/.",
	    "/usr/./lib",
	    "/..",
	    "/../etc",
	    "/usr/..",
	    "/usr/../etc",
	    "/usr/lib/..",
	};

	check_mount_paths(bad, NELEM(bad), false);
}

Test(semantic, mount_paths_accepted)
{
	static const char *const good[] = {
	    "/usr",
	    "/usr/lib",
	    "/etc/ssl/certs",
	    "/...",
	    "/.hidden",
	    "/a..b",
	    "/usr/..lib",
	    "/x.",
	};

	check_mount_paths(good, NELEM(good), true);
}

Test(semantic, unknown_mount_kind)
{
	static const int kinds[] = {0, MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK + 1,
	    255};
	struct job_spec s;

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(kinds); i++) {
		s.mounts[0].kind = (enum mount_kind)kinds[i];
		expect_refused_spec(&s, -EINVAL, "mount kind");
	}
	job_spec_clear(&s);
}

/* The test-only kind (policy key unsafe_ro_bind_no_landlock) travels. */
Test(round_trip, run_mount_without_landlock)
{
	struct job_spec s, out;

	cr_assert_eq(MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK, 3);
	sample_spec(&s);
	s.mounts[1].kind = MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK;
	cr_assert_gt(proto_encode_run(msg, sizeof(msg), &s), 0);
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	cr_assert_eq(out.mounts[1].kind, MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK);
	job_spec_clear(&out);
	job_spec_clear(&s);
}

/* A seccomp profile is [a-z]+ of at most JOB_MAX_PROFILE bytes. */
Test(semantic, seccomp_profile)
{
	static const char *const good[] = {"default", "strict", "a"};
	static const char *const bad[] = {"", "Strict", "str1ct", "a b", "a/b",
	    "a-b", "../default"};
	struct job_spec s, out;
	char *longest = repeat('p', JOB_MAX_PROFILE);

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(good); i++) {
		set_str(&s.seccomp_profile, good[i]);
		cr_assert_gt(proto_encode_run(msg, sizeof(msg), &s), 0, "%s",
		    good[i]);
		cr_assert_eq(decode_raw_spec(&s, &out), 0, "%s", good[i]);
		cr_assert_str_eq(out.seccomp_profile, good[i]);
		job_spec_clear(&out);
	}
	set_str(&s.seccomp_profile, longest);
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	job_spec_clear(&out);
	for (size_t i = 0; i < NELEM(bad); i++) {
		set_str(&s.seccomp_profile, bad[i]);
		expect_refused_spec(&s, -EINVAL, bad[i]);
	}
	free(s.seccomp_profile);
	s.seccomp_profile = repeat('p', JOB_MAX_PROFILE + 1);
	expect_refused_spec(&s, -EMSGSIZE, "profile over JOB_MAX_PROFILE");
	free(longest);
	job_spec_clear(&s);
}

Test(semantic, every_limit_zero)
{
	for (int which = 0; which < 11; which++) {
		struct job_spec s;
		struct job_limits *l;

		sample_spec(&s);
		l = &s.limits;
		switch (which) {
		case 0:
			l->wall_ms = 0;
			break;
		case 1:
			l->cpu_ms = 0;
			break;
		case 2:
			l->memory_bytes = 0;
			break;
		case 3:
			l->tmp_bytes = 0;
			break;
		case 4:
			l->home_bytes = 0;
			break;
		case 5:
			l->fsize_bytes = 0;
			break;
		case 6:
			l->stdout_bytes = 0;
			break;
		case 7:
			l->stderr_bytes = 0;
			break;
		case 8:
			l->nofile = 0;
			break;
		case 9:
			l->nproc = 0;
			break;
		default:
			l->workspace_bytes = 0;
			break;
		}
		expect_refused_spec(&s, -EINVAL, "a zero limit");
		job_spec_clear(&s);
	}
}

/* cpu_percent: 0 (no cap) to PROTO_MAX_CPU_PERCENT, nothing above. */
Test(semantic, cpu_percent_over_max)
{
	static const uint32_t bad[] = {PROTO_MAX_CPU_PERCENT + 1, 1000000,
	    UINT32_MAX};
	struct job_spec s, out;

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(bad); i++) {
		s.limits.cpu_percent = bad[i];
		expect_refused_spec(&s, -EINVAL, "cpu_percent over the max");
	}
	s.limits.cpu_percent = PROTO_MAX_CPU_PERCENT;
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	job_spec_clear(&out);
	job_spec_clear(&s);
}

/* A RUN's enforcement is auto, monitor or cgroup2 (0..2); anything else
 * is refused by both ends. */
Test(semantic, enforcement_out_of_range)
{
	static const unsigned bad[] = {ENFORCE_MAX + 1, 4, 0x80, 255};
	struct job_spec s, out;

	sample_spec(&s);
	for (size_t i = 0; i < NELEM(bad); i++) {
		s.enforcement = (enum job_enforcement)bad[i];
		expect_refused_spec(&s, -EINVAL, "enforcement out of range");
	}
	for (unsigned e = 0; e <= ENFORCE_MAX; e++) {
		s.enforcement = (enum job_enforcement)e;
		cr_assert_eq(decode_raw_spec(&s, &out), 0, "enforcement %u", e);
		cr_assert_eq(out.enforcement, e);
		job_spec_clear(&out);
	}
	job_spec_clear(&s);
}

/* The cgroup is "" or an absolute, normalised path (the policy's), never
 * a relative one that would resolve against the launcher's directory. */
Test(semantic, cgroup_paths_refused)
{
	static const char *const bad[] = {
	    "sys/fs/cgroup",
	    "./x",
	    "x",
	    "/",
	    "//",
	    "/sys//fs",
	    "/sys/fs/",
	    "/sys/./fs",
	    "/sys/fs/cgroup/..",
	    "/sys/fs/cgroup/../../etc",
	    "/..",
	    "..",
	    ".",
	};
	struct job_spec s;

	for (size_t i = 0; i < NELEM(bad); i++) {
		sample_spec(&s);
		set_str(&s.cgroup, bad[i]);
		expect_refused_spec(&s, -EINVAL, bad[i]);
		job_spec_clear(&s);
	}
}

Test(semantic, cgroup_over_max)
{
	struct job_spec s, out;

	sample_spec(&s);
	free(s.cgroup);
	s.cgroup = repeat('c', JOB_MAX_STR + 1);
	s.cgroup[0] = '/';
	expect_refused_spec(&s, -EMSGSIZE, "cgroup over JOB_MAX_STR");
	s.cgroup[JOB_MAX_STR] = '\0';
	cr_assert(proto_encode_run(msg, sizeof(msg), &s) > 0);
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	job_spec_clear(&out);
	job_spec_clear(&s);
}

Test(semantic, empty_argv0)
{
	struct job_spec s, out;

	sample_spec(&s);
	set_str(&s.argv[0], "");
	expect_refused_spec(&s, -EINVAL, "empty argv[0]");
	/* Later arguments may be empty. */
	set_str(&s.argv[0], "/bin/echo");
	set_str(&s.argv[2], "");
	cr_assert_eq(decode_raw_spec(&s, &out), 0);
	job_spec_clear(&out);
	job_spec_clear(&s);
}

Test(semantic, mount_targets_the_jail_builds_itself)
{
	static const char *const bad[] = {"/tmp", "/tmp/x", "/proc", "/dev",
	    "/dev/sda", "/work", "/work/a"};
	struct job_spec s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sample_spec(&s);
		set_str(&s.mounts[1].target, bad[i]);
		expect_refused_spec(&s, -EINVAL, bad[i]);
		job_spec_clear(&s);
	}
	/* Prefixes that are other names stay allowed. */
	sample_spec(&s);
	set_str(&s.mounts[1].target, "/tmpx");
	{
		uint8_t buf[PROTO_MAX_MSG];

		cr_assert_gt(proto_encode_run(buf, sizeof(buf), &s), 0);
	}
	job_spec_clear(&s);
}

Test(semantic, user_and_home)
{
	static const char *const bad_users[] = {"", "a:b", "a\nb", "Root", "-x",
	    "9x", "a/b"};
	static const char *const bad_homes[] = {"", "home", "/", "/work",
	    "/tmp", "/a/../b", "/a/"};
	struct job_spec s;

	for (size_t i = 0; i < sizeof(bad_users) / sizeof(bad_users[0]); i++) {
		sample_spec(&s);
		set_str(&s.user, bad_users[i]);
		expect_refused_spec(&s, -EINVAL, bad_users[i]);
		job_spec_clear(&s);
	}
	for (size_t i = 0; i < sizeof(bad_homes) / sizeof(bad_homes[0]); i++) {
		sample_spec(&s);
		set_str(&s.home, bad_homes[i]);
		expect_refused_spec(&s, -EINVAL, bad_homes[i]);
		job_spec_clear(&s);
	}
}

Test(semantic, hostname)
{
	struct job_spec s;

	sample_spec(&s);
	set_str(&s.hostname, "a/b");
	expect_refused_spec(&s, -EINVAL, "hostname with '/'");
	set_str(&s.hostname, "/");
	expect_refused_spec(&s, -EINVAL, "hostname '/'");
	set_str(&s.hostname, "");
	expect_refused_spec(&s, -EINVAL, "empty hostname");
	set_str(&s.hostname, "a\nb");
	expect_refused_spec(&s, -EINVAL, "hostname with a newline");
	set_str(&s.hostname, "-a");
	expect_refused_spec(&s, -EINVAL, "hostname starting with '-'");
	set_str(&s.hostname, "a b");
	expect_refused_spec(&s, -EINVAL, "hostname with a space");
	job_spec_clear(&s);
}

/* ---- RESULT ranges ---- */

static void
expect_refused_result(const struct job_result *r, const char *what)
{
	struct job_result out;
	struct wbuf w;
	int e;

	e = proto_encode_result(msg, sizeof(msg), r);
	cr_assert_eq(e, -EINVAL, "%s: encoder returned %d", what, e);

	wbuf_init(&w, msg, sizeof(msg));
	wbuf_put_u64(&w, r->job_id);
	wbuf_put_u32(&w, (uint32_t)r->status);
	wbuf_put_i32(&w, r->exit_code);
	wbuf_put_i32(&w, r->signal);
	for (int i = 0; i < 3; i++)
		wbuf_put_u64(&w, 1);
	wbuf_put_u32(&w, 1);
	wbuf_put_u8(&w, (uint8_t)r->enforcement);
	raw_denials(&w, r->landlock_abi,
	    r->ndenials < JOB_MAX_DENIALS ? r->ndenials : JOB_MAX_DENIALS,
	    r->denials);
	for (int i = 0; i < 2; i++)
		wbuf_put_u64(&w, 1);
	wbuf_put_u8(&w, r->memory_measure);
	wbuf_put_u8(&w, 0);
	wbuf_put_str(&w, "d");
	cr_assert(wbuf_ok(&w));
	memset(&out, 0x5a, sizeof(out));
	e = proto_decode_result(msg, w.len, &out);
	cr_assert_eq(e, -EINVAL, "%s: decoder returned %d", what, e);
	cr_assert_null(out.detail);
	cr_assert_eq(out.job_id, 0);
	cr_assert_eq(out.status, 0);
	assert_no_denials(&out);
}

Test(result_range, status_over_max)
{
	struct job_result r;

	result_init(&r);
	r.status = (enum job_status)(JOB_STATUS_MAX + 1);
	expect_refused_result(&r, "status MAX + 1");
	r.status = (enum job_status)1000;
	expect_refused_result(&r, "status 1000");
}

Test(result_range, exit_code)
{
	static const int32_t bad[] = {-2, 256, INT32_MIN, INT32_MAX};
	struct job_result r;

	result_init(&r);
	for (size_t i = 0; i < NELEM(bad); i++) {
		r.exit_code = bad[i];
		expect_refused_result(&r, "exit code");
	}
}

Test(result_range, signal)
{
	static const int32_t bad[] = {-1, 65, INT32_MIN, INT32_MAX};
	struct job_result r;

	result_init(&r);
	for (size_t i = 0; i < NELEM(bad); i++) {
		r.signal = bad[i];
		expect_refused_result(&r, "signal");
	}
}

/* ---- RESULT consistency, figures and detail ---- */

/*
 * Encodes R as a RESULT body by hand (status STATUS, R's figures and
 * detail), bypassing the encoder's checks, and returns what
 * proto_decode_result says of it; checks that a refusal leaves the output
 * cleared. Also returns, in *ENC, what proto_encode_result says of R.
 */
static int
decode_raw_result(uint32_t status, const struct job_result *r, int *enc)
{
	struct job_result out, copy = *r;
	struct wbuf w;
	int e;

	copy.status = (enum job_status)status;
	*enc = proto_encode_result(msg, sizeof(msg), &copy);
	wbuf_init(&w, msg, sizeof(msg));
	raw_result_body(&w, status, r);
	cr_assert(wbuf_ok(&w));
	memset(&out, 0x5a, sizeof(out));
	e = proto_decode_result(msg, w.len, &out);
	if (e < 0) {
		cr_assert_null(out.detail);
		cr_assert_eq(out.job_id, 0);
		cr_assert_eq(out.status, 0);
		cr_assert_eq(out.wall_ms, 0);
		cr_assert_eq(out.peak_processes, 0);
		cr_assert_eq(out.enforcement, 0);
		assert_no_denials(&out);
	} else {
		cr_assert_str_eq(out.detail, r->detail ? r->detail : "");
		cr_assert_eq(out.peak_processes, r->peak_processes);
		cr_assert_eq(out.enforcement, r->enforcement);
		assert_denials_eq(r, &out);
		job_result_clear(&out);
	}
	return e;
}

/* Decoder and encoder both refuse (-EINVAL), or both accept. */
static void
expect_result(int want, uint32_t status, int32_t code, int32_t sig,
    const char *what)
{
	struct job_result r;
	int dec, enc;

	result_init(&r);
	r.job_id = 9;
	r.exit_code = code;
	r.signal = sig;
	r.wall_ms = 5;
	dec = decode_raw_result(status, &r, &enc);
	cr_assert_eq(dec, want, "%s: decoder returned %d", what, dec);
	if (want == 0)
		cr_assert_gt(enc, 0, "%s: encoder returned %d", what, enc);
	else
		cr_assert_eq(enc, want, "%s: encoder returned %d", what, enc);
}

Test(result_consistency, ok_is_exit_0_without_signal)
{
	expect_result(0, JOB_OK, 0, 0, "ok exit 0");
	expect_result(-EINVAL, JOB_OK, 1, 0, "ok exit 1");
	expect_result(-EINVAL, JOB_OK, 255, 0, "ok exit 255");
	expect_result(-EINVAL, JOB_OK, -1, 0, "ok no exit code");
	expect_result(-EINVAL, JOB_OK, 0, 9, "ok signal 9");
	expect_result(-EINVAL, JOB_OK, -1, 9, "ok killed");
}

Test(result_consistency, exit_nonzero_is_exit_1_to_255)
{
	expect_result(0, JOB_EXIT_NONZERO, 1, 0, "exit 1");
	expect_result(0, JOB_EXIT_NONZERO, 255, 0, "exit 255");
	expect_result(-EINVAL, JOB_EXIT_NONZERO, 0, 0, "exit 0");
	expect_result(-EINVAL, JOB_EXIT_NONZERO, -1, 0, "no exit code");
	expect_result(-EINVAL, JOB_EXIT_NONZERO, 256, 0, "exit 256");
	expect_result(-EINVAL, JOB_EXIT_NONZERO, 3, 9, "exit 3 and signal 9");
}

Test(result_consistency, crash_is_a_signal_without_exit_code)
{
	expect_result(0, JOB_CRASH, -1, 1, "signal 1");
	expect_result(0, JOB_CRASH, -1, 64, "signal 64");
	expect_result(-EINVAL, JOB_CRASH, -1, 0, "no signal");
	expect_result(-EINVAL, JOB_CRASH, 0, 11, "exit 0 and signal 11");
	expect_result(-EINVAL, JOB_CRASH, 139, 11, "exit 139 and signal 11");
	expect_result(-EINVAL, JOB_CRASH, -1, 65, "signal 65");
}

/* Cancelled (issue 22): the jail was killed, so a signal and no exit
 * code, as a crash. */
Test(result_consistency, cancelled_is_a_kill_without_exit_code)
{
	expect_result(0, JOB_CANCELLED, -1, 9, "cancelled SIGKILL");
	expect_result(-EINVAL, JOB_CANCELLED, -1, 0, "cancelled no signal");
	expect_result(-EINVAL, JOB_CANCELLED, 0, 0, "cancelled exit 0");
	expect_result(-EINVAL, JOB_CANCELLED, 130, 9, "cancelled exit 130");
	expect_result(-EINVAL, (enum job_status)(JOB_CANCELLED + 1), -1, 9,
	    "the status after cancelled");
}

/* The other statuses keep the plain ranges only. */
Test(result_consistency, other_statuses_unconstrained)
{
	expect_result(0, JOB_TIMEOUT, -1, 9, "timeout killed");
	expect_result(0, JOB_TIMEOUT, 0, 0, "timeout exit 0");
	expect_result(0, JOB_SANDBOX_ERROR, -1, 0, "sandbox_error");
	expect_result(0, JOB_CPU_LIMIT, -1, 24, "cpu_limit SIGXCPU");
	expect_result(-EINVAL, JOB_TIMEOUT, -2, 9, "timeout exit -2");
}

Test(result_consistency, figures_at_most_int64_max)
{
	uint64_t *fields[5];
	struct job_result r;
	int dec, enc;

	for (size_t i = 0; i < NELEM(fields); i++) {
		result_init(&r);
		fields[0] = &r.wall_ms;
		fields[1] = &r.cpu_ms;
		fields[2] = &r.peak_memory_kb;
		fields[3] = &r.stdout_bytes;
		fields[4] = &r.stderr_bytes;
		r.status = JOB_OK;
		*fields[i] = (uint64_t)INT64_MAX;
		dec = decode_raw_result(JOB_OK, &r, &enc);
		cr_assert_eq(dec, 0, "field %zu at INT64_MAX: %d", i, dec);
		cr_assert_gt(enc, 0, "field %zu at INT64_MAX: encoder %d", i,
		    enc);
		*fields[i] = (uint64_t)INT64_MAX + 1;
		dec = decode_raw_result(JOB_OK, &r, &enc);
		cr_assert_eq(dec, -EINVAL, "field %zu over: %d", i, dec);
		cr_assert_eq(enc, -EINVAL, "field %zu over: encoder %d", i,
		    enc);
		*fields[i] = UINT64_MAX;
		dec = decode_raw_result(JOB_OK, &r, &enc);
		cr_assert_eq(dec, -EINVAL, "field %zu max: %d", i, dec);
		cr_assert_eq(enc, -EINVAL, "field %zu max: encoder %d", i, enc);
	}
}

/* A RESULT names how the limits were held: monitor (1) or cgroup2 (2).
 * "auto" (0) is a request, never an answer; 3 and up are unknown. */
Test(result_consistency, enforcement)
{
	static const unsigned bad[] = {ENFORCE_AUTO, 3, 0x80, 255};
	struct job_result r;
	int dec, enc;

	result_init(&r);
	for (size_t i = 0; i < NELEM(bad); i++) {
		r.enforcement = (enum job_enforcement)bad[i];
		expect_refused_result(&r, "enforcement");
		dec = decode_raw_result(JOB_OK, &r, &enc);
		cr_assert_eq(dec, -EINVAL, "enforcement %u: %d", bad[i], dec);
		cr_assert_eq(enc, -EINVAL, "enforcement %u: encoder %d", bad[i],
		    enc);
	}
	r.enforcement = ENFORCE_MONITOR;
	cr_assert_eq(decode_raw_result(JOB_OK, &r, &enc), 0);
	cr_assert_gt(enc, 0);
	r.enforcement = ENFORCE_CGROUP2;
	cr_assert_eq(decode_raw_result(JOB_OK, &r, &enc), 0);
	cr_assert_gt(enc, 0);
}

/* ---- RESULT: landlock_abi and denials (version 3, issue 5) ---- */

/* The Landlock ABI a RESULT names is 0 (none) to 1000. */
Test(result_denials, landlock_abi_0_to_1000)
{
	static const int32_t good[] = {0, 1, 6, 999, 1000};
	static const int32_t bad[] = {-1, 1001, INT32_MIN, INT32_MAX};
	struct job_result r;
	int dec, enc;

	result_init(&r);
	for (size_t i = 0; i < NELEM(good); i++) {
		r.landlock_abi = good[i];
		dec = decode_raw_result(JOB_OK, &r, &enc);
		cr_assert_eq(dec, 0, "abi %d: %d", good[i], dec);
		cr_assert_gt(enc, 0, "abi %d: encoder %d", good[i], enc);
	}
	for (size_t i = 0; i < NELEM(bad); i++) {
		r.landlock_abi = bad[i];
		expect_refused_result(&r, "landlock_abi");
		dec = decode_raw_result(JOB_OK, &r, &enc);
		cr_assert_eq(dec, -EINVAL, "abi %d: %d", bad[i], dec);
		cr_assert_eq(enc, -EINVAL, "abi %d: encoder %d", bad[i], enc);
	}
}

/*
 * A RESULT whose second denial is NAME, COUNT, FIRST_MS (the first a
 * good "ptrace", so that the rule holds for every entry, not only the
 * first); returns the decoder's verdict and the encoder's in *ENC.
 */
static int
denial_result(const char *name, uint32_t count, uint64_t first_ms, int *enc)
{
	struct job_result r;

	result_init(&r);
	r.status = JOB_POLICY_VIOLATION;
	r.exit_code = -1;
	r.signal = 31;
	r.landlock_abi = 6;
	r.ndenials = 2;
	set_denial(&r.denials[0], "ptrace", 1, 5);
	set_denial(&r.denials[1], name, count, first_ms);
	return decode_raw_result(JOB_POLICY_VIOLATION, &r, enc);
}

/* Names as libseccomp spells them, or "abi:number": 1 to 31 bytes of
 * [a-z0-9_:]. */
Test(result_denials, name_spelling)
{
	static const char *const good[] = {
	    "ptrace",
	    "i386:20",
	    "x32:1",
	    "io_uring_setup",
	    "clone3",
	    NAME_31,
	    "_",
	    ":",
	    "0",
	};
	static const char *const bad[] = {
	    "Ptrace",
	    "ptracE",
	    "PTRACE",
	    "a b",
	    " ptrace",
	    "ptrace ",
	    "a/b",
	    "/",
	    "../x",
	    "a-b",
	    "a.b",
	    "a\tb",
	    "a\nb",
	    "\x1b[2J",
	    "\xc3\xa9",
	    "\x7f",
	    "a;b",
	    "a\"b",
	};
	int dec, enc;

	for (size_t i = 0; i < NELEM(good); i++) {
		dec = denial_result(good[i], 1, 0, &enc);
		cr_assert_eq(dec, 0, "\"%s\": %d", good[i], dec);
		cr_assert_gt(enc, 0, "\"%s\": encoder %d", good[i], enc);
	}
	for (size_t i = 0; i < NELEM(bad); i++) {
		dec = denial_result(bad[i], 1, 0, &enc);
		cr_assert_eq(dec, -EINVAL, "\"%s\": %d", bad[i], dec);
		cr_assert_eq(enc, -EINVAL, "\"%s\": encoder %d", bad[i], enc);
	}
	/* Every byte that is not [a-z0-9_:], alone between letters. */
	for (int c = 1; c < 256; c++) {
		char name[4] = {'a', (char)c, 'b', '\0'};
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == ':';

		dec = denial_result(name, 1, 0, &enc);
		cr_assert_eq(dec, ok ? 0 : -EINVAL, "byte %#x: %d", c, dec);
		if (ok)
			cr_assert_gt(enc, 0, "byte %#x: encoder %d", c, enc);
		else
			cr_assert_eq(enc, -EINVAL, "byte %#x: encoder %d", c,
			    enc);
	}
}

Test(result_denials, empty_name)
{
	int dec, enc;

	dec = denial_result("", 1, 0, &enc);
	cr_assert_eq(dec, -EINVAL, "decoder %d", dec);
	cr_assert_eq(enc, -EINVAL, "encoder %d", enc);
}

/* A name fills at most 31 bytes of its 32-byte array: 32 bytes without a
 * NUL is refused by the encoder (which must not read past the array) and,
 * sent by hand, by the decoder as a bound exceeded (proto.h: -EMSGSIZE,
 * as for every other string over its bound). */
Test(result_denials, name_of_32_bytes)
{
	static const char name32[] = NAME_31 "x";
	int dec, enc;

	cr_assert_eq(strlen(name32), JOB_DENIAL_NAME);
	dec = denial_result(name32, 1, 0, &enc);
	cr_assert_eq(enc, -EINVAL, "encoder %d", enc);
	cr_assert_eq(dec, -EMSGSIZE, "decoder %d, want -EMSGSIZE", dec);
	/* 31 bytes pass. */
	dec = denial_result(NAME_31, 1, 0, &enc);
	cr_assert_eq(dec, 0);
	cr_assert_gt(enc, 0);
}

/* A NUL inside a name on the wire is malformed, as in any string. */
Test(result_denials, interior_nul_in_name)
{
	struct job_result r, out;
	int n;

	result_init(&r);
	r.ndenials = 1;
	set_denial(&r.denials[0], "ptraceq", 1, 0);
	n = proto_encode_result(msg, sizeof(msg), &r);
	cr_assert(n > 0);
	patch((size_t)n, "ptraceq", "ptrace\0", 7);
	memset(&out, 0x5a, sizeof(out));
	cr_assert_eq(proto_decode_result(msg + 8, (size_t)n - 8, &out),
	    -EBADMSG);
	cr_assert_null(out.detail);
	assert_no_denials(&out);
}

/* A denial was refused at least once. */
Test(result_denials, count_at_least_1)
{
	int dec, enc;

	dec = denial_result("bpf", 0, 0, &enc);
	cr_assert_eq(dec, -EINVAL, "count 0: decoder %d", dec);
	cr_assert_eq(enc, -EINVAL, "count 0: encoder %d", enc);
	dec = denial_result("bpf", 1, 0, &enc);
	cr_assert_eq(dec, 0);
	cr_assert_gt(enc, 0);
	dec = denial_result("bpf", UINT32_MAX, 0, &enc);
	cr_assert_eq(dec, 0);
	cr_assert_gt(enc, 0);
}

/* first_ms is a figure like wall_ms: at most INT64_MAX, so that it stays
 * a non-negative JSON integer (proto_check_result's rule for figures;
 * docs/result.schema.json: "minimum": 0). */
Test(result_denials, first_ms_at_most_int64_max)
{
	int dec, enc;

	dec = denial_result("bpf", 1, 0, &enc);
	cr_assert_eq(dec, 0);
	cr_assert_gt(enc, 0);
	dec = denial_result("bpf", 1, (uint64_t)INT64_MAX, &enc);
	cr_assert_eq(dec, 0, "INT64_MAX: %d", dec);
	cr_assert_gt(enc, 0, "INT64_MAX: encoder %d", enc);
	dec = denial_result("bpf", 1, (uint64_t)INT64_MAX + 1, &enc);
	cr_assert_eq(enc, -EINVAL, "INT64_MAX + 1: encoder %d", enc);
	cr_assert_eq(dec, -EINVAL, "INT64_MAX + 1: decoder %d", dec);
	dec = denial_result("bpf", 1, UINT64_MAX, &enc);
	cr_assert_eq(enc, -EINVAL, "UINT64_MAX: encoder %d", enc);
	cr_assert_eq(dec, -EINVAL, "UINT64_MAX: decoder %d", dec);
}

/* More than JOB_MAX_DENIALS: refused by the encoder (without reading
 * past the array) and by the decoder, as a bound exceeded (-EMSGSIZE,
 * proto.h), whether the body holds the entries or not. */
Test(result_denials, more_than_32)
{
	static const uint32_t counts[] = {JOB_MAX_DENIALS + 1, 1000,
	    UINT32_MAX};
	struct job_denial many[JOB_MAX_DENIALS + 1];
	struct job_result r, out;
	struct wbuf w;
	int e;

	result_init(&r);
	fill_denials(&r, JOB_MAX_DENIALS);
	for (size_t i = 0; i < NELEM(counts); i++) {
		r.ndenials = counts[i];
		e = proto_encode_result(msg, sizeof(msg), &r);
		cr_assert_eq(e, -EINVAL, "%u denials: encoder %d", counts[i],
		    e);
	}
	r.ndenials = JOB_MAX_DENIALS;
	cr_assert_gt(proto_encode_result(msg, sizeof(msg), &r), 0);

	/* 33 whole entries, by hand. */
	memcpy(many, r.denials, sizeof(r.denials));
	set_denial(&many[JOB_MAX_DENIALS], "bpf", 1, 99);
	for (size_t i = 0; i < NELEM(counts); i++) {
		wbuf_init(&w, msg, sizeof(msg));
		wbuf_put_u64(&w, 1); /* job id */
		wbuf_put_u32(&w, JOB_OK);
		for (int k = 0; k < 2; k++)
			wbuf_put_i32(&w, 0); /* exit code, signal */
		for (int k = 0; k < 3; k++)
			wbuf_put_u64(&w, 1); /* wall, cpu, peak memory */
		wbuf_put_u32(&w, 1); /* peak processes */
		wbuf_put_u8(&w, ENFORCE_MONITOR);
		wbuf_put_i32(&w, 6); /* landlock_abi */
		wbuf_put_u32(&w, counts[i]);
		/* All 33 entries, or none for the counts no body holds. */
		raw_denial_entries(&w, counts[i] == NELEM(many) ? counts[i] : 0,
		    many);
		for (int k = 0; k < 2; k++)
			wbuf_put_u64(&w, 1); /* stdout and stderr bytes */
		wbuf_put_str(&w, "d");
		cr_assert(wbuf_ok(&w));
		memset(&out, 0x5a, sizeof(out));
		e = proto_decode_result(msg, w.len, &out);
		cr_assert_eq(e, -EMSGSIZE,
		    "%u denials: decoder %d, want "
		    "-EMSGSIZE",
		    counts[i], e);
		cr_assert_null(out.detail);
		assert_no_denials(&out);
	}
}

static int
detail_result(const char *detail, int *enc)
{
	struct job_result r;

	result_init(&r);
	r.status = JOB_SANDBOX_ERROR;
	r.exit_code = -1;
	r.detail = (char *)(uintptr_t)detail;
	return decode_raw_result(JOB_SANDBOX_ERROR, &r, enc);
}

/* Control characters other than tab: C0, DEL, and C1 written as UTF-8. */
Test(result_consistency, detail_without_control_characters)
{
	char d[8];
	int dec, enc;

	for (int c = 1; c < 0x20; c++) {
		snprintf(d, sizeof(d), "a%cb", c);
		dec = detail_result(d, &enc);
		if (c == '\t') {
			cr_assert_eq(dec, 0, "tab refused");
			cr_assert_gt(enc, 0, "tab refused by the encoder");
		} else {
			cr_assert_eq(dec, -EINVAL, "byte %#x: %d", c, dec);
			cr_assert_eq(enc, -EINVAL, "byte %#x: encoder %d", c,
			    enc);
		}
	}
	cr_assert_eq(detail_result("a\x7f", &enc), -EINVAL);
	cr_assert_eq(enc, -EINVAL);
	cr_assert_eq(detail_result("\x1b[2J", &enc), -EINVAL);
	cr_assert_eq(enc, -EINVAL);
	for (int c = 0x80; c <= 0x9f; c++) {
		snprintf(d, sizeof(d), "a\xc2%cb", c);
		cr_assert_eq(detail_result(d, &enc), -EINVAL, "U+%04X", c);
		cr_assert_eq(enc, -EINVAL, "U+%04X: encoder", c);
	}
	/* Printable text, U+00A0 and beyond, and bytes that are not UTF-8
	 * (result_json.c sanitizes those) pass. */
	cr_assert_eq(detail_result("clone3: Operation not permitted", &enc), 0);
	cr_assert_eq(detail_result("a\xc2\xa0"
				   "b \xc3\xa9",
			 &enc),
	    0);
	cr_assert_eq(detail_result("\xff\xfe", &enc), 0);
	cr_assert_eq(detail_result("\x9b", &enc), 0);
	cr_assert_eq(detail_result("~ !", &enc), 0);
}

/* ---- OUTPUT ---- */

static size_t
raw_output(uint64_t id, uint8_t stream, size_t len)
{
	struct wbuf w;

	wbuf_init(&w, msg, sizeof(msg));
	wbuf_put_u64(&w, id);
	wbuf_put_u8(&w, stream);
	wbuf_put_u32(&w, (uint32_t)len);
	for (size_t i = 0; i < len; i++)
		wbuf_put_u8(&w, 'o');
	cr_assert(wbuf_ok(&w));
	return w.len;
}

Test(output, stream_must_be_1_or_2)
{
	static const uint8_t bad[] = {0, 3, 255};

	for (size_t i = 0; i < NELEM(bad); i++) {
		const uint8_t *data = msg;
		uint64_t id = 1;
		uint8_t stream = 9;
		size_t dlen = 9, n;

		cr_assert_eq(proto_encode_output(msg, sizeof(msg), 1, bad[i],
				 "x", 1),
		    -EINVAL);
		n = raw_output(5, bad[i], 1);
		cr_assert_eq(proto_decode_output(msg, n, &id, &stream, &data,
				 &dlen),
		    -EINVAL, "stream %u", bad[i]);
		cr_assert_eq(id, 0);
		cr_assert_eq(stream, 0);
		cr_assert_null(data);
		cr_assert_eq(dlen, 0);
	}
}

Test(output, chunk_over_max)
{
	static uint8_t chunk[PROTO_OUTPUT_CHUNK + 1];
	const uint8_t *data = msg;
	uint64_t id = 1;
	uint8_t stream = 1;
	size_t dlen = 1, n;

	cr_assert_eq(proto_encode_output(msg, sizeof(msg), 1, 1, chunk,
			 sizeof(chunk)),
	    -EINVAL);
	n = raw_output(5, 1, PROTO_OUTPUT_CHUNK + 1);
	cr_assert_eq(proto_decode_output(msg, n, &id, &stream, &data, &dlen),
	    -EMSGSIZE);
	cr_assert_eq(id, 0);
	cr_assert_null(data);
	cr_assert_eq(dlen, 0);
}

/* ---- encoders: refusals and -ENOBUFS ---- */

Test(encode, run_refuses_missing_pieces)
{
	struct job_spec s;
	char *h;

	sample_spec(&s);
	h = s.hostname;
	s.hostname = NULL;
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	s.hostname = h;

	h = s.argv[1];
	s.argv[1] = NULL;
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	s.argv[1] = h;

	h = s.envp[2];
	s.envp[2] = NULL;
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	s.envp[2] = h;

	h = s.mounts[1].source;
	s.mounts[1].source = NULL;
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	s.mounts[1].source = h;

	h = s.mounts[0].target;
	s.mounts[0].target = NULL;
	cr_assert_eq(proto_encode_run(msg, sizeof(msg), &s), -EINVAL);
	s.mounts[0].target = h;

	cr_assert(proto_encode_run(msg, sizeof(msg), &s) > 0);
	job_spec_clear(&s);
}

/*
 * For every size short of what the message needs, the encoder returns
 * -ENOBUFS and writes nothing at or past SIZE.
 */
typedef int (*encode_fn)(uint8_t *buf, size_t size, const void *arg);

static void
check_enobufs(encode_fn fn, const void *arg, const char *what)
{
	static uint8_t buf[PROTO_MAX_MSG + 16];
	int need = fn(buf, sizeof(buf), arg);

	cr_assert(need > (int)PROTO_HEADER_SIZE, "%s: %d", what, need);
	for (size_t size = 0; size < (size_t)need; size++) {
		int e;

		memset(buf + size, 0xa5, 16);
		e = fn(buf, size, arg);
		cr_assert_eq(e, -ENOBUFS, "%s: size %zu of %d gave %d", what,
		    size, need, e);
		for (size_t i = 0; i < 16; i++)
			cr_assert_eq(buf[size + i], 0xa5,
			    "%s: size %zu: wrote byte %zu past the end", what,
			    size, size + i);
	}
	cr_assert_eq(fn(buf, (size_t)need, arg), need, "%s: exact size", what);
}

static int
enc_hello(uint8_t *b, size_t n, const void *arg)
{
	(void)arg;
	return proto_encode_hello(b, n, PROTO_VERSION);
}

static int
enc_hello_reply(uint8_t *b, size_t n, const void *arg)
{
	(void)arg;
	return proto_encode_hello_reply(b, n, PROTO_VERSION, 1234);
}

static int
enc_run(uint8_t *b, size_t n, const void *arg)
{
	return proto_encode_run(b, n, arg);
}

static int
enc_output(uint8_t *b, size_t n, const void *arg)
{
	return proto_encode_output(b, n, 7, 1, arg, strlen(arg));
}

static int
enc_result(uint8_t *b, size_t n, const void *arg)
{
	return proto_encode_result(b, n, arg);
}

static int
enc_cancel(uint8_t *b, size_t n, const void *arg)
{
	(void)arg;
	return proto_encode_cancel(b, n, 7, JOB_CANCEL_REQUEST);
}

Test(encode, enobufs_for_every_short_size)
{
	struct job_spec s;
	struct job_result r;

	sample_spec(&s);
	result_init(&r);
	r.detail = xstrdup("a detail");
	r.landlock_abi = 6;
	fill_denials(&r, 3);
	check_enobufs(enc_hello, NULL, "HELLO");
	check_enobufs(enc_hello_reply, NULL, "HELLO_REPLY");
	check_enobufs(enc_run, &s, "RUN");
	check_enobufs(enc_output, "some output\n", "OUTPUT");
	check_enobufs(enc_result, &r, "RESULT");
	check_enobufs(enc_cancel, NULL, "CANCEL");
	job_result_clear(&r);
	job_spec_clear(&s);
}

Test(encode, output_full_chunk_exact_size)
{
	static uint8_t chunk[PROTO_OUTPUT_CHUNK];
	static uint8_t buf[PROTO_MAX_MSG];
	size_t need = PROTO_HEADER_SIZE + 8 + 1 + 4 + PROTO_OUTPUT_CHUNK;

	cr_assert_eq(proto_encode_output(buf, need, 1, 1, chunk, sizeof(chunk)),
	    (int)need);
	cr_assert_eq(proto_encode_output(buf, need - 1, 1, 1, chunk,
			 sizeof(chunk)),
	    -ENOBUFS);
}

/* A RUN too big for one datagram is refused whatever the buffer size. */
Test(encode, run_over_max_message)
{
	static uint8_t big[2 * PROTO_MAX_MSG];
	struct job_spec s;

	sample_spec(&s);
	for (uint32_t i = 0; i < s.argc; i++)
		free(s.argv[i]);
	free(s.argv);
	s.argc = 16;
	s.argv = calloc(17, sizeof(char *));
	cr_assert_not_null(s.argv);
	for (uint32_t i = 0; i < s.argc; i++)
		s.argv[i] = repeat('a',
		    JOB_MAX_STR); /* 16 * 16 KiB > 128 KiB */
	cr_assert_eq(proto_encode_run(big, sizeof(big), &s), -ENOBUFS);
	job_spec_clear(&s);
}

/* ---- datagrams over a real socketpair ---- */

/* Open descriptors of this process, from /proc/self/fd or by probing. */
static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL) {
		long max = sysconf(_SC_OPEN_MAX);

		if (max < 0 || max > 65536)
			max = 65536;
		for (int fd = 0; fd < max; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				n++;
		return n;
	}
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static void
make_pair(int sv[2])
{
	int sz = 1 << 20;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
	    0, "socketpair: %s", strerror(errno));
	/* Room for datagrams past PROTO_MAX_MSG (capped by wmem_max). */
	(void)setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

static int
open_dir(void)
{
	int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	cr_assert(fd >= 0, "open .: %s", strerror(errno));
	return fd;
}

/* Sends LEN bytes of MSG on SOCK with NFDS descriptors by a raw sendmsg. */
static void
raw_send(int sock, const void *data, size_t len, const int *fds, size_t nfds)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)data,
	    .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(int) * 16)];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	cr_assert(nfds <= 16);
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	cr_assert_eq(n, (ssize_t)len, "sendmsg: %s", strerror(errno));
}

static void
same_file(int a, int b)
{
	struct stat sa, sb;

	cr_assert_eq(fstat(a, &sa), 0);
	cr_assert_eq(fstat(b, &sb), 0);
	cr_assert_eq(sa.st_dev, sb.st_dev);
	cr_assert_eq(sa.st_ino, sb.st_ino);
}

Test(socket, message_without_fd)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fd = 99;
	int n = proto_encode_hello(msg, sizeof(msg), PROTO_VERSION);

	make_pair(sv);
	cr_assert_eq(proto_send(sv[1], msg, (size_t)n, -1), 0);
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), n);
	cr_assert_eq(fd, -1);
	cr_assert_eq(memcmp(rx, msg, (size_t)n), 0);
	close(sv[0]);
	close(sv[1]);
}

Test(socket, message_with_one_fd)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fd = -1, dir;
	int n = proto_encode_cancel(msg, sizeof(msg), 3, JOB_CANCEL_SIGINT);
	int before;

	make_pair(sv);
	dir = open_dir();
	before = count_fds();
	cr_assert_eq(proto_send(sv[1], msg, (size_t)n, dir), 0);
	cr_assert(fcntl(dir, F_GETFD) >= 0, "proto_send closed the fd");
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), n);
	cr_assert(fd >= 0);
	cr_assert_neq(fd, dir);
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC, "received fd not CLOEXEC");
	same_file(fd, dir);
	cr_assert_eq(count_fds(), before + 1);
	close(fd);
	close(dir);
	close(sv[0]);
	close(sv[1]);
}

/* The largest message travels whole in one datagram. */
Test(socket, largest_message)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fd;

	make_pair(sv);
	put_header(PROTO_OUTPUT, 0, PROTO_MAX_BODY);
	memset(msg + 8, 'x', PROTO_MAX_BODY);
	cr_assert_eq(proto_send(sv[1], msg, PROTO_MAX_MSG, -1), 0);
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd),
	    (int)PROTO_MAX_MSG);
	cr_assert_eq(memcmp(rx, msg, PROTO_MAX_MSG), 0);
	close(sv[0]);
	close(sv[1]);
}

Test(socket, two_fds_are_refused_and_both_closed)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fds[2], fd = 99, before;
	int n = proto_encode_cancel(msg, sizeof(msg), 3, JOB_CANCEL_SIGINT);

	make_pair(sv);
	fds[0] = open_dir();
	fds[1] = open_dir();
	before = count_fds();
	raw_send(sv[1], msg, (size_t)n, fds, 2);
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), -EBADMSG);
	cr_assert_eq(fd, -1);
	cr_assert_eq(count_fds(), before, "a received descriptor leaked");
	close(fds[0]);
	close(fds[1]);
	close(sv[0]);
	close(sv[1]);
}

/* More descriptors than the control buffer holds: MSG_CTRUNC, all closed. */
Test(socket, control_truncation_is_refused)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fds[16], fd = 99, before;
	int n = proto_encode_cancel(msg, sizeof(msg), 3, JOB_CANCEL_SIGINT);

	make_pair(sv);
	for (size_t i = 0; i < NELEM(fds); i++)
		fds[i] = open_dir();
	before = count_fds();
	raw_send(sv[1], msg, (size_t)n, fds, NELEM(fds));
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), -EBADMSG);
	cr_assert_eq(fd, -1);
	cr_assert_eq(count_fds(), before, "a received descriptor leaked");
	for (size_t i = 0; i < NELEM(fds); i++)
		close(fds[i]);
	close(sv[0]);
	close(sv[1]);
}

static void
oversize_datagram(size_t bufsize)
{
	static uint8_t big[PROTO_MAX_MSG + 1];
	uint8_t *rx = malloc(bufsize);
	int sv[2], dir, fd = 99, before, e;

	cr_assert_not_null(rx);
	make_pair(sv);
	dir = open_dir();
	before = count_fds();
	memset(big, 'b', sizeof(big));
	raw_send(sv[1], big, sizeof(big), &dir, 1);
	e = proto_recv(sv[0], rx, bufsize, &fd);
	cr_assert_eq(e, -EMSGSIZE, "buffer %zu: %d", bufsize, e);
	cr_assert_eq(fd, -1);
	cr_assert_eq(count_fds(), before, "the attached descriptor leaked");

	/* Without a descriptor too. */
	raw_send(sv[1], big, sizeof(big), NULL, 0);
	cr_assert_eq(proto_recv(sv[0], rx, bufsize, &fd), -EMSGSIZE);
	cr_assert_eq(fd, -1);
	close(dir);
	close(sv[0]);
	close(sv[1]);
	free(rx);
}

Test(socket, datagram_over_max_message)
{
	oversize_datagram(PROTO_MAX_MSG);
}

/* A caller's bigger buffer does not raise the cap (rule 4). */
Test(socket, datagram_over_max_message_big_buffer)
{
	oversize_datagram(2 * PROTO_MAX_MSG);
}

Test(socket, peer_closed)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fd = 99;

	make_pair(sv);
	close(sv[1]);
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), 0);
	cr_assert_eq(fd, -1);
	close(sv[0]);
}

/* Sending to a closed peer is -EPIPE, not a SIGPIPE that kills the test. */
Test(socket, send_to_closed_peer)
{
	int sv[2];
	int n = proto_encode_cancel(msg, sizeof(msg), 3, JOB_CANCEL_SIGINT);

	make_pair(sv);
	close(sv[0]);
	cr_assert_eq(proto_send(sv[1], msg, (size_t)n, -1), -EPIPE);
	close(sv[1]);
}

Test(socket, small_buffer_is_einval_and_consumes_nothing)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fd = 99;
	int n = proto_encode_cancel(msg, sizeof(msg), 3, JOB_CANCEL_SIGINT);

	make_pair(sv);
	cr_assert_eq(proto_send(sv[1], msg, (size_t)n, -1), 0);
	cr_assert_eq(proto_recv(sv[0], rx, PROTO_MAX_MSG - 1, &fd), -EINVAL);
	cr_assert_eq(fd, -1);
	cr_assert_eq(proto_recv(sv[0], rx, 0, &fd), -EINVAL);
	/* The message is still there for a proper call. */
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), n);
	close(sv[0]);
	close(sv[1]);
}

static void
send_credentials(int sock, const void *data, size_t len, int fd)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)data,
	    .iov_len = len};
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) +
		    CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct ucred cred = {.pid = getpid(), .uid = getuid(), .gid = getgid()};
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	mh.msg_control = u.buf;
	mh.msg_controllen = CMSG_SPACE(sizeof(cred));
	if (fd >= 0)
		mh.msg_controllen += CMSG_SPACE(sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_CREDENTIALS;
	c->cmsg_len = CMSG_LEN(sizeof(cred));
	memcpy(CMSG_DATA(c), &cred, sizeof(cred));
	if (fd >= 0) {
		c = CMSG_NXTHDR(&mh, c);
		cr_assert_not_null(c);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	cr_assert_eq(sendmsg(sock, &mh, MSG_NOSIGNAL), (ssize_t)len,
	    "sendmsg: %s", strerror(errno));
}

Test(socket, credentials_are_refused)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int sv[2], fd = 99, one = 1, dir, before;
	int n = proto_encode_cancel(msg, sizeof(msg), 3, JOB_CANCEL_SIGINT);

	make_pair(sv);
	cr_assert_eq(setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one,
			 sizeof(one)),
	    0);
	send_credentials(sv[1], msg, (size_t)n, -1);
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), -EBADMSG);
	cr_assert_eq(fd, -1);

	/* Credentials beside a descriptor: refused, descriptor closed. */
	dir = open_dir();
	before = count_fds();
	send_credentials(sv[1], msg, (size_t)n, dir);
	cr_assert_eq(proto_recv(sv[0], rx, sizeof(rx), &fd), -EBADMSG);
	cr_assert_eq(fd, -1);
	cr_assert_eq(count_fds(), before, "the descriptor leaked");
	close(dir);
	close(sv[0]);
	close(sv[1]);
}

Test(socket, bad_socket)
{
	static uint8_t rx[PROTO_MAX_MSG];
	int fd = 99;

	cr_assert_eq(proto_recv(-1, rx, sizeof(rx), &fd), -EBADF);
	cr_assert_eq(fd, -1);
	cr_assert_eq(proto_send(-1, rx, 8, -1), -EBADF);
}

/* ---- the private wires' headers (shared/wire.h): one row per type,
 * its descriptors' roles checked on both ends ---- */

/* Sends a message of type TYPE with the header's count NFDS and ROLES
 * written raw (no check), with the descriptors FDS, on SOCK. */
static void
send_raw_header(int sock, uint16_t type, uint16_t nfds, uint32_t roles,
    const int *fds)
{
	uint8_t hdr[WIRE_HEADER_SIZE + 8] = {(uint8_t)type,
	    (uint8_t)(type >> 8), (uint8_t)nfds, (uint8_t)(nfds >> 8),
	    (uint8_t)roles, (uint8_t)(roles >> 8), (uint8_t)(roles >> 16),
	    (uint8_t)(roles >> 24)};

	cr_assert_eq(proto_send_fds(sock, hdr, sizeof(hdr), fds, nfds), 0);
}

Test(wire, go_takes_the_stdin_pipe_by_role_and_no_other)
{
	static uint8_t rx[WIRE_MAX_MSG];
	uint8_t wm[WIRE_HEADER_SIZE + 4] = {0};
	int sv[2], p[2], fds[WIRE_MAX_FDS], two[2], before;
	struct wire_msg m;

	make_pair(sv);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(wire_msg_desc(WIRE_GO)->channel, WIRE_CH_GO);
	/* Its row: the stdin pipe, optional. */
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_GO, WIRE_ROLE_BIT(0),
			 &p[0]),
	    0);
	cr_assert_eq(wire_recv(sv[0], rx, sizeof(rx), fds, 1, &m),
	    (int)sizeof(wm));
	cr_assert_eq(m.type, WIRE_GO);
	cr_assert_eq(m.nfds, 1u);
	cr_assert_geq(wire_fd(&m, fds, WIRE_FD_STDIN_PIPE), 0);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_TERMINAL), -1);
	close(fds[0]);
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_GO, 0, NULL), 0);
	cr_assert_gt(wire_recv(sv[0], rx, sizeof(rx), fds, 1, &m), 0);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_STDIN_PIPE), -1);
	/* A role not in the row: wire_send refuses it, and a receiver
	 * refuses the header that says it, the descriptor closed. */
	two[0] = p[0];
	two[1] = p[1];
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_GO, WIRE_ROLE_BIT(1),
			 &p[0]),
	    -EINVAL);
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_GO,
			 WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), two),
	    -EINVAL);
	before = count_fds();
	send_raw_header(sv[1], WIRE_GO, 1, WIRE_ROLE_BIT(1), &p[0]);
	cr_assert_eq(wire_recv(sv[0], rx, sizeof(rx), fds, 1, &m), -EPROTO);
	cr_assert_eq(m.nfds, 0u);
	cr_assert_eq(count_fds(), before, "the descriptor leaked");
	/* A count that disagrees with the roles. */
	send_raw_header(sv[1], WIRE_GO, 0, WIRE_ROLE_BIT(0), NULL);
	cr_assert_eq(wire_recv(sv[0], rx, sizeof(rx), fds, 1, &m), -EPROTO);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

Test(wire, a_spawn_reply_needs_both_its_roles)
{
	static uint8_t rx[WIRE_MAX_MSG];
	uint8_t wm[WIRE_HEADER_SIZE + 4] = {0};
	int sv[2], p[2], fds[WIRE_MAX_FDS], before;
	struct wire_msg m;

	make_pair(sv);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_SPAWN_REPLY,
			 WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), p),
	    0);
	cr_assert_gt(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), 0);
	cr_assert_eq(m.nfds, 2u);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_LAUNCHER_PIDFD), fds[1]);
	close(fds[0]);
	close(fds[1]);
	/* A required role missing: refused on both ends. */
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_SPAWN_REPLY,
			 WIRE_ROLE_BIT(0), p),
	    -EINVAL);
	before = count_fds();
	send_raw_header(sv[1], WIRE_SPAWN_REPLY, 1, WIRE_ROLE_BIT(0), p);
	cr_assert_eq(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), -EPROTO);
	cr_assert_eq(count_fds(), before, "the descriptor leaked");
	/* A failure carries none, and may not. */
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_SPAWN_FAILED,
			 WIRE_ROLE_BIT(0), p),
	    -EINVAL);
	send_raw_header(sv[1], WIRE_SPAWN_FAILED, 1, WIRE_ROLE_BIT(0), p);
	cr_assert_eq(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), -EPROTO);
	cr_assert_eq(count_fds(), before, "the descriptor leaked");
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* Writes a status record's 16 bytes raw on FD: TYPE, the header's count
 * NFDS and ROLES, A, B. */
static void
write_raw_record(int fd, uint16_t type, uint16_t nfds, uint32_t roles,
    int32_t a, int32_t b)
{
	uint8_t rec[WIRE_STATUS_SIZE];
	struct wbuf w;

	wbuf_init(&w, rec, sizeof(rec));
	wbuf_put_u16(&w, type);
	wbuf_put_u16(&w, nfds);
	wbuf_put_u32(&w, roles);
	wbuf_put_i32(&w, a);
	wbuf_put_i32(&w, b);
	cr_assert(wbuf_ok(&w));
	cr_assert_eq(write(fd, rec, sizeof(rec)), (ssize_t)sizeof(rec));
}

Test(wire, status_records_are_checked_on_read)
{
	int32_t rec[3];
	int p[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(WIRE_STATUS_SIZE, 16u);
	cr_assert_eq(wire_status_write(p[1], INIT_REC_PAYLOAD_EXIT, 256, 2), 0);
	cr_assert_eq(wire_status_read(p[0], rec), 1);
	cr_assert_eq(rec[0], INIT_REC_PAYLOAD_EXIT);
	cr_assert_eq(rec[1], 256);
	cr_assert_eq(rec[2], 2);
	cr_assert_eq(wire_status_write(p[1], INIT_REC_SETUP_FAILED, 3, -5), 0);
	cr_assert_eq(wire_status_read(p[0], rec), 1);
	cr_assert_eq(rec[2], -5);
	/* A type of another wire, or of none, is not a status record. */
	cr_assert_eq(wire_status_write(p[1], WIRE_KILL, 0, 0), -EINVAL);
	cr_assert_eq(wire_status_write(p[1], 999, 0, 0), -EINVAL);
	write_raw_record(p[1], 999, 0, 0, 1, 2);
	cr_assert_eq(wire_status_read(p[0], rec), -EPROTO);
	cr_assert_eq(rec[0], 999);
	write_raw_record(p[1], WIRE_KILL, 0, 0, 1, 2);
	cr_assert_eq(wire_status_read(p[0], rec), -EPROTO);
	/* A known type whose header says descriptors, or roles. */
	write_raw_record(p[1], INIT_REC_TASKS, 1, 0, 1, 0);
	cr_assert_eq(wire_status_read(p[0], rec), -EPROTO);
	write_raw_record(p[1], INIT_REC_TASKS, 0, 1, 1, 0);
	cr_assert_eq(wire_status_read(p[0], rec), -EPROTO);
	/* The old record (three i32, 12 bytes) cut short at EOF. */
	cr_assert_eq(write(p[1], rec, 12), 12);
	close(p[1]);
	cr_assert_eq(wire_status_read(p[0], rec), -EBADMSG);
	cr_assert_eq(wire_status_read(p[0], rec), 0);
	close(p[0]);
}

Test(wire, a_small_buffer_takes_short_messages_and_refuses_longer)
{
	uint8_t small[WIRE_HEADER_SIZE + 8] = {0},
					 big[WIRE_HEADER_SIZE + 9] = {0};
	int sv[2], fds[1];
	struct wire_msg m;

	make_pair(sv);
	/* Under a header: no buffer to receive into. */
	cr_assert_eq(wire_recv(sv[0], small, WIRE_HEADER_SIZE - 1, fds, 0, &m),
	    -EINVAL);
	/* A message that fits is taken whole. */
	cr_assert_eq(wire_send(sv[1], small, sizeof(small), WIRE_SPAWN_FAILED,
			 0, NULL),
	    0);
	cr_assert_eq(wire_recv(sv[0], small, sizeof(small), fds, 0, &m),
	    (int)sizeof(small));
	cr_assert_eq(m.type, WIRE_SPAWN_FAILED);
	/* One byte more than the buffer: refused, not cut. */
	cr_assert_eq(wire_send(sv[1], big, sizeof(big), WIRE_SPAWN_FAILED, 0,
			 NULL),
	    0);
	cr_assert_eq(wire_recv(sv[0], small, sizeof(small), fds, 0, &m),
	    -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);
}

/* The notify channel (issue 25): the proxy's sockets both or none, and
 * the seccomp listener with its role; the numbers are fixed. */
Test(wire, the_notify_channel_rows)
{
	static uint8_t rx[WIRE_MAX_MSG];
	uint8_t wm[WIRE_HEADER_SIZE + 2] = {0};
	int sv[2], p[2], fds[WIRE_MAX_FDS];
	struct wire_msg m;

	cr_assert_eq(WIRE_NET_SOCKETS, 19);
	cr_assert_eq(WIRE_SECCOMP_LISTENER, 25);
	cr_assert_eq(WIRE_STAGE, 26);
	cr_assert_eq(WIRE_MSG_TYPE_MAX, 29);
	cr_assert_eq(wire_msg_desc(WIRE_STAGE)->channel, WIRE_CH_NOTIFY);
	cr_assert_eq(wire_msg_desc(WIRE_SECCOMP_LISTENER)->channel,
	    WIRE_CH_NOTIFY);
	make_pair(sv);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	/* NET_SOCKETS: both roles required. */
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_NET_SOCKETS,
			 WIRE_ROLE_BIT(0), p),
	    -EINVAL);
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_NET_SOCKETS,
			 WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), p),
	    0);
	cr_assert_gt(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), 0);
	cr_assert_eq(m.type, WIRE_NET_SOCKETS);
	cr_assert_eq(m.nfds, 2u);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_PACKET), fds[1]);
	close(fds[0]);
	close(fds[1]);
	/* SECCOMP_LISTENER: its one role, required. */
	cr_assert_eq(wire_send(sv[1], wm, WIRE_HEADER_SIZE,
			 WIRE_SECCOMP_LISTENER, 0, NULL),
	    -EINVAL);
	cr_assert_eq(wire_send(sv[1], wm, WIRE_HEADER_SIZE,
			 WIRE_SECCOMP_LISTENER, WIRE_ROLE_BIT(0), p),
	    0);
	cr_assert_gt(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), 0);
	cr_assert_eq(m.type, WIRE_SECCOMP_LISTENER);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_SECCOMP_LISTENER), fds[0]);
	cr_assert_str_eq(wire_fd_role_name(WIRE_FD_SECCOMP_LISTENER),
	    "seccomp listener");
	close(fds[0]);
	/* STAGE (issue 26): its one role, required. */
	cr_assert_eq(wire_send(sv[1], wm, WIRE_HEADER_SIZE, WIRE_STAGE, 0,
			 NULL),
	    -EINVAL);
	cr_assert_eq(wire_send(sv[1], wm, WIRE_HEADER_SIZE, WIRE_STAGE,
			 WIRE_ROLE_BIT(0), p),
	    0);
	cr_assert_gt(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), 0);
	cr_assert_eq(m.type, WIRE_STAGE);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_STAGE), fds[0]);
	cr_assert_str_eq(wire_fd_role_name(WIRE_FD_STAGE), "stage");
	close(fds[0]);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

/* The spawn channel's stage rows (issue 26): STAGE_OPEN carries the
 * stage's root and a directory in it, both required (one descriptor may
 * be both); its reply the entry, required; a refusal none. */
Test(wire, the_stage_open_rows)
{
	static uint8_t rx[WIRE_MAX_MSG];
	uint8_t wm[WIRE_HEADER_SIZE + 4] = {0};
	int sv[2], p[2], two[2], fds[WIRE_MAX_FDS];
	struct wire_msg m;

	cr_assert_eq(WIRE_STAGE_OPEN, 27);
	cr_assert_eq(WIRE_STAGE_OPEN_REPLY, 28);
	cr_assert_eq(WIRE_STAGE_OPEN_FAILED, 29);
	for (uint16_t t = WIRE_STAGE_OPEN; t <= WIRE_STAGE_OPEN_FAILED; t++)
		cr_assert_eq(wire_msg_desc(t)->channel, WIRE_CH_SPAWN);
	make_pair(sv);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	two[0] = two[1] = p[0];
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_STAGE_OPEN,
			 WIRE_ROLE_BIT(0), two),
	    -EINVAL);
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_STAGE_OPEN,
			 WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), two),
	    0);
	cr_assert_gt(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), 0);
	cr_assert_eq(m.type, WIRE_STAGE_OPEN);
	cr_assert_eq(m.nfds, 2u);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_STAGE), fds[0]);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_STAGE_DIR), fds[1]);
	close(fds[0]);
	close(fds[1]);
	cr_assert_eq(wire_send(sv[1], wm, WIRE_HEADER_SIZE,
			 WIRE_STAGE_OPEN_REPLY, 0, NULL),
	    -EINVAL);
	cr_assert_eq(wire_send(sv[1], wm, sizeof(wm), WIRE_STAGE_OPEN_FAILED,
			 WIRE_ROLE_BIT(0), p),
	    -EINVAL);
	cr_assert_eq(wire_send(sv[1], wm, WIRE_HEADER_SIZE,
			 WIRE_STAGE_OPEN_REPLY, WIRE_ROLE_BIT(0), p),
	    0);
	cr_assert_gt(wire_recv(sv[0], rx, sizeof(rx), fds, 2, &m), 0);
	cr_assert_eq(wire_fd(&m, fds, WIRE_FD_STAGE_ENTRY), fds[0]);
	cr_assert_str_eq(wire_fd_role_name(WIRE_FD_STAGE_DIR),
	    "stage directory");
	cr_assert_str_eq(wire_fd_role_name(WIRE_FD_STAGE_ENTRY), "stage entry");
	close(fds[0]);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}
