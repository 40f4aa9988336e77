/*
 * test_launcher_confine.c: the launcher's own confinement
 * (launcher/supervisor/confine.c), observed from inside (issue 5, item 4): a
 * child that holds what a supervising launcher holds confines itself and shows
 * what it may and may not do (tests/lib/probe.h). Where the call would fail
 * anyway without the filter (TIOCSTI on /dev/null), the unfiltered errno
 * differs. What the host brings (cgroup2 mounts, foreign ABIs, a kernel
 * without Landlock) is in test_launcher_confine_host.c.
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534, like the other jail suites.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <grp.h>
#include <unistd.h>

#include "confine.h"
#include "harness.h"
#include "probe.h"

TestSuite(launcher_confine, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 90);

/* ---- what a confined launcher may and may not do ------------------------ */

struct walk_paths {
	char ws[512]; /* a workspace: 0700, owned by its owner */
	char tmp[512]; /* a directory of the test's, for metadata calls */
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

/* The workspace walk (launcher/supervisor/enforce.c): directories opened by
 * descriptor, listed and stat'ed, 0700 ones of another owner included
 * for a root launcher; no file opened. */
static void
check_walk(const struct walk_paths *p, int wsfd)
{
	struct stat st;
	int sub, deeper, n = 0;
	DIR *d;
	struct dirent *de;

	sub = openat(wsfd, "sub",
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	CHECK(sub >= 0, "openat workspace/sub: %s", strerror(errno));
	if (sub >= 0) {
		deeper = openat(sub, "deeper",
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		CHECK(deeper >= 0, "openat sub/deeper: %s", strerror(errno));
		if (deeper >= 0)
			close(deeper);
		close(sub);
	}
	EXPECT_OK(fstatat(wsfd, "file", &st, AT_SYMLINK_NOFOLLOW));
	EXPECT_ERRNO(openat(wsfd, "file", O_RDONLY | O_CLOEXEC), EACCES);
	EXPECT_ERRNO(openat(wsfd, "new", O_WRONLY | O_CREAT | O_CLOEXEC, 0600),
	    EACCES);
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
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) > 0,
	    "/proc/self/stat: "
	    "%s",
	    strerror(errno));
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
	char *const argv[] = {(char *)(uintptr_t) "true", NULL};
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
	CHECK(r == -1 && errno == EPERM, "clone(CLONE_FILES) gave %ld (%s)", r,
	    strerror(errno));
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
			 0),
	    EPERM);
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
	    EPERM);
	/* On a socket made before confinement. */
	EXPECT_ERRNO(bind(presock, (struct sockaddr *)&un, sizeof(sa_family_t)),
	    EPERM);
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
			 &si),
	    EPERM);
	EXPECT_ERRNO(syscall(SYS_pidfd_open, getppid(), 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_pidfd_open, getpid(), 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_pidfd_getfd, sleeper_pidfd, 0, 0), EPERM);
	EXPECT_OK(syscall(SYS_tgkill, getpid(), gettid(), 0));
	EXPECT_ERRNO(syscall(SYS_tgkill, getppid(), getppid(), 0), EPERM);
	/* The high word is not ignored: the whole argument is compared. */
	EXPECT_ERRNO(syscall(SYS_tgkill, (1L << 32) | getpid(), gettid(), 0),
	    EPERM);
	/* Not even through a pidfd opened before confinement, nor one of
	 * /proc/PID (the kernel's older form, which it could open for any
	 * process): the zygote kills the jails (zygote_kill). */
	EXPECT_ERRNO(syscall(SYS_pidfd_send_signal, sleeper_pidfd, SIGKILL,
			 NULL, 0),
	    EPERM);
	{
		char path[64];
		int dir;

		snprintf(path, sizeof(path), "/proc/%d", (int)sleeper);
		dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(dir >= 0, "open %s: %s", path, strerror(errno));
		EXPECT_ERRNO(syscall(SYS_pidfd_send_signal, dir, SIGKILL, NULL,
				 0),
		    EPERM);
		if (dir >= 0)
			close(dir);
	}
	/* Nor by making another process the owner of a descriptor's
	 * SIGIO (fcntl F_SETOWN, F_SETOWN_EX, F_SETSIG; ioctl FIOSETOWN,
	 * SIOCSPGRP): the kernel would signal it on I/O. */
	EXPECT_ERRNO(fcntl(0, F_SETOWN, (int)sleeper), EPERM);
	{
		struct f_owner_ex ow = {.type = F_OWNER_PID, .pid = sleeper};
		int pid = (int)sleeper;

		EXPECT_ERRNO(fcntl(0, F_SETOWN_EX, &ow), EPERM);
		EXPECT_ERRNO(fcntl(0, F_SETSIG, SIGKILL), EPERM);
		EXPECT_ERRNO(ioctl(0, FIOSETOWN, &pid), EPERM);
		EXPECT_ERRNO(ioctl(0, SIOCSPGRP, &pid), EPERM);
	}
	/* Reading another process's limits stays; setting them does not
	 * (prlimit64 on another pid with a new limit). */
	{
		struct rlimit rl = {1, 1};

		EXPECT_OK(prlimit(sleeper, RLIMIT_NOFILE, NULL, &rl));
		EXPECT_ERRNO(prlimit(sleeper, RLIMIT_NOFILE, &rl, NULL), EPERM);
		EXPECT_ERRNO(setpriority(PRIO_PROCESS, (id_t)sleeper, 19),
		    EPERM);
		EXPECT_ERRNO(setpriority(PRIO_USER, 0, 19), EPERM);
		EXPECT_ERRNO(inotify_init1(IN_CLOEXEC), EPERM);
	}
	(void)st;
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
			 NULL, 0),
	    EPERM);
	EXPECT_ERRNO(syscall(SYS_mount_setattr, -1, "", 0, NULL, 0), EPERM);
	EXPECT_ERRNO(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
	EXPECT_ERRNO(syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0,
			 0),
	    EPERM);
	EXPECT_ERRNO(syscall(SYS_kcmp, getpid(), getppid(), 0, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL,
			 0),
	    EPERM);
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
	EXPECT_ERRNO(syscall(452 /* fchmodat2 */, AT_FDCWD, p->probe, 0600, 0),
	    EPERM);
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
	struct msghdr mh = {.msg_iov = &iov,
	    .msg_iovlen = 1,
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
	struct msghdr mh = {.msg_iov = &iov,
	    .msg_iovlen = 1,
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
		WEXITSTATUS(st) == 0,
	    "the notifying process ended with 0x%x", (unsigned)st);
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
	char st[4096], err[512];
	ssize_t len;
	int fd, e;

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
		    0 &&
		socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, npair) ==
		    0,
	    "socketpair: %s", strerror(errno));
	CHECK(seccomp_notify_alloc(&req, &resp) == 0, "notify_alloc");
	if (probe_failures)
		return;
	sleeper = fork();
	if (sleeper == 0) {
		/* The confined child cannot kill it: it dies with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
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
	if (probe_failures)
		return;
	e = confine_launcher(err, sizeof(err));
	CHECK(e == 0, "confine_launcher: %s (%s)", strerror(-e), err);
	if (e != 0)
		return;

	/* The kernel's view. */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "open /proc/self/status: %s", strerror(errno));
	len = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;
	st[len > 0 ? len : 0] = '\0';
	if (fd >= 0)
		close(fd);
	/* A root launcher keeps exactly CAP_DAC_READ_SEARCH (confine.h). */
	probe_check_confined(st, 1ULL << CAP_DAC_READ_SEARCH);

	check_landlock();
	check_walk(&a->p, wsfd);
	check_no_new_anything(presock);
	check_signals(sleeper_pidfd, sleeper);
	check_other_calls(&a->p, probefd, nullfd);
	/* Not even to itself through a pidfd (tgkill is how it signals
	 * itself). */
	EXPECT_ERRNO(syscall(SYS_pidfd_send_signal, self_pidfd, 0, NULL, 0),
	    EPERM);

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
	struct probe_out o;
	struct stat before, after;

	if (!probe_need_landlock())
		return;
	make_walk_paths(&a.p);
	cr_assert_eq(stat(a.p.probe, &before), 0);
	probe_run(confined_child, &a, &o);
	probe_assert_ok(&o);
	/* The probe file kept its owner, mode and times. */
	cr_assert_eq(stat(a.p.probe, &after), 0);
	cr_assert_eq(after.st_mode, before.st_mode);
	cr_assert_eq(after.st_uid, before.st_uid);
	cr_assert_eq(after.st_ctim.tv_sec, before.st_ctim.tv_sec);
	cr_assert_eq(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);
}
