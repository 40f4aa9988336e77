/*
 * payload.c: the last steps before the payload's program runs, in the
 * order of style.md rule 12 (everything earlier was done by jail init):
 * new session (no controlling terminal, so TIOCSTI-style injection into
 * the caller's terminal is impossible), stdin from the jail's /dev/null,
 * rlimits, default signal mask, every descriptor above 2 marked
 * close-on-exec, no_new_privs, seccomp, exec. Capabilities were already
 * dropped by init, bounding set included. The steps are the table
 * payload_steps; layers switched off leave their step out, and that
 * table's layer column is where (docs/layers.md). A warm pool's payload
 * (jail_wait_payload) runs the same steps before its job exists, then
 * waits for the job's argv, environment and stdin (handover.h) and execs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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
#include "proto.h"
#include "handover.h"
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

/*
 * Sets the rlimits of the jail (below, in jail_exec_payload). Returns 0
 * or -1 with errno set.
 */
static int
set_rlimits(const struct job_limits *l)
{
	struct rlimit cpu;
	rlim_t data;

	/*
	 * Backstops of the enforcer (enforce.h), which holds the jail as a
	 * whole: RLIMIT_CPU a second past the CPU limit (SIGXCPU, SIGKILL a
	 * second later), RLIMIT_DATA twice the memory limit per process, and
	 * no RLIMIT_AS at all: Go and JVM runtimes reserve far more address
	 * space than they touch, and would fail under it. RLIMIT_NPROC is
	 * counted per user namespace (Linux 5.14, ucounts), so per jail, and
	 * covers init too. The others are set explicitly so nothing of the
	 * caller's limits leaks in: no real-time priority, no nice boost,
	 * little locked memory, 64 KiB of POSIX message queues (charged to
	 * the host user's RLIMIT_MSGQUEUE too, mq_overview(7)), a few
	 * hundred pending signals.
	 */
	cpu.rlim_cur = (rlim_t)((l->cpu_ms + 999) / 1000 + 1);
	cpu.rlim_max = cpu.rlim_cur + 1;
	if (l->memory_bytes > RLIM_INFINITY / 2)
		data = RLIM_INFINITY;
	else
		data = 2 * l->memory_bytes;
	if (set_limit(RLIMIT_FSIZE, l->fsize_bytes) < 0)
		return -1;
	if (set_limit(RLIMIT_NPROC, l->nproc) < 0)
		return -1;
	if (set_limit(RLIMIT_CORE, 0) < 0)
		return -1;
	if (setrlimit(RLIMIT_CPU, &cpu) < 0 || raise_limit(RLIMIT_AS) < 0 ||
	    set_limit(RLIMIT_DATA, data) < 0 ||
	    set_limit(RLIMIT_RTPRIO, 0) < 0 ||
	    set_limit(RLIMIT_RTTIME, 0) < 0 || set_limit(RLIMIT_NICE, 0) < 0 ||
	    set_limit(RLIMIT_MEMLOCK, 64 * 1024) < 0 ||
	    set_limit(RLIMIT_MSGQUEUE, 64 * 1024) < 0)
		return -1;
	/* The host user's pending-signal quota is charged for every signal
	 * queued in the jail and every POSIX timer (ucounts, hierarchical):
	 * without this bound one job takes all of it and the user's other
	 * programs get EAGAIN from timer_create and sigqueue (jail.h). */
	if (set_limit(RLIMIT_SIGPENDING, JAIL_SIGPENDING) < 0)
		return -1;
	return 0;
}

/*
 * Standard input: STDIN_FD when the broker passed one (the read end of
 * the job's stdin pipe, or the caller's terminal with layer no_terminal
 * off: the launcher and the zygote checked which may come), else the
 * jail's /dev/null. Returns 0 or -1 with errno set.
 */
static int
set_stdin(int stdin_fd)
{
	/* Init closed its stdio, so this open may itself return 0. */
	int fd = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);

	if (fd < 0)
		return -1;
	if (fd != 0) {
		if (dup2(fd, 0) < 0)
			return -1;
		close(fd);
	}
	return 0;
}

/*
 * Layer private_cwd without a mount namespace (docs/layers.md): HOME is
 * the workspace (the current directory) and TMPDIR a fresh directory in
 * it, ".stockade-tmp-XXXXXX" (mkdtemp(3), mode 0700), which stays after
 * the job. Returns a new environment (SPEC's with the two replaced or
 * added; leaked, the process execs), or NULL with errno set.
 */
static char **
private_dirs_env(const struct job_spec *spec)
{
	char cwd[4096], tmp[4096 + 32], **env;
	size_t n = 0;

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	snprintf(tmp, sizeof(tmp), "%s/.stockade-tmp-XXXXXX", cwd);
	if (mkdtemp(tmp) == NULL)
		return NULL;
	env = calloc((size_t)spec->envc + 3, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (uint32_t i = 0; i < spec->envc; i++)
		if (strncmp(spec->envp[i], "HOME=", 5) != 0 &&
		    strncmp(spec->envp[i], "TMPDIR=", 7) != 0)
			env[n++] = spec->envp[i];
	if (asprintf(&env[n++], "HOME=%s", cwd) < 0 ||
	    asprintf(&env[n++], "TMPDIR=%s", tmp) < 0)
		return NULL;
	return env;
}

/* Says on stderr that PROG could not be executed (errno E), as
 * "stockade: cannot execute "PROG": STRERROR", with write(2) alone. */
static void
exec_failed(const char *prog, int e)
{
	const char *parts[] = {"stockade: cannot execute \"", prog,
	    "\": ", strerror(e), "\n"};

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (write(2, parts[i], strlen(parts[i])) < 0)
			return;
}

/* What the payload's steps share, from jail_exec_payload's arguments
 * to the environment the program gets. */
struct payload {
	const struct job_spec *spec;
	const struct sock_fprog *filter; /* NULL: layer seccomp off */
	int landlock_rs; /* init's ruleset (-1: layer landlock off) */
	int landlock_abi; /* its ABI, reported once applied */
	int abi; /* the ABI the result reports: 0 until applied */
	int status_fd;
	int notify_sock;
	int stdin_fd;
	bool waiting; /* a warm jail's payload: the listener kept, sent and
		       * RLIMIT_NOFILE set once the job has come */
	int listener; /* the filter's listener until it is sent, or -1 */
	char **env; /* SPEC's, or private_dirs_env's */
};

/*
 * One step of the payload's set-up: ON runs when LAYER is on (or when
 * LAYER is 0, a step of every jail), OFF, when not NULL, in its place
 * when an evaluation turned LAYER off (docs/layers.md). A step that
 * fails reports its stage on the status pipe and ends the payload (die).
 */
struct payload_step {
	enum job_layer layer;
	void (*on)(struct payload *);
	void (*off)(struct payload *);
	const char *what;
};

/* New session: no controlling terminal, so no TIOCSTI-style injection
 * into the caller's terminal (layer no_terminal). */
static void
new_session(struct payload *p)
{
	if (setsid() < 0)
		die(p->status_fd, STAGE_SETSID, errno);
}

/* Standard input: the job's stdin or the jail's /dev/null (set_stdin). */
static void
stdin_step(struct payload *p)
{
	if (set_stdin(p->stdin_fd) < 0)
		die(p->status_fd, STAGE_STDIO, errno);
}

/*
 * Without a mount namespace: HOME and TMPDIR in the workspace when layer
 * private_cwd is on (private_dirs_env). Before the rlimits: nothing
 * allocates once RLIMIT_DATA is set (an ASan build's allocator, whose
 * shadow already exceeds it, could not map memory then).
 */
static void
private_dirs_in_workspace(struct payload *p)
{
	if (!job_spec_layer_off(p->spec, JOB_LAYER_PRIVATE_CWD) &&
	    (p->env = private_dirs_env(p->spec)) == NULL)
		die(p->status_fd, STAGE_PRIVATE_DIRS, errno);
}

/* The job's rlimits (set_rlimits); layer limits off leaves the
 * caller's, whatever they are. */
static void
rlimits_step(struct payload *p)
{
	if (set_rlimits(&p->spec->limits) < 0)
		die(p->status_fd, STAGE_RLIMITS, errno);
}

/*
 * Every disposition back to its default: an ignored signal stays ignored
 * across fork and execve (signal(7)), and the launcher ignores SIGPIPE,
 * which would turn `yes | head -1` into an EPIPE error instead of a
 * quiet SIGPIPE death. Then no signal blocked.
 */
static void
default_signals(struct payload *p)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			default_action(sig);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		die(p->status_fd, STAGE_SIGNALS, errno);
}

/* Every descriptor above 2 close-on-exec rather than closed, so the
 * status pipe still works for the steps below; nothing above 2 crosses
 * the exec. */
static void
cloexec_above_stdio(struct payload *p)
{
	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		die(p->status_fd, STAGE_CLOSE_FDS, errno);
}

/* no_new_privs (layer caps_nnp). */
static void
no_new_privs(struct payload *p)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die(p->status_fd, STAGE_NO_NEW_PRIVS, errno);
}

/* The Landlock domain of init's ruleset (layer landlock). Fail closed:
 * no Landlock, no job (landlock_jail.h). Init built the ruleset; the
 * domain is the payload's alone. */
static void
landlock_step(struct payload *p)
{
	int e;

	if ((e = jail_landlock_restrict(p->landlock_rs)) < 0)
		die(p->status_fd, STAGE_LANDLOCK, -e);
	p->abi = p->landlock_abi;
}

/* The Landlock ABI the payload runs under (0: none) on the status pipe. */
static void
report_landlock(struct payload *p)
{
	jail_send_record(p->status_fd, INIT_REC_LANDLOCK, p->abi, 0);
}

/*
 * What libseccomp's seccomp_load did (SCMP_FLTATR_CTL_NNP), kept for a
 * filter loaded directly: no_new_privs first unless layer caps_nnp is off
 * (the payload then has CAP_SYS_ADMIN in its user namespace instead;
 * seccomp(2)). Nothing without a filter.
 */
static void
no_new_privs_for_seccomp(struct payload *p)
{
	if (p->filter != NULL)
		no_new_privs(p);
}

/*
 * The seccomp filter (layer seccomp: no filter, nothing), its listener
 * sent to the launcher (WIRE_SECCOMP_LISTENER on the notify socket),
 * which answers every refused call from now on (seccomp_unotify(2));
 * ours closes at exec.
 */
/* The filter's listener sent to the launcher (WIRE_SECCOMP_LISTENER on the
 * notify socket), which answers every refused call from then on
 * (seccomp_unotify(2)); ours closes at exec. */
static void
send_listener(struct payload *p)
{
	uint8_t msg[WIRE_HEADER_SIZE];

	if (p->listener < 0)
		return;
	if (wire_send(p->notify_sock, msg, sizeof(msg), WIRE_SECCOMP_LISTENER,
		WIRE_ROLE_BIT(0), &p->listener) < 0)
		die(p->status_fd, STAGE_SECCOMP, EPIPE);
}

static void
seccomp_step(struct payload *p)
{
	int listener;

	if (p->filter == NULL)
		return;
	if ((listener = jail_seccomp_load(p->filter)) < 0)
		die(p->status_fd, STAGE_SECCOMP, -listener);
	p->listener = listener;
	if (!p->waiting)
		send_listener(p);
}

/*
 * RLIMIT_NOFILE, last (layer limits): the listener's sendmsg is refused
 * (ETOOMANYREFS, unix(7)) when the user's descriptors in flight in unix
 * sockets exceed the sender's RLIMIT_NOFILE, and every jail of every
 * session of the host user counts there. A warm jail's payload sets it
 * once its job has come and its listener is sent.
 */
static void
nofile_step(struct payload *p)
{
	if (!p->waiting && set_limit(RLIMIT_NOFILE, p->spec->limits.nofile) < 0)
		die(p->status_fd, STAGE_RLIMITS, errno);
}

/*
 * The payload's set-up, in order (style.md rule 12). Capabilities were
 * dropped by init, bounding set included. The layer column is the only
 * place an evaluation's switch (docs/layers.md) reaches these steps.
 */
static const struct payload_step payload_steps[] = {
    {JOB_LAYER_NO_TERMINAL, new_session, NULL, "new session"},
    {0, stdin_step, NULL, "standard input"},
    {JOB_LAYER_MOUNT_NS, NULL, private_dirs_in_workspace,
	"HOME and TMPDIR in the workspace"},
    {JOB_LAYER_LIMITS, rlimits_step, NULL, "rlimits"},
    {0, default_signals, NULL, "default signals, none blocked"},
    {0, cloexec_above_stdio, NULL, "descriptors above 2 close-on-exec"},
    {JOB_LAYER_CAPS_NNP, no_new_privs, NULL, "no_new_privs"},
    {JOB_LAYER_LANDLOCK, landlock_step, NULL, "Landlock domain"},
    {0, report_landlock, NULL, "Landlock ABI reported"},
    {JOB_LAYER_CAPS_NNP, no_new_privs_for_seccomp, NULL,
	"no_new_privs before seccomp"},
    {0, seccomp_step, NULL, "seccomp filter"},
    {JOB_LAYER_LIMITS, nofile_step, NULL, "RLIMIT_NOFILE"},
};

/* Runs P's set-up steps (payload_steps) in order: a step of a layer
 * switched off runs its OFF column, or nothing. */
static void
payload_prepare(struct payload *p)
{
	for (size_t i = 0; i < sizeof(payload_steps) / sizeof(payload_steps[0]);
	     i++) {
		const struct payload_step *s = &payload_steps[i];
		void (*run)(struct payload *) = s->on;

		if (s->layer != 0 && job_spec_layer_off(p->spec, s->layer))
			run = s->off;
		if (run != NULL)
			run(p);
	}
}

/* Executes ARGV with the environment ENV (execvp: a name without a
 * slash is looked up in ENV's PATH); on failure says why on stderr and
 * exits 127 (not found) or 126. */
static _Noreturn void
payload_exec(char **argv, char **env)
{
	extern char **environ;
	int e;

	environ = env;
	execvp(argv[0], argv);
	e = errno;
	/* Written in pieces, never formatted: nothing may allocate past
	 * RLIMIT_DATA (above), and a sanitized build's printf does. */
	exec_failed(argv[0], e);
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

_Noreturn void
jail_exec_payload(const struct job_spec *spec, const struct sock_fprog *filter,
    int landlock_rs, int landlock_abi, int status_fd, int notify_sock,
    int stdin_fd)
{
	struct payload p = {
	    .spec = spec,
	    .filter = filter,
	    .landlock_rs = landlock_rs,
	    .landlock_abi = landlock_abi,
	    .status_fd = status_fd,
	    .notify_sock = notify_sock,
	    .stdin_fd = stdin_fd,
	    .listener = -1,
	    .env = spec->envp,
	};

	payload_prepare(&p);
	payload_exec(spec->argv, p.env);
}

_Noreturn void
jail_wait_payload(const struct job_spec *template,
    const struct sock_fprog *filter, int landlock_rs, int landlock_abi,
    int status_fd, int notify_sock, int hand_fd)
{
	struct payload p = {
	    .spec = template,
	    .filter = filter,
	    .landlock_rs = landlock_rs,
	    .landlock_abi = landlock_abi,
	    .status_fd = status_fd,
	    .notify_sock = notify_sock,
	    .stdin_fd = -1,
	    .waiting = true,
	    .listener = -1,
	    .env = template->envp,
	};
	struct handover_buf hb;
	char **argv, **envp;
	int in, n;

	/* Not init's name: `ps` (and tests) tell a waiting payload. */
	prctl(PR_SET_NAME, "stockade-wait");
	/* Before the rlimits: nothing allocates after them. */
	if (handover_buf_init(&hb) < 0)
		die(status_fd, STAGE_POOL_JOB, ENOMEM);
	payload_prepare(&p);
	/* Everything but the program: blocked until the job comes. */
	n = handover_recv(hand_fd, &hb, &argv, &envp, &in);
	if (n == 0)
		_exit(0);
	if (n < 0)
		die(status_fd, STAGE_POOL_JOB, -n);
	if (in >= 0 && (dup2(in, 0) < 0 || close(in) < 0))
		die(status_fd, STAGE_STDIO, errno);
	/* Now, not while waiting: a listener in flight for every waiting
	 * jail would count against the user's descriptors in flight. */
	send_listener(&p);
	p.waiting = false;
	if (!job_spec_layer_off(template, JOB_LAYER_LIMITS))
		nofile_step(&p);
	payload_exec(argv, envp);
}
