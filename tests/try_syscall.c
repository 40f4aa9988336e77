/*
 * try_syscall.c: `try-syscall NAME` makes the one system call NAME names
 * and prints what it answered, one line:
 *
 *	NAME ret=R errno=E(ENAME)
 *
 * R is what the call returned as syscall(2) returns it (-1 on failure);
 * E is errno after the call, 0 when it succeeded, and ENAME its symbolic
 * name ("OK" for 0). The exit status is 0 whatever the call returned, so
 * that a job's exit says only whether it was killed; 2 for an unknown
 * NAME (the list is printed). tests/test_seccomp.c runs it inside the
 * jail, one test per call, to tell the seccomp filter's answers (EPERM,
 * EAFNOSUPPORT, ENOSYS, or the end of the job) from the kernel's.
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
 * which. Nothing reboots, mounts, loads, swaps, sets a clock or types
 * into a terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/vm_sockets.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/quota.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "x86_abi.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* A path that exists nowhere: calls that look a path up fail ENOENT. */
#define NOWHERE "/stockade-try-syscall-no-such-path"

/* The child of a clone made here exits at once (nothing else runs in
 * it); the parent reaps it. */
static void
reap(long pid)
{
	if (pid == 0)
		syscall(SYS_exit_group, 0);
	if (pid > 0)
		(void)waitpid((pid_t)pid, NULL, 0);
}

/* Its own memory: reads or writes a buffer of this process only. */
static long
try_process_vm(int write)
{
	char a[8] = "abcdefg", b[8] = "";
	struct iovec local = {.iov_base = b, .iov_len = sizeof(b)};
	struct iovec remote = {.iov_base = a, .iov_len = sizeof(a)};

	return syscall(write ? SYS_process_vm_writev : SYS_process_vm_readv,
		       (long)getpid(), &local, 1UL, &remote, 1UL, 0UL);
}

static long
try_ptrace(void)
{
	/* pid -1 is never a task: ESRCH, nothing traced. */
	return syscall(SYS_ptrace, 12L /* PTRACE_GETREGS */, -1L, NULL, NULL);
}

static long
try_process_vm_readv(void)
{
	return try_process_vm(0);
}

static long
try_process_vm_writev(void)
{
	return try_process_vm(1);
}

static long
try_bpf(void)
{
	union bpf_attr attr;

	/* Map type 0 (BPF_MAP_TYPE_UNSPEC) does not exist: EINVAL. */
	memset(&attr, 0, sizeof(attr));
	return syscall(SYS_bpf, (long)BPF_MAP_CREATE, &attr,
		       (unsigned long)sizeof(attr));
}

static long
try_perf_event_open(void)
{
	struct perf_event_attr attr;

	/* A disabled dummy software counter on this process alone (it
	 * counts nothing), gone when the process exits. */
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return syscall(SYS_perf_event_open, &attr, 0L, -1L, -1L,
		       (unsigned long)PERF_FLAG_FD_CLOEXEC);
}

static long
try_userfaultfd(void)
{
	/* A descriptor of this process's, registered on no memory. */
	return syscall(SYS_userfaultfd, (long)(O_CLOEXEC | O_NONBLOCK));
}

static long
try_keyctl(void)
{
	/* Reads the id of the thread keyring without creating it: ENOKEY. */
	return syscall(SYS_keyctl, (long)KEYCTL_GET_KEYRING_ID,
		       (long)KEY_SPEC_THREAD_KEYRING, 0L);
}

static long
try_add_key(void)
{
	/* Keyring 0 is no keyring: EINVAL before any key is made (the
	 * type "user" is built in, so no module is requested). */
	return syscall(SYS_add_key, "user", "stockade-try-syscall", "x", 1UL,
		       0L);
}

static long
try_request_key(void)
{
	/* No callout: a search only, nothing constructed or upcalled. */
	return syscall(SYS_request_key, "user", "stockade-try-syscall-none",
		       NULL, 0L);
}

static long
try_mount(void)
{
	/* Nothing onto a target that does not exist: ENOENT. */
	return syscall(SYS_mount, NULL, NOWHERE, NULL, 0UL, NULL);
}

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
	return syscall(SYS_fsconfig, -1L, (long)FSCONFIG_CMD_CREATE, NULL,
		       NULL, 0L);
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
try_unshare_user(void)
{
	/* Only this process moves, and it exits next. */
	return syscall(SYS_unshare, (long)CLONE_NEWUSER);
}

static long
try_setns(void)
{
	return syscall(SYS_setns, -1L, 0L);
}

static long
try_kexec_load(void)
{
	/* Another architecture's image and an undefined flag: EINVAL
	 * before anything is loaded or (nr_segments 0) unloaded. */
	return syscall(SYS_kexec_load, 0UL, 0UL, NULL,
		       (unsigned long)(KEXEC_ARCH_PPC64 | 0x8000));
}

static long
try_kexec_file_load(void)
{
	/* Undefined flags (not KEXEC_FILE_UNLOAD): EINVAL first. */
	return syscall(SYS_kexec_file_load, -1L, -1L, 0UL, NULL,
		       0x80000000UL);
}

static long
try_init_module(void)
{
	/* An image of 0 bytes is no ELF header: ENOEXEC. */
	return syscall(SYS_init_module, NULL, 0UL, "");
}

static long
try_finit_module(void)
{
	return syscall(SYS_finit_module, -1L, "", 0L);
}

static long
try_delete_module(void)
{
	return syscall(SYS_delete_module, "stockade_try_syscall_none",
		       (long)O_NONBLOCK);
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
try_personality_readimplies(void)
{
	/* This process's persona only, and it exits next. */
	return syscall(SYS_personality, (unsigned long)READ_IMPLIES_EXEC);
}

static long
try_personality_default(void)
{
	return syscall(SYS_personality, (unsigned long)PER_LINUX);
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

static long
try_clone_newns(void)
{
	long pid;

	/* A child in a new mount namespace that exits at once. */
	pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWNS | SIGCHLD), NULL,
		      NULL, NULL, 0UL);
	reap(pid);
	return pid;
}

static long
try_clone3(void)
{
	struct clone_args args;
	long pid;

	/* A plain fork-like child that exits at once. */
	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &args, (unsigned long)sizeof(args));
	reap(pid);
	return pid;
}

/* The ioctls are made on descriptor 0 with a NULL argument: TIOCSTI and
 * TIOCLINUX read their byte through it first, so even on a terminal, as
 * root, they fail EFAULT (ENOTTY elsewhere) before typing anything. */
static long
try_tiocsti(void)
{
	return syscall(SYS_ioctl, 0L, (unsigned long)TIOCSTI, NULL);
}

static long
try_tiocsti_high(void)
{
	/* The kernel reads the request as 32 bits: still TIOCSTI. */
	return syscall(SYS_ioctl, 0L, 0x100000000UL | TIOCSTI, NULL);
}

static long
try_tioclinux(void)
{
	return syscall(SYS_ioctl, 0L, (unsigned long)TIOCLINUX, NULL);
}

/* MPTCP (IPPROTO_MPTCP, 262): a TCP variant Landlock's rules do not see. */
static long
try_socket_mptcp(void)
{
	return syscall(SYS_socket, (long)AF_INET, (long)SOCK_STREAM, 262L);
}

/* A pair of netlink sockets: refused like socket's other families. */
static long
try_socketpair_netlink(void)
{
	int sv[2];

	return syscall(SYS_socketpair, (long)AF_NETLINK, (long)SOCK_RAW, 0L, sv);
}

/* prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL): a filter of the job's
 * own; with a NULL program it fails (EFAULT) even where it is allowed. */
static long
try_prctl_seccomp(void)
{
	return syscall(SYS_prctl, 22L, 2L, 0L, 0L, 0L);
}

/* The sockets are made and left unused (no address, no message). */
static long
try_socket_netlink(void)
{
	return syscall(SYS_socket, (long)AF_NETLINK, (long)SOCK_RAW, 0L);
}

static long
try_socket_packet(void)
{
	/* Protocol 0: a packet socket that receives nothing. */
	return syscall(SYS_socket, (long)AF_PACKET, (long)SOCK_RAW, 0L);
}

static long
try_socket_vsock(void)
{
	return syscall(SYS_socket, (long)AF_VSOCK, (long)SOCK_STREAM, 0L);
}

static long
try_socket_inet(void)
{
	return syscall(SYS_socket, (long)AF_INET, (long)SOCK_STREAM, 0L);
}

static long
try_io_uring_setup(void)
{
	struct io_uring_params p;

	/* A ring of 0 entries: EINVAL, no ring made. */
	memset(&p, 0, sizeof(p));
	return syscall(SYS_io_uring_setup, 0UL, &p);
}

static long
try_io_uring_enter(void)
{
	return syscall(SYS_io_uring_enter, -1L, 0UL, 0UL, 0UL, NULL, 0UL);
}

static long
try_io_uring_register(void)
{
	return syscall(SYS_io_uring_register, -1L, 0UL, NULL, 0UL);
}

static long
try_x32(void)
{
	/* getpid (39) through the x32 ABI: ENOSYS on a kernel without
	 * CONFIG_X86_X32_ABI. */
	return syscall(__X32_SYSCALL_BIT | SYS_getpid);
}

static long
try_int80(void)
{
	long ret = x86_int80_getpid();

	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static long
try_getpid(void)
{
	return syscall(SYS_getpid);
}

static const struct {
	const char *name;
	long (*call)(void);
} calls[] = {
	{"ptrace", try_ptrace},
	{"process_vm_readv", try_process_vm_readv},
	{"process_vm_writev", try_process_vm_writev},
	{"bpf", try_bpf},
	{"perf_event_open", try_perf_event_open},
	{"userfaultfd", try_userfaultfd},
	{"keyctl", try_keyctl},
	{"add_key", try_add_key},
	{"request_key", try_request_key},
	{"mount", try_mount},
	{"umount2", try_umount2},
	{"pivot_root", try_pivot_root},
	{"fsopen", try_fsopen},
	{"fsmount", try_fsmount},
	{"fsconfig", try_fsconfig},
	{"move_mount", try_move_mount},
	{"open_tree", try_open_tree},
	{"mount_setattr", try_mount_setattr},
	{"unshare-user", try_unshare_user},
	{"setns", try_setns},
	{"kexec_load", try_kexec_load},
	{"kexec_file_load", try_kexec_file_load},
	{"init_module", try_init_module},
	{"finit_module", try_finit_module},
	{"delete_module", try_delete_module},
	{"swapon", try_swapon},
	{"reboot", try_reboot},
	{"acct", try_acct},
	{"quotactl", try_quotactl},
	{"lookup_dcookie", try_lookup_dcookie},
	{"open_by_handle_at", try_open_by_handle_at},
	{"name_to_handle_at", try_name_to_handle_at},
	{"personality-readimplies", try_personality_readimplies},
	{"personality-default", try_personality_default},
	{"settimeofday", try_settimeofday},
	{"clock_settime", try_clock_settime},
	{"clone-newns", try_clone_newns},
	{"clone3", try_clone3},
	{"tiocsti", try_tiocsti},
	{"tiocsti-high", try_tiocsti_high},
	{"tioclinux", try_tioclinux},
	{"socket-netlink", try_socket_netlink},
	{"socket-mptcp", try_socket_mptcp},
	{"socketpair-netlink", try_socketpair_netlink},
	{"prctl-seccomp", try_prctl_seccomp},
	{"socket-packet", try_socket_packet},
	{"socket-vsock", try_socket_vsock},
	{"socket-inet", try_socket_inet},
	{"io_uring_setup", try_io_uring_setup},
	{"io_uring_enter", try_io_uring_enter},
	{"io_uring_register", try_io_uring_register},
	{"x32", try_x32},
	{"int80", try_int80},
	{"getpid", try_getpid},
};

int
main(int argc, char *argv[])
{
	const char *ename;
	long ret;
	int e;

	if (argc < 2) {
		fprintf(stderr, "usage: try-syscall NAME\nnames:");
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			fprintf(stderr, " %s", calls[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		if (strcmp(argv[1], calls[i].name) != 0)
			continue;
		errno = 0;
		ret = calls[i].call();
		e = ret == -1 ? errno : 0;
		ename = e == 0 ? "OK" : strerrorname_np(e);
		printf("%s ret=%ld errno=%d(%s)\n", calls[i].name, ret, e,
		       ename != NULL ? ename : "?");
		return fflush(stdout) == 0 ? 0 : 1;
	}
	fprintf(stderr, "try-syscall: unknown call \"%s\" (run it without "
		"arguments for the list)\n", argv[1]);
	return 2;
}
