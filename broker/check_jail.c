/*
 * check_jail.c: the checks of the jail's layers (check.h): limits,
 * process cleanup, environment, working directory, the namespaces,
 * terminal, capabilities, no_new_privs and Landlock. Each runs
 * stockade-probe (probe_jail.c) in a real job and compares what it saw
 * with what a sound jail shows (docs/layers.md says what each layer
 * does).
 *
 * A namespace is observed from both sides: the probe reads the
 * namespace links of /proc/self/ns and the check compares them with its
 * own, and it shows what the namespace hides (the host's interfaces,
 * System V objects, hostname, processes, mounts). A few checks switch
 * layers off on purpose (`stockade run --unsafe-evaluation`, the way
 * `stockade eval` does) to see that the layer under test holds by
 * itself (docs/layers.md): process cleanup without the pid namespace,
 * whose end would otherwise kill everything anyway, and no_new_privs
 * without Landlock and seccomp, which set it as a side effect.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "llutil.h"

/* One job of these checks takes 10 to 50 ms; a stockade that hangs is
 * cut off here. */
#define JOB_DEADLINE_MS 10000
/* The leftover jobs: a 0.3 s timeout, a leftover that lives 2 s at most
 * in a defective jail (whose payload may then hold its output open). */
#define LEFTOVER_DEADLINE_MS 5000
#define LEFTOVER_TIMEOUT "0.3"
/* How long a leftover must stay silent once the job has ended: it beats
 * every 10 ms while it lives (probe_jail.c). */
#define LEFTOVER_QUIET_MS 120
#define LEFTOVER_FILE "stockade-probe-beat"

#define MIB (1024LL * 1024)
#define TMPFS_MAGIC_HEX "0x1021994"

/* The probe as every job here runs it: by its absolute path in the
 * workspace, so that a job left outside /work still reports. */
#define PROBE "/work/stockade-probe"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* What a probe job needs besides the probe's arguments. */
struct pj {
	const char *const *run_args; /* more `stockade run` options */
	const char *policy;          /* policy text, NULL: the default */
	const char *workspace;       /* --workspace, NULL: a temporary one */
	const char *const *extra_env;
	int64_t deadline_ms;         /* 0: JOB_DEADLINE_MS */
	const char *status;          /* the status expected, NULL: "ok" */
};

static const struct pj plain; /* the default policy, nothing more */

/*
 * Runs the probe with ARGV (NULL-terminated) in a job as S says, into J
 * (always initialised: free it with check_job_free). True when the job
 * ended with S's status; otherwise fails R saying what came instead.
 */
static bool
probe_ok(struct check_ctx *c, struct check_result *r, struct check_job *j,
	 const struct pj *s, const char *const *argv)
{
	const char *full[32];
	const char *want = s->status != NULL ? s->status : "ok";
	struct check_job_opts o;
	char why[512];
	size_t n = 0;
	int e;

	memset(j, 0, sizeof(*j));
	j->status = j->out = j->err = "";
	full[n++] = PROBE;
	for (size_t i = 0; argv[i] != NULL && n < 31; i++)
		full[n++] = argv[i];
	full[n] = NULL;
	memset(&o, 0, sizeof(o));
	o.argv = full;
	o.run_args = s->run_args;
	o.policy = s->policy;
	o.workspace = s->workspace;
	o.extra_env = s->extra_env;
	o.deadline_ms = s->deadline_ms > 0 ? s->deadline_ms : JOB_DEADLINE_MS;
	if ((e = check_job_run(c, &o, j)) < 0) {
		check_fail(r, "cannot run stockade: %s", strerror(-e));
		return false;
	}
	if (j->result == NULL || strcmp(j->status, want) != 0) {
		check_fail(r, "the probe's job did not end \"%s\": %s", want,
			   check_job_summary(j, why, sizeof(why)));
		return false;
	}
	return true;
}

/* KEY of the probe's output into BUF; when missing, fails R and returns
 * false. */
static bool
val(struct check_result *r, const struct check_job *j, const char *key,
    char *buf, size_t len)
{
	char why[512];

	if (check_value(j, key, buf, len))
		return true;
	check_fail(r, "the probe printed no %s: %s", key,
		   check_job_summary(j, why, sizeof(why)));
	return false;
}

/*
 * The next "KEY=value" line from *CURSOR (start it at a job's out) into
 * BUF; advances *CURSOR. False at the end. For keys the probe prints
 * once per item ("mount=").
 */
static bool
next_value(const char **cursor, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);

	while (*cursor != NULL && **cursor != '\0') {
		const char *p = *cursor, *nl = strchr(p, '\n');
		size_t l = nl != NULL ? (size_t)(nl - p) : strlen(p);

		*cursor = nl != NULL ? nl + 1 : NULL;
		if (l > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			size_t vl = l - klen - 1;

			if (vl >= len)
				vl = len - 1;
			memcpy(buf, p + klen + 1, vl);
			buf[vl] = '\0';
			return true;
		}
	}
	return false;
}

/* The integer LIMIT of the result's "limits" object, or -1. */
static json_int_t
job_limit(const struct check_job *j, const char *limit)
{
	json_t *v = json_object_get(json_object_get(j->result, "limits"),
				    limit);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* True when the comma-separated LIST holds ITEM. */
static bool
list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p != NULL && *p != '\0';) {
		const char *comma = strchr(p, ',');
		size_t l = comma != NULL ? (size_t)(comma - p) : strlen(p);

		if (l == n && strncmp(p, item, n) == 0)
			return true;
		p = comma != NULL ? comma + 1 : NULL;
	}
	return false;
}

/*
 * The entries of section SECTION ("environment", "filesystem") of the
 * embedded default policy (`stockade policy default`), as "NAME=value"
 * lines without blanks around the "=", into BUF. Returns 0 or a negative
 * errno (-EPROTO when the command failed).
 */
static int
default_section(struct check_ctx *c, const char *section, char *buf,
		size_t len)
{
	const char *const argv[] = {c->stockade, "policy", "default", NULL};
	struct check_proc p;
	char head[64];
	bool in = false;
	size_t n = 0;
	int e;

	buf[0] = '\0';
	if ((e = check_exec(c, argv, NULL, NULL, 0, JOB_DEADLINE_MS, &p)) < 0)
		return e;
	if (p.status != 0) {
		check_proc_free(&p);
		return -EPROTO;
	}
	snprintf(head, sizeof(head), "[%s]", section);
	for (char *line = strtok(p.out, "\n"); line != NULL;
	     line = strtok(NULL, "\n")) {
		char *eq, *k, *v, *end;

		if (line[0] == '[') {
			in = strcmp(line, head) == 0;
			continue;
		}
		if (!in || line[0] == '#' || (eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		k = line + strspn(line, " \t");
		for (end = eq; end > k && (end[-1] == ' ' || end[-1] == '\t');)
			*--end = '\0';
		v = eq + 1 + strspn(eq + 1, " \t");
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s=%s\n",
				      k, v);
		if (n >= len) {
			check_proc_free(&p);
			return -ENAMETOOLONG;
		}
	}
	check_proc_free(&p);
	return 0;
}

/* The default policy's [jail] home into BUF. Returns 0 or a negative
 * errno (-ENOENT when it names none). */
static int
default_home(struct check_ctx *c, char *buf, size_t len)
{
	char jail[4096];
	int e = default_section(c, "jail", jail, sizeof(jail));

	if (e < 0)
		return e;
	for (char *line = strtok(jail, "\n"); line != NULL;
	     line = strtok(NULL, "\n"))
		if (strncmp(line, "home=", 5) == 0 && line[5] == '/') {
			snprintf(buf, len, "%s", line + 5);
			return 0;
		}
	return -ENOENT;
}

/* ---- limits ---------------------------------------------------------- */

/* The rlimit RES (the probe's name: "FSIZE") the probe saw in J is
 * "WANT_CUR WANT_MAX"; SOURCE names the figure it comes from. */
static void
rlimit_is(struct check_result *r, const struct check_job *j,
	  const char *res, long long want_cur, long long want_max,
	  const char *source)
{
	char key[64], v[128], want[64];

	snprintf(key, sizeof(key), "rlimit.%s", res);
	if (!val(r, j, key, v, sizeof(v)))
		return;
	snprintf(want, sizeof(want), "%lld %lld", want_cur, want_max);
	if (strcmp(v, want) == 0)
		check_pass(r, "RLIMIT_%s is %s (soft hard), %s", res, v,
			   source);
	else
		check_fail(r, "RLIMIT_%s is %s (soft hard), %s wants %s", res,
			   v, source, want);
}

/* limits.rlimit_fsize_is_file_size: a job run with --file-size 3 has
 * RLIMIT_FSIZE 3 MiB, soft and hard (setrlimit(2); docs/layers.md). */
static void
rlimit_fsize(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--file-size", "3")};
	struct check_job j;

	if (probe_ok(c, r, &j, &s, ARGS("rlimits"))) {
		json_int_t mb = job_limit(&j, "file_size_mb");

		if (mb != 3)
			check_fail(r, "the result's limits.file_size_mb is %lld "
				   "for --file-size 3", (long long)mb);
		else
			rlimit_is(r, &j, "FSIZE", 3 * MIB, 3 * MIB,
				  "limits.file_size_mb 3");
	}
	check_job_free(&j);
}

/* limits.rlimit_nofile_is_open_files: a policy's open_files = 100 is the
 * job's RLIMIT_NOFILE, soft and hard. */
static void
rlimit_nofile(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.policy = "[limits]\nopen_files = 100\n"};
	struct check_job j;

	if (probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "NOFILE", 100, 100,
			  "the policy's open_files 100");
	check_job_free(&j);
}

/* limits.rlimit_nproc_is_processes: a job run with --processes 17 has
 * RLIMIT_NPROC 17 (counted per user namespace, so per jail). */
static void
rlimit_nproc(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--processes", "17")};
	struct check_job j;

	if (probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "NPROC", 17, 17, "--processes 17");
	check_job_free(&j);
}

/* limits.rlimit_core_zero: RLIMIT_CORE is 0, soft and hard, whatever the
 * caller's: no core file of the job's memory (core(5)). */
static void
rlimit_core(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;

	if (probe_ok(c, r, &j, &plain, ARGS("rlimits")))
		rlimit_is(r, &j, "CORE", 0, 0, "no core dumps");
	check_job_free(&j);
}

/* limits.rlimit_data_twice_memory: a job run with --memory 100 has
 * RLIMIT_DATA 200 MiB, the per-process backstop of the memory limit
 * (policy/default.ini, memory_mb). */
static void
rlimit_data(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--memory", "100")};
	struct check_job j;

	if (probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "DATA", 200 * MIB, 200 * MIB,
			  "twice --memory 100");
	check_job_free(&j);
}

/* limits.rlimit_cpu_past_cpu_time: a job run with --cpu-time 7 has
 * RLIMIT_CPU 8 s soft (SIGXCPU a second past the limit) and 9 s hard
 * (SIGKILL; setrlimit(2)). */
static void
rlimit_cpu(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--cpu-time", "7")};
	struct check_job j;

	if (probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "CPU", 8, 9, "--cpu-time 7 plus 1 s and 2 s");
	check_job_free(&j);
}

/* limits.no_realtime_nice_or_locked_memory: RLIMIT_RTPRIO, RLIMIT_RTTIME
 * and RLIMIT_NICE are 0 and RLIMIT_MEMLOCK and RLIMIT_MSGQUEUE 64 KiB,
 * so nothing of the caller's limits leaks in (payload.c). */
static void
rlimit_misc(struct check_ctx *c, struct check_result *r)
{
	static const struct {
		const char *res, *want;
	} want[] = {
		{"RTPRIO", "0 0"},
		{"RTTIME", "0 0"},
		{"NICE", "0 0"},
		{"MEMLOCK", "65536 65536"},
		{"MSGQUEUE", "65536 65536"},
	};
	struct check_job j;
	char key[64], v[128];
	size_t i;

	if (!probe_ok(c, r, &j, &plain, ARGS("rlimits")))
		goto out;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(key, sizeof(key), "rlimit.%s", want[i].res);
		if (!val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, want[i].want) != 0) {
			check_fail(r, "RLIMIT_%s is %s (soft hard), not %s",
				   want[i].res, v, want[i].want);
			goto out;
		}
	}
	check_pass(r, "RLIMIT_RTPRIO, RTTIME and NICE are 0 0, MEMLOCK and "
		   "MSGQUEUE 65536 65536");
out:
	check_job_free(&j);
}

/* limits.tmpfs_sizes_capped: with --tmp-size 5, /tmp and /dev/shm are
 * 5 MiB tmpfs and home a tmpfs of the policy's home_mb (tmpfs(5) size=). */
static void
tmpfs_sizes(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--tmp-size", "5")};
	struct check_job j;
	char tmp[64], shm[64], home[64];
	long long home_want;

	if (!probe_ok(c, r, &j, &s, ARGS("cwd")) ||
	    !val(r, &j, "tmp.bytes", tmp, sizeof(tmp)) ||
	    !val(r, &j, "shm.bytes", shm, sizeof(shm)) ||
	    !val(r, &j, "homedir.bytes", home, sizeof(home)))
		goto out;
	home_want = (long long)job_limit(&j, "home_mb") * MIB;
	if (atoll(tmp) != 5 * MIB || atoll(shm) != 5 * MIB ||
	    home_want <= 0 || atoll(home) != home_want)
		check_fail(r, "/tmp is %s bytes, /dev/shm %s, home %s: want "
			   "%lld, %lld and %lld (home_mb)", tmp, shm, home,
			   5 * MIB, 5 * MIB, home_want);
	else
		check_pass(r, "/tmp and /dev/shm are %s-byte tmpfs, home %s "
			   "bytes (limits.home_mb)", tmp, home);
out:
	check_job_free(&j);
}

/* ---- process cleanup ------------------------------------------------- */

/* The beat file's content (the leftover's last count), "" when none. */
static void
read_beat(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/*
 * A job leaves a process behind (`stockade-probe leftover`: setsid and a
 * second fork, a heartbeat into the workspace every 10 ms for 2 s) and
 * ends: by exiting, or, with TIMEOUT, by its wall-clock limit. Then the
 * heartbeat must have stopped: the check reads it, waits
 * LEFTOVER_QUIET_MS and reads it again. WITHOUT_PIDNS switches the pid
 * namespace off (an unsafe evaluation) to see layer process_group hold
 * alone (docs/layers.md, 2).
 */
static void
leftover(struct check_ctx *c, struct check_result *r, bool timeout,
	 bool without_pidns)
{
	const char *run_args[6];
	char ws[4096], path[4200], a[64], b[64], started[16];
	struct check_job j;
	struct pj s;
	size_t n = 0;
	int e;

	memset(&j, 0, sizeof(j));
	if ((e = check_workspace(c, ws, sizeof(ws))) < 0) {
		check_fail(r, "cannot make a workspace: %s", strerror(-e));
		return;
	}
	if (timeout) {
		run_args[n++] = "--timeout";
		run_args[n++] = LEFTOVER_TIMEOUT;
	}
	if (without_pidns)
		run_args[n++] = "--unsafe-evaluation";
	run_args[n] = NULL;
	memset(&s, 0, sizeof(s));
	s.run_args = run_args;
	s.workspace = ws;
	s.policy = without_pidns ? "[jail]\nunsafe_layers_off = pid_ns\n"
				 : NULL;
	s.deadline_ms = LEFTOVER_DEADLINE_MS;
	s.status = timeout ? "timeout" : "ok";
	if (!probe_ok(c, r, &j, &s,
		      timeout ? ARGS("leftover", "wait") : ARGS("leftover")) ||
	    !val(r, &j, "leftover.started", started, sizeof(started)))
		goto out;
	snprintf(path, sizeof(path), "%s/%s", ws, LEFTOVER_FILE);
	read_beat(path, a, sizeof(a));
	if (strcmp(started, "1") != 0 || a[0] == '\0') {
		check_fail(r, "the leftover never started (leftover.started=%s, "
			   "no heartbeat in the workspace)", started);
		goto out;
	}
	for (int waited = 0; waited < LEFTOVER_QUIET_MS; waited += 10) {
		const struct timespec ten = {0, 10 * 1000000L};

		nanosleep(&ten, NULL);
		read_beat(path, b, sizeof(b));
		if (strcmp(a, b) != 0) {
			check_fail(r, "the job's leftover (setsid, double fork) "
				   "still ran %d ms after the job ended "
				   "(status %s): heartbeat %d -> %d",
				   waited + 10, j.status, atoi(a), atoi(b));
			goto out;
		}
	}
	check_pass(r, "the job's leftover (setsid, double fork) beat %d "
		   "times, then not once in the %d ms after the job ended "
		   "(status %s)", atoi(a), LEFTOVER_QUIET_MS, j.status);
out:
	check_job_free(&j);
}

/* process_cleanup.leftover_dead_after_exit: a daemonised process of the
 * job dies when the job's program exits (pid_namespaces(7): init's exit
 * kills the namespace). */
static void
leftover_exit(struct check_ctx *c, struct check_result *r)
{
	leftover(c, r, false, false);
}

/* process_cleanup.leftover_dead_after_timeout: a daemonised process of
 * the job dies when the job is ended by its wall-clock limit, not only
 * the program stockade started. */
static void
leftover_timeout(struct check_ctx *c, struct check_result *r)
{
	leftover(c, r, true, false);
}

/* process_cleanup.leftover_dead_after_exit_without_pid_ns: with the pid
 * namespace switched off, jail init (a child subreaper, prctl(2)) still
 * kills the daemonised process when the program exits. */
static void
leftover_exit_nopidns(struct check_ctx *c, struct check_result *r)
{
	leftover(c, r, false, true);
}

/* process_cleanup.leftover_dead_after_timeout_without_pid_ns: with the
 * pid namespace switched off, the launcher's kill at the timeout still
 * ends the whole tree, not only the program. */
static void
leftover_timeout_nopidns(struct check_ctx *c, struct check_result *r)
{
	leftover(c, r, true, true);
}

/* ---- environment ----------------------------------------------------- */

/* environment.exactly_the_policys: a policy whose [environment] is PATH
 * and STOCKADE_CHECK_SET gives the job exactly those two, with the
 * policy's values, while the caller has STOCKADE_CHECK_SET and
 * STOCKADE_CHECK_CANARY set otherwise (docs/layers.md, scrubbed_env). */
static void
env_exact(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {
		.policy = "[environment]\nPATH = /usr/bin:/bin\n"
			  "STOCKADE_CHECK_SET = from-the-policy\n",
		.extra_env = ARGS("STOCKADE_CHECK_SET=from-the-caller",
				  "STOCKADE_CHECK_CANARY=from-the-caller"),
	};
	struct check_job j;
	char count[32], names[1024], path[256], set[256];

	if (!probe_ok(c, r, &j, &s, ARGS("env")) ||
	    !val(r, &j, "env.count", count, sizeof(count)) ||
	    !val(r, &j, "env.names", names, sizeof(names)))
		goto out;
	check_value(&j, "env.PATH", path, sizeof(path));
	check_value(&j, "env.STOCKADE_CHECK_SET", set, sizeof(set));
	if (strcmp(count, "2") != 0 || strcmp(path, "/usr/bin:/bin") != 0 ||
	    strcmp(set, "from-the-policy") != 0)
		check_fail(r, "the job's environment is %s variables (%s), "
			   "PATH=\"%s\", STOCKADE_CHECK_SET=\"%s\"", count,
			   names, path, set);
	else
		check_pass(r, "the job's environment is exactly the policy's "
			   "PATH and STOCKADE_CHECK_SET=from-the-policy");
out:
	check_job_free(&j);
}

/* environment.caller_variables_absent: under the default policy no
 * variable of the caller (STOCKADE_CHECK_CANARY, TMPDIR, and whatever
 * else `stockade check` runs stockade with) reaches the job, and every
 * variable it has is one of the policy's [environment]. */
static void
env_caller_absent(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {
		.extra_env = ARGS("STOCKADE_CHECK_CANARY=from-the-caller"),
	};
	struct check_job j;
	char policy[8192], names[4096], v[64];
	int e;

	memset(&j, 0, sizeof(j));
	if ((e = default_section(c, "environment", policy,
				 sizeof(policy))) < 0) {
		check_fail(r, "stockade policy default: %s", strerror(-e));
		return;
	}
	if (!probe_ok(c, r, &j, &s, ARGS("env")) ||
	    !val(r, &j, "env.names", names, sizeof(names)))
		goto out;
	if (check_value(&j, "env.STOCKADE_CHECK_CANARY", v, sizeof(v))) {
		check_fail(r, "the caller's STOCKADE_CHECK_CANARY=%s reached "
			   "the job", v);
		goto out;
	}
	for (char *name = strtok(names, ","); name != NULL;
	     name = strtok(NULL, ",")) {
		char line[300];
		bool found = false;

		snprintf(line, sizeof(line), "%s=", name);
		for (const char *p = policy; p != NULL && *p != '\0';) {
			if (strncmp(p, line, strlen(line)) == 0)
				found = true;
			p = strchr(p, '\n');
			p = p != NULL ? p + 1 : NULL;
		}
		if (!found) {
			check_fail(r, "the job has %s, which the default "
				   "policy's [environment] does not set", name);
			goto out;
		}
	}
	check_pass(r, "no caller variable (STOCKADE_CHECK_CANARY, TMPDIR, "
		   "...) in the job; every one it has is the policy's");
out:
	check_job_free(&j);
}

/* ---- working directory ----------------------------------------------- */

/* working_directory.cwd_is_work: the job starts in /work, the workspace
 * (the probe runs by its absolute path, PROBE, so a job left elsewhere
 * still reports). */
static void
cwd_is_work(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char cwd[4096], same[16];

	if (probe_ok(c, r, &j, &plain, ARGS("cwd")) &&
	    val(r, &j, "cwd", cwd, sizeof(cwd)) &&
	    val(r, &j, "cwd.is_work", same, sizeof(same))) {
		if (strcmp(cwd, "/work") == 0 && strcmp(same, "1") == 0)
			check_pass(r, "the job's working directory is /work");
		else
			check_fail(r, "the job's working directory is %s "
				   "(the same as /work: %s)", cwd, same);
	}
	check_job_free(&j);
}

/* working_directory.private_home_and_tmp: HOME is the policy's home, a
 * tmpfs of its own, and /tmp a fresh, empty tmpfs (not the host's). */
static void
private_home_tmp(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char want[4096], home[4096], hfs[32], tfs[32], entries[32];
	int e;

	memset(&j, 0, sizeof(j));
	if ((e = default_home(c, want, sizeof(want))) < 0) {
		check_fail(r, "stockade policy default: %s", strerror(-e));
		return;
	}
	if (!probe_ok(c, r, &j, &plain, ARGS("cwd")) ||
	    !val(r, &j, "home", home, sizeof(home)) ||
	    !val(r, &j, "homedir.fs", hfs, sizeof(hfs)) ||
	    !val(r, &j, "tmp.fs", tfs, sizeof(tfs)) ||
	    !val(r, &j, "tmp.entries", entries, sizeof(entries)))
		goto out;
	if (strcmp(home, want) != 0 || strcmp(hfs, TMPFS_MAGIC_HEX) != 0 ||
	    strcmp(tfs, TMPFS_MAGIC_HEX) != 0 || strcmp(entries, "0") != 0)
		check_fail(r, "HOME=%s on file system %s, /tmp on %s with %s "
			   "entries (want %s, both tmpfs %s, /tmp empty)", home,
			   hfs, tfs, entries, want, TMPFS_MAGIC_HEX);
	else
		check_pass(r, "HOME=%s and /tmp are tmpfs of their own, /tmp "
			   "empty", home);
out:
	check_job_free(&j);
}

/* ---- namespaces: the probe's links against ours ---------------------- */

/* namespaces(7): two processes share a namespace exactly when their
 * /proc/PID/ns/NAME links read alike. NS: "user", "pid", ... */
static void
own_namespace(struct check_ctx *c, struct check_result *r, const char *ns)
{
	struct check_job j;
	char path[64], key[32], mine[128], theirs[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", ns);
	n = readlink(path, mine, sizeof(mine) - 1);
	if (n < 0) {
		check_fail(r, "cannot read our own %s: %s", path,
			   strerror(errno));
		return;
	}
	mine[n] = '\0';
	snprintf(key, sizeof(key), "ns.%s", ns);
	if (probe_ok(c, r, &j, &plain, ARGS("ns")) &&
	    val(r, &j, key, theirs, sizeof(theirs))) {
		if (strcmp(mine, theirs) == 0)
			check_fail(r, "the job's %s namespace is the caller's "
				   "own, %s", ns, theirs);
		else
			check_pass(r, "the job's %s namespace is %s, the "
				   "caller's %s", ns, theirs, mine);
	}
	check_job_free(&j);
}

/* ---- user_ns --------------------------------------------------------- */

/* user_ns.setgroups_denied: /proc/self/setgroups says "deny", so the
 * payload cannot drop a group to reach what it denies
 * (user_namespaces(7), CVE-2014-8989). */
static void
setgroups_denied(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[256];

	if (probe_ok(c, r, &j, &plain, ARGS("setgroups")) &&
	    val(r, &j, "setgroups", v, sizeof(v))) {
		if (strcmp(v, "deny") == 0)
			check_pass(r, "/proc/self/setgroups says \"deny\"");
		else
			check_fail(r, "/proc/self/setgroups says \"%s\"", v);
	}
	check_job_free(&j);
}

/*
 * The map FILE ("uid_map") as the probe read it is one line: the
 * payload's id INSIDE (the probe's KEY: "uid") to OUTSIDE, count 1
 * (user_namespaces(7)): a wider map would let a process with CAP_SETUID
 * in the jail become other host users.
 */
static void
single_id_map(struct check_ctx *c, struct check_result *r, const char *file,
	      const char *key, unsigned outside)
{
	struct check_job j;
	char map[4096], id[32];
	unsigned in, out, count;
	int used = 0;

	if (!probe_ok(c, r, &j, &plain, ARGS("ids")) ||
	    !val(r, &j, file, map, sizeof(map)) ||
	    !val(r, &j, key, id, sizeof(id)))
		goto out;
	/* The probe printed the map's newlines as "\n". */
	if (sscanf(map, " %u %u %u%n", &in, &out, &count, &used) != 3 ||
	    strcmp(map + used, "\\n") != 0)
		check_fail(r, "/proc/self/%s is not one line: \"%s\"", file,
			   map);
	else if (count != 1 || in != (unsigned)atoi(id) || out != outside)
		check_fail(r, "/proc/self/%s maps %u ids from %u to %u (want "
			   "1 id, the payload's %s, to %u)", file, count, in,
			   out, id, outside);
	else
		check_pass(r, "/proc/self/%s maps exactly one id, %u to host "
			   "id %u", file, in, out);
out:
	check_job_free(&j);
}

/* user_ns.uid_map_single_id: the payload's uid to the caller's (65534
 * for a root caller), one id (user_namespaces(7)). */
static void
uid_map_single(struct check_ctx *c, struct check_result *r)
{
	single_id_map(c, r, "uid_map", "uid",
		      c->root ? 65534u : (unsigned)geteuid());
}

/* user_ns.gid_map_single_id: the payload's gid to the caller's (65534
 * for a root caller), one id. */
static void
gid_map_single(struct check_ctx *c, struct check_result *r)
{
	single_id_map(c, r, "gid_map", "gid",
		      c->root ? 65534u : (unsigned)getegid());
}

/* user_ns.ids_not_root: the payload's real and effective uid and gid are
 * not 0 in its namespace, and it holds no group 0. */
static void
ids_not_root(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char uid[32], euid[32], gid[32], egid[32], groups[1024];

	if (!probe_ok(c, r, &j, &plain, ARGS("ids")) ||
	    !val(r, &j, "uid", uid, sizeof(uid)) ||
	    !val(r, &j, "euid", euid, sizeof(euid)) ||
	    !val(r, &j, "gid", gid, sizeof(gid)) ||
	    !val(r, &j, "egid", egid, sizeof(egid)) ||
	    !val(r, &j, "groups", groups, sizeof(groups)))
		goto out;
	if (atoi(uid) == 0 || atoi(euid) == 0 || atoi(gid) == 0 ||
	    atoi(egid) == 0 || list_has(groups, "0"))
		check_fail(r, "uid %s euid %s gid %s egid %s groups [%s]", uid,
			   euid, gid, egid, groups);
	else
		check_pass(r, "uid %s euid %s gid %s egid %s, groups [%s]: no "
			   "root", uid, euid, gid, egid, groups);
out:
	check_job_free(&j);
}

/* user_ns.own_namespace: the job has a user namespace of its own. */
static void
userns_own(struct check_ctx *c, struct check_result *r)
{
	own_namespace(c, r, "user");
}

/* ---- pid_ns ---------------------------------------------------------- */

/* pid_ns.payload_is_pid_2_under_stockade_init: the program is pid 2 of
 * its namespace, the child of pid 1, stockade-init (pid_namespaces(7)). */
static void
pid_two(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pid[32], ppid[32], comm[64];

	if (probe_ok(c, r, &j, &plain, ARGS("pid")) &&
	    val(r, &j, "pid", pid, sizeof(pid)) &&
	    val(r, &j, "ppid", ppid, sizeof(ppid)) &&
	    val(r, &j, "init_comm", comm, sizeof(comm))) {
		if (strcmp(pid, "2") == 0 && strcmp(ppid, "1") == 0 &&
		    strcmp(comm, "stockade-init") == 0)
			check_pass(r, "the program is pid 2, its parent pid 1 "
				   "is stockade-init");
		else
			check_fail(r, "the program is pid %s, its parent %s; "
				   "pid 1 is \"%s\"", pid, ppid, comm);
	}
	check_job_free(&j);
}

/* pid_ns.proc_is_the_jails_own: /proc is a procfs of the job's pid
 * namespace: /proc/self names the program's own pid, and it lists the
 * job's two processes only, not the host's ("/proc and pid namespaces",
 * pid_namespaces(7)). */
static void
proc_own(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pid[32], self[32], pids[32];

	if (probe_ok(c, r, &j, &plain, ARGS("pid")) &&
	    val(r, &j, "pid", pid, sizeof(pid)) &&
	    val(r, &j, "proc_self", self, sizeof(self)) &&
	    val(r, &j, "proc.pids", pids, sizeof(pids))) {
		if (strcmp(pid, self) == 0 && atoi(pids) >= 1 &&
		    atoi(pids) <= 3)
			check_pass(r, "/proc/self is %s, the program's pid; "
				   "/proc lists %s processes", self, pids);
		else
			check_fail(r, "/proc/self is %s for pid %s; /proc lists "
				   "%s processes (the host's /proc?)", self,
				   pid, pids);
	}
	check_job_free(&j);
}

/* pid_ns.own_namespace: the job has a pid namespace of its own. */
static void
pidns_own(struct check_ctx *c, struct check_result *r)
{
	own_namespace(c, r, "pid");
}

/* ---- mount_ns -------------------------------------------------------- */

/* One "mount=" value: MOUNTPOINT FSTYPE OPTIONS, split in place. */
struct mnt {
	char *point, *type, *opts;
};

static bool
split_mount(char *v, struct mnt *m)
{
	char *save = NULL;

	m->point = strtok_r(v, " ", &save);
	m->type = strtok_r(NULL, " ", &save);
	m->opts = strtok_r(NULL, " ", &save);
	return m->point != NULL && m->type != NULL && m->opts != NULL;
}

/* PATH is DIR or beneath it. */
static bool
beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/' || strcmp(dir, "/") == 0);
}

/* True when mount option OPT is among the comma-separated OPTS. */
static bool
has_opt(const char *opts, const char *opt)
{
	return list_has(opts, opt);
}

/* Finds the mount at POINT in J's "mount=" lines (the last, the one on
 * top) into BUF/M. */
static bool
find_mount(const struct check_job *j, const char *point, char *buf,
	   size_t len, struct mnt *m)
{
	const char *cur = j->out;
	char v[4096];
	bool found = false;

	while (next_value(&cur, "mount", v, sizeof(v))) {
		struct mnt t;

		if (split_mount(v, &t) && strcmp(t.point, point) == 0) {
			snprintf(buf, len, "%s %s %s", t.point, t.type, t.opts);
			found = true;
		}
	}
	return found && split_mount(buf, m);
}

/* mount_ns.old_root_detached: the job's mounts are its root tmpfs (one
 * mount at /) and what the jail puts there (the policy's binds, /dev,
 * /proc, /tmp, home, /work): no mount of the host's old root is left
 * anywhere (pivot_root(2): put_old must be unmounted). */
static void
old_root_detached(struct check_ctx *c, struct check_result *r)
{
	static char fixed[][8] = {"/work", "/tmp", "/dev", "/proc"};
	struct check_job j;
	char binds[8192], home[4096], v[4096], *dirs[160];
	const char *cur;
	size_t ndirs = 0;
	int roots = 0, e;

	memset(&j, 0, sizeof(j));
	if ((e = default_section(c, "filesystem", binds, sizeof(binds))) < 0 ||
	    (e = default_home(c, home, sizeof(home))) < 0) {
		check_fail(r, "stockade policy default: %s", strerror(-e));
		return;
	}
	/* The targets a sound jail mounts on: its fixed ones, home, and
	 * each bind of the default policy ("ro_bind=/usr": the same
	 * path). */
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		dirs[ndirs++] = fixed[i];
	dirs[ndirs++] = home;
	for (char *line = strtok(binds, "\n"); line != NULL && ndirs < 160;
	     line = strtok(NULL, "\n")) {
		char *eq = strchr(line, '=');

		if (eq != NULL && eq[1] == '/')
			dirs[ndirs++] = eq + 1;
	}
	if (!probe_ok(c, r, &j, &plain, ARGS("mounts")))
		goto out;
	cur = j.out;
	while (next_value(&cur, "mount", v, sizeof(v))) {
		struct mnt m;
		bool known = false;

		if (!split_mount(v, &m))
			continue;
		if (strcmp(m.point, "/") == 0) {
			roots++;
			continue;
		}
		for (size_t i = 0; i < ndirs && !known; i++)
			known = beneath(m.point, dirs[i]);
		if (!known || strcmp(m.type, "sysfs") == 0 ||
		    strncmp(m.type, "cgroup", 6) == 0) {
			check_fail(r, "the job has a mount at %s (%s), none of "
				   "the jail's: the host's tree", m.point,
				   m.type);
			goto out;
		}
	}
	if (roots != 1)
		check_fail(r, "the job has %d mounts at / (want its root tmpfs "
			   "alone)", roots);
	else
		check_pass(r, "one mount at /, every other one the jail's "
			   "(binds, /dev, /proc, /tmp, %s, /work)", home);
out:
	check_job_free(&j);
}

/*
 * The mount at POINT in a plain job is of type TYPE (NULL: any) and has
 * every option of the comma-separated WANT. WHY says what they stop.
 */
static void
mount_has(struct check_ctx *c, struct check_result *r, const char *point,
	  const char *type, const char *want, const char *why)
{
	struct check_job j;
	char buf[4096], w[128];
	struct mnt m;

	if (!probe_ok(c, r, &j, &plain, ARGS("mounts")))
		goto out;
	if (!find_mount(&j, point, buf, sizeof(buf), &m)) {
		check_fail(r, "no mount at %s in /proc/self/mountinfo", point);
		goto out;
	}
	if (type != NULL && strcmp(m.type, type) != 0) {
		check_fail(r, "%s is a %s mount (want %s)", point, m.type,
			   type);
		goto out;
	}
	snprintf(w, sizeof(w), "%s", want);
	for (char *o = strtok(w, ","); o != NULL; o = strtok(NULL, ","))
		if (!has_opt(m.opts, o)) {
			check_fail(r, "%s is mounted %s: no %s (%s)", point,
				   m.opts, o, why);
			goto out;
		}
	check_pass(r, "%s is a %s mount, %s", point, m.type, m.opts);
out:
	check_job_free(&j);
}

/* mount_ns.root_read_only: the jail's root tmpfs is remounted read-only
 * after pivot_root, so the payload can plant nothing outside its
 * writable mounts. */
static void
root_ro(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/", "tmpfs", "ro,nosuid,nodev",
		  "the root must be read-only");
}

/* mount_ns.workspace_nosuid_nodev: /work ignores set-user-ID bits and
 * device nodes (mount_setattr(2) MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV): a
 * file the job makes there gains nothing when run or opened. */
static void
work_nosuid(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/work", NULL, "nosuid,nodev",
		  "a set-user-ID file or device node there would act");
}

/* mount_ns.binds_read_only: the policy's host binds (/usr) are
 * read-only, nosuid and nodev. */
static void
binds_ro(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/usr", NULL, "ro,nosuid,nodev",
		  "the host's files must stay as they are");
}

/* mount_ns.proc_sys_read_only: /proc/sys is a read-only bind in the
 * jail's /proc (kernel knobs its user namespace might otherwise write;
 * proc(5)). */
static void
proc_sys_ro(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/proc/sys", "proc", "ro,nosuid,nodev,noexec",
		  "kernel settings must not be written");
}

/* mount_ns.host_dev_hidden: /dev is the jail's own read-only tmpfs, and
 * none of the host's devices beyond null, zero, full, random and urandom
 * is there (no kmsg, mem, kvm, tty, console, disks, loop-control, fuse,
 * tun). */
static void
dev_hidden(struct check_ctx *c, struct check_result *r)
{
	static const char *const devs[] = {
		"/dev/kmsg", "/dev/mem",  "/dev/kvm",  "/dev/tty",
		"/dev/console", "/dev/vda", "/dev/sda", "/dev/loop-control",
		"/dev/fuse", "/dev/net/tun", "/dev/autofs", "/dev/tty0",
	};
	const char *argv[2 + sizeof(devs) / sizeof(devs[0]) + 1];
	struct check_job j;
	char key[64], v[64], buf[4096];
	struct mnt m;
	size_t n = 0;

	argv[n++] = "stat";
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		argv[n++] = devs[i];
	argv[n] = NULL;
	if (!probe_ok(c, r, &j, &plain, argv))
		goto out;
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		snprintf(key, sizeof(key), "stat.%s", devs[i]);
		if (!val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, "ENOENT") != 0) {
			check_fail(r, "the host's %s is in the jail (stat: %s)",
				   devs[i], v);
			goto out;
		}
	}
	check_job_free(&j);
	if (!probe_ok(c, r, &j, &plain, ARGS("mounts")))
		goto out;
	if (!find_mount(&j, "/dev", buf, sizeof(buf), &m) ||
	    strcmp(m.type, "tmpfs") != 0 || !has_opt(m.opts, "ro"))
		check_fail(r, "/dev is not the jail's read-only tmpfs: %s",
			   buf);
	else
		check_pass(r, "/dev is a read-only tmpfs; /dev/kmsg, mem, kvm, "
			   "tty, console, vda, sda, ... do not exist");
out:
	check_job_free(&j);
}

/* mount_ns.host_paths_absent: the host's /etc/shadow, /root, /sys,
 * /var, /boot and this check's own scratch directory do not exist in
 * the jail. */
static void
host_paths_absent(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	const char *paths[] = {"/etc/shadow", "/root", "/sys", "/var",
			       "/boot", c->tmpdir};
	char key[4200], v[64];

	if (!probe_ok(c, r, &j, &plain,
		      ARGS("stat", paths[0], paths[1], paths[2], paths[3],
			   paths[4], paths[5])))
		goto out;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(key, sizeof(key), "stat.%s", paths[i]);
		if (!val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, "ENOENT") != 0) {
			check_fail(r, "the host's %s is visible in the jail "
				   "(stat: %s)", paths[i], v);
			goto out;
		}
	}
	check_pass(r, "/etc/shadow, /root, /sys, /var, /boot and %s: ENOENT",
		   c->tmpdir);
out:
	check_job_free(&j);
}

/* ---- network_ns ------------------------------------------------------ */

/* network_ns.only_loopback_up: the job's network namespace has lo and
 * nothing else, lo is up and a datagram to itself arrives
 * (network_namespaces(7)). */
static void
only_lo(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char ifs[1024], up[16], self[32];

	if (probe_ok(c, r, &j, &plain, ARGS("net")) &&
	    val(r, &j, "net.ifaces", ifs, sizeof(ifs)) &&
	    val(r, &j, "net.lo_up", up, sizeof(up)) &&
	    val(r, &j, "net.self_udp", self, sizeof(self))) {
		if (strcmp(ifs, "lo") == 0 && strcmp(up, "1") == 0 &&
		    strcmp(self, "ok") == 0)
			check_pass(r, "interfaces: lo alone, up; a datagram "
				   "over it arrives");
		else
			check_fail(r, "interfaces: %s; lo up: %s; a datagram to "
				   "itself: %s", ifs, up, self);
	}
	check_job_free(&j);
}

/* network_ns.host_loopback_unreachable: a datagram the job sends to
 * 127.0.0.1:PORT, where this check listens on the host's loopback, does
 * not arrive: the job's 127.0.0.1 is its own. UDP, because Landlock
 * refuses every TCP connect anyway. */
static void
host_lo_unreachable(struct check_ctx *c, struct check_result *r)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	struct check_job j;
	char port[16], sent[32], got[64];
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ssize_t n;

	memset(&j, 0, sizeof(j));
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0) {
		check_fail(r, "cannot listen on the host's 127.0.0.1: %s",
			   strerror(errno));
		goto out;
	}
	snprintf(port, sizeof(port), "%u", (unsigned)ntohs(a.sin_port));
	if (!probe_ok(c, r, &j, &plain, ARGS("net", port)) ||
	    !val(r, &j, "net.host_udp", sent, sizeof(sent)))
		goto out;
	/* The job has ended: a datagram it sent to us is queued by now. */
	n = recv(s, got, sizeof(got), 0);
	if (n >= 0)
		check_fail(r, "the job's datagram to 127.0.0.1:%s reached the "
			   "host's loopback (%zd bytes)", port, n);
	else
		check_pass(r, "the job's datagram to 127.0.0.1:%s (sendto: %s) "
			   "never reached the host's listener", port, sent);
out:
	if (s >= 0)
		close(s);
	check_job_free(&j);
}

/* network_ns.own_namespace: the job has a network namespace of its own. */
static void
netns_own(struct check_ctx *c, struct check_result *r)
{
	own_namespace(c, r, "net");
}

/* ---- ipc_ns ---------------------------------------------------------- */

/* ipc_ns.host_sysv_objects_invisible: a System V shared memory segment
 * this check makes on the host is not among the job's; the job sees no
 * segment, queue or semaphore set at all (ipc_namespaces(7)). */
static void
sysv_invisible(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char shm[32], msg[32], sem[32];
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

	memset(&j, 0, sizeof(j));
	if (id < 0) {
		check_fail(r, "cannot make a host shared memory segment: %s",
			   strerror(errno));
		return;
	}
	if (probe_ok(c, r, &j, &plain, ARGS("sysvipc")) &&
	    val(r, &j, "ipc.shm", shm, sizeof(shm)) &&
	    val(r, &j, "ipc.msg", msg, sizeof(msg)) &&
	    val(r, &j, "ipc.sem", sem, sizeof(sem))) {
		if (strcmp(shm, "0") == 0 && strcmp(msg, "0") == 0 &&
		    strcmp(sem, "0") == 0)
			check_pass(r, "the job sees no System V object (the "
				   "host has segment %d)", id);
		else
			check_fail(r, "the job sees %s shared memory segments "
				   "(the host's %d among them?), %s queues, %s "
				   "semaphore sets", shm, id, msg, sem);
	}
	shmctl(id, IPC_RMID, NULL);
	check_job_free(&j);
}

/* ipc_ns.own_namespace: the job has an IPC namespace of its own. */
static void
ipcns_own(struct check_ctx *c, struct check_result *r)
{
	own_namespace(c, r, "ipc");
}

/* ipc_ns.cgroup_namespace_own: CLONE_NEWCGROUP, of the same layer
 * (ipc_uts, docs/layers.md): the job's cgroup namespace is its own and
 * /proc/self/cgroup shows it at the root of every hierarchy
 * (cgroup_namespaces(7)). */
static void
cgroupns_own(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char mine[128], theirs[128], cg[4096];
	ssize_t n = readlink("/proc/self/ns/cgroup", mine, sizeof(mine) - 1);

	memset(&j, 0, sizeof(j));
	if (n < 0) {
		check_fail(r, "cannot read our /proc/self/ns/cgroup: %s",
			   strerror(errno));
		return;
	}
	mine[n] = '\0';
	if (!probe_ok(c, r, &j, &plain, ARGS("ns")) ||
	    !val(r, &j, "ns.cgroup", theirs, sizeof(theirs)))
		goto out;
	if (strcmp(mine, theirs) == 0) {
		check_fail(r, "the job's cgroup namespace is the caller's own, "
			   "%s", theirs);
		goto out;
	}
	check_job_free(&j);
	if (!probe_ok(c, r, &j, &plain, ARGS("sysvipc")) ||
	    !val(r, &j, "cgroup", cg, sizeof(cg)))
		goto out;
	/* Lines "ID:CONTROLLERS:PATH", joined by "\n" by the probe. */
	for (char *line = cg; *line != '\0';) {
		char *end = strstr(line, "\\n");
		char *colon;

		if (end != NULL)
			*end = '\0';
		colon = strrchr(line, ':');
		if (colon != NULL && strcmp(colon + 1, "/") != 0) {
			check_fail(r, "/proc/self/cgroup shows the host's path: "
				   "%s", line);
			goto out;
		}
		line = end != NULL ? end + 2 : line + strlen(line);
	}
	check_pass(r, "the job's cgroup namespace is %s (ours %s); every "
		   "hierarchy shows /", theirs, mine);
out:
	check_job_free(&j);
}

/* ---- uts_ns ---------------------------------------------------------- */

/* uts_ns.hostname_is_policys: a policy's hostname = stockade-check is the
 * job's host name, not the host's (uts_namespaces(7)). */
static void
hostname_policys(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.policy = "[jail]\nhostname = stockade-check\n"};
	struct check_job j;
	struct utsname u;
	char name[256];

	if (!probe_ok(c, r, &j, &s, ARGS("uts")) ||
	    !val(r, &j, "hostname", name, sizeof(name)))
		goto out;
	uname(&u);
	if (strcmp(name, "stockade-check") == 0)
		check_pass(r, "the job's host name is \"stockade-check\", the "
			   "policy's (the host's is \"%s\")", u.nodename);
	else
		check_fail(r, "the job's host name is \"%s\" (the host's is "
			   "\"%s\"), not the policy's \"stockade-check\"",
			   name, u.nodename);
out:
	check_job_free(&j);
}

/* uts_ns.own_namespace: the job has a UTS namespace of its own. */
static void
utsns_own(struct check_ctx *c, struct check_result *r)
{
	own_namespace(c, r, "uts");
}

/* ---- terminal -------------------------------------------------------- */

/* terminal.own_session: the program leads a session and a process group
 * of its own (setsid(2)), so no terminal of the caller's session is its
 * controlling terminal and TIOCSTI cannot type into it
 * (CVE-2017-5226). */
static void
own_session(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pid[32], sid[32], pgrp[32];

	if (probe_ok(c, r, &j, &plain, ARGS("session")) &&
	    val(r, &j, "pid", pid, sizeof(pid)) &&
	    val(r, &j, "sid", sid, sizeof(sid)) &&
	    val(r, &j, "pgrp", pgrp, sizeof(pgrp))) {
		if (strcmp(pid, sid) == 0 && strcmp(pid, pgrp) == 0)
			check_pass(r, "pid %s leads its session and process "
				   "group", pid);
		else
			check_fail(r, "pid %s is in session %s, process group "
				   "%s (0: a session outside the jail)", pid,
				   sid, pgrp);
	}
	check_job_free(&j);
}

/* terminal.no_controlling_terminal: /proc/self/stat's tty_nr is 0 and
 * standard input answers no terminal ioctl (ENOTTY). */
static void
no_ctty(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char tty[32], pg[32];

	if (probe_ok(c, r, &j, &plain, ARGS("session")) &&
	    val(r, &j, "tty_nr", tty, sizeof(tty)) &&
	    val(r, &j, "tiocgpgrp", pg, sizeof(pg))) {
		if (strcmp(tty, "0") == 0 && strcmp(pg, "ENOTTY") == 0)
			check_pass(r, "tty_nr 0; TIOCGPGRP on stdin: ENOTTY");
		else
			check_fail(r, "tty_nr %s; TIOCGPGRP on stdin: %s", tty,
				   pg);
	}
	check_job_free(&j);
}

/* terminal.stdin_null_stdout_pipes: standard input is /dev/null
 * (character device 1:3) and standard output and error are pipes to
 * the launcher. */
static void
stdio_kinds(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char f0[32], f1[32], f2[32];

	if (probe_ok(c, r, &j, &plain, ARGS("session")) &&
	    val(r, &j, "fd0", f0, sizeof(f0)) &&
	    val(r, &j, "fd1", f1, sizeof(f1)) &&
	    val(r, &j, "fd2", f2, sizeof(f2))) {
		if (strcmp(f0, "chr 1:3") == 0 && strcmp(f1, "fifo") == 0 &&
		    strcmp(f2, "fifo") == 0)
			check_pass(r, "stdin /dev/null (chr 1:3), stdout and "
				   "stderr pipes");
		else
			check_fail(r, "stdin %s, stdout %s, stderr %s", f0, f1,
				   f2);
	}
	check_job_free(&j);
}

/* terminal.only_stdio_descriptors: the program starts with descriptors
 * 0, 1 and 2 and no other (style.md rule 10: nothing of init's or the
 * launcher's crosses the exec). */
static void
only_stdio(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char fds[1024];

	if (probe_ok(c, r, &j, &plain, ARGS("session")) &&
	    val(r, &j, "fds", fds, sizeof(fds))) {
		if (strcmp(fds, "0,1,2") == 0)
			check_pass(r, "open descriptors: 0, 1, 2");
		else
			check_fail(r, "open descriptors: %s (want 0,1,2)", fds);
	}
	check_job_free(&j);
}

/* ---- capabilities ---------------------------------------------------- */

/* The capability sets NAMES ("CapInh,CapPrm") of /proc/self/status are
 * all zero (capabilities(7)). */
static void
caps_zero(struct check_ctx *c, struct check_result *r, const char *names)
{
	struct check_job j;
	char list[128], key[64], v[64], seen[512] = "";

	if (!probe_ok(c, r, &j, &plain, ARGS("status")))
		goto out;
	snprintf(list, sizeof(list), "%s", names);
	for (char *n = strtok(list, ","); n != NULL; n = strtok(NULL, ",")) {
		size_t l = strlen(seen);

		snprintf(key, sizeof(key), "status.%s", n);
		if (!val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strspn(v, "0") != strlen(v) || v[0] == '\0') {
			check_fail(r, "%s is %s in /proc/self/status", n, v);
			goto out;
		}
		snprintf(seen + l, sizeof(seen) - l, "%s%s", l > 0 ? ", " : "",
			 n);
	}
	check_pass(r, "%s: all zero in /proc/self/status", seen);
out:
	check_job_free(&j);
}

/* capabilities.no_capability_held: the inheritable, permitted, effective
 * and ambient sets are empty. */
static void
caps_none(struct check_ctx *c, struct check_result *r)
{
	caps_zero(c, r, "CapInh,CapPrm,CapEff,CapAmb");
}

/* capabilities.bounding_set_empty: the bounding set is empty, so no
 * exec can bring a capability back (capabilities(7), "Capability
 * bounding set"). */
static void
caps_bounding(struct check_ctx *c, struct check_result *r)
{
	caps_zero(c, r, "CapBnd");
}

/* capabilities.securebits_locked: NOROOT, NO_SETUID_FIXUP and
 * NO_CAP_AMBIENT_RAISE are set, KEEP_CAPS is not, and all four are
 * locked (capabilities(7), "The securebits flags"): 0xef. */
static void
securebits(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[32];

	if (probe_ok(c, r, &j, &plain, ARGS("caps")) &&
	    val(r, &j, "securebits", v, sizeof(v))) {
		if ((strtoul(v, NULL, 16) & 0xff) == 0xef)
			check_pass(r, "securebits %s: NOROOT, NO_SETUID_FIXUP, "
				   "NO_CAP_AMBIENT_RAISE set and locked, "
				   "KEEP_CAPS off and locked", v);
		else
			check_fail(r, "securebits %s (want 0xef: set and "
				   "locked)", v);
	}
	check_job_free(&j);
}

/* ---- no_new_privs ---------------------------------------------------- */

/* NoNewPrivs of /proc/self/status is 1 in a job as S says. */
static void
nnp_is_set(struct check_ctx *c, struct check_result *r, const struct pj *s,
	   const char *how)
{
	struct check_job j;
	char v[256];

	if (probe_ok(c, r, &j, s, ARGS("status")) &&
	    val(r, &j, "status.NoNewPrivs", v, sizeof(v))) {
		if (strcmp(v, "1") == 0)
			check_pass(r, "NoNewPrivs is 1 in /proc/self/status%s",
				   how);
		else
			check_fail(r, "NoNewPrivs is %s in /proc/self/status%s",
				   v, how);
	}
	check_job_free(&j);
}

/* no_new_privs.set: NoNewPrivs is 1 in /proc/self/status (prctl(2)
 * PR_SET_NO_NEW_PRIVS): no exec gains privileges. */
static void
nnp_set(struct check_ctx *c, struct check_result *r)
{
	nnp_is_set(c, r, &plain, "");
}

/* no_new_privs.set_without_landlock_or_seccomp: with the Landlock and
 * seccomp layers switched off (an unsafe evaluation), NoNewPrivs is
 * still 1: layer caps_nnp sets it itself, not only as the side effect of
 * landlock_restrict_self(2), which needs it, or of libseccomp's load
 * (SCMP_FLTATR_CTL_NNP; docs/layers.md, 11). */
static void
nnp_set_alone(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {
		.policy = "[jail]\nunsafe_layers_off = landlock, seccomp\n",
		.run_args = ARGS("--unsafe-evaluation"),
	};

	nnp_is_set(c, r, &s, " with the landlock and seccomp layers off");
}

/* ---- landlock -------------------------------------------------------- */

/* landlock.abi_reported: the result's landlock_abi is this kernel's
 * Landlock ABI (landlock_create_ruleset(2), the version), not 0. */
static void
ll_abi_reported(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	int abi = ll_abi();
	json_t *v;

	if (abi <= 0) {
		check_fail(r, "this kernel has no Landlock (%s): stockade "
			   "cannot run here", strerror(-abi));
		return;
	}
	if (!probe_ok(c, r, &j, &plain, ARGS("caps")))
		goto out;
	v = json_object_get(j.result, "landlock_abi");
	if (json_is_integer(v) && json_integer_value(v) == abi)
		check_pass(r, "the result's landlock_abi is %d, the kernel's",
			   abi);
	else if (json_is_integer(v))
		check_fail(r, "the result's landlock_abi is %lld, the kernel's "
			   "is %d", (long long)json_integer_value(v), abi);
	else
		check_fail(r, "the result has no integer landlock_abi");
out:
	check_job_free(&j);
}

/*
 * The probe's Landlock attempt KEY is answered WANT (an errno name). The
 * kernel needs ABI MIN_ABI for the right: below it, the host lacks what
 * the check observes (skip).
 */
static void
ll_refused(struct check_ctx *c, struct check_result *r, const char *key,
	   const char *want, int min_abi, const char *what)
{
	struct check_job j;
	char v[64];
	int abi = ll_abi();

	if (abi > 0 && abi < min_abi) {
		check_skip(r, "this kernel's Landlock ABI %d has no %s (ABI %d)",
			   abi, what, min_abi);
		return;
	}
	if (probe_ok(c, r, &j, &plain, ARGS("landlock")) &&
	    val(r, &j, key, v, sizeof(v))) {
		if (strcmp(v, want) == 0)
			check_pass(r, "%s: %s", what, v);
		else
			check_fail(r, "%s: %s (want %s from Landlock)", what, v,
				   want);
	}
	check_job_free(&j);
}

/* landlock.proc_write_refused: opening /proc/self/comm for writing is
 * refused (EACCES): /proc is a read-write procfs, and Landlock grants it
 * reading only (launcher/landlock_jail.c). */
static void
ll_proc_write(struct check_ctx *c, struct check_result *r)
{
	ll_refused(c, r, "proc_comm_write", "EACCES", 1,
		   "open(/proc/self/comm, O_WRONLY)");
}

/* landlock.tcp_bind_refused: a TCP bind to 127.0.0.1:0 is refused
 * (EACCES): the ruleset handles LANDLOCK_ACCESS_NET_BIND_TCP with no
 * rule (landlock(7), ABI 4). */
static void
ll_tcp_bind(struct check_ctx *c, struct check_result *r)
{
	ll_refused(c, r, "tcp_bind", "EACCES", 4,
		   "TCP bind to 127.0.0.1:0");
}

/* landlock.signal_to_init_refused: kill(1, 0) is refused (EPERM): init,
 * of the job's own ids, is outside the payload's domain and signals are
 * scoped (LANDLOCK_SCOPE_SIGNAL, ABI 6). */
static void
ll_signal(struct check_ctx *c, struct check_result *r)
{
	ll_refused(c, r, "signal_init", "EPERM", 6, "kill(1, 0) to init");
}

/* landlock.device_ioctl_refused: TIOCGWINSZ on /dev/null is refused
 * (EACCES) before the driver answers ENOTTY:
 * LANDLOCK_ACCESS_FS_IOCTL_DEV is handled and granted nowhere (ABI 5). */
static void
ll_dev_ioctl(struct check_ctx *c, struct check_result *r)
{
	ll_refused(c, r, "dev_ioctl", "EACCES", 5,
		   "ioctl(TIOCGWINSZ) on /dev/null");
}

const struct check checks_jail[] = {
	{"limits.rlimit_fsize_is_file_size", "limits",
	 "--file-size 3: RLIMIT_FSIZE 3 MiB soft and hard", rlimit_fsize},
	{"limits.rlimit_nofile_is_open_files", "limits",
	 "open_files = 100: RLIMIT_NOFILE 100 soft and hard", rlimit_nofile},
	{"limits.rlimit_nproc_is_processes", "limits",
	 "--processes 17: RLIMIT_NPROC 17 soft and hard", rlimit_nproc},
	{"limits.rlimit_core_zero", "limits", "RLIMIT_CORE 0 soft and hard",
	 rlimit_core},
	{"limits.rlimit_data_twice_memory", "limits",
	 "--memory 100: RLIMIT_DATA 200 MiB", rlimit_data},
	{"limits.rlimit_cpu_past_cpu_time", "limits",
	 "--cpu-time 7: RLIMIT_CPU 8 s soft, 9 s hard", rlimit_cpu},
	{"limits.no_realtime_nice_or_locked_memory", "limits",
	 "RLIMIT_RTPRIO, RTTIME, NICE 0; MEMLOCK, MSGQUEUE 64 KiB",
	 rlimit_misc},
	{"limits.tmpfs_sizes_capped", "limits",
	 "--tmp-size 5: /tmp and /dev/shm 5 MiB, home home_mb", tmpfs_sizes},
	{"process_cleanup.leftover_dead_after_exit", "process_cleanup",
	 "a daemonised process of the job dies when its program exits",
	 leftover_exit},
	{"process_cleanup.leftover_dead_after_timeout", "process_cleanup",
	 "a daemonised process of the job dies at the job's timeout",
	 leftover_timeout},
	{"process_cleanup.leftover_dead_after_exit_without_pid_ns",
	 "process_cleanup",
	 "pid_ns off: init still kills the leftover when the program exits",
	 leftover_exit_nopidns},
	{"process_cleanup.leftover_dead_after_timeout_without_pid_ns",
	 "process_cleanup",
	 "pid_ns off: the timeout still kills the leftover, not the program "
	 "alone", leftover_timeout_nopidns},
	{"environment.exactly_the_policys", "environment",
	 "the job's environment is exactly the policy's [environment]",
	 env_exact},
	{"environment.caller_variables_absent", "environment",
	 "no variable of the caller reaches the job", env_caller_absent},
	{"working_directory.cwd_is_work", "working_directory",
	 "the job starts in /work", cwd_is_work},
	{"working_directory.private_home_and_tmp", "working_directory",
	 "HOME and /tmp are tmpfs of the job's own, /tmp empty",
	 private_home_tmp},
	{"user_ns.setgroups_denied", "user_ns",
	 "/proc/self/setgroups says \"deny\"", setgroups_denied},
	{"user_ns.uid_map_single_id", "user_ns",
	 "uid_map: the payload's uid to the caller's (65534 as root), 1 id",
	 uid_map_single},
	{"user_ns.gid_map_single_id", "user_ns",
	 "gid_map: the payload's gid to the caller's (65534 as root), 1 id",
	 gid_map_single},
	{"user_ns.ids_not_root", "user_ns",
	 "uid, euid, gid, egid not 0, no group 0", ids_not_root},
	{"user_ns.own_namespace", "user_ns",
	 "the job's user namespace is not the caller's", userns_own},
	{"pid_ns.payload_is_pid_2_under_stockade_init", "pid_ns",
	 "the program is pid 2, child of pid 1 stockade-init", pid_two},
	{"pid_ns.proc_is_the_jails_own", "pid_ns",
	 "/proc/self is the program's pid; /proc lists the job alone",
	 proc_own},
	{"pid_ns.own_namespace", "pid_ns",
	 "the job's pid namespace is not the caller's", pidns_own},
	{"mount_ns.old_root_detached", "mount_ns",
	 "one mount at /, no mount of the host's tree", old_root_detached},
	{"mount_ns.root_read_only", "mount_ns",
	 "/ is a read-only, nosuid, nodev tmpfs", root_ro},
	{"mount_ns.workspace_nosuid_nodev", "mount_ns",
	 "/work is mounted nosuid,nodev", work_nosuid},
	{"mount_ns.binds_read_only", "mount_ns",
	 "/usr is mounted ro,nosuid,nodev", binds_ro},
	{"mount_ns.proc_sys_read_only", "mount_ns",
	 "/proc/sys is mounted read-only", proc_sys_ro},
	{"mount_ns.host_dev_hidden", "mount_ns",
	 "/dev is a read-only tmpfs without the host's devices", dev_hidden},
	{"mount_ns.host_paths_absent", "mount_ns",
	 "/etc/shadow, /root, /sys, /var, /boot, the host's /tmp: ENOENT",
	 host_paths_absent},
	{"network_ns.only_loopback_up", "network_ns",
	 "interfaces: lo alone, up, carrying a datagram", only_lo},
	{"network_ns.host_loopback_unreachable", "network_ns",
	 "a datagram to the host's 127.0.0.1 does not arrive",
	 host_lo_unreachable},
	{"network_ns.own_namespace", "network_ns",
	 "the job's network namespace is not the caller's", netns_own},
	{"ipc_ns.host_sysv_objects_invisible", "ipc_ns",
	 "the job sees no System V object, not the host's segment",
	 sysv_invisible},
	{"ipc_ns.own_namespace", "ipc_ns",
	 "the job's IPC namespace is not the caller's", ipcns_own},
	{"ipc_ns.cgroup_namespace_own", "ipc_ns",
	 "the job's cgroup namespace is its own; /proc/self/cgroup shows /",
	 cgroupns_own},
	{"uts_ns.hostname_is_policys", "uts_ns",
	 "hostname = stockade-check: the job's host name", hostname_policys},
	{"uts_ns.own_namespace", "uts_ns",
	 "the job's UTS namespace is not the caller's", utsns_own},
	{"terminal.own_session", "terminal",
	 "the program leads its own session and process group", own_session},
	{"terminal.no_controlling_terminal", "terminal",
	 "tty_nr 0; TIOCGPGRP on stdin: ENOTTY", no_ctty},
	{"terminal.stdin_null_stdout_pipes", "terminal",
	 "stdin /dev/null, stdout and stderr pipes", stdio_kinds},
	{"terminal.only_stdio_descriptors", "terminal",
	 "open descriptors: 0, 1, 2", only_stdio},
	{"capabilities.no_capability_held", "capabilities",
	 "CapInh, CapPrm, CapEff, CapAmb all 0", caps_none},
	{"capabilities.bounding_set_empty", "capabilities", "CapBnd 0",
	 caps_bounding},
	{"capabilities.securebits_locked", "capabilities",
	 "securebits 0xef: set and locked", securebits},
	{"no_new_privs.set", "no_new_privs",
	 "NoNewPrivs is 1 in /proc/self/status", nnp_set},
	{"no_new_privs.set_without_landlock_or_seccomp", "no_new_privs",
	 "landlock and seccomp off: NoNewPrivs still 1", nnp_set_alone},
	{"landlock.abi_reported", "landlock",
	 "the result's landlock_abi is the kernel's", ll_abi_reported},
	{"landlock.proc_write_refused", "landlock",
	 "open(/proc/self/comm, O_WRONLY): EACCES", ll_proc_write},
	{"landlock.tcp_bind_refused", "landlock",
	 "TCP bind to 127.0.0.1:0: EACCES", ll_tcp_bind},
	{"landlock.signal_to_init_refused", "landlock",
	 "kill(1, 0): EPERM", ll_signal},
	{"landlock.device_ioctl_refused", "landlock",
	 "ioctl(TIOCGWINSZ) on /dev/null: EACCES", ll_dev_ioctl},
	{NULL, NULL, NULL, NULL},
};
