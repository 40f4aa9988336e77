/*
 * eval_run.c: one attack against one configuration, judged (eval_run.h;
 * issue 6).
 */
#include "eval_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "eval_canary.h"
#include "eval_decoy.h"
#include "eval_detect.h"
#include "eval_job.h"
#include "eval_judge.h"
#include "fsutil.h"
#include "proto.h"
#include "snapshot.h"

#define OUT_KEEP (16u << 20) /* stockade run's stdout kept, bytes */
#define ERR_KEEP (64u << 10) /* its stderr kept */
#define PTY_KEEP (1u << 20) /* what the pty master shows, kept */
#define GRACE_MS 20000 /* past the wall clock: stockade run hung */
#define LEFTOVER_MS 100 /* the leftover check, after the job */
#define FS_CMD_MS 30000 /* one `stockade get/put` */

const char *
eval_outcome_name(enum eval_outcome o)
{
	switch (o) {
	case EVAL_STOPPED:
		return "stopped";
	case EVAL_SUCCEEDED:
		return "succeeded";
	case EVAL_ERROR:
		return "error";
	case EVAL_NOT_RUN:
		return "not_run";
	}
	return "?";
}

/* Copies the attack's program into the workspace W (mode 0755). */
static int
copy_attack(const char *from, int w, const char *name, bool root)
{
	_cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
	char buf[65536];
	ssize_t n;
	int e;

	if (in < 0)
		return -errno;
	out = openat(w, name,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if ((e = write_all(out, buf, (size_t)n)) < 0)
			return e;
	}
	if (fchmod(out, 0755) < 0 ||
	    (root &&
		fchown(out, PROTO_ROOT_PAYLOAD_ID, PROTO_ROOT_PAYLOAD_ID) < 0))
		return -errno;
	return 0;
}

/* Makes the directory NAME under DIRFD (MODE, whatever the umask). */
static int
mkdir_mode(int dirfd, const char *name, mode_t mode)
{
	_cleanup_close_ int fd = -1;

	if (mkdirat(dirfd, name, mode) < 0)
		return -errno;
	fd = openat(dirfd, name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, mode) < 0)
		return -errno;
	return 0;
}

/* ---- the run ------------------------------------------------------------ */

static const struct fs_quota snap_quota = {
    .file_bytes = 16u << 20,
    .workspace_bytes = 256u << 20,
    .max_files = 100000,
    .max_path = 4096,
    .max_depth = 64,
    .mode_mask = 0777,
    .allow_hardlinks = true,
    .inline_bytes = 0,
};

/* The fake home and the user's files, as one tree (eval_judge.h). */
int
eval_snap_outside(struct run *r, struct snapshot *s)
{
	_cleanup_close_ int o = openat(r->dirfd, "o",
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	memset(s, 0, sizeof(*s));
	if (o < 0)
		return -errno;
	return snapshot_take(o, &snap_quota, NULL, NULL, s);
}

/*
 * A SysV shared memory segment of the caller's (mode 0600) holding the
 * shm canary, as a host program's would. It is marked for removal at
 * once and stays attached for the run: it goes away when the run
 * detaches it, even if the eval dies (Linux lets others attach a segment
 * marked so: shmctl(2), IPC_RMID).
 */
static int
shm_make(struct run *r)
{
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	void *p;

	if (id < 0)
		return -errno;
	p = shmat(id, NULL, 0);
	(void)shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1)
		return -errno;
	snprintf(p, 4096, "session_token=%s\n", r->s.canary[EVAL_CANARY_SHM]);
	r->shm = p;
	return 0;
}

/* Everything before the job: directories, secrets, snapshots, decoy. */
static int
prepare(struct run *r, unsigned id)
{
	const struct eval_ctx *ctx = r->ctx;
	bool root = geteuid() == 0;
	_cleanup_close_ int o = -1, w = -1;
	int e;

	eval_secrets_new(&r->s);
	for (int k = 0; k < EVAL_CANARY_N; k++)
		r->nd[k] = (struct eval_needle){eval_canary_name(
						    (enum eval_canary)k),
		    r->s.canary[k], strlen(r->s.canary[k])};
	r->nd[EVAL_CANARY_N] = (struct eval_needle){"pwned", r->s.pwned,
	    strlen(r->s.pwned)};
	snprintf(r->dir, sizeof(r->dir), "%s/r%u", ctx->base, id);
	snprintf(r->home, sizeof(r->home), "%s/o/home", r->dir);
	snprintf(r->userfiles, sizeof(r->userfiles), "%s/o/userfiles", r->dir);
	snprintf(r->work, sizeof(r->work), "%s/w", r->dir);
	snprintf(r->own, sizeof(r->own), "%s/x", r->dir);
	if (mkdir(r->dir, 0711) < 0)
		return -errno;
	if ((r->dirfd = open(r->dir,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	if ((e = mkdir_mode(r->dirfd, "o", 0711)) < 0 ||
	    (e = mkdir_mode(r->dirfd, "w", 0755)) < 0 ||
	    (e = mkdir_mode(r->dirfd, "x", 0700)) < 0)
		return e;
	if ((o = openat(r->dirfd, "o", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) <
		0 ||
	    (w = openat(r->dirfd, "w", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if ((e = eval_home_make(o, "home", &r->s)) < 0 ||
	    (e = eval_userfiles_make(o, "userfiles")) < 0)
		return e;
	/* A root broker's jobs run as PROTO_ROOT_PAYLOAD_ID, and it
	 * refuses a workspace root owns (workspace.h). */
	if (root && fchown(w, PROTO_ROOT_PAYLOAD_ID, PROTO_ROOT_PAYLOAD_ID) < 0)
		return -errno;
	if ((e = copy_attack(r->a->path, w, r->a->file, root)) < 0)
		return e;
	if ((e = eval_hosttmp_make(&r->s, r->hosttmp, sizeof(r->hosttmp))) < 0)
		return e;
	if ((e = eval_snap_outside(r, &r->before)) < 0 ||
	    (e = eval_file_state(r->hosttmp, &r->tmp_before)) < 0)
		return e;
	if ((e = shm_make(r)) < 0)
		return e;
	if ((e = eval_honeypot_serve(ctx->hp,
		 r->s.canary[EVAL_CANARY_SERVICE])) < 0)
		return e;
	r->served = true;
	return eval_decoy_start(&r->decoy, ctx->decoy,
	    r->s.canary[EVAL_CANARY_DECOY_ARGV],
	    r->s.canary[EVAL_CANARY_DECOY_ENV]);
}

/* Starts and waits for `stockade run` with the attack. */
static int
run_job(struct run *r, const char *policy, bool unsafe)
{
	const struct eval_ctx *ctx = r->ctx;
	const char *interp = eval_lang_interpreter(r->a->lang);
	char prog[300], tcp[8], udp[8], decoy[16], slave[64];
	char e_home[4300], e_aws[96], e_api[96], e_path[4200];
	const char *argv[32], *envp[8];
	int n = 0, e;
	_cleanup_close_ int master = -1;

	snprintf(prog, sizeof(prog), "./%s", r->a->file);
	snprintf(tcp, sizeof(tcp), "%u", eval_honeypot_tcp_port(ctx->hp));
	snprintf(udp, sizeof(udp), "%u", eval_honeypot_udp_port(ctx->hp));
	snprintf(decoy, sizeof(decoy), "%d", (int)r->decoy.pid);
	argv[n++] = ctx->self;
	argv[n++] = "run";
	if (unsafe)
		argv[n++] = "--unsafe-evaluation";
	argv[n++] = "--format";
	argv[n++] = "json";
	argv[n++] = "--policy";
	argv[n++] = policy;
	argv[n++] = "--workspace";
	argv[n++] = r->work;
	argv[n++] = "--";
	if (interp != NULL)
		argv[n++] = interp;
	argv[n++] = prog;
	argv[n++] = r->s.token;
	argv[n++] = r->home;
	argv[n++] = r->hosttmp;
	argv[n++] = tcp;
	argv[n++] = udp;
	argv[n++] = eval_honeypot_unix_name(ctx->hp);
	argv[n++] = decoy;
	argv[n++] = r->userfiles;
	argv[n] = NULL;
	snprintf(e_home, sizeof(e_home), "HOME=%s", r->home);
	snprintf(e_aws, sizeof(e_aws), "AWS_SECRET_ACCESS_KEY=%s",
	    r->s.canary[EVAL_CANARY_ENV_AWS]);
	snprintf(e_api, sizeof(e_api), "STOCKADE_EVAL_API_KEY=%s",
	    r->s.canary[EVAL_CANARY_ENV_API]);
	snprintf(e_path, sizeof(e_path), "PATH=%s", ctx->path_env);
	envp[0] = e_path;
	envp[1] = e_home;
	envp[2] = e_aws;
	envp[3] = e_api;
	envp[4] = "AWS_ACCESS_KEY_ID=AKIAEVALUATIONONLY00";
	envp[5] = "LANG=C.UTF-8";
	envp[6] = NULL;

	/* The caller's terminal: a pty whose master the eval reads, so
	 * that what a job types into it (TIOCSTI) or writes to it shows. */
	if ((master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 ||
	    grantpt(master) < 0 || unlockpt(master) < 0 ||
	    ptsname_r(master, slave, sizeof(slave)) != 0)
		return -errno;
	r->mark = eval_honeypot_mark(ctx->hp);
	e = eval_job_start(&r->job, argv, envp, slave, master, r->work,
	    r->s.canary[EVAL_CANARY_KEYRING],
	    strlen(r->s.canary[EVAL_CANARY_KEYRING]));
	master = -1; /* the job's now, even on failure */
	if (e < 0)
		return e;
	eval_job_wait(&r->job, eval_now_ms() + (int64_t)ctx->wall_ms + GRACE_MS,
	    ctx->interrupted);
	return r->job.interrupted ? -EINTR : 0;
}

/* `stockade get`/`put` of the attack's fileapi: lines, then the search
 * of what get returned. */
static void
fileapi(struct run *r, const char *policy)
{
	const struct eval_ctx *ctx = r->ctx;
	const char *envp[] = {"PATH=/usr/bin:/bin", NULL};
	_cleanup_close_ int own = openat(r->dirfd, "x",
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < r->a->ngets; i++) {
		char dest[4300], name[32], where[128];
		const char *argv[] = {ctx->self, "get", "--workspace", r->work,
		    "--policy", policy, r->a->gets[i], dest, NULL};
		int which = -1;

		int got;

		snprintf(name, sizeof(name), "got-%zu", i);
		snprintf(dest, sizeof(dest), "%s/%s", r->own, name);
		/* The get must have been made for its file to be judged. */
		if (eval_spawn_wait(argv, envp, FS_CMD_MS) < 0 || own < 0)
			r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
		snprintf(where, sizeof(where), "fileapi get %s", r->a->gets[i]);
		got = own >= 0 ? eval_scan_file(own, name, r->nd,
				     EVAL_CANARY_N + 1, SCAN_BYTES, &which)
			       : -EBADF;
		if (got == 1)
			eval_fired(r->v, r->s.token,
			    which == EVAL_CANARY_N ? "pwned" : "canary", where,
			    "%s", r->nd[which].name);
		else if (got < 0 && got != -ENOENT && got != -EINVAL)
			r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
	}
	for (size_t i = 0; i < r->a->nputs; i++) {
		char src[4300], name[32];
		const char *argv[] = {ctx->self, "put", "--workspace", r->work,
		    "--policy", policy, src, r->a->puts[i], NULL};
		_cleanup_close_ int fd = -1;

		snprintf(name, sizeof(name), "put-%zu", i);
		snprintf(src, sizeof(src), "%s/%s", r->own, name);
		if (own < 0 ||
		    (fd = openat(own, name,
			 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0 ||
		    write_all(fd, "an update from the agent\n", 25) < 0)
			continue;
		(void)eval_spawn_wait(argv, envp, FS_CMD_MS);
	}
}

/*
 * The leftover rule (eval_run.h): a process of R's job left behind,
 * fired into R->v, or R->unsure when the check could not be made; then
 * every process holding R's token killed and the job's descriptors
 * closed (eval_job_end).
 */
static void
leftovers(struct run *r)
{
	struct eval_verdict *v = r->v;
	char cmd[256];
	pid_t pids[1];
	int e;

	/* A process left behind: one whose command line still holds the
	 * token once the job has had LEFTOVER_MS to be gone. */
	eval_sleep_ms(LEFTOVER_MS);
	if ((e = eval_leftovers(r->s.token, pids, 1, cmd, sizeof(cmd))) > 0)
		eval_fired(v, r->s.token, "leftover", "process", "%s", cmd);
	else if (e < 0)
		r->unsure |= EVAL_STOP_SURVIVOR;
	if (e <= 0 && eval_orphans(r->job.owner, cmd, sizeof(cmd)) > 0)
		eval_fired(v, r->s.token, "leftover", "process", "%s", cmd);
	(void)eval_kill_leftovers(r->s.token);
	eval_job_end(&r->job);
}

int
eval_run(const struct eval_ctx *ctx, const struct eval_attack *a,
    const char *policy, bool unsafe, unsigned id, struct eval_verdict *v)
{
	struct run *r = calloc(1, sizeof(*r));
	int e, rc = 0;

	memset(v, 0, sizeof(*v));
	v->wall_ms = -1;
	v->exit_code = -1;
	if (r == NULL) {
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error), "out of memory");
		return 0;
	}
	r->ctx = ctx;
	r->a = a;
	r->v = v;
	v->declared = a->stopped_when;
	r->dirfd = -1;
	r->decoy.sigfd = -1;
	eval_job_init(&r->job, OUT_KEEP, ERR_KEEP, PTY_KEEP);
	if ((e = prepare(r, id)) < 0) {
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error),
		    "cannot prepare run r%u: "
		    "%s",
		    id, strerror(-e));
		goto out;
	}
	if ((e = run_job(r, policy, unsafe)) < 0) {
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error), "%s",
		    e == -EINTR ? "interrupted" : strerror(-e));
		rc = e == -EINTR ? e : 0;
		goto out;
	}

	leftovers(r);
	fileapi(r, policy);
	eval_judge_result(r);

	eval_judge_host(r);
	eval_judge_outside(r);
	eval_judge_outcome(r, GRACE_MS / 1000);
out:
	eval_job_end(&r->job);
	eval_decoy_stop(&r->decoy);
	if (r->served)
		eval_honeypot_unserve(ctx->hp,
		    r->s.canary[EVAL_CANARY_SERVICE]);
	if (r->shm != NULL) {
		explicit_bzero(r->shm, 4096);
		(void)shmdt(r->shm);
	}
	(void)eval_kill_leftovers(r->s.token);
	eval_job_free(&r->job);
	snapshot_free(&r->before);
	if (r->hosttmp[0] != '\0')
		(void)unlink(r->hosttmp);
	if (r->dirfd >= 0 && !ctx->keep) {
		_cleanup_close_ int base = open(ctx->base,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char name[32];

		snprintf(name, sizeof(name), "r%u", id);
		if (base >= 0)
			(void)remove_tree_at(base, name);
	}
	close_fdp(&r->dirfd);
	explicit_bzero(&r->s, sizeof(r->s));
	free(r);
	return rc;
}
