/*
 * proc_mount.c: the jail's /proc, step 6 of mounts.c
 * (mounts_internal.h, mounts_build_proc): a procfs of the jail's pid
 * namespace or the host's bound, its kernel knobs read-only, and the host
 * facts it shows masked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail.h"
#include "mounts_internal.h"

/* Binds the host's /proc at the jail's, nosuid, nodev, noexec. Returns
 * 0 or a negative errno. */
static int
bind_host_proc(void)
{
	if (mount("/proc", ROOT "/proc", NULL, MS_BIND | MS_REC, NULL) < 0)
		return -errno;
	return mnt_setattr(AT_FDCWD, ROOT "/proc", AT_RECURSIVE,
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0);
}

/* Kernel knobs the jail's /proc would otherwise expose for writing to
 * whoever the kernel thinks may write them. */
static const char *const proc_ro[] = {
    ROOT "/proc/sys",
    ROOT "/proc/sysrq-trigger",
    ROOT "/proc/irq",
    ROOT "/proc/bus",
};

static int
proc_read_only(void)
{
	for (size_t i = 0; i < sizeof(proc_ro) / sizeof(proc_ro[0]); i++) {
		int e;

		if (mount(proc_ro[i], proc_ro[i], NULL, MS_BIND | MS_REC,
			NULL) < 0) {
			if (errno == ENOENT)
				continue;
			return -errno;
		}
		e = mnt_setattr(AT_FDCWD, proc_ro[i], AT_RECURSIVE,
		    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			MOUNT_ATTR_NOEXEC,
		    0);
		if (e < 0)
			return e;
	}
	return 0;
}

/*
 * Host facts in /proc that a job does not need (docs/threat-model.md,
 * "Host facts the jail can read", which gives each path's reason): each
 * file is covered with an empty read-only file, each directory with an
 * empty read-only directory, as runc does for its masked paths
 * (runtime-spec config-linux.md, maskedPaths). A path the kernel does
 * not have (no CONFIG_*) is nothing to hide and is skipped; any other
 * failure refuses the job.
 */
static const char *const proc_mask_files[] = {
    "/proc/cmdline", /* the host's boot command line */
    "/proc/keys", /* the caller's keyrings, by name */
    "/proc/key-users", /* key quotas of every user of the host */
    "/proc/kcore", /* runc: the kernel's memory */
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug", /* runc: other tasks' names and timings */
    "/proc/partitions",
    "/proc/diskstats", /* disks; others' I/O */
    "/proc/swaps", /* swap files by host path */
    "/proc/zoneinfo",
    "/proc/buddyinfo",
    "/proc/pagetypeinfo",
    "/proc/vmallocinfo",
    "/proc/slabinfo", /* kernel memory layout */
    "/proc/iomem",
    "/proc/ioports", /* the host's hardware */
    "/proc/config.gz", /* the kernel's build options */
    "/proc/kallsyms",
    "/proc/modules", /* the kernel's code */
    "/proc/kpagecount",
    "/proc/kpageflags",
    "/proc/kpagecgroup",
};
static const char *const proc_mask_dirs[] = {
    "/proc/acpi", "/proc/asound", "/proc/scsi", /* runc: hardware */
    "/proc/driver", /* rtc and driver state */
};
/* The boot id (random(4)), replaced by one of the job's own so that two
 * jobs cannot tell they share a boot from it. */
#define BOOT_ID "/proc/sys/kernel/random/boot_id"
/* Where the masks' tmpfs sits while they are bound, then unmounted. */
#define MASKS ROOT "/.stockade-masks"

/*
 * Writes a fresh random UUID (version 4, RFC 9562 form, as the kernel's
 * boot_id) and a newline into BUF of at least 38 bytes. Returns 0 or a
 * negative errno from getrandom(2).
 */
static int
random_uuid(char *buf, size_t size)
{
	uint8_t u[16];

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		return errno != 0 ? -errno : -EIO;
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
	snprintf(buf, size,
	    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x\n",
	    u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
	    u[11], u[12], u[13], u[14], u[15]);
	return 0;
}

/*
 * Binds SRC (a path under MASKS) over the jail path TARGET (ROOT
 * prefixed here), read-only, nosuid, nodev, noexec. Returns 0, 0 when
 * TARGET does not exist (ENOENT: nothing to hide), or a negative errno.
 */
static int
mask_one(const char *src, const char *target)
{
	char dst[PATH_MAX];
	int e;

	if ((e = mnt_in_root(dst, sizeof(dst), target)) < 0)
		return e;
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return errno == ENOENT ? 0 : -errno;
	return mnt_setattr(AT_FDCWD, dst, 0,
	    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		MOUNT_ATTR_NOEXEC,
	    0);
}

/*
 * Covers the host facts of the jail's /proc (proc_mask_files,
 * proc_mask_dirs, BOOT_ID) with the jail's own: an empty file, an empty
 * directory, a random boot id, each on a small tmpfs that is unmounted
 * again once they are bound (the binds keep it), so the jail's tree
 * holds no trace of it. Runs after the /proc mount and its read-only
 * binds. Returns 0 or a negative errno; the caller refuses the job
 * (STAGE_PROC_MASK) on any error.
 */
static int
proc_mask(void)
{
	char id[40];
	int e;

	if ((e = random_uuid(id, sizeof(id))) < 0)
		return e;
	if (mkdir(MASKS, 0700) < 0)
		return -errno;
	if (mount("tmpfs", MASKS, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		"mode=0755,size=16k,nr_inodes=8") < 0)
		return -errno;
	if ((e = mnt_write_file(MASKS "/empty", "", 0444)) < 0 ||
	    (e = mnt_write_file(MASKS "/boot_id", id, 0444)) < 0)
		goto out;
	if (mkdir(MASKS "/dir", 0555) < 0) {
		e = -errno;
		goto out;
	}
	for (size_t i = 0;
	     i < sizeof(proc_mask_files) / sizeof(proc_mask_files[0]); i++)
		if ((e = mask_one(MASKS "/empty", proc_mask_files[i])) < 0)
			goto out;
	for (size_t i = 0;
	     i < sizeof(proc_mask_dirs) / sizeof(proc_mask_dirs[0]); i++)
		if ((e = mask_one(MASKS "/dir", proc_mask_dirs[i])) < 0)
			goto out;
	e = mask_one(MASKS "/boot_id", BOOT_ID);
out:
	if (umount2(MASKS, MNT_DETACH) < 0 && e == 0)
		e = -errno;
	if (rmdir(MASKS) < 0 && e == 0)
		e = -errno;
	return e;
}

int
mounts_build_proc(const struct job_spec *spec, bool owner_set, int *stage)
{
	int e;

	if ((e = mnt_mkdir_p(ROOT "/proc", 0555)) < 0)
		return mnt_fail(stage, STAGE_PROC, e);
	/* A fresh procfs needs a pid namespace of our own, where this init
	 * is pid 1 (layer pid_ns); without one, the host's is bound. */
	if (getpid() != 1)
		e = bind_host_proc();
	else if (mount("proc", ROOT "/proc", "proc",
		     MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		e = -errno;
	else
		e = 0;
	if (e < 0)
		return mnt_fail(stage, STAGE_PROC, e);
	/* The jail user namespace's quotas, through this /proc while its
	 * /proc/sys is still writable (jail.h). Layer user_ns off: no
	 * namespace of the jail's own, and the files would be the host's;
	 * layer limits off: the caller's, as its rlimits. */
	if (!owner_set && !job_spec_layer_off(spec, JOB_LAYER_LIMITS) &&
	    (e = jail_user_quotas(ROOT "/proc/sys/user",
		 job_spec_layer_off(spec, JOB_LAYER_SECCOMP))) < 0)
		return mnt_fail(stage, STAGE_USER_QUOTAS, e);
	if ((e = proc_read_only()) < 0)
		return mnt_fail(stage, STAGE_PROC, e);
	if ((e = proc_mask()) < 0)
		return mnt_fail(stage, STAGE_PROC_MASK, e);
	return 0;
}
