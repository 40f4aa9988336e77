/* workspace.c: see workspace.h. */
#include "workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "proto.h"

/* The refusal when the kernel lacks openat2 (style.md rule 18). */
#define NO_OPENAT2                                                          \
	"the kernel has no openat2(2), which stockade needs to open the "   \
	"workspace without following symbolic links. Fix: run stockade on " \
	"Linux 5.6 or later"

/* How many random names to try before giving up on a temporary one. */
#define TMP_ATTEMPTS 100

/* openat2(2), which glibc 2.36 does not wrap. Returns an fd or -errno. */
static int
open_dir_nosymlinks(int dirfd, const char *path, uint64_t resolve)
{
	struct open_how how = {
	    .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
	    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | resolve,
	};
	long fd;

	/* EAGAIN: RESOLVE_BENEATH saw a concurrent rename; look again. */
	for (int i = 0; i < 8; i++) {
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != EAGAIN && errno != EINTR)
			break;
	}
	return -errno;
}

/* Makes a fresh directory "stockade-XXXXXX" (mode 0700) in PARENT and
 * stores its name in WS->name. Returns 0 or a negative errno. */
static int
make_temporary(struct workspace *ws, int parent)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int attempt = 0; attempt < TMP_ATTEMPTS; attempt++) {
		uint8_t rnd[6];
		char *p;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return errno != 0 ? -errno : -EIO;
		memcpy(ws->name, "stockade-", 9);
		p = ws->name + 9;
		for (size_t i = 0; i < sizeof(rnd); i++)
			*p++ = set[rnd[i] % (sizeof(set) - 1)];
		*p = '\0';
		if (mkdirat(parent, ws->name, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int
open_temporary(struct workspace *ws, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	int e;

	if (tmp == NULL || tmp[0] != '/')
		tmp = "/tmp";
	/* $TMPDIR is the user's own setting, so it may contain symlinks;
	 * what is made in it is then reached beneath its descriptor. */
	ws->parent_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ws->parent_fd < 0) {
		e = -errno;
		snprintf(err, errlen, "cannot make a workspace in %s: %s", tmp,
		    strerror(-e));
		return e;
	}
	if ((e = make_temporary(ws, ws->parent_fd)) < 0) {
		snprintf(err, errlen, "cannot make a workspace in %s: %s", tmp,
		    strerror(-e));
		close_fdp(&ws->parent_fd);
		return e;
	}
	snprintf(ws->path, sizeof(ws->path), "%s/%s", tmp, ws->name);
	ws->temporary = true;
	ws->fd = open_dir_nosymlinks(ws->parent_fd, ws->name, RESOLVE_BENEATH);
	if (ws->fd < 0) {
		e = ws->fd;
		ws->fd = -1;
		if (e == -ENOSYS)
			snprintf(err, errlen, NO_OPENAT2);
		else
			snprintf(err, errlen, "workspace %s: %s", ws->path,
			    strerror(-e));
		(void)unlinkat(ws->parent_fd, ws->name, AT_REMOVEDIR);
		close_fdp(&ws->parent_fd);
		ws->temporary = false;
		return e;
	}
	ws->mode = 0700;
	/* A root broker's jobs run as PROTO_ROOT_PAYLOAD_ID: give them the
	 * directory rather than lending them root's ownership of it. */
	if (geteuid() == 0 &&
	    fchown(ws->fd, PROTO_ROOT_PAYLOAD_ID, PROTO_ROOT_PAYLOAD_ID) < 0) {
		e = -errno;
		snprintf(err, errlen,
		    "workspace %s: cannot give it to uid %u: %s", ws->path,
		    PROTO_ROOT_PAYLOAD_ID, strerror(-e));
		close_fdp(&ws->fd);
		(void)unlinkat(ws->parent_fd, ws->name, AT_REMOVEDIR);
		close_fdp(&ws->parent_fd);
		ws->temporary = false;
		return e;
	}
	return 0;
}

/*
 * Whether the job may create files in the workspace directory FD (ST its
 * fstat): as root, the launcher id-maps the workspace so that its owner
 * is the payload (launcher/zygote/idmap.c), so the owner's write and search bits
 * decide; otherwise the payload has the broker's ids and groups, and
 * faccessat(2) with AT_EACCESS answers for them (ACLs included).
 */
static bool
job_may_write(int fd, const struct stat *st)
{
	if (geteuid() == 0)
		return (st->st_mode & 0300) == 0300;
	return faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) == 0;
}

int
workspace_open(struct workspace *ws, const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int e;

	memset(ws, 0, sizeof(*ws));
	ws->fd = ws->parent_fd = -1;
	if (dir == NULL)
		return open_temporary(ws, err, errlen);
	if (strlen(dir) >= sizeof(ws->path)) {
		snprintf(err, errlen, "workspace path too long");
		return -ENAMETOOLONG;
	}
	strcpy(ws->path, dir);
	/* Every component, not only the last: a job can plant a symlink
	 * anywhere in the workspace, and a later --workspace naming a
	 * directory below it must not lead the broker out (confused
	 * deputy). A relative DIR resolves from the current directory. */
	e = open_dir_nosymlinks(AT_FDCWD, dir, 0);
	if (e < 0) {
		if (e == -ENOSYS)
			snprintf(err, errlen, NO_OPENAT2);
		else if (e == -ELOOP)
			snprintf(err, errlen,
			    "workspace %s: a component is a symbolic "
			    "link; give the path without symlinks",
			    dir);
		else
			snprintf(err, errlen, "workspace %s: %s", dir,
			    strerror(-e));
		return e;
	}
	ws->fd = e;
	if (fstat(ws->fd, &st) < 0) {
		e = -errno;
		snprintf(err, errlen, "workspace %s: %s", dir, strerror(-e));
		close_fdp(&ws->fd);
		return e;
	}
	ws->mode = st.st_mode & 07777;
	if (geteuid() == 0 && (st.st_uid == 0 || st.st_gid == 0)) {
		snprintf(err, errlen,
		    "workspace %s belongs to %s 0: stockade runs as root, and "
		    "a job would get root's access to everything of root's "
		    "in it. Give the job a directory owned by an ordinary "
		    "user and group (for example chown %u:%u %s) or run "
		    "stockade as that user",
		    dir, st.st_uid == 0 ? "uid" : "gid", PROTO_ROOT_PAYLOAD_ID,
		    PROTO_ROOT_PAYLOAD_ID, dir);
		close_fdp(&ws->fd);
		return -EPERM;
	}
	if (!job_may_write(ws->fd, &st)) {
		bool own = geteuid() == 0 || st.st_uid == geteuid();

		snprintf(err, errlen,
		    "workspace %s is not writable by the job (mode %04o, "
		    "owner uid %u; the job runs as %s): a job must be "
		    "able to create files in /work. %s",
		    dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
		    geteuid() == 0 ? "its owner, id-mapped" : "your uid",
		    own ? "Make it writable (chmod u+wx), or "
			  "give another directory"
			: "Give a directory of your "
			  "own, or one your uid or group may write");
		close_fdp(&ws->fd);
		return -EACCES;
	}
	return 0;
}

int
workspace_restore_mode(int fd, unsigned mode)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((st.st_mode & 07777) != mode && fchmod(fd, (mode_t)mode) < 0)
		return -errno;
	return 0;
}

int
workspace_close(struct workspace *ws, bool keep)
{
	int e = 0;

	/* The job may have changed the directory's own mode (chmod 777
	 * /work); put back what the caller had. */
	if (ws->fd >= 0)
		e = workspace_restore_mode(ws->fd, ws->mode);
	close_fdp(&ws->fd);
	if (ws->temporary && !keep) {
		int r = remove_tree_at(ws->parent_fd, ws->name);

		if (r < 0)
			e = r;
	}
	close_fdp(&ws->parent_fd);
	return e;
}
