/*
 * payload.c: the last steps before the payload's program runs, in the
 * order of style.md rule 12 (everything earlier was done by jail init):
 * new session (no controlling terminal, so TIOCSTI-style injection into
 * the caller's terminal is impossible), stdin from the jail's /dev/null,
 * rlimits, default signal mask, every descriptor above 2 marked
 * close-on-exec, no_new_privs, seccomp, exec. Capabilities were already
 * dropped by init, bounding set included.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail.h"
#include "landlock_jail.h"

/* A set-up step failed: that is stockade's failure, not the program's. */
static _Noreturn void
die(int status_fd, int stage, int err)
{
	jail_send_record(status_fd, INIT_REC_SETUP_FAILED, stage, err);
	_exit(127);
}

static int
set_limit(int resource, rlim_t value)
{
	struct rlimit rl = {.rlim_cur = value, .rlim_max = value};

	return setrlimit(resource, &rl);
}

/* Raises RESOURCE as far as the caller's hard limit allows: without
 * CAP_SYS_RESOURCE a hard limit can only be lowered (setrlimit(2)). For
 * RLIMIT_AS, which stockade leaves unlimited on purpose; every limit the
 * result reports is set exactly or the job is refused. */
static int
raise_limit(int resource)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) < 0)
		return -1;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(resource, &rl);
}

/*
 * Sets SIG's disposition to SIG_DFL with the system call itself: glibc's
 * sigaction refuses the two real-time signals it keeps for its threads
 * (32 and 33), which a caller may still have left ignored. The kernel's
 * struct sigaction: handler, flags, restorer, mask (8 bytes on x86_64).
 */
static void
default_action(int sig)
{
	struct {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		uint64_t mask;
	} ksa = {SIG_DFL, 0, NULL, 0};

	(void)syscall(SYS_rt_sigaction, sig, &ksa, NULL, sizeof(ksa.mask));
}

_Noreturn void
jail_exec_payload(const struct job_spec *spec, scmp_filter_ctx filter,
		  int status_fd, int notify_sock)
{
	const struct job_limits *l = &spec->limits;
	struct rlimit cpu;
	extern char **environ;
	sigset_t none;
	int fd, e, abi;

	if (setsid() < 0)
		die(status_fd, STAGE_SETSID, errno);
	/* Init closed its stdio, so this open may itself return 0. */
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0)
		die(status_fd, STAGE_STDIO, errno);
	if (fd != 0) {
		if (dup2(fd, 0) < 0)
			die(status_fd, STAGE_STDIO, errno);
		close(fd);
	}

	/*
	 * Backstops of the enforcer (enforce.h), which holds the jail as a
	 * whole: RLIMIT_CPU a second past the CPU limit (SIGXCPU, SIGKILL a
	 * second later), RLIMIT_DATA twice the memory limit per process, and
	 * no RLIMIT_AS at all: Go and JVM runtimes reserve far more address
	 * space than they touch, and would fail under it. RLIMIT_NPROC is
	 * counted per user namespace (Linux 5.14, ucounts), so per jail, and
	 * covers init too. The others are set explicitly so nothing of the
	 * caller's limits leaks in: no real-time priority, no nice boost,
	 * little locked memory.
	 */
	cpu.rlim_cur = (rlim_t)((l->cpu_ms + 999) / 1000 + 1);
	cpu.rlim_max = cpu.rlim_cur + 1;
	if (setrlimit(RLIMIT_CPU, &cpu) < 0 || raise_limit(RLIMIT_AS) < 0 ||
	    set_limit(RLIMIT_DATA, l->memory_bytes > RLIM_INFINITY / 2 ?
					   RLIM_INFINITY :
					   2 * l->memory_bytes) < 0 ||
	    set_limit(RLIMIT_FSIZE, l->fsize_bytes) < 0 ||
	    set_limit(RLIMIT_NOFILE, l->nofile) < 0 ||
	    set_limit(RLIMIT_NPROC, l->nproc) < 0 ||
	    set_limit(RLIMIT_CORE, 0) < 0 ||
	    set_limit(RLIMIT_RTPRIO, 0) < 0 ||
	    set_limit(RLIMIT_RTTIME, 0) < 0 ||
	    set_limit(RLIMIT_NICE, 0) < 0 ||
	    set_limit(RLIMIT_MEMLOCK, 64 * 1024) < 0 ||
	    set_limit(RLIMIT_MSGQUEUE, 64 * 1024) < 0)
		die(status_fd, STAGE_RLIMITS, errno);

	/* Every disposition back to its default: an ignored signal stays
	 * ignored across fork and execve (signal(7)), and the launcher
	 * ignores SIGPIPE, which would turn `yes | head -1` into an EPIPE
	 * error instead of a quiet SIGPIPE death. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			default_action(sig);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		die(status_fd, STAGE_SIGNALS, errno);

	/* Close-on-exec rather than closed, so the status pipe still works
	 * for the steps below; nothing above 2 crosses the exec. */
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		die(status_fd, STAGE_CLOSE_FDS, errno);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die(status_fd, STAGE_NO_NEW_PRIVS, errno);
	/* Fail closed: no Landlock, no job (landlock_jail.h). */
	if ((e = jail_landlock_apply(spec, &abi)) < 0)
		die(status_fd, STAGE_LANDLOCK, -e);
	jail_send_record(status_fd, INIT_REC_LANDLOCK, abi, 0);
	if (filter != NULL && (e = seccomp_load(filter)) < 0)
		die(status_fd, STAGE_SECCOMP, -e);
	/* The listener goes to the launcher, which answers every refused
	 * call from now on (seccomp_unotify(2)); ours closes at exec. */
	if (filter != NULL &&
	    ((e = seccomp_notify_fd(filter)) < 0 ||
	     proto_send(notify_sock, (const uint8_t *)"L", 1, e) < 0))
		die(status_fd, STAGE_SECCOMP, e < 0 ? -e : EPIPE);

	environ = spec->envp;
	execvp(spec->argv[0], spec->argv);
	e = errno;
	dprintf(2, "stockade: cannot execute \"%s\": %s\n", spec->argv[0],
		strerror(e));
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}
