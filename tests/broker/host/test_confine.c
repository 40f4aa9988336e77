/*
 * test_confine.c: the broker's own confinement (broker/host/confine.c),
 * observed from inside (issue 3, item 7). The launcher spawner a
 * confined broker starts launchers through is in test_confine_spawner.c.
 *
 * Each test forks a child that confines itself and reports what it saw
 * (tests/lib/probe.h). Landlock answers EACCES (EPERM for a scoped socket),
 * the seccomp filter EPERM or ENOSYS, and an allowed call succeeds.
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534, like the other jail suites.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <time.h>
#include <utime.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine.h"
#include "harness.h"
#include "probe.h"

TestSuite(confine, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 90);

/* ---- confinement seen from inside --------------------------------------- */

struct paths {
	char ws[512]; /* the workspace: every right */
	char ro[512]; /* a directory with read rights only */
	char one[512]; /* a single file with every right */
	char outside[512]; /* a directory with no rule */
	char canary[600]; /* a file in it */
};

static void
make_paths(struct paths *p)
{
	const char *tmp = harness_tmpdir("stockade-confine");
	char path[700];

	snprintf(p->ws, sizeof(p->ws), "%s", harness_workspace());
	snprintf(p->outside, sizeof(p->outside), "%s", tmp);
	snprintf(p->canary, sizeof(p->canary), "%s/canary", tmp);
	harness_write_file(p->canary, "canary: do not touch\n");
	snprintf(p->ro, sizeof(p->ro), "%s",
	    harness_tmpdir("stockade-confine-ro"));
	snprintf(path, sizeof(path), "%s/readme", p->ro);
	harness_write_file(path, "read me\n");
	snprintf(p->one, sizeof(p->one), "%s/one",
	    harness_tmpdir("stockade-confine-one"));
	harness_write_file(p->one, "one file\n");
}

static int
open_at(const char *dir, const char *name, int flags)
{
	char path[1200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return open(path, flags | O_CLOEXEC, 0600);
}

static char *
join(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

static void
check_workspace_rights(const struct paths *p)
{
	char a[1200], b[1200], d[1200], db[1200], s[1200], buf[16];
	int fd;
	DIR *dir;

	join(a, sizeof(a), p->ws, "a");
	join(b, sizeof(b), p->ws, "b");
	join(d, sizeof(d), p->ws, "d");
	join(db, sizeof(db), p->ws, "d/b");
	join(s, sizeof(s), p->ws, "s");
	fd = open(a, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "create %s: %s", a, strerror(errno));
	if (fd >= 0) {
		CHECK(write(fd, "hello", 5) == 5, "write: %s", strerror(errno));
		close(fd);
	}
	fd = open(a, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) == 5 &&
		memcmp(buf, "hello", 5) == 0,
	    "read back %s", a);
	if (fd >= 0)
		close(fd);
	EXPECT_OK(truncate(a, 2));
	EXPECT_OK(rename(a, b));
	EXPECT_OK(mkdir(d, 0700));
	/* Across directories: needs REFER. */
	EXPECT_OK(rename(b, db));
	EXPECT_OK(symlink("d/b", s));
	EXPECT_OK(unlink(s));
	EXPECT_OK(unlink(db));
	EXPECT_OK(rmdir(d));
	dir = opendir(p->ws);
	/* No path in the message: GCC 12 with -fsanitize=address warns
	 * (-Wformat-overflow) that p->ws, an array, is a null %s here. */
	CHECK(dir != NULL, "opendir of the workspace: %s", strerror(errno));
	if (dir != NULL)
		closedir(dir);

	/* The file API's own moves (broker/fs/fsapi.c): an O_TMPFILE linked
	 * into place through /proc/self/fd, a file reopened through its
	 * descriptor's magic link (Landlock judges the file the link names,
	 * which is in the workspace) and given its mode and owner with
	 * fchmod and fchown; chmod of the link, a path, is denied. */
	fd = open(p->ws, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "O_TMPFILE in the workspace: %s", strerror(errno));
	if (fd >= 0) {
		char proc[64];
		int pfd;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		EXPECT_OK(
		    linkat(AT_FDCWD, proc, AT_FDCWD, a, AT_SYMLINK_FOLLOW));
		close(fd);
		pfd = open(a, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		CHECK(pfd >= 0, "O_PATH %s: %s", a, strerror(errno));
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		fd = open(proc, O_RDONLY | O_CLOEXEC);
		CHECK(fd >= 0, "reopen %s: %s", proc, strerror(errno));
		EXPECT_ERRNO(chmod(proc, 0640), EPERM);
		if (fd >= 0) {
			EXPECT_OK(fchmod(fd, 0640));
			EXPECT_OK(fchown(fd, geteuid() == 0 ? 65534 : geteuid(),
			    geteuid() == 0 ? 65534 : getegid()));
			/* futimens is utimensat with a NULL path: allowed. */
			EXPECT_OK(futimens(fd, NULL));
			close(fd);
		}
		EXPECT_OK(unlink(a));
	}
}

static void
check_outside_denied(const struct paths *p, int canary_path_fd)
{
	char path[1200];

	/* A descriptor of the canary held from before is no way around:
	 * reopening it through its magic link is judged on the canary. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", canary_path_fd);
	EXPECT_ERRNO(open(path, O_RDONLY | O_CLOEXEC), EACCES);

	/* The canary: neither read nor written nor replaced. */
	EXPECT_ERRNO(open(p->canary, O_RDONLY | O_CLOEXEC), EACCES);
	EXPECT_ERRNO(open(p->canary, O_WRONLY | O_CLOEXEC), EACCES);
	EXPECT_ERRNO(truncate(p->canary, 0), EACCES);
	EXPECT_ERRNO(unlink(p->canary), EACCES);
	EXPECT_ERRNO(opendir(p->outside) == NULL ? -1 : 0, EACCES);
	/* Nothing new anywhere outside. */
	EXPECT_ERRNO(open_at(p->outside, "new", O_WRONLY | O_CREAT), EACCES);
	EXPECT_ERRNO(open("/tmp/stockade-confine-escape",
			 O_WRONLY | O_CREAT | O_CLOEXEC, 0600),
	    EACCES);
	EXPECT_ERRNO(mkdir("/tmp/stockade-confine-escape", 0700), EACCES);
	/* Into the workspace by a hard link: Landlock answers EXDEV when
	 * only the REFER right is missing, EACCES otherwise. */
	errno = 0;
	CHECK(link(p->canary, join(path, sizeof(path), p->ws, "x")) == -1 &&
		(errno == EXDEV || errno == EACCES),
	    "link of the canary into the workspace: %s", strerror(errno));
	EXPECT_ERRNO(open("/etc/passwd", O_RDONLY | O_CLOEXEC), EACCES);
	/* /proc is outside as well. */
	EXPECT_ERRNO(open("/proc/self/status", O_RDONLY | O_CLOEXEC), EACCES);
	/* The read-only rule: read, nothing else. */
	EXPECT_OK(open_at(p->ro, "readme", O_RDONLY));
	EXPECT_ERRNO(open_at(p->ro, "readme", O_WRONLY), EACCES);
	EXPECT_ERRNO(open_at(p->ro, "new", O_WRONLY | O_CREAT), EACCES);
	EXPECT_ERRNO(unlink(join(path, sizeof(path), p->ro, "readme")), EACCES);
	/* The one-file rule: that file, read and written. */
	EXPECT_OK(open(p->one, O_RDWR | O_CLOEXEC));
}

static void
check_syscalls_denied(void)
{
	char *const argv[] = {(char *)(uintptr_t) "true", NULL};
	char *const envp[] = {NULL};
	struct clone_args ca;
	int sv[2];
	pid_t pid;

	EXPECT_ERRNO(execve("/bin/true", argv, envp), EPERM);
	EXPECT_ERRNO(syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp,
			 0),
	    EPERM);
	EXPECT_ERRNO(socket(AF_INET, SOCK_STREAM, 0), EPERM);
	EXPECT_ERRNO(socket(AF_INET6, SOCK_DGRAM, 0), EPERM);
	EXPECT_ERRNO(socket(AF_NETLINK, SOCK_RAW, 0), EPERM);
	EXPECT_ERRNO(socket(AF_PACKET, SOCK_RAW, 0), EPERM);
	/* AF_UNIX in the low half, junk in the high half: the kernel would
	 * read AF_UNIX; the filter denies it rather than guess. */
	EXPECT_ERRNO(syscall(SYS_socket, 0x100000000L | AF_UNIX, SOCK_STREAM,
			 0),
	    EPERM);
	/* No socket at all once set up, not even AF_UNIX. */
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
	    EPERM);
	EXPECT_ERRNO(ptrace(PTRACE_TRACEME, 0, NULL, NULL), EPERM);
	EXPECT_ERRNO(unshare(CLONE_NEWUSER), EPERM);
	EXPECT_ERRNO(unshare(CLONE_NEWNS), EPERM);
	EXPECT_ERRNO(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0),
	    EPERM);
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	EXPECT_ERRNO(syscall(SYS_clone3, &ca, sizeof(ca)), ENOSYS);
	EXPECT_ERRNO(mount("none", "/tmp", "tmpfs", 0, NULL), EPERM);
	EXPECT_ERRNO(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	EXPECT_ERRNO(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_userfaultfd, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
	EXPECT_ERRNO(syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0,
			 0),
	    EPERM);
	/* A plain fork still works: the filter is not a blanket ban. */
	pid = fork();
	if (pid == 0)
		_exit(7);
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid > 0) {
		int st = 0;

		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
			WEXITSTATUS(st) == 7,
		    "fork child status 0x%x", (unsigned)st);
	}
}

/*
 * What seccomp denies that Landlock does not cover (confine.h): the
 * metadata calls that take a path, tried on the canary outside and on a
 * file in the workspace alike; device nodes; host administration.
 */
static void
check_more_denied(const struct paths *p, int canary_path_fd)
{
	const char *c = p->canary;
	char in[1200], dev[1200];
	struct timeval tv[2] = {{0, 0}, {0, 0}};
	struct timespec ts = {0, 0};
	struct utimbuf ub = {0, 0};
	struct timex tx;
	uid_t u = geteuid() == 0 ? 65534 : geteuid();
	gid_t g = geteuid() == 0 ? 65534 : getegid();
	int fd;

	join(in, sizeof(in), p->ws, "meta");
	fd = open(in, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	CHECK(fd >= 0, "create %s: %s", in, strerror(errno));
	for (int i = 0; i < 2; i++) {
		const char *f = i == 0 ? c : in;

		EXPECT_ERRNO(chown(f, u, g), EPERM);
		EXPECT_ERRNO(lchown(f, u, g), EPERM);
		EXPECT_ERRNO(fchownat(AT_FDCWD, f, u, g, 0), EPERM);
		EXPECT_ERRNO(chmod(f, 0777), EPERM);
		EXPECT_ERRNO(fchmodat(AT_FDCWD, f, 0777, 0), EPERM);
		EXPECT_ERRNO(syscall(452 /* fchmodat2 */, AT_FDCWD, f, 0777, 0),
		    EPERM);
		EXPECT_ERRNO(setxattr(f, "user.x", "1", 1, 0), EPERM);
		EXPECT_ERRNO(lsetxattr(f, "user.x", "1", 1, 0), EPERM);
		EXPECT_ERRNO(removexattr(f, "user.x"), EPERM);
		EXPECT_ERRNO(lremovexattr(f, "user.x"), EPERM);
		EXPECT_ERRNO(utime(f, &ub), EPERM);
		EXPECT_ERRNO(utimes(f, tv), EPERM);
		EXPECT_ERRNO(syscall(SYS_futimesat, AT_FDCWD, f, tv), EPERM);
		EXPECT_ERRNO(utimensat(AT_FDCWD, f, NULL, 0), EPERM);
	}
	/* Through the canary's O_PATH descriptor: the empty path is still
	 * a path to the filter; fchown itself refuses O_PATH. */
	EXPECT_ERRNO(fchownat(canary_path_fd, "", u, g, AT_EMPTY_PATH), EPERM);
	EXPECT_ERRNO(utimensat(canary_path_fd, "", NULL, AT_EMPTY_PATH), EPERM);
	EXPECT_ERRNO(fchown(canary_path_fd, u, g), EBADF);
	/* chmod of a path with the owner's bits only: denied to root,
	 * allowed otherwise (shared/fsutil.c's removal needs it). */
	if (geteuid() == 0) {
		EXPECT_ERRNO(chmod(in, 0700), EPERM);
		EXPECT_ERRNO(fchmodat(AT_FDCWD, in, 0600, 0), EPERM);
	} else {
		EXPECT_OK(chmod(in, 0700));
		EXPECT_OK(fchmodat(AT_FDCWD, in, 0600, 0));
		EXPECT_ERRNO(chmod(in, 04700), EPERM);
		EXPECT_ERRNO(chmod(in, 0710), EPERM);
		EXPECT_ERRNO(chmod(in, 01700), EPERM);
	}
	if (fd >= 0) {
		/* Descriptor forms: owner and mode stay, xattrs do not. */
		EXPECT_OK(fchmod(fd, 0640));
		EXPECT_OK(fchown(fd, u, g));
		EXPECT_ERRNO(fsetxattr(fd, "user.x", "1", 1, 0), EPERM);
		EXPECT_ERRNO(fremovexattr(fd, "user.x"), EPERM);
		close(fd);
	}
	EXPECT_OK(unlink(in));

	/* No device node, fifo or socket file, in the workspace or not. */
	join(dev, sizeof(dev), p->ws, "sda");
	EXPECT_ERRNO(mknodat(AT_FDCWD, dev, S_IFBLK | 0600, makedev(8, 0)),
	    EPERM);
	EXPECT_ERRNO(mknod(dev, S_IFCHR | 0600, makedev(1, 3)), EPERM);
	EXPECT_ERRNO(mkfifo(dev, 0600), EPERM);
	CHECK(access(dev, F_OK) == -1 && errno == ENOENT, "%s was made", dev);

	/* Host administration. */
	EXPECT_ERRNO(sethostname("x", 1), EPERM);
	EXPECT_ERRNO(setdomainname("x", 1), EPERM);
	EXPECT_ERRNO(settimeofday(tv, NULL), EPERM);
	EXPECT_ERRNO(clock_settime(CLOCK_REALTIME, &ts), EPERM);
	memset(&tx, 0, sizeof(tx));
	EXPECT_ERRNO(adjtimex(&tx), EPERM);
	EXPECT_ERRNO(clock_adjtime(CLOCK_REALTIME, &tx), EPERM);
	EXPECT_ERRNO(syscall(SYS_iopl, 3), EPERM);
	EXPECT_ERRNO(syscall(SYS_ioperm, 0x80, 1, 1), EPERM);
}

struct confined_args {
	struct paths p;
	int abi;
};

static void
confined_child(void *arg)
{
	struct confined_args *a = arg;
	struct sockaddr_in in4;
	struct sockaddr_un un;
	socklen_t alen = sizeof(in4);
	char err[512], st[4096], abstract[64], hex[13];
	int wsfd, rofd, onefd, statusfd, tcp, tcp2, listener, unl, unc, n;
	int canaryfd, pathl, pathc, bindme, early;
	struct sockaddr_un pun, wun;
	struct confine_rule rules[3];
	ssize_t len;

	/* Before confinement: the descriptors the rules name, /proc's
	 * status (its path is outside every rule afterwards), a TCP
	 * listener and two TCP sockets, an abstract unix listener. */
	wsfd = open(a->p.ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	rofd = open(a->p.ro, O_PATH | O_DIRECTORY | O_CLOEXEC);
	onefd = open(a->p.one, O_PATH | O_CLOEXEC);
	canaryfd = open(a->p.canary, O_PATH | O_CLOEXEC);
	statusfd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	tcp2 = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&in4, 0, sizeof(in4));
	in4.sin_family = AF_INET;
	in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(wsfd >= 0 && rofd >= 0 && onefd >= 0 && canaryfd >= 0 &&
		statusfd >= 0 && listener >= 0 && tcp >= 0 && tcp2 >= 0,
	    "setup: %s", strerror(errno));
	CHECK(bind(listener, (struct sockaddr *)&in4, sizeof(in4)) == 0 &&
		listen(listener, 4) == 0 &&
		getsockname(listener, (struct sockaddr *)&in4, &alen) == 0,
	    "TCP listener: %s", strerror(errno));
	harness_random_hex(hex, sizeof(hex));
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	n = snprintf(abstract, sizeof(abstract), "stockade-confine-%s", hex);
	memcpy(un.sun_path + 1, abstract, (size_t)n);
	alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    (size_t)n);
	unl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(unl >= 0 && bind(unl, (struct sockaddr *)&un, alen) == 0 &&
		listen(unl, 4) == 0,
	    "abstract listener: %s", strerror(errno));
	/* A client already connected to it, to be accepted afterwards. */
	early = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(early >= 0 && connect(early, (struct sockaddr *)&un, alen) == 0,
	    "early client: %s", strerror(errno));
	/* A pathname socket outside (a docker.sock), a socket to try it
	 * with, and one to try binding in the workspace. */
	memset(&pun, 0, sizeof(pun));
	pun.sun_family = AF_UNIX;
	CHECK(snprintf(pun.sun_path, sizeof(pun.sun_path), "%s/sock",
		  a->p.outside) < (int)sizeof(pun.sun_path),
	    "long path");
	memset(&wun, 0, sizeof(wun));
	wun.sun_family = AF_UNIX;
	CHECK(snprintf(wun.sun_path, sizeof(wun.sun_path), "%s/sock", a->p.ws) <
		(int)sizeof(wun.sun_path),
	    "long path");
	pathl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(pathl >= 0 &&
		bind(pathl, (struct sockaddr *)&pun, sizeof(pun)) == 0 &&
		listen(pathl, 4) == 0,
	    "listener %s: %s", pun.sun_path, strerror(errno));
	pathc = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bindme = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unc = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(pathc >= 0 && bindme >= 0 && unc >= 0, "sockets: %s",
	    strerror(errno));
	if (probe_failures)
		return;

	rules[0] = (struct confine_rule){.fd = wsfd, .access = CONFINE_ALL};
	rules[1] = (struct confine_rule){.fd = rofd,
	    .access = LANDLOCK_ACCESS_FS_READ_FILE |
		LANDLOCK_ACCESS_FS_READ_DIR};
	/* A file gets CONFINE_ALL too: confine_broker must keep only the
	 * file rights, or landlock_add_rule fails with EINVAL. */
	rules[2] = (struct confine_rule){.fd = onefd, .access = CONFINE_ALL};
	n = confine_broker(rules, 3, err, sizeof(err));
	CHECK(n == 0, "confine_broker: %s (%s)", strerror(-n), err);
	if (n != 0)
		return;

	/* The kernel's view: a filter, no_new_privs, capabilities. */
	len = pread(statusfd, st, sizeof(st) - 1, 0);
	CHECK(len > 0, "read status: %s", strerror(errno));
	st[len > 0 ? len : 0] = '\0';
	/* A root broker keeps exactly CHOWN, DAC_OVERRIDE and FOWNER
	 * (confine.h). */
	probe_check_confined(st,
	    (1ULL << CAP_CHOWN) | (1ULL << CAP_DAC_OVERRIDE) |
		(1ULL << CAP_FOWNER));

	check_workspace_rights(&a->p);
	check_outside_denied(&a->p, canaryfd);
	check_syscalls_denied();
	check_more_denied(&a->p, canaryfd);

	/* A host pathname socket is out of reach, even with a socket made
	 * before; no socket file is made in the workspace (Landlock's
	 * MAKE_SOCK is not granted); a connection already waiting on the
	 * listener is still accepted. */
	EXPECT_ERRNO(connect(pathc, (struct sockaddr *)&pun, sizeof(pun)),
	    EPERM);
	EXPECT_ERRNO(bind(bindme, (struct sockaddr *)&wun, sizeof(wun)),
	    EACCES);
	EXPECT_OK(accept4(unl, NULL, NULL, SOCK_CLOEXEC));
	CHECK(access(wun.sun_path, F_OK) == -1, "%s was made", wun.sun_path);

	/* connect is denied outright (seccomp, EPERM), on a TCP socket made
	 * before confinement too; Landlock's network rules (ABI 4) still
	 * show in bind, which the filter leaves to them. */
	EXPECT_ERRNO(connect(tcp, (struct sockaddr *)&in4, sizeof(in4)), EPERM);
	if (a->abi >= 4) {
		struct sockaddr_in any = {.sin_family = AF_INET};

		any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		EXPECT_ERRNO(bind(tcp2, (struct sockaddr *)&any, sizeof(any)),
		    EACCES);
	} else {
		probe_say("note: Landlock ABI %d has no network rules", a->abi);
	}
	/* An abstract socket is out of reach as well (connect denied;
	 * from ABI 6 Landlock's scoping would refuse it too); signals are
	 * not scoped, so the parent can be signalled. */
	EXPECT_ERRNO(connect(unc, (struct sockaddr *)&un, alen), EPERM);
	EXPECT_OK(kill(getppid(), 0));
}

Test(confine, confined_child_sees_only_its_workspace)
{
	struct confined_args a;
	struct probe_out o;
	char *canary;
	struct stat before, after;
	char path[700];

	if (!probe_need_landlock())
		return;
	a.abi = probe_landlock_abi();
	make_paths(&a.p);
	cr_assert_eq(stat(a.p.canary, &before), 0);
	probe_run(confined_child, &a, &o);
	probe_assert_ok(&o);
	/* Nothing outside changed, nothing was made. Its times first:
	 * reading it here would move its atime (relatime: the first read
	 * after a write does). */
	cr_assert_eq(stat(a.p.canary, &after), 0);
	canary = harness_read_file(a.p.canary, NULL);
	cr_assert_not_null(canary);
	cr_assert_str_eq(canary, "canary: do not touch\n");
	free(canary);
	cr_assert_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
	cr_assert_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	cr_assert_eq(after.st_nlink, 1);
	/* Neither its owner, nor its mode, nor its times. */
	cr_assert_eq(after.st_uid, before.st_uid);
	cr_assert_eq(after.st_gid, before.st_gid);
	cr_assert_eq(after.st_mode, before.st_mode);
	cr_assert_eq(after.st_ctim.tv_sec, before.st_ctim.tv_sec);
	cr_assert_eq(after.st_ctim.tv_nsec, before.st_ctim.tv_nsec);
	cr_assert_eq(after.st_atim.tv_sec, before.st_atim.tv_sec);
	snprintf(path, sizeof(path), "%s/new", a.p.outside);
	cr_assert_eq(access(path, F_OK), -1);
	cr_assert_eq(access("/tmp/stockade-confine-escape", F_OK), -1);
}

/* ---- no Landlock: a refusal with the fix -------------------------------- */

static void
nolandlock_child(const struct probe_no_landlock *k)
{
	char err[512];
	int e, fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct confine_rule r = {.fd = fd, .access = CONFINE_ALL};

	CHECK(fd >= 0, "open /: %s", strerror(errno));
	e = confine_broker(&r, 1, err, sizeof(err));
	probe_check_refusal(k, e, err, "broker");
}

Test(confine, kernel_without_landlock_is_refused_with_the_fix)
{
	probe_run_without_landlock(nolandlock_child);
}

static void
badrule_child(void *arg)
{
	struct confine_rule r = {.fd = 1000, .access = CONFINE_ALL};
	char err[512];
	int e;

	(void)arg;
	close(1000);
	e = confine_broker(&r, 1, err, sizeof(err));
	CHECK(e == -EBADF, "confine_broker gave %d (%s)", e, err);
	CHECK(strstr(err, "descriptor 1000") != NULL, "message: %s", err);
}

Test(confine, a_rule_on_a_closed_descriptor_is_an_error)
{
	struct probe_out o;

	if (!probe_need_landlock())
		return;
	probe_run(badrule_child, NULL, &o);
	probe_assert_ok(&o);
}
