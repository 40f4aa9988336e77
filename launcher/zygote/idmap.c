/*
 * idmap.c: user namespace id maps (user_namespaces(7)): the jail's, written
 * by the zygote through /proc/PID, and the workspace of a launcher that
 * runs as root.
 *
 * A payload mapped to host uid 0 would pass every check that looks only at
 * the uid (sysctl files under /proc/sys, owner checks on bound host files,
 * the root exemption from RLIMIT_NPROC): a launcher running as root maps
 * its payloads to an unprivileged host id instead (launcher/supervisor/main.c).
 * So that such a payload can still use a workspace that belongs to someone
 * else (root's own directory, or a user's), the launcher gives the jail an
 * id-mapped copy of the workspace mount (mount_setattr(2),
 * MOUNT_ATTR_IDMAP): inside, the directory's owner appears as the
 * payload's host ids; what the payload creates lands on disk as that
 * owner, exactly as if the owner had run the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "jail.h"

/*
 * A user namespace whose maps send the on-disk ids IN_UID/IN_GID to
 * OUT_UID/OUT_GID, as a descriptor: a child unshares one and waits while
 * we write its maps and open /proc/CHILD/ns/user, then is killed.
 */
static int
idmap_userns(uid_t in_uid, gid_t in_gid, uid_t out_uid, gid_t out_gid)
{
	char path[64], c;
	int ready[2], hold[2], nsfd = -1, e = 0;
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(hold, O_CLOEXEC) < 0) {
		e = -errno;
		close(ready[0]);
		close(ready[1]);
		return e;
	}
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(hold[1]);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		if (write(ready[1], "1", 1) != 1)
			_exit(1);
		/* Held until the parent is done (it kills us). */
		_exit(read(hold[0], &c, 1) == 1 ? 0 : 1);
	}
	close(ready[1]);
	close(hold[0]);
	if (pid < 0) {
		e = -errno;
		goto out;
	}
	if (read(ready[0], &c, 1) != 1) {
		e = -ECHILD;
		goto reap;
	}
	if ((e = jail_write_id_map(pid, "uid_map", in_uid, out_uid)) < 0 ||
	    (e = jail_write_id_map(pid, "gid_map", in_gid, out_gid)) < 0)
		goto reap;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		e = -errno;
reap:
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
out:
	close(ready[0]);
	close(hold[1]);
	return nsfd >= 0 ? nsfd : e;
}

int
jail_idmapped_workspace(int wsfd, uid_t outer_uid, gid_t outer_gid)
{
	struct mount_attr attr;
	struct stat st;
	int tree, nsfd, e;

	if (fstat(wsfd, &st) < 0)
		return -errno;
	nsfd = idmap_userns(st.st_uid, st.st_gid, outer_uid, outer_gid);
	if (nsfd < 0)
		return nsfd;
	tree = (int)syscall(SYS_open_tree, wsfd, "",
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0) {
		e = -errno;
		close(nsfd);
		return e;
	}
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = MOUNT_ATTR_IDMAP |
	    (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	attr.userns_fd = (uint64_t)nsfd;
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr,
		sizeof(attr)) < 0) {
		e = -errno;
		close(nsfd);
		close(tree);
		return e;
	}
	close(nsfd);
	return tree;
}

/* Writes TEXT to FILE under the /proc/PID directory DIR. */
static int
write_proc_at(int dir, const char *file, const char *text)
{
	int fd, e;

	fd = openat(dir, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	e = write_all(fd, text, strlen(text));
	close(fd);
	return e;
}

/* The /proc/PID directory, opened while PIDFD says PID is alive, so that
 * it is that process's and no later one's with the same number. */
static int
open_proc_dir(pid_t pid, int pidfd)
{
	struct pollfd alive = {.fd = pidfd, .events = POLLIN};
	char path[64];
	int dir;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	if (pidfd >= 0 && poll(&alive, 1, 0) != 0) {
		close(dir);
		return -ESRCH;
	}
	return dir;
}

static int
write_map_at(int dir, const char *file, unsigned inside, unsigned outside)
{
	char map[64];

	snprintf(map, sizeof(map), "%u %u %u\n", inside, outside, 1u);
	return write_proc_at(dir, file, map);
}

int
jail_write_id_map(pid_t pid, const char *file, unsigned inside,
    unsigned outside)
{
	int dir = open_proc_dir(pid, -1), e;

	if (dir < 0)
		return dir;
	e = write_map_at(dir, file, inside, outside);
	close(dir);
	return e;
}

/* jail.h */
int
jail_write_id_maps(pid_t pid, int pidfd, const struct job_spec *spec,
    const struct jail_host *h)
{
	int dir = open_proc_dir(pid, pidfd), e;

	if (dir < 0)
		return dir;
	if ((e = write_proc_at(dir, "setgroups", "deny")) == 0 &&
	    (e = write_map_at(dir, "uid_map", spec->uid,
		 (unsigned)h->outer_uid)) == 0)
		e = write_map_at(dir, "gid_map", spec->gid,
		    (unsigned)h->outer_gid);
	close(dir);
	return e;
}
