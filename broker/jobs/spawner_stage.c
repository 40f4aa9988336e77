/*
 * spawner_stage.c: the spawner's second service, opening one entry of a
 * job's stage for reading on behalf of a confined broker (spawner.h says
 * what it checks and why that is safe; issue 26), and the broker's side
 * of it (spawner_stage_open).
 *
 * The spawner side (spawner_serve_stage_open) runs in the spawner: no
 * malloc, no stdio, no logging, only system calls (spawner.c).
 */
#include "spawner.h"
#include "spawner_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "proto.h"

/* How long the broker waits for the spawner's answer, milliseconds. */
#define STAGE_OPEN_MS 10000u
/* openat2(2) answers EAGAIN to a racing rename; tried this many times. */
#define OPEN_TRIES 8

/* openat2(DIR, NAME, FLAGS | O_NOFOLLOW | O_CLOEXEC) never through a
 * link, nor a magic link, nor off DIR's mount, nor above DIR. */
static int
open_beneath(int dir, const char *name, int flags)
{
	struct open_how how;
	long fd = -1;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
	for (int i = 0; i < OPEN_TRIES; i++) {
		fd = syscall(SYS_openat2, dir, name, &how, sizeof(how));
		if (fd >= 0 || (errno != EINTR && errno != EAGAIN))
			break;
	}
	return fd < 0 ? -errno : (int)fd;
}

/* "/proc/self/fd/FD" into BUF (32 bytes), without stdio. */
static void
fd_path(char buf[32], int fd)
{
	static const char head[] = "/proc/self/fd/";
	char digits[12];
	size_t n = 0, at = sizeof(head) - 1;

	memcpy(buf, head, at);
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0 && n < sizeof(digits));
	while (n > 0)
		buf[at++] = digits[--n];
	buf[at] = '\0';
}

/*
 * NAME of DIR opened for reading: looked up O_PATH first (open_beneath),
 * its type checked by fstat (a directory when DIRECTORY, else a regular
 * file; a symlink is -ELOOP, anything else -ENOTDIR for a directory
 * asked, -EPERM for a file: never opened), then that
 * inode reopened O_RDONLY (a directory through "."; a file through its
 * /proc/self/fd magic link, O_NONBLOCK | O_NOCTTY). The descriptor or a
 * negative errno.
 */
static int
open_entry(int dir, const char *name, bool directory)
{
	struct stat st;
	char self[32];
	int p, fd;

	p = open_beneath(dir, name, O_PATH | (directory ? O_DIRECTORY : 0));
	if (p < 0)
		return p;
	if (fstat(p, &st) < 0 ||
	    (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(p);
		/* O_PATH | O_NOFOLLOW gives a symlink itself (openat2(2)). */
		return S_ISLNK(st.st_mode) ? -ELOOP
		    : directory		   ? -ENOTDIR
					   : -EPERM;
	}
	if (directory) {
		fd = openat_eintr(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		    0);
	} else {
		fd_path(self, p);
		fd = openat_eintr(AT_FDCWD, self,
		    O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
	}
	fd = fd < 0 ? -errno : fd;
	close(p);
	return fd;
}

/* Whether the mount ID is listed in /proc/self/mountinfo (its first
 * field, proc(5)): 1, 0, or a negative errno. */
static int
mount_listed(uint64_t id)
{
	char buf[4096];
	uint64_t v = 0;
	bool head = true, found = false, big = false;
	int fd = openat_eintr(AT_FDCWD, "/proc/self/mountinfo",
		O_RDONLY | O_CLOEXEC, 0),
	    e = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (!found && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = -errno;
			break;
		}
		for (ssize_t i = 0; i < n && !found; i++) {
			char c = buf[i];

			if (c == '\n') {
				head = true, v = 0, big = false;
			} else if (head && c >= '0' && c <= '9') {
				big = big || v > (UINT64_MAX - 9) / 10;
				v = v * 10 + (uint64_t)(c - '0');
			} else if (head) {
				found = c == ' ' && !big && v == id;
				head = false;
			}
		}
	}
	close(fd);
	return e < 0 ? e : found;
}

/* The root check (spawner.h): ROOT is a directory at the root of a
 * tmpfs mount of no mount namespace of ours. *MNT gets its mount id. 0 or
 * a negative errno. */
static int
check_root(int root, uint64_t *mnt)
{
	struct statfs sf;
	struct statx sx;
	int r;

	if (fstatfs(root, &sf) < 0)
		return -errno;
	if (sf.f_type != TMPFS_MAGIC)
		return -EPERM;
	if (statx(root, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		STATX_TYPE | STATX_MNT_ID, &sx) < 0)
		return -errno;
	if ((sx.stx_mask & STATX_MNT_ID) == 0 || !S_ISDIR(sx.stx_mode) ||
	    (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) == 0 ||
	    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) == 0)
		return -EPERM;
	if ((r = mount_listed(sx.stx_mnt_id)) != 0)
		return r < 0 ? r : -EPERM;
	*mnt = sx.stx_mnt_id;
	return 0;
}

/* Whether A and B (N bytes) are equal, in time independent of where
 * they differ. */
static bool
same_bytes(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d == 0;
}

/* The token check (spawner.h): ROOT's PROTO_STAGE_TOKEN is a regular
 * file of exactly PROTO_STAGE_TOKEN_BYTES bytes equal to WANT. 0 or
 * -EPERM (or the open's errno). */
static int
check_token(int root, const uint8_t *want)
{
	uint8_t got[PROTO_STAGE_TOKEN_BYTES];
	struct stat st;
	ssize_t n = -1;
	int fd = open_entry(root, PROTO_STAGE_TOKEN, false), e = -EPERM;

	if (fd < 0)
		return fd == -ENOENT ? -EPERM : fd;
	if (fstat(fd, &st) == 0 && st.st_size == PROTO_STAGE_TOKEN_BYTES) {
		do
			n = pread(fd, got, sizeof(got), 0);
		while (n < 0 && errno == EINTR);
	}
	if (n == (ssize_t)sizeof(got) && same_bytes(got, want, sizeof(got)))
		e = 0;
	close(fd);
	return e;
}

/* Whether NAME (N bytes, not NUL-terminated) is one component: 1..255
 * bytes, no '/' nor NUL, not "." or "..". */
static bool
name_ok(const uint8_t *name, size_t n)
{
	if (n < 1 || n > SPAWNER_STAGE_NAME_MAX ||
	    memchr(name, '/', n) != NULL || memchr(name, '\0', n) != NULL)
		return false;
	return !(n == 1 && name[0] == '.') &&
	    !(n == 2 && name[0] == '.' && name[1] == '.');
}

/* Checks the request (BODY, LEN bytes; ROOT and DIR) in spawner.h's order
 * and opens the entry: its descriptor or a negative errno. */
static int
stage_open(const uint8_t *body, size_t len, int root, int dir)
{
	const size_t head = PROTO_STAGE_TOKEN_BYTES + 4;
	char name[SPAWNER_STAGE_NAME_MAX + 1];
	uint64_t mnt = 0;
	struct statx sx;
	uint32_t flags;
	int e;

	if (len < head + 1 || len > head + SPAWNER_STAGE_NAME_MAX)
		return -EINVAL;
	flags = spawner_get_le32(body + PROTO_STAGE_TOKEN_BYTES);
	if (flags > 1)
		return -EINVAL;
	if ((e = check_root(root, &mnt)) < 0 ||
	    (e = check_token(root, body)) < 0)
		return e;
	if (statx(dir, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID,
		&sx) < 0)
		return -errno;
	if ((sx.stx_mask & STATX_MNT_ID) == 0 || sx.stx_mnt_id != mnt)
		return -EXDEV;
	if (!name_ok(body + head, len - head))
		return -EINVAL;
	memcpy(name, body + head, len - head);
	name[len - head] = '\0';
	return open_entry(dir, name, flags == 0);
}

int
spawner_serve_stage_open(int sock, const struct wire_msg *m, const int *fds)
{
	uint8_t msg[WIRE_HEADER_SIZE + 4];
	int root = wire_fd(m, fds, WIRE_FD_STAGE);
	int dir = wire_fd(m, fds, WIRE_FD_STAGE_DIR);
	int fd = stage_open(m->body, m->body_len, root, dir), e;

	if (fd < 0) {
		spawner_put_le32(msg + WIRE_HEADER_SIZE, (uint32_t)-fd);
		return wire_send(sock, msg, sizeof(msg), WIRE_STAGE_OPEN_FAILED,
			   0, NULL) < 0
		    ? -1
		    : 0;
	}
	e = wire_send(sock, msg, WIRE_HEADER_SIZE, WIRE_STAGE_OPEN_REPLY,
	    WIRE_ROLE_BIT(0), &fd);
	close(fd);
	return e < 0 ? -1 : 0;
}

/* The answer to a WIRE_STAGE_OPEN on SP's socket: the entry's descriptor,
 * the spawner's refusal (negated), -EPROTO for a malformed answer or
 * -ENOTCONN. */
static int
recv_open(struct spawner *sp)
{
	uint8_t buf[SPAWNER_MSG_MAX];
	struct wire_msg m;
	int got[1], n;
	uint32_t v;

	n = wire_recv(sp->sock, buf, sizeof(buf), got, 1, &m);
	if (n == 0 || n == -ECONNRESET)
		return -ENOTCONN;
	if (n < 0)
		return -EPROTO;
	if (m.type == WIRE_STAGE_OPEN_REPLY && m.body_len == 0)
		return got[0];
	for (size_t i = 0; i < m.nfds; i++)
		close(got[i]);
	v = m.body_len == 4 ? spawner_get_le32(m.body) : 0;
	if (m.type == WIRE_STAGE_OPEN_FAILED && v > 0 && v < 4096)
		return -(int)v;
	return -EPROTO;
}

/* spawner_stage_open with the spawner's lock held. */
static int
stage_open_locked(struct spawner *sp, int root,
    const uint8_t token[PROTO_STAGE_TOKEN_BYTES], int dir, const char *name,
    bool directory)
{
	uint8_t req[WIRE_HEADER_SIZE + PROTO_STAGE_TOKEN_BYTES + 4 +
	    SPAWNER_STAGE_NAME_MAX];
	uint8_t *b = req + WIRE_HEADER_SIZE;
	size_t len = strlen(name);
	int fds[2] = {root, dir}, e;

	if (len == 0 || len > SPAWNER_STAGE_NAME_MAX)
		return -EINVAL;
	if (sp->sock < 0)
		return -ENOTCONN;
	memcpy(b, token, PROTO_STAGE_TOKEN_BYTES);
	spawner_put_le32(b + PROTO_STAGE_TOKEN_BYTES, directory ? 0 : 1);
	memcpy(b + PROTO_STAGE_TOKEN_BYTES + 4, name, len);
	e = wire_send(sp->sock, req,
	    WIRE_HEADER_SIZE + PROTO_STAGE_TOKEN_BYTES + 4 + len,
	    WIRE_STAGE_OPEN, WIRE_ROLE_BIT(0) | WIRE_ROLE_BIT(1), fds);
	if (e < 0)
		e = -ENOTCONN;
	else if ((e = spawner_wait_readable(sp->sock,
		      spawner_now_ms() + STAGE_OPEN_MS)) == 0)
		e = recv_open(sp);
	if (e == -ENOTCONN || e == -EPROTO || e == -ETIMEDOUT)
		/* An answer may still come: it could not be told from the
		 * next one (as spawner_launch). */
		spawner_end_child(&sp->pid, &sp->pidfd, &sp->sock, 0);
	return e;
}

int
spawner_stage_open(struct spawner *sp, int root,
    const uint8_t token[PROTO_STAGE_TOKEN_BYTES], int dir, const char *name,
    bool directory)
{
	int e;

	pthread_mutex_lock(&spawner_mu);
	e = stage_open_locked(sp, root, token, dir, name, directory);
	pthread_mutex_unlock(&spawner_mu);
	return e;
}

int
spawner_stage_opener(void *arg, int root,
    const uint8_t token[PROTO_STAGE_TOKEN_BYTES], int dir, const char *name,
    bool directory)
{
	return spawner_stage_open(arg, root, token, dir, name, directory);
}
