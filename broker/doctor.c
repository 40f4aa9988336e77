/*
 * doctor.c: the probes of doctor.h, the verdict, and its per-boot cache.
 * The output (text and JSON) is in cmd_doctor.c.
 *
 * Probes that change the process (a namespace, a seccomp filter, a
 * Landlock domain) run in a child made by run_probe, which reports one
 * line of text through a pipe and its outcome as the exit status.
 */
#include "doctor.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "fsutil.h"
#include "preflight.h"

/* Seconds a probe child may take before SIGALRM ends it. */
#define PROBE_SECONDS 5
/* The errno the probe filters answer with: one no real getppid returns. */
#define PROBE_ERRNO ENOTUNIQ
/* The Landlock ABI that has every rule type the jail uses (ABI 6: scoped
 * abstract unix sockets and signals; landlock(7)). */
#define LANDLOCK_FULL_ABI 6

enum {
	C_KERNEL, C_USERNS, C_NAMESPACES, C_PROC, C_OPENAT2, C_SECCOMP,
	C_LANDLOCK, C_NOTIFY, C_CGROUP,
};

static const struct {
	const char *name, *layer;
	bool required;
} check_defs[DOCTOR_NCHECKS] = {
	[C_KERNEL] = {"kernel", "kernel", false},
	[C_USERNS] = {"user_namespaces", "unprivileged user namespaces", true},
	[C_NAMESPACES] = {"namespaces", "pid, net and mount namespaces", true},
	[C_PROC] = {"proc_mount", "/proc in a user namespace", true},
	[C_OPENAT2] = {"openat2", "openat2 (RESOLVE_BENEATH)", true},
	[C_SECCOMP] = {"seccomp", "seccomp filter", true},
	[C_LANDLOCK] = {"landlock", "Landlock", true},
	[C_NOTIFY] = {"seccomp_notify", "seccomp user notification", false},
	[C_CGROUP] = {"cgroup", "cgroup v2 delegation", false},
};

/* "EPERM (Operation not permitted)" for errno E. */
static const char *
errname(int e, char *buf, size_t len)
{
	const char *n = strerrorname_np(e);

	snprintf(buf, len, "%s (%s)", n != NULL ? n : "?", strerror(e));
	return buf;
}

/* Sets C's outcome; FMT formats the observation. */
static void __attribute__((format(printf, 3, 4)))
set(struct doctor_check *c, enum doctor_status st, const char *fmt, ...)
{
	va_list ap;

	c->ran = true;
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->observed, sizeof(c->observed), fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 2, 3)))
set_fix(struct doctor_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->fix, sizeof(c->fix), fmt, ap);
	va_end(ap);
}

/* Reads the small file PATH into BUF (LEN bytes, NUL-terminated, trailing
 * newline dropped). Returns its length or a negative errno. */
static ssize_t
read_small(int dirfd, const char *path, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC |
					O_NOCTTY | O_NONBLOCK);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	while (got > 0 && buf[got - 1] == '\n')
		got--;
	buf[got] = '\0';
	return (ssize_t)got;
}

/* An integer sysctl as text, "absent" when it is not there (a copy of
 * preflight.c's read_sysctl, which is static there). */
static const char *
sysctl_text(const char *path, char *buf, size_t len)
{
	if (read_small(AT_FDCWD, path, buf, len) <= 0)
		snprintf(buf, len, "absent");
	return buf;
}

/* ---- probes in a child ------------------------------------------------- */

typedef int (*probe_fn)(char *msg, size_t len);

/*
 * Runs FN in a child (alarm PROBE_SECONDS), which writes its message MSG
 * to a pipe and exits with FN's result. Returns that result (0: the probe
 * passed), or -1 with MSG saying why the child did not report (killed by
 * a signal: a container's seccomp profile may answer with SIGSYS).
 */
static int
run_probe(probe_fn fn, char *msg, size_t len)
{
	int p[2], st, r;
	size_t got = 0;
	ssize_t n;
	pid_t pid;
	char e[96];

	msg[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(msg, len, "pipe2: %s", errname(errno, e, sizeof(e)));
		return -1;
	}
	if ((pid = fork()) < 0) {
		snprintf(msg, len, "fork: %s", errname(errno, e, sizeof(e)));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		alarm(PROBE_SECONDS);
		r = fn(msg, len);
		(void)write_all(p[1], msg, strlen(msg));
		_exit(r < 0 || r > 125 ? 125 : r);
	}
	close(p[1]);
	while (got + 1 < len && (n = read(p[0], msg + got, len - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	msg[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	snprintf(msg + got, len - got, "%sthe probe was killed by SIG%s",
		 got > 0 ? "; " : "", sigabbrev_np(WTERMSIG(st)) != NULL ?
		 sigabbrev_np(WTERMSIG(st)) : "?");
	return -1;
}

/* Writes TEXT into the /proc/self file NAME. */
static int
write_proc(const char *name, const char *text)
{
	_cleanup_close_ int fd = open(name, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return write_all(fd, text, strlen(text));
}

/* In a fresh user namespace, maps 0 to the caller's UID and GID as the
 * launcher does (user_namespaces(7): setgroups denied first). */
static int
map_self(uid_t uid, gid_t gid, char *msg, size_t len)
{
	char map[64], e[96];
	int r;

	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	if ((r = write_proc("/proc/self/setgroups", "deny")) == 0 &&
	    (r = write_proc("/proc/self/uid_map", map)) == 0) {
		snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
		r = write_proc("/proc/self/gid_map", map);
	}
	if (r < 0)
		snprintf(msg, len, "cannot write the id maps of a new user "
			 "namespace: %s", errname(-r, e, sizeof(e)));
	return r;
}

static int
probe_namespaces(char *msg, size_t len)
{
	static const struct {
		int flag;
		const char *name;
	} ns[] = {
		{CLONE_NEWNS, "CLONE_NEWNS"}, {CLONE_NEWPID, "CLONE_NEWPID"},
		{CLONE_NEWNET, "CLONE_NEWNET"}, {CLONE_NEWIPC, "CLONE_NEWIPC"},
		{CLONE_NEWUTS, "CLONE_NEWUTS"},
		{CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
	};
	size_t o = 0;
	char e[96];

	if (unshare(CLONE_NEWUSER) < 0) {
		snprintf(msg, len, "unshare(CLONE_NEWUSER): %s",
			 errname(errno, e, sizeof(e)));
		return 1;
	}
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		if (unshare(ns[i].flag) == 0 || o >= len)
			continue;
		o += (size_t)snprintf(msg + o, len - o, "%sunshare(%s): %s",
				      o > 0 ? "; " : "", ns[i].name,
				      errname(errno, e, sizeof(e)));
	}
	if (o > 0)
		return 1;
	snprintf(msg, len, "a child in a new user namespace created mount, "
		 "pid, network, ipc, uts and cgroup namespaces");
	return 0;
}

static int
probe_proc(char *msg, size_t len)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int st;
	pid_t pid;
	char e[96];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0) {
		snprintf(msg, len, "unshare(CLONE_NEWUSER|CLONE_NEWNS|"
			 "CLONE_NEWPID): %s", errname(errno, e, sizeof(e)));
		return 1;
	}
	if (map_self(uid, gid, msg, len) < 0)
		return 1;
	/* Nothing mounted here may reach the host's mount namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		snprintf(msg, len, "making the new mount namespace private: %s",
			 errname(errno, e, sizeof(e)));
		return 1;
	}
	/* proc shows the mounter's active pid namespace: mount it from pid
	 * 1 of the new one, as the jail's init does. */
	if ((pid = fork()) < 0) {
		snprintf(msg, len, "fork: %s", errname(errno, e, sizeof(e)));
		return 1;
	}
	if (pid == 0)
		_exit(mount("proc", "/proc", "proc",
			    MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0 ?
		      0 : errno & 0xff);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		snprintf(msg, len, "pid 1 of a new pid namespace, in a new user "
			 "namespace, mounted a fresh /proc");
		return 0;
	}
	if (WIFEXITED(st))
		snprintf(msg, len, "mount(\"proc\") as pid 1 of a new pid "
			 "namespace: %s", errname(WEXITSTATUS(st), e, sizeof(e)));
	else
		snprintf(msg, len, "mount(\"proc\") as pid 1 of a new pid "
			 "namespace: killed by SIG%s",
			 sigabbrev_np(WTERMSIG(st)) != NULL ?
			 sigabbrev_np(WTERMSIG(st)) : "?");
	return 1;
}

static int
probe_seccomp(char *msg, size_t len)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = ctx == NULL ? -ENOMEM : 0;
	char e[96];
	long v;

	/* libseccomp sets no_new_privs itself (SCMP_FLTATR_CTL_NNP). */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(PROBE_ERRNO),
				     SCMP_SYS(getppid), 0);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0) {
		snprintf(msg, len, "loading a seccomp filter: %s",
			 errname(-r, e, sizeof(e)));
		return 1;
	}
	errno = 0;
	v = syscall(SYS_getppid);
	if (v != -1 || errno != PROBE_ERRNO) {
		snprintf(msg, len, "a seccomp filter was loaded but did not "
			 "act (getppid gave %ld, %s)", v,
			 errname(errno, e, sizeof(e)));
		return 1;
	}
	snprintf(msg, len, "a filter loaded in a child (libseccomp API "
		 "level %u) answered getppid with the errno it chose",
		 seccomp_api_get());
	return 0;
}

static int
probe_notify(char *msg, size_t len)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	struct pollfd pfd = {.events = POLLIN};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = ctx == NULL ? -ENOMEM : 0, st;
	char e[96];
	pid_t pid;

	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid), 0);
	if (r == 0)
		r = seccomp_load(ctx);  /* SECCOMP_FILTER_FLAG_NEW_LISTENER */
	if (r == 0 && (pfd.fd = seccomp_notify_fd(ctx)) < 0)
		r = pfd.fd;
	if (r < 0) {
		snprintf(msg, len, "a filter with SECCOMP_RET_USER_NOTIF: %s",
			 errname(-r, e, sizeof(e)));
		return 1;
	}
	/* The child's call waits for this process's answer. Nothing here
	 * may call getppid: it would wait for itself. */
	if ((pid = fork()) < 0) {
		snprintf(msg, len, "fork: %s", errname(errno, e, sizeof(e)));
		return 1;
	}
	if (pid == 0) {
		errno = 0;
		_exit(syscall(SYS_getppid) == -1 && errno == PROBE_ERRNO ? 0 : 1);
	}
	if (poll(&pfd, 1, 2000) != 1) {
		snprintf(msg, len, "the listener got no notification in 2 s");
		kill(pid, SIGKILL);
		return 1;
	}
	r = seccomp_notify_alloc(&req, &resp);
	if (r == 0)
		r = seccomp_notify_receive(pfd.fd, req);
	if (r == 0) {
		resp->id = req->id;
		resp->val = 0;
		resp->error = -PROBE_ERRNO;
		resp->flags = 0;
		r = seccomp_notify_respond(pfd.fd, resp);
	}
	seccomp_notify_free(req, resp);
	if (r < 0) {
		snprintf(msg, len, "answering a notification: %s",
			 errname(-r, e, sizeof(e)));
		kill(pid, SIGKILL);
		return 1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(msg, len, "the notified call did not get the "
			 "listener's answer");
		return 1;
	}
	snprintf(msg, len, "a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER) "
		 "received its child's call and answered it");
	return 0;
}

static int
probe_landlock(char *msg, size_t len)
{
	struct landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_READ_DIR,
	};
	_cleanup_close_ int rs = -1, fd = -1;
	char e[96];

	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0) {
		snprintf(msg, len, "landlock_create_ruleset: %s",
			 errname(errno, e, sizeof(e)));
		return 1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		snprintf(msg, len, "landlock_restrict_self: %s",
			 errname(errno, e, sizeof(e)));
		return 1;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES) {
		snprintf(msg, len, "a ruleset without rules was enforced, yet "
			 "listing / gave %s", fd >= 0 ? "success" :
			 errname(errno, e, sizeof(e)));
		return 1;
	}
	snprintf(msg, len, "a ruleset enforced in a child denied it a "
		 "directory listing");
	return 0;
}

/* ---- the checks --------------------------------------------------------- */

static void
check_kernel(struct doctor_report *r)
{
	struct utsname u;

	if (uname(&u) < 0)
		snprintf(r->kernel, sizeof(r->kernel), "unknown");
	else
		snprintf(r->kernel, sizeof(r->kernel), "%.60s %.100s %.60s",
			 u.sysname, u.release, u.machine);
	set(&r->checks[C_KERNEL], DOCTOR_OK, "%s", r->kernel);
}

/* The AppArmor profile that lets the two programs create user namespaces
 * under Ubuntu 24.04's restriction (the profile form of Ubuntu's
 * "Restricted unprivileged user namespaces" notes: flags=(unconfined)
 * and the userns rule, AppArmor 4.0 abi). */
static void
apparmor_fix(struct doctor_check *c)
{
	char self[PATH_MAX], dir[PATH_MAX], launcher[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		snprintf(self, sizeof(self), "/usr/local/bin/stockade");
	else
		self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", self);
	snprintf(launcher, sizeof(launcher), "%s/stockade-launcher",
		 dirname(dir));
	if (access(launcher, X_OK) != 0)
		snprintf(launcher, sizeof(launcher), "%s/stockade-launcher",
			 STOCKADE_LIBEXECDIR);
	set_fix(c, "as root, write /etc/apparmor.d/stockade:\n"
		"abi <abi/4.0>,\n"
		"include <tunables/global>\n"
		"profile stockade %s flags=(unconfined) {\n"
		"  userns,\n"
		"}\n"
		"profile stockade-launcher %s flags=(unconfined) {\n"
		"  userns,\n"
		"}\n"
		"then load it: apparmor_parser -r /etc/apparmor.d/stockade "
		"(or lift the restriction for every program: sysctl -w "
		"kernel.apparmor_restrict_unprivileged_userns=0, made permanent "
		"in /etc/sysctl.d/)", self, launcher);
}

static void
check_userns(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX], a[32], b[32], d[32];
	char *fix;

	if (preflight_userns(msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "user.max_user_namespaces = %s, "
		    "kernel.unprivileged_userns_clone = %s, "
		    "kernel.apparmor_restrict_unprivileged_userns = %s; a "
		    "child created a user namespace",
		    sysctl_text("/proc/sys/user/max_user_namespaces", a,
				sizeof(a)),
		    sysctl_text("/proc/sys/kernel/unprivileged_userns_clone",
				b, sizeof(b)),
		    sysctl_text("/proc/sys/kernel/"
				"apparmor_restrict_unprivileged_userns", d,
				sizeof(d)));
		return;
	}
	/* preflight_userns says "CAUSE. Fix: FIX": split it, so that
	 * doctor_cached_verdict gives back exactly that message. */
	fix = strstr(msg, ". Fix: ");
	if (fix != NULL) {
		*fix = '\0';
		fix += strlen(". Fix: ");
	}
	set(c, DOCTOR_REFUSED, "%s", msg);
	if (strstr(msg, "apparmor_restrict_unprivileged_userns") != NULL)
		apparmor_fix(c);
	else
		set_fix(c, "%s", fix != NULL ? fix : "");
}

static void
not_tried(struct doctor_check *c)
{
	set(c, DOCTOR_REFUSED, "not tried: this process cannot create a "
	    "user namespace");
	set_fix(c, "the fix for unprivileged user namespaces");
}

static void
check_namespaces(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX];

	if (run_probe(probe_namespaces, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "%s", msg);
		return;
	}
	set(c, DOCTOR_REFUSED, "%s", msg);
	set_fix(c, "allow unshare and clone with CLONE_NEWNS, CLONE_NEWPID, "
		"CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS and CLONE_NEWCGROUP "
		"(a container's seccomp profile or a user.max_*_namespaces "
		"sysctl at 0 forbids one)");
}

static void
check_proc(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX];

	if (run_probe(probe_proc, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "%s", msg);
		return;
	}
	set(c, DOCTOR_REFUSED, "%s", msg);
	/* mount_too_revealing (fs/namespace.c): a new proc is allowed only
	 * where the caller sees an unobstructed proc already. */
	set_fix(c, "the kernel lets a user namespace mount proc only where "
		"this process already sees a whole /proc with nothing mounted "
		"over parts of it; in a container, run it without masked /proc "
		"paths (docker: --security-opt systempaths=unconfined; podman: "
		"--security-opt unmask=ALL), or run stockade on the host");
}

static void
check_openat2(struct doctor_check *c)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH,
	};
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int in = -1, out = -1;
	char e[96];
	int err;

	if (root < 0) {
		set(c, DOCTOR_REFUSED, "open(\"/\"): %s",
		    errname(errno, e, sizeof(e)));
		return;
	}
	in = (int)syscall(SYS_openat2, root, ".", &how, sizeof(how));
	err = errno;
	if (in < 0 && err == ENOSYS) {
		set(c, DOCTOR_REFUSED, "the kernel has no openat2(2) (ENOSYS; "
		    "Linux before 5.6, or a seccomp profile that hides it)");
		set_fix(c, "run stockade on Linux 5.6 or later, outside any "
			"seccomp profile that denies openat2");
		return;
	}
	if (in < 0) {
		set(c, DOCTOR_REFUSED, "openat2(\"/\", \".\", RESOLVE_BENEATH): "
		    "%s", errname(err, e, sizeof(e)));
		set_fix(c, "allow openat2 (a container's seccomp profile denies "
			"it)");
		return;
	}
	out = (int)syscall(SYS_openat2, root, "..", &how, sizeof(how));
	if (out >= 0 || errno != EXDEV) {
		set(c, DOCTOR_REFUSED, "openat2(\"/\", \"..\", RESOLVE_BENEATH) "
		    "did not refuse with EXDEV (%s)", out >= 0 ? "it opened" :
		    errname(errno, e, sizeof(e)));
		set_fix(c, "run stockade on a kernel whose openat2 enforces "
			"RESOLVE_BENEATH (Linux 5.6 or later)");
		return;
	}
	set(c, DOCTOR_OK, "openat2 with RESOLVE_BENEATH opened \".\" beneath "
	    "\"/\" and refused \"..\" with EXDEV");
}

static void
check_seccomp(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX], e[96];
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	const char *now = mode == 0 ? "none" : mode == 2 ?
		"already under a filter (a container or a service's "
		"SystemCallFilter)" : "?";

	if (mode < 0) {
		set(c, DOCTOR_REFUSED, "prctl(PR_GET_SECCOMP): %s",
		    errname(errno, e, sizeof(e)));
		set_fix(c, "a kernel built with CONFIG_SECCOMP and "
			"CONFIG_SECCOMP_FILTER");
		return;
	}
	if (run_probe(probe_seccomp, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "this process: %s; %s", now, msg);
		return;
	}
	set(c, DOCTOR_REFUSED, "this process: %s; %s", now, msg);
	set_fix(c, "a kernel with CONFIG_SECCOMP_FILTER, and no container "
		"profile that denies seccomp(2) or prctl(PR_SET_SECCOMP)");
}

static void
check_notify(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX];

	if (run_probe(probe_notify, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "%s", msg);
		return;
	}
	set(c, DOCTOR_MISSING, "%s", msg);
	set_fix(c, "denied calls are still refused; they are reported "
		"through SECCOMP_RET_TRAP instead. For user notification: "
		"Linux 5.5 or later and libseccomp 2.5 or later");
}

static void
check_landlock(struct doctor_check *c)
{
	/* What each ABI up to LANDLOCK_FULL_ABI adds (landlock(7)). */
	static const struct {
		int abi;
		const char *what;
	} adds[] = {
		{2, "linking and renaming across directories (REFER)"},
		{3, "the truncate right"},
		{4, "TCP bind and connect rules"},
		{5, "the device ioctl right"},
		{6, "scoped abstract unix sockets and signals"},
	};
	char msg[DOCTOR_TEXT_MAX], lsm[256], e[96], drop[512];
	size_t o = 0;
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
			   LANDLOCK_CREATE_RULESET_VERSION);
	int err = errno;

	if (abi < 0 && err == EOPNOTSUPP) {
		if (read_small(AT_FDCWD, "/sys/kernel/security/lsm", lsm,
			       sizeof(lsm)) <= 0)
			snprintf(lsm, sizeof(lsm), "the current list");
		set(c, DOCTOR_REFUSED, "Landlock is built in but not enabled "
		    "(landlock_create_ruleset: EOPNOTSUPP)");
		set_fix(c, "boot with lsm=landlock,%s on the kernel command "
			"line", lsm);
		return;
	}
	if (abi < 0) {
		set(c, DOCTOR_REFUSED, "the kernel has no Landlock "
		    "(landlock_create_ruleset: %s)", errname(err, e, sizeof(e)));
		set_fix(c, "Linux 5.13 or later built with "
			"CONFIG_SECURITY_LANDLOCK=y, booted with landlock in "
			"lsm=");
		return;
	}
	if (run_probe(probe_landlock, msg, sizeof(msg)) != 0) {
		set(c, DOCTOR_REFUSED, "ABI %ld, but %s", abi, msg);
		set_fix(c, "allow landlock_restrict_self (a container's "
			"seccomp profile denies it)");
		return;
	}
	if (abi >= LANDLOCK_FULL_ABI) {
		set(c, DOCTOR_OK, "ABI %ld; %s", abi, msg);
		return;
	}
	for (size_t i = 0; i < sizeof(adds) / sizeof(adds[0]); i++)
		if (abi < adds[i].abi && o < sizeof(drop))
			o += (size_t)snprintf(drop + o, sizeof(drop) - o,
					      "%s%s (ABI %d)", o > 0 ? ", " : "",
					      adds[i].what, adds[i].abi);
	set(c, DOCTOR_MISSING, "ABI %ld; %s; the jail goes without: %s", abi,
	    msg, drop);
	set_fix(c, "Linux 6.12 or later for Landlock ABI 6");
}

/* ---- cgroup v2 delegation ----------------------------------------------- */

/* Decodes mountinfo's "\ooo" escapes (proc(5)) of S in place. */
static void
unescape(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/*
 * The directory of this process's own cgroup v2 into OUT: the "0::" line
 * of /proc/self/cgroup under the last cgroup2 mount of
 * /proc/self/mountinfo whose root is a prefix of it (cgroups(7), proc(5)).
 * A re-implementation of launcher/cgroup.c's cg_own_path, read-only, so
 * that the broker does not link launcher code. Returns 0 or -ENOENT.
 */
static int
own_cgroup(char *out, size_t outlen)
{
	char cg[PATH_MAX], *line = NULL, *p, *f[5], *save, *type;
	const char *rel;
	size_t cap = 0, rl;
	int found = -ENOENT, n;
	FILE *mi;
	ssize_t len = read_small(AT_FDCWD, "/proc/self/cgroup", cg, sizeof(cg));

	if (len < 0)
		return -ENOENT;
	/* The v2 line "0::/path", wherever it is among v1 lines. */
	p = strstr(cg, "0::/");
	while (p != NULL && p != cg && p[-1] != '\n')
		p = strstr(p + 1, "0::/");
	if (p == NULL)
		return -ENOENT;
	memmove(cg, p + 3, strlen(p + 3) + 1);
	cg[strcspn(cg, "\n")] = '\0';
	if ((mi = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -ENOENT;
	while (getline(&line, &cap, mi) > 0) {
		line[strcspn(line, "\n")] = '\0';
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] -
		 * TYPE SOURCE SUPEROPTIONS (proc(5)) */
		n = 0;
		type = NULL;
		for (p = strtok_r(line, " ", &save); p != NULL;
		     p = strtok_r(NULL, " ", &save)) {
			if (n < 5) {
				f[n++] = p;
			} else if (strcmp(p, "-") == 0) {
				type = strtok_r(NULL, " ", &save);
				break;
			}
		}
		if (n < 5 || type == NULL || strcmp(type, "cgroup2") != 0)
			continue;
		unescape(f[3]);
		unescape(f[4]);
		rl = strcmp(f[3], "/") == 0 ? 0 : strlen(f[3]);
		if (strncmp(cg, f[3], rl) != 0 ||
		    (cg[rl] != '\0' && cg[rl] != '/'))
			continue;
		rel = strcmp(cg + rl, "/") == 0 ? "" : cg + rl;
		if (snprintf(out, outlen, "%s%s",
			     strcmp(f[4], "/") == 0 && *rel != '\0' ? "" : f[4],
			     rel) < (int)outlen)
			found = 0;  /* the last one wins: it hides the others */
	}
	free(line);
	fclose(mi);
	return found;
}

/* Whether the space-separated list LIST has WORD. */
static bool
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

static void
check_cgroup(struct doctor_check *c)
{
	char dir[PATH_MAX], ctl[256], sub[256], procs[PATH_MAX + 16];
	_cleanup_close_ int fd = -1;
	const char *leaf;
	bool writable, controllers, usable;

	set_fix(c, "limits are enforced with rlimits and the /proc monitor "
		"instead (README.md, \"Limits\"). For cgroup v2 limits, run "
		"stockade in a delegated cgroup: systemd-run --user --scope -p "
		"Delegate=yes stockade ..., or name one in the policy's "
		"[limits] cgroup");
	if (own_cgroup(dir, sizeof(dir)) < 0) {
		set(c, DOCTOR_MISSING, "no cgroup v2: /proc/self/cgroup has no "
		    "\"0::\" line, or no cgroup2 mount shows it");
		return;
	}
	/* A launcher restarted by the broker lives in the leaf its
	 * predecessor made: the delegated cgroup is its parent (as
	 * launcher/enforce.c decides). */
	leaf = strrchr(dir, '/');
	if (leaf != NULL && leaf != dir &&
	    strcmp(leaf + 1, "stockade-supervisor") == 0)
		dir[leaf - dir] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || read_small(fd, "cgroup.controllers", ctl,
				 sizeof(ctl)) < 0 ||
	    read_small(fd, "cgroup.subtree_control", sub, sizeof(sub)) < 0) {
		set(c, DOCTOR_MISSING, "%s: not a readable cgroup v2 directory",
		    dir);
		return;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	writable = faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 &&
		   faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
	controllers = has_word(ctl, "memory") && has_word(ctl, "pids");
	usable = controllers && writable;
	set(c, usable ? DOCTOR_OK : DOCTOR_MISSING, "%s (this process's "
	    "cgroup): cgroup.controllers \"%s\", cgroup.subtree_control "
	    "\"%s\"; the memory and pids controllers are %savailable; uid "
	    "%u %s create cgroups there", dir, ctl, sub,
	    controllers ? "" : "not both ", (unsigned)geteuid(),
	    writable ? "may" : "may not");
	if (usable)
		c->fix[0] = '\0';
	else if (!has_word(ctl, "memory") && strstr(dir, "/unified") != NULL)
		snprintf(c->fix + strlen(c->fix),
			 sizeof(c->fix) - strlen(c->fix), "; on this hybrid "
			 "cgroup v1/v2 host the controllers belong to v1: boot "
			 "with systemd.unified_cgroup_hierarchy=1");
}

/* ---- the report ---------------------------------------------------------- */

/* Appends the layers of the checks in state ST to the verdict. */
static void
verdict_list(struct doctor_report *r, enum doctor_status st,
	     const char *head)
{
	size_t o = strlen(r->verdict);

	for (size_t i = 0; i < DOCTOR_NCHECKS && o < sizeof(r->verdict); i++) {
		if (!r->checks[i].ran || r->checks[i].status != st)
			continue;
		o += (size_t)snprintf(r->verdict + o, sizeof(r->verdict) - o,
				      "%s%s", o == 0 ? head : "; ",
				      r->checks[i].layer);
	}
}

int
doctor_run(struct doctor_report *r, unsigned int flags)
{
	struct doctor_check *c = r->checks;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < DOCTOR_NCHECKS; i++) {
		c[i].name = check_defs[i].name;
		c[i].layer = check_defs[i].layer;
		c[i].required = check_defs[i].required;
	}
	check_kernel(r);
	check_userns(&c[C_USERNS]);
	if (c[C_USERNS].status == DOCTOR_OK) {
		check_namespaces(&c[C_NAMESPACES]);
		check_proc(&c[C_PROC]);
	} else {
		not_tried(&c[C_NAMESPACES]);
		not_tried(&c[C_PROC]);
	}
	check_openat2(&c[C_OPENAT2]);
	check_seccomp(&c[C_SECCOMP]);
	check_landlock(&c[C_LANDLOCK]);
	if (!(flags & DOCTOR_REQUIRED_ONLY)) {
		check_notify(&c[C_NOTIFY]);
		check_cgroup(&c[C_CGROUP]);
	}
	verdict_list(r, DOCTOR_REFUSED, "refused: ");
	r->refused = r->verdict[0] != '\0';
	if (!r->refused)
		verdict_list(r, DOCTOR_MISSING, "degraded: ");
	if (r->verdict[0] == '\0')
		snprintf(r->verdict, sizeof(r->verdict), "full");
	return r->refused ? -1 : 0;
}

const char *
doctor_status_name(enum doctor_status s)
{
	switch (s) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_MISSING:
		return "missing";
	case DOCTOR_REFUSED:
		return "refused";
	}
	return "?";
}

/* ---- the cache ------------------------------------------------------------ */

/* The cache's content, which is its key (doctor.h). Returns 0 or -1. */
static int
cache_key(char *key, size_t len)
{
	char boot[64];
	struct stat u, m, x;

	if (read_small(AT_FDCWD, "/proc/sys/kernel/random/boot_id", boot,
		       sizeof(boot)) < 32 ||
	    strspn(boot, "0123456789abcdef-") != strlen(boot) ||
	    stat("/proc/self/ns/user", &u) < 0 ||
	    stat("/proc/self/ns/mnt", &m) < 0 ||
	    stat("/proc/self/exe", &x) < 0)
		return -1;
	snprintf(key, len, "stockade doctor cache 1\nboot %s\nuid %u\n"
		 "userns %ju:%ju\nmntns %ju:%ju\nexe %ju:%ju:%jd.%09ld\n"
		 "version %s\nverdict ok\n", boot, (unsigned)geteuid(),
		 (uintmax_t)u.st_dev, (uintmax_t)u.st_ino,
		 (uintmax_t)m.st_dev, (uintmax_t)m.st_ino,
		 (uintmax_t)x.st_dev, (uintmax_t)x.st_ino,
		 (intmax_t)x.st_mtim.tv_sec, x.st_mtim.tv_nsec,
		 STOCKADE_VERSION);
	return 0;
}

/* True when ST belongs to the effective uid and no one else may write
 * it. */
static bool
ours_alone(const struct stat *st)
{
	return st->st_uid == geteuid() && (st->st_mode & 022) == 0;
}

/* A descriptor of $XDG_RUNTIME_DIR when it may hold the cache, else -1. */
static int
cache_dir(void)
{
	const char *d = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int fd;

	if (d == NULL || d[0] != '/')
		return -1;
	fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || !ours_alone(&st)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether the cache file NAME under DIR holds exactly KEY. */
static bool
cache_hit(int dir, const char *name, const char *key)
{
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW |
					O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t len = strlen(key), got = 0;
	char buf[1024];
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !ours_alone(&st) || st.st_nlink != 1 ||
	    st.st_size != (off_t)len || len >= sizeof(buf))
		return false;
	while (got < len && (n = read(fd, buf + got, len - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		got += (size_t)n;
	}
	return got == len && memcmp(buf, key, len) == 0;
}

/* Writes KEY as the cache file NAME under DIR, atomically. */
static void
cache_store(int dir, const char *name, const char *key)
{
	char tmp[128];
	int fd, r;

	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	r = write_all(fd, key, strlen(key));
	if (close(fd) != 0 || r < 0 || renameat(dir, tmp, dir, name) != 0)
		(void)unlinkat(dir, tmp, 0);
}

int
doctor_cached_verdict(char *why, size_t whylen)
{
	/* About 20 KiB: not on the stack. */
	_cleanup_free_ struct doctor_report *r = calloc(1, sizeof(*r));
	_cleanup_close_ int dir = cache_dir();
	char key[1024], name[64];
	bool cacheable;

	if (whylen > 0)
		why[0] = '\0';
	snprintf(name, sizeof(name), "stockade-doctor-%u", (unsigned)geteuid());
	cacheable = dir >= 0 && cache_key(key, sizeof(key)) == 0;
	if (cacheable && cache_hit(dir, name, key))
		return 0;
	if (r == NULL) {
		snprintf(why, whylen, "out of memory checking the host");
		return -1;
	}
	if (doctor_run(r, DOCTOR_REQUIRED_ONLY) == 0) {
		if (cacheable)
			cache_store(dir, name, key);
		return 0;
	}
	for (size_t i = 0; i < DOCTOR_NCHECKS; i++) {
		const struct doctor_check *c = &r->checks[i];

		if (c->ran && c->status == DOCTOR_REFUSED) {
			snprintf(why, whylen, "%s. Fix: %s", c->observed, c->fix);
			break;
		}
	}
	return -1;
}
