/*
 * mounts.c: the jail's file system, built by jail init inside its own
 * mount namespace (owned by the jail's user namespace, so nothing here
 * touches the host's mount table).
 *
 * Order:
 *   1. make every mount private (no propagation to or from the host);
 *   2. a tmpfs over /tmp of the namespace becomes the new root R;
 *   3. generated /etc files (passwd, group, hostname, hosts) in R;
 *   4. the policy's read-only binds, each recursive, then
 *      mount_setattr(MOUNT_ATTR_RDONLY|NOSUID|NODEV, AT_RECURSIVE) so no
 *      submount stays writable; a host path that is a symlink is
 *      recreated as the same symlink;
 *   5. /dev: a tmpfs with bind mounts of null, zero, full, random,
 *      urandom, the usual symlinks and a size-capped /dev/shm;
 *  5b. the overlay of step 8 built (detached), while this user
 *      namespace may still make mount namespaces (step 6's quotas) and
 *      the binds' sources are closed (init's descriptors are few);
 *   6. a fresh /proc of the jail's pid namespace (layer pid_ns off: the
 *      host's, bound, since a user namespace may mount no proc of a pid
 *      namespace it does not own), with /proc/sys,
 *      /proc/sysrq-trigger, /proc/irq and /proc/bus bound read-only over
 *      themselves, as bubblewrap does, and the host facts it shows
 *      masked (proc_mask: empty files and directories, a boot id of the
 *      job's own);
 *   7. a size-capped /tmp and home directory (tmpfs; layer private_cwd
 *      off: the host's /tmp bound read-write, no home);
 *   8. the workspace at /work as the lower layer of an overlay whose
 *      upper layer is on the job's stage, a detached tmpfs of its
 *      allowance (stage.c; issue 26): the lower is the detached
 *      id-mapped mount a root launcher made, or the current directory,
 *      translated into this namespace by unshare(CLONE_NEWNS); without a
 *      stage (job_spec_staged, layer user_ns off) that mount itself;
 *   9. pivot_root(R, R) and a lazy unmount of the old root, the
 *      "new_root and put_old the same" idiom of pivot_root(2);
 *  10. R itself remounted read-only.
 * After this no host path is reachable except through the binds.
 */
#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "jail.h"
#include "mounts_internal.h"

#define ROOT_TMPFS_OPTS "mode=0755,size=4m,nr_inodes=4096"

int
mnt_setattr(int dfd, const char *path, unsigned flags, uint64_t set,
    uint64_t clr)
{
	struct mount_attr attr = {.attr_set = set, .attr_clr = clr};

	if (syscall(SYS_mount_setattr, dfd, path, flags, &attr, sizeof(attr)) <
	    0)
		return -errno;
	return 0;
}

/* mkdir -p of PATH (absolute) with MODE; existing directories are fine. */
int
mnt_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Creates the parent directories of PATH. */
int
mnt_mkdir_parent(const char *path)
{
	char buf[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	slash = strrchr(buf, '/');
	if (slash == NULL || slash == buf)
		return 0;
	*slash = '\0';
	return mnt_mkdir_p(buf, 0755);
}

int
mnt_write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path,
	    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	int e;

	if (fd < 0)
		return -errno;
	e = write_all(fd, text, strlen(text));
	close(fd);
	return e;
}

/* An empty regular file to bind a file over. */
int
mnt_touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0444);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int
mnt_in_root(char *buf, size_t size, const char *target)
{
	int n = snprintf(buf, size, "%s%s", ROOT, target);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A tmpfs's inode cap: one inode per 4 KiB of its size, at least 1024,
 * so a job cannot pin unaccounted kernel memory with empty files. */
static unsigned long long
inodes_for(uint64_t size)
{
	uint64_t n = size / 4096;

	return n < 1024 ? 1024 : n;
}

/* The payload's ids as the jail's files show them (mounts.h). */
struct owner {
	bool set; /* no user namespace: the host's ids, given */
	uid_t uid;
	gid_t gid;
};

static int
build_etc(const struct job_spec *spec, const struct owner *o)
{
	char text[1024];
	const char *home = spec->home, *user = spec->user;
	unsigned uid = o->set ? (unsigned)o->uid : spec->uid;
	unsigned gid = o->set ? (unsigned)o->gid : spec->gid;
	int e;

	if ((e = mnt_mkdir_p(ROOT "/etc", 0755)) < 0)
		return e;
	snprintf(text, sizeof(text),
	    "root:x:0:0:root:/root:/bin/sh\n"
	    "%s:x:%u:%u:stockade payload:%s:/bin/sh\n"
	    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	    user, uid, gid, home);
	if ((e = mnt_write_file(ROOT "/etc/passwd", text, 0644)) < 0)
		return e;
	snprintf(text, sizeof(text), "root:x:0:\n%s:x:%u:\nnogroup:x:65534:\n",
	    user, gid);
	if ((e = mnt_write_file(ROOT "/etc/group", text, 0644)) < 0)
		return e;
	snprintf(text, sizeof(text), "%s\n", spec->hostname);
	if ((e = mnt_write_file(ROOT "/etc/hostname", text, 0644)) < 0)
		return e;
	snprintf(text, sizeof(text),
	    "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n"
	    "::1\tlocalhost ip6-localhost ip6-loopback\n",
	    spec->hostname);
	/* No resolv.conf: the network is off, so name lookups fail fast. */
	return mnt_write_file(ROOT "/etc/hosts", text, 0644);
}

/*
 * The options of a tmpfs of MODE and SIZE bytes (0: no size= and no
 * nr_inodes=, the kernel's defaults: layer limits off) owned by O when
 * O->set, into BUF.
 */
static void
tmpfs_opts(char *buf, size_t size, mode_t mode, uint64_t bytes,
    const struct owner *o)
{
	int n = snprintf(buf, size, "mode=%04o", (unsigned)mode);

	if (bytes > 0 && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n,
		    ",size=%llu,nr_inodes=%llu", (unsigned long long)bytes,
		    inodes_for(bytes));
	if (o->set && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ",uid=%u,gid=%u",
		    (unsigned)o->uid, (unsigned)o->gid);
}

/* The size of the jail's tmpfs of BYTES: 0 (unbounded) with layer
 * limits off. */
static uint64_t
tmpfs_size(const struct job_spec *spec, uint64_t bytes)
{
	return job_spec_layer_off(spec, JOB_LAYER_LIMITS) ? 0 : bytes;
}

static int
build_dev(const struct job_spec *spec, const struct owner *o)
{
	static const char *const nodes[] = {"null", "zero", "full", "random",
	    "urandom"};
	static const char *const links[][2] = {
	    {"/proc/self/fd", ROOT "/dev/fd"},
	    {"/proc/self/fd/0", ROOT "/dev/stdin"},
	    {"/proc/self/fd/1", ROOT "/dev/stdout"},
	    {"/proc/self/fd/2", ROOT "/dev/stderr"},
	};
	unsigned long shm_flags;
	char opts[160];
	int e;

	if ((e = mnt_mkdir_p(ROOT "/dev", 0755)) < 0)
		return e;
	if (mount("tmpfs", ROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
		"mode=0755,size=64k,nr_inodes=64") < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		char src[64], dst[64];

		snprintf(src, sizeof(src), "/dev/%s", nodes[i]);
		snprintf(dst, sizeof(dst), ROOT "/dev/%s", nodes[i]);
		if ((e = mnt_touch(dst)) < 0)
			return e;
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
			return -errno;
		/* A read-only mount still lets a device be written (the
		 * check covers regular files, directories and symlinks), but
		 * not chmod, chown or utimes of the host's node. */
		if ((e = mnt_setattr(AT_FDCWD, dst, 0,
			 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
			     MOUNT_ATTR_NOEXEC,
			 0)) < 0)
			return e;
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlink(links[i][0], links[i][1]) < 0)
			return -errno;
	if (spec->flags & JOB_F_DEVPTS) {
		/* A new devpts instance: the jail's pseudo-terminals are its
		 * own, none of the host's are visible (devpts(5)'s
		 * "newinstance" is implied on kernels since 4.7). */
		if ((e = mnt_mkdir_p(ROOT "/dev/pts", 0755)) < 0)
			return e;
		if (mount("devpts", ROOT "/dev/pts", "devpts",
			MS_NOSUID | MS_NOEXEC,
			"newinstance,ptmxmode=0666,mode=0620") < 0)
			return -errno;
		if (symlink("pts/ptmx", ROOT "/dev/ptmx") < 0)
			return -errno;
	}
	if ((e = mnt_mkdir_p(ROOT "/dev/shm", 01777)) < 0)
		return e;
	tmpfs_opts(opts, sizeof(opts), 01777,
	    tmpfs_size(spec, spec->limits.tmp_bytes), o);
	shm_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	if (mount("tmpfs", ROOT "/dev/shm", "tmpfs", shm_flags, opts) < 0)
		return -errno;
	return mnt_setattr(AT_FDCWD, ROOT "/dev", 0, MOUNT_ATTR_RDONLY, 0);
}

static int
mount_tmpfs(const char *path, mode_t mode, uint64_t size, const struct owner *o)
{
	char opts[160];
	int e;

	if ((e = mnt_mkdir_p(path, 0755)) < 0)
		return e;
	/* Without uid=/gid= the tmpfs belongs to its mounter, the payload's
	 * ids in its user namespace; only mapped ids may be named. */
	tmpfs_opts(opts, sizeof(opts), mode, size, o);
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return -errno;
	return 0;
}

/* Moves the detached tree TREE_FD (open_tree(2)) to DST, made nosuid,
 * nodev and kept writable. */
static int
rw_attach(int tree_fd, const char *dst)
{
	int e;

	if ((e = mnt_mkdir_p(dst, 0755)) < 0)
		return e;
	if (syscall(SYS_move_mount, tree_fd, "", AT_FDCWD, dst,
		MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -errno;
	return mnt_setattr(AT_FDCWD, dst, AT_RECURSIVE,
	    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0);
}

/*
 * Step 7: /tmp and home as size-capped tmpfs owned as O says, or with
 * layer private_cwd off (!PRIVATE_DIRS) the host's /tmp (HOST_TMP, which
 * is closed) attached read-write and no home. Returns 0, or a negative
 * errno with *STAGE.
 */
static int
build_tmp_home(const struct job_spec *spec, const struct owner *o,
    bool private_dirs, int host_tmp, int *stage)
{
	char path[PATH_MAX];
	int e;

	if (!private_dirs) {
		e = rw_attach(host_tmp, ROOT "/tmp");
		close(host_tmp);
		if (e < 0)
			return mnt_fail(stage, STAGE_TMP, e);
	} else {
		if ((e = mount_tmpfs(ROOT "/tmp", 01777,
			 tmpfs_size(spec, spec->limits.tmp_bytes), o)) < 0)
			return mnt_fail(stage, STAGE_TMP, e);
		/* The decoder refused a home that is /, /work, /tmp or not
		 * normalised, so this tmpfs shadows nothing the jail
		 * needs. */
		if ((e = mnt_in_root(path, sizeof(path), spec->home)) < 0)
			return mnt_fail(stage, STAGE_HOME, e);
		if ((e = mount_tmpfs(path, 0700,
			 tmpfs_size(spec, spec->limits.home_bytes), o)) < 0)
			return mnt_fail(stage, STAGE_HOME, e);
	}
	return 0;
}

/* Moves the detached tree TREE_FD (closed) to ROOT/work: a mount of the
 * zygote's namespace is no layer a jail's user namespace may stack on,
 * one of this namespace is. 0 or a negative errno. */
static int
attach_tree(int tree_fd)
{
	int e = 0;

	if (syscall(SYS_move_mount, tree_fd, "", AT_FDCWD, ROOT "/work",
		MOVE_MOUNT_F_EMPTY_PATH) < 0)
		e = -errno;
	close(tree_fd);
	return e;
}

/*
 * Step 8 for a job without a stage (job_spec_staged: an evaluation with
 * layer user_ns off): the workspace itself at /work, nosuid and nodev:
 * WORK_TREE_FD moved there, or without one (-1) WSFD bound; the one used
 * is closed. Returns 0, or a negative errno with *STAGE STAGE_WORK.
 */
static int
bind_work(int work_tree_fd, int wsfd, int *stage)
{
	char path[PATH_MAX];
	int e;

	if ((e = mnt_mkdir_p(ROOT "/work", 0755)) < 0)
		return mnt_fail(stage, STAGE_WORK, e);
	if (work_tree_fd >= 0 && (e = attach_tree(work_tree_fd)) < 0)
		return mnt_fail(stage, STAGE_WORK, e);
	if (work_tree_fd < 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", wsfd);
		if (mount(path, ROOT "/work", NULL, MS_BIND, NULL) < 0)
			return mnt_fail(stage, STAGE_WORK, -errno);
		close(wsfd);
	}
	if ((e = mnt_setattr(AT_FDCWD, ROOT "/work", 0,
		 MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) < 0)
		return mnt_fail(stage, STAGE_WORK, e);
	return 0;
}

/*
 * Step 5b: the overlay of the workspace (stage.c), built before step 6
 * sets this user namespace's quotas (quotas.c: max_mnt_namespaces 0),
 * which every detached mount counts against (fsmount(2) makes an
 * anonymous mount namespace). The workspace is WORK_TREE_FD (a detached
 * id-mapped tree, attached at ROOT/work until step 8: a mount of the
 * zygote's namespace is no layer a jail's user namespace may stack on,
 * one of this namespace is) or, without one (-1), WSFD, the workspace
 * directory; both are closed. The overlay's detached mount goes into
 * *OVL and the stage's root into *STAGE_FD. Returns 0, or a negative
 * errno with *STAGE STAGE_WORK, STAGE_WORK_STAGE or STAGE_WORK_OVERLAY.
 */
static int
build_work(const struct job_spec *spec, int work_tree_fd, int wsfd, int *stage,
    int *ovl, int *stage_fd)
{
	int lower = wsfd, e;

	if ((e = mnt_mkdir_p(ROOT "/work", 0755)) < 0)
		return mnt_fail(stage, STAGE_WORK, e);
	if (work_tree_fd >= 0) {
		if ((e = attach_tree(work_tree_fd)) < 0)
			return mnt_fail(stage, STAGE_WORK, e);
		lower = open(ROOT "/work", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (lower < 0)
			return mnt_fail(stage, STAGE_WORK, -errno);
	}
	*ovl = jail_stage_build(spec, lower, stage_fd, stage);
	close(lower);
	return *ovl < 0 ? *ovl : 0;
}

/*
 * Step 8: the overlay OVL (closed) at /work, the id-mapped tree under it
 * (TREE_ATTACHED) detached first: the overlay holds its own private
 * copy, and the job's tree has no path to the workspace but the
 * overlay. Returns 0, or a negative errno with *STAGE
 * STAGE_WORK_OVERLAY.
 */
static int
attach_work(int ovl, bool tree_attached, int *stage)
{
	int e = 0;

	if (tree_attached && umount2(ROOT "/work", MNT_DETACH) < 0)
		e = -errno;
	else if (syscall(SYS_move_mount, ovl, "", AT_FDCWD, ROOT "/work",
		     MOVE_MOUNT_F_EMPTY_PATH) < 0)
		e = -errno;
	close(ovl);
	return e < 0 ? mnt_fail(stage, STAGE_WORK_OVERLAY, e) : 0;
}

/*
 * Steps 9 and 10: pivot_root into ROOT with the old root detached, ROOT
 * remounted read-only, nosuid and nodev, then /work entered unless
 * OWNER_SET (no user namespace: init enters it once it has the payload's
 * ids). Returns 0, or a negative errno with *STAGE.
 */
static int
pivot_into_root(bool owner_set, int *stage)
{
	int e;

	if (chdir(ROOT) < 0)
		return mnt_fail(stage, STAGE_PIVOT_ROOT, -errno);
	if (syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0) {
		return mnt_fail(stage, STAGE_PIVOT_ROOT, -errno);
	}
	if (chdir("/") < 0)
		return mnt_fail(stage, STAGE_PIVOT_ROOT, -errno);

	if ((e = mnt_setattr(AT_FDCWD, "/", 0,
		 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) <
	    0)
		return mnt_fail(stage, STAGE_REMOUNT_ROOT, e);
	/* Without a user namespace, init enters /work once it has the
	 * payload's ids: root without capabilities may not (mounts.h). */
	if (!owner_set && chdir("/work") < 0)
		return mnt_fail(stage, STAGE_WORK, -errno);
	return 0;
}

/*
 * Steps 2 to 7 of mounts_build_root (and 5b, the workspace's overlay
 * into *OVL and its stage into *STAGE_FD). Returns 0 or a negative errno
 * with *STAGE (and *BIND).
 */
static int
build_steps(const struct job_spec *spec, int work_tree_fd, int wsfd,
    uid_t owner_uid, gid_t owner_gid, int *stage, int *bind, int *ovl,
    int *stage_fd)
{
	const struct owner own = {
	    .set = owner_uid != (uid_t)-1,
	    .uid = owner_uid,
	    .gid = owner_gid,
	};
	const bool private_dirs = !job_spec_layer_off(spec,
	    JOB_LAYER_PRIVATE_CWD);
	int src_fds[JOB_MAX_MOUNTS];
	int host_tmp = -1, e;

	if ((e = mounts_open_sources(spec, src_fds, private_dirs, &host_tmp,
		 stage, bind)) < 0)
		return e;
	if (mount("tmpfs", ROOT, "tmpfs", MS_NOSUID | MS_NODEV,
		ROOT_TMPFS_OPTS) < 0)
		return mnt_fail(stage, STAGE_ROOT_TMPFS, -errno);
	if ((e = build_etc(spec, &own)) < 0)
		return mnt_fail(stage, STAGE_ETC, e);
	if ((e = mounts_bind_sources(spec, src_fds, stage, bind)) < 0)
		return e;
	if ((e = build_dev(spec, &own)) < 0)
		return mnt_fail(stage, STAGE_DEV, e);
	if (job_spec_staged(spec) &&
	    (e = build_work(spec, work_tree_fd, wsfd, stage, ovl, stage_fd)) <
		0)
		return e;
	if ((e = mounts_build_proc(spec, own.set, stage)) < 0)
		return e;
	return build_tmp_home(spec, &own, private_dirs, host_tmp, stage);
}

int
mounts_build_root(const struct job_spec *spec, int work_tree_fd,
    uid_t owner_uid, gid_t owner_gid, int *stage, int *bind, int *stage_fd)
{
	int wsfd = -1, ovl = -1, e;

	*stage = 0;
	*bind = -1;
	*stage_fd = -1;
	/* Without a detached tree, the workspace is the current directory,
	 * translated into this namespace by unshare(CLONE_NEWNS); held
	 * until step 5b (8 without a stage). */
	if (work_tree_fd < 0) {
		wsfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (wsfd < 0)
			return mnt_fail(stage, STAGE_WORK, -errno);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		e = mnt_fail(stage, STAGE_MOUNT_NS, -errno);
	else
		e = build_steps(spec, work_tree_fd, wsfd, owner_uid, owner_gid,
		    stage, bind, &ovl, stage_fd);
	if (e == 0)
		e = job_spec_staged(spec)
		    ? attach_work(ovl, work_tree_fd >= 0, stage)
		    : bind_work(work_tree_fd, wsfd, stage);
	else if (ovl >= 0)
		close(ovl);
	if (e == 0)
		e = pivot_into_root(owner_uid != (uid_t)-1, stage);
	if (e < 0 && *stage_fd >= 0) {
		close(*stage_fd);
		*stage_fd = -1;
	}
	return e;
}
