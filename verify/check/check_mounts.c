/*
 * check_mounts.c: the checks of layer mount_ns (check_jail.h): what the
 * job's mount namespace holds (its /proc/self/mountinfo as stockade-probe
 * lists it, and the paths it can reach) against what a sound jail builds
 * (launcher/init/mounts.c; docs/layers.md, 6).
 */
#include <errno.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "check_jail.h"

/* One "mount.I=" value: MOUNTPOINT FSTYPE OPTIONS, split in place. */
struct mnt {
	char *point, *type, *opts;
};

static bool
split_mount(char *v, struct mnt *m)
{
	char *save = NULL;

	m->point = strtok_r(v, " ", &save);
	m->type = strtok_r(NULL, " ", &save);
	m->opts = strtok_r(NULL, " ", &save);
	return m->point != NULL && m->type != NULL && m->opts != NULL;
}

/* PATH is DIR or beneath it. */
static bool
beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/' || strcmp(dir, "/") == 0);
}

/* True when mount option OPT is among the comma-separated OPTS. */
static bool
has_opt(const char *opts, const char *opt)
{
	return jail_list_has(opts, opt);
}

/* The number of mounts the probe listed in J ("mounts.count"), or -1. */
static int
mount_count(const struct check_job *j)
{
	char v[32];

	return check_value(j, "mounts.count", v, sizeof(v)) ? atoi(v) : -1;
}

/* The probe's I-th mount of J ("mount.I=POINT TYPE OPTIONS") into BUF,
 * split into M. */
static bool
mount_at(const struct check_job *j, int i, char *buf, size_t len, struct mnt *m)
{
	char key[32];

	snprintf(key, sizeof(key), "mount.%d", i);
	return check_value(j, key, buf, len) && split_mount(buf, m);
}

/* Finds the mount at POINT in J's list (the last, the one on top) into
 * BUF/M. */
static bool
find_mount(const struct check_job *j, const char *point, char *buf, size_t len,
    struct mnt *m)
{
	for (int i = mount_count(j) - 1; i >= 0; i--)
		if (mount_at(j, i, buf, len, m) && strcmp(m->point, point) == 0)
			return true;
	return false;
}

/* mount_ns.old_root_detached: the job's mounts are its root tmpfs (one
 * mount at /) and what the jail puts there (the policy's binds, /dev,
 * /proc, /tmp, home, /work): no mount of the host's old root is left
 * anywhere (pivot_root(2): put_old must be unmounted). */
void
mnt_old_root_detached(struct check_ctx *c, struct check_result *r)
{
	static char fixed[][8] = {"/work", "/tmp", "/dev", "/proc"};
	struct check_job j;
	char binds[8192], home[4096], v[4096], *dirs[160];
	size_t ndirs = 0;
	int roots = 0, n, e;

	memset(&j, 0, sizeof(j));
	if ((e = jail_default_section(c, "filesystem", binds, sizeof(binds))) <
		0 ||
	    (e = jail_default_home(c, home, sizeof(home))) < 0) {
		check_fail(r, "stockade policy default: %s", strerror(-e));
		return;
	}
	/* The targets a sound jail mounts on: its fixed ones, home, and
	 * each bind of the default policy ("ro_bind=/usr": the same
	 * path). */
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		dirs[ndirs++] = fixed[i];
	dirs[ndirs++] = home;
	for (char *line = strtok(binds, "\n"); line != NULL && ndirs < 160;
	     line = strtok(NULL, "\n")) {
		char *eq = strchr(line, '=');

		if (eq != NULL && eq[1] == '/')
			dirs[ndirs++] = eq + 1;
	}
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("mounts")))
		goto out;
	if ((n = mount_count(&j)) <= 0) {
		check_fail(r, "the probe listed no mount: %s", j.out);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct mnt m;
		bool known = false;

		if (!mount_at(&j, i, v, sizeof(v), &m))
			continue;
		if (strcmp(m.point, "/") == 0) {
			roots++;
			continue;
		}
		for (size_t d = 0; d < ndirs && !known; d++)
			known = beneath(m.point, dirs[d]);
		if (!known || strcmp(m.type, "sysfs") == 0 ||
		    strncmp(m.type, "cgroup", 6) == 0) {
			check_fail(r,
			    "the job has a mount at %s (%s), none of "
			    "the jail's: the host's tree",
			    m.point, m.type);
			goto out;
		}
	}
	if (roots != 1)
		check_fail(r,
		    "the job has %d mounts at / (want its root tmpfs "
		    "alone)",
		    roots);
	else
		check_pass(r,
		    "one mount at /, every other one the jail's "
		    "(binds, /dev, /proc, /tmp, %s, /work)",
		    home);
out:
	check_job_free(&j);
}

/*
 * The mount at POINT among J's is of type TYPE (NULL: any) and has every
 * option of the comma-separated WANT; otherwise fails R (WHY says what
 * the options stop). With SEEN, appends "POINT OPTIONS; " to it.
 */
static bool
mount_opts_ok(struct check_result *r, const struct check_job *j,
    const char *point, const char *type, const char *want, const char *why,
    char *seen, size_t seenlen)
{
	char buf[4096], w[128];
	struct mnt m;

	if (!find_mount(j, point, buf, sizeof(buf), &m)) {
		check_fail(r, "no mount at %s in /proc/self/mountinfo", point);
		return false;
	}
	if (type != NULL && strcmp(m.type, type) != 0) {
		check_fail(r, "%s is a %s mount (want %s)", point, m.type,
		    type);
		return false;
	}
	snprintf(w, sizeof(w), "%s", want);
	for (char *o = strtok(w, ","); o != NULL; o = strtok(NULL, ","))
		if (!has_opt(m.opts, o)) {
			check_fail(r, "%s is mounted %s: no %s (%s)", point,
			    m.opts, o, why);
			return false;
		}
	if (seen != NULL) {
		size_t l = strlen(seen);

		snprintf(seen + l, seenlen - l, "%s%s %s %s", l > 0 ? "; " : "",
		    point, m.type, m.opts);
	}
	return true;
}

/* The mount at POINT in a plain job: as mount_opts_ok says. */
static void
mount_has(struct check_ctx *c, struct check_result *r, const char *point,
    const char *type, const char *want, const char *why)
{
	struct check_job j;
	char seen[4200] = "";

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("mounts")) &&
	    mount_opts_ok(r, &j, point, type, want, why, seen, sizeof(seen)))
		check_pass(r, "mountinfo: %s", seen);
	check_job_free(&j);
}

/* mount_ns.root_read_only: the jail's root tmpfs is remounted read-only
 * after pivot_root, so the payload can plant nothing outside its
 * writable mounts. */
void
mnt_root_ro(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/", "tmpfs", "ro,nosuid,nodev",
	    "the root must be read-only");
}

/* mount_ns.workspace_nosuid_nodev: /work ignores set-user-ID bits and
 * device nodes (mount_setattr(2) MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV): a
 * file the job makes there gains nothing when run or opened. */
void
mnt_work_nosuid(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/work", NULL, "nosuid,nodev",
	    "a set-user-ID file or device node there would act");
}

/* mount_ns.binds_read_only: the policy's host binds (/usr) are
 * read-only, nosuid and nodev. */
void
mnt_binds_ro(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/usr", NULL, "ro,nosuid,nodev",
	    "the host's files must stay as they are");
}

/* mount_ns.tmp_home_shm_nosuid_nodev: the job's writable tmpfs, /tmp,
 * home and /dev/shm, ignore set-user-ID bits and device nodes, and
 * /dev/shm, the one a program maps, is noexec as well (mount(2)
 * MS_NOSUID, MS_NODEV, MS_NOEXEC): a file the job makes there gains
 * nothing when run or opened. */
void
mnt_tmpfs_flags(struct check_ctx *c, struct check_result *r)
{
	const char *why = "a set-user-ID file or device node there would act";
	struct check_job j;
	char home[4096], seen[4200] = "";
	int e;

	memset(&j, 0, sizeof(j));
	if ((e = jail_default_home(c, home, sizeof(home))) < 0) {
		check_fail(r, "stockade policy default: %s", strerror(-e));
		return;
	}
	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("mounts")) &&
	    mount_opts_ok(r, &j, "/tmp", "tmpfs", "nosuid,nodev", why, seen,
		sizeof(seen)) &&
	    mount_opts_ok(r, &j, home, "tmpfs", "nosuid,nodev", why, seen,
		sizeof(seen)) &&
	    mount_opts_ok(r, &j, "/dev/shm", "tmpfs", "nosuid,nodev,noexec",
		"a program could map its own file executable", seen,
		sizeof(seen)))
		check_pass(r, "mountinfo: %s", seen);
	check_job_free(&j);
}

/* mount_ns.etc_write_refused_read_only: making a file in /etc, a
 * directory of the jail's root, is refused with EROFS: the read-only
 * root answers first (open(2) checks the mount before the LSM hooks).
 * Landlock, which grants /etc reading only, is the second wall: EACCES
 * means the mount let the write through and Landlock alone held it. */
void
mnt_etc_write_refused(struct check_ctx *c, struct check_result *r)
{
	const char *what = "open(/etc/stockade-probe-write, O_CREAT)";
	struct check_job j;
	char v[64];

	if (jail_probe_ok(c, r, &j, &jail_plain,
		ARGS("create", "/etc/stockade-probe-write")) &&
	    jail_val(r, &j, "create./etc/stockade-probe-write", v, sizeof(v))) {
		if (strcmp(v, "EROFS") == 0)
			check_pass(r, "%s: EROFS, the read-only root", what);
		else if (strcmp(v, "EACCES") == 0)
			check_fail(r,
			    "%s: EACCES: Landlock alone refused it, "
			    "the mount is writable",
			    what);
		else
			check_fail(r, "%s: %s (want EROFS)", what, v);
	}
	check_job_free(&j);
}

/* mount_ns.proc_sys_read_only: /proc/sys is a read-only bind in the
 * jail's /proc (kernel knobs its user namespace might otherwise write;
 * proc(5)). */
void
mnt_proc_sys_ro(struct check_ctx *c, struct check_result *r)
{
	mount_has(c, r, "/proc/sys", "proc", "ro,nosuid,nodev,noexec",
	    "kernel settings must not be written");
}

/* mount_ns.host_dev_hidden: /dev is the jail's own read-only tmpfs, and
 * none of the host's devices beyond null, zero, full, random and urandom
 * is there (no kmsg, mem, kvm, tty, console, disks, loop-control, fuse,
 * tun). */
void
mnt_dev_hidden(struct check_ctx *c, struct check_result *r)
{
	static const char *const devs[] = {
	    "/dev/kmsg",
	    "/dev/mem",
	    "/dev/kvm",
	    "/dev/tty",
	    "/dev/console",
	    "/dev/vda",
	    "/dev/sda",
	    "/dev/loop-control",
	    "/dev/fuse",
	    "/dev/net/tun",
	    "/dev/autofs",
	    "/dev/tty0",
	};
	const char *argv[2 + sizeof(devs) / sizeof(devs[0]) + 1];
	struct check_job j;
	char key[64], v[64], buf[4096];
	struct mnt m;
	size_t n = 0;

	argv[n++] = "stat";
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++)
		argv[n++] = devs[i];
	argv[n] = NULL;
	if (!jail_probe_ok(c, r, &j, &jail_plain, argv))
		goto out;
	for (size_t i = 0; i < sizeof(devs) / sizeof(devs[0]); i++) {
		snprintf(key, sizeof(key), "stat.%s", devs[i]);
		if (!jail_val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, "ENOENT") != 0) {
			check_fail(r, "the host's %s is in the jail (stat: %s)",
			    devs[i], v);
			goto out;
		}
	}
	check_job_free(&j);
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("mounts")))
		goto out;
	if (!find_mount(&j, "/dev", buf, sizeof(buf), &m) ||
	    strcmp(m.type, "tmpfs") != 0 || !has_opt(m.opts, "ro"))
		check_fail(r, "/dev is not the jail's read-only tmpfs: %s",
		    buf);
	else
		check_pass(r,
		    "/dev is a read-only tmpfs; /dev/kmsg, mem, kvm, "
		    "tty, console, vda, sda, ... do not exist");
out:
	check_job_free(&j);
}

/* mount_ns.host_paths_absent: the host's /etc/shadow, /root, /sys,
 * /var, /boot and this check's own scratch directory do not exist in
 * the jail. */
void
mnt_host_paths_absent(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	const char *paths[] = {"/etc/shadow", "/root", "/sys", "/var", "/boot",
	    c->tmpdir};
	char key[4200], v[64];

	if (!jail_probe_ok(c, r, &j, &jail_plain,
		ARGS("stat", paths[0], paths[1], paths[2], paths[3], paths[4],
		    paths[5])))
		goto out;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		snprintf(key, sizeof(key), "stat.%s", paths[i]);
		if (!jail_val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, "ENOENT") != 0) {
			check_fail(r,
			    "the host's %s is visible in the jail "
			    "(stat: %s)",
			    paths[i], v);
			goto out;
		}
	}
	check_pass(r, "/etc/shadow, /root, /sys, /var, /boot and %s: ENOENT",
	    c->tmpdir);
out:
	check_job_free(&j);
}

/* The host facts the jail's /proc masks (launcher/init/mounts.c, proc_mask;
 * docs/threat-model.md gives each one's reason). */
static const char *const masked[] = {
    "/proc/cmdline",
    "/proc/keys",
    "/proc/key-users",
    "/proc/partitions",
    "/proc/diskstats",
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/iomem",
    "/proc/config.gz",
    "/proc/kallsyms",
    "/proc/swaps",
    "/proc/timer_list",
};

/* The first line of the caller's own FILE into BUF ("" when it cannot
 * be read). */
static void
host_line(const char *file, char *buf, size_t size)
{
	FILE *f = fopen(file, "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)size, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* mount_ns.proc_host_facts_masked: the job reads nothing from the host
 * facts of its /proc (masked[]: the host's boot command line, the
 * caller's keyrings, the host's disks, memory zones, hardware, kernel
 * configuration and symbols): each reads empty, or the kernel has no
 * such file (ENOENT). An unreadable file (EACCES) is not masked: root
 * of the jail's user namespace, or another kernel, might read it. */
void
mnt_proc_host_facts_masked(struct check_ctx *c, struct check_result *r)
{
	const size_t n = sizeof(masked) / sizeof(masked[0]);
	const char *argv[2 + sizeof(masked) / sizeof(masked[0])];
	struct check_job j;
	char key[128], v[64], line[256];
	size_t k = 0;
	long serial;
	bool ok;

	argv[k++] = "read";
	for (size_t i = 0; i < n; i++)
		argv[k++] = masked[i];
	argv[k] = NULL;
	/* A key of ours for the job to see if /proc/keys is not masked:
	 * our uid may view it (keyrings(7)), and the job's uid is ours
	 * unless we are root (then 65534, and it stays unseen: /proc/keys
	 * is checked empty all the same). On our thread keyring, so nothing else of the caller's holds
	 * it; invalidated once the job is done. Without keyrings (-1),
	 * /proc/keys is checked as it is. */
	serial = syscall(SYS_add_key, "user", "stockade-check-keyring", "x",
	    (size_t)1, KEY_SPEC_THREAD_KEYRING);
	ok = jail_probe_ok(c, r, &j, &jail_plain, argv);
	if (serial >= 0)
		syscall(SYS_keyctl, KEYCTL_INVALIDATE, serial);
	if (!ok)
		goto out;
	for (size_t i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "read.%s", masked[i]);
		if (!jail_val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, "0") != 0 && strcmp(v, "ENOENT") != 0) {
			host_line(masked[i], line, sizeof(line));
			check_fail(r,
			    "the job reads the host's %s (read: %s; "
			    "the host's first line: \"%.80s\")",
			    masked[i], v, line);
			goto out;
		}
	}
	host_line("/proc/cmdline", line, sizeof(line));
	check_pass(r,
	    "%zu host files of /proc read empty or are absent "
	    "(the host's /proc/cmdline begins \"%.24s\")",
	    n, line);
out:
	check_job_free(&j);
}

/* Whether S has the form of a UUID, 8-4-4-4-12 lower-case hex digits. */
static bool
is_uuid(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-'
			 : !((s[i] >= '0' && s[i] <= '9') ||
			       (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

/* mount_ns.boot_id_own: /proc/sys/kernel/random/boot_id (random(4)) is
 * a UUID of the job's own, not the host's, and two jobs get different
 * ones: jobs of different sessions or tenants cannot tell from it that
 * they share a boot. */
void
mnt_boot_id_own(struct check_ctx *c, struct check_result *r)
{
	static const char bid[] = "/proc/sys/kernel/random/boot_id";
	struct check_job j;
	char host[256], first[64], second[64];

	host_line(bid, host, sizeof(host));
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("read", bid)) ||
	    !jail_val(r, &j, "line./proc/sys/kernel/random/boot_id", first,
		sizeof(first)))
		goto out;
	check_job_free(&j);
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("read", bid)) ||
	    !jail_val(r, &j, "line./proc/sys/kernel/random/boot_id", second,
		sizeof(second)))
		goto out;
	if (strcmp(first, host) == 0 || strcmp(second, host) == 0)
		check_fail(r, "the job reads the host's boot id %s", host);
	else if (!is_uuid(first) || !is_uuid(second))
		check_fail(r, "the job's boot id is not a UUID: \"%s\", \"%s\"",
		    first, second);
	else if (strcmp(first, second) == 0)
		check_fail(r, "two jobs read the same boot id %s", first);
	else
		check_pass(r,
		    "two jobs read boot ids %s and %s; the host's "
		    "is %s",
		    first, second, host);
out:
	check_job_free(&j);
}
