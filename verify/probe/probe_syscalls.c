/*
 * probe_syscalls.c: stockade-probe's system calls that the jail's filter
 * refuses whole, whatever their arguments, the terminal ioctls it refuses
 * whatever the high word, the calls through the foreign ABIs
 * (docs/seccomp.md; the checks in verify/check/check_seccomp.c), and `sleep`,
 * for the checks that look at stockade's own processes while a job runs
 * (verify/check/check_confined.c).
 *
 * Each call is a command "call.NAME" that makes the call once and prints
 * "NAME=<errno name>" ("ok" when it succeeded); `stockade-probe sys
 * NAME...` (probe_seccomp.c) runs several in one process. A call through
 * a foreign ABI first prints "NAME.start=1": when the job is ended at the
 * call, the start line is there and the answer is not.
 *
 * Every call is made with raw syscall(2) or inline assembly, never a libc
 * wrapper that might pick another call, and is given arguments that make
 * it fail before it acts, or act only on this short-lived process (the
 * same calls serve tests/lib/try_syscall.c, built from this file: probe.h,
 * probe_syscalls_calls): a path that does not
 * exist, a descriptor of -1, an invalid flag, its own memory, a pipe
 * instead of a terminal. So a filter that lets one through (a planted
 * defect) still harms nothing: nothing mounts, loads, reboots, traces
 * or types into a terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* A path that exists nowhere: calls that look a path up fail ENOENT. */
#define NOWHERE "/stockade-probe-no-such-path"

/* A descriptor a call returned is closed: only the answer matters. */
static long
closed(long fd)
{
	if (fd >= 0)
		close((int)fd);
	return fd < 0 ? fd : 0;
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
	char a[8] = "abcdefg", b[8] = "";
	struct iovec local = {.iov_base = b, .iov_len = sizeof(b)};
	struct iovec remote = {.iov_base = a, .iov_len = sizeof(a)};

	/* Its own memory. */
	return syscall(SYS_process_vm_readv, (long)getpid(), &local, 1UL,
	    &remote, 1UL, 0UL);
}

static long
try_process_vm_writev(void)
{
	char a[8] = "abcdefg", b[8] = "";
	struct iovec local = {.iov_base = a, .iov_len = sizeof(a)};
	struct iovec remote = {.iov_base = b, .iov_len = sizeof(b)};

	/* Into its own memory. */
	return syscall(SYS_process_vm_writev, (long)getpid(), &local, 1UL,
	    &remote, 1UL, 0UL);
}

static long
try_pidfd_getfd(void)
{
	/* No pidfd: EBADF, no descriptor taken from anyone. */
	return closed(syscall(SYS_pidfd_getfd, -1L, 0L, 0UL));
}

static long
try_mount(void)
{
	/* Nothing onto a target that does not exist: ENOENT. */
	return syscall(SYS_mount, NULL, NOWHERE, NULL, 0UL, NULL);
}

static long
try_unshare(void)
{
	/* Only this process would move, and it exits soon. */
	return syscall(SYS_unshare, (long)CLONE_NEWUSER);
}

static long
try_setns(void)
{
	return syscall(SYS_setns, -1L, 0L);
}

static long
try_keyctl(void)
{
	/* Reads the id of the thread keyring without making it: ENOKEY. */
	return syscall(SYS_keyctl, (long)KEYCTL_GET_KEYRING_ID,
	    (long)KEY_SPEC_THREAD_KEYRING, 0L);
}

static long
try_add_key(void)
{
	/* Keyring 0 is no keyring: EINVAL before any key is made. */
	return syscall(SYS_add_key, "user", "stockade-probe", "x", 1UL, 0L);
}

static long
try_request_key(void)
{
	/* No callout: a search only. */
	return syscall(SYS_request_key, "user", "stockade-probe-none", NULL,
	    0L);
}

static long
try_bpf(void)
{
	union bpf_attr attr;

	/* Map type 0 (BPF_MAP_TYPE_UNSPEC) does not exist: EINVAL. */
	memset(&attr, 0, sizeof(attr));
	return closed(syscall(SYS_bpf, (long)BPF_MAP_CREATE, &attr,
	    (unsigned long)sizeof(attr)));
}

static long
try_perf_event_open(void)
{
	struct perf_event_attr attr;

	/* A disabled dummy software counter on this process alone. */
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return closed(syscall(SYS_perf_event_open, &attr, 0L, -1L, -1L,
	    (unsigned long)PERF_FLAG_FD_CLOEXEC));
}

static long
try_userfaultfd(void)
{
	return closed(syscall(SYS_userfaultfd, (long)(O_CLOEXEC | O_NONBLOCK)));
}

static long
try_kexec_load(void)
{
	/* Another architecture's image and an undefined flag: EINVAL. */
	return syscall(SYS_kexec_load, 0UL, 0UL, NULL,
	    (unsigned long)(KEXEC_ARCH_PPC64 | 0x8000));
}

static long
try_kexec_file_load(void)
{
	return syscall(SYS_kexec_file_load, -1L, -1L, 0UL, NULL, 0x80000000UL);
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
	return syscall(SYS_delete_module, "stockade_probe_none",
	    (long)O_NONBLOCK);
}

static long
try_io_uring_setup(void)
{
	struct io_uring_params p;

	/* A ring of 0 entries: EINVAL, no ring made. */
	memset(&p, 0, sizeof(p));
	return closed(syscall(SYS_io_uring_setup, 0UL, &p));
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
try_prctl_seccomp(void)
{
	/* PR_SET_SECCOMP, SECCOMP_MODE_FILTER, no program: EFAULT even
	 * where it is allowed. */
	return syscall(SYS_prctl, 22L, 2L, 0L, 0L, 0L);
}

static long
try_seccomp(void)
{
	/* SECCOMP_SET_MODE_FILTER with no program: EFAULT if allowed. */
	return syscall(SYS_seccomp, 1L, 0L, NULL);
}

static long
try_getpid(void)
{
	return syscall(SYS_getpid) > 0 ? 0 : -1;
}

static long
try_x32(void)
{
	/* getpid (39) through the x32 ABI. */
	long r = syscall(__X32_SYSCALL_BIT | SYS_getpid);

	return r < 0 ? r : 0;
}

static long
try_int80(void)
{
#if defined(__x86_64__)
	long ret;

	/* i386 getpid (20) through `int $0x80`. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(20L)
			 : "r8", "r9", "r10", "r11", "memory", "cc");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return 0;
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* The terminal ioctls are made on a pipe, never a terminal, with a NULL
 * argument: where the filter lets one through, the kernel answers ENOTTY
 * and nothing is typed anywhere. */
static long
try_ioctl_pipe(unsigned long req)
{
	int p[2];
	long r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	r = syscall(SYS_ioctl, (long)p[0], req, NULL);
	close(p[0]);
	close(p[1]);
	return r;
}

static long
try_tiocsti(void)
{
	return try_ioctl_pipe(TIOCSTI);
}

static long
try_tiocsti_high(void)
{
	/* The kernel reads the request's low 32 bits: still TIOCSTI
	 * (CVE-2016-7545, CVE-2017-5226). */
	return try_ioctl_pipe((1UL << 32) | TIOCSTI);
}

static long
try_tioclinux(void)
{
	return try_ioctl_pipe(TIOCLINUX);
}

static long
try_fionread(void)
{
	int p[2], n = -1;
	long r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	r = syscall(SYS_ioctl, (long)p[0], (unsigned long)FIONREAD, &n);
	close(p[0]);
	close(p[1]);
	return r;
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

/* The same for a foreign-ABI call, with "ARGV[0].start=1" first. */
#define FOREIGN_CMD(call)                                                     \
	static int cmd_##call(int argc, char **argv)                          \
	{                                                                     \
		char key[80];                                                 \
		long r;                                                       \
                                                                              \
		(void)argc;                                                   \
		snprintf(key, sizeof(key), "%s.start", argv[0]);              \
		probe_kv(key, "1");                                           \
		errno = 0;                                                    \
		r = try_##call();                                             \
		probe_errno(argv[0], r < 0 ? (errno != 0 ? errno : EIO) : 0); \
		return 0;                                                     \
	}

CALL_CMD(ptrace)
CALL_CMD(process_vm_readv)
CALL_CMD(process_vm_writev)
CALL_CMD(pidfd_getfd)
CALL_CMD(mount)
CALL_CMD(unshare)
CALL_CMD(setns)
CALL_CMD(keyctl)
CALL_CMD(add_key)
CALL_CMD(request_key)
CALL_CMD(bpf)
CALL_CMD(perf_event_open)
CALL_CMD(userfaultfd)
CALL_CMD(kexec_load)
CALL_CMD(kexec_file_load)
CALL_CMD(init_module)
CALL_CMD(finit_module)
CALL_CMD(delete_module)
CALL_CMD(io_uring_setup)
CALL_CMD(io_uring_enter)
CALL_CMD(io_uring_register)
CALL_CMD(prctl_seccomp)
CALL_CMD(seccomp)
CALL_CMD(getpid)
CALL_CMD(tiocsti)
CALL_CMD(tiocsti_high)
CALL_CMD(tioclinux)
CALL_CMD(fionread)
FOREIGN_CMD(x32)
FOREIGN_CMD(int80)

/* sleep MS: sleeps MS milliseconds (at most a minute), for the checks
 * that look at stockade's own processes while a job runs. */
static int
cmd_sleep(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	struct timespec ts;

	if (ms < 0 || ms > 60000)
		ms = 60000;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	probe_kv("slept", "%ld", ms);
	return 0;
}

#define CALL(call)                                                           \
	{                                                                    \
		"call." #call, "one system call: " #call "=<errno name>|ok", \
		    cmd_##call                                               \
	}

const struct probe_cmd probe_syscalls_cmds[] = {
    {"sleep", "MS: sleeps, then slept=MS", cmd_sleep},
    CALL(ptrace),
    CALL(process_vm_readv),
    CALL(process_vm_writev),
    CALL(pidfd_getfd),
    CALL(mount),
    CALL(unshare),
    CALL(setns),
    CALL(keyctl),
    CALL(add_key),
    CALL(request_key),
    CALL(bpf),
    CALL(perf_event_open),
    CALL(userfaultfd),
    CALL(kexec_load),
    CALL(kexec_file_load),
    CALL(init_module),
    CALL(finit_module),
    CALL(delete_module),
    CALL(io_uring_setup),
    CALL(io_uring_enter),
    CALL(io_uring_register),
    CALL(prctl_seccomp),
    CALL(seccomp),
    CALL(getpid),
    CALL(tiocsti),
    CALL(tiocsti_high),
    CALL(tioclinux),
    CALL(fionread),
    CALL(x32),
    CALL(int80),
    {NULL, NULL, NULL},
};

/* The calls without their commands (probe.h). */
const struct probe_call probe_syscalls_calls[] = {
    {"ptrace", try_ptrace},
    {"process_vm_readv", try_process_vm_readv},
    {"process_vm_writev", try_process_vm_writev},
    {"pidfd_getfd", try_pidfd_getfd},
    {"mount", try_mount},
    {"unshare", try_unshare},
    {"setns", try_setns},
    {"keyctl", try_keyctl},
    {"add_key", try_add_key},
    {"request_key", try_request_key},
    {"bpf", try_bpf},
    {"perf_event_open", try_perf_event_open},
    {"userfaultfd", try_userfaultfd},
    {"kexec_load", try_kexec_load},
    {"kexec_file_load", try_kexec_file_load},
    {"init_module", try_init_module},
    {"finit_module", try_finit_module},
    {"delete_module", try_delete_module},
    {"io_uring_setup", try_io_uring_setup},
    {"io_uring_enter", try_io_uring_enter},
    {"io_uring_register", try_io_uring_register},
    {"prctl_seccomp", try_prctl_seccomp},
    {"seccomp", try_seccomp},
    {"getpid", try_getpid},
    {"tiocsti", try_tiocsti},
    {"tiocsti_high", try_tiocsti_high},
    {"tioclinux", try_tioclinux},
    {"fionread", try_fionread},
    {"x32", try_x32},
    {"int80", try_int80},
    {NULL, NULL},
};
