/*
 * payload.c: the last steps before the payload's program runs, in the
 * order of style.md rule 12 (everything earlier was done by jail init):
 * new session (no controlling terminal, so TIOCSTI-style injection into
 * the caller's terminal is impossible), stdin from the jail's /dev/null,
 * rlimits, default signal mask, every descriptor above 2 closed,
 * no_new_privs, seccomp, exec. Capabilities were already dropped by init,
 * bounding set included.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail.h"

static void
die(const char *what, int err)
{
	dprintf(2, "stockade: payload set-up failed: %s: %s\n", what,
		strerror(err));
	_exit(127);
}

static void
set_limit(int resource, rlim_t soft, rlim_t hard, const char *name)
{
	struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};

	if (setrlimit(resource, &rl) < 0)
		die(name, errno);
}

_Noreturn void
jail_exec_payload(const struct job_spec *spec, scmp_filter_ctx filter)
{
	const struct job_limits *l = &spec->limits;
	extern char **environ;
	sigset_t none;
	rlim_t cpu_s;
	int fd, e;

	if (setsid() < 0)
		die("setsid", errno);
	/* Init closed its stdio, so this open may itself return 0. */
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0)
		die("stdin", errno);
	if (fd != 0) {
		if (dup2(fd, 0) < 0)
			die("stdin", errno);
		close(fd);
	}

	/* CPU: SIGXCPU at the limit, SIGKILL one second later. */
	cpu_s = (rlim_t)((l->cpu_ms + 999) / 1000);
	set_limit(RLIMIT_CPU, cpu_s, cpu_s + 1, "RLIMIT_CPU");
	set_limit(RLIMIT_AS, l->memory_bytes, l->memory_bytes, "RLIMIT_AS");
	set_limit(RLIMIT_FSIZE, l->fsize_bytes, l->fsize_bytes, "RLIMIT_FSIZE");
	set_limit(RLIMIT_NOFILE, l->nofile, l->nofile, "RLIMIT_NOFILE");
	set_limit(RLIMIT_NPROC, l->nproc, l->nproc, "RLIMIT_NPROC");
	set_limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");

	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		die("sigprocmask", errno);

	if (syscall(SYS_close_range, 3, ~0U, 0) < 0)
		die("close_range", errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("no_new_privs", errno);
	if (filter != NULL && (e = seccomp_load(filter)) < 0)
		die("seccomp", -e);

	environ = spec->envp;
	execvp(spec->argv[0], spec->argv);
	e = errno;
	dprintf(2, "stockade: cannot execute \"%s\": %s\n", spec->argv[0],
		strerror(e));
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}
