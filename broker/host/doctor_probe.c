/*
 * doctor_probe.c: the probes of doctor.c that run in a child (they change
 * the process: a namespace, a seccomp filter, a Landlock domain;
 * doctor_internal.h).
 */
#include "doctor_internal.h"

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

/* "EPERM (Operation not permitted)" for errno E. */
const char *
doctor_errname(int e, char *buf, size_t len)
{
	const char *n = strerrorname_np(e);

	snprintf(buf, len, "%s (%s)", n != NULL ? n : "?", strerror(e));
	return buf;
}

/* ---- probes in a child ------------------------------------------------- */

/*
 * Runs FN in a child (alarm PROBE_SECONDS), which writes its message MSG
 * to a pipe and exits with FN's result. Returns that result (0: the probe
 * passed), or -1 with MSG saying why the child did not report (killed by
 * a signal: a container's seccomp profile may answer with SIGSYS).
 */
int
doctor_run_probe(probe_fn fn, char *msg, size_t len)
{
	int p[2], st, r;
	size_t got = 0;
	ssize_t n;
	pid_t pid;
	char e[96];

	msg[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(msg, len, "pipe2: %s",
		    doctor_errname(errno, e, sizeof(e)));
		return -1;
	}
	if ((pid = fork()) < 0) {
		snprintf(msg, len, "fork: %s",
		    doctor_errname(errno, e, sizeof(e)));
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
	while (
	    got + 1 < len && (n = read(p[0], msg + got, len - 1 - got)) != 0) {
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
	    got > 0 ? "; " : "",
	    sigabbrev_np(WTERMSIG(st)) != NULL ? sigabbrev_np(WTERMSIG(st))
					       : "?");
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
		snprintf(msg, len,
		    "cannot write the id maps of a new user "
		    "namespace: %s",
		    doctor_errname(-r, e, sizeof(e)));
	return r;
}

int
doctor_probe_namespaces(char *msg, size_t len)
{
	static const struct {
		int flag;
		const char *name;
	} ns[] = {
	    {CLONE_NEWNS, "CLONE_NEWNS"},
	    {CLONE_NEWPID, "CLONE_NEWPID"},
	    {CLONE_NEWNET, "CLONE_NEWNET"},
	    {CLONE_NEWIPC, "CLONE_NEWIPC"},
	    {CLONE_NEWUTS, "CLONE_NEWUTS"},
	    {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
	};
	size_t o = 0;
	char e[96];

	if (unshare(CLONE_NEWUSER) < 0) {
		snprintf(msg, len, "unshare(CLONE_NEWUSER): %s",
		    doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		if (unshare(ns[i].flag) == 0 || o >= len)
			continue;
		o += (size_t)snprintf(msg + o, len - o, "%sunshare(%s): %s",
		    o > 0 ? "; " : "", ns[i].name,
		    doctor_errname(errno, e, sizeof(e)));
	}
	if (o > 0)
		return 1;
	snprintf(msg, len,
	    "a child in a new user namespace created mount, "
	    "pid, network, ipc, uts and cgroup namespaces");
	return 0;
}

int
doctor_probe_proc(char *msg, size_t len)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int st;
	pid_t pid;
	char e[96];

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0) {
		snprintf(msg, len,
		    "unshare(CLONE_NEWUSER|CLONE_NEWNS|"
		    "CLONE_NEWPID): %s",
		    doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	if (map_self(uid, gid, msg, len) < 0)
		return 1;
	/* Nothing mounted here may reach the host's mount namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		snprintf(msg, len, "making the new mount namespace private: %s",
		    doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	/* proc shows the mounter's active pid namespace: mount it from pid
	 * 1 of the new one, as the jail's init does. */
	if ((pid = fork()) < 0) {
		snprintf(msg, len, "fork: %s",
		    doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	if (pid == 0)
		_exit(mount("proc", "/proc", "proc",
			  MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0
			? 0
			: errno & 0xff);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		snprintf(msg, len,
		    "pid 1 of a new pid namespace, in a new user "
		    "namespace, mounted a fresh /proc");
		return 0;
	}
	if (WIFEXITED(st))
		snprintf(msg, len,
		    "mount(\"proc\") as pid 1 of a new pid "
		    "namespace: %s",
		    doctor_errname(WEXITSTATUS(st), e, sizeof(e)));
	else
		snprintf(msg, len,
		    "mount(\"proc\") as pid 1 of a new pid "
		    "namespace: killed by SIG%s",
		    sigabbrev_np(WTERMSIG(st)) != NULL
			? sigabbrev_np(WTERMSIG(st))
			: "?");
	return 1;
}

int
doctor_probe_seccomp(char *msg, size_t len)
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
		    doctor_errname(-r, e, sizeof(e)));
		return 1;
	}
	errno = 0;
	v = syscall(SYS_getppid);
	if (v != -1 || errno != PROBE_ERRNO) {
		snprintf(msg, len,
		    "a seccomp filter was loaded but did not "
		    "act (getppid gave %ld, %s)",
		    v, doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	snprintf(msg, len,
	    "a filter loaded in a child (libseccomp API "
	    "level %u) answered getppid with the errno it chose",
	    seccomp_api_get());
	return 0;
}

int
doctor_probe_notify(char *msg, size_t len)
{
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	struct pollfd pfd = {.events = POLLIN};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = ctx == NULL ? -ENOMEM : 0, st;
	char e[96];
	pid_t pid;

	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(getppid),
		    0);
	if (r == 0)
		r = seccomp_load(ctx); /* SECCOMP_FILTER_FLAG_NEW_LISTENER */
	if (r == 0 && (pfd.fd = seccomp_notify_fd(ctx)) < 0)
		r = pfd.fd;
	if (r < 0) {
		snprintf(msg, len, "a filter with SECCOMP_RET_USER_NOTIF: %s",
		    doctor_errname(-r, e, sizeof(e)));
		return 1;
	}
	/* The child's call waits for this process's answer. Nothing here
	 * may call getppid: it would wait for itself. */
	if ((pid = fork()) < 0) {
		snprintf(msg, len, "fork: %s",
		    doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	if (pid == 0) {
		errno = 0;
		_exit(
		    syscall(SYS_getppid) == -1 && errno == PROBE_ERRNO ? 0 : 1);
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
		    doctor_errname(-r, e, sizeof(e)));
		kill(pid, SIGKILL);
		return 1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(msg, len,
		    "the notified call did not get the "
		    "listener's answer");
		return 1;
	}
	snprintf(msg, len,
	    "a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER) "
	    "received its child's call and answered it");
	return 0;
}

int
doctor_probe_landlock(char *msg, size_t len)
{
	struct landlock_ruleset_attr attr = {
	    .handled_access_fs = LANDLOCK_ACCESS_FS_READ_DIR,
	};
	_cleanup_close_ int rs = -1, fd = -1;
	char e[96];

	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0) {
		snprintf(msg, len, "landlock_create_ruleset: %s",
		    doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		snprintf(msg, len, "landlock_restrict_self: %s",
		    doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES) {
		snprintf(msg, len,
		    "a ruleset without rules was enforced, yet "
		    "listing / gave %s",
		    fd >= 0 ? "success" : doctor_errname(errno, e, sizeof(e)));
		return 1;
	}
	snprintf(msg, len,
	    "a ruleset enforced in a child denied it a "
	    "directory listing");
	return 0;
}
