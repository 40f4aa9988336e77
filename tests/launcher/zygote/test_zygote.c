/*
 * test_zygote.c: the launcher's zygote (launcher/zygote/zygote.h) driven
 * directly, as the launcher drives it: jails it starts are this process's
 * children (CLONE_PARENT), a kill request ends one, and the session's first
 * request fixes what later ones may ask ("Authority"): another workspace,
 * another bind mount, other ids or flags are refused (ZYGOTE_NOT_SESSION), so a
 * launcher compromised by a job cannot use the zygote for more than the
 * broker asked for. Registered twice: as the invoking user and as 65534.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "harness.h"
#include "proto.h"
#include "jobspec.h"
#include "policy.h"
#include "zygote.h"

TestSuite(zygote, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 60);

struct fixture {
	struct policy pol;
	struct zygote z;
	int self_pidfd;
	int wsfd;
	uint64_t next_id;
};

static void
fixture_open(struct fixture *f)
{
	char err[POLICY_ERR_MAX + 64];
	struct zygote_config c;

	memset(f, 0, sizeof(*f));
	cr_assert_eq(policy_load_default(&f->pol, err, sizeof(err)), 0, "%s",
	    err);
	f->self_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	cr_assert_geq(f->self_pidfd, 0);
	f->wsfd = open(harness_workspace(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(f->wsfd, 0);
	/* As launcher/supervisor/main.c: a root launcher maps payloads to
	 * nobody. */
	c.as_root = geteuid() == 0;
	c.outer_uid = c.as_root ? PROTO_ROOT_PAYLOAD_ID : geteuid();
	c.outer_gid = c.as_root ? PROTO_ROOT_PAYLOAD_ID : getegid();
	c.launcher_pidfd = f->self_pidfd;
	cr_assert_eq(zygote_start(&c, &f->z), 0);
	f->next_id = 1;
}

static void
fixture_close(struct fixture *f)
{
	zygote_stop(&f->z);
	waitpid(f->z.pid, NULL, 0);
	close(f->wsfd);
	close(f->self_pidfd);
	policy_clear(&f->pol);
}

/* A spec of the default policy for ARGV (NULL-terminated). */
static void
make_spec(struct fixture *f, struct job_spec *spec, char **argv)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	memset(spec, 0, sizeof(*spec));
	cr_assert_eq(jobspec_from_policy(spec, &f->pol, argc, argv), 0);
	spec->job_id = f->next_id++;
}

/* SPEC's RUN message, as the broker sends it and the launcher forwards
 * it to its zygote, into RUN (PROTO_MAX_MSG bytes); returns its length. */
static size_t
run_msg(const struct job_spec *spec, uint8_t *run)
{
	int n = proto_encode_run(run, PROTO_MAX_MSG, spec);

	cr_assert_gt(n, 0);
	return (size_t)n;
}

/* Asks for SPEC's jail in workspace WSFD; returns the refusal. On
 * ZYGOTE_OK, J is filled. */
static enum zygote_refusal
ask(struct fixture *f, const struct job_spec *spec, int wsfd, struct jail *j)
{
	static uint8_t run[PROTO_MAX_MSG];
	struct zygote_reply r;
	size_t len = run_msg(spec, run);
	int e = zygote_start_jail(&f->z, spec, run, len, wsfd, -1, -1, j, &r);

	cr_assert_eq(e, 0, "zygote_start_jail: %s", strerror(-e));
	return r.refusal;
}

/* Waits for J's init (our child) and returns its wait status; closes J. */
static int
reap(struct jail *j, int timeout_ms)
{
	struct pollfd p = {.fd = j->pidfd, .events = POLLIN};
	siginfo_t si;

	cr_assert_eq(poll(&p, 1, timeout_ms), 1, "jail init did not end");
	memset(&si, 0, sizeof(si));
	cr_assert_eq(syscall(SYS_waitid, P_PIDFD, j->pidfd, &si, WEXITED, NULL),
	    0, "waitid: %s", strerror(errno));
	jail_close(j);
	return si.si_code == CLD_EXITED ? si.si_status : -si.si_status;
}

/* Reads init's ending record: the payload's wait status (blocks until
 * the payload has exited). */
static int
payload_status(const struct jail *j)
{
	int32_t rec[3];

	/* INIT_REC_LANDLOCK (the payload's ABI) and INIT_REC_TASKS (the
	 * tasks left as it ended) may come first. */
	do
		cr_assert_eq(wire_status_read(j->status_fd, rec), 1);
	while (rec[0] == INIT_REC_LANDLOCK || rec[0] == INIT_REC_TASKS);
	cr_assert_eq(rec[0], INIT_REC_PAYLOAD_EXIT, "record %d", rec[0]);
	return rec[1];
}

/* Reads J's next status record into REC, past the Landlock ABI a warm
 * jail's payload reports before it waits (jail_wait_payload). */
static void
next_record(const struct jail *j, int32_t rec[3])
{
	do
		cr_assert_eq(wire_status_read(j->status_fd, rec), 1);
	while (rec[0] == INIT_REC_LANDLOCK);
}

Test(zygote, starts_jails_that_are_the_callers_children)
{
	char *argv[] = {(char *)(uintptr_t) "true", NULL};
	struct fixture f;
	struct job_spec spec;
	struct jail j;
	int st;

	fixture_open(&f);
	for (int i = 0; i < 3; i++) {
		make_spec(&f, &spec, argv);
		cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_OK);
		job_spec_clear(&spec);
		cr_assert_gt(j.pid, 0);
		/* Our child, not the zygote's: waitpid would fail otherwise. */
		st = payload_status(&j);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x",
		    (unsigned)st);
		cr_assert_eq(reap(&j, 10000), 0);
	}
	fixture_close(&f);
}

Test(zygote, kills_a_jail_on_request)
{
	char *argv[] = {(char *)(uintptr_t) "sleep", (char *)(uintptr_t) "30",
	    NULL};
	struct fixture f;
	struct job_spec spec;
	struct jail j;
	long start;

	fixture_open(&f);
	make_spec(&f, &spec, argv);
	cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_OK);
	start = harness_now_ms();
	/* Another jail's token kills nothing. */
	cr_assert_gt(j.token, 0);
	cr_assert_eq(zygote_kill(&f.z, j.token + 100, SIGKILL), 0);
	cr_assert_eq(zygote_kill(&f.z, j.token, SIGKILL), 0);
	cr_assert_eq(reap(&j, 5000), -SIGKILL);
	cr_assert_lt(harness_now_ms() - start, 5000);
	job_spec_clear(&spec);
	fixture_close(&f);
}

Test(zygote, the_first_request_fixes_what_later_ones_may_ask)
{
	char *argv[] = {(char *)(uintptr_t) "true", NULL};
	struct fixture f;
	struct job_spec spec;
	struct jail j;
	int other;

	fixture_open(&f);
	make_spec(&f, &spec, argv);
	cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_OK);
	(void)payload_status(&j);
	reap(&j, 10000);
	job_spec_clear(&spec);

	/* Another directory as the workspace. */
	other = open(harness_workspace(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(other, 0);
	make_spec(&f, &spec, argv);
	cr_assert_eq(ask(&f, &spec, other, &j), ZYGOTE_NOT_SESSION);
	job_spec_clear(&spec);
	close(other);

	/* No seccomp filter. */
	make_spec(&f, &spec, argv);
	spec.flags |= JOB_F_UNSAFE_NO_SECCOMP;
	cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_NOT_SESSION);
	job_spec_clear(&spec);

	/* Another host path bound into the jail (the spec owns its mounts
	 * and strings, proto.h: one is replaced by a copy of its own). */
	make_spec(&f, &spec, argv);
	cr_assert_gt(spec.nmounts, 0u);
	free(spec.mounts[0].source);
	spec.mounts[0].source = strdup("/etc");
	cr_assert_not_null(spec.mounts[0].source);
	cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_NOT_SESSION);
	job_spec_clear(&spec);

	/* Other ids, another profile. */
	make_spec(&f, &spec, argv);
	spec.uid += 1;
	cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_NOT_SESSION);
	job_spec_clear(&spec);
	make_spec(&f, &spec, argv);
	free(spec.seccomp_profile);
	spec.seccomp_profile = strdup("strict");
	cr_assert_not_null(spec.seccomp_profile);
	cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_NOT_SESSION);
	job_spec_clear(&spec);

	/* What may differ per job still runs: arguments and limits. */
	make_spec(&f, &spec, argv);
	spec.limits.wall_ms = 1234;
	{
		enum zygote_refusal r = ask(&f, &spec, f.wsfd, &j);

		cr_assert_eq(r, ZYGOTE_OK, "refusal %d", (int)r);
	}
	(void)payload_status(&j);
	reap(&j, 10000);
	job_spec_clear(&spec);
	fixture_close(&f);
}

Test(zygote, a_malformed_request_is_refused_and_the_zygote_goes_on)
{
	char *argv[] = {(char *)(uintptr_t) "true", NULL};
	uint8_t junk[WIRE_HEADER_SIZE + 16] = {0};
	uint8_t reply[WIRE_MAX_MSG];
	int fds[WIRE_MAX_FDS];
	struct fixture f;
	struct job_spec spec;
	struct wire_msg m;
	struct jail j;
	int32_t refusal;

	fixture_open(&f);
	/* A jail request whose body is no RUN message. */
	junk[WIRE_HEADER_SIZE] = 0xde;
	junk[WIRE_HEADER_SIZE + 1] = 0xad;
	cr_assert_eq(wire_send(f.z.sock, junk, sizeof(junk), WIRE_JAIL,
			 WIRE_ROLE_BIT(0), &f.wsfd),
	    0);
	cr_assert_gt(wire_recv(f.z.sock, reply, sizeof(reply), fds,
			 WIRE_MAX_FDS, &m),
	    0);
	cr_assert_eq(m.type, WIRE_JAIL_REPLY);
	cr_assert_eq(m.nfds, 0u);
	memcpy(&refusal, m.body, sizeof(refusal));
	cr_assert_eq(refusal, ZYGOTE_BAD_REQUEST);
	/* A message with no header of this wire at all. */
	cr_assert_eq(proto_send_fds(f.z.sock, junk + WIRE_HEADER_SIZE, 16,
			 &f.wsfd, 1),
	    0);
	cr_assert_gt(wire_recv(f.z.sock, reply, sizeof(reply), fds,
			 WIRE_MAX_FDS, &m),
	    0);
	cr_assert_eq(m.type, WIRE_JAIL_REPLY);
	cr_assert_eq(m.nfds, 0u);
	memcpy(&refusal, m.body, sizeof(refusal));
	cr_assert_eq(refusal, ZYGOTE_BAD_REQUEST);
	make_spec(&f, &spec, argv);
	cr_assert_eq(ask(&f, &spec, f.wsfd, &j), ZYGOTE_OK);
	(void)payload_status(&j);
	reap(&j, 10000);
	job_spec_clear(&spec);
	fixture_close(&f);
}

Test(zygote, dies_with_its_launcher_at_eof)
{
	struct fixture f;
	int pidfd;
	struct pollfd p;

	fixture_open(&f);
	pidfd = (int)syscall(SYS_pidfd_open, f.z.pid, 0);
	cr_assert_geq(pidfd, 0);
	zygote_stop(&f.z);
	p = (struct pollfd){.fd = pidfd, .events = POLLIN};
	cr_assert_eq(poll(&p, 1, 5000), 1, "the zygote did not exit at EOF");
	waitpid(f.z.pid, NULL, 0);
	close(pidfd);
	close(f.wsfd);
	close(f.self_pidfd);
	policy_clear(&f.pol);
}

/* ---- jails for the warm pool (zygote_prepare_send,
 * launcher/supervisor/pool.h) ---- */

/* Prepares a jail built for TEMPLATE (ARGV's spec) into J. */
static void
prepare(struct fixture *f, char **argv, struct jail *j)
{
	static uint8_t run[PROTO_MAX_MSG];
	struct job_spec spec;
	struct zygote_reply r;
	struct jail scratch;
	size_t len;
	int e;

	make_spec(f, &spec, argv);
	len = run_msg(&spec, run);
	e = zygote_prepare_send(&f->z, run, len, f->wsfd);
	cr_assert_eq(e, 0, "zygote_prepare_send: %s", strerror(-e));
	/* One at a time, and no other request while it is pending (the
	 * replies come in order). */
	cr_assert_eq(zygote_prepare_send(&f->z, run, len, f->wsfd), -EBUSY);
	cr_assert_eq(zygote_start_jail(&f->z, &spec, run, len, f->wsfd, -1, -1,
			 j, &r),
	    -EBUSY);
	e = zygote_prepare_recv(&f->z, j, &r);
	cr_assert_eq(e, 0, "zygote_prepare_recv: %s", strerror(-e));
	cr_assert_eq(zygote_prepare_recv(&f->z, &scratch, &r), -EINVAL);
	cr_assert_eq(r.refusal, ZYGOTE_OK, "refusal %d (%s)", (int)r.refusal,
	    r.why);
	cr_assert_geq(j->go_fd, 0);
	job_spec_clear(&spec);
}

/* Sends SPEC to prepared jail J as a WIRE_GO message of type TYPE with
 * the descriptor IN (when >= 0) under the role mask ROLES, raw: its
 * header written here, unchecked, so that a test can send one wire_send
 * would refuse. */
static void
give_raw(struct jail *j, const struct job_spec *spec, uint16_t type,
    uint32_t roles, int in)
{
	static uint8_t msg[WIRE_MAX_MSG];
	int n = proto_encode_run(msg + WIRE_HEADER_SIZE,
	    sizeof(msg) - WIRE_HEADER_SIZE, spec);
	size_t nfds = in >= 0 ? 1 : 0;

	cr_assert_gt(n, 0);
	msg[0] = (uint8_t)type;
	msg[1] = (uint8_t)(type >> 8);
	msg[2] = (uint8_t)nfds;
	msg[3] = 0;
	for (int i = 0; i < 4; i++)
		msg[4 + i] = (uint8_t)(roles >> (8 * i));
	cr_assert_eq(proto_send_fds(j->go_fd, msg, WIRE_HEADER_SIZE + (size_t)n,
			 &in, nfds),
	    0);
	close(j->go_fd);
	j->go_fd = -1;
}

/* Sends SPEC to prepared jail J, as pool_take does (no stdin). */
static void
give(struct jail *j, const struct job_spec *spec)
{
	give_raw(j, spec, WIRE_GO, 0, -1);
}

/* Reads J's standard output until EOF (at most SIZE - 1 bytes). */
static void
read_stdout(const struct jail *j, char *buf, size_t size)
{
	size_t got = 0;

	for (;;) {
		struct pollfd p = {.fd = j->out_fd, .events = POLLIN};
		ssize_t n;

		cr_assert_eq(poll(&p, 1, 10000), 1, "no output");
		n = read(j->out_fd, buf + got, size - 1 - got);
		if (n < 0 && errno == EAGAIN)
			continue;
		cr_assert_geq(n, 0);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
}

Test(zygote, a_prepared_jail_waits_idle_then_runs_the_job_it_is_given)
{
	char *tmpl[] = {(char *)(uintptr_t) "true", NULL};
	char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t) "echo ran; ls -A /tmp", NULL};
	unsigned long long before, after;
	struct job_spec spec;
	char state, out[256];
	struct fixture f;
	struct jail j;
	int st;

	fixture_open(&f);
	prepare(&f, tmpl, &j);
	/* Built, then blocked in recv(2): asleep, and no CPU spent. */
	usleep(300 * 1000);
	harness_proc_ticks(j.pid, &state, &before);
	cr_assert_eq(state, 'S', "state %c", state);
	usleep(700 * 1000);
	harness_proc_ticks(j.pid, &state, &after);
	cr_assert_eq(state, 'S', "state %c", state);
	cr_assert_eq(after, before, "an idle jail spent CPU time");
	/* The job it is given runs, with its own argv. */
	make_spec(&f, &spec, argv);
	give(&j, &spec);
	job_spec_clear(&spec);
	read_stdout(&j, out, sizeof(out));
	cr_assert_str_eq(out, "ran\n");
	st = payload_status(&j);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x",
	    (unsigned)st);
	cr_assert_eq(reap(&j, 10000), 0);
	fixture_close(&f);
}

Test(zygote, prepared_jails_share_nothing)
{
	char *tmpl[] = {(char *)(uintptr_t) "true", NULL};
	char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t) "ls -A /tmp; touch /tmp/left; "
				"readlink /proc/self/ns/mnt /proc/self/ns/pid "
				"/proc/self/ns/net /proc/self/ns/ipc",
	    NULL};
	char out[2][512];
	struct job_spec spec;
	struct fixture f;
	struct jail j[2];

	fixture_open(&f);
	prepare(&f, tmpl, &j[0]);
	prepare(&f, tmpl, &j[1]);
	for (int i = 0; i < 2; i++) {
		make_spec(&f, &spec, argv);
		give(&j[i], &spec);
		job_spec_clear(&spec);
		read_stdout(&j[i], out[i], sizeof(out[i]));
		(void)payload_status(&j[i]);
		cr_assert_eq(reap(&j[i], 10000), 0);
	}
	/* Each found an empty /tmp (the first job's file is not in the
	 * second jail) and namespaces of its own. */
	cr_assert_eq(strncmp(out[0], "mnt:[", 5), 0, "%s", out[0]);
	cr_assert_eq(strncmp(out[1], "mnt:[", 5), 0, "%s", out[1]);
	for (char *a = out[0], *b = out[1]; *a != '\0';) {
		char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');

		cr_assert(ea != NULL && eb != NULL);
		cr_assert(ea - a != eb - b ||
			strncmp(a, b, (size_t)(ea - a)) != 0,
		    "shared namespace %.*s", (int)(ea - a), a);
		a = ea + 1;
		b = eb + 1;
	}
	fixture_close(&f);
}

Test(zygote, a_prepared_jail_refuses_a_job_it_was_not_built_for)
{
	char *tmpl[] = {(char *)(uintptr_t) "true", NULL};
	char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t) "echo ran", NULL};
	int32_t rec[3];
	struct job_spec spec;
	struct fixture f;
	struct jail j;
	char out[64];

	fixture_open(&f);
	prepare(&f, tmpl, &j);
	/* A launcher may not widen a jail: no seccomp filter, another
	 * home size. */
	make_spec(&f, &spec, argv);
	spec.flags |= JOB_F_UNSAFE_NO_SECCOMP;
	give(&j, &spec);
	job_spec_clear(&spec);
	read_stdout(&j, out, sizeof(out));
	cr_assert_str_eq(out, "", "the job ran: %s", out);
	next_record(&j, rec);
	cr_assert_eq(rec[0], INIT_REC_SETUP_FAILED);
	cr_assert_eq(rec[1], STAGE_POOL_JOB);
	cr_assert_eq(rec[2], EPERM);
	cr_assert_eq(reap(&j, 10000), 1);

	prepare(&f, tmpl, &j);
	make_spec(&f, &spec, argv);
	spec.limits.home_bytes *= 2;
	give(&j, &spec);
	job_spec_clear(&spec);
	next_record(&j, rec);
	cr_assert_eq(rec[0], INIT_REC_SETUP_FAILED);
	cr_assert_eq(rec[1], STAGE_POOL_JOB);
	cr_assert_eq(reap(&j, 10000), 1);

	/* Nor other rlimits: its payload has set the template's. */
	prepare(&f, tmpl, &j);
	make_spec(&f, &spec, argv);
	spec.limits.memory_bytes /= 2;
	give(&j, &spec);
	job_spec_clear(&spec);
	next_record(&j, rec);
	cr_assert_eq(rec[0], INIT_REC_SETUP_FAILED);
	cr_assert_eq(rec[1], STAGE_POOL_JOB);
	cr_assert_eq(rec[2], EPERM);
	cr_assert_eq(reap(&j, 10000), 1);
	fixture_close(&f);
}

/* Prepares a jail for TMPL, sends it SPEC raw (give_raw: TYPE, ROLES, the
 * read end of a fresh pipe when WITH_PIPE) and checks init refused it:
 * a STAGE_POOL_JOB set-up failure with errno ERR, init exiting 1. */
static void
refused_go(struct fixture *f, char **tmpl, const struct job_spec *spec,
    uint16_t type, uint32_t roles, bool with_pipe, int err)
{
	int32_t rec[3];
	struct jail j;
	int p[2] = {-1, -1};

	prepare(f, tmpl, &j);
	if (with_pipe)
		cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	give_raw(&j, spec, type, roles, p[0]);
	if (with_pipe) {
		close(p[0]);
		close(p[1]);
	}
	next_record(&j, rec);
	cr_assert_eq(rec[0], INIT_REC_SETUP_FAILED);
	cr_assert_eq(rec[1], STAGE_POOL_JOB);
	cr_assert_eq(rec[2], err, "errno %d, not %d", rec[2], err);
	cr_assert_eq(reap(&j, 10000), 1);
}

/* A waiting jail takes its job as a WIRE_GO message (shared/wire.h): the
 * stdin pipe by its role, exactly when the RUN has JOB_F_STDIN. */
Test(zygote, a_prepared_jail_takes_its_stdin_pipe_by_role_only)
{
	char *tmpl[] = {(char *)(uintptr_t) "true", NULL};
	char *argv[] = {(char *)(uintptr_t) "cat", NULL};
	struct job_spec spec;
	struct fixture f;
	struct jail j;
	char out[64];
	int p[2];

	fixture_open(&f);
	make_spec(&f, &spec, argv);
	spec.flags |= JOB_F_STDIN;
	prepare(&f, tmpl, &j);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(write(p[1], "in\n", 3), 3);
	close(p[1]);
	give_raw(&j, &spec, WIRE_GO, WIRE_ROLE_BIT(0), p[0]);
	close(p[0]);
	read_stdout(&j, out, sizeof(out));
	cr_assert_str_eq(out, "in\n");
	cr_assert_eq(WEXITSTATUS(payload_status(&j)), 0);
	reap(&j, 10000);
	/* JOB_F_STDIN without the stdin pipe role. */
	refused_go(&f, tmpl, &spec, WIRE_GO, 0, false, EPERM);
	/* The role, but the RUN has no JOB_F_STDIN. */
	spec.flags &= ~(uint32_t)JOB_F_STDIN;
	refused_go(&f, tmpl, &spec, WIRE_GO, WIRE_ROLE_BIT(0), true, EPERM);
	/* A role GO's row does not have (bit 1): refused by the header. */
	refused_go(&f, tmpl, &spec, WIRE_GO, WIRE_ROLE_BIT(1), true, EPROTO);
	/* A message of another type, though well formed. */
	refused_go(&f, tmpl, &spec, WIRE_KILL, 0, false, EBADMSG);
	job_spec_clear(&spec);
	fixture_close(&f);
}

Test(zygote, a_prepared_jail_dropped_by_the_launcher_ends_quietly)
{
	char *tmpl[] = {(char *)(uintptr_t) "true", NULL};
	uint8_t rec[WIRE_STATUS_SIZE];
	int32_t got[3];
	struct fixture f;
	struct jail j;

	fixture_open(&f);
	prepare(&f, tmpl, &j);
	close(j.go_fd);
	j.go_fd = -1;
	/* No record but the waiting payload's Landlock ABI: init reads EOF
	 * and exits 0, and its payload with it. */
	while (wire_status_read(j.status_fd, got) == 1)
		cr_assert_eq(got[0], INIT_REC_LANDLOCK, "record %d", got[0]);
	cr_assert_eq(read(j.status_fd, rec, sizeof(rec)), 0);
	cr_assert_eq(reap(&j, 10000), 0);
	fixture_close(&f);
}

/* The filters compiled at build time (launcher/zygote/bpfgen.c) are the ones
 * libseccomp builds at run time, instruction for instruction, for every
 * compiled-in profile and both enforcements. */
Test(zygote, the_prebuilt_filters_are_the_runtime_ones)
{
	size_t n = 0;

	for (size_t i = 0; jail_seccomp_profile_name(i) != NULL; i++)
		for (int m = 0; m < 2; m++) {
			const char *name = jail_seccomp_profile_name(i);
			struct sock_fprog pre, run;
			bool kpre = false, krun = false;
			scmp_filter_ctx ctx;
			char why[256];
			int e = jail_seccomp_prebuilt(name, m == 1, &pre,
			    &kpre);

			cr_assert_eq(e, 0, "%s/%d: %s", name, m, strerror(-e));
			ctx = jail_seccomp_build(name, m == 1, &krun, why,
			    sizeof(why));
			cr_assert_not_null(ctx, "%s", why);
			cr_assert_eq(jail_seccomp_compile(ctx, &run), 0);
			seccomp_release(ctx);
			cr_assert_eq(pre.len, run.len, "%s/%d", name, m);
			cr_assert_eq(memcmp(pre.filter, run.filter,
					 run.len * sizeof(*run.filter)),
			    0, "%s/%d differs", name, m);
			cr_assert_eq(kpre, krun);
			free(pre.filter);
			free(run.filter);
			n++;
		}
	cr_assert_eq(n, 4u, "default and strict, monitor and cgroup");
}

/*
 * A measure's wait (zygote_measure) ends at the zygote's reply_wait_ms,
 * the job's wall-clock time left as the monitor sets it, not at 10 s, so
 * a slow Pss walk cannot hold the launcher's loop past a job's timeout;
 * the reply that comes late is dropped by zygote_drop_late, or by the
 * next measure, which takes its own reply by its number. Against a fake
 * zygote: the other end of a socket pair, answering by hand.
 */
static void
fake_reply(int sock, uint32_t seq, uint64_t bytes)
{
	uint8_t out[WIRE_HEADER_SIZE + 48];
	struct wbuf w;

	wbuf_init(&w, out, sizeof(out));
	w.len = WIRE_HEADER_SIZE;
	wbuf_put_i32(&w, 0);
	wbuf_put_u32(&w, seq);
	wbuf_put_u64(&w, bytes); /* the Pss sum */
	wbuf_put_u64(&w, bytes); /* the resident sum of the walk */
	wbuf_put_u64(&w, 0);
	wbuf_put_u64(&w, 0);
	wbuf_put_u32(&w, 0); /* fallbacks */
	cr_assert(wbuf_ok(&w));
	cr_assert_geq(wire_send(sock, out, w.len, WIRE_MEASURE_REPLY, 0, NULL),
	    0);
}

static uint64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

Test(zygote, a_measure_waits_no_longer_than_the_wall_clock_left)
{
	struct zygote z;
	uint64_t bytes = 0, resident = 0, t0;
	uint32_t fallbacks = 0;
	int sv[2], r;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
	    0);
	memset(&z, 0, sizeof(z));
	z.pid = -1;
	z.sock = sv[0];
	z.buf = malloc(PROTO_MAX_MSG);
	cr_assert_not_null(z.buf);
	z.reply_wait_ms = 200;
	t0 = now_ms();
	r = zygote_measure(&z, 7, 64, &bytes, &fallbacks, &resident);
	cr_assert_eq(r, -ETIMEDOUT, "measure with no reply: %d", r);
	cr_assert_lt(now_ms() - t0, 5000u, "waited %llu ms for a 200 ms wait",
	    (unsigned long long)(now_ms() - t0));
	cr_assert_eq(z.late_replies, 1u);

	/* The late reply comes: dropped, and nothing else is taken. */
	fake_reply(sv[1], z.measure_seq, 123);
	cr_assert_eq(zygote_drop_late(&z), 0);
	cr_assert_eq(z.late_replies, 0u);
	cr_assert_eq(zygote_drop_late(&z), -EAGAIN, "none late any more");

	/* Late again; the next measure skips the old reply for its own. */
	r = zygote_measure(&z, 7, 64, &bytes, &fallbacks, &resident);
	cr_assert_eq(r, -ETIMEDOUT);
	fake_reply(sv[1], z.measure_seq, 1);
	fake_reply(sv[1], z.measure_seq + 1, 4096);
	r = zygote_measure(&z, 7, 64, &bytes, &fallbacks, &resident);
	cr_assert_eq(r, 0, "measure: %d", r);
	cr_assert_eq(bytes, 4096u, "took the late reply's figure: %llu",
	    (unsigned long long)bytes);
	cr_assert_eq(resident, 4096u);
	cr_assert_eq(z.late_replies, 0u);
	free(z.buf);
	close(sv[0]);
	close(sv[1]);
}
