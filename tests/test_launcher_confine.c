/*
 * test_launcher_confine.c: the launcher's own confinement
 * (launcher/confine.c), observed from inside (issue 5, item 4).
 *
 * Confinement cannot be undone, so every test forks a child that
 * confines itself and reports what it saw through a pipe: one line per
 * failed check ("FAIL ..."), then "DONE". The parent turns those lines
 * into assertions: Criterion's own assertions must not run in a process
 * it did not make (the pattern of tests/test_confine.c).
 *
 * Each check tells "allowed" from "filtered" by the errno (style.md rule
 * 21): Landlock answers EACCES, the seccomp filter EPERM or ENOSYS, and
 * an allowed call succeeds; where the call would fail anyway without
 * the filter (TIOCSTI on /dev/null), the unfiltered errno differs.
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534, like the other jail suites.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <grp.h>
#include <unistd.h>

#include "confine.h"
#include "harness.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

TestSuite(launcher_confine, .init = harness_setup, .fini = harness_cleanup,
	  .timeout = 90);

/* ---- reporting from a confined child ----------------------------------- */

/* The write end of the pipe to the parent, in the child. */
static int report_fd = -1;
static int failures;

static void __attribute__((format(printf, 1, 2)))
say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(report_fd, line, (size_t)n) < 0)
		_exit(99);
}

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			failures++;                                        \
			say("FAIL (test_launcher_confine.c:%d)", __LINE__);\
			say(__VA_ARGS__);                                  \
		}                                                          \
	} while (0)

/* A call expected to fail with WANT: checks the result and errno. */
#define EXPECT_ERRNO(call, want)                                           \
	do {                                                               \
		long r_;                                                   \
		errno = 0;                                                 \
		r_ = (long)(call);                                         \
		CHECK(r_ == -1 && errno == (want),                         \
		      "%s gave %ld (%s), wanted %s", #call,              \
		      r_, strerror(errno), strerror(want));                \
	} while (0)

/* A call expected to succeed (result >= 0). */
#define EXPECT_OK(call)                                                    \
	do {                                                               \
		long r_;                                                   \
		errno = 0;                                                 \
		r_ = (long)(call);                                         \
		CHECK(r_ >= 0, "%s failed: %s", #call,                     \
		      strerror(errno));                                    \
	} while (0)

struct child_out {
	int status;       /* wait status */
	char text[16384]; /* everything the child said */
};

/*
 * Forks a child that runs FN(ARG) with report_fd set, then says "DONE"
 * and exits 0 (1 if a check failed). Collects what it said until it
 * exits; a child still running after 60 s is killed.
 */
static void
run_child(void (*fn)(void *), void *arg, struct child_out *out)
{
	int p[2];
	size_t len = 0;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		failures = 0;
		fn(arg);
		say("DONE");
		_exit(failures ? 1 : 0);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pf, 1, 60000) != 1) {
			kill(pid, SIGKILL);
			break;
		}
		n = read(p[0], out->text + len, sizeof(out->text) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(p[0]);
	cr_assert_eq(waitpid(pid, &out->status, 0), pid);
}

/* The child ran to its end with no failed check. */
static void
assert_child_ok(const struct child_out *o)
{
	cr_assert(WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0,
		  "confined child: wait status 0x%x; it said:\n%s",
		  (unsigned)o->status, o->text);
	cr_assert_not_null(strstr(o->text, "DONE\n"), "%s", o->text);
}

/* The value of FIELD ("Seccomp:") in the /proc status text ST. */
static long
status_field(const char *st, const char *field)
{
	const char *p = strstr(st, field);

	return p == NULL ? -1 : strtol(p + strlen(field), NULL, 10);
}

/* The same in this process's own /proc/self/status; -1 if unreadable. */
static long
status_field_self(const char *field)
{
	char st[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t len = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return -1;
	st[len] = '\0';
	return status_field(st, field);
}

static int
landlock_abi(void)
{
	return (int)syscall(SYS_landlock_create_ruleset, NULL, 0,
			    LANDLOCK_CREATE_RULESET_VERSION);
}

static void
skip_without_landlock(void)
{
	if (landlock_abi() < 1)
		harness_skip("this kernel has no Landlock");
}

/* Confines the calling child; a failure is reported, and returns false. */
static bool
confine(void)
{
	char err[512];
	int e = confine_launcher(err, sizeof(err));

	CHECK(e == 0, "confine_launcher: %s (%s)", strerror(-e), err);
	return e == 0;
}

/* ---- what a confined launcher may and may not do ------------------------ */

struct walk_paths {
	char ws[512];    /* a workspace: 0700, owned by its owner */
	char tmp[512];   /* a directory of the test's, for metadata calls */
	char probe[600]; /* a file in it */
};

static void
make_walk_paths(struct walk_paths *p)
{
	char path[700];
	uid_t owner = harness_workspace_owner();

	snprintf(p->ws, sizeof(p->ws), "%s", harness_workspace());
	snprintf(path, sizeof(path), "%s/sub", p->ws);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(chown(path, owner, owner), 0);
	snprintf(path, sizeof(path), "%s/sub/deeper", p->ws);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(chown(path, owner, owner), 0);
	snprintf(path, sizeof(path), "%s/file", p->ws);
	harness_write_file(path, "workspace file\n");
	cr_assert_eq(chown(path, owner, owner), 0);
	cr_assert_eq(chmod(path, 0600), 0);
	snprintf(p->tmp, sizeof(p->tmp), "%s",
		 harness_tmpdir("stockade-lconf"));
	snprintf(p->probe, sizeof(p->probe), "%s/probe", p->tmp);
	harness_write_file(p->probe, "probe\n");
}

/* The capability sets in the /proc status text ST (confine.h): a root
 * launcher keeps exactly CAP_DAC_READ_SEARCH and an empty bounding set;
 * any other keeps nothing. */
static void
check_capabilities(const char *st)
{
	static const char *const sets[] = {"\nCapInh:", "\nCapPrm:",
					   "\nCapEff:", "\nCapBnd:",
					   "\nCapAmb:"};
	const unsigned long long kept = 1ULL << CAP_DAC_READ_SEARCH;
	unsigned long long v[5];

	for (size_t i = 0; i < 5; i++) {
		const char *f = strstr(st, sets[i]);

		CHECK(f != NULL, "no %s in the status", sets[i] + 1);
		v[i] = f ? strtoull(f + strlen(sets[i]), NULL, 16) : ~0ULL;
	}
	CHECK(v[0] == 0 && v[4] == 0, "inheritable %llx, ambient %llx", v[0],
	      v[4]);
	if (geteuid() == 0) {
		CHECK(v[1] == kept && v[2] == kept, "root: permitted %llx, "
		      "effective %llx, wanted %llx", v[1], v[2], kept);
		CHECK(v[3] == 0, "root: bounding set %llx", v[3]);
	} else {
		CHECK(v[1] == 0 && v[2] == 0, "permitted %llx, effective %llx",
		      v[1], v[2]);
	}
}

/* The workspace walk (launcher/enforce.c): directories opened by
 * descriptor, listed and stat'ed, 0700 ones of another owner included
 * for a root launcher; no file opened. */
static void
check_walk(const struct walk_paths *p, int wsfd)
{
	struct stat st;
	int sub, deeper, n = 0;
	DIR *d;
	struct dirent *de;

	sub = openat(wsfd, "sub", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			 O_CLOEXEC);
	CHECK(sub >= 0, "openat workspace/sub: %s", strerror(errno));
	if (sub >= 0) {
		deeper = openat(sub, "deeper", O_RDONLY | O_DIRECTORY |
				O_NOFOLLOW | O_CLOEXEC);
		CHECK(deeper >= 0, "openat sub/deeper: %s", strerror(errno));
		if (deeper >= 0)
			close(deeper);
		close(sub);
	}
	EXPECT_OK(fstatat(wsfd, "file", &st, AT_SYMLINK_NOFOLLOW));
	EXPECT_ERRNO(openat(wsfd, "file", O_RDONLY | O_CLOEXEC), EACCES);
	EXPECT_ERRNO(openat(wsfd, "new", O_WRONLY | O_CREAT | O_CLOEXEC,
			    0600), EACCES);
	EXPECT_ERRNO(mkdirat(wsfd, "newdir", 0700), EACCES);
	/* A fresh descriptor of the same directory lists it. */
	d = opendir(p->ws);
	CHECK(d != NULL, "opendir %s: %s", p->ws, strerror(errno));
	while (d != NULL && (de = readdir(d)) != NULL)
		n += strcmp(de->d_name, "sub") == 0 ||
		     strcmp(de->d_name, "file") == 0;
	CHECK(n == 2, "the workspace listing showed %d of 2 names", n);
	if (d != NULL)
		closedir(d);
}

/* Landlock's rules (confine.h), by path. */
static void
check_landlock(void)
{
	char tmpname[64], hex[13];
	struct stat st;
	char buf[256];
	int fd, etc;
	DIR *d;

	EXPECT_ERRNO(open("/etc/passwd", O_RDONLY | O_CLOEXEC), EACCES);
	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) > 0, "/proc/self/stat: "
	      "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	/* /proc read, not written. */
	EXPECT_ERRNO(open("/proc/self/comm", O_WRONLY | O_CLOEXEC), EACCES);
	/* Everything is listable, nothing else is readable. */
	d = opendir("/etc");
	CHECK(d != NULL, "opendir /etc: %s", strerror(errno));
	if (d != NULL) {
		etc = dirfd(d);
		CHECK(readdir(d) != NULL, "readdir /etc: %s", strerror(errno));
		EXPECT_OK(fstatat(etc, "passwd", &st, 0));
		EXPECT_ERRNO(openat(etc, "passwd", O_RDONLY | O_CLOEXEC),
			     EACCES);
		closedir(d);
	}
	harness_random_hex(hex, sizeof(hex));
	snprintf(tmpname, sizeof(tmpname), "/tmp/stockade-lconf-%s", hex);
	EXPECT_ERRNO(mkdir(tmpname, 0700), EACCES);
	EXPECT_ERRNO(open(tmpname, O_WRONLY | O_CREAT | O_CLOEXEC, 0600),
		     EACCES);
	CHECK(access(tmpname, F_OK) == -1, "%s was made", tmpname);
}

/* New processes, programs and sockets. */
static void
check_no_new_anything(int presock)
{
	char *const argv[] = {(char *)(uintptr_t)"true", NULL};
	char *const envp[] = {NULL};
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct clone_args ca;
	int sv[2];
	long r;

	r = fork();
	if (r == 0)
		_exit(0);
	CHECK(r == -1 && errno == EPERM, "fork gave %ld (%s)", r,
	      strerror(errno));
	r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	CHECK(r == -1 && errno == EPERM, "clone gave %ld (%s)", r,
	      strerror(errno));
	r = syscall(SYS_clone, CLONE_FILES | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	CHECK(r == -1 && errno == EPERM, "clone(CLONE_FILES) gave %ld (%s)",
	      r, strerror(errno));
	r = syscall(SYS_vfork);
	if (r == 0)
		_exit(0);
	CHECK(r == -1 && errno == EPERM, "vfork gave %ld (%s)", r,
	      strerror(errno));
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	EXPECT_ERRNO(syscall(SYS_clone3, &ca, sizeof(ca)), ENOSYS);
	EXPECT_ERRNO(execve("/bin/true", argv, envp), EPERM);
	EXPECT_ERRNO(syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp,
			     0), EPERM);
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
				sv), EPERM);
	/* On a socket made before confinement. */
	EXPECT_ERRNO(bind(presock, (struct sockaddr *)&un,
			  sizeof(sa_family_t)), EPERM);
	EXPECT_ERRNO(listen(presock, 1), EPERM);
	EXPECT_ERRNO(accept4(presock, NULL, NULL, SOCK_CLOEXEC), EPERM);
	EXPECT_ERRNO(accept(presock, NULL, NULL), EPERM);
	snprintf(un.sun_path, sizeof(un.sun_path), "/run/docker.sock");
	EXPECT_ERRNO(connect(presock, (struct sockaddr *)&un, sizeof(un)),
		     EPERM);
}

/* Signals: only through pidfds, and to its own threads. */
static void
check_signals(int sleeper_pidfd, pid_t sleeper)
{
	int st = 0;
	siginfo_t si;

	EXPECT_ERRNO(kill(getppid(), 0), EPERM);
	EXPECT_ERRNO(kill(getpid(), 0), EPERM);
	EXPECT_ERRNO(kill(-1, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_tkill, getppid(), 0), EPERM);
	memset(&si, 0, sizeof(si));
	si.si_code = SI_QUEUE;
	EXPECT_ERRNO(syscall(SYS_rt_sigqueueinfo, getppid(), 0, &si), EPERM);
	EXPECT_ERRNO(syscall(SYS_rt_tgsigqueueinfo, getppid(), getppid(), 0,
			     &si), EPERM);
	EXPECT_ERRNO(syscall(SYS_pidfd_open, getppid(), 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_pidfd_open, getpid(), 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_pidfd_getfd, sleeper_pidfd, 0, 0), EPERM);
	EXPECT_OK(syscall(SYS_tgkill, getpid(), gettid(), 0));
	EXPECT_ERRNO(syscall(SYS_tgkill, getppid(), getppid(), 0), EPERM);
	/* The high word is not ignored: the whole argument is compared. */
	EXPECT_ERRNO(syscall(SYS_tgkill, (1L << 32) | getpid(), gettid(), 0),
		     EPERM);
	/* A pidfd opened before confinement still kills its process. */
	EXPECT_OK(syscall(SYS_pidfd_send_signal, sleeper_pidfd, SIGKILL, NULL,
			  0));
	CHECK(waitpid(sleeper, &st, 0) == sleeper && WIFSIGNALED(st) &&
	      WTERMSIG(st) == SIGKILL, "the sleeper ended with 0x%x",
	      (unsigned)st);
}

/* Everything else the filter refuses (confine.h). */
static void
check_other_calls(const struct walk_paths *p, int probefd, int nullfd)
{
	struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
	char c = 'x';
	gid_t none = getegid();

	EXPECT_ERRNO(mount("none", "/tmp", "tmpfs", 0, NULL), EPERM);
	EXPECT_ERRNO(umount2("/tmp", MNT_DETACH), EPERM);
	EXPECT_ERRNO(unshare(CLONE_NEWUSER), EPERM);
	EXPECT_ERRNO(unshare(CLONE_NEWNS), EPERM);
	EXPECT_ERRNO(setns(nullfd, 0), EPERM);
	EXPECT_ERRNO(chroot("/"), EPERM);
	EXPECT_ERRNO(syscall(SYS_fsopen, "tmpfs", 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_open_tree, AT_FDCWD, "/tmp", 0), EPERM);
	EXPECT_ERRNO(syscall(467 /* open_tree_attr */, AT_FDCWD, "/tmp", 0,
			     NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_mount_setattr, -1, "", 0, NULL, 0), EPERM);
	EXPECT_ERRNO(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
	EXPECT_ERRNO(syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL,
			     0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_kcmp, getpid(), getppid(), 0, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL,
			     0), EPERM);
	EXPECT_ERRNO(syscall(SYS_open_by_handle_at, -1, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	EXPECT_ERRNO(syscall(SYS_userfaultfd, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
	EXPECT_ERRNO(sethostname("x", 1), EPERM);
	EXPECT_ERRNO(syscall(SYS_iopl, 3), EPERM);
	/* Ids and capabilities are final. */
	EXPECT_ERRNO(setuid(getuid()), EPERM);
	EXPECT_ERRNO(setgid(getgid()), EPERM);
	EXPECT_ERRNO(setresuid(getuid(), getuid(), getuid()), EPERM);
	EXPECT_ERRNO(setgroups(1, &none), EPERM);
	/* setfsuid answers the old fsuid, never -1, unless filtered. */
	EXPECT_ERRNO(syscall(SYS_setfsuid, getuid()), EPERM);
	/* Owner, mode, attributes, times: by path and by descriptor. */
	EXPECT_ERRNO(chown(p->probe, geteuid(), getegid()), EPERM);
	EXPECT_ERRNO(fchown(probefd, geteuid(), getegid()), EPERM);
	EXPECT_ERRNO(chmod(p->probe, 0600), EPERM);
	EXPECT_ERRNO(fchmod(probefd, 0600), EPERM);
	EXPECT_ERRNO(syscall(452 /* fchmodat2 */, AT_FDCWD, p->probe, 0600,
			     0), EPERM);
	EXPECT_ERRNO(fsetxattr(probefd, "user.x", "1", 1, 0), EPERM);
	EXPECT_ERRNO(futimens(probefd, ts), EPERM);
	EXPECT_ERRNO(mknodat(AT_FDCWD, p->probe, S_IFIFO | 0600, 0), EPERM);
	EXPECT_ERRNO(memfd_create("x", MFD_CLOEXEC), EPERM);
	/* Terminal injection: /dev/null answers ENOTTY without the filter. */
	EXPECT_ERRNO(ioctl(nullfd, TIOCSTI, &c), EPERM);
	EXPECT_ERRNO(syscall(SYS_ioctl, nullfd, (1UL << 32) | TIOCSTI, &c),
		     EPERM);
	EXPECT_ERRNO(ioctl(nullfd, TIOCLINUX, &c), EPERM);
	/* Other ioctls are the kernel's to answer. */
	EXPECT_ERRNO(ioctl(nullfd, TIOCGWINSZ, &c), ENOTTY);
}

/* Receives one descriptor from SOCK; -1 if none came. */
static int
recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm == NULL || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

static int
send_fd(int sock, int fd)
{
	char byte = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/*
 * A notifying process (the zygote's part in real life: a jail whose
 * filter notifies): it sends its listener over SOCK, then makes one
 * notified getcwd and exits 0 when the answer is the confined side's
 * EXDEV.
 */
static void
notifier(int sock)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	char buf[64];
	long r;

	/* Gone in 30 s, answered or not. */
	alarm(30);
	if (ctx == NULL || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getcwd), 0) != 0 ||
	    seccomp_load(ctx) != 0 || send_fd(sock, seccomp_notify_fd(ctx)))
		_exit(2);
	r = syscall(SYS_getcwd, buf, sizeof(buf));
	_exit(r == -1 && errno == EXDEV ? 0 : 3);
}

/* Answers one notification on LISTENER with EXDEV, then reaps PID. */
static void
check_notification(int sock, pid_t pid, struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	int listener = recv_fd(sock), st = 0, e;

	CHECK(listener >= 0, "no listener came: %s", strerror(errno));
	if (listener < 0)
		return;
	e = seccomp_notify_receive(listener, req);
	CHECK(e == 0, "seccomp_notify_receive: %s", strerror(-e));
	if (e == 0) {
		CHECK(req->pid == (uint32_t)pid, "notified by %u, not %d",
		      req->pid, (int)pid);
		resp->id = req->id;
		resp->val = 0;
		resp->error = -EXDEV;
		resp->flags = 0;
		e = seccomp_notify_respond(listener, resp);
		CHECK(e == 0, "seccomp_notify_respond: %s", strerror(-e));
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "the notifying process ended with 0x%x",
	      (unsigned)st);
	close(listener);
}

struct main_args {
	struct walk_paths p;
};

static void
confined_child(void *arg)
{
	struct main_args *a = arg;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	int wsfd, probefd, nullfd, presock, pair[2], npair[2], got;
	int sleeper_pidfd, self_pidfd;
	pid_t sleeper, notifying;
	char st[4096];
	ssize_t len;
	int fd;

	/* Before confinement, what a launcher holds: descriptors of the
	 * workspace, a file, its sockets (made here), a pidfd of its own
	 * and of a child, and a process whose seccomp listener it will
	 * receive. */
	wsfd = open(a->p.ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	probefd = open(a->p.probe, O_RDWR | O_CLOEXEC);
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	presock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(wsfd >= 0 && probefd >= 0 && nullfd >= 0 && presock >= 0,
	      "setup: %s", strerror(errno));
	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) ==
	      0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
			      npair) == 0, "socketpair: %s", strerror(errno));
	CHECK(seccomp_notify_alloc(&req, &resp) == 0, "notify_alloc");
	if (failures)
		return;
	sleeper = fork();
	if (sleeper == 0) {
		alarm(30);
		for (;;)
			pause();
	}
	notifying = fork();
	if (notifying == 0) {
		close(npair[0]);
		notifier(npair[1]);
	}
	close(npair[1]);
	CHECK(sleeper > 0 && notifying > 0, "fork: %s", strerror(errno));
	sleeper_pidfd = (int)syscall(SYS_pidfd_open, sleeper, 0);
	self_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	CHECK(sleeper_pidfd >= 0 && self_pidfd >= 0, "pidfd_open: %s",
	      strerror(errno));
	if (failures || !confine())
		return;

	/* The kernel's view. */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open /proc/self/status: %s", strerror(errno));
	len = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
	st[len > 0 ? len : 0] = '\0';
	if (fd >= 0)
		close(fd);
	CHECK(status_field(st, "\nSeccomp:") == 2, "Seccomp: %ld",
	      status_field(st, "\nSeccomp:"));
	CHECK(status_field(st, "\nNoNewPrivs:") == 1, "NoNewPrivs: %ld",
	      status_field(st, "\nNoNewPrivs:"));
	check_capabilities(st);

	check_landlock();
	check_walk(&a->p, wsfd);
	check_no_new_anything(presock);
	check_signals(sleeper_pidfd, sleeper);
	check_other_calls(&a->p, probefd, nullfd);
	/* Its own pidfd still answers (signal 0 only probes). */
	EXPECT_OK(syscall(SYS_pidfd_send_signal, self_pidfd, 0, NULL, 0));

	/* What supervising needs: descriptors cross a socket made before
	 * (SCM_RIGHTS, as from the zygote and the broker); a listener is
	 * received and a notification answered. */
	CHECK(send_fd(pair[0], nullfd) == 0, "sendmsg: %s", strerror(errno));
	got = recv_fd(pair[1]);
	CHECK(got >= 0, "recvmsg: %s", strerror(errno));
	if (got >= 0)
		close(got);
	check_notification(npair[0], notifying, req, resp);
	seccomp_notify_free(req, resp);
}

Test(launcher_confine, supervises_but_cannot_escape)
{
	struct main_args a;
	struct child_out o;
	struct stat before, after;

	skip_without_landlock();
	make_walk_paths(&a.p);
	cr_assert_eq(stat(a.p.probe, &before), 0);
	run_child(confined_child, &a, &o);
	assert_child_ok(&o);
	/* The probe file kept its owner, mode and times. */
	cr_assert_eq(stat(a.p.probe, &after), 0);
	cr_assert_eq(after.st_mode, before.st_mode);
	cr_assert_eq(after.st_uid, before.st_uid);
	cr_assert_eq(after.st_ctim.tv_sec, before.st_ctim.tv_sec);
	cr_assert_eq(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);
}

/* ---- cgroup v2: read and written beneath every cgroup2 mount ------------- */

struct cg_args {
	char mnt[PATH_MAX];  /* a cgroup2 mount point */
	char leaf[PATH_MAX + 8]; /* a job leaf to make below it, "" when
				  * this user cannot */
};

/* The first cgroup2 mount point that is reachable by its path, found
 * with the parser under test (its unit tests are below). */
static bool
find_cgroup2(char *out, size_t outlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	cr_assert_not_null(f);
	while (!found && getline(&line, &cap, f) > 0) {
		struct statfs sf;

		found = confine_cgroup2_mount(line, out, outlen) == 1 &&
			statfs(out, &sf) == 0 &&
			sf.f_type == CGROUP2_SUPER_MAGIC;
	}
	free(line);
	fclose(f);
	return found;
}

static void
cgroup_child(void *arg)
{
	struct cg_args *a = arg;
	char path[PATH_MAX + 64], buf[256];
	int fd;
	DIR *d;

	if (!confine())
		return;
	d = opendir(a->mnt);
	CHECK(d != NULL, "opendir %s: %s", a->mnt, strerror(errno));
	if (d != NULL)
		closedir(d);
	snprintf(path, sizeof(path), "%s/cgroup.controllers", a->mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) >= 0, "read %s: %s",
	      path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (a->leaf[0] == '\0') {
		say("note: %s is not writable by this user", a->mnt);
		return;
	}
	/* A job leaf: made, an interface file written (truncated, as
	 * O_TRUNC asks), removed. */
	EXPECT_OK(mkdir(a->leaf, 0755));
	snprintf(path, sizeof(path), "%s/cgroup.max.depth", a->leaf);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "max", 3) == 3, "write %s: %s", path,
	      strerror(errno));
	if (fd >= 0)
		close(fd);
	EXPECT_OK(rmdir(a->leaf));
}

Test(launcher_confine, cgroup2_mounts_stay_usable)
{
	struct cg_args a;
	struct child_out o;
	char hex[13], parent[PATH_MAX];

	skip_without_landlock();
	memset(&a, 0, sizeof(a));
	if (!find_cgroup2(a.mnt, sizeof(a.mnt))) {
		harness_skip("no cgroup2 file system is mounted here");
		return;
	}
	/*
	 * A delegated cgroup of ours to make the job leaf in: the root of a
	 * cgroup2 mount is mode 0555, which only CAP_DAC_OVERRIDE (not
	 * kept) could write; a launcher works in a delegated subtree. Made
	 * only where this user can (root; or a writable mount).
	 */
	harness_random_hex(hex, sizeof(hex));
	cr_assert_lt((size_t)snprintf(parent, sizeof(parent),
				      "%.3000s/stockade-lconf-%s", a.mnt, hex),
		     sizeof(parent));
	if (mkdir(parent, 0755) == 0)
		snprintf(a.leaf, sizeof(a.leaf), "%s/job", parent);
	else
		parent[0] = '\0';
	run_child(cgroup_child, &a, &o);
	if (parent[0] != '\0') {
		(void)rmdir(a.leaf);
		cr_assert_eq(rmdir(parent), 0, "rmdir %s: %s", parent,
			     strerror(errno));
	}
	assert_child_ok(&o);
}

/* ---- foreign ABIs kill the process -------------------------------------- */

/* getpid through the i386 entry (int 0x80: number 20). */
static long
int80_getpid(void)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(20L)
			 : "r8", "r9", "r10", "r11", "memory", "cc");
	return ret;
#else
	return -ENOSYS;
#endif
}

/* Forks a grandchild that confines itself and then makes the call of
 * WHICH (0: int 0x80, 1: x32); it must die of SIGSYS. */
static void
foreign_child(void *arg)
{
	int which = *(int *)arg, st = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (!confine())
			_exit(3);
		if (which == 0)
			(void)int80_getpid();
		else
			(void)syscall(__X32_SYSCALL_BIT | SYS_getpid);
		say("FAIL the %s call did not kill the process",
		    which == 0 ? "int 0x80" : "x32");
		_exit(4);
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
	      WTERMSIG(st) == SIGSYS, "the %s call: wait status 0x%x",
	      which == 0 ? "int 0x80" : "x32", (unsigned)st);
}

Test(launcher_confine, foreign_abis_are_killed)
{
	struct child_out o;
	int st = 0;
	pid_t pid;

	skip_without_landlock();
#if !defined(__x86_64__)
	harness_skip("int 0x80 and x32 are x86_64's");
	return;
#endif
	/* Unconfined, the i386 entry must work: else a SIGSEGV below
	 * would say nothing about the filter. */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(int80_getpid() == getpid() ? 0 : 1);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		harness_skip("this kernel has no IA32 emulation");
		return;
	}
	for (int which = 0; which < 2; which++) {
		run_child(foreign_child, &which, &o);
		assert_child_ok(&o);
	}
}

/* ---- no Landlock: a refusal with the fix -------------------------------- */

struct nolandlock_args {
	int answer;       /* the errno landlock_create_ruleset gives */
	const char *want; /* in the message */
};

static void
nolandlock_child(void *arg)
{
	struct nolandlock_args *a = arg;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	char err[512];
	int e;

	/* What a kernel without Landlock answers, made with a filter. */
	CHECK(ctx != NULL, "setup");
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
	CHECK(seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)a->answer),
			       SCMP_SYS(landlock_create_ruleset), 0) == 0 &&
	      seccomp_load(ctx) == 0, "filter");
	if (failures)
		return;
	e = confine_launcher(err, sizeof(err));
	CHECK(e == -EOPNOTSUPP, "confine_launcher gave %d (%s)", e, err);
	CHECK(strstr(err, "lsm=") != NULL &&
	      strstr(err, "CONFIG_SECURITY_LANDLOCK=y") != NULL &&
	      strstr(err, "launcher does not run unconfined") != NULL &&
	      strstr(err, a->want) != NULL, "message: %s", err);
	/* Refused before a filter of its own: only ours is loaded. */
	CHECK(status_field_self("\nSeccomp_filters:") == 1,
	      "filters: %ld", status_field_self("\nSeccomp_filters:"));
}

Test(launcher_confine, kernel_without_landlock_is_refused_with_the_fix)
{
	struct nolandlock_args a[] = {
		{ENOSYS, "not built in"},
		{EOPNOTSUPP, "not enabled at boot"},
	};

	for (size_t i = 0; i < 2; i++) {
		struct child_out o;

		run_child(nolandlock_child, &a[i], &o);
		assert_child_ok(&o);
	}
}

/* ---- the mountinfo parser (pure) ---------------------------------------- */

Test(launcher_confine_parse, cgroup2_lines)
{
	static const struct {
		const char *line;
		int want;
		const char *mnt;
	} cases[] = {
		{"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 "
		 "cgroup2 rw\n", 1, "/sys/fs/cgroup/unified"},
		/* Optional fields before the separator; no newline. */
		{"30 25 0:26 / /sys/fs/cgroup rw,nosuid shared:4 master:1 - "
		 "cgroup2 cgroup2 rw,nsdelegate", 1, "/sys/fs/cgroup"},
		/* Octal escapes (proc(5)): space, tab, newline, backslash. */
		{"1 2 0:3 / /mnt/a\\040b\\011c\\012d\\134e rw - cgroup2 none rw",
		 1, "/mnt/a b\tc\nd\\e"},
		/* A mount point called "-" is not the separator. */
		{"1 2 0:3 / - rw - cgroup2 none rw", 1, "-"},
		/* A backslash not followed by three octal digits stays. */
		{"1 2 0:3 / /a\\9b rw - cgroup2 none rw", 1, "/a\\9b"},
		{"1 2 0:3 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory",
		 0, ""},
		{"1 2 0:3 / /tmp rw - tmpfs tmpfs rw", 0, ""},
		{"1 2 0:3 / /x rw - cgroup2fs none rw", 0, ""},
		{"1 2 0:3 / /x rw - cgroup none rw", 0, ""},
		/* A decoded NUL cannot be a path. */
		{"1 2 0:3 / /a\\000b rw - cgroup2 none rw", 0, ""},
		/* Malformed: no separator, no type, too few fields. */
		{"1 2 0:3 / /x rw cgroup2 none rw", 0, ""},
		{"1 2 0:3 / /x rw -", 0, ""},
		{"cgroup2", 0, ""},
		{"", 0, ""},
	};
	char out[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = confine_cgroup2_mount(cases[i].line, out, sizeof(out));

		cr_assert_eq(r, cases[i].want, "case %zu (%s): %d", i,
			     cases[i].line, r);
		cr_assert_str_eq(out, cases[i].mnt, "case %zu", i);
	}
	/* Too long for the buffer. */
	cr_assert_eq(confine_cgroup2_mount("1 2 0:3 / /sys/fs/cgroup rw - "
					   "cgroup2 none rw", out, 8),
		     -ENAMETOOLONG);
	/* Exactly fitting. */
	cr_assert_eq(confine_cgroup2_mount("1 2 0:3 / /abcdef rw - "
					   "cgroup2 none rw", out, 8), 1);
	cr_assert_str_eq(out, "/abcdef");
}
