/*
 * test_spawner_stage.c: the spawner's second service (broker/jobs/spawner.h,
 * spawner_stage_open; issue 26): it opens an entry of a job's stage for
 * a confined broker, and only that. A real stage-like tmpfs is made as
 * jail init makes one (a child in a user and mount namespace of its own,
 * fsopen(2) and fsmount(2), never attached: stage()), with a token at
 * its root, and a real spawner (spawner_start) is asked.
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534, like the other jail suites.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "proto.h"
#include "spawner.h"

TestSuite(spawner_stage, .timeout = 60);

static const uint8_t token[PROTO_STAGE_TOKEN_BYTES] =
    "0123456789abcdef0123456789abcde";

/* Writes TEXT to the file PATH (O_CREAT | O_EXCL, MODE) in DIR; 0 or -1. */
static int
put(int dir, const char *path, const void *text, size_t len, mode_t mode)
{
	int fd = openat(dir, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    mode);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* Writes "0 ID 1" to /proc/self/FILE; 0 or -1. */
static int
map_one(const char *file, unsigned id)
{
	char path[64], line[64];
	int fd, n, r;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	n = snprintf(line, sizeof(line), "0 %u 1", id);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	r = write(fd, line, (size_t)n) == n ? 0 : -1;
	close(fd);
	return r;
}

/* In a fresh user and mount namespace (root there): 0 or -1. */
static int
own_namespaces(void)
{
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	int fd;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -1;
	if ((fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(fd, "deny", 4) != 4) {
			close(fd);
			return -1;
		}
		close(fd);
	}
	return map_one("uid_map", uid) == 0 && map_one("gid_map", gid) == 0
	    ? 0
	    : -1;
}

/* A detached tmpfs laid out as a stage (the token TOK unless NULL, upper/
 * with f "hello", d/, l -> f, p a FIFO): its root, O_RDONLY, or -1. In
 * namespaces that may make one. */
static int
make_tree(const uint8_t *tok)
{
	int fs, mnt, up, root = -1;

	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -1;
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0);
	close(fs);
	if (mnt < 0)
		return -1;
	if (mkdirat(mnt, "upper", 0755) == 0 &&
	    (tok == NULL ||
		put(mnt, "token", tok, PROTO_STAGE_TOKEN_BYTES, 0400) == 0) &&
	    (up = openat(mnt, "upper", O_PATH | O_DIRECTORY | O_CLOEXEC)) >=
		0) {
		if (put(up, "f", "hello", 5, 0644) == 0 &&
		    mkdirat(up, "d", 0755) == 0 &&
		    symlinkat("f", up, "l") == 0 &&
		    mkfifoat(up, "p", 0644) == 0)
			root = openat(mnt, ".",
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(up);
	}
	close(mnt);
	return root;
}

/* Sends FD over the socket SOCK (SCM_RIGHTS, one byte); 0 or -1. */
static int
send_fd(int sock, int fd)
{
	char b = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &b, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = cbuf,
	    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;

	memset(cbuf, 0, sizeof(cbuf));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

/* The descriptor send_fd sent on SOCK, or -1. */
static int
recv_fd(int sock)
{
	char b, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &b, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = cbuf,
	    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c;
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&mh);
	if (c != NULL && c->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* A stage made by a child in namespaces of its own (as jail init makes
 * one), with the token TOK (NULL: none): its root, O_RDONLY. */
static int
stage(const uint8_t *tok)
{
	int sv[2], fd, st;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
	    0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int root = own_namespaces() == 0 ? make_tree(tok) : -1;

		if (root < 0)
			_exit(1);
		_exit(send_fd(sv[1], root) == 0 ? 0 : 1);
	}
	close(sv[1]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the child could not make a stage (user namespaces?)");
	fd = recv_fd(sv[0]);
	cr_assert_geq(fd, 0);
	close(sv[0]);
	return fd;
}

/* A spawner of our own (its launcher binary /bin/true, never run). */
static void
start(struct spawner *sp)
{
	int exe = open("/bin/true", O_PATH | O_CLOEXEC);

	cr_assert_geq(exe, 0);
	spawner_clear(sp);
	cr_assert_eq(spawner_start(sp, exe), 0);
	close(exe);
}

/* What spawner_stage_open answers for NAME in DIR; a descriptor is
 * checked to be of the type asked and closed (0 returned). */
static int
ask(struct spawner *sp, int root, const uint8_t *tok, int dir, const char *name,
    bool directory)
{
	struct stat st;
	int fd = spawner_stage_open(sp, root, tok, dir, name, directory);

	if (fd < 0)
		return fd;
	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert(directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
	cr_assert_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	return 0;
}

Test(spawner_stage, the_token_opens_a_file_and_a_directory)
{
	struct spawner sp;
	int root = stage(token), up, fd;
	char buf[16] = "";

	start(&sp);
	up = openat(root, "upper", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(up, 0);
	fd = spawner_stage_open(&sp, root, token, up, "f", false);
	cr_assert_geq(fd, 0, "%s", strerror(-fd));
	cr_assert_eq(read(fd, buf, sizeof(buf) - 1), 5);
	cr_assert_str_eq(buf, "hello");
	close(fd);
	/* The directory from the root itself, and one in it. */
	cr_assert_eq(ask(&sp, root, token, root, "upper", true), 0);
	cr_assert_eq(ask(&sp, root, token, up, "d", true), 0);
	close(up);
	close(root);
	spawner_stop(&sp);
}

Test(spawner_stage, a_wrong_or_missing_token_is_refused)
{
	uint8_t wrong[PROTO_STAGE_TOKEN_BYTES];
	struct spawner sp;
	int root = stage(token), bare = stage(NULL);

	start(&sp);
	memcpy(wrong, token, sizeof(wrong));
	wrong[31] ^= 1;
	cr_assert_eq(ask(&sp, root, wrong, root, "upper", true), -EPERM);
	cr_assert_eq(ask(&sp, bare, token, bare, "upper", true), -EPERM);
	/* A refusal is an answer: the spawner goes on. */
	cr_assert_gt(sp.pid, 0);
	cr_assert_eq(ask(&sp, root, token, root, "upper", true), 0);
	close(bare);
	close(root);
	spawner_stop(&sp);
}

Test(spawner_stage, a_host_directory_is_refused)
{
	const char *paths[] = {"/tmp", "/dev/shm", "/", harness_workspace()};
	struct spawner sp;

	start(&sp);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int fd = open(paths[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			continue;
		/* Not a tmpfs, or a tmpfs of our own mount namespace. */
		cr_assert_eq(ask(&sp, fd, token, fd, "token", false), -EPERM,
		    "%s", paths[i]);
		close(fd);
	}
	cr_assert_gt(sp.pid, 0);
	spawner_stop(&sp);
}

Test(spawner_stage, names_links_fifos_and_other_mounts_are_refused)
{
	const char *bad[] = {"a/b", "..", ".", "f/"};
	struct spawner sp;
	int root = stage(token), other = stage(token), up, tmp;

	start(&sp);
	up = openat(root, "upper", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(up, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(ask(&sp, root, token, up, bad[i], false), -EINVAL,
		    "%s", bad[i]);
	cr_assert_eq(ask(&sp, root, token, up, "l", false), -ELOOP);
	cr_assert_eq(ask(&sp, root, token, up, "p", false), -EPERM);
	cr_assert_eq(ask(&sp, root, token, up, "p", true), -ENOTDIR);
	cr_assert_eq(ask(&sp, root, token, up, "d", false), -EPERM);
	cr_assert_eq(ask(&sp, root, token, up, "f", true), -ENOTDIR);
	cr_assert_eq(ask(&sp, root, token, up, "none", false), -ENOENT);
	/* A directory of another mount: another stage (its own token
	 * right), or the host's /tmp. */
	cr_assert_eq(ask(&sp, root, token, other, "upper", true), -EXDEV);
	tmp = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(tmp, 0);
	cr_assert_eq(ask(&sp, root, token, tmp, ".", true), -EXDEV);
	cr_assert_eq(ask(&sp, root, token, tmp, "x", false), -EXDEV);
	close(tmp);
	cr_assert_gt(sp.pid, 0);
	cr_assert_eq(ask(&sp, root, token, up, "f", false), 0);
	close(up);
	close(other);
	close(root);
	spawner_stop(&sp);
}

/* In a child with its own namespaces: a tmpfs with a right token but
 * attached in the spawner's own mount namespace is refused; the same
 * layout detached is opened. Exit status: 0, or the failed step. */
static int
in_namespace_child(void)
{
	struct spawner sp;
	int exe, att, det;

	if (own_namespaces() < 0 ||
	    syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL) < 0)
		return 10;
	if (mkdir("/tmp/upper", 0755) < 0 ||
	    put(AT_FDCWD, "/tmp/token", token, sizeof(token), 0400) < 0)
		return 11;
	if ((att = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (det = make_tree(token)) < 0)
		return 12;
	if ((exe = open("/bin/true", O_PATH | O_CLOEXEC)) < 0)
		return 13;
	spawner_clear(&sp);
	if (spawner_start(&sp, exe) < 0)
		return 14;
	if (spawner_stage_open(&sp, att, token, att, "upper", true) != -EPERM)
		return 15;
	if ((exe = spawner_stage_open(&sp, det, token, det, "upper", true)) < 0)
		return 16;
	spawner_stop(&sp);
	return 0;
}

Test(spawner_stage, a_tmpfs_of_the_spawners_namespace_is_refused)
{
	pid_t pid = fork();
	int st;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(in_namespace_child());
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "step %d failed",
	    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}
