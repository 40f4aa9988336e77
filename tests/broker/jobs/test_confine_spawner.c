/*
 * test_confine_spawner.c: the launcher spawner (broker/jobs/spawner.c), which
 * starts launchers for a broker that can no longer exec (issue 3, item
 * 7): a confined broker restarts its launcher through it, and both die
 * with the broker; and the spawner's own contract. The confined broker
 * is a child that reports what it saw (tests/lib/probe.h).
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534, like the other jail suites.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine.h"
#include "harness.h"
#include "jobspec.h"
#include "policy.h"
#include "probe.h"
#include "proto.h"
#include "spawner.h"
#include "staged.h"
#include "supervisor.h"

TestSuite(confine_spawner, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 90);

/* ---- a confined broker starts launchers through its spawner ------------- */

struct broker_args {
	const char *launcher;
	const char *ws;
};

struct captured {
	char data[3][1024];
	size_t len[3];
};

static void
on_output(void *arg, int stream, const uint8_t *data, size_t len)
{
	struct captured *c = arg;
	size_t room;

	if (stream != 1 && stream != 2)
		return;
	room = sizeof(c->data[stream]) - 1 - c->len[stream];
	if (len > room)
		len = room;
	memcpy(c->data[stream] + c->len[stream], data, len);
	c->len[stream] += len;
	c->data[stream][c->len[stream]] = '\0';
}

/* Runs "sh -c SCRIPT" in the confined broker; checks it ends ok and
 * printed WANT. */
static void
broker_job(struct supervisor *sup, struct policy *pol, int wsfd,
    const char *script, const char *want)
{
	char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t)script, NULL};
	struct job_spec spec;
	struct job_result res;
	struct captured c;
	int e;

	memset(&c, 0, sizeof(c));
	memset(&spec, 0, sizeof(spec));
	e = jobspec_from_policy(&spec, pol, 3, argv);
	CHECK(e == 0, "jobspec: %s", strerror(-e));
	if (e != 0)
		return;
	/* A stage the job may write (jobrun_stage_size's part). */
	spec.workspace_allow = 1u << 20;
	spec.stage_files = 64;
	e = supervisor_run(sup, &spec, wsfd, on_output, &c, &res);
	CHECK(e == 0, "supervisor_run: %s", strerror(-e));
	if (e == 0) {
		CHECK(res.status == JOB_OK, "job %s: %s (%s) stderr %s", script,
		    job_status_name(res.status), res.detail ? res.detail : "",
		    c.data[2]);
		CHECK(strcmp(c.data[1], want) == 0, "job output \"%s\"",
		    c.data[1]);
		job_result_clear(&res);
	}
	job_spec_clear(&spec);
}

/* The stage the first job sent (supervisor.h, stage_fn). */
struct stage_got {
	int fd;
	uint8_t token[PROTO_STAGE_TOKEN_BYTES];
};

static void
on_stage(void *arg, uint64_t job_id, int stage, const uint8_t *token)
{
	struct stage_got *g = arg;

	(void)job_id;
	if (g->fd >= 0) {
		close(stage);
		return;
	}
	g->fd = stage;
	memcpy(g->token, token, sizeof(g->token));
}

/* The confined broker reads the job's stage G (through its spawner:
 * Landlock would refuse it the stage's tmpfs) and commits it to the
 * workspace WSFD under POL. */
static void
commit_stage(struct stage_got *g, struct policy *pol, int wsfd)
{
	struct staged st;
	struct fs_ctx ctx;
	int e;

	CHECK(g->fd >= 0, "no stage came with the job");
	if (g->fd < 0)
		return;
	fsapi_ctx_init(&ctx, wsfd, &pol->files);
	e = staged_open(&st, g->fd, g->token, wsfd, &ctx.quota, &pol->writeback,
	    1, NULL);
	g->fd = -1;
	CHECK(e == 0, "staged_open: %s", strerror(-e));
	CHECK(st.ch.n == 1, "%zu changes, first %s", st.ch.n,
	    st.ch.n > 0 ? st.ch.c[0].entry->path : "");
	e = e == 0 ? staged_commit(&st, &ctx, NULL, 0, NULL) : e;
	CHECK(e == 0, "staged_commit: %s (%s %s)", strerror(-e),
	    fs_error_name(st.commit.why), st.commit.path);
	staged_free(&st);
}

/* A real job in the confined broker (SUP, POL, the workspace WSFD at
 * WS): what it wrote in /work goes to its stage, which the broker reads
 * and commits through its spawner. */
static void
first_job(struct supervisor *sup, struct policy *pol, int wsfd, const char *ws)
{
	struct stage_got got = {.fd = -1};
	char path[600], *text;

	sup->stage_fn = on_stage;
	sup->stage_arg = &got;
	broker_job(sup, pol, wsfd, "echo made > /work/out; echo first",
	    "first\n");
	sup->stage_fn = NULL;
	commit_stage(&got, pol, wsfd);
	snprintf(path, sizeof(path), "%s/out", ws);
	text = harness_read_file(path, NULL);
	CHECK(text != NULL && strcmp(text, "made\n") == 0, "workspace file: %s",
	    text ? text : strerror(errno));
	free(text);
}

static void
broker_child(void *arg)
{
	struct broker_args *a = arg;
	struct supervisor sup;
	struct policy pol;
	struct confine_rule r;
	char err[POLICY_ERR_MAX + 256];
	struct pollfd pf;
	pid_t first, holder;
	int wsfd, e;

	memset(&pol, 0, sizeof(pol));
	e = policy_load_default(&pol, err, sizeof(err));
	CHECK(e == 0, "policy: %s", err);
	e = supervisor_init_path(&sup, a->launcher, err, sizeof(err));
	CHECK(e == 0, "supervisor_init_path: %s", err);
	if (probe_failures)
		return;
	e = supervisor_use_spawner(&sup);
	CHECK(e == 0, "supervisor_use_spawner: %s", strerror(-e));
	CHECK(sup.exe_fd == -1, "the broker kept the launcher's descriptor");
	wsfd = open(a->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(wsfd >= 0, "open workspace: %s", strerror(errno));
	if (probe_failures)
		return;
	r = (struct confine_rule){.fd = wsfd, .access = CONFINE_ALL};
	e = confine_broker(&r, 1, err, sizeof(err));
	CHECK(e == 0, "confine_broker: %s (%s)", strerror(-e), err);
	if (e != 0)
		return;
	/* Confined for real: exec is gone. */
	EXPECT_ERRNO(execl("/bin/true", "true", (char *)NULL), EPERM);

	first_job(&sup, &pol, wsfd, a->ws);
	first = sup.pid;
	CHECK(first > 0, "no launcher after the first job");
	if (probe_failures)
		return;
	/* The launcher is our child (CLONE_PARENT), alive and unreaped. */
	CHECK(waitpid(first, NULL, WNOHANG) == 0,
	    "launcher %d is not our "
	    "running child: %s",
	    (int)first, strerror(errno));

	/* Killed between jobs: the next job gets a new one, through the
	 * spawner (the confined broker could not exec it). */
	EXPECT_OK(kill(first, SIGKILL));
	pf = (struct pollfd){.fd = sup.pidfd, .events = POLLIN};
	CHECK(poll(&pf, 1, 5000) == 1, "the launcher did not die");
	broker_job(&sup, &pol, wsfd, "echo second", "second\n");
	CHECK(sup.restarts == 1, "restarts %u", sup.restarts);
	CHECK(sup.pid > 0 && sup.pid != first, "launcher %d after %d",
	    (int)sup.pid, (int)first);
	CHECK(waitpid(first, NULL, WNOHANG) == -1 && errno == ECHILD,
	    "the killed launcher was not reaped");
	broker_job(&sup, &pol, wsfd, "echo third", "third\n");
	CHECK(sup.restarts == 1, "restarts %u", sup.restarts);

	/* A process of ours that keeps copies of both sockets, so that
	 * our death alone does not close them: only PR_SET_PDEATHSIG can
	 * then end the spawner and the launcher. */
	holder = fork();
	if (holder == 0) {
		/* Killed by the parent; gone in 30 s whatever happens. */
		alarm(30);
		for (;;)
			pause();
	}
	CHECK(holder > 0, "fork: %s", strerror(errno));
	/* The parent checks the rest, then kills us. */
	probe_say("PIDS %d %d %d %d", (int)getpid(), (int)sup.spawner.pid,
	    (int)sup.pid, (int)holder);
	probe_say("DONE");
	for (;;)
		pause();
}

/* Reads "PPid:" of PID from /proc; -1 if it cannot. */
static long
ppid_of(pid_t pid)
{
	char path[64], *st;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = harness_read_file(path, NULL);
	if (st == NULL)
		return -1;
	v = probe_status_field(st, "\nPPid:");
	free(st);
	return v;
}

Test(confine_spawner, confined_broker_restarts_launchers_through_its_spawner)
{
	struct broker_args a;
	int fd, broker_st, spfd, lfd, bpfd;
	char text[8192];
	size_t len = 0;
	const char *pids;
	int broker, spawner, launcher, holder, hfd;
	pid_t pid;

	if (!probe_need_landlock())
		return;
	a.launcher = harness_launcher();
	a.ws = harness_workspace();
	/* The broker says "DONE" after its pids and stays; it returns (and
	 * ends) only when a check failed. Read until "DONE", EOF or 60 s. */
	pid = probe_start(broker_child, &a, &fd);
	(void)probe_read(fd, text, sizeof(text), &len, "DONE\n");
	bpfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pids = strstr(text, "PIDS ");
	if (pids == NULL || strstr(text, "FAIL") != NULL) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_assert_fail("the confined broker said:\n%s", text);
	}
	cr_assert_eq(sscanf(pids, "PIDS %d %d %d %d", &broker, &spawner,
			 &launcher, &holder),
	    4, "%s", text);
	hfd = (int)syscall(SYS_pidfd_open, holder, 0);
	cr_assert_geq(hfd, 0, "pidfd_open holder: %s", strerror(errno));
	cr_assert_eq(broker, pid);
	/* The spawner is the broker's child; the launcher too, not the
	 * spawner's (CLONE_PARENT). */
	cr_assert_eq(ppid_of(spawner), pid, "spawner's parent");
	cr_assert_eq(ppid_of(launcher), pid, "launcher's parent");
	spfd = (int)syscall(SYS_pidfd_open, spawner, 0);
	lfd = (int)syscall(SYS_pidfd_open, launcher, 0);
	cr_assert(spfd >= 0 && lfd >= 0 && bpfd >= 0, "pidfd_open: %s",
	    strerror(errno));

	/* The broker dies: its spawner and launcher die with it
	 * (PR_SET_PDEATHSIG in both), though the holder keeps their
	 * sockets open. */
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &broker_st, 0), pid);
	cr_assert(WIFSIGNALED(broker_st) && WTERMSIG(broker_st) == SIGKILL);
	{
		struct pollfd pf[2] = {{.fd = spfd, .events = POLLIN},
		    {.fd = lfd, .events = POLLIN}};

		for (long end = harness_now_ms() + 5000;
		     harness_now_ms() < end;) {
			pf[0].revents = pf[1].revents = 0;
			poll(pf, 2, 100);
			if ((pf[0].revents & POLLIN) &&
			    (pf[1].revents & POLLIN))
				break;
		}
		/* The holder goes first, so that a failure below leaves
		 * nothing holding Criterion's pipes. */
		cr_assert_eq(syscall(SYS_pidfd_send_signal, hfd, SIGKILL, NULL,
				 0),
		    0);
		close(hfd);
		cr_assert(pf[0].revents & POLLIN,
		    "the spawner %d outlived its broker", spawner);
		cr_assert(pf[1].revents & POLLIN,
		    "the launcher %d outlived its broker", launcher);
	}
	close(spfd);
	close(lfd);
	close(bpfd);
	close(fd);
}

/* ---- the spawner's own contract ----------------------------------------- */

/* Sends the malformed request KIND to SP's spawner: 0, two bytes (no
 * wire header); 1, a well-formed header of another type (WIRE_KILL); 2,
 * a WIRE_SPAWN header with a descriptor its row has no role for, sent
 * raw (wire_send refuses it). */
static void
send_malformed(const struct spawner *sp, int kind)
{
	uint8_t hdr[WIRE_HEADER_SIZE] = {(uint8_t)WIRE_SPAWN, 0, 1, 0, 1, 0, 0,
	    0};
	int fd = STDERR_FILENO;

	if (kind == 0)
		cr_assert_eq(send(sp->sock, "LL", 2, MSG_NOSIGNAL), 2);
	else if (kind == 1)
		cr_assert_eq(wire_send(sp->sock, hdr, sizeof(hdr), WIRE_KILL, 0,
				 NULL),
		    0);
	else
		cr_assert_eq(proto_send_fds(sp->sock, hdr, sizeof(hdr), &fd, 1),
		    0);
}

/* A request that is not a bare WIRE_SPAWN header (shared/wire.h) ends the
 * spawner: the next launch reports it gone, and it has been reaped. */
Test(confine_spawner, spawner_ends_on_a_malformed_request)
{
	struct spawner sp;
	int fd, sock = -1, pidfd = -1, e;
	pid_t pid = 0, spid;
	struct pollfd pf;

	for (int kind = 0; kind < 3; kind++) {
		fd = open(harness_launcher(), O_PATH | O_CLOEXEC);
		cr_assert_geq(fd, 0);
		spawner_clear(&sp);
		cr_assert_eq(spawner_start(&sp, fd), 0);
		close(fd);
		spid = sp.pid;
		cr_assert_gt(spid, 0);
		send_malformed(&sp, kind);
		pf = (struct pollfd){.fd = sp.pidfd, .events = POLLIN};
		cr_assert_eq(poll(&pf, 1, 5000), 1,
		    "request %d: the spawner is still running", kind);
		e = spawner_launch(&sp, (uint64_t)harness_now_ms() + 5000,
		    &sock, &pidfd, &pid);
		cr_assert_eq(e, -ENOTCONN, "spawner_launch: %d (%s)", e,
		    strerror(-e));
		cr_assert_eq(sp.pid, 0);
		cr_assert_eq(sp.sock, -1);
		cr_assert_eq(waitpid(spid, NULL, WNOHANG), -1);
		cr_assert_eq(errno, ECHILD);
		spawner_stop(&sp);
	}
}

/* The launcher a spawner starts gets exactly stdin, stdout, stderr and
 * its socket at 3 (spawner_exec_launcher), and is our child. Checked
 * with the fake launcher that answers nothing, which keeps them. */
Test(confine_spawner, spawned_launcher_gets_only_its_socket)
{
	struct spawner sp;
	int fd, sock = -1, pidfd = -1, e, n = 0, high = -1;
	char dir[64];
	pid_t pid = 0;
	DIR *d;
	struct dirent *de;

	fd = open(harness_helper("fake-launcher-silent"), O_PATH | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	spawner_clear(&sp);
	cr_assert_eq(spawner_start(&sp, fd), 0);
	close(fd);
	e = spawner_launch(&sp, (uint64_t)harness_now_ms() + 5000, &sock,
	    &pidfd, &pid);
	cr_assert_eq(e, 0, "spawner_launch: %s", strerror(-e));
	cr_assert_gt(pid, 0);
	cr_assert_eq(ppid_of(pid), getpid());
	/* List its descriptors until they are stdin, stdout, stderr and the
	 * socket, for up to 2 s: a sanitized fake launcher's runtime opens
	 * files of its own for a moment as it starts (seen as descriptor 4
	 * under ASan as uid 65534), while a descriptor the spawner leaked
	 * stays. */
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	for (long end = harness_now_ms() + 2000;;) {
		high = -1;
		n = 0;
		d = opendir(dir);
		cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			n++;
			if (atoi(de->d_name) > SPAWNER_LAUNCHER_FD)
				high = atoi(de->d_name);
		}
		closedir(d);
		if ((high < 0 && n == 4) || harness_now_ms() >= end)
			break;
		usleep(10000);
	}
	cr_assert(high < 0, "the launcher has descriptor %d", high);
	cr_assert_eq(n, 4);
	cr_assert_eq(syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0),
	    0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	close(sock);
	close(pidfd);
	spawner_stop(&sp);
	cr_assert_eq(sp.pid, 0);
}
