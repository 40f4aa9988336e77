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
#include "fsutil.h"
#include "proto.h"
#include "snapshot.h"

#define OUT_KEEP (16u << 20)	/* stockade run's stdout kept, bytes */
#define ERR_KEEP (64u << 10)	/* its stderr kept */
#define PTY_KEEP (1u << 20)	/* what the pty master shows, kept */
#define GRACE_MS 20000		/* past the wall clock: stockade run hung */
#define LEFTOVER_MS 100		/* the leftover check, after the job */
#define SCAN_BYTES (256ull << 20) /* workspace bytes searched per run */
#define FS_CMD_MS 30000		/* one `stockade get/put` */

const char *
eval_outcome_name(enum eval_outcome o)
{
	switch (o) {
	case EVAL_STOPPED: return "stopped";
	case EVAL_SUCCEEDED: return "succeeded";
	case EVAL_ERROR: return "error";
	case EVAL_NOT_RUN: return "not_run";
	}
	return "?";
}

/* ---- small helpers ------------------------------------------------------ */

static void redact_as(char *s, size_t size, const char *needle,
		      const char *name);

/* Replaces every TOKEN in S by "<token>" (in place, S of SIZE bytes). */
static void
redact(char *s, size_t size, const char *token)
{
	redact_as(s, size, token, "token");
}

/* Adds one fired rule to V (the first EVAL_EVIDENCE_MAX are kept). */
static void
fired(struct eval_verdict *v, const char *token, const char *rule,
      const char *where, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* The stopped-when check (enum eval_stop) a fired RULE at WHERE falls
 * under (docs/evidence.md, "What stopped means"). */
static unsigned
check_of(const char *rule, const char *where)
{
	if (strcmp(rule, "canary") == 0)
		return EVAL_STOP_CANARY;
	if (strcmp(rule, "pwned") == 0)
		return EVAL_STOP_PWNED;
	if (strcmp(rule, "outside") == 0)
		return strcmp(where, "decoy") == 0 ? EVAL_STOP_DECOY :
						     EVAL_STOP_FILES;
	if (strcmp(rule, "leftover") == 0)
		return EVAL_STOP_SURVIVOR;
	if (strcmp(rule, "flood") == 0)
		return EVAL_STOP_OUTPUT;
	if (strcmp(rule, "terminal") == 0)
		return EVAL_STOP_TERMINAL;
	return 0;
}

static void
fired(struct eval_verdict *v, const char *token, const char *rule,
      const char *where, const char *fmt, ...)
{
	struct eval_evidence *e;
	va_list ap;

	if (v->nev >= EVAL_EVIDENCE_MAX)
		return;
	e = &v->ev[v->nev++];
	snprintf(e->rule, sizeof(e->rule), "%s", rule);
	snprintf(e->where, sizeof(e->where), "%s", where);
	e->declared = (v->declared & check_of(rule, where)) != 0;
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
	redact(e->where, sizeof(e->where), token);
	redact(e->detail, sizeof(e->detail), token);
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
	out = openat(w, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			O_CLOEXEC, 0755);
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
	    (root && fchown(out, PROTO_ROOT_PAYLOAD_ID,
			    PROTO_ROOT_PAYLOAD_ID) < 0))
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
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);
	if (fd < 0 || fchmod(fd, mode) < 0)
		return -errno;
	return 0;
}

/* ---- the run ------------------------------------------------------------ */

struct run {
	const struct eval_ctx *ctx;
	const struct eval_attack *a;
	struct eval_verdict *v;
	struct eval_secrets s;
	struct eval_needle nd[EVAL_CANARY_N + 1];
	char dir[4096], home[4200], userfiles[4200], work[4200], own[4200];
	char hosttmp[96];
	int dirfd;
	struct snapshot before;
	struct eval_file_state tmp_before;
	struct eval_decoy decoy;
	struct eval_job job;
	uint64_t mark;
	void *shm;		/* the SysV segment, attached, or NULL */
	bool served;		/* the service canary is registered */
	unsigned unsure;	/* enum eval_stop checks whose source could
				 * not be read: not made */
	char cannot[160];	/* the job's "CANNOT <token> REASON", its
				 * reason redacted, or "" */
};

static const struct fs_quota snap_quota = {
	.file_bytes = 16u << 20, .workspace_bytes = 256u << 20,
	.max_files = 100000, .max_path = 4096, .max_depth = 64,
	.mode_mask = 0777, .allow_hardlinks = true, .inline_bytes = 0,
};

/* The fake home and the user's files, as one tree ("o"). */
static int
snap_outside(struct run *r, struct snapshot *s)
{
	_cleanup_close_ int o = openat(r->dirfd, "o", O_RDONLY | O_DIRECTORY |
				       O_NOFOLLOW | O_CLOEXEC);

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
		r->nd[k] = (struct eval_needle){
			eval_canary_name((enum eval_canary)k), r->s.canary[k],
			strlen(r->s.canary[k])};
	r->nd[EVAL_CANARY_N] = (struct eval_needle){"pwned", r->s.pwned,
						    strlen(r->s.pwned)};
	snprintf(r->dir, sizeof(r->dir), "%s/r%u", ctx->base, id);
	snprintf(r->home, sizeof(r->home), "%s/o/home", r->dir);
	snprintf(r->userfiles, sizeof(r->userfiles), "%s/o/userfiles", r->dir);
	snprintf(r->work, sizeof(r->work), "%s/w", r->dir);
	snprintf(r->own, sizeof(r->own), "%s/x", r->dir);
	if (mkdir(r->dir, 0711) < 0)
		return -errno;
	if ((r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			     O_CLOEXEC)) < 0)
		return -errno;
	if ((e = mkdir_mode(r->dirfd, "o", 0711)) < 0 ||
	    (e = mkdir_mode(r->dirfd, "w", 0755)) < 0 ||
	    (e = mkdir_mode(r->dirfd, "x", 0700)) < 0)
		return e;
	if ((o = openat(r->dirfd, "o", O_RDONLY | O_DIRECTORY |
			O_CLOEXEC)) < 0 ||
	    (w = openat(r->dirfd, "w", O_RDONLY | O_DIRECTORY |
			O_CLOEXEC)) < 0)
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
	if ((e = snap_outside(r, &r->before)) < 0 ||
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
	master = -1;	/* the job's now, even on failure */
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
	_cleanup_close_ int own = openat(r->dirfd, "x", O_RDONLY |
					 O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < r->a->ngets; i++) {
		char dest[4300], name[32], where[128];
		const char *argv[] = {ctx->self, "get",
				"--workspace", r->work,
				"--policy", policy,
				r->a->gets[i], dest, NULL};
		int which = -1;

		int got;

		snprintf(name, sizeof(name), "got-%zu", i);
		snprintf(dest, sizeof(dest), "%s/%s", r->own, name);
		/* The get must have been made for its file to be judged. */
		if (eval_spawn_wait(argv, envp, FS_CMD_MS) < 0 || own < 0)
			r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
		snprintf(where, sizeof(where), "fileapi get %s", r->a->gets[i]);
		got = own >= 0 ? eval_scan_file(own, name, r->nd,
						 EVAL_CANARY_N + 1, SCAN_BYTES,
						 &which) : -EBADF;
		if (got == 1)
			fired(r->v, r->s.token, which == EVAL_CANARY_N ?
			      "pwned" : "canary", where, "%s",
			      r->nd[which].name);
		else if (got < 0 && got != -ENOENT && got != -EINVAL)
			r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
	}
	for (size_t i = 0; i < r->a->nputs; i++) {
		char src[4300], name[32];
		const char *argv[] = {ctx->self, "put",
				"--workspace", r->work,
				"--policy", policy,
				src, r->a->puts[i], NULL};
		_cleanup_close_ int fd = -1;

		snprintf(name, sizeof(name), "put-%zu", i);
		snprintf(src, sizeof(src), "%s/%s", r->own, name);
		if (own < 0 || (fd = openat(own, name, O_WRONLY | O_CREAT |
					    O_EXCL | O_CLOEXEC, 0644)) < 0 ||
		    write_all(fd, "an update from the agent\n", 25) < 0)
			continue;
		(void)eval_spawn_wait(argv, envp, FS_CMD_MS);
	}
}

/* Replaces every NEEDLE in S (SIZE bytes) by "<NAME>". */
static void
redact_as(char *s, size_t size, const char *needle, const char *name)
{
	char *p = s;

	while ((p = strstr(p, needle)) != NULL) {
		char rest[1024];
		int n;

		snprintf(rest, sizeof(rest), "%s", p + strlen(needle));
		n = snprintf(p, size - (size_t)(p - s), "<%s>", name);
		if (n < 0 || (size_t)n >= size - (size_t)(p - s))
			break;
		p += n;
		snprintf(p, size - (size_t)(p - s), "%s", rest);
	}
}

/* Length of the run of lower-case hex digits at P. */
static size_t
hex_run(const char *p)
{
	size_t n = 0;

	while ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f'))
		n++;
	return n;
}

/*
 * Replaces in S (SIZE bytes) what looks like another run's secret: a
 * canary prefix followed by 16 or more hex digits ("<ssh_key>"), and a
 * run of 32 or more hex digits ("<hex>", a token). Runs going on beside
 * this one have their own decoys, segments and leftovers, which a job
 * listing the host may print.
 */
static void
redact_shapes(char *s, size_t size)
{
	for (char *p = s; *p != '\0'; p++) {
		const char *name = NULL;
		size_t len = 0, n;
		char rest[1024];
		int w;

		for (int k = 0; k < EVAL_CANARY_N && name == NULL; k++) {
			const char *pre = eval_canary_prefix((enum eval_canary)k);
			size_t pl = strlen(pre);

			if (strncmp(p, pre, pl) == 0 && hex_run(p + pl) >= 16) {
				name = eval_canary_name((enum eval_canary)k);
				len = pl + hex_run(p + pl);
			}
		}
		if (name == NULL && (p == s || hex_run(p - 1) == 0) &&
		    (n = hex_run(p)) >= 32) {
			name = "hex";
			len = n;
		}
		if (name == NULL)
			continue;
		snprintf(rest, sizeof(rest), "%s", p + len);
		w = snprintf(p, size - (size_t)(p - s), "<%s>", name);
		if (w < 0 || (size_t)w >= size - (size_t)(p - s))
			break;
		snprintf(p + w, size - (size_t)(p - s) - (size_t)w, "%s", rest);
		p += w - 1;
	}
}

/* The first words of the job's stdout and stderr into V->output, with
 * no secret in them (eval_run.h). */
static void
excerpt(struct run *r, const char *out, size_t olen, const char *err,
	size_t elen)
{
	char part[2][1024];
	const char *text[2] = {out, err};
	size_t len[2] = {olen, elen};

	/* Each redacted first, then cut: a secret cut in two would not be
	 * recognised. 1024 bytes leave no secret across the 120th. */
	for (int i = 0; i < 2; i++) {
		snprintf(part[i], sizeof(part[i]), "%.*s",
			 (int)(len[i] < 1023 ? len[i] : 1023), text[i]);
		for (char *p = part[i]; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20)
				*p = ' ';
		redact_as(part[i], sizeof(part[i]), r->s.token, "token");
		for (int k = 0; k < EVAL_CANARY_N; k++)
			redact_as(part[i], sizeof(part[i]), r->s.canary[k],
				  eval_canary_name((enum eval_canary)k));
		redact_shapes(part[i], sizeof(part[i]));
	}
	snprintf(r->v->output, sizeof(r->v->output), "%.120s%s%.120s",
		 part[0], part[0][0] && part[1][0] ? " | " : "", part[1]);
}

/*
 * Looks in BUF (LEN bytes, the job's stdout or stderr) for the run's
 * markers: "ATTEMPTED <token>" sets V->attempted; the first "CANNOT
 * <token> REASON" line puts REASON (at most 120 bytes, control
 * characters as spaces, secrets redacted) into R->cannot.
 */
static void
find_markers(struct run *r, const char *buf, size_t len)
{
	char mark[64];
	size_t ml;
	const char *p;

	if (buf == NULL || len == 0)
		return;
	ml = (size_t)snprintf(mark, sizeof(mark), "%s%s", EVAL_MARK_ATTEMPTED,
			      r->s.token);
	if (memmem(buf, len, mark, ml) != NULL)
		r->v->attempted = true;
	ml = (size_t)snprintf(mark, sizeof(mark), "%s%s", EVAL_MARK_CANNOT,
			      r->s.token);
	if (r->cannot[0] == '\0' &&
	    (p = memmem(buf, len, mark, ml)) != NULL) {
		const char *why = p + ml, *end = buf + len;
		size_t n = 0;

		while (why < end && *why == ' ')
			why++;
		while (why + n < end && why[n] != '\n' && n < 120)
			n++;
		snprintf(r->cannot, sizeof(r->cannot), "%.*s", (int)n, why);
		for (char *q = r->cannot; *q != '\0'; q++)
			if ((unsigned char)*q < 0x20)
				*q = ' ';
		redact(r->cannot, sizeof(r->cannot), r->s.token);
		for (int k = 0; k < EVAL_CANARY_N; k++)
			redact_as(r->cannot, sizeof(r->cannot), r->s.canary[k],
				  eval_canary_name((enum eval_canary)k));
		redact_shapes(r->cannot, sizeof(r->cannot));
		if (r->cannot[0] == '\0')
			snprintf(r->cannot, sizeof(r->cannot), "no reason given");
	}
}

/* Rules on the job's result: canaries and PWNED in its output, flood;
 * the markers (find_markers). */
static void
judge_result(struct run *r)
{
	struct eval_verdict *v = r->v;
	struct eval_job *j = &r->job;
	json_t *o = NULL;
	json_error_t jerr;
	int which;

	v->exit_code = j->exited && WIFEXITED(j->status) ?
		       WEXITSTATUS(j->status) : -1;
	if (j->out.len > 0 && j->out.total == j->out.len)
		o = json_loadb((const char *)j->out.data, j->out.len, 0, &jerr);
	if (o != NULL && json_is_object(o)) {
		const char *st = json_string_value(json_object_get(o,
								    "status"));
		json_t *so = json_object_get(o, "stdout");
		json_t *se = json_object_get(o, "stderr");
		/* What reached the caller is the stdout the result keeps,
		 * not stdout_bytes: past the cap that counts what the
		 * program wrote and stockade drained (on_output_limit =
		 * truncate). */
		json_int_t ob = json_is_string(so) ?
			(json_int_t)json_string_length(so) : 0;

		snprintf(v->status, sizeof(v->status), "%s",
			 st != NULL ? st : "");
		v->wall_ms = json_is_integer(json_object_get(o, "wall_ms")) ?
			     json_integer_value(json_object_get(o, "wall_ms")) :
			     -1;
		if (json_is_string(so) &&
		    (which = eval_find(json_string_value(so),
				       json_string_length(so), r->nd,
				       EVAL_CANARY_N + 1)) >= 0)
			fired(v, r->s.token, which == EVAL_CANARY_N ? "pwned" :
			      "canary", "stdout", "%s", r->nd[which].name);
		if (json_is_string(se) &&
		    (which = eval_find(json_string_value(se),
				       json_string_length(se), r->nd,
				       EVAL_CANARY_N + 1)) >= 0)
			fired(v, r->s.token, which == EVAL_CANARY_N ? "pwned" :
			      "canary", "stderr", "%s", r->nd[which].name);
		if (json_is_string(so))
			find_markers(r, json_string_value(so),
				     json_string_length(so));
		if (json_is_string(se))
			find_markers(r, json_string_value(se),
				     json_string_length(se));
		excerpt(r, json_is_string(so) ? json_string_value(so) : "",
			json_is_string(so) ? json_string_length(so) : 0,
			json_is_string(se) ? json_string_value(se) : "",
			json_is_string(se) ? json_string_length(se) : 0);
		if (ob > 0 && (uint64_t)ob > 4 * r->ctx->stdout_cap)
			fired(v, r->s.token, "flood", "stdout",
			      "%lld bytes reached the caller (cap %llu)",
			      (long long)ob,
			      (unsigned long long)r->ctx->stdout_cap);
	} else {
		/* No result: the output as it came, searched raw; the
		 * job's stderr is not in it, so no search for a canary is
		 * complete. */
		r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
		if (j->out.len > 0)
			find_markers(r, (const char *)j->out.data, j->out.len);
		if (j->out.len > 0 &&
		    (which = eval_find(j->out.data, j->out.len, r->nd,
				       EVAL_CANARY_N + 1)) >= 0)
			fired(v, r->s.token, which == EVAL_CANARY_N ? "pwned" :
			      "canary", "stdout", "%s", r->nd[which].name);
		if (j->out.total > 4 * r->ctx->stdout_cap)
			fired(v, r->s.token, "flood", "stdout",
			      "%llu bytes reached the caller (cap %llu)",
			      (unsigned long long)j->out.total,
			      (unsigned long long)r->ctx->stdout_cap);
		if (v->nev == 0) {
			size_t l = j->err.len < 200 ? j->err.len : 200;

			v->outcome = EVAL_ERROR;
			snprintf(v->error, sizeof(v->error),
				 "stockade run gave no result (exit %d): %.*s",
				 v->exit_code, (int)l,
				 j->err.data != NULL ?
				 (const char *)j->err.data : "");
		}
	}
	json_decref(o);
}

static void
on_token_file(void *arg, const char *dir, const char *name)
{
	struct run *r = arg;
	_cleanup_close_ int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	fired(r->v, r->s.token, "outside", dir, "%s written", name);
	/* Ours to remove: its name holds this run's token. */
	if (d >= 0)
		(void)remove_tree_at(d, name);
}

/* Rules on everything outside the workspace. */
static void
judge_outside(struct run *r)
{
	const char *dirs[] = {"/tmp", "/var/tmp", "/dev/shm",
			      "/usr/local/bin", "/etc", r->ctx->user_home};
	size_t ndirs = r->ctx->user_home != NULL ? 6 : 5;
	struct snapshot after;
	struct changes ch = {0};
	struct eval_file_state tmp_after;
	char what[128];

	if (snap_outside(r, &after) == 0 &&
	    snapshot_diff(&r->before, &after, &ch) == 0) {
		for (size_t i = 0; i < ch.n && i < 2; i++) {
			const char *p = ch.c[i].entry->path;

			fired(r->v, r->s.token, "outside",
			      strncmp(p, "home", 4) == 0 ? "home" : "userfiles",
			      "%s %s", ch.c[i].kind == CHANGE_CREATED ?
			      "created" : ch.c[i].kind == CHANGE_DELETED ?
			      "deleted" : "modified", p);
		}
	} else {
		fired(r->v, r->s.token, "outside", "home",
		      "the fake home or the user's files cannot be read");
	}
	changes_free(&ch);
	snapshot_free(&after);
	if (eval_file_state(r->hosttmp, &tmp_after) < 0 ||
	    eval_file_changed(&r->tmp_before, &tmp_after))
		fired(r->v, r->s.token, "outside", "hosttmp",
		      "the host /tmp canary file changed");
	if (eval_decoy_check(&r->decoy, what, sizeof(what)) == 1)
		fired(r->v, r->s.token, "outside", "decoy", "%s", what);
	if (eval_token_files(dirs, ndirs, r->s.token, on_token_file, r) < 0)
		r->unsure |= EVAL_STOP_FILES;
}

int
eval_run(const struct eval_ctx *ctx, const struct eval_attack *a,
	 const char *policy, bool unsafe, unsigned id, struct eval_verdict *v)
{
	struct run *r = calloc(1, sizeof(*r));
	char cmd[256], where[4200];
	pid_t pids[1];
	int e, which, rc = 0;

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
		snprintf(v->error, sizeof(v->error), "cannot prepare run r%u: "
			 "%s", id, strerror(-e));
		goto out;
	}
	if ((e = run_job(r, policy, unsafe)) < 0) {
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error), "%s", e == -EINTR ?
			 "interrupted" : strerror(-e));
		rc = e == -EINTR ? e : 0;
		goto out;
	}

	/* A process left behind: one whose command line still holds the
	 * token once the job has had LEFTOVER_MS to be gone. */
	eval_sleep_ms(LEFTOVER_MS);
	if ((e = eval_leftovers(r->s.token, pids, 1, cmd, sizeof(cmd))) > 0)
		fired(v, r->s.token, "leftover", "process", "%s", cmd);
	else if (e < 0)
		r->unsure |= EVAL_STOP_SURVIVOR;
	if (e <= 0 && eval_orphans(r->job.owner, cmd, sizeof(cmd)) > 0)
		fired(v, r->s.token, "leftover", "process", "%s", cmd);
	(void)eval_kill_leftovers(r->s.token);
	eval_job_end(&r->job);

	fileapi(r, policy);
	judge_result(r);

	/* The caller's terminal: bytes with the token came back. */
	if (r->job.pty.fd >= 0)
		eval_sink_read(&r->job.pty);
	if (r->job.pty.len > 0 && memmem(r->job.pty.data, r->job.pty.len,
					 r->s.token, EVAL_TOKEN_LEN) != NULL)
		fired(v, r->s.token, "terminal", "pty",
		      "the token came back from the caller's terminal");

	if (eval_honeypot_sync(ctx->hp) != 0)
		r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
	else if (eval_honeypot_find(ctx->hp, r->mark, r->nd, EVAL_CANARY_N + 1,
			       &which, cmd, sizeof(cmd)) == 1) {
		snprintf(where, sizeof(where), "honeypot %s", cmd);
		fired(v, r->s.token, which == EVAL_CANARY_N ? "pwned" :
		      "canary", where, "%s", r->nd[which].name);
	}

	{
		_cleanup_close_ int w = openat(r->dirfd, "w", O_RDONLY |
					       O_DIRECTORY | O_NOFOLLOW |
					       O_CLOEXEC);

		int found = w >= 0 ? eval_scan_tree(w, r->nd,
						EVAL_CANARY_N + 1, SCAN_BYTES,
						&which, where, sizeof(where)) :
				     -EBADF;

		if (found == 1)
			fired(v, r->s.token, which == EVAL_CANARY_N ? "pwned" :
			      "canary", "workspace", "%s in %s",
			      r->nd[which].name, where);
		else if (found < 0)
			r->unsure |= EVAL_STOP_CANARY | EVAL_STOP_PWNED;
	}
	judge_outside(r);
	v->checked = EVAL_STOP_ALL & ~r->unsure;
	if (v->nev > 0) {
		/* Harm is harm, declared or not, attempted or not. */
		v->outcome = EVAL_SUCCEEDED;
	} else if (strcmp(v->status, "sandbox_error") == 0 ||
		   (strcmp(v->status, "exit_nonzero") == 0 &&
		    strstr(v->output, "stockade: cannot execute") != NULL)) {
		/* The attack never ran (the jail was refused or failed, or
		 * its program could not be executed): no evidence is not
		 * "stopped" (review F2). */
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error), "the attack did not run: "
			 "%s, exit %d: %.160s", v->status, v->exit_code,
			 v->output);
	} else if (r->job.killed) {
		v->outcome = EVAL_ERROR;
		snprintf(v->error, sizeof(v->error), "stockade run did not end "
			 "within the wall clock and %d s: killed",
			 GRACE_MS / 1000);
	} else if (a->attempted_when == EVAL_ATTEMPT_MARKER &&
		   (!v->attempted || r->cannot[0] != '\0')) {
		/* No harm, but no attempt either: the attack failed for a
		 * reason of its own (a tool missing, a fork refused before
		 * the harmful step, a kernel without the interface it
		 * tries), which is not the layer stopping it (issue 23
		 * point 9). A CANNOT line wins over ATTEMPTED: the attack
		 * saw its try come to nothing for such a reason. */
		v->outcome = EVAL_NOT_RUN;
		if (r->cannot[0] != '\0')
			snprintf(v->error, sizeof(v->error), "the attack could "
				 "not try: %s", r->cannot);
		else
			snprintf(v->error, sizeof(v->error), "no ATTEMPTED "
				 "marker: %s, exit %d: %.160s",
				 v->status[0] ? v->status : "no status",
				 v->exit_code, v->output);
	} else if ((a->stopped_when & ~v->checked) != 0) {
		unsigned miss = a->stopped_when & ~v->checked;
		size_t n;

		v->outcome = EVAL_ERROR;
		n = (size_t)snprintf(v->error, sizeof(v->error), "a declared "
				     "check could not be made:");
		for (unsigned bit = 1; bit <= EVAL_STOP_ALL; bit <<= 1)
			if ((miss & bit) && n < sizeof(v->error))
				n += (size_t)snprintf(v->error + n,
						      sizeof(v->error) - n,
						      " %s", eval_stop_name(bit));
	}
out:
	eval_job_end(&r->job);
	eval_decoy_stop(&r->decoy);
	if (r->served)
		eval_honeypot_unserve(ctx->hp, r->s.canary[EVAL_CANARY_SERVICE]);
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
		_cleanup_close_ int base = open(ctx->base, O_RDONLY |
						O_DIRECTORY | O_CLOEXEC);
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
