/*
 * probe_seccomp_modes.c: the mode calls of stockade-probe's `sys`
 * command (probe_seccomp.h): each system call that makes or changes a
 * file's mode, made with a setuid or setgid bit, which the jail's filter
 * refuses (docs/seccomp.md; launcher/zygote/seccomp.c). Each acts only
 * on a file of its own in the working directory, removed after.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"
#include "probe_seccomp.h"

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

/* The mode calls (launcher/zygote/seccomp.c's mode rules: no setuid or setgid
 * bit from any of them), each with mode M. The chmod ones change
 * MODE_FILE (made 0644 first when missing), the others make MADE, or an
 * unnamed file in the working directory (O_TMPFILE). */
static int
mode_file(void)
{
	return (int)syscall(SYS_openat, (long)AT_FDCWD, MODE_FILE,
	    (long)(O_WRONLY | O_CREAT | O_CLOEXEC), 0644L);
}

/* Removes MADE when R says the call made it; returns R. */
static long
unmade(long r)
{
	if (r >= 0 && unlink(MADE) < 0)
		(void)rmdir(MADE);
	return r;
}

static long
mode_chmod(unsigned long m)
{
	int fd = mode_file();

	if (fd < 0)
		return -1;
	close(fd);
	return syscall(SYS_chmod, MODE_FILE, m);
}

static long
mode_fchmod(unsigned long m)
{
	int fd = mode_file();
	long r;

	if (fd < 0)
		return -1;
	r = syscall(SYS_fchmod, (long)fd, m);
	close(fd);
	return r;
}

static long
mode_fchmodat(unsigned long m)
{
	int fd = mode_file();

	if (fd < 0)
		return -1;
	close(fd);
	/* What coreutils' chmod(1) calls. */
	return syscall(SYS_fchmodat, (long)AT_FDCWD, MODE_FILE, m);
}

static long
mode_mkdir(unsigned long m)
{
	return unmade(syscall(SYS_mkdir, MADE, m));
}

static long
mode_mkdirat(unsigned long m)
{
	return unmade(syscall(SYS_mkdirat, (long)AT_FDCWD, MADE, m));
}

static long
mode_mknod(unsigned long m)
{
	/* A regular file: no CAP_MKNOD needed. */
	return unmade(
	    syscall(SYS_mknod, MADE, (unsigned long)S_IFREG | m, 0UL));
}

static long
mode_mknodat(unsigned long m)
{
	return unmade(syscall(SYS_mknodat, (long)AT_FDCWD, MADE,
	    (unsigned long)S_IFREG | m, 0UL));
}

static long
mode_creat(unsigned long m)
{
	return probe_closed(unmade(syscall(SYS_creat, MADE, m)));
}

static long
mode_open(unsigned long m)
{
	return probe_closed(unmade(syscall(SYS_open, MADE,
	    (long)(O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC), m)));
}

static long
mode_openat(unsigned long m)
{
	return probe_closed(unmade(syscall(SYS_openat, (long)AT_FDCWD, MADE,
	    (long)(O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC), m)));
}

static long
mode_tmpfile(unsigned long m)
{
	/* Unnamed: gone with its descriptor. */
	return probe_closed(syscall(SYS_openat, (long)AT_FDCWD, ".",
	    (long)(O_TMPFILE | O_WRONLY | O_CLOEXEC), m));
}

/* try_KIND_setuid and try_KIND_setgid: mode_KIND with 04755, 02755. */
#define MODE_TRIES(kind)                   \
	long try_##kind##_setuid(void)     \
	{                                  \
		return mode_##kind(04755); \
	}                                  \
	long try_##kind##_setgid(void)     \
	{                                  \
		return mode_##kind(02755); \
	}
MODE_TRIES(chmod)
MODE_TRIES(fchmod)
MODE_TRIES(fchmodat)
MODE_TRIES(mkdir)
MODE_TRIES(mkdirat)
MODE_TRIES(mknod)
MODE_TRIES(mknodat)
MODE_TRIES(creat)
MODE_TRIES(open)
MODE_TRIES(openat)
MODE_TRIES(tmpfile)

long
try_chmod_plain(void)
{
	return mode_chmod(0640);
}
