/*
 * test_jailstage.c: a job's writes as a layer of their own (issue 26),
 * end to end through a real launcher: the test is the broker (struct
 * supervisor, as in test_jailnet.c), and its stage_fn receives the
 * descriptor of the job's stage tmpfs (PROTO_STAGE). A write to /work lands in the stage's
 * upper/ and not in the workspace; a delete leaves a whiteout there and
 * the workspace's file untouched; the kernel holds the allowance
 * (workspace_allow bytes, stage_files inodes): a write, a
 * posix_fallocate, or a file unlinked but held open past it is ENOSPC,
 * files past stage_files too; an allowance of 0 lets nothing be written.
 * Attacks stay small (a 1 MiB stage).
 *
 * Registered twice, as the invoking user and as 65534 (tests/meson.build).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "harness.h"
#include "jobspec.h"
#include "session_util.h"

TestSuite(jailstage, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 120);

#define MIB (1024u * 1024u)

/* The payload: one action (argv[1]) on /work, its outcome printed as
 * "<action> ok" or "<action> <errno name>". */
static const char probe[] =
    "import errno, os, sys\n"
    "def name(e): return errno.errorcode.get(e.errno, str(e))\n"
    "a = sys.argv[1]; n = int(sys.argv[2]) if len(sys.argv) > 2 else 0\n"
    "def fill(path, size):\n"
    "    f = open(path, 'wb', buffering=0)\n"
    "    left = size\n"
    "    while left > 0:\n"
    "        left -= f.write(b'x' * min(left, 65536))\n"
    "    return f\n"
    "try:\n"
    "    if a == 'write':\n"
    "        open('/work/new', 'w').write('hi\\n'); os.unlink('/work/old')\n"
    "    elif a == 'big':\n"
    "        fill('/work/big', n).close()\n"
    "    elif a == 'fallocate':\n"
    "        fd = os.open('/work/fa', os.O_CREAT | os.O_WRONLY, 0o644)\n"
    "        os.posix_fallocate(fd, 0, n)\n"
    "    elif a == 'unlinked':\n"
    "        f = fill('/work/u1', n); os.unlink('/work/u1')\n"
    "        print('held', os.fstat(f.fileno()).st_nlink)\n"
    "        fill('/work/u2', n).close()\n"
    "    elif a == 'files':\n"
    "        for i in range(n):\n"
    "            try:\n"
    "                open('/work/f%d' % i, 'w').close()\n"
    "            except OSError as e:\n"
    "                print('made', i); raise\n"
    "    elif a == 'one':\n"
    "        open('/work/one', 'w').close()\n"
    "    print(a, 'ok')\n"
    "except OSError as e:\n"
    "    print(a, name(e))\n";

/* What the test's stage_fn received. */
struct stage_got {
	int calls;
	uint64_t job_id;
	int fd;
	uint8_t token[PROTO_STAGE_TOKEN_BYTES];
};

static void
on_stage(void *arg, uint64_t job_id, int stage, const uint8_t *token)
{
	struct stage_got *g = arg;

	if (++g->calls > 1) {
		close(stage);
		return;
	}
	g->job_id = job_id;
	g->fd = stage;
	memcpy(g->token, token, sizeof(g->token));
}

/* Runs ARGV (5 strings) on a stage of ALLOW bytes and FILES inodes in
 * SS; its stdout into C, its result into RES (the caller clears it), the
 * stage's descriptor into G (the caller closes it). */
static void
run_stage(struct session *ss, char **argv, uint64_t allow, uint64_t files,
    struct stage_got *g, struct captured *c, struct job_result *res)
{
	struct job_spec spec;
	int e;

	memset(g, 0, sizeof(*g));
	g->fd = -1;
	memset(c, 0, sizeof(*c));
	memset(res, 0, sizeof(*res));
	ss->sup.stage_fn = on_stage;
	ss->sup.stage_arg = g;
	memset(&spec, 0, sizeof(spec));
	cr_assert_eq(jobspec_from_policy(&spec, &ss->pol, 5, argv), 0);
	spec.workspace_allow = allow;
	spec.stage_files = files;
	e = supervisor_run(&ss->sup, &spec, ss->wsfd, on_output, c, res);
	cr_assert_eq(e, 0, "supervisor_run: %s", strerror(-e));
	cr_assert_eq(g->calls, 1, "STAGE came %d times", g->calls);
	cr_assert_eq(g->job_id, spec.job_id);
	job_spec_clear(&spec);
}

/* Runs the probe's ACTION with N on a stage of ALLOW bytes and FILES
 * inodes in SS, which must end ok; as run_stage. */
static void
run_probe(struct session *ss, const char *action, uint64_t n, uint64_t allow,
    uint64_t files, struct stage_got *g, struct captured *c)
{
	char num[32];
	char *argv[] = {(char *)(uintptr_t) "python3", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t)probe, (char *)(uintptr_t)action, num, NULL};
	struct job_result res;

	snprintf(num, sizeof(num), "%llu", (unsigned long long)n);
	run_stage(ss, argv, allow, files, g, c, &res);
	cr_assert_eq(res.status, JOB_OK, "%s (%s): %s",
	    job_status_name(res.status), res.detail, c->data[2]);
	job_result_clear(&res);
}

/* Writes TEXT to NAME in the workspace WSFD, owned as the workspace is
 * (a file of an owner the jail does not map cannot be deleted through
 * the overlay: EOVERFLOW). */
static void
put_file(int wsfd, const char *name, const char *text)
{
	int fd = openat(wsfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0644);

	cr_assert_geq(fd, 0, "%s: %s", name, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	if (geteuid() == 0)
		cr_assert_eq(fchown(fd, harness_workspace_owner(),
				 (gid_t)harness_workspace_owner()),
		    0);
	close(fd);
}

/* The stage's root as the broker gets it: a tmpfs directory open for
 * reading, holding upper/ and work/. */
static void
check_stage_root(int fd)
{
	struct statfs sf;
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	cr_assert_geq(fl, 0);
	cr_assert_eq(fl & O_PATH, 0);
	cr_assert_eq(fstatfs(fd, &sf), 0);
	cr_assert_eq(sf.f_type, TMPFS_MAGIC);
	cr_assert_eq(fstatat(fd, "upper", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(fstatat(fd, "work", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISDIR(st.st_mode));
}

Test(jailstage, a_write_lands_in_the_stage_and_a_delete_is_a_whiteout)
{
	struct session ss;
	struct stage_got g;
	struct captured c;
	struct stat st;
	char text[16] = "";
	int fd;

	session_open(&ss);
	put_file(ss.wsfd, "old", "keep\n");
	run_probe(&ss, "write", 0, MIB, 64, &g, &c);
	cr_assert_str_eq(c.data[1], "write ok\n", "%s", c.data[1]);
	check_stage_root(g.fd);
	/* The workspace is as it was. */
	cr_assert_eq(fstatat(ss.wsfd, "new", &st, AT_SYMLINK_NOFOLLOW), -1,
	    "the write reached the workspace");
	cr_assert_eq(fstatat(ss.wsfd, "old", &st, AT_SYMLINK_NOFOLLOW), 0,
	    "the delete reached the workspace");
	cr_assert_eq(st.st_size, 5);
	/* The stage has the new file, the job's (mapped to the payload's
	 * host ids: the workspace's owner), and a whiteout for the old. */
	fd = openat(g.fd, "upper/new", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	cr_assert_geq(fd, 0, "upper/new: %s", strerror(errno));
	cr_assert_eq(read(fd, text, sizeof(text) - 1), 3);
	cr_assert_str_eq(text, "hi\n");
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_eq(st.st_uid, harness_workspace_owner(), "owner %u",
	    (unsigned)st.st_uid);
	close(fd);
	cr_assert_eq(fstatat(g.fd, "upper/old", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISCHR(st.st_mode), "mode %o", (unsigned)st.st_mode);
	cr_assert_eq(major(st.st_rdev), 0);
	cr_assert_eq(minor(st.st_rdev), 0);
	/* The stage outlives the jail, which is gone. */
	cr_assert_eq(fstatat(g.fd, "upper", &st, 0), 0);
	close(g.fd);
	session_close(&ss);
}

Test(jailstage, a_write_past_the_allowance_is_enospc)
{
	struct session ss;
	struct stage_got g;
	struct captured c;
	struct stat st;

	session_open(&ss);
	run_probe(&ss, "big", 2 * MIB, MIB, 64, &g, &c);
	cr_assert_str_eq(c.data[1], "big ENOSPC\n", "%s", c.data[1]);
	cr_assert_eq(fstatat(g.fd, "upper/big", &st, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_leq(st.st_size, MIB);
	close(g.fd);
	/* Within the allowance it fits. */
	run_probe(&ss, "big", MIB / 2, MIB, 64, &g, &c);
	cr_assert_str_eq(c.data[1], "big ok\n", "%s", c.data[1]);
	close(g.fd);
	session_close(&ss);
}

/* A program that fails with its stage full ends disk_full, the
 * allowance named. */
Test(jailstage, a_program_that_fails_of_a_full_stage_is_disk_full)
{
	char *argv[] = {(char *)(uintptr_t) "sh", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t) "head -c $1 /dev/zero > /work/f",
	    (char *)(uintptr_t) "sh", (char *)(uintptr_t) "2097152", NULL};
	struct job_result res;
	struct session ss;
	struct stage_got g;
	struct captured c;

	session_open(&ss);
	run_stage(&ss, argv, MIB, 64, &g, &c, &res);
	cr_assert_eq(res.status, JOB_DISK_FULL, "%s (%s): %s",
	    job_status_name(res.status), res.detail, c.data[2]);
	cr_assert_not_null(strstr(res.detail, "/work was full"), "%s",
	    res.detail);
	job_result_clear(&res);
	close(g.fd);
	session_close(&ss);
}

Test(jailstage, fallocate_past_the_allowance_is_enospc)
{
	struct session ss;
	struct stage_got g;
	struct captured c;

	session_open(&ss);
	run_probe(&ss, "fallocate", 2 * MIB, MIB, 64, &g, &c);
	cr_assert_str_eq(c.data[1], "fallocate ENOSPC\n", "%s", c.data[1]);
	close(g.fd);
	session_close(&ss);
}

Test(jailstage, an_unlinked_file_held_open_still_counts)
{
	struct session ss;
	struct stage_got g;
	struct captured c;

	session_open(&ss);
	run_probe(&ss, "unlinked", 2 * MIB / 3, MIB, 64, &g, &c);
	cr_assert_str_eq(c.data[1], "held 0\nunlinked ENOSPC\n", "%s",
	    c.data[1]);
	close(g.fd);
	session_close(&ss);
}

Test(jailstage, files_past_stage_files_are_enospc)
{
	struct session ss;
	struct stage_got g;
	struct captured c;
	unsigned made = 0;

	session_open(&ss);
	run_probe(&ss, "files", 200, MIB, 10, &g, &c);
	cr_assert_eq(sscanf(c.data[1], "made %u\nfiles ENOSPC\n", &made), 1,
	    "%s", c.data[1]);
	/* The job's 10, and no more than the stage's fixed slack. */
	cr_assert_geq(made, 10);
	cr_assert_lt(made, 10 + 16);
	close(g.fd);
	session_close(&ss);
}

Test(jailstage, an_allowance_of_0_lets_nothing_be_written)
{
	struct session ss;
	struct stage_got g;
	struct captured c;
	struct stat st;

	session_open(&ss);
	run_probe(&ss, "one", 0, 0, 0, &g, &c);
	cr_assert(strcmp(c.data[1], "one ok\n") != 0, "%s", c.data[1]);
	cr_assert_eq(fstatat(g.fd, "upper/one", &st, AT_SYMLINK_NOFOLLOW), -1);
	close(g.fd);
	run_probe(&ss, "big", 1, 0, 1000, &g, &c);
	cr_assert(strcmp(c.data[1], "big ok\n") != 0, "%s", c.data[1]);
	close(g.fd);
	session_close(&ss);
}

/* The first child of launcher PID named stockade-init (a jail waiting in
 * its pool: its other child is the zygote), waited for up to 5 s; or 0. */
static pid_t
waiting_jail(pid_t launcher)
{
	long deadline = harness_now_ms() + 5000;
	pid_t found = 0;

	do {
		char *children = launcher_children(launcher), *save = NULL;

		for (char *t = strtok_r(children, " \n", &save);
		     t != NULL && found == 0;
		     t = strtok_r(NULL, " \n", &save)) {
			char path[64], *comm;

			snprintf(path, sizeof(path), "/proc/%s/comm", t);
			comm = harness_read_file(path, NULL);
			if (comm != NULL &&
			    strcmp(comm, "stockade-init\n") == 0)
				found = (pid_t)atoi(t);
			free(comm);
		}
		free(children);
		if (found == 0)
			usleep(20 * 1000);
	} while (found == 0 && harness_now_ms() < deadline);
	return found;
}

/*
 * A warm pool's jail builds its stage with the template's allowance
 * before its job comes: a job of the same allowance takes it (the jail
 * that waited is gone after it) and gets its STAGE, held as the
 * template's size says; a job of another allowance runs in a cold jail
 * with a stage of its own size (the template's 1 MiB would refuse its
 * 1.5 MiB).
 */
Test(jailstage, a_warm_jail_has_the_stage_of_its_template)
{
	struct session ss;
	struct stage_got g;
	struct captured c;
	char proc[64];
	pid_t warm;

	session_open(&ss);
	ss.sup.pool_size = 1;
	run_probe(&ss, "big", MIB / 2, MIB, 64, &g, &c);
	close(g.fd);
	cr_assert_gt(warm = waiting_jail(ss.sup.pid), 0, "no jail waits");
	run_probe(&ss, "big", 2 * MIB, MIB, 64, &g, &c);
	cr_assert_str_eq(c.data[1], "big ENOSPC\n", "%s", c.data[1]);
	check_stage_root(g.fd);
	close(g.fd);
	snprintf(proc, sizeof(proc), "/proc/%d/comm", (int)warm);
	cr_assert_eq(access(proc, F_OK), -1, "the warm jail was not taken");
	run_probe(&ss, "big", 3 * MIB / 2, 2 * MIB, 64, &g, &c);
	cr_assert_str_eq(c.data[1], "big ok\n", "%s", c.data[1]);
	close(g.fd);
	session_close(&ss);
}
