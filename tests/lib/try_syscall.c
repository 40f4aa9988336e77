/*
 * try_syscall.c: `try-syscall NAME` makes the one system call NAME names
 * and prints what it answered, one line:
 *
 *	NAME ret=R errno=E(ENAME)
 *
 * R is what the call returned (-1 on failure; for the probe's calls, 0
 * on success, as a descriptor made is closed and a child reaped); E is
 * errno after the call, 0 when it succeeded, and ENAME its symbolic
 * name ("OK" for 0). The exit status is 0 whatever the call returned, so
 * that a job's exit says only whether it was killed; 2 for an unknown
 * NAME (the list is printed). tests/launcher/zygote/test_seccomp.c runs it
 * inside the jail, one test per call, to tell the seccomp filter's answers
 * (EPERM, EAFNOSUPPORT, ENOSYS, or the end of the job) from the kernel's.
 *
 * Most calls are stockade-probe's (verify/probe/probe.h, probe_call_find:
 * probe_syscalls.c, probe_seccomp.c and probe_seccomp_modes.c are built
 * into this program, tests/meson.build), under this program's names where they differ
 * (aliases below); the calls only these tests make are here.
 *
 * Built statically and without sanitizers (tests/meson.build): it must
 * run in any jail, including under the strict profile, whose few calls
 * a dynamic loader or a sanitizer runtime would exceed. Every call is
 * made with raw syscall(2) or inline assembly, never a libc wrapper that
 * might pick another call (glibc's clone, for one, tries clone3 first).
 *
 * Safe when run bare, even as root on the host: every call is given
 * arguments that make it fail before it acts (a path that does not
 * exist, a descriptor of -1, an invalid magic or flag), or that make it
 * act only on this short-lived process (its own memory, persona or
 * namespaces, a child that exits at once). The comment of each call says
 * which (here, or in the probe's files). Nothing reboots, mounts, loads,
 * swaps, sets a clock or types into a terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/quota.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* verify/probe/probe.h (tests/lib/probe.h is another program's). */
#include "probe/probe.h"

/* A path that exists nowhere: calls that look a path up fail ENOENT. */
#define NOWHERE "/stockade-try-syscall-no-such-path"

static long
try_umount2(void)
{
	return syscall(SYS_umount2, NOWHERE, 0L);
}

static long
try_pivot_root(void)
{
	return syscall(SYS_pivot_root, NOWHERE, NOWHERE);
}

static long
try_fsopen(void)
{
	/* An unknown flag: EINVAL before the file system is looked up
	 * (so no module is requested) and no context made. */
	return syscall(SYS_fsopen, "tmpfs", 0x80000000UL);
}

static long
try_fsmount(void)
{
	return syscall(SYS_fsmount, -1L, (unsigned long)FSMOUNT_CLOEXEC, 0UL);
}

static long
try_fsconfig(void)
{
	return syscall(SYS_fsconfig, -1L, (long)FSCONFIG_CMD_CREATE, NULL, NULL,
	    0L);
}

static long
try_move_mount(void)
{
	return syscall(SYS_move_mount, (long)AT_FDCWD, NOWHERE, (long)AT_FDCWD,
	    NOWHERE, 0UL);
}

static long
try_open_tree(void)
{
	/* Without OPEN_TREE_CLONE it would only be an O_PATH descriptor;
	 * the path does not exist anyway. */
	return syscall(SYS_open_tree, (long)AT_FDCWD, NOWHERE,
	    (unsigned long)OPEN_TREE_CLOEXEC);
}

static long
try_mount_setattr(void)
{
	struct mount_attr attr;

	/* Sets and clears nothing, on a path that does not exist. */
	memset(&attr, 0, sizeof(attr));
	return syscall(SYS_mount_setattr, (long)AT_FDCWD, NOWHERE, 0UL, &attr,
	    (unsigned long)sizeof(attr));
}

static long
try_swapon(void)
{
	return syscall(SYS_swapon, NOWHERE, 0L);
}

static long
try_reboot(void)
{
	/* Wrong magic numbers and an undefined command: the kernel checks
	 * the magic first and answers EINVAL; even as root on the host
	 * nothing happens. */
	return syscall(SYS_reboot, 0L, 0L, 0x5eadbeefL, NULL);
}

static long
try_acct(void)
{
	/* A file that does not exist (acct(NULL) would switch accounting
	 * off): ENOENT. */
	return syscall(SYS_acct, NOWHERE);
}

static long
try_quotactl(void)
{
	uint32_t fmt;

	/* A read (Q_GETFMT) on a device that does not exist. */
	return syscall(SYS_quotactl, (long)QCMD(Q_GETFMT, USRQUOTA), NOWHERE,
	    0L, &fmt);
}

static long
try_lookup_dcookie(void)
{
	/* Gone from Linux 6.8 (ENOSYS bare); a cookie of 0 before. */
	return syscall(SYS_lookup_dcookie, 0UL, NULL, 0UL);
}

/* struct file_handle with room for a handle (fcntl.h declares it with a
 * flexible array). */
struct handle_buf {
	unsigned int handle_bytes;
	int handle_type;
	unsigned char f_handle[128];
};

static long
try_open_by_handle_at(void)
{
	struct handle_buf h = {.handle_bytes = 0};

	/* No mount descriptor (-1) and an empty handle: EBADF or EINVAL;
	 * it would open read-only anyway. */
	return syscall(SYS_open_by_handle_at, -1L, &h, (long)O_RDONLY);
}

static long
try_name_to_handle_at(void)
{
	struct handle_buf h = {.handle_bytes = 0};
	int mount_id;

	/* Asks the size of the handle of "/": EOVERFLOW, a read. */
	return syscall(SYS_name_to_handle_at, (long)AT_FDCWD, "/", &h,
	    &mount_id, 0L);
}

static long
try_settimeofday(void)
{
	/* Neither a time nor a zone: the kernel sets nothing (it checks
	 * CAP_SYS_TIME first, then has nothing to do). */
	return syscall(SYS_settimeofday, NULL, NULL);
}

static long
try_clock_settime(void)
{
	struct timespec ts = {.tv_sec = 1};

	/* CLOCK_MONOTONIC cannot be set: EINVAL whoever asks. */
	return syscall(SYS_clock_settime, (long)CLOCK_MONOTONIC, &ts);
}

/* A pair of netlink sockets: refused like socket's other families. */
static long
try_socketpair_netlink(void)
{
	int sv[2];

	return syscall(SYS_socketpair, (long)AF_NETLINK, (long)SOCK_RAW, 0L,
	    sv);
}

/* The calls only these tests make. */
static const struct probe_call own_calls[] = {
    {"umount2", try_umount2},
    {"pivot_root", try_pivot_root},
    {"fsopen", try_fsopen},
    {"fsmount", try_fsmount},
    {"fsconfig", try_fsconfig},
    {"move_mount", try_move_mount},
    {"open_tree", try_open_tree},
    {"mount_setattr", try_mount_setattr},
    {"swapon", try_swapon},
    {"reboot", try_reboot},
    {"acct", try_acct},
    {"quotactl", try_quotactl},
    {"lookup_dcookie", try_lookup_dcookie},
    {"open_by_handle_at", try_open_by_handle_at},
    {"name_to_handle_at", try_name_to_handle_at},
    {"settimeofday", try_settimeofday},
    {"clock_settime", try_clock_settime},
    {"socketpair-netlink", try_socketpair_netlink},
    {NULL, NULL},
};

/* This program's names for the probe's calls where they differ
 * (tests/launcher/zygote/test_seccomp.c uses these); the probe's own names
 * work too. */
static const struct {
	const char *name, *probe;
} aliases[] = {
    {"unshare-user", "unshare"},
    {"personality-readimplies", "personality_readimplies"},
    {"personality-default", "personality_default"},
    {"clone-newns", "clone_newns"},
    {"tiocsti-high", "tiocsti_high"},
    {"socket-netlink", "socket_netlink"},
    {"socket-mptcp", "socket_mptcp"},
    {"prctl-seccomp", "prctl_seccomp"},
    {"socket-packet", "socket_packet"},
    {"socket-vsock", "socket_vsock"},
    {"socket-inet", "socket_inet"},
};

#define N_ALIASES (sizeof(aliases) / sizeof(aliases[0]))

/* The call NAME names, or NULL. */
static const struct probe_call *
find_call(const char *name)
{
	for (const struct probe_call *c = own_calls; c->name != NULL; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	for (size_t i = 0; i < N_ALIASES; i++)
		if (strcmp(aliases[i].name, name) == 0)
			return probe_call_find(aliases[i].probe);
	return probe_call_find(name);
}

static void
list_calls(const struct probe_call *c)
{
	for (; c->name != NULL; c++)
		fprintf(stderr, " %s", c->name);
}

int
main(int argc, char *argv[])
{
	const struct probe_call *c;
	const char *ename;
	long ret;
	int e;

	if (argc < 2) {
		fprintf(stderr, "usage: try-syscall NAME\nnames:");
		list_calls(own_calls);
		for (size_t i = 0; i < N_ALIASES; i++)
			fprintf(stderr, " %s", aliases[i].name);
		list_calls(probe_syscalls_calls);
		list_calls(probe_seccomp_calls);
		fprintf(stderr, "\n");
		return 2;
	}
	c = find_call(argv[1]);
	if (c == NULL) {
		fprintf(stderr,
		    "try-syscall: unknown call \"%s\" (run it "
		    "without arguments for the list)\n",
		    argv[1]);
		return 2;
	}
	errno = 0;
	ret = c->call();
	e = ret < 0 ? (errno != 0 ? errno : EIO) : 0;
	ename = e == 0 ? "OK" : strerrorname_np(e);
	printf("%s ret=%ld errno=%d(%s)\n", argv[1], ret, e,
	    ename != NULL ? ename : "?");
	return fflush(stdout) == 0 ? 0 : 1;
}
