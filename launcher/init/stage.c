/*
 * stage.c: the job's writes as a layer of their own (issue 26; the
 * broker's side is broker/fs/stage.h). Jail init mounts /work as an
 * overlay (Documentation/filesystems/overlayfs.rst) whose lower layer is
 * the workspace and whose upper layer lives in the "stage", a tmpfs made
 * with the new mount API (fsopen(2), fsconfig(2), fsmount(2)) and never
 * attached to the jail's tree: the job reaches it only through the
 * overlay, and the broker through the descriptor init sends it
 * (WIRE_STAGE, then PROTO_STAGE).
 *
 * The stage is sized by the job's allowance: size= the RUN's
 * workspace_allow bytes and nr_inodes= its stage_files plus
 * STAGE_INODE_SLACK, so that the kernel itself refuses a write past them
 * (ENOSPC), fallocate(2) and a file unlinked but held open included
 * (tmpfs charges their pages until the last close). An allowance of 0
 * would be tmpfs's "unlimited" (size=0): the stage is then one page and
 * the overlay is mounted read-only, so that nothing at all is written.
 * With layer limits off the stage has the kernel's default size (as the
 * jail's other tmpfs have: mounts.c).
 *
 * A warm pool's jail (launcher/supervisor/pool.c) builds its overlay
 * here, with its template's allowance, long before its job comes, while
 * the broker may still write the workspace between jobs. overlayfs.rst
 * ("Changes to underlying filesystems") forbids changing the lower layer
 * while it is mounted only because the overlay caches what it looked up
 * there; nothing below /work is looked up before the job comes: building
 * the overlay looks at the lower layer's root alone (fstat here,
 * overlayfs's own checks of it), and init enters /work and Landlock opens
 * it, the overlay's root, not a name in it. With no lookup cached below
 * the root, the job sees the lower layer as it is when it runs. While the
 * job runs the broker does not write the workspace (it reads the stage
 * after the job); a job of another allowance is no job this jail may take
 * (jail_pool_compatible: a cold jail runs it).
 *
 * Only in the jail's user namespace (job_spec_staged), where init holds
 * every capability over the stage: overlayfs makes its upper layer's
 * entries with its mounter's credentials, and without a user namespace
 * init has a root zygote's CAP_SYS_ADMIN, CAP_SETUID and CAP_SETGID
 * alone; there the overlay's creation fails (EACCES on Linux 6.18, with
 * the stage made as the workspace's owner too: its checks of the work
 * directory make temporaries of mode 0).
 *
 * What the kernel must have: overlayfs mountable in a user namespace
 * (Linux 5.11), tmpfs with user xattrs for the userxattr option (6.6),
 * and layers given by detached mounts (6.15: clone_private_mount of a
 * mount of no namespace). Without them the overlay fails and the job is
 * refused with STAGE_WORK_STAGE or STAGE_WORK_OVERLAY: never a plain bind
 * of the workspace in its place (fail closed).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail.h"
#include "mounts_internal.h"

/* Inodes the stage takes for itself, beyond the job's stage_files: the
 * tmpfs root, upper/, work/, overlayfs's work/work and the temporaries it
 * makes there (a copy-up's file before its rename, the whiteout it links
 * for every deletion), the token (PROTO_STAGE_TOKEN), and the space
 * xattrs take of tmpfs's inode budget
 * (user.overlay.opaque). A directory of the lower layer that the job
 * writes beneath is copied up and takes one of the job's inodes. */
#define STAGE_INODE_SLACK 17u
/* The page the stage's token (PROTO_STAGE_TOKEN) takes, bytes: added to
 * the size, so that the job keeps its whole allowance. */
#define STAGE_TOKEN_PAGE 4096u
/* The largest stage, bytes (1 PiB): tmpfs rounds size= up to pages, and
 * a size near 2^64 would wrap to 0, which is "unlimited". */
#define STAGE_MAX_BYTES (UINT64_C(1) << 50)
/* The largest stage_files honoured (nr_inodes is an unsigned long). */
#define STAGE_MAX_FILES (UINT64_C(1) << 32)

static int
fscfg(int fd, unsigned cmd, const char *key, const void *val, int aux)
{
	if (syscall(SYS_fsconfig, fd, cmd, key, val, aux) < 0)
		return -errno;
	return 0;
}

static int
fscfg_u64(int fd, const char *key, uint64_t v)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRIu64, v);
	return fscfg(fd, FSCONFIG_SET_STRING, key, text, 0);
}

/* The configured context FS made a superblock and detached mount with
 * the MOUNT_ATTR_* ATTRS; FS is closed. The O_PATH descriptor of its root,
 * or a negative errno. */
static int
create_and_mount(int fs, uint64_t attrs)
{
	int m, e = fscfg(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0);

	if (e == 0) {
		m = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs);
		e = m < 0 ? -errno : m;
	}
	close(fs);
	return e;
}

/* The stage tmpfs for SPEC, mode 0700, detached: its root's O_PATH
 * descriptor, or a negative errno. */
static int
make_stage_tmpfs(const struct job_spec *spec)
{
	uint64_t bytes = spec->workspace_allow, files = spec->stage_files;
	int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC), e;

	if (fs < 0)
		return -errno;
	if (bytes > STAGE_MAX_BYTES)
		bytes = STAGE_MAX_BYTES;
	if (files > STAGE_MAX_FILES)
		files = STAGE_MAX_FILES;
	/* size=0 would be unlimited: an allowance of 0 gets one page, and
	 * the overlay over it is read-only (jail_stage_build). */
	if (bytes == 0)
		bytes = 4096;
	e = fscfg(fs, FSCONFIG_SET_STRING, "mode", "0700", 0);
	if (e == 0 && !job_spec_layer_off(spec, JOB_LAYER_LIMITS))
		e = fscfg_u64(fs, "size", bytes + STAGE_TOKEN_PAGE);
	if (e == 0 && !job_spec_layer_off(spec, JOB_LAYER_LIMITS))
		e = fscfg_u64(fs, "nr_inodes", files + STAGE_INODE_SLACK);
	if (e < 0) {
		close(fs);
		return e;
	}
	return create_and_mount(fs, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

/*
 * PROTO_STAGE_UPPER and PROTO_STAGE_WORK in the stage STAGE, the upper
 * one with the owner and mode LOWER (the lower layer's root, as this
 * namespace shows it) has, so that /work looks as the workspace did. An
 * owner this namespace does not map cannot be given: a group alone is
 * then left as ours when the owner is us (the payload's permissions are
 * its owner's either way), anything else is a refusal. 0 or a negative
 * errno.
 */
static int
make_upper(int stage, const struct stat *lower)
{
	if (mkdirat(stage, PROTO_STAGE_UPPER, 0700) < 0 ||
	    mkdirat(stage, PROTO_STAGE_WORK, 0700) < 0)
		return -errno;
	if (fchownat(stage, PROTO_STAGE_UPPER, lower->st_uid, lower->st_gid,
		AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != EINVAL || lower->st_uid != geteuid())
			return -errno;
	}
	if (fchmodat(stage, PROTO_STAGE_UPPER, lower->st_mode & 07777, 0) < 0)
		return -errno;
	return 0;
}

/* The stage's token (proto.h, PROTO_STAGE_TOKEN): PROTO_STAGE_TOKEN_BYTES
 * random bytes (getrandom(2)) in a new file of mode 0400 at the root of
 * the stage STAGE. 0 or a negative errno. */
static int
make_token(int stage)
{
	uint8_t token[PROTO_STAGE_TOKEN_BYTES];
	ssize_t n;
	int fd, e = 0;

	do
		n = getrandom(token, sizeof(token), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(token))
		return n < 0 ? -errno : -EIO;
	fd = openat(stage, PROTO_STAGE_TOKEN,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (fd < 0)
		return -errno;
	do
		n = write(fd, token, sizeof(token));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(token))
		e = n < 0 ? -errno : -EIO;
	close(fd);
	explicit_bzero(token, sizeof(token));
	return e;
}

/* Layer KEY ("lowerdir+", "upperdir", "workdir") of the overlay context
 * OVL as the directory FD: by descriptor (FSCONFIG_SET_FD, Linux 6.13),
 * else by its /proc/self/fd path (LEGACY, the older key "lowerdir" for
 * the lower layer). 0 or a negative errno. */
static int
set_layer(int ovl, const char *key, const char *legacy, int fd)
{
	char path[64];
	int e = fscfg(ovl, FSCONFIG_SET_FD, key, NULL, fd);

	if (e != -EINVAL && e != -EOPNOTSUPP)
		return e;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return fscfg(ovl, FSCONFIG_SET_STRING, legacy, path, 0);
}

/* The overlay of LOWER under STAGE's upper and work directories,
 * detached, nosuid and nodev, read-only when RDONLY: its O_PATH
 * descriptor, or a negative errno. */
static int
make_overlay(int lower, int stage, bool rdonly)
{
	int fs, up = -1, wk = -1, e;

	if ((fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC)) < 0)
		return -errno;
	up = openat(stage, PROTO_STAGE_UPPER,
	    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	wk = openat(stage, PROTO_STAGE_WORK,
	    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	e = up < 0 || wk < 0 ? -errno : 0;
	if (e == 0)
		e = set_layer(fs, "lowerdir+", "lowerdir", lower);
	if (e == 0)
		e = set_layer(fs, "upperdir", "upperdir", up);
	if (e == 0)
		e = set_layer(fs, "workdir", "workdir", wk);
	if (e == 0)
		e = fscfg(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0);
	if (up >= 0)
		close(up);
	if (wk >= 0)
		close(wk);
	if (e < 0) {
		close(fs);
		return e;
	}
	return create_and_mount(fs,
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
		(rdonly ? MOUNT_ATTR_RDONLY : 0));
}

/* STAGE's root opened O_RDONLY | O_DIRECTORY, close-on-exec, numbered
 * above 2 (init has closed 0, 1 and 2, which the payload's streams
 * take): the descriptor or a negative errno. */
static int
open_root(int stage)
{
	int fd = openat(stage, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), high,
	    e;

	if (fd < 0 || fd > 2)
		return fd < 0 ? -errno : fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	e = high < 0 ? -errno : high;
	close(fd);
	return e;
}

int
jail_stage_build(const struct job_spec *spec, int lower, int *stage_root,
    int *stage)
{
	bool rdonly = spec->workspace_allow == 0 &&
	    !job_spec_layer_off(spec, JOB_LAYER_LIMITS);
	struct stat lst;
	int st, ovl, e;

	*stage_root = -1;
	if (fstat(lower, &lst) < 0)
		return mnt_fail(stage, STAGE_WORK_STAGE, -errno);
	if ((st = make_stage_tmpfs(spec)) < 0)
		return mnt_fail(stage, STAGE_WORK_STAGE, st);
	/* The broker reads the stage: a directory it can list, not the
	 * O_PATH descriptor fsmount(2) gives. */
	if ((e = make_upper(st, &lst)) < 0 || (e = make_token(st)) < 0 ||
	    (e = *stage_root = open_root(st)) < 0) {
		*stage_root = -1;
		close(st);
		return mnt_fail(stage, STAGE_WORK_STAGE, e);
	}
	ovl = make_overlay(lower, st, rdonly);
	close(st);
	if (ovl < 0) {
		close(*stage_root);
		*stage_root = -1;
		return mnt_fail(stage, STAGE_WORK_OVERLAY, ovl);
	}
	return ovl;
}
