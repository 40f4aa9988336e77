/* fdcharge.c: see fdcharge.h. */
#include "fdcharge.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

/* Entries of the open directory DFD but "." and "..", or -errno. */
static long
count_entries(int dfd)
{
	char buf[8192];
	long n = 0;
	ssize_t got;

	while ((got = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			if (strcmp(d->d_name, ".") != 0 &&
			    strcmp(d->d_name, "..") != 0)
				n++;
			off += d->d_reclen;
		}
	}
	return got < 0 ? -errno : n;
}

void
fdcharge_init(struct fd_charge *c, int proc_fd)
{
	struct stat st;
	long n;
	int d;

	memset(c, 0, sizeof(*c));
	c->proc_fd = proc_fd;
	d = openat(proc_fd, "self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		/* Counted while D is open: D is among the entries. */
		if (fstat(d, &st) == 0 && (n = count_entries(d)) > 0)
			c->by_size = st.st_size == (off_t)n;
		close(d);
	}
}

/*
 * "FDSize:" of /proc/PID/status through PROC_FD: the slots of the
 * process's descriptor table, never fewer than its open descriptors
 * (proc(5); fs/proc/array.c task_fd_size), a power of two of at least
 * 64. The status file needs no more than search permission on
 * /proc/PID. 0 when it is gone or has no such line.
 */
static long
fd_table_size(int proc_fd, pid_t pid)
{
	return (long)proc_pid_number(proc_fd, pid, "status", "\nFDSize:");
}

/* Whether ERR (an errno) says the process is gone rather than that its
 * descriptors were kept from the reader. */
static bool
gone(int err)
{
	return err == ENOENT || err == ESRCH;
}

void
fdcharge_begin(struct fd_charge *c)
{
	c->walk = 0;
}

void
fdcharge_process(struct fd_charge *c, pid_t pid)
{
	char path[64];
	struct stat st;
	long n = 0;
	int d, err = ENOENT;

	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	if (c->by_size) {
		if (fstatat(c->proc_fd, path, &st, 0) == 0)
			n = (long)st.st_size;
		else
			err = errno;
	} else if ((d = openat(c->proc_fd, path,
			O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		if ((n = count_entries(d)) < 0) {
			err = (int)-n;
			n = 0;
		}
		close(d);
	} else {
		err = errno;
	}
	/* The listing refused, not gone: on a kernel before 6.2 a process
	 * that made itself non-dumpable has its fd directory owned by root
	 * (proc(5), PR_SET_DUMPABLE), which a launcher without
	 * CAP_DAC_OVERRIDE cannot open. Its table's size stands in for
	 * the count: over, never under (fail closed). */
	if (n == 0 && !gone(err))
		n = fd_table_size(c->proc_fd, pid);
	if (n > 0)
		c->walk += (uint64_t)n;
}

uint64_t
fdcharge_end(struct fd_charge *c)
{
	c->descriptors = c->walk;
	c->bytes = c->walk > FDCHARGE_FREE
	    ? (c->walk - FDCHARGE_FREE) * FDCHARGE_PIPE_BYTES
	    : 0;
	return c->bytes;
}
