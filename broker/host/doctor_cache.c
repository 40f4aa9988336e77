/* doctor_cache.c: doctor_cached_verdict (doctor.h), the per-boot cache of
 * a passing verdict. */
#include "doctor_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "fsutil.h"

/* ---- the cache ------------------------------------------------------------ */

/* The cache's content, which is its key (doctor.h), and the file's name
 * (its slot: one per binary, so that stockade builds run side by side do
 * not keep replacing each other's pass). Returns 0 or -1. */
static int
cache_key(char *key, size_t len, char *name, size_t namelen)
{
	char boot[64];
	struct stat u, m, x;

	if (read_small_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", boot,
		sizeof(boot)) < 32 ||
	    strspn(boot, "0123456789abcdef-") != strlen(boot) ||
	    stat("/proc/self/ns/user", &u) < 0 ||
	    stat("/proc/self/ns/mnt", &m) < 0 || stat("/proc/self/exe", &x) < 0)
		return -1;
	snprintf(key, len,
	    "stockade doctor cache 1\nboot %s\nuid %u\n"
	    "userns %ju:%ju\nmntns %ju:%ju\nexe %ju:%ju:%jd.%09ld\n"
	    "version %s\nverdict ok\n",
	    boot, (unsigned)geteuid(), (uintmax_t)u.st_dev, (uintmax_t)u.st_ino,
	    (uintmax_t)m.st_dev, (uintmax_t)m.st_ino, (uintmax_t)x.st_dev,
	    (uintmax_t)x.st_ino, (intmax_t)x.st_mtim.tv_sec, x.st_mtim.tv_nsec,
	    STOCKADE_VERSION);
	snprintf(name, namelen, "stockade-doctor-%u-%ju", (unsigned)geteuid(),
	    (uintmax_t)x.st_ino);
	return 0;
}

/* True when ST belongs to the effective uid and no one else may write
 * it. */
static bool
ours_alone(const struct stat *st)
{
	return st->st_uid == geteuid() && (st->st_mode & 022) == 0;
}

/* FD (a directory descriptor, or -1) when it may hold the cache: a
 * directory of the effective uid that no one else may write; else closes
 * it and returns -1. */
static int
usable_dir(int fd)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || !ours_alone(&st)) {
		close(fd);
		return -1;
	}
	return fd;
}

int
doctor_cache_private_dir(int parent, const char *name)
{
	if (mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return -1;
	return usable_dir(openat(parent, name,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

/*
 * A descriptor of the directory that may hold the cache, else -1:
 * $XDG_RUNTIME_DIR when it is set; when it is not (root, cron, CI, a
 * benchmark), /run/user/EUID, then /tmp/stockade-EUID (doctor.h).
 */
static int
cache_dir(void)
{
	const char *d = getenv("XDG_RUNTIME_DIR");
	char path[64];
	int tmp, fd;

	if (d != NULL && d[0] != '\0') {
		if (d[0] != '/')
			return -1;
		return usable_dir(open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	}
	snprintf(path, sizeof(path), "/run/user/%u", (unsigned)geteuid());
	if ((fd = usable_dir(open(path,
		 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))) >= 0)
		return fd;
	if ((tmp = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	snprintf(path, sizeof(path), "stockade-%u", (unsigned)geteuid());
	fd = doctor_cache_private_dir(tmp, path);
	close(tmp);
	return fd;
}

/* Whether the cache file NAME under DIR holds exactly KEY. */
static bool
cache_hit(int dir, const char *name, const char *key)
{
	_cleanup_close_ int fd = openat(dir, name,
	    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t len = strlen(key), got = 0;
	char buf[1024];
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    !ours_alone(&st) || st.st_nlink != 1 || st.st_size != (off_t)len ||
	    len >= sizeof(buf))
		return false;
	while (got < len && (n = read(fd, buf + got, len - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		got += (size_t)n;
	}
	return got == len && memcmp(buf, key, len) == 0;
}

/* Writes KEY as the cache file NAME under DIR, atomically. */
static void
cache_store(int dir, const char *name, const char *key)
{
	char tmp[128];
	int fd, r;

	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid());
	fd = openat(dir, tmp,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	r = write_all(fd, key, strlen(key));
	if (close(fd) != 0 || r < 0 || renameat(dir, tmp, dir, name) != 0)
		(void)unlinkat(dir, tmp, 0);
}

int
doctor_cached_verdict(char *why, size_t whylen)
{
	/* About 20 KiB: not on the stack. */
	_cleanup_free_ struct doctor_report *r = calloc(1, sizeof(*r));
	_cleanup_close_ int dir = cache_dir();
	char key[1024], name[64];
	bool cacheable;

	if (whylen > 0)
		why[0] = '\0';
	cacheable = dir >= 0 &&
	    cache_key(key, sizeof(key), name, sizeof(name)) == 0;
	if (cacheable && cache_hit(dir, name, key))
		return 0;
	if (r == NULL) {
		snprintf(why, whylen, "out of memory checking the host");
		return -1;
	}
	if (doctor_run(r, DOCTOR_REQUIRED_ONLY) == 0) {
		if (cacheable)
			cache_store(dir, name, key);
		return 0;
	}
	for (size_t i = 0; i < DOCTOR_NCHECKS; i++) {
		const struct doctor_check *c = &r->checks[i];

		if (c->ran && c->status == DOCTOR_REFUSED) {
			snprintf(why, whylen, "%s. Fix: %s", c->observed,
			    c->fix);
			break;
		}
	}
	return -1;
}
