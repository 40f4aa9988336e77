/*
 * eval_detect.c: bytes, trees and processes searched for the traces of a
 * successful attack (eval_detect.h; issue 6).
 */
#include "eval_detect.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eval_job.h"
#include "fsutil.h"
#include "wswalk.h"

#define PIECE (256u << 10) /* one read of a scanned file, bytes */
#define MAX_PIDS 4096 /* leftovers killed per round */

int
eval_find(const void *buf, size_t len, const struct eval_needle *nd, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (nd[i].len > 0 &&
		    memmem(buf, len, nd[i].s, nd[i].len) != NULL)
			return (int)i;
	return -1;
}

/*
 * Reads FD to its end or until *BUDGET is spent, searching the needles;
 * BUF holds PIECE + EVAL_NEEDLE_MAX bytes. Returns the needle's index or
 * -1.
 */
static int
scan_fd(int fd, const struct eval_needle *nd, size_t n, uint64_t *budget,
    unsigned char *buf)
{
	size_t keep = 0;

	while (*budget > 0) {
		size_t want = PIECE < *budget ? PIECE : (size_t)*budget;
		ssize_t r = read(fd, buf + keep, want);
		int i;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*budget -= (uint64_t)r;
		if ((i = eval_find(buf, keep + (size_t)r, nd, n)) >= 0)
			return i;
		/* The last bytes again at the start: a needle may straddle. */
		{
			size_t total = keep + (size_t)r;
			size_t tail = total < EVAL_NEEDLE_MAX - 1
			    ? total
			    : EVAL_NEEDLE_MAX - 1;

			memmove(buf, buf + total - tail, tail);
			keep = tail;
		}
	}
	return -1;
}

/* Opens NAME under DIRFD for reading if it is a regular file; -errno. */
static int
open_regular(int dirfd, const char *name)
{
	struct stat st;
	int fd = openat(dirfd, name,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int
eval_scan_file(int dirfd, const char *name, const struct eval_needle *nd,
    size_t n, uint64_t max_bytes, int *which)
{
	_cleanup_free_ unsigned char *buf = malloc(PIECE + EVAL_NEEDLE_MAX);
	_cleanup_close_ int fd = -1;
	uint64_t budget = max_bytes;

	if (buf == NULL)
		return -ENOMEM;
	if ((fd = open_regular(dirfd, name)) < 0)
		return fd;
	*which = scan_fd(fd, nd, n, &budget, buf);
	return *which >= 0;
}

struct tree_scan {
	const struct eval_needle *nd;
	size_t n;
	uint64_t budget;
	unsigned char *buf;
	int which;
	char *path;
	size_t pathlen;
};

static int
tree_entry(void *arg, const struct wswalk_entry *e)
{
	struct tree_scan *t = arg;
	_cleanup_close_ int fd = -1;

	if (!S_ISREG(e->st->st_mode) || t->budget == 0)
		return 0;
	if ((fd = open_regular(e->dirfd, e->name)) < 0)
		return 0; /* gone, or swapped for something else */
	t->which = scan_fd(fd, t->nd, t->n, &t->budget, t->buf);
	if (t->which >= 0) {
		snprintf(t->path, t->pathlen, "%s", e->path);
		return -ECANCELED; /* found: stop the walk */
	}
	return 0;
}

int
eval_scan_tree(int dirfd, const struct eval_needle *nd, size_t n,
    uint64_t max_bytes, int *which, char *path, size_t pathlen)
{
	_cleanup_free_ unsigned char *buf = malloc(PIECE + EVAL_NEEDLE_MAX);
	struct wswalk_opts o = {
	    .max_depth = 64,
	    .max_entries = 100000,
	};
	struct tree_scan t = {
	    .nd = nd,
	    .n = n,
	    .budget = max_bytes,
	    .which = -1,
	    .path = path,
	    .pathlen = pathlen,
	};
	int e;

	if (buf == NULL)
		return -ENOMEM;
	t.buf = buf;
	*which = -1;
	e = wswalk(dirfd, &o, tree_entry, &t, NULL);
	if (e == -ECANCELED) {
		*which = t.which;
		return 1;
	}
	return e < 0 ? e : 0;
}

int
eval_token_files(const char *const *dirs, size_t ndirs, const char *token,
    void (*fn)(void *arg, const char *dir, const char *name), void *arg)
{
	int found = 0;

	for (size_t i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *de;

		if (d == NULL)
			continue;
		while ((de = readdir(d)) != NULL)
			if (strstr(de->d_name, token) != NULL) {
				found++;
				if (fn != NULL)
					fn(arg, dirs[i], de->d_name);
			}
		closedir(d);
	}
	return found;
}

/* Reads /proc/PID/cmdline into BUF (SIZE bytes), NULs as spaces; its
 * length, 0 for none. */
static size_t
read_cmdline(int proc, const char *pid, char *buf, size_t size)
{
	char path[300];
	_cleanup_close_ int fd = -1;
	size_t got = 0;

	snprintf(path, sizeof(path), "%s/cmdline", pid);
	fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (got < size - 1) {
		ssize_t r = read(fd, buf + got, size - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	while (got > 0 && buf[got - 1] == '\0')
		got--; /* the last argument's NUL */
	for (size_t i = 0; i < got; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[got] = '\0';
	return got;
}

int
eval_leftovers(const char *token, pid_t *pids, size_t max, char *cmd,
    size_t cmdlen)
{
	_cleanup_close_ int proc = open("/proc",
	    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[4097];
	pid_t self = getpid();
	DIR *d;
	struct dirent *de;
	int found = 0;

	if (proc < 0)
		return -errno;
	if ((d = fdopendir(fcntl(proc, F_DUPFD_CLOEXEC, 0))) == NULL)
		return -errno;
	if (cmd != NULL && cmdlen > 0)
		cmd[0] = '\0';
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0 || pid == self)
			continue;
		if (read_cmdline(proc, de->d_name, buf, sizeof(buf)) == 0 ||
		    strstr(buf, token) == NULL)
			continue;
		if ((size_t)found < max)
			pids[found] = (pid_t)pid;
		if (found == 0 && cmd != NULL && cmdlen > 0)
			snprintf(cmd, cmdlen, "%s", buf);
		found++;
	}
	closedir(d);
	return found;
}

int
eval_kill_leftovers(const char *token)
{
	static const struct timespec pause = {0, 2 * 1000 * 1000};
	pid_t *pids = calloc(MAX_PIDS, sizeof(*pids));
	int n = 0;

	if (pids == NULL)
		return -ENOMEM;
	for (int round = 0, empty = 0; round < 50; round++) {
		n = eval_leftovers(token, pids, MAX_PIDS, NULL, 0);
		if (n < 0)
			break;
		/* A process in the middle of execve(2) has an empty
		 * /proc/PID/cmdline for a moment (its new mm's arguments
		 * are not set up yet): none found is believed only when a
		 * second look, a pause later, agrees. */
		if (n == 0) {
			if (++empty == 2)
				break;
			nanosleep(&pause, NULL);
			continue;
		}
		empty = 0;
		for (int i = 0; i < n && i < MAX_PIDS; i++)
			(void)kill(pids[i], SIGSTOP);
		for (int i = 0; i < n && i < MAX_PIDS; i++)
			(void)kill(pids[i], SIGKILL);
		nanosleep(&pause, NULL);
	}
	free(pids);
	return n < 0 ? 0 : n;
}

int
eval_file_state(const char *path, struct eval_file_state *st)
{
	_cleanup_close_ int fd = -1;
	struct stat sb;

	memset(st, 0, sizeof(*st));
	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : -errno;
	st->exists = true;
	st->mode = sb.st_mode;
	st->uid = sb.st_uid;
	st->ino = sb.st_ino;
	st->size = sb.st_size;
	st->ctime_ns = (int64_t)sb.st_ctim.tv_sec * 1000000000 +
	    sb.st_ctim.tv_nsec;
	if (!S_ISREG(sb.st_mode))
		return 0;
	fd = open(path,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* unreadable now: mode and ctime tell */
	while (st->len < sizeof(st->data)) {
		ssize_t r = read(fd, st->data + st->len,
		    sizeof(st->data) - st->len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		st->len += (size_t)r;
	}
	return 0;
}

bool
eval_file_changed(const struct eval_file_state *a,
    const struct eval_file_state *b)
{
	if (a->exists != b->exists)
		return true;
	if (!a->exists)
		return false;
	return a->mode != b->mode || a->uid != b->uid || a->ino != b->ino ||
	    a->size != b->size || a->ctime_ns != b->ctime_ns ||
	    a->len != b->len || memcmp(a->data, b->data, a->len) != 0;
}

/* Reads the small file PATH into BUF (SIZE bytes, NUL-terminated).
 * Returns 0 or -errno. */
static int
read_small(const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* eval_detect.h */
int
eval_orphans(pid_t owner, char *cmd, size_t cmdlen)
{
	_cleanup_free_ char *list = malloc(65536);
	int found = 0;

	if (list == NULL)
		return 0;

	for (int round = 0; owner > 0 && round < 20; round++) {
		char path[64], *p, *end;
		int here = 0;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
		    (int)owner, (int)owner);
		if (read_small(path, list, 65536) < 0)
			break;
		for (p = list; *p != '\0'; p = end) {
			long pid = strtol(p, &end, 10);
			char name[32] = "", stat[256] = "";
			char *cp;

			if (end == p)
				break;
			snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
			if (read_small(path, stat, sizeof(stat)) < 0 ||
			    (cp = strrchr(stat, ')')) == NULL ||
			    cp[1] == '\0' || cp[2] == 'Z' || cp[2] == 'X')
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
			if (read_small(path, name, sizeof(name)) == 0 &&
			    (strncmp(name, "stockade-zygote", 15) == 0 ||
				strncmp(name, "stockade-init", 13) == 0))
				continue;
			if (found == 0)
				snprintf(cmd, cmdlen,
				    "pid %ld (%.*s), no token "
				    "in its command line",
				    pid, (int)strcspn(name, "\n"), name);
			found++;
			here++;
			(void)kill((pid_t)pid, SIGKILL);
		}
		if (here == 0)
			break;
		eval_sleep_ms(10);
	}
	return found;
}
