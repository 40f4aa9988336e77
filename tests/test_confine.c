/*
 * test_confine.c: the broker's own confinement (broker/confine.c) and the
 * launcher spawner (broker/spawner.c), observed from inside (issue 3,
 * item 7).
 *
 * Confinement cannot be undone, so every test forks a child that
 * confines itself and reports what it saw through a pipe: one line per
 * failed check ("FAIL ..."), then "DONE" (and for the broker test the
 * pids the parent needs). The parent turns those lines into assertions:
 * Criterion's own assertions must not run in a process it did not make.
 *
 * Each check tells "allowed" from "filtered" by the errno (style.md rule
 * 21): Landlock answers EACCES (EPERM for a scoped socket), the seccomp
 * filter EPERM or ENOSYS, and an allowed call succeeds.
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
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
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
#include "jobspec.h"
#include "policy.h"
#include "spawner.h"
#include "supervisor.h"

TestSuite(confine, .init = harness_setup, .fini = harness_cleanup,
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
			say("FAIL (test_confine.c:%d)", __LINE__);         \
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

static int
landlock_abi(void)
{
	return (int)syscall(SYS_landlock_create_ruleset, NULL, 0,
			    LANDLOCK_CREATE_RULESET_VERSION);
}

/* ---- confinement seen from inside --------------------------------------- */

struct paths {
	char ws[512];     /* the workspace: every right */
	char ro[512];     /* a directory with read rights only */
	char one[512];    /* a single file with every right */
	char outside[512];/* a directory with no rule */
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
	      memcmp(buf, "hello", 5) == 0, "read back %s", a);
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
	CHECK(dir != NULL, "opendir %s: %s", p->ws, strerror(errno));
	if (dir != NULL)
		closedir(dir);

	/* The file API's own moves (broker/fsapi.c): an O_TMPFILE linked
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
		EXPECT_OK(linkat(AT_FDCWD, proc, AT_FDCWD, a,
				 AT_SYMLINK_FOLLOW));
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
			  O_WRONLY | O_CREAT | O_CLOEXEC, 0600), EACCES);
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
	EXPECT_ERRNO(unlink(join(path, sizeof(path), p->ro, "readme")),
		     EACCES);
	/* The one-file rule: that file, read and written. */
	EXPECT_OK(open(p->one, O_RDWR | O_CLOEXEC));
}

static void
check_syscalls_denied(void)
{
	char *const argv[] = {(char *)(uintptr_t)"true", NULL};
	char *const envp[] = {NULL};
	struct clone_args ca;
	int sv[2];
	pid_t pid;

	EXPECT_ERRNO(execve("/bin/true", argv, envp), EPERM);
	EXPECT_ERRNO(syscall(SYS_execveat, AT_FDCWD, "/bin/true", argv, envp,
			     0), EPERM);
	EXPECT_ERRNO(socket(AF_INET, SOCK_STREAM, 0), EPERM);
	EXPECT_ERRNO(socket(AF_INET6, SOCK_DGRAM, 0), EPERM);
	EXPECT_ERRNO(socket(AF_NETLINK, SOCK_RAW, 0), EPERM);
	EXPECT_ERRNO(socket(AF_PACKET, SOCK_RAW, 0), EPERM);
	/* AF_UNIX in the low half, junk in the high half: the kernel would
	 * read AF_UNIX; the filter denies it rather than guess. */
	EXPECT_ERRNO(syscall(SYS_socket, 0x100000000L | AF_UNIX, SOCK_STREAM,
			     0), EPERM);
	/* No socket at all once set up, not even AF_UNIX. */
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), EPERM);
	EXPECT_ERRNO(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
				sv), EPERM);
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
	EXPECT_ERRNO(syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL,
			     0, 0), EPERM);
	/* A plain fork still works: the filter is not a blanket ban. */
	pid = fork();
	if (pid == 0)
		_exit(7);
	CHECK(pid > 0, "fork: %s", strerror(errno));
	if (pid > 0) {
		int st = 0;

		CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 7, "fork child status 0x%x",
		      (unsigned)st);
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
		EXPECT_ERRNO(syscall(452 /* fchmodat2 */, AT_FDCWD, f, 0777,
				     0), EPERM);
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
	EXPECT_ERRNO(utimensat(canary_path_fd, "", NULL, AT_EMPTY_PATH),
		     EPERM);
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

/* The capability sets in the /proc status text ST (confine.h): a root
 * broker keeps exactly CHOWN, DAC_OVERRIDE and FOWNER and an empty
 * bounding set; any other keeps nothing. */
static void
check_capabilities(const char *st)
{
	static const char *const sets[] = {"\nCapInh:", "\nCapPrm:",
					   "\nCapEff:", "\nCapBnd:",
					   "\nCapAmb:"};
	const unsigned long long kept = (1ULL << CAP_CHOWN) |
					(1ULL << CAP_DAC_OVERRIDE) |
					(1ULL << CAP_FOWNER);
	unsigned long long v[5];

	for (size_t i = 0; i < 5; i++) {
		const char *f = strstr(st, sets[i]);

		CHECK(f != NULL, "no %s in the status", sets[i] + 1);
		v[i] = f ? strtoull(f + strlen(sets[i]), NULL, 16) : ~0ULL;
	}
	say("note: CapInh %llx CapPrm %llx CapEff %llx CapBnd %llx "
	    "CapAmb %llx", v[0], v[1], v[2], v[3], v[4]);
	CHECK(v[0] == 0 && v[4] == 0, "inheritable %llx, ambient %llx", v[0],
	      v[4]);
	if (geteuid() == 0) {
		CHECK(v[1] == kept && v[2] == kept, "root: permitted %llx, "
		      "effective %llx, wanted %llx", v[1], v[2], kept);
		CHECK(v[3] == 0, "root: bounding set %llx", v[3]);
	} else {
		/* The bounding set of an ordinary user cannot be emptied
		 * (that needs CAP_SETPCAP) and need not be (confine.h). */
		CHECK(v[1] == 0 && v[2] == 0, "permitted %llx, effective %llx",
		      v[1], v[2]);
	}
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
	      statusfd >= 0 &&
	      listener >= 0 && tcp >= 0 && tcp2 >= 0, "setup: %s",
	      strerror(errno));
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
	      listen(unl, 4) == 0, "abstract listener: %s", strerror(errno));
	/* A client already connected to it, to be accepted afterwards. */
	early = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(early >= 0 && connect(early, (struct sockaddr *)&un, alen) == 0,
	      "early client: %s", strerror(errno));
	/* A pathname socket outside (a docker.sock), a socket to try it
	 * with, and one to try binding in the workspace. */
	memset(&pun, 0, sizeof(pun));
	pun.sun_family = AF_UNIX;
	CHECK(snprintf(pun.sun_path, sizeof(pun.sun_path), "%s/sock",
		       a->p.outside) < (int)sizeof(pun.sun_path), "long path");
	memset(&wun, 0, sizeof(wun));
	wun.sun_family = AF_UNIX;
	CHECK(snprintf(wun.sun_path, sizeof(wun.sun_path), "%s/sock",
		       a->p.ws) < (int)sizeof(wun.sun_path), "long path");
	pathl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(pathl >= 0 && bind(pathl, (struct sockaddr *)&pun,
				 sizeof(pun)) == 0 && listen(pathl, 4) == 0,
	      "listener %s: %s", pun.sun_path, strerror(errno));
	pathc = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bindme = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unc = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(pathc >= 0 && bindme >= 0 && unc >= 0, "sockets: %s",
	      strerror(errno));
	if (failures)
		return;

	rules[0] = (struct confine_rule){.fd = wsfd, .access = CONFINE_ALL};
	rules[1] = (struct confine_rule){
		.fd = rofd,
		.access = LANDLOCK_ACCESS_FS_READ_FILE |
			  LANDLOCK_ACCESS_FS_READ_DIR};
	/* A file gets CONFINE_ALL too: confine_broker must keep only the
	 * file rights, or landlock_add_rule fails with EINVAL. */
	rules[2] = (struct confine_rule){.fd = onefd, .access = CONFINE_ALL};
	n = confine_broker(rules, 3, err, sizeof(err));
	CHECK(n == 0, "confine_broker: %s (%s)", strerror(-n), err);
	if (n != 0)
		return;

	/* The kernel's view: a filter (mode 2) and no_new_privs. */
	len = pread(statusfd, st, sizeof(st) - 1, 0);
	CHECK(len > 0, "read status: %s", strerror(errno));
	st[len > 0 ? len : 0] = '\0';
	CHECK(status_field(st, "\nSeccomp:") == 2, "Seccomp: %ld",
	      status_field(st, "\nSeccomp:"));
	CHECK(status_field(st, "\nNoNewPrivs:") == 1, "NoNewPrivs: %ld",
	      status_field(st, "\nNoNewPrivs:"));
	check_capabilities(st);

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
	EXPECT_ERRNO(connect(tcp, (struct sockaddr *)&in4, sizeof(in4)),
		     EPERM);
	if (a->abi >= 4) {
		struct sockaddr_in any = {.sin_family = AF_INET};

		any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		EXPECT_ERRNO(bind(tcp2, (struct sockaddr *)&any, sizeof(any)),
			     EACCES);
	} else {
		say("note: Landlock ABI %d has no network rules", a->abi);
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
	struct child_out o;
	char *canary;
	struct stat before, after;
	char path[700];

	a.abi = landlock_abi();
	if (a.abi < 1) {
		harness_skip("this kernel has no Landlock");
		return;
	}
	make_paths(&a.p);
	cr_assert_eq(stat(a.p.canary, &before), 0);
	run_child(confined_child, &a, &o);
	assert_child_ok(&o);
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

struct nolandlock_args {
	int answer; /* the errno landlock_create_ruleset gives */
	const char *want; /* in the message */
};

static void
nolandlock_child(void *arg)
{
	struct nolandlock_args *a = arg;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	char err[512];
	int e, fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct confine_rule r = {.fd = fd, .access = CONFINE_ALL};

	/* What a kernel without Landlock answers, made with a filter. */
	CHECK(ctx != NULL && fd >= 0, "setup");
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
	CHECK(seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)a->answer),
			       SCMP_SYS(landlock_create_ruleset), 0) == 0 &&
	      seccomp_load(ctx) == 0, "filter");
	if (failures)
		return;
	e = confine_broker(&r, 1, err, sizeof(err));
	CHECK(e == -EOPNOTSUPP, "confine_broker gave %d (%s)", e, err);
	CHECK(strstr(err, "lsm=") != NULL &&
	      strstr(err, "CONFIG_SECURITY_LANDLOCK=y") != NULL &&
	      strstr(err, a->want) != NULL, "message: %s", err);
	/* Refused before any filter of its own: the seccomp mode is ours
	 * (one filter), and exec is not denied by confine_broker. */
	say("message: %s", err);
}

Test(confine, kernel_without_landlock_is_refused_with_the_fix)
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
	struct child_out o;

	if (landlock_abi() < 1) {
		harness_skip("this kernel has no Landlock");
		return;
	}
	run_child(badrule_child, NULL, &o);
	assert_child_ok(&o);
}

/* ---- a confined broker starts launchers through its spawner ------------- */

struct broker_args {
	const char *launcher;
	const char *ws;
};

struct captured {
	char data[3][1024];
	size_t len[3];
};

static void
on_output(void *arg, int stream, const uint8_t *data, size_t len)
{
	struct captured *c = arg;
	size_t room;

	if (stream != 1 && stream != 2)
		return;
	room = sizeof(c->data[stream]) - 1 - c->len[stream];
	if (len > room)
		len = room;
	memcpy(c->data[stream] + c->len[stream], data, len);
	c->len[stream] += len;
	c->data[stream][c->len[stream]] = '\0';
}

/* Runs "sh -c SCRIPT" in the confined broker; checks it ends ok and
 * printed WANT. */
static void
broker_job(struct supervisor *sup, struct policy *pol, int wsfd,
	   const char *script, const char *want)
{
	char *argv[] = {(char *)(uintptr_t)"sh", (char *)(uintptr_t)"-c",
			(char *)(uintptr_t)script, NULL};
	struct job_spec spec;
	struct job_result res;
	struct captured c;
	int e;

	memset(&c, 0, sizeof(c));
	memset(&spec, 0, sizeof(spec));
	e = jobspec_from_policy(&spec, pol, 3, argv);
	CHECK(e == 0, "jobspec: %s", strerror(-e));
	if (e != 0)
		return;
	e = supervisor_run(sup, &spec, wsfd, on_output, &c, &res);
	CHECK(e == 0, "supervisor_run: %s", strerror(-e));
	if (e == 0) {
		CHECK(res.status == JOB_OK, "job %s: %s (%s) stderr %s", script,
		      job_status_name(res.status),
		      res.detail ? res.detail : "", c.data[2]);
		CHECK(strcmp(c.data[1], want) == 0, "job output \"%s\"",
		      c.data[1]);
		job_result_clear(&res);
	}
	jobspec_release(&spec);
}

static void
broker_child(void *arg)
{
	struct broker_args *a = arg;
	struct supervisor sup;
	struct policy pol;
	struct confine_rule r;
	char err[POLICY_ERR_MAX + 256], path[600], *text;
	struct pollfd pf;
	pid_t first, holder;
	int wsfd, e;

	memset(&pol, 0, sizeof(pol));
	e = policy_load_default(&pol, err, sizeof(err));
	CHECK(e == 0, "policy: %s", err);
	e = supervisor_init_path(&sup, a->launcher, err, sizeof(err));
	CHECK(e == 0, "supervisor_init_path: %s", err);
	if (failures)
		return;
	e = supervisor_use_spawner(&sup);
	CHECK(e == 0, "supervisor_use_spawner: %s", strerror(-e));
	CHECK(sup.exe_fd == -1, "the broker kept the launcher's descriptor");
	wsfd = open(a->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(wsfd >= 0, "open workspace: %s", strerror(errno));
	if (failures)
		return;
	r = (struct confine_rule){.fd = wsfd, .access = CONFINE_ALL};
	e = confine_broker(&r, 1, err, sizeof(err));
	CHECK(e == 0, "confine_broker: %s (%s)", strerror(-e), err);
	if (e != 0)
		return;
	/* Confined for real: exec is gone. */
	EXPECT_ERRNO(execl("/bin/true", "true", (char *)NULL), EPERM);

	/* A real job; what it wrote in /work the confined broker reads. */
	broker_job(&sup, &pol, wsfd, "echo made > /work/out; echo first",
		   "first\n");
	snprintf(path, sizeof(path), "%s/out", a->ws);
	text = harness_read_file(path, NULL);
	CHECK(text != NULL && strcmp(text, "made\n") == 0,
	      "workspace file: %s", text ? text : strerror(errno));
	free(text);
	first = sup.pid;
	CHECK(first > 0, "no launcher after the first job");
	if (failures)
		return;
	/* The launcher is our child (CLONE_PARENT), alive and unreaped. */
	CHECK(waitpid(first, NULL, WNOHANG) == 0, "launcher %d is not our "
	      "running child: %s", (int)first, strerror(errno));

	/* Killed between jobs: the next job gets a new one, through the
	 * spawner (the confined broker could not exec it). */
	EXPECT_OK(kill(first, SIGKILL));
	pf = (struct pollfd){.fd = sup.pidfd, .events = POLLIN};
	CHECK(poll(&pf, 1, 5000) == 1, "the launcher did not die");
	broker_job(&sup, &pol, wsfd, "echo second", "second\n");
	CHECK(sup.restarts == 1, "restarts %u", sup.restarts);
	CHECK(sup.pid > 0 && sup.pid != first, "launcher %d after %d",
	      (int)sup.pid, (int)first);
	CHECK(waitpid(first, NULL, WNOHANG) == -1 && errno == ECHILD,
	      "the killed launcher was not reaped");
	broker_job(&sup, &pol, wsfd, "echo third", "third\n");
	CHECK(sup.restarts == 1, "restarts %u", sup.restarts);

	/* A process of ours that keeps copies of both sockets, so that
	 * our death alone does not close them: only PR_SET_PDEATHSIG can
	 * then end the spawner and the launcher. */
	holder = fork();
	if (holder == 0) {
		/* Killed by the parent; gone in 30 s whatever happens. */
		alarm(30);
		for (;;)
			pause();
	}
	CHECK(holder > 0, "fork: %s", strerror(errno));
	/* The parent checks the rest, then kills us. */
	say("PIDS %d %d %d %d", (int)getpid(), (int)sup.spawner.pid,
	    (int)sup.pid, (int)holder);
	say("DONE");
	for (;;)
		pause();
}

/* Reads "PPid:" of PID from /proc; -1 if it cannot. */
static long
ppid_of(pid_t pid)
{
	char path[64], *st;
	long v;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	st = harness_read_file(path, NULL);
	if (st == NULL)
		return -1;
	v = status_field(st, "\nPPid:");
	free(st);
	return v;
}

Test(confine, confined_broker_restarts_launchers_through_its_spawner)
{
	struct broker_args a;
	int p[2], broker_st, spfd, lfd, bpfd;
	char text[8192];
	size_t len = 0;
	const char *pids;
	int broker, spawner, launcher, holder, hfd;
	pid_t pid;

	if (landlock_abi() < 1) {
		harness_skip("this kernel has no Landlock");
		return;
	}
	a.launcher = harness_launcher();
	a.ws = harness_workspace();
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		broker_child(&a);
		_exit(1); /* only when a check failed */
	}
	close(p[1]);
	/* Until "DONE", EOF (the broker gave up) or 60 s. */
	text[0] = '\0';
	while (strstr(text, "DONE\n") == NULL) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		ssize_t n;

		if (poll(&pf, 1, 60000) != 1)
			break;
		n = read(p[0], text + len, sizeof(text) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		text[len] = '\0';
	}
	bpfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pids = strstr(text, "PIDS ");
	if (pids == NULL || strstr(text, "FAIL") != NULL) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_assert_fail("the confined broker said:\n%s", text);
	}
	cr_assert_eq(sscanf(pids, "PIDS %d %d %d %d", &broker, &spawner,
			    &launcher, &holder), 4, "%s", text);
	hfd = (int)syscall(SYS_pidfd_open, holder, 0);
	cr_assert_geq(hfd, 0, "pidfd_open holder: %s", strerror(errno));
	cr_assert_eq(broker, pid);
	/* The spawner is the broker's child; the launcher too, not the
	 * spawner's (CLONE_PARENT). */
	cr_assert_eq(ppid_of(spawner), pid, "spawner's parent");
	cr_assert_eq(ppid_of(launcher), pid, "launcher's parent");
	spfd = (int)syscall(SYS_pidfd_open, spawner, 0);
	lfd = (int)syscall(SYS_pidfd_open, launcher, 0);
	cr_assert(spfd >= 0 && lfd >= 0 && bpfd >= 0, "pidfd_open: %s",
		  strerror(errno));

	/* The broker dies: its spawner and launcher die with it
	 * (PR_SET_PDEATHSIG in both), though the holder keeps their
	 * sockets open. */
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &broker_st, 0), pid);
	cr_assert(WIFSIGNALED(broker_st) && WTERMSIG(broker_st) == SIGKILL);
	{
		struct pollfd pf[2] = {{.fd = spfd, .events = POLLIN},
				       {.fd = lfd, .events = POLLIN}};

		for (long end = harness_now_ms() + 5000;
		     harness_now_ms() < end;) {
			pf[0].revents = pf[1].revents = 0;
			poll(pf, 2, 100);
			if ((pf[0].revents & POLLIN) &&
			    (pf[1].revents & POLLIN))
				break;
		}
		/* The holder goes first, so that a failure below leaves
		 * nothing holding Criterion's pipes. */
		cr_assert_eq(syscall(SYS_pidfd_send_signal, hfd, SIGKILL, NULL,
				     0), 0);
		close(hfd);
		cr_assert(pf[0].revents & POLLIN,
			  "the spawner %d outlived its broker", spawner);
		cr_assert(pf[1].revents & POLLIN,
			  "the launcher %d outlived its broker", launcher);
	}
	close(spfd);
	close(lfd);
	close(bpfd);
	close(p[0]);
}

/* ---- the spawner's own contract ----------------------------------------- */

/* A request that is not exactly one byte ends the spawner: the next
 * launch reports it gone, and it has been reaped. */
Test(confine, spawner_ends_on_a_malformed_request)
{
	struct spawner sp;
	int fd, sock = -1, pidfd = -1, e;
	pid_t pid = 0, spid;
	struct pollfd pf;

	fd = open(harness_launcher(), O_PATH | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	spawner_clear(&sp);
	cr_assert_eq(spawner_start(&sp, fd), 0);
	close(fd);
	spid = sp.pid;
	cr_assert_gt(spid, 0);
	cr_assert_eq(send(sp.sock, "LL", 2, MSG_NOSIGNAL), 2);
	pf = (struct pollfd){.fd = sp.pidfd, .events = POLLIN};
	cr_assert_eq(poll(&pf, 1, 5000), 1, "the spawner is still running");
	e = spawner_launch(&sp, (uint64_t)harness_now_ms() + 5000, &sock,
			   &pidfd, &pid);
	cr_assert_eq(e, -ENOTCONN, "spawner_launch: %d (%s)", e, strerror(-e));
	cr_assert_eq(sp.pid, 0);
	cr_assert_eq(sp.sock, -1);
	cr_assert_eq(waitpid(spid, NULL, WNOHANG), -1);
	cr_assert_eq(errno, ECHILD);
	spawner_stop(&sp);
}

/* The launcher a spawner starts gets exactly stdin, stdout, stderr and
 * its socket at 3 (spawner_exec_launcher), and is our child. Checked
 * with the fake launcher that answers nothing, which keeps them. */
Test(confine, spawned_launcher_gets_only_its_socket)
{
	struct spawner sp;
	int fd, sock = -1, pidfd = -1, e, n = 0;
	char dir[64];
	pid_t pid = 0;
	DIR *d;
	struct dirent *de;

	fd = open(harness_helper("fake-launcher-silent"), O_PATH | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	spawner_clear(&sp);
	cr_assert_eq(spawner_start(&sp, fd), 0);
	close(fd);
	e = spawner_launch(&sp, (uint64_t)harness_now_ms() + 5000, &sock,
			   &pidfd, &pid);
	cr_assert_eq(e, 0, "spawner_launch: %s", strerror(-e));
	cr_assert_gt(pid, 0);
	cr_assert_eq(ppid_of(pid), getpid());
	/* Give the exec a moment, then list its descriptors. */
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	for (long end = harness_now_ms() + 2000; harness_now_ms() < end;) {
		char exe[PATH_MAX], link[64];
		ssize_t k;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		k = readlink(link, exe, sizeof(exe) - 1);
		if (k > 0 && (exe[k] = '\0', strstr(exe, "fake-launcher")))
			break;
		usleep(10000);
	}
	d = opendir(dir);
	cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		n++;
		cr_assert(atoi(de->d_name) <= SPAWNER_LAUNCHER_FD,
			  "the launcher has descriptor %s", de->d_name);
	}
	closedir(d);
	cr_assert_eq(n, 4);
	cr_assert_eq(syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0),
		     0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	close(sock);
	close(pidfd);
	spawner_stop(&sp);
	cr_assert_eq(sp.pid, 0);
}
