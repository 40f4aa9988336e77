/*
 * crash.c KIND: dies of the signal KIND names, the way buggy code does,
 * without sending it to itself (except abort(), which is how a failed
 * assertion ends):
 *   segv  a write to a PROT_NONE page               -> SIGSEGV
 *   abort abort()                                   -> SIGABRT
 *   fpe   an integer division by zero (x86 traps)   -> SIGFPE
 *   bus   a read of a shared mapping of a file truncated to 0 bytes
 *         (the file is made in /tmp and unlinked at once) -> SIGBUS
 *
 * Expected status: crash, with "signal" the name above and exit_code
 * null; RLIMIT_CORE is 0 in the jail, so no core file.
 *
 * Bound when run bare: one page of memory, one empty file in /tmp that
 * is unlinked before the fault; dies at once. (Run it bare only under
 * `ulimit -c 0`.)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int zero;
static volatile int numerator = 1;
static volatile int sink;

static int
segv(void)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, (size_t)page, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	p[0] = 1;
	return 1;
}

static int
fpe(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* Both volatile: with a constant numerator gcc turns 1 / x into a
	 * compare that never divides. */
	sink = numerator / zero;
#else
	/* Integer division by zero does not trap on this architecture. */
	raise(SIGFPE);
#endif
	return 1;
}

static int
bus(void)
{
	char path[] = "/tmp/crash-bus-XXXXXX";
	long page = sysconf(_SC_PAGESIZE);
	int fd = mkstemp(path);
	volatile char *p;

	if (fd < 0) {
		perror("crash: mkstemp");
		return 1;
	}
	(void)unlink(path);
	if (ftruncate(fd, page) != 0) {
		perror("crash: ftruncate");
		return 1;
	}
	p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("crash: mmap");
		return 1;
	}
	if (ftruncate(fd, 0) != 0) {
		perror("crash: ftruncate 0");
		return 1;
	}
	sink = p[0];
	return 1;
}

int
main(int argc, char **argv)
{
	const char *kind = argc == 2 ? argv[1] : "";

	fflush(stdout);
	if (strcmp(kind, "segv") == 0)
		return segv();
	if (strcmp(kind, "abort") == 0)
		abort();
	if (strcmp(kind, "fpe") == 0)
		return fpe();
	if (strcmp(kind, "bus") == 0)
		return bus();
	fprintf(stderr, "usage: crash segv|abort|fpe|bus\n");
	return 2;
}
