/*
 * probe_seccomp.c: stockade-probe's `sys` command and the system calls
 * the jail's filter allows only with some arguments (docs/seccomp.md,
 * launcher/zygote/seccomp.c), for the checks in verify/check/check_seccomp.c.
 *
 * `sys CALL...` runs the commands "call.CALL" of this file and of
 * probe_syscalls.c (the calls refused whole) in one process, each making
 * one system call and printing "CALL=<errno name>" ("ok" when it
 * succeeded), so that the check can tell the filter's answer (EPERM,
 * EAFNOSUPPORT, ENOSYS, or the end of the job) from the kernel's.
 *
 * Every call is made with raw syscall(2), never a libc wrapper that might
 * pick another call, and is given arguments that make it fail before it
 * acts, or act only on this short-lived process (the same calls serve
 * tests/lib/try_syscall.c, built from this file: probe.h, probe_seccomp_calls):
 * a child that exits at once, its own persona, a file of its own in the
 * working directory, removed after. So
 * a filter that lets one through (a planted defect) still harms nothing.
 * The mode calls are in probe_seccomp_modes.c (probe_seccomp.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"
#include "probe_seccomp.h"

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* The child of a raw clone exits at once; the parent reaps it. */
static void
reap(long pid)
{
	if (pid == 0)
		syscall(SYS_exit_group, 0);
	if (pid > 0)
		(void)waitpid((pid_t)pid, NULL, 0);
}

/* A descriptor a call returned is closed: only the answer matters. */
long
probe_closed(long fd)
{
	if (fd >= 0)
		close((int)fd);
	return fd < 0 ? fd : 0;
}

/* The sockets are made and closed unused. */
static long
try_socket(long family, long type, long proto)
{
	return probe_closed(syscall(SYS_socket, family, type, proto));
}

static long
try_socket_netlink(void)
{
	return try_socket(AF_NETLINK, SOCK_RAW, 0);
}

static long
try_socket_packet(void)
{
	/* Protocol 0: a packet socket that receives nothing. */
	return try_socket(AF_PACKET, SOCK_RAW, 0);
}

static long
try_socket_vsock(void)
{
	return try_socket(AF_VSOCK, SOCK_STREAM, 0);
}

static long
try_socket_inet(void)
{
	return try_socket(AF_INET, SOCK_STREAM, 0);
}

static long
try_socket_unix(void)
{
	return try_socket(AF_UNIX, SOCK_STREAM, 0);
}

/* Multipath TCP: a protocol number above 255, whose sockets Landlock's
 * TCP rules do not see (landlock(7), "Network flags"). */
static long
try_socket_mptcp(void)
{
	return try_socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP);
}

static long
try_socket_mptcp6(void)
{
	return try_socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP);
}

static long
try_clone_flags(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0UL);

	reap(pid);
	return pid < 0 ? pid : 0;
}

static long
try_clone_newuser(void)
{
	return try_clone_flags(CLONE_NEWUSER);
}

static long
try_clone_newns(void)
{
	return try_clone_flags(CLONE_NEWNS);
}

static long
try_clone_newnet(void)
{
	return try_clone_flags(CLONE_NEWNET);
}

static long
try_clone_newpid(void)
{
	return try_clone_flags(CLONE_NEWPID);
}

static long
try_clone_newipc(void)
{
	return try_clone_flags(CLONE_NEWIPC);
}

static long
try_clone_newuts(void)
{
	return try_clone_flags(CLONE_NEWUTS);
}

static long
try_clone_newcgroup(void)
{
	return try_clone_flags(CLONE_NEWCGROUP);
}

static long
try_fork(void)
{
	/* clone without a namespace flag: what fork(2) is. */
	return try_clone_flags(0);
}

static long
try_clone3(void)
{
	struct clone_args args;
	long pid;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &args, (unsigned long)sizeof(args));
	reap(pid);
	return pid < 0 ? pid : 0;
}

static void *
thread_main(void *arg)
{
	return arg;
}

/* pthread_create: glibc asks clone3 first and falls back to clone only
 * on ENOSYS. */
static long
try_pthread(void)
{
	pthread_t t;
	int e = pthread_create(&t, NULL, thread_main, NULL);

	if (e != 0) {
		errno = e;
		return -1;
	}
	pthread_join(t, NULL);
	return 0;
}

/* Its own persona only. */
static long
try_personality(unsigned long p)
{
	long r = syscall(SYS_personality, p);

	return r < 0 ? r : 0;
}

static long
try_personality_readimplies(void)
{
	return try_personality(READ_IMPLIES_EXEC);
}

static long
try_personality_norandom(void)
{
	return try_personality(ADDR_NO_RANDOMIZE);
}

static long
try_personality_default(void)
{
	return try_personality(PER_LINUX);
}

static long
try_personality_query(void)
{
	return try_personality(0xffffffffUL);
}

/* The call TRY as the command cmd_TRY: prints "ARGV[0]=<errno name>|ok". */
#define CALL_CMD(call)                                                        \
	static int cmd_##call(int argc, char **argv)                          \
	{                                                                     \
		long r;                                                       \
                                                                              \
		(void)argc;                                                   \
		errno = 0;                                                    \
		r = try_##call();                                             \
		probe_errno(argv[0], r < 0 ? (errno != 0 ? errno : EIO) : 0); \
		return 0;                                                     \
	}
#define MODE_CMDS(kind) CALL_CMD(kind##_setuid) CALL_CMD(kind##_setgid)

CALL_CMD(socket_netlink)
CALL_CMD(socket_packet)
CALL_CMD(socket_vsock)
CALL_CMD(socket_mptcp)
CALL_CMD(socket_mptcp6)
CALL_CMD(socket_inet)
CALL_CMD(socket_unix)
CALL_CMD(clone_newuser)
CALL_CMD(clone_newns)
CALL_CMD(clone_newnet)
CALL_CMD(clone_newpid)
CALL_CMD(clone_newipc)
CALL_CMD(clone_newuts)
CALL_CMD(clone_newcgroup)
CALL_CMD(fork)
CALL_CMD(clone3)
CALL_CMD(pthread)
CALL_CMD(personality_readimplies)
CALL_CMD(personality_norandom)
CALL_CMD(personality_default)
CALL_CMD(personality_query)
CALL_CMD(chmod_plain)
MODE_CMDS(chmod)
MODE_CMDS(fchmod)
MODE_CMDS(fchmodat)
MODE_CMDS(mkdir)
MODE_CMDS(mkdirat)
MODE_CMDS(mknod)
MODE_CMDS(mknodat)
MODE_CMDS(creat)
MODE_CMDS(open)
MODE_CMDS(openat)
MODE_CMDS(tmpfile)

/* The command "call.NAME" of this file or probe_syscalls.c, or NULL. */
static const struct probe_cmd *
call_cmd(const char *name)
{
	static const struct probe_cmd *const groups[] = {
	    probe_seccomp_cmds,
	    probe_syscalls_cmds,
	};

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (const struct probe_cmd *p = groups[g]; p->name != NULL;
		     p++)
			if (strncmp(p->name, "call.", 5) == 0 &&
			    strcmp(p->name + 5, name) == 0)
				return p;
	return NULL;
}

/* sys CALL...: each call's answer as "CALL=<errno name>" or "CALL=ok";
 * then, when a chmod call ran, "mode=<octal>" of the file it changed.
 * With no CALL, lists the calls. */
static int
cmd_sys(int argc, char **argv)
{
	struct stat st;
	int rc = 0;

	if (argc < 2) {
		const struct probe_cmd *const groups[] = {
		    probe_syscalls_cmds,
		    probe_seccomp_cmds,
		};

		for (size_t g = 0; g < 2; g++)
			for (const struct probe_cmd *p = groups[g];
			     p->name != NULL; p++)
				if (strncmp(p->name, "call.", 5) == 0)
					printf("%s\n", p->name + 5);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const struct probe_cmd *p = call_cmd(argv[i]);
		char *one[] = {argv[i], NULL};

		if (p == NULL) {
			fprintf(stderr, "stockade-probe sys: unknown call %s\n",
			    argv[i]);
			rc = 2;
			continue;
		}
		(void)p->fn(1, one);
	}
	if (stat(MODE_FILE, &st) == 0) {
		probe_kv("mode", "%04o", (unsigned)(st.st_mode & 07777));
		unlink(MODE_FILE);
	}
	return rc;
}

/*
 * refusal-flood [MS]: calls socket(AF_VSOCK) (refused by the jail's
 * filter) in a loop for MS milliseconds of wall-clock time (1500 by
 * default, 5000 at most), then prints "refused=N" (the calls answered
 * EAFNOSUPPORT) and "other=M" (any other answer). Bounded: one process,
 * no memory, MS of wall time (seccomp.refusal_rate_bounded).
 */
static int
cmd_refusal_flood(int argc, char **argv)
{
	long ms = 1500;
	unsigned long refused = 0, other = 0;
	long long end;

	if (argc > 1) {
		char *e;

		ms = strtol(argv[1], &e, 10);
		if (*e != '\0' || ms <= 0 || ms > 5000)
			ms = 1500;
	}
	end = probe_now_ms() + ms;
	while (probe_now_ms() < end) {
		int fd = socket(AF_VSOCK, SOCK_STREAM, 0);

		if (fd < 0 && errno == EAFNOSUPPORT)
			refused++;
		else
			other++;
		if (fd >= 0)
			close(fd);
	}
	probe_kv("refused", "%lu", refused);
	probe_kv("other", "%lu", other);
	return 0;
}

#define CALL(call)                                                           \
	{                                                                    \
		"call." #call, "one system call: " #call "=<errno name>|ok", \
		    cmd_##call                                               \
	}
#define MODE_CALLS(kind) CALL(kind##_setuid), CALL(kind##_setgid)

const struct probe_cmd probe_seccomp_cmds[] = {
    {"sys",
	"CALL...: CALL=<errno name>|ok for each (stockade-probe sys "
	"with no call lists them)",
	cmd_sys},
    {"refusal-flood", "[MS]: refused socket calls for MS ms, refused=N",
	cmd_refusal_flood},
    CALL(socket_netlink),
    CALL(socket_packet),
    CALL(socket_vsock),
    CALL(socket_mptcp),
    CALL(socket_mptcp6),
    CALL(socket_inet),
    CALL(socket_unix),
    CALL(clone_newuser),
    CALL(clone_newns),
    CALL(clone_newnet),
    CALL(clone_newpid),
    CALL(clone_newipc),
    CALL(clone_newuts),
    CALL(clone_newcgroup),
    CALL(fork),
    CALL(clone3),
    CALL(pthread),
    CALL(personality_readimplies),
    CALL(personality_norandom),
    CALL(personality_default),
    CALL(personality_query),
    CALL(chmod_plain),
    MODE_CALLS(chmod),
    MODE_CALLS(fchmod),
    MODE_CALLS(fchmodat),
    MODE_CALLS(mkdir),
    MODE_CALLS(mkdirat),
    MODE_CALLS(mknod),
    MODE_CALLS(mknodat),
    MODE_CALLS(creat),
    MODE_CALLS(open),
    MODE_CALLS(openat),
    MODE_CALLS(tmpfile),
    {NULL, NULL, NULL},
};

/* The calls without their commands (probe.h). */
#define TRY(call)                 \
	{                         \
#call, try_##call \
	}
#define MODE_TRY(kind) TRY(kind##_setuid), TRY(kind##_setgid)

const struct probe_call probe_seccomp_calls[] = {
    TRY(socket_netlink),
    TRY(socket_packet),
    TRY(socket_vsock),
    TRY(socket_mptcp),
    TRY(socket_mptcp6),
    TRY(socket_inet),
    TRY(socket_unix),
    TRY(clone_newuser),
    TRY(clone_newns),
    TRY(clone_newnet),
    TRY(clone_newpid),
    TRY(clone_newipc),
    TRY(clone_newuts),
    TRY(clone_newcgroup),
    TRY(fork),
    TRY(clone3),
    TRY(pthread),
    TRY(personality_readimplies),
    TRY(personality_norandom),
    TRY(personality_default),
    TRY(personality_query),
    TRY(chmod_plain),
    MODE_TRY(chmod),
    MODE_TRY(fchmod),
    MODE_TRY(fchmodat),
    MODE_TRY(mkdir),
    MODE_TRY(mkdirat),
    MODE_TRY(mknod),
    MODE_TRY(mknodat),
    MODE_TRY(creat),
    MODE_TRY(open),
    MODE_TRY(openat),
    MODE_TRY(tmpfile),
    {NULL, NULL},
};

const struct probe_call *
probe_call_find(const char *name)
{
	static const struct probe_call *const tables[] = {
	    probe_syscalls_calls,
	    probe_seccomp_calls,
	};

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct probe_call *c = tables[t]; c->name != NULL;
		     c++)
			if (strcmp(c->name, name) == 0)
				return c;
	return NULL;
}
