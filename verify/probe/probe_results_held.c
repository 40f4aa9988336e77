/*
 * probe_results_held.c: stockade-probe's results commands that hold
 * kernel memory (socket buffers, epoll watches, memory maps, locks, page
 * tables), processes or descriptors up to a limit for a few seconds, for
 * the checks of the monitor's charges and the process limit
 * (verify/check/check_results_limits.c; probe_results.h). Each is
 * bounded whatever the sandbox does.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe.h"
#include "probe_results.h"

/*
 * How long a probe below holds what it pinned, in seconds. A sound
 * monitor ends the job at its first count over the limit; on a loaded
 * host that count (a walk of /proc/PID/fdinfo over every lock or watch)
 * can take seconds, and a hold shorter than it made a sound jail look
 * like one that charges nothing (status ok). 15 s stays under the
 * checks' 30 s timeout.
 */
#define HOLD_S 15

/* result-sockets [PAIRS]: makes PAIRS unix socket pairs (100 unless
 * given, 120 at most), fills one end's queue of each until the kernel
 * says EAGAIN (about 200 KiB each with the default buffers, socket(7)),
 * holds them HOLD_S (15 s) and prints "sockets=K": kernel memory no process maps,
 * which the monitor charges per socket of the jail's network namespace
 * (docs/layers.md, "Memory the monitor cannot see"). About 25 MiB when
 * run bare. */
int
results_cmd_sockets(int argc, char **argv)
{
	long pairs = results_arg_num(argc, argv, 1, 120, 100), k;
	static char chunk[16384];

	for (k = 0; k < pairs; k++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
			break;
		while (write(sv[0], chunk, sizeof(chunk)) > 0)
			;
	}
	probe_kv("sockets", "%ld", 2 * k);
	sleep(HOLD_S);
	return 0;
}

/* result-epoll [K]: K thousand epoll watches (240 unless given, 240 at
 * most; about 200 bytes of kernel memory each, epoll(7)) that no
 * descriptor count shows: 60 epoll instances each watching every one of
 * 60 pipes under many descriptor numbers, each number closed after its
 * watch is added (a watch lives while its file is open anywhere). Holds
 * HOLD_S (15 s) and prints "watches=N". About 46 MiB when run bare. */
int
results_cmd_epoll(int argc, char **argv)
{
	long want = results_arg_num(argc, argv, 1, 240, 240) * 1000, n = 0;
	struct epoll_event ev = {.events = EPOLLIN};
	int p[2], files[60], eps[60], lo, hi = 200;

	for (int i = 0; i < 60; i++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			goto out;
		close(p[1]);
		files[i] = p[0];
	}
	for (int i = 0; i < 60; i++)
		if ((eps[i] = epoll_create1(EPOLL_CLOEXEC)) < 0)
			goto out;
	lo = eps[59] + 1;
	for (int e = 0; e < 60 && n < want; e++)
		for (int f = 0; f < 60 && n < want; f++)
			for (int d = lo; d < hi && n < want; d++) {
				if (dup2(files[f], d) < 0 ||
				    epoll_ctl(eps[e], EPOLL_CTL_ADD, d, &ev) <
					0)
					goto out;
				close(d);
				n++;
			}
out:
	probe_kv("watches", "%ld", n);
	sleep(HOLD_S);
	return 0;
}

/*
 * Runs PIN(PER, ARG) in each of PROCS processes (this one and PROCS - 1
 * forked children), then holds HOLD_S (15 s); returns the objects pinned, as the
 * children report them through a pipe (a child that could not report
 * counts 0).
 */
static long
pin_in_procs(int procs, long per, long (*pin)(long, int))
{
	int rep[2];
	long n, sum = 0, got;

	if (pipe2(rep, O_CLOEXEC) < 0)
		return 0;
	for (int i = 1; i < procs; i++) {
		pid_t pid = fork();

		if (pid != 0)
			continue;
		close(rep[0]);
		n = pin(per, i);
		if (write(rep[1], &n, sizeof(n)) != sizeof(n))
			_exit(1);
		sleep(HOLD_S);
		_exit(0);
	}
	close(rep[1]);
	sum = pin(per, 0);
	for (int i = 1; i < procs; i++)
		if (read(rep[0], &got, sizeof(got)) == sizeof(got))
			sum += got;
	close(rep[0]);
	return sum;
}

/* PER maps in this process: one PROT_NONE mapping of PER pages, every
 * other page then made readable (neighbours of unlike protection never
 * merge). Returns the maps made. */
static long
pin_maps(long per, int unused)
{
	long page = sysconf(_SC_PAGESIZE), n = 1;
	char *p = mmap(NULL, (size_t)(per * page), PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	(void)unused;
	if (p == MAP_FAILED)
		return 0;
	for (long i = 1; i + 1 < per; i += 2, n += 2)
		if (mprotect(p + i * page, (size_t)page, PROT_READ) < 0)
			break;
	return n;
}

/* result-maps [K]: K thousand memory maps (180 unless given, 240 at
 * most; about 220 bytes of kernel memory each, a vm_area_struct and its
 * share of the maple tree, launcher/common/usage.h) and no resident memory, in
 * processes of 60,000 maps each (vm.max_map_count is 65,530). Holds HOLD_S (15 s)
 * and prints "maps=N". About 38 MiB when run bare. */
int
results_cmd_maps(int argc, char **argv)
{
	long want = results_arg_num(argc, argv, 1, 240, 180) * 1000;
	int procs = (int)((want + 59999) / 60000);

	if (procs < 1)
		procs = 1;
	probe_kv("maps", "%ld", pin_in_procs(procs, want / procs, pin_maps));
	sleep(HOLD_S);
	return 0;
}

/* PER POSIX write locks in this process, on every other byte of 50
 * unlinked files of /tmp (200 descriptors in all: under the 512 the
 * monitor leaves uncharged, fdcharge.h) (neighbouring locks of one owner merge; the
 * kernel inserts a lock after a walk of its file's locks, so many short
 * lists). Returns the locks set. */
static long
pin_locks(long per, int id)
{
	char path[64];
	long n = 0;

	for (int f = 0; f < 50 && n < per; f++) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/probe-lock-%d-%d-%d",
		    (int)getpid(), id, f);
		if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			 0600)) < 0)
			return n;
		(void)unlink(path);
		for (long i = 0; i < (per + 49) / 50 && n < per; i++, n++) {
			struct flock l = {.l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)(2 * i),
			    .l_len = 1};

			if (fcntl(fd, F_SETLK, &l) < 0)
				return n;
		}
	}
	return n;
}

/* result-locks [K]: K thousand byte-range (POSIX) locks (200 unless
 * given, 240 at most; about 200 bytes of kernel memory each, a struct
 * file_lock, launcher/common/usage.h; no rlimit bounds them), in 4 processes.
 * Holds HOLD_S (15 s) and prints "locks=N". About 39 MiB when run bare. */
int
results_cmd_locks(int argc, char **argv)
{
	long want = results_arg_num(argc, argv, 1, 240, 200) * 1000;

	probe_kv("locks", "%ld", pin_in_procs(4, want / 4, pin_locks));
	sleep(HOLD_S);
	return 0;
}

/*
 * Maps one 4 KiB page of an unnamed file in /tmp (O_TMPFILE) once every
 * STEP bytes of SPAN bytes of address space and reads each mapping once;
 * *MAPPED gets the mappings made. The mappings stay until the process
 * exits. Returns 0, or -1 with errno when the file or the reserve of
 * address space cannot be made; a mapping refused (vm.max_map_count)
 * ends the spread early with 0.
 */
static int
probe_spread_page(unsigned long span, unsigned long step, unsigned long *mapped)
{
	volatile char sum = 0;
	char *base;
	int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	*mapped = 0;
	if (fd < 0)
		return -1;
	if (ftruncate(fd, 4096) < 0 ||
	    (base = mmap(NULL, span, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) ==
		MAP_FAILED) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	for (unsigned long o = 0; o < span; o += step) {
		char *p = mmap(base + o, 4096, PROT_READ,
		    MAP_SHARED | MAP_FIXED, fd, 0);

		if (p == MAP_FAILED)
			break;
		sum += *p;
		(*mapped)++;
	}
	(void)sum;
	close(fd);
	return 0;
}

/* result-pte [GIB]: spreads GIB GiB (64 unless given, 64 at most) of
 * address space over mappings of one 4 KiB page of a file in /tmp, one
 * every 2 MiB, each read once: every mapping needs a page-table page of
 * its own (4 KiB, 32 MiB of page tables for 16 GiB), while the one page
 * they share counts once in the proportional set size the monitor sums.
 * (A read-only anonymous mapping read every 2 MiB did this with the zero
 * page until kernels that map a fresh page on such a read: there the
 * attack is resident memory, not page tables.) Holds HOLD_S (15 s) and
 * prints "pte_pages=K": the page tables the monitor counts (VmPTE,
 * proc(5)). */
int
results_cmd_pte(int argc, char **argv)
{
	unsigned long span =
	    (unsigned long)results_arg_num(argc, argv, 1, 64, 64) << 30;
	const unsigned long step = 2ul << 20;
	unsigned long k = 0;

	if (probe_spread_page(span, step, &k) < 0) {
		fprintf(stderr, "stockade-probe: result-pte: %s\n",
		    strerror(errno));
		return 1;
	}
	probe_kv("pte_pages", "%lu", k);
	sleep(HOLD_S);
	return 0;
}

/* result-fork [N]: starts up to N (40 at most) children that each sleep
 * 5 s; prints "forked=K" and, when a fork fails, reports it as a shell
 * does ("fork: Resource temporarily unavailable") and exits 1. */
int
results_cmd_fork(int argc, char **argv)
{
	long n = results_arg_num(argc, argv, 1, 40, 40), k;

	for (k = 0; k < n; k++) {
		pid_t pid = fork();

		if (pid == 0) {
			sleep(5);
			_exit(0);
		}
		if (pid < 0) {
			int e = errno;

			probe_kv("forked", "%ld", k);
			fprintf(stderr, "stockade-probe: fork: %s\n",
			    strerror(e));
			return 1;
		}
	}
	probe_kv("forked", "%ld", k);
	while (wait(NULL) > 0)
		;
	return 0;
}

/* result-pipes [N]: N processes (16 at most, this one among them) each
 * make empty pipes until RLIMIT_NOFILE stops them (EMFILE) and hold them
 * HOLD_S (15 s); prints "pipes=K", this process's count. Kernel memory per pipe
 * is small while empty, but each could hold 64 KiB (pipe(7)): the
 * monitor charges the descriptors (launcher/supervisor/fdcharge.h). */
int
results_cmd_pipes(int argc, char **argv)
{
	long n = results_arg_num(argc, argv, 1, 16, 8), k = 0;
	int p[2];

	for (long i = 1; i < n; i++)
		if (fork() == 0)
			break;
	while (pipe(p) == 0)
		k++;
	probe_kv("pipes", "%ld", k);
	fflush(stdout);
	sleep(HOLD_S);
	while (wait(NULL) > 0)
		;
	return 0;
}
