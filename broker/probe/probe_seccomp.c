/*
 * probe_seccomp.c: stockade-probe's commands for the seccomp checks
 * (broker/check_seccomp.c).
 *
 * `sys CALL...` makes each named system call once and prints
 * "CALL=<errno name>" ("ok" when it succeeded), so that the check can tell
 * the filter's answer (EPERM, EAFNOSUPPORT, ENOSYS, or the end of the
 * job) from the kernel's. A call through a foreign ABI first prints
 * "CALL.start=1": when the job is ended at the call, the start line is
 * there and the answer is not.
 *
 * Every call is made with raw syscall(2) or inline assembly, never a libc
 * wrapper that might pick another call, and is given arguments that make
 * it fail before it acts, or act only on this short-lived process (as
 * tests/try_syscall.c, whose list this follows): a path that does not
 * exist, a descriptor of -1, an invalid flag, a child that exits at once,
 * a file of its own in the working directory. So a filter that lets one
 * through (a planted defect) still harms nothing: nothing mounts, loads,
 * reboots or types into a terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/vm_sockets.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* A path that exists nowhere: calls that look a path up fail ENOENT. */
#define NOWHERE "/stockade-probe-no-such-path"

/* The file the mode calls change: made in the working directory (the
 * workspace), removed after. */
#define MODE_FILE "stockade-probe-mode"

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

/* The sockets are made and closed unused. */
static long
try_socket(long family, long type, long proto)
{
	return closed(syscall(SYS_socket, family, type, proto));
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

/* The mode calls on MODE_FILE, made 0644 first when missing. */
static int
mode_file(void)
{
	return (int)syscall(SYS_openat, (long)AT_FDCWD, MODE_FILE,
			    (long)(O_WRONLY | O_CREAT | O_CLOEXEC), 0644L);
}

static long
try_chmod(unsigned long mode)
{
	int fd = mode_file();

	if (fd < 0)
		return -1;
	close(fd);
	return syscall(SYS_chmod, MODE_FILE, mode);
}

static long
try_chmod_setuid(void)
{
	return try_chmod(04755);
}

static long
try_chmod_setgid(void)
{
	return try_chmod(02755);
}

static long
try_chmod_plain(void)
{
	return try_chmod(0640);
}

static long
try_fchmod_setuid(void)
{
	int fd = mode_file();
	long r;

	if (fd < 0)
		return -1;
	r = syscall(SYS_fchmod, (long)fd, 04755L);
	close(fd);
	return r;
}

static long
try_open_setuid(void)
{
	char name[64];
	long fd;

	/* A new file made with the bit. */
	snprintf(name, sizeof(name), "%s-new", MODE_FILE);
	fd = syscall(SYS_openat, (long)AT_FDCWD, name,
		     (long)(O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC), 04755L);
	if (fd >= 0)
		unlink(name);
	return closed(fd);
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

static const struct {
	const char *name;
	long (*call)(void);
	int foreign; /* prints CALL.start=1 first */
} calls[] = {
	{"ptrace", try_ptrace, 0},
	{"process_vm_readv", try_process_vm_readv, 0},
	{"mount", try_mount, 0},
	{"unshare", try_unshare, 0},
	{"setns", try_setns, 0},
	{"keyctl", try_keyctl, 0},
	{"add_key", try_add_key, 0},
	{"request_key", try_request_key, 0},
	{"bpf", try_bpf, 0},
	{"perf_event_open", try_perf_event_open, 0},
	{"userfaultfd", try_userfaultfd, 0},
	{"kexec_load", try_kexec_load, 0},
	{"kexec_file_load", try_kexec_file_load, 0},
	{"init_module", try_init_module, 0},
	{"finit_module", try_finit_module, 0},
	{"delete_module", try_delete_module, 0},
	{"socket_netlink", try_socket_netlink, 0},
	{"socket_packet", try_socket_packet, 0},
	{"socket_vsock", try_socket_vsock, 0},
	{"socket_inet", try_socket_inet, 0},
	{"socket_unix", try_socket_unix, 0},
	{"clone_newuser", try_clone_newuser, 0},
	{"clone_newns", try_clone_newns, 0},
	{"clone_newnet", try_clone_newnet, 0},
	{"fork", try_fork, 0},
	{"clone3", try_clone3, 0},
	{"pthread", try_pthread, 0},
	{"personality_readimplies", try_personality_readimplies, 0},
	{"personality_norandom", try_personality_norandom, 0},
	{"personality_default", try_personality_default, 0},
	{"personality_query", try_personality_query, 0},
	{"chmod_setuid", try_chmod_setuid, 0},
	{"chmod_setgid", try_chmod_setgid, 0},
	{"chmod_plain", try_chmod_plain, 0},
	{"fchmod_setuid", try_fchmod_setuid, 0},
	{"open_setuid", try_open_setuid, 0},
	{"io_uring_setup", try_io_uring_setup, 0},
	{"io_uring_enter", try_io_uring_enter, 0},
	{"io_uring_register", try_io_uring_register, 0},
	{"tiocsti", try_tiocsti, 0},
	{"tiocsti_high", try_tiocsti_high, 0},
	{"tioclinux", try_tioclinux, 0},
	{"fionread", try_fionread, 0},
	{"prctl_seccomp", try_prctl_seccomp, 0},
	{"seccomp", try_seccomp, 0},
	{"getpid", try_getpid, 0},
	{"x32", try_x32, 1},
	{"int80", try_int80, 1},
};

/* sys CALL...: each call's answer as "CALL=<errno name>" or "CALL=ok";
 * then, when a mode call ran, "mode=<octal>" of the file it changed. */
static int
cmd_sys(int argc, char **argv)
{
	struct stat st;
	int rc = 0;

	if (argc < 2) {
		for (size_t k = 0; k < sizeof(calls) / sizeof(calls[0]); k++)
			printf("%s\n", calls[k].name);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		size_t k;

		for (k = 0; k < sizeof(calls) / sizeof(calls[0]); k++)
			if (strcmp(argv[i], calls[k].name) == 0)
				break;
		if (k == sizeof(calls) / sizeof(calls[0])) {
			fprintf(stderr, "stockade-probe sys: unknown call %s\n",
				argv[i]);
			rc = 2;
			continue;
		}
		if (calls[k].foreign) {
			char key[80];

			snprintf(key, sizeof(key), "%s.start", argv[i]);
			probe_kv(key, "1");
		}
		errno = 0;
		long r = calls[k].call();
		probe_errno(argv[i], r < 0 ? (errno != 0 ? errno : EIO) : 0);
	}
	if (stat(MODE_FILE, &st) == 0) {
		probe_kv("mode", "%04o", (unsigned)(st.st_mode & 07777));
		unlink(MODE_FILE);
	}
	return rc;
}

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

const struct probe_cmd probe_seccomp_cmds[] = {
	{"sys", "CALL...: CALL=<errno name>|ok for each (stockade-probe sys "
		"with no call lists them)", cmd_sys},
	{"sleep", "MS: sleeps, then slept=MS", cmd_sleep},
	{NULL, NULL, NULL},
};
