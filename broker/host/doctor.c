/*
 * doctor.c: the checks of doctor.h and the verdict. The probes that run in
 * a child are in doctor_probe.c (the own cgroup v2 is shared/cgpath.h's
 * cg_own_path_self, as the launcher finds it); the
 * per-boot cache in doctor_cache.c; the output (text and JSON) in
 * cmd_doctor.c.
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
#include "cgpath.h"
#include "doctor_internal.h"
#include "install_path.h"
#include "preflight.h"

enum {
	C_KERNEL,
	C_USERNS,
	C_NAMESPACES,
	C_PROC,
	C_OPENAT2,
	C_SECCOMP,
	C_LANDLOCK,
	C_NOTIFY,
	C_CGROUP,
	C_PROXY,
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
    [C_NOTIFY] = {"seccomp_notify", "seccomp user notification", true},
    [C_CGROUP] = {"cgroup", "cgroup v2 delegation", false},
    [C_PROXY] = {"egress_proxy", "egress proxy", false},
};

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

/* An integer sysctl as text, "absent" when it is not there. */
static const char *
sysctl_text(const char *path, char *buf, size_t len)
{
	if (read_small_at(AT_FDCWD, path, buf, len) <= 0)
		snprintf(buf, len, "absent");
	return buf;
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
	char self[PATH_MAX], launcher[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd;

	if (n <= 0)
		snprintf(self, sizeof(self), "/usr/local/bin/stockade");
	else
		self[n] = '\0';
	/* The launcher the broker would run (install_path.h), so that the
	 * profile names it wherever the tree lies. */
	fd = install_open_helper(NULL, "stockade-launcher", true, launcher,
	    sizeof(launcher), NULL, 0);
	if (fd >= 0)
		close(fd);
	else
		snprintf(launcher, sizeof(launcher), "%s/stockade-launcher",
		    STOCKADE_LIBEXECDIR);
	set_fix(c,
	    "as root, write /etc/apparmor.d/stockade:\n"
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
	    "in /etc/sysctl.d/)",
	    self, launcher);
}

static void
check_userns(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX], a[32], b[32], d[32];
	char *fix;

	if (preflight_userns(msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK,
		    "user.max_user_namespaces = %s, "
		    "kernel.unprivileged_userns_clone = %s, "
		    "kernel.apparmor_restrict_unprivileged_userns = %s; a "
		    "child created a user namespace",
		    sysctl_text("/proc/sys/user/max_user_namespaces", a,
			sizeof(a)),
		    sysctl_text("/proc/sys/kernel/unprivileged_userns_clone", b,
			sizeof(b)),
		    sysctl_text("/proc/sys/kernel/"
				"apparmor_restrict_unprivileged_userns",
			d, sizeof(d)));
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
	set(c, DOCTOR_REFUSED,
	    "not tried: this process cannot create a "
	    "user namespace");
	set_fix(c, "the fix for unprivileged user namespaces");
}

static void
check_namespaces(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX];

	if (doctor_run_probe(doctor_probe_namespaces, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "%s", msg);
		return;
	}
	set(c, DOCTOR_REFUSED, "%s", msg);
	set_fix(c,
	    "allow unshare and clone with CLONE_NEWNS, CLONE_NEWPID, "
	    "CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS and CLONE_NEWCGROUP "
	    "(a container's seccomp profile or a user.max_*_namespaces "
	    "sysctl at 0 forbids one)");
}

static void
check_proc(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX];

	if (doctor_run_probe(doctor_probe_proc, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "%s", msg);
		return;
	}
	set(c, DOCTOR_REFUSED, "%s", msg);
	/* mount_too_revealing (fs/namespace.c): a new proc is allowed only
	 * where the caller sees an unobstructed proc already. */
	set_fix(c,
	    "the kernel lets a user namespace mount proc only where "
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
		    doctor_errname(errno, e, sizeof(e)));
		return;
	}
	in = (int)syscall(SYS_openat2, root, ".", &how, sizeof(how));
	err = errno;
	if (in < 0 && err == ENOSYS) {
		set(c, DOCTOR_REFUSED,
		    "the kernel has no openat2(2) (ENOSYS; "
		    "Linux before 5.6, or a seccomp profile that hides it)");
		set_fix(c,
		    "run stockade on Linux 5.6 or later, outside any "
		    "seccomp profile that denies openat2");
		return;
	}
	if (in < 0) {
		set(c, DOCTOR_REFUSED,
		    "openat2(\"/\", \".\", RESOLVE_BENEATH): "
		    "%s",
		    doctor_errname(err, e, sizeof(e)));
		set_fix(c,
		    "allow openat2 (a container's seccomp profile denies "
		    "it)");
		return;
	}
	out = (int)syscall(SYS_openat2, root, "..", &how, sizeof(how));
	if (out >= 0 || errno != EXDEV) {
		set(c, DOCTOR_REFUSED,
		    "openat2(\"/\", \"..\", RESOLVE_BENEATH) "
		    "did not refuse with EXDEV (%s)",
		    out >= 0 ? "it opened"
			     : doctor_errname(errno, e, sizeof(e)));
		set_fix(c,
		    "run stockade on a kernel whose openat2 enforces "
		    "RESOLVE_BENEATH (Linux 5.6 or later)");
		return;
	}
	set(c, DOCTOR_OK,
	    "openat2 with RESOLVE_BENEATH opened \".\" beneath "
	    "\"/\" and refused \"..\" with EXDEV");
}

static void
check_seccomp(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX], e[96];
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	const char *now = mode == 0 ? "none"
	    : mode == 2 ? "already under a filter (a container or a service's "
			  "SystemCallFilter)"
			: "?";

	if (mode < 0) {
		set(c, DOCTOR_REFUSED, "prctl(PR_GET_SECCOMP): %s",
		    doctor_errname(errno, e, sizeof(e)));
		set_fix(c,
		    "a kernel built with CONFIG_SECCOMP and "
		    "CONFIG_SECCOMP_FILTER");
		return;
	}
	if (doctor_run_probe(doctor_probe_seccomp, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "this process: %s; %s", now, msg);
		return;
	}
	set(c, DOCTOR_REFUSED, "this process: %s; %s", now, msg);
	set_fix(c,
	    "a kernel with CONFIG_SECCOMP_FILTER, and no container "
	    "profile that denies seccomp(2) or prctl(PR_SET_SECCOMP)");
}

static void
check_notify(struct doctor_check *c)
{
	char msg[DOCTOR_TEXT_MAX];

	if (doctor_run_probe(doctor_probe_notify, msg, sizeof(msg)) == 0) {
		set(c, DOCTOR_OK, "%s", msg);
		return;
	}
	set(c, DOCTOR_REFUSED, "%s", msg);
	/* The jail's filter answers every refused call through the
	 * launcher's listener (launcher/zygote/seccomp.c): no listener, no job. */
	set_fix(c,
	    "Linux 5.5 or later and libseccomp 2.5 or later, and no "
	    "container profile that denies seccomp(2)'s "
	    "SECCOMP_FILTER_FLAG_NEW_LISTENER or its ioctls");
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
		if (read_small_at(AT_FDCWD, "/sys/kernel/security/lsm", lsm,
			sizeof(lsm)) <= 0)
			snprintf(lsm, sizeof(lsm), "the current list");
		set(c, DOCTOR_REFUSED,
		    "Landlock is built in but not enabled "
		    "(landlock_create_ruleset: EOPNOTSUPP)");
		set_fix(c,
		    "boot with lsm=landlock,%s on the kernel command "
		    "line",
		    lsm);
		return;
	}
	if (abi < 0) {
		set(c, DOCTOR_REFUSED,
		    "the kernel has no Landlock "
		    "(landlock_create_ruleset: %s)",
		    doctor_errname(err, e, sizeof(e)));
		set_fix(c,
		    "Linux 5.13 or later built with "
		    "CONFIG_SECURITY_LANDLOCK=y, booted with landlock in "
		    "lsm=");
		return;
	}
	if (doctor_run_probe(doctor_probe_landlock, msg, sizeof(msg)) != 0) {
		set(c, DOCTOR_REFUSED, "ABI %ld, but %s", abi, msg);
		set_fix(c,
		    "allow landlock_restrict_self (a container's "
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
			    "%s%s (ABI %d)", o > 0 ? ", " : "", adds[i].what,
			    adds[i].abi);
	set(c, DOCTOR_MISSING, "ABI %ld; %s; the jail goes without: %s", abi,
	    msg, drop);
	set_fix(c, "Linux 6.12 or later for Landlock ABI 6");
}

/*
 * Appends to C's fix what the /proc monitor leaves to the kernel (issue
 * 23; docs/layers.md, "Memory the monitor cannot see"): the watches of
 * an epoll instance in flight in a unix socket are in no descriptor
 * table the monitor reads, and only the host user's
 * fs.epoll.max_user_watches bounds them, for all of that user's
 * programs at once, at about 200 bytes a watch (EPOLL_WATCH_BYTES).
 */
static void
monitor_epoll_note(struct doctor_check *c)
{
	char text[32];
	unsigned long long n;
	size_t at = strlen(c->fix);

	if (read_small_at(AT_FDCWD, "/proc/sys/fs/epoll/max_user_watches", text,
		sizeof(text)) <= 0)
		return;
	n = strtoull(text, NULL, 10);
	snprintf(c->fix + at, sizeof(c->fix) - at,
	    ". Under the monitor, "
	    "epoll watches held in flight in unix sockets are bounded "
	    "only by fs.epoll.max_user_watches, %llu here (%.0f MiB at "
	    "200 bytes a watch, for all of uid %u's programs): lower it "
	    "(sysctl -w fs.epoll.max_user_watches=N) to bound them",
	    n, (double)n * 200.0 / 1048576.0, (unsigned)geteuid());
}

static void
check_cgroup(struct doctor_check *c)
{
	char dir[PATH_MAX], ctl[256], sub[256], procs[PATH_MAX + 16];
	_cleanup_close_ int fd = -1;
	const char *leaf;
	bool writable, controllers, usable;

	set_fix(c,
	    "limits are enforced with rlimits and the /proc monitor "
	    "instead (README.md, \"Limits\"). For cgroup v2 limits, run "
	    "stockade in a delegated cgroup: systemd-run --user --scope -p "
	    "Delegate=yes stockade ..., or name one in the policy's "
	    "[limits] cgroup");
	if (cg_own_path_self(dir, sizeof(dir)) < 0) {
		set(c, DOCTOR_MISSING,
		    "no cgroup v2: /proc/self/cgroup has no "
		    "\"0::\" line, or no cgroup2 mount shows it");
		return;
	}
	/* A launcher restarted by the broker lives in the leaf its
	 * predecessor made: the delegated cgroup is its parent (as
	 * launcher/supervisor/enforce.c decides). */
	leaf = strrchr(dir, '/');
	if (leaf != NULL && leaf != dir &&
	    strcmp(leaf + 1, "stockade-supervisor") == 0)
		dir[leaf - dir] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 ||
	    read_small_at(fd, "cgroup.controllers", ctl, sizeof(ctl)) < 0 ||
	    read_small_at(fd, "cgroup.subtree_control", sub, sizeof(sub)) < 0) {
		set(c, DOCTOR_MISSING, "%s: not a readable cgroup v2 directory",
		    dir);
		return;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	writable = faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 &&
	    faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
	controllers = cg_has_word(ctl, "memory") && cg_has_word(ctl, "pids");
	usable = controllers && writable;
	set(c, usable ? DOCTOR_OK : DOCTOR_MISSING,
	    "%s (this process's "
	    "cgroup): cgroup.controllers \"%s\", cgroup.subtree_control "
	    "\"%s\"; the memory and pids controllers are %savailable; uid "
	    "%u %s create cgroups there",
	    dir, ctl, sub, controllers ? "" : "not both ", (unsigned)geteuid(),
	    writable ? "may" : "may not");
	if (usable)
		c->fix[0] = '\0';
	else if (!cg_has_word(ctl, "memory") && strstr(dir, "/unified") != NULL)
		snprintf(c->fix + strlen(c->fix),
		    sizeof(c->fix) - strlen(c->fix),
		    "; on this hybrid "
		    "cgroup v1/v2 host the controllers belong to v1: boot "
		    "with systemd.unified_cgroup_hierarchy=1");
	if (!usable)
		monitor_epoll_note(c);
}

/* ---- the report ---------------------------------------------------------- */

/* Appends the layers of the checks in state ST to the verdict. */
static void
verdict_list(struct doctor_report *r, enum doctor_status st, const char *head)
{
	size_t o = strlen(r->verdict);

	for (size_t i = 0; i < DOCTOR_NCHECKS && o < sizeof(r->verdict); i++) {
		if (!r->checks[i].ran || r->checks[i].status != st)
			continue;
		o += (size_t)snprintf(r->verdict + o, sizeof(r->verdict) - o,
		    "%s%s", o == 0 ? head : "; ", r->checks[i].layer);
	}
}

/* R's verdict and refused flag from the checks that ran. */
static void
build_verdict(struct doctor_report *r)
{
	r->verdict[0] = '\0';
	verdict_list(r, DOCTOR_REFUSED, "refused: ");
	r->refused = r->verdict[0] != '\0';
	if (!r->refused)
		verdict_list(r, DOCTOR_MISSING, "degraded: ");
	if (r->verdict[0] == '\0')
		snprintf(r->verdict, sizeof(r->verdict), "full");
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
	check_notify(&c[C_NOTIFY]);
	if (!(flags & DOCTOR_REQUIRED_ONLY))
		check_cgroup(&c[C_CGROUP]);
	build_verdict(r);
	return r->refused ? -1 : 0;
}

void
doctor_set_egress_proxy(struct doctor_report *r, int err, unsigned abi,
    const char *why)
{
	struct doctor_check *c = &r->checks[C_PROXY];

	if (err == 0) {
		set(c, DOCTOR_OK,
		    "stockade-proxy started, confined itself (Landlock ABI "
		    "%u%s, seccomp) and stopped: a [network] allow-list can "
		    "run here",
		    abi, abi < 4 ? ", no TCP bind rule: it binds nothing" : "");
	} else {
		set(c, DOCTOR_MISSING, "%s", why);
		set_fix(c, "%s",
		    err == -ENOENT
			? "reinstall stockade: stockade-proxy belongs beside "
			  "stockade-launcher"
			: "none needed for jobs without network; a policy "
			  "with a [network] allow or allow_address rule is "
			  "refused on this host");
	}
	build_verdict(r);
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
