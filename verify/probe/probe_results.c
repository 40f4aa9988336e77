/*
 * probe_results.c: stockade-probe's commands for the results checks
 * (verify/check/check_results.c): one job that ends in each status of the
 * result (docs/results.md), each bounded (at most 256 MiB of memory, 40
 * processes, 4 MiB of disk, 10 s) whatever the sandbox does.
 *
 * This file holds the table (probe_results_cmds) and the commands of
 * the statuses; those that hold kernel memory, processes or descriptors
 * up to a limit are in probe_results_held.c (probe_results.h).
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

/* A decimal argument (probe_results.h). */
long
results_arg_num(int argc, char **argv, int i, long max, long def)
{
	char *end;
	long v;

	if (i >= argc)
		return def;
	errno = 0;
	v = strtol(argv[i], &end, 10);
	if (errno != 0 || end == argv[i] || *end != '\0' || v < 0 || v > max)
		return def;
	return v;
}

/* Writes all LEN bytes of BUF to FD; -errno on failure. */
static int
write_all_fd(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* result-exit [CODE]: prints "hello from the job" and exits CODE (0). */
static int
cmd_exit(int argc, char **argv)
{
	long code = results_arg_num(argc, argv, 1, 255, 0);

	fputs("hello from the job\n", stdout);
	fflush(stdout);
	return (int)code;
}

/* result-says TEXT [CODE]: writes TEXT and a newline to stderr, uses
 * nothing of any limit, and exits CODE (1 unless given): a program whose
 * words name a limit it never reached. */
static int
cmd_says(int argc, char **argv)
{
	long code = results_arg_num(argc, argv, 2, 255, 1);

	fprintf(stderr, "%s\n", argc > 1 ? argv[1] : "");
	return (int)code;
}

/* result-fork-on [N]: starts up to N (40 at most) children that each
 * sleep 2 s, goes on when a fork fails (printing "fork: ..." on stderr as
 * a program that handles the error would), prints "forked=K" and exits 0
 * at once, leaving its children to the jail's end (a job that ends
 * between two of the monitor's samples: init's count is the evidence). */
static int
cmd_fork_on(int argc, char **argv)
{
	long n = results_arg_num(argc, argv, 1, 40, 40), k = 0;

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			sleep(2);
			_exit(0);
		}
		if (pid < 0)
			fprintf(stderr, "fork: %s\n", strerror(errno));
		else
			k++;
	}
	probe_kv("forked", "%ld", k);
	return 0;
}

/* result-sleep [SECONDS]: sleeps (10 s at most), then prints
 * "slept=SECONDS". A wall-clock limit ends it first. */
static int
cmd_sleep(int argc, char **argv)
{
	long s = results_arg_num(argc, argv, 1, 10, 10);

	sleep((unsigned)s);
	probe_kv("slept", "%ld", s);
	return 0;
}

/* The CPU time this process has used, milliseconds. */
static long long
cpu_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Spins until this process has used CPU_MS milliseconds of CPU time, or
 * WALL_MS of wall-clock time have passed, whichever comes first. */
static void
spin_for(long long cpu_ms, long long wall_ms)
{
	long long end = probe_now_ms() + wall_ms;
	volatile uint64_t x = 0;

	while (probe_now_ms() < end && cpu_now_ms() < cpu_ms)
		for (int i = 0; i < 100000; i++)
			x = x + 1;
}

/*
 * result-spin [PROCS]: PROCS (1..4) processes burn CPU until each has
 * used 3 s of CPU time (at most 60 s of wall-clock time), then print
 * "spun=1". A CPU limit of 1 s for the jail ends them first however
 * loaded the machine is: the spinners stop on CPU time, not on wall
 * time, so a machine that gives them little CPU only makes them take
 * longer (results.cpu_limit_at_cpu_time, issue 23 point 10).
 */
static int
cmd_spin(int argc, char **argv)
{
	long procs = results_arg_num(argc, argv, 1, 4, 1);

	for (long i = 1; i < procs; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			spin_for(3000, 60000);
			_exit(0);
		}
	}
	spin_for(3000, 60000);
	while (wait(NULL) > 0)
		;
	probe_kv("spun", "1");
	return 0;
}

/* result-memory [MIB]: keeps 8 MiB blocks, each written through, up to
 * MIB (256 at most), then prints "held=MIB". A refused allocation is
 * reported the way a C program reports it ("Cannot allocate memory",
 * strerror(ENOMEM)) with exit 1. */
static int
cmd_memory(int argc, char **argv)
{
	long mib = results_arg_num(argc, argv, 1, 256, 256);
	long held = 0;

	for (; held + 8 <= mib; held += 8) {
		char *p = malloc(8u << 20);

		if (p == NULL) {
			fprintf(stderr,
			    "stockade-probe: malloc of 8 MiB after "
			    "%ld MiB: %s\n",
			    held, strerror(ENOMEM));
			return 1;
		}
		memset(p, 0x5a, 8u << 20);
	}
	probe_kv("held", "%ld", held);
	return 0;
}

/* result-pool [MIB [KIDS]]: touches MIB MiB (256 at most, 64 unless
 * given), then forks KIDS children (8 at most, 4 unless given) that share
 * it unwritten (copy on write) and sleep 1 s, waits for them and prints
 * "pool=MIB,KIDS": a pre-forking server's or a multiprocessing pool's
 * memory, counted KIDS + 1 times by a sum of resident sets. */
static int
cmd_pool(int argc, char **argv)
{
	long mib = results_arg_num(argc, argv, 1, 256, 64);
	long kids = results_arg_num(argc, argv, 2, 8, 4), k;
	char *p = malloc((size_t)mib << 20);

	if (p == NULL) {
		fprintf(stderr, "stockade-probe: malloc of %ld MiB: %s\n", mib,
		    strerror(ENOMEM));
		return 1;
	}
	memset(p, 0x5a, (size_t)mib << 20);
	for (k = 0; k < kids; k++) {
		pid_t pid = fork();

		if (pid == 0) {
			sleep(1);
			_exit(p[0] == 0x5a ? 0 : 1);
		}
		if (pid < 0) {
			fprintf(stderr, "stockade-probe: fork: %s\n",
			    strerror(errno));
			return 1;
		}
	}
	while (wait(NULL) > 0)
		;
	probe_kv("pool", "%ld,%ld", mib, kids);
	free(p);
	return 0;
}

/* result-flood [KIB [stderr]]: writes numbered lines to stdout (or to
 * stderr), KIB KiB in all (4096 at most), then prints "flooded=KIB" on
 * the other stream. */
static int
cmd_flood(int argc, char **argv)
{
	long kib = results_arg_num(argc, argv, 1, 4096, 1024);
	bool err = argc > 2 && strcmp(argv[2], "stderr") == 0;
	char line[64];
	size_t total = 0, want = (size_t)kib << 10;

	for (unsigned i = 0; total < want; i++) {
		int n = snprintf(line, sizeof(line), "flood line %u\n", i);

		if (write_all_fd(err ? 2 : 1, line, (size_t)n) < 0)
			return 1;
		total += (size_t)n;
	}
	fprintf(err ? stdout : stderr, "flooded=%ld\n", kib);
	return 0;
}

/* Writes MIB MiB of zeros to PATH in 64 KiB writes; on a failed write
 * reports it as a C program does ("PATH: No space left on device") and
 * returns 1. */
static int
write_mib(const char *path, long mib)
{
	static char block[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	long blocks = mib * 16;

	if (fd < 0) {
		fprintf(stderr, "stockade-probe: %s: %s\n", path,
		    strerror(errno));
		return 1;
	}
	for (long i = 0; i < blocks; i++) {
		int e = write_all_fd(fd, block, sizeof(block));

		if (e < 0) {
			fprintf(stderr, "stockade-probe: %s: %s\n", path,
			    strerror(-e));
			close(fd);
			return 1;
		}
	}
	close(fd);
	probe_kv("wrote", "%ld", mib);
	return 0;
}

/* result-bigfile [MIB]: writes MIB (8 at most) MiB to /work/big.
 * RLIMIT_FSIZE ends it with SIGXFSZ. */
static int
cmd_bigfile(int argc, char **argv)
{
	return write_mib("/work/big", results_arg_num(argc, argv, 1, 8, 2));
}

/* result-filltmp [MIB]: writes MIB (8 at most) MiB to /tmp/fill. */
static int
cmd_filltmp(int argc, char **argv)
{
	return write_mib("/tmp/fill", results_arg_num(argc, argv, 1, 8, 4));
}

/* result-segv: writes through a null pointer. */
static int
cmd_segv(int argc, char **argv)
{
	volatile uintptr_t zero = 0;

	*(volatile int *)zero = 1;
	probe_kv("segv", "survived");
	return 0;
}

/* result-int80: makes the i386 system call getpid (20) with int 0x80,
 * as a 32-bit program would; prints "int80=RETURN" if it comes back. */
static int
cmd_int80(int argc, char **argv)
{
#if defined(__x86_64__)
	long ret = 20;

	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
	probe_kv("int80", "%ld", ret);
	return 0;
#else
	probe_kv("int80", "unsupported");
	return 0;
#endif
}

/* result-badutf8: prints ill-formed UTF-8 (RFC 3629: a lone continuation
 * byte, 0xFF, an overlong '/', a UTF-16 surrogate, a code point above
 * U+10FFFF, a sequence cut short) between ASCII words on stdout and
 * stderr, then a valid "é". */
static int
cmd_badutf8(int argc, char **argv)
{
	static const char bad[] = "begin \x80 \xff \xc0\xaf \xed\xa0\x80 "
				  "\xf4\x90\x80\x80 \xe2\x82 end \xc3\xa9\n";

	if (write_all_fd(1, bad, sizeof(bad) - 1) < 0 ||
	    write_all_fd(2, bad, sizeof(bad) - 1) < 0)
		return 1;
	return 0;
}

const struct probe_cmd probe_results_cmds[] = {
    {"result-exit", "[CODE]: prints a line and exits CODE", cmd_exit},
    {"result-sleep", "[SECONDS]: sleeps, then slept=SECONDS", cmd_sleep},
    {"result-says", "TEXT [CODE]: TEXT on stderr, exit CODE (1)", cmd_says},
    {"result-fork-on", "[N]: N sleepers, refused forks skipped, exit 0",
	cmd_fork_on},
    {"result-spin",
	"[PROCS]: PROCS processes burn 3 s of CPU each "
	"(60 s at most)",
	cmd_spin},
    {"result-memory", "[MIB]: keeps MIB in 8 MiB blocks, held=MIB", cmd_memory},
    {"result-fork", "[N]: N children sleeping 5 s, forked=K", results_cmd_fork},
    {"result-pool", "[MIB [KIDS]]: MIB touched, KIDS forked sharing it",
	cmd_pool},
    {"result-sockets", "[PAIRS]: unix socket pairs with full queues, 15 s",
	results_cmd_sockets},
    {"result-pte", "[GIB]: one page mapped every 2 MiB of GIB GiB, 15 s",
	results_cmd_pte},
    {"result-epoll", "[K]: K thousand epoll watches on closed numbers, 15 s",
	results_cmd_epoll},
    {"result-maps",
	"[K]: K thousand memory maps in processes of 60,000, "
	"15 s",
	results_cmd_maps},
    {"result-locks", "[K]: K thousand POSIX locks in 4 processes, 15 s",
	results_cmd_locks},
    {"result-pipes",
	"[N]: N processes holding empty pipes up to "
	"RLIMIT_NOFILE 15 s, pipes=K",
	results_cmd_pipes},
    {"result-flood", "[KIB [stderr]]: KIB KiB of lines on stdout (stderr)",
	cmd_flood},
    {"result-bigfile", "[MIB]: writes MIB MiB to /work/big, wrote=MIB",
	cmd_bigfile},
    {"result-filltmp", "[MIB]: writes MIB MiB to /tmp/fill, wrote=MIB",
	cmd_filltmp},
    {"result-segv", "writes through a null pointer", cmd_segv},
    {"result-int80", "i386 getpid by int 0x80, int80=RETURN", cmd_int80},
    {"result-badutf8", "ill-formed UTF-8 on stdout and stderr", cmd_badutf8},
    {NULL, NULL, NULL},
};
