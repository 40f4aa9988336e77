/*
 * probe_results.c: stockade-probe's commands for the results checks
 * (verify/check/check_results.c): one job that ends in each status of the
 * result (docs/results.md), each bounded (at most 256 MiB of memory, 40
 * processes, 4 MiB of disk, 10 s) whatever the sandbox does.
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

/* A decimal argument in [0, MAX], or DEF when absent or malformed. */
static long
arg_num(int argc, char **argv, int i, long max, long def)
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
	long code = arg_num(argc, argv, 1, 255, 0);

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
	long code = arg_num(argc, argv, 2, 255, 1);

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
	long n = arg_num(argc, argv, 1, 40, 40), k = 0;

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
	long s = arg_num(argc, argv, 1, 10, 10);

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
	long procs = arg_num(argc, argv, 1, 4, 1);

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
	long mib = arg_num(argc, argv, 1, 256, 256);
	long held = 0;

	for (; held + 8 <= mib; held += 8) {
		char *p = malloc(8u << 20);

		if (p == NULL) {
			fprintf(stderr, "stockade-probe: malloc of 8 MiB after "
				"%ld MiB: %s\n", held, strerror(ENOMEM));
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
	long mib = arg_num(argc, argv, 1, 256, 64);
	long kids = arg_num(argc, argv, 2, 8, 4), k;
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

/* result-sockets [PAIRS]: makes PAIRS unix socket pairs (100 unless
 * given, 120 at most), fills one end's queue of each until the kernel
 * says EAGAIN (about 200 KiB each with the default buffers, socket(7)),
 * holds them 5 s and prints "sockets=K": kernel memory no process maps,
 * which the monitor charges per socket of the jail's network namespace
 * (docs/layers.md, "Memory the monitor cannot see"). About 25 MiB when
 * run bare. */
static int
cmd_sockets(int argc, char **argv)
{
	long pairs = arg_num(argc, argv, 1, 120, 100), k;
	static char chunk[16384];

	for (k = 0; k < pairs; k++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
			break;
		while (write(sv[0], chunk, sizeof(chunk)) > 0)
			;
	}
	probe_kv("sockets", "%ld", 2 * k);
	sleep(5);
	return 0;
}

/* result-epoll [K]: K thousand epoll watches (240 unless given, 240 at
 * most; about 200 bytes of kernel memory each, epoll(7)) that no
 * descriptor count shows: 60 epoll instances each watching every one of
 * 60 pipes under many descriptor numbers, each number closed after its
 * watch is added (a watch lives while its file is open anywhere). Holds
 * 5 s and prints "watches=N". About 46 MiB when run bare. */
static int
cmd_epoll(int argc, char **argv)
{
	long want = arg_num(argc, argv, 1, 240, 240) * 1000, n = 0;
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
				    epoll_ctl(eps[e], EPOLL_CTL_ADD, d, &ev) < 0)
					goto out;
				close(d);
				n++;
			}
out:
	probe_kv("watches", "%ld", n);
	sleep(5);
	return 0;
}

/*
 * Runs PIN(PER, ARG) in each of PROCS processes (this one and PROCS - 1
 * forked children), then holds 5 s; returns the objects pinned, as the
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
		sleep(5);
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
 * processes of 60,000 maps each (vm.max_map_count is 65,530). Holds 5 s
 * and prints "maps=N". About 38 MiB when run bare. */
static int
cmd_maps(int argc, char **argv)
{
	long want = arg_num(argc, argv, 1, 240, 180) * 1000;
	int procs = (int)((want + 59999) / 60000);

	if (procs < 1)
		procs = 1;
	probe_kv("maps", "%ld", pin_in_procs(procs, want / procs, pin_maps));
	sleep(5);
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
 * Holds 5 s and prints "locks=N". About 39 MiB when run bare. */
static int
cmd_locks(int argc, char **argv)
{
	long want = arg_num(argc, argv, 1, 240, 200) * 1000;

	probe_kv("locks", "%ld", pin_in_procs(4, want / 4, pin_locks));
	sleep(5);
	return 0;
}

/* result-pte [GIB]: maps GIB GiB (64 unless given, 64 at most) of
 * address space readable only, touching one byte every 2 MiB: each touch
 * maps the shared zero page (no resident memory) and a page-table page of
 * 4 KiB, 32 MiB of page tables for 16 GiB. Holds 5 s and prints
 * "pte_pages=K": the page tables the monitor counts (VmPTE, proc(5)). */
static int
cmd_pte(int argc, char **argv)
{
	unsigned long span = (unsigned long)arg_num(argc, argv, 1, 64, 64) << 30;
	const unsigned long step = 2ul << 20;
	volatile char sum = 0;
	unsigned long k = 0;
	char *p = mmap(NULL, span, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		fprintf(stderr, "stockade-probe: mmap: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned long o = 0; o < span; o += step, k++)
		sum += p[o];
	(void)sum;
	probe_kv("pte_pages", "%lu", k);
	sleep(5);
	return 0;
}

/* result-fork [N]: starts up to N (40 at most) children that each sleep
 * 5 s; prints "forked=K" and, when a fork fails, reports it as a shell
 * does ("fork: Resource temporarily unavailable") and exits 1. */
static int
cmd_fork(int argc, char **argv)
{
	long n = arg_num(argc, argv, 1, 40, 40), k;

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
 * 5 s; prints "pipes=K", this process's count. Kernel memory per pipe
 * is small while empty, but each could hold 64 KiB (pipe(7)): the
 * monitor charges the descriptors (launcher/supervisor/fdcharge.h). */
static int
cmd_pipes(int argc, char **argv)
{
	long n = arg_num(argc, argv, 1, 16, 8), k = 0;
	int p[2];

	for (long i = 1; i < n; i++)
		if (fork() == 0)
			break;
	while (pipe(p) == 0)
		k++;
	probe_kv("pipes", "%ld", k);
	fflush(stdout);
	sleep(5);
	while (wait(NULL) > 0)
		;
	return 0;
}

/* result-flood [KIB [stderr]]: writes numbered lines to stdout (or to
 * stderr), KIB KiB in all (4096 at most), then prints "flooded=KIB" on
 * the other stream. */
static int
cmd_flood(int argc, char **argv)
{
	long kib = arg_num(argc, argv, 1, 4096, 1024);
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
	return write_mib("/work/big", arg_num(argc, argv, 1, 8, 2));
}

/* result-filltmp [MIB]: writes MIB (8 at most) MiB to /tmp/fill. */
static int
cmd_filltmp(int argc, char **argv)
{
	return write_mib("/tmp/fill", arg_num(argc, argv, 1, 8, 4));
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
	{"result-spin", "[PROCS]: PROCS processes burn 3 s of CPU each "
	 "(60 s at most)",
	 cmd_spin},
	{"result-memory", "[MIB]: keeps MIB in 8 MiB blocks, held=MIB",
	 cmd_memory},
	{"result-fork", "[N]: N children sleeping 5 s, forked=K",
	 cmd_fork},
	{"result-pool", "[MIB [KIDS]]: MIB touched, KIDS forked sharing it",
	 cmd_pool},
	{"result-sockets", "[PAIRS]: unix socket pairs with full queues, 5 s",
	 cmd_sockets},
	{"result-pte", "[GIB]: page tables of GIB GiB read every 2 MiB, 5 s",
	 cmd_pte},
	{"result-epoll", "[K]: K thousand epoll watches on closed numbers, 5 s",
	 cmd_epoll},
	{"result-maps", "[K]: K thousand memory maps in processes of 60,000, "
	 "5 s", cmd_maps},
	{"result-locks", "[K]: K thousand POSIX locks in 4 processes, 5 s",
	 cmd_locks},
	{"result-pipes", "[N]: N processes holding empty pipes up to "
	 "RLIMIT_NOFILE 5 s, pipes=K", cmd_pipes},
	{"result-flood", "[KIB [stderr]]: KIB KiB of lines on stdout (stderr)",
	 cmd_flood},
	{"result-bigfile", "[MIB]: writes MIB MiB to /work/big, wrote=MIB",
	 cmd_bigfile},
	{"result-filltmp", "[MIB]: writes MIB MiB to /tmp/fill, wrote=MIB",
	 cmd_filltmp},
	{"result-segv", "writes through a null pointer", cmd_segv},
	{"result-int80", "i386 getpid by int 0x80, int80=RETURN", cmd_int80},
	{"result-badutf8", "ill-formed UTF-8 on stdout and stderr",
	 cmd_badutf8},
	{NULL, NULL, NULL},
};
