/*
 * kmem_pin.c: holds kernel memory that no process maps, in one form at a
 * time, so the /proc monitor (which sums resident sets) cannot see it
 * (issue 23, point 1; docs/layers.md, "Memory the monitor cannot see").
 *
 *     kmem-pin FORM DIR [PROCS [TITLE]]
 *
 * With PROCS (1 to 16, default 1) as many processes pin FORM each (the
 * first forks the others, which report their counts to it); the ready
 * line holds the sums.
 *
 * FORM is one of
 *   sem     SysV semaphore sets of SEMMSL (32000) semaphores, 64 bytes of
 *           struct sem each (ipc/sem.c): 2000 KiB a set, 250 sets at most;
 *   mq      POSIX message queues of one 8 KiB message, filled;
 *   pipe    pipes grown with F_SETPIPE_SZ to 1 MiB (else their default
 *           64 KiB), filled, write end closed (one descriptor a pipe);
 *   socket  unix stream socket pairs, SO_SNDBUF raised to 4 MiB (else
 *           the default), the sender filled until EAGAIN and closed;
 *   inotify inotify watches on every file and directory under /usr, one
 *           instance;
 *   epoll   epoll watches: a quarter of the descriptors epoll instances,
 *           a quarter pipes kept open, and each (instance, pipe) pair
 *           added under every free descriptor number in turn (dup2,
 *           add, close: the watch outlives the descriptor), 600,000 at
 *           most;
 *   pte     page tables: one 4 KiB page of an unnamed file in /tmp mapped
 *           once every 2 MiB of a 64 GiB reserve and read (32,768
 *           mappings sharing one page: almost no proportional set),
 *           a 4 KiB page table each, 128 MiB (a read-only anonymous
 *           mapping read every 2 MiB did it with the zero page until
 *           kernels that map a fresh page on such a read);
 *   maps    memory maps (VMAs): one anonymous mapping of MAX_MAPS pages,
 *           PROT_NONE, of which every other page is then made PROT_READ
 *           (neighbours of unlike protection never merge): MAX_MAPS
 *           vm_area_structs, VMA_BYTES each, and no resident page;
 *   locks   byte-range (POSIX, F_SETLK) locks: LOCK_FILES files in /tmp,
 *           a write lock on every other byte of each (neighbouring locks
 *           of one owner merge), LOCKS_PER_FILE a file, FILE_LOCK_BYTES
 *           each (several files: the kernel inserts a lock in a list
 *           walk of the file's locks).
 * It pins as much as it can (until a call fails or its bound), then
 * writes DIR/kmem-ready: "FORM OBJECTS BYTES ERRNO" (BYTES the kernel
 * memory those objects hold by the sizes above, ERRNO the name of the
 * error that stopped it, "bound" at the program's own bound), and holds
 * everything until DIR/kmem-done exists, SIGUSR1 comes or 8 s pass,
 * then exits 0. With TITLE (an argument holding a ':'), the ready line
 * is also written over TITLE's bytes after its ':' ("ready FORM OBJECTS
 * BYTES ERRNO", cut to fit), where /proc/PID/cmdline shows it: under
 * stockade a job's files in /work are staged until it ends (issue 26),
 * so the host reads the line there and ends the hold by SIGUSR1.
 *
 * Expected status under stockade
 * (tests/launcher/supervisor/test_kmem.py): ok, with BYTES
 * within the form's bound in docs/layers.md (the calls refused, or the
 * per-namespace limits reached).
 *
 * Bound when run bare: at most 600 MiB of kernel memory by the counts
 * (250 semaphore sets of 2000 KiB; 512 MiB of pipes or socket buffers;
 * 128 MiB of page tables; 60,000 maps a process (16 x 60,000 x 220
 * bytes, 201 MiB); 80,000 locks a process of about 200 bytes (16 x
 * 80,000, 244 MiB);
 * 200,000 inotify watches of about 1 KiB; 600,000 epoll watches of about
 * 200 bytes) and 8 s; every object dies with the process (the sets and
 * queues are removed at exit).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MiB (1ul << 20)
#define MAX_BYTES (512ul * MiB)
#define SEMMSL 32000
#define SEM_SET_BYTES (SEMMSL * 64ul)
#define MAX_SETS 250
#define MAX_WATCHES 200000ul
#define MAX_EPOLL_WATCHES 600000ul
#define HOLD_SECONDS 8
#define MAX_MAPS 60000ul /* under vm.max_map_count, 65530 */
#define VMA_BYTES 220ul /* launcher/common/usage.h KOBJ_VMA_BYTES */
#define LOCK_FILES 100
#define LOCKS_PER_FILE 800ul
#define FILE_LOCK_BYTES 200ul /* launcher/common/usage.h KOBJ_LOCK_BYTES */

static unsigned long objects, bytes, max_bytes = MAX_BYTES;
static const char *why = "bound";
static int sems[MAX_SETS];
static char mq_names[256][32];

static void
stop(int err)
{
	why = strerrorname_np(err) != NULL ? strerrorname_np(err) : "E?";
}

static void
pin_sem(void)
{
	while (objects < MAX_SETS) {
		int id = semget(IPC_PRIVATE, SEMMSL, IPC_CREAT | 0600);

		if (id < 0) {
			stop(errno);
			return;
		}
		sems[objects++] = id;
		bytes += SEM_SET_BYTES;
	}
}

static void
pin_mq(void)
{
	struct mq_attr a = {.mq_maxmsg = 1, .mq_msgsize = 8192};
	static char msg[8192];

	while (objects < 256) {
		char *name = mq_names[objects];
		mqd_t q;

		snprintf(name, sizeof(mq_names[0]), "/kmem-%d-%lu",
		    (int)getpid(), objects);
		q = mq_open(name, O_CREAT | O_EXCL | O_WRONLY | O_NONBLOCK,
		    0600, &a);
		if (q == (mqd_t)-1) {
			stop(errno);
			return;
		}
		objects++;
		if (mq_send(q, msg, sizeof(msg), 0) == 0)
			bytes += sizeof(msg);
	}
}

/* Writes into FD (non-blocking) until it is full; returns the bytes. */
static unsigned long
fill(int fd)
{
	static char buf[65536];
	unsigned long n = 0;
	ssize_t w;

	while ((w = write(fd, buf, sizeof(buf))) > 0)
		n += (unsigned long)w;
	return n;
}

static void
pin_pipe(void)
{
	int p[2];

	while (bytes < max_bytes) {
		if (pipe2(p, O_NONBLOCK) < 0) {
			stop(errno);
			return;
		}
		(void)fcntl(p[1], F_SETPIPE_SZ, (int)MiB);
		bytes += fill(p[1]);
		close(p[1]);
		objects++;
	}
}

static void
pin_socket(void)
{
	int s[2], big = 4 * (int)MiB;

	while (bytes < max_bytes) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s) <
		    0) {
			stop(errno);
			return;
		}
		(void)setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &big,
		    sizeof(big));
		bytes += fill(s[0]);
		close(s[0]);
		objects++;
	}
}

/* Adds a watch on every entry under PATH (depth first). */
static void
watch_tree(int ino, const char *path, int depth)
{
	DIR *d;
	struct dirent *e;
	char sub[4096];

	if (objects >= MAX_WATCHES || depth > 12 || *why != 'b')
		return;
	if (inotify_add_watch(ino, path, IN_ACCESS | IN_DONT_FOLLOW) < 0) {
		if (errno == ENOSPC || errno == ENOMEM || errno == EPERM)
			stop(errno);
		return;
	}
	objects++;
	bytes += 1080; /* inotify(7): per watch on a 64-bit kernel */
	if ((d = opendir(path)) == NULL)
		return;
	while (
	    (e = readdir(d)) != NULL && objects < MAX_WATCHES && *why == 'b') {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (e->d_type == DT_DIR)
			watch_tree(ino, sub, depth + 1);
		else if (inotify_add_watch(ino, sub,
			     IN_ACCESS | IN_DONT_FOLLOW) >= 0) {
			objects++;
			bytes += 1080;
		} else if (errno == ENOSPC || errno == EPERM) {
			stop(errno);
		}
	}
	closedir(d);
}

static void
pin_inotify(void)
{
	int ino = inotify_init1(IN_CLOEXEC);

	if (ino < 0) {
		stop(errno);
		return;
	}
	watch_tree(ino, "/usr", 0);
}

/*
 * Epoll watches past the descriptors: a watch is keyed by (file,
 * descriptor number) and stays until the file's last descriptor closes
 * (epoll(7)), so each of NEP instances takes, for each of NF files kept
 * open, one watch per free descriptor number: dup2 there, add, close.
 */
static void
pin_epoll(void)
{
	struct rlimit rl;
	struct epoll_event ev = {.events = EPOLLIN};
	int p[2], nfd, nep, nf, eps[512], files[512], lo;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		stop(errno);
		return;
	}
	nfd = (int)(rl.rlim_cur > 1024 ? 1024 : rl.rlim_cur) - 8;
	nep = nf = nfd / 4;
	for (int i = 0; i < nf; i++) {
		if (pipe(p) < 0) {
			stop(errno);
			return;
		}
		close(p[1]);
		files[i] = p[0];
	}
	for (int i = 0; i < nep; i++)
		if ((eps[i] = epoll_create1(EPOLL_CLOEXEC)) < 0) {
			stop(errno);
			return;
		}
	lo = eps[nep - 1] + 1;
	for (int e = 0; e < nep; e++)
		for (int f = 0; f < nf; f++)
			for (int n = lo; n < nfd; n++) {
				if (objects >= MAX_EPOLL_WATCHES)
					return;
				if (dup2(files[f], n) < 0 ||
				    epoll_ctl(eps[e], EPOLL_CTL_ADD, n, &ev) <
					0) {
					stop(errno);
					return;
				}
				close(n);
				objects++;
				bytes +=
				    200; /* struct epitem and eppoll_entry */
			}
}

static void
pin_pte(void)
{
	const unsigned long span = 64ul << 30, step = 2 * MiB;
	volatile char sum = 0;
	int fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	char *base;

	if (fd < 0 || ftruncate(fd, 4096) < 0) {
		stop(errno);
		return;
	}
	base = mmap(NULL, span, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		stop(errno);
		return;
	}
	for (unsigned long o = 0; o < span; o += step) {
		char *p = mmap(base + o, 4096, PROT_READ,
		    MAP_SHARED | MAP_FIXED, fd, 0);

		if (p == MAP_FAILED) {
			stop(errno);
			return;
		}
		sum += *p;
		objects++;
		bytes += 4096;
	}
	(void)sum;
}

static void
pin_maps(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, MAX_MAPS * (unsigned long)page, PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		stop(errno);
		return;
	}
	objects = 1;
	bytes = VMA_BYTES;
	for (unsigned long i = 1; i + 1 < MAX_MAPS; i += 2) {
		if (mprotect(p + i * (unsigned long)page, (size_t)page,
			PROT_READ) < 0) {
			stop(errno);
			return;
		}
		/* One mapping split in three. */
		objects += 2;
		bytes += 2 * VMA_BYTES;
	}
}

static void
pin_locks(void)
{
	char path[64];

	for (int f = 0; f < LOCK_FILES; f++) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/kmem-lock-%d-%d",
		    (int)getpid(), f);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			stop(errno);
			return;
		}
		(void)unlink(path); /* the locks stay with the open file */
		for (unsigned long i = 0; i < LOCKS_PER_FILE; i++) {
			struct flock l = {.l_type = F_WRLCK,
			    .l_whence = SEEK_SET,
			    .l_start = (off_t)(2 * i),
			    .l_len = 1};

			if (fcntl(fd, F_SETLK, &l) < 0) {
				stop(errno);
				return;
			}
			objects++;
			bytes += FILE_LOCK_BYTES;
		}
	}
}

/* Pins FORM; returns 2 for an unknown form. */
static int
pin(const char *form)
{
	if (strcmp(form, "sem") == 0)
		pin_sem();
	else if (strcmp(form, "mq") == 0)
		pin_mq();
	else if (strcmp(form, "pipe") == 0)
		pin_pipe();
	else if (strcmp(form, "socket") == 0)
		pin_socket();
	else if (strcmp(form, "inotify") == 0)
		pin_inotify();
	else if (strcmp(form, "epoll") == 0)
		pin_epoll();
	else if (strcmp(form, "pte") == 0)
		pin_pte();
	else if (strcmp(form, "maps") == 0)
		pin_maps();
	else if (strcmp(form, "locks") == 0)
		pin_locks();
	else
		return 2;
	return 0;
}

/* Set by SIGUSR1: the hold ends. */
static volatile sig_atomic_t released;

static void
on_usr1(int sig)
{
	(void)sig;
	released = 1;
}

/* Waits until DONE exists, SIGUSR1 came or END passes. */
static void
hold(const char *done, time_t end)
{
	struct stat st;

	while (!released && stat(done, &st) < 0 && time(NULL) < end)
		usleep(20000);
}

/* Writes LINE over TITLE's bytes after its first ':', cut to fit and
 * padded with spaces (what /proc/PID/cmdline shows of the argument). */
static void
title_ready(char *title, const char *line)
{
	char *p = title != NULL ? strchr(title, ':') : NULL;
	size_t room, n;

	if (p == NULL)
		return;
	p++;
	room = strlen(p);
	n = strlen(line) < room ? strlen(line) : room;
	memset(p, ' ', room);
	memcpy(p, line, n);
}

/* Writes the ready line of FORM: DIR/kmem-ready (by a rename), stdout,
 * and over TITLE when not NULL. Returns 0, or -1 when the file fails. */
static int
say_ready(const char *form, const char *dir, char *title)
{
	char ready[4096], tmp[4096], line[256], said[300];
	FILE *f;

	snprintf(ready, sizeof(ready), "%s/kmem-ready", dir);
	snprintf(tmp, sizeof(tmp), "%s/kmem-ready.tmp", dir);
	if ((f = fopen(tmp, "w")) == NULL)
		return -1;
	snprintf(line, sizeof(line), "%s %lu %lu %s", form, objects, bytes,
	    why);
	fprintf(f, "%s\n", line);
	if (fclose(f) != 0 || rename(tmp, ready) < 0)
		return -1;
	printf("%s\n", line);
	fflush(stdout);
	snprintf(said, sizeof(said), "ready %s", line);
	title_ready(title, said);
	return 0;
}

int
main(int argc, char **argv)
{
	time_t end = time(NULL) + HOLD_SECONDS;
	char done[4096];
	int procs = argc >= 4 ? atoi(argv[3]) : 1, rep[2];
	pid_t kids[16];

	if (argc < 3 || argc > 5 || procs < 1 || procs > 16) {
		fprintf(stderr,
		    "usage: kmem-pin sem|mq|pipe|socket|inotify|"
		    "epoll|pte|maps|locks DIR [PROCS (1-16) [TITLE]]\n");
		return 2;
	}
	signal(SIGUSR1, on_usr1);
	max_bytes = MAX_BYTES / (unsigned long)procs; /* the bound bare */
	snprintf(done, sizeof(done), "%s/kmem-done", argv[2]);
	if (pipe(rep) < 0)
		return 3;
	/* PROCS - 1 children pin as much each and report to the parent. */
	for (int i = 1; i < procs; i++) {
		pid_t pid = fork();
		unsigned long r[2];

		if (pid < 0)
			return 3;
		if (pid > 0) {
			kids[i] = pid;
			continue;
		}
		close(rep[0]);
		if (pin(argv[1]) != 0)
			_exit(2);
		r[0] = objects;
		r[1] = bytes;
		if (write(rep[1], r, sizeof(r)) != sizeof(r))
			_exit(3);
		close(rep[1]);
		hold(done, end);
		_exit(0);
	}
	close(rep[1]);
	if (pin(argv[1]) != 0)
		return 2;
	for (int i = 1; i < procs; i++) {
		unsigned long r[2];

		if (read(rep[0], r, sizeof(r)) != sizeof(r))
			break;
		objects += r[0];
		bytes += r[1];
	}
	close(rep[0]);
	if (say_ready(argv[1], argv[2], argc == 5 ? argv[4] : NULL) < 0)
		return 3;
	hold(done, end);
	for (int i = 1; i < procs; i++)
		kill(kids[i], SIGUSR1);
	for (unsigned long i = 0; strcmp(argv[1], "sem") == 0 && i < objects;
	     i++)
		semctl(sems[i], 0, IPC_RMID);
	for (unsigned long i = 0; strcmp(argv[1], "mq") == 0 && i < objects;
	     i++)
		mq_unlink(mq_names[i]);
	while (wait(NULL) > 0)
		;
	return 0;
}
