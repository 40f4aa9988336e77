/*
 * landlock_jail.c: the payload's Landlock domain (landlock_jail.h).
 *
 * The mount namespace already shows the payload nothing but its binds,
 * /etc, /dev, /proc, /tmp, home and /work; Landlock says the same a second
 * time in terms the mount layer cannot lose: if a bind were wrong (a host
 * directory too many, a submount left writable), the files in it still
 * could not be opened. The test-only mount kind
 * MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK is that mistake made on purpose.
 *
 * Driven by raw system calls, as broker/host/confine.c does: Debian 12's
 * <linux/landlock.h> stops at ABI 2, so the later rights and the ABI 6
 * ruleset attribute are defined here with their kernel values
 * (include/uapi/linux/landlock.h). The kernel copies the attribute with
 * copy_struct_from_user semantics: an older kernel accepts the larger
 * struct as long as the fields it does not know are zero.
 */
#include "landlock_jail.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "llutil.h"

/* struct landlock_ruleset_attr as of ABI 6. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped; /* ABI 6 */
};

/* The rights of ABI 1: EXECUTE (bit 0) to MAKE_SYM (bit 12). */

/* What the rules grant (landlock_jail.h lists which path gets which). */
#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_READ_EXEC (FS_READ | LANDLOCK_ACCESS_FS_EXECUTE)
/* Devices need no TRUNCATE: the kernel drops O_TRUNC for anything but a
 * regular file, and Landlock checks the right on regular files only. */
#define FS_DEV_RW (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE)
/* Terminals: tcsetattr, TIOCGPTN and TIOCSPTLCK are device ioctls. */
#define FS_PTS \
	(FS_DEV_RW | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* Everything but device nodes: the writable trees are nodev mounts and
 * the payload has no CAP_MKNOD, so these are a second refusal of what the
 * kernel refuses anyway. FIFOs and sockets stay: mkfifo, and unix sockets
 * in /tmp (Python's multiprocessing managers and forkserver). REFER
 * stays: without it a rename or link between two directories fails with
 * EXDEV (Python's os.rename does not fall back to a copy). */
#define FS_RW                                     \
	((LL_FS_ABI1 | LANDLOCK_ACCESS_FS_REFER | \
	     LANDLOCK_ACCESS_FS_TRUNCATE) &       \
	    ~(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK))

/*
 * Grants ACCESS (within HANDLED) on PATH and below in ruleset RS. A
 * symbolic link gets nothing (O_NOFOLLOW; its target has a rule of its own
 * or none); a non-directory only the rights a file can carry. With
 * OPTIONAL a missing PATH is skipped. Returns 0 or a negative errno.
 */
static int
allow(int rs, const char *path, uint64_t access, uint64_t handled,
    bool optional)
{
	struct landlock_path_beneath_attr pb;
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return optional && (errno == ENOENT || errno == ENOTDIR)
		    ? 0
		    : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return 0;
	memset(&pb, 0, sizeof(pb));
	pb.parent_fd = fd;
	pb.allowed_access = access & handled;
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= LL_FS_FILE;
	if (pb.allowed_access == 0)
		return 0;
	if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb,
		0) < 0)
		return -errno;
	return 0;
}

/*
 * The rules without a mount namespace (layer mount_ns off), in host
 * paths: the policy's bind sources read and execute, the workspace (the
 * current directory, which holds the private TMPDIR of layer
 * private_cwd) everything but devices, and the usual devices. Nothing of
 * /etc, /proc, /tmp or the caller's home.
 */
static int
add_host_rules(int rs, const struct job_spec *spec, uint64_t fs)
{
	static const struct {
		const char *path;
		uint64_t access;
	} fixed[] = {
	    {"/dev/null", FS_DEV_RW},
	    {"/dev/zero", FS_DEV_RW},
	    {"/dev/full", FS_DEV_RW},
	    {"/dev/random", LANDLOCK_ACCESS_FS_READ_FILE},
	    {"/dev/urandom", LANDLOCK_ACCESS_FS_READ_FILE},
	    {".", FS_RW},
	};
	int e;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if ((e = allow(rs, fixed[i].path, fixed[i].access, fs, false)) <
		    0)
			return e;
	for (uint32_t i = 0; i < spec->nmounts; i++) {
		if (spec->mounts[i].kind == MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK)
			continue;
		if ((e = allow(rs, spec->mounts[i].source, FS_READ_EXEC, fs,
			 true)) < 0)
			return e;
	}
	return 0;
}

/* The rules of landlock_jail.h into RS, whose handled rights are FS. */
static int
add_rules(int rs, const struct job_spec *spec, uint64_t fs)
{
	static const struct {
		const char *path;
		uint64_t access;
	} fixed[] = {
	    {"/etc", FS_READ_EXEC},
	    {"/proc", FS_READ},
	    {"/dev/null", FS_DEV_RW},
	    {"/dev/zero", FS_DEV_RW},
	    {"/dev/full", FS_DEV_RW},
	    {"/dev/random", LANDLOCK_ACCESS_FS_READ_FILE},
	    {"/dev/urandom", LANDLOCK_ACCESS_FS_READ_FILE},
	    {"/work", FS_RW},
	    {"/tmp", FS_RW},
	    {"/dev/shm", FS_RW & ~LANDLOCK_ACCESS_FS_EXECUTE},
	};
	int e;

	if (job_spec_layer_off(spec, JOB_LAYER_MOUNT_NS))
		return add_host_rules(rs, spec, fs);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if ((e = allow(rs, fixed[i].path, fixed[i].access, fs, false)) <
		    0)
			return e;
	/* Layer private_cwd off: no home tmpfs, HOME may name nothing. */
	if ((e = allow(rs, spec->home, FS_RW, fs,
		 job_spec_layer_off(spec, JOB_LAYER_PRIVATE_CWD))) < 0)
		return e;
	if ((spec->flags & JOB_F_DEVPTS) &&
	    (e = allow(rs, "/dev/pts", FS_PTS, fs, false)) < 0)
		return e;
	/* A ro_bind_try whose host path was missing left no target. */
	for (uint32_t i = 0; i < spec->nmounts; i++) {
		if (spec->mounts[i].kind == MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK)
			continue;
		if ((e = allow(rs, spec->mounts[i].target, FS_READ_EXEC, fs,
			 true)) < 0)
			return e;
	}
	return 0;
}

int
jail_landlock_build(const struct job_spec *spec, int *abi)
{
	const bool net_off = job_spec_layer_off(spec, JOB_LAYER_NETWORK_NS);
	struct ll_ruleset_attr attr;
	_cleanup_close_ int rs = -1;
	int v = ll_abi(), e, out;

	*abi = 0;
	/* ENOSYS: not built in; EOPNOTSUPP: built in, not enabled at boot
	 * (landlock_create_ruleset(2)). Either way: no jail without it. */
	if (v == -ENOSYS || v == -EOPNOTSUPP || v == 0)
		return -EOPNOTSUPP;
	if (v < 0)
		return v;

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = ll_fs_rights(v);
	/* No network right is handled: TCP bind and connect work on the
	 * jail's own loopback, so a test suite's fixture server or `python3
	 * -m http.server` with curl runs in one job. The network namespace
	 * keeps every other address out of reach (its only interface is
	 * its own lo: no route to the host's loopback or anywhere else);
	 * Landlock's port rules could not tell the jail's 127.0.0.1 from
	 * another host's (docs/layers.md, network_ns; docs/decisions.md). */
	/* No abstract unix socket made outside this domain can be
	 * connected to (layer network_ns too), and no process outside it
	 * signalled (init, which is not in the domain, forwards the
	 * termination signals it must). */
	if (v >= 6)
		attr.scoped = (net_off ? 0
				       : LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET) |
		    LANDLOCK_SCOPE_SIGNAL;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return -errno;
	if ((e = add_rules(rs, spec, attr.handled_access_fs)) < 0)
		return e;
	*abi = v;
	out = rs;
	rs = -1;
	return out;
}

int
jail_landlock_restrict(int rs)
{
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		return -errno;
	close(rs);
	return 0;
}
