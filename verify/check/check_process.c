/*
 * check_process.c: the checks of the layers that shape the job's process
 * (check.h, check_jail.h): limits (check_limits.c), process cleanup,
 * environment, working directory and terminal (check_terminal.c). Each
 * runs stockade-probe (probe_process.c) in a real job and compares what
 * it saw with what a sound jail shows (docs/layers.md says what each
 * layer does).
 *
 * The process cleanup checks also switch the pid namespace off on
 * purpose (`stockade run --unsafe-evaluation`, the way `stockade eval`
 * does) to see that jail init's own cleanup holds by itself
 * (docs/layers.md): the namespace's end would otherwise kill everything
 * anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "check_jail.h"

/* The leftover jobs: a 0.3 s timeout, a leftover that lives 2 s at most
 * in a defective jail (whose payload may then hold its output open). */
#define LEFTOVER_DEADLINE_MS 5000
#define LEFTOVER_TIMEOUT "0.3"
/* How long a leftover must stay silent once the job has ended: it beats
 * every 10 ms while it lives (probe_process.c). */
#define LEFTOVER_QUIET_MS 120
#define LEFTOVER_FILE "stockade-probe-beat"
/* The leftover's command line (the probe's, forked without exec). */
#define LEFTOVER_MARK "stockade-probe leftover"

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
 * ends: by exiting, or, with TIMEOUT, by its wall-clock limit. The
 * heartbeat committed with the job shows the leftover ran; then no
 * process with its command line may run for LEFTOVER_QUIET_MS. WITHOUT_PIDNS switches the pid
 * namespace off (an unsafe evaluation) to see layer process_group hold
 * alone (docs/layers.md, 2).
 */
static void
leftover(struct check_ctx *c, struct check_result *r, bool timeout,
    bool without_pidns)
{
	const char *run_args[6];
	char ws[4096], path[4200], a[64], started[16];
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
	if (!jail_probe_ok(c, r, &j, &s,
		timeout ? ARGS("leftover", "wait") : ARGS("leftover")) ||
	    !jail_val(r, &j, "leftover.started", started, sizeof(started)))
		goto out;
	snprintf(path, sizeof(path), "%s/%s", ws, LEFTOVER_FILE);
	read_beat(path, a, sizeof(a));
	if (strcmp(started, "1") != 0 || a[0] == '\0') {
		check_fail(r,
		    "the leftover never started (leftover.started=%s, "
		    "no heartbeat in the workspace)",
		    started);
		goto out;
	}
	/* The heartbeat committed with the job shows that it beat; its
	 * beats after the job are staged, never seen here (issue 26), so a
	 * leftover that lives on is found by its command line. */
	for (int waited = 0; waited < LEFTOVER_QUIET_MS; waited += 10) {
		const struct timespec ten = {0, 10 * 1000000L};

		nanosleep(&ten, NULL);
		if (check_marked_process(LEFTOVER_MARK)) {
			check_fail(r,
			    "the job's leftover (setsid, double fork) "
			    "still ran %d ms after the job ended "
			    "(status %s; it had beaten %d times)",
			    waited + 10, j.status, atoi(a));
			goto out;
		}
	}
	check_pass(r,
	    "the job's leftover (setsid, double fork) beat %d "
	    "times, then not once in the %d ms after the job ended "
	    "(status %s)",
	    atoi(a), LEFTOVER_QUIET_MS, j.status);
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

/*
 * The subreaper child of nothing_left_to_reaper: becomes a child
 * subreaper (prctl(2) PR_SET_CHILD_SUBREAPER: orphans of its descendants
 * are reparented to it), runs ARGV with ENVP and stdio on /dev/null,
 * waits for it, then for up to 2 s reaps whatever else comes to it.
 * Exits with the count of processes it reaped beside ARGV's (at most
 * 60), plus 100 when one was still alive at the end; 90 and up for a
 * failure of its own (91: exec, 94: the run did not exit 0). Only
 * async-signal-safe calls: the check runs in a threaded process.
 */
static _Noreturn void
reaper_child(char *const *argv, char *const *envp)
{
	struct timespec tick = {0, 20 * 1000 * 1000};
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC), st, n = 0;
	pid_t run, p;

	if (nul < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		_exit(90);
	if ((run = fork()) < 0)
		_exit(92);
	if (run == 0) {
		if (dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
			_exit(91);
		execve(argv[0], argv, envp);
		_exit(91);
	}
	while ((p = waitpid(run, &st, 0)) < 0 && errno == EINTR)
		;
	if (p != run)
		_exit(93);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		_exit(94);
	for (int i = 0; i < 100; i++) {
		p = waitpid(-1, &st, WNOHANG | __WALL);
		if (p > 0) {
			n += n < 60;
			continue;
		}
		if (p < 0 && errno == ECHILD)
			_exit(n);
		nanosleep(&tick, NULL);
	}
	_exit(n + 100);
}

/* process_cleanup.nothing_left_to_callers_reaper: a caller that is a
 * child subreaper (a container's pid 1, a supervisor) gets no process of
 * stockade's to reap after `stockade run` has returned: the launcher
 * reaped its zygote and every jail's init before it exited (issue 23,
 * point 5). */
static void
nothing_left_to_reaper(struct check_ctx *c, struct check_result *r)
{
	char ws[4096];
	pid_t sub, p;
	int st, e, code;
	int64_t t0;

	if ((e = check_workspace(c, ws, sizeof(ws))) < 0) {
		check_fail(r, "cannot make a workspace: %s", strerror(-e));
		return;
	}
	char *argv[] = {check_unconst(c->stockade), check_unconst("run"),
	    check_unconst("--workspace"), ws, check_unconst("--"),
	    check_unconst("true"), NULL};
	if ((sub = fork()) < 0) {
		check_fail(r, "fork: %s", strerror(errno));
		return;
	}
	if (sub == 0)
		reaper_child(argv, c->envp);
	t0 = check_now_ms();
	while ((p = waitpid(sub, &st, WNOHANG)) == 0 &&
	    check_now_ms() - t0 < 60000)
		usleep(10000);
	if (p == 0) {
		kill(sub, SIGKILL);
		(void)waitpid(sub, &st, 0);
		check_fail(r, "stockade run did not end within 60 s");
		return;
	}
	code = p == sub && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (code == 0)
		check_pass(r,
		    "after stockade run returned, its caller (a child "
		    "subreaper) had nothing of stockade's to reap");
	else if (code >= 100)
		check_fail(r,
		    "after stockade run returned, a process of it was "
		    "still alive 2 s later, left to its caller (and %d "
		    "reaped)",
		    code - 100);
	else if (code > 0 && code <= 60)
		check_fail(r,
		    "after stockade run returned, its caller (a child "
		    "subreaper) had %d process(es) of stockade's to reap: "
		    "zombies of whoever reaps orphans",
		    code);
	else
		check_fail(r,
		    "the check's subreaper failed (exit %d: 91 exec, "
		    "94 stockade run did not exit 0)",
		    code);
}

/* ---- environment ----------------------------------------------------- */

/* environment.exactly_the_policys: a policy whose [environment] is PATH
 * and STOCKADE_CHECK_SET alone ([policy] replace = environment) gives the
 * job exactly those two, with the policy's values, while the caller has
 * STOCKADE_CHECK_SET and STOCKADE_CHECK_CANARY set otherwise
 * (docs/layers.md, scrubbed_env). */
static void
env_exact(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {
	    .policy = "[policy]\nreplace = environment\n"
		      "[environment]\nPATH = /usr/bin:/bin\n"
		      "STOCKADE_CHECK_SET = from-the-policy\n",
	    .extra_env = ARGS("STOCKADE_CHECK_SET=from-the-caller",
		"STOCKADE_CHECK_CANARY=from-the-caller"),
	};
	struct check_job j;
	char count[32], names[1024], path[256], set[256];

	if (!jail_probe_ok(c, r, &j, &s, ARGS("env")) ||
	    !jail_val(r, &j, "env.count", count, sizeof(count)) ||
	    !jail_val(r, &j, "env.names", names, sizeof(names)))
		goto out;
	check_value(&j, "env.PATH", path, sizeof(path));
	check_value(&j, "env.STOCKADE_CHECK_SET", set, sizeof(set));
	if (strcmp(count, "2") != 0 || strcmp(path, "/usr/bin:/bin") != 0 ||
	    strcmp(set, "from-the-policy") != 0)
		check_fail(r,
		    "the job's environment is %s variables (%s), "
		    "PATH=\"%s\", STOCKADE_CHECK_SET=\"%s\"",
		    count, names, path, set);
	else
		check_pass(r,
		    "the job's environment is exactly the policy's "
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
	if ((e = jail_default_section(c, "environment", policy,
		 sizeof(policy))) < 0) {
		check_fail(r, "stockade policy default: %s", strerror(-e));
		return;
	}
	if (!jail_probe_ok(c, r, &j, &s, ARGS("env")) ||
	    !jail_val(r, &j, "env.names", names, sizeof(names)))
		goto out;
	if (check_value(&j, "env.STOCKADE_CHECK_CANARY", v, sizeof(v))) {
		check_fail(r,
		    "the caller's STOCKADE_CHECK_CANARY=%s reached "
		    "the job",
		    v);
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
			check_fail(r,
			    "the job has %s, which the default "
			    "policy's [environment] does not set",
			    name);
			goto out;
		}
	}
	check_pass(r,
	    "no caller variable (STOCKADE_CHECK_CANARY, TMPDIR, "
	    "...) in the job; every one it has is the policy's");
out:
	check_job_free(&j);
}

/* ---- working directory ----------------------------------------------- */

/* working_directory.cwd_is_work: the job starts in /work, the workspace
 * (the probe runs by its absolute path, JAIL_PROBE, so a job left elsewhere
 * still reports). */
static void
cwd_is_work(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char cwd[4096], same[16];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("cwd")) &&
	    jail_val(r, &j, "cwd", cwd, sizeof(cwd)) &&
	    jail_val(r, &j, "cwd.is_work", same, sizeof(same))) {
		if (strcmp(cwd, "/work") == 0 && strcmp(same, "1") == 0)
			check_pass(r, "the job's working directory is /work");
		else
			check_fail(r,
			    "the job's working directory is %s "
			    "(the same as /work: %s)",
			    cwd, same);
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
	if ((e = jail_default_home(c, want, sizeof(want))) < 0) {
		check_fail(r, "stockade policy default: %s", strerror(-e));
		return;
	}
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("cwd")) ||
	    !jail_val(r, &j, "home", home, sizeof(home)) ||
	    !jail_val(r, &j, "homedir.fs", hfs, sizeof(hfs)) ||
	    !jail_val(r, &j, "tmp.fs", tfs, sizeof(tfs)) ||
	    !jail_val(r, &j, "tmp.entries", entries, sizeof(entries)))
		goto out;
	if (strcmp(home, want) != 0 || strcmp(hfs, TMPFS_MAGIC_HEX) != 0 ||
	    strcmp(tfs, TMPFS_MAGIC_HEX) != 0 || strcmp(entries, "0") != 0)
		check_fail(r,
		    "HOME=%s on file system %s, /tmp on %s with %s "
		    "entries (want %s, both tmpfs %s, /tmp empty)",
		    home, hfs, tfs, entries, want, TMPFS_MAGIC_HEX);
	else
		check_pass(r,
		    "HOME=%s and /tmp are tmpfs of their own, /tmp "
		    "empty",
		    home);
out:
	check_job_free(&j);
}

const struct check checks_process[] = {
    {"limits.rlimit_fsize_is_file_size", "limits",
	"--file-size 3: RLIMIT_FSIZE 3 MiB soft and hard", lim_rlimit_fsize},
    {"limits.rlimit_nofile_is_open_files", "limits",
	"open_files = 100: RLIMIT_NOFILE 100 soft and hard", lim_rlimit_nofile},
    {"limits.rlimit_nproc_is_processes", "limits",
	"--processes 17: RLIMIT_NPROC 17 soft and hard", lim_rlimit_nproc},
    {"limits.rlimit_core_zero", "limits", "RLIMIT_CORE 0 soft and hard",
	lim_rlimit_core},
    {"limits.rlimit_data_twice_memory", "limits",
	"--memory 100: RLIMIT_DATA 200 MiB", lim_rlimit_data},
    {"limits.rlimit_cpu_past_cpu_time", "limits",
	"--cpu-time 7: RLIMIT_CPU 8 s soft, 9 s hard", lim_rlimit_cpu},
    {"limits.no_realtime_nice_or_locked_memory", "limits",
	"RLIMIT_RTPRIO, RTTIME, NICE 0; MEMLOCK, MSGQUEUE 64 KiB",
	lim_rlimit_misc},
    {"limits.user_quotas_bounded", "limits",
	"the host user's kernel quotas: RLIMIT_SIGPENDING 256, the jail's "
	"inotify, fanotify and namespace maxima",
	lim_user_quotas},
    {"limits.unseen_memory_refused_under_monitor", "limits",
	"monitor: semget, F_SETPIPE_SZ, SO_SNDBUF, SO_RCVBUF, vmsplice refused",
	lim_unseen_memory},
    {"limits.ofd_locks_refused_under_monitor", "limits",
	"monitor: F_OFD_SETLK, F_OFD_SETLKW refused; F_SETLK works",
	lim_ofd_locks},
    {"limits.tmpfs_sizes_capped", "limits",
	"--tmp-size 5: /tmp and /dev/shm 5 MiB, home home_mb", lim_tmpfs_sizes},
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
	"alone",
	leftover_timeout_nopidns},
    {"process_cleanup.nothing_left_to_callers_reaper", "process_cleanup",
	"a child subreaper calling stockade run gets nothing to reap",
	nothing_left_to_reaper},
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
    {"terminal.own_session", "terminal",
	"the program leads its own session and process group",
	term_own_session},
    {"terminal.no_controlling_terminal", "terminal",
	"tty_nr 0; TIOCGPGRP on stdin: ENOTTY", term_no_ctty},
    {"terminal.stdin_null_stdout_pipes", "terminal",
	"stdin /dev/null, stdout and stderr pipes", term_stdio_kinds},
    {"terminal.split_controls_escaped", "terminal",
	"CSI and OSC split across two writes reach a terminal escaped",
	term_split_controls_escaped},
    {"terminal.only_stdio_descriptors", "terminal", "open descriptors: 0, 1, 2",
	term_only_stdio},
    {NULL, NULL, NULL, NULL},
};
