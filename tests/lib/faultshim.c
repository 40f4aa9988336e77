/*
 * faultshim.c: an LD_PRELOAD library that injects faults into the calls
 * of one process (tests/system/test_faults_io.py drives it;
 * docs/reliability.md). A test tool, never installed.
 *
 * It acts only in the process that loaded it (the pid its constructor
 * saw): a fork (the broker's launcher spawner) passes every call through,
 * and an exec'ed program gets it only if its environment keeps
 * LD_PRELOAD (the broker gives the launcher two variables at most,
 * broker/jobs/spawner.c). It needs no system call after start-up but write(2)
 * on a descriptor its constructor opened, so a process that confines
 * itself later (seccomp, Landlock: broker/host/confine.c) is unaffected.
 *
 * Environment, read once by the constructor:
 *   FAULTSHIM_MODE    count (the default: only counts), malloc, or eintr.
 *   FAULTSHIM_N       malloc mode: the Nth allocation (malloc, calloc,
 *                     realloc, counted together from 1) fails with ENOMEM,
 *                     that one only.
 *   FAULTSHIM_K       eintr mode: every Kth call of each intercepted I/O
 *                     function (counted per function; the 1st, the K+1th,
 *                     ...: a function called once is hit too) returns -1
 *                     with errno EINTR without being made; K >= 2, so a
 *                     retry is made.
 *   FAULTSHIM_FUNCS   eintr mode: a comma-separated list of the
 *                     functions to inject into (default: every one).
 *   FAULTSHIM_AFTER   the name of an intercepted I/O function (e.g.
 *                     ppoll): nothing is counted or injected before its
 *                     first call, so that start-up is left alone.
 *   FAULTSHIM_TRACE   1: print a backtrace where a fault is injected
 *                     (malloc mode), as for a crash (below).
 *   FAULTSHIM_REPORT  a file written at exit: one line per function,
 *                     "NAME CALLS INJECTED", and "armed 0|1".
 *
 * A crash (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) prints a backtrace
 * to standard error first (backtrace_symbols_fd: "binary(+0xOFFSET)",
 * for addr2line -e binary OFFSET), then dies of the same signal.
 *
 * The allocations are glibc's (__libc_malloc and friends, which glibc
 * exports for this; free is not replaced), so memory from either side
 * frees alike ("Replacing malloc", glibc manual). The I/O functions are
 * found with dlsym(RTLD_NEXT).
 */
/* Its wrappers are the functions themselves, under their own names: no
 * fortified inline copies, no open -> open64 redirection (the *64 and
 * __*_chk names a program imports are wrapped one by one below). */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

enum fn {
	F_MALLOC,
	F_CALLOC,
	F_REALLOC,
	F_READ,
	F_WRITE,
	F_PREAD,
	F_PWRITE,
	F_RECVMSG,
	F_SENDMSG,
	F_RECV,
	F_SEND,
	F_POLL,
	F_PPOLL,
	F_ACCEPT4,
	F_WAITID,
	F_WAITPID,
	F_OPEN,
	F_OPENAT,
	F_COPY_FILE_RANGE,
	F_SENDFILE,
	F_SPLICE,
	F_OPEN64,
	F_OPENAT64,
	F_PREAD64,
	F_PWRITE64,
	F_SENDFILE64,
	F_READ_CHK,
	F_PREAD64_CHK,
	F_COUNT
};

static const char *const fn_names[F_COUNT] = {
    "malloc",
    "calloc",
    "realloc",
    "read",
    "write",
    "pread",
    "pwrite",
    "recvmsg",
    "sendmsg",
    "recv",
    "send",
    "poll",
    "ppoll",
    "accept4",
    "waitid",
    "waitpid",
    "open",
    "openat",
    "copy_file_range",
    "sendfile",
    "splice",
    "open64",
    "openat64",
    "pread64",
    "pwrite64",
    "sendfile64",
    "__read_chk",
    "__pread64_chk",
};

enum mode { M_OFF, M_COUNT, M_MALLOC, M_EINTR };

static enum mode mode = M_OFF;
static pid_t self_pid;
static long fail_n; /* malloc mode */
static long every_k; /* eintr mode */
static int after_fn = -1; /* FAULTSHIM_AFTER, or -1 */
static bool chosen[F_COUNT]; /* FAULTSHIM_FUNCS */
static bool trace; /* FAULTSHIM_TRACE */
static atomic_bool armed;
static atomic_long allocs; /* allocations since armed */
static atomic_long calls[F_COUNT];
static atomic_long injected[F_COUNT];
static int report_fd = -1;
/* The real functions, by their enum fn (dlsym's void * kept as a
 * function pointer: POSIX dlsym(3) allows the conversion). */
static void (*real[F_COUNT])(void);

/* Whether this call of F is counted: the shim is on, in its own process,
 * and armed (FAULTSHIM_AFTER seen). */
static bool
active(enum fn f)
{
	if (mode == M_OFF || getpid() != self_pid)
		return false;
	if (!atomic_load(&armed)) {
		if ((int)f != after_fn)
			return false;
		atomic_store(&armed, true);
	}
	return true;
}

/* Counts an allocation; returns true when it is the one to fail. */
static bool
alloc_fails(enum fn f)
{
	long n;

	if (!active(f))
		return false;
	atomic_fetch_add(&calls[f], 1);
	n = atomic_fetch_add(&allocs, 1) + 1;
	if (mode != M_MALLOC || n != fail_n)
		return false;
	atomic_fetch_add(&injected[f], 1);
	if (trace) {
		void *frames[64];

		backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
	}
	return true;
}

/* Counts an I/O call; returns true when it is to fail with EINTR. */
static bool
io_fails(enum fn f)
{
	long n;

	if (!active(f))
		return false;
	n = atomic_fetch_add(&calls[f], 1) + 1;
	if (mode != M_EINTR || !chosen[f] || (n - 1) % every_k != 0)
		return false;
	atomic_fetch_add(&injected[f], 1);
	errno = EINTR;
	return true;
}

void *
malloc(size_t size)
{
	if (alloc_fails(F_MALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(size);
}

void *
calloc(size_t n, size_t size)
{
	if (alloc_fails(F_CALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}

void *
realloc(void *p, size_t size)
{
	/* realloc(p, 0) frees: not an allocation that can fail. */
	if (size != 0 && alloc_fails(F_REALLOC)) {
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, size);
}

/* The I/O wrappers: one line each, the real function from dlsym. */
#define REAL(f, type) ((type)real[f])
#define WRAP(ret, name, f, params, args)            \
	ret name params                             \
	{                                           \
		if (io_fails(f))                    \
			return -1;                  \
		return REAL(f, ret(*) params) args; \
	}

WRAP(ssize_t, read, F_READ, (int fd, void *b, size_t n), (fd, b, n))
WRAP(ssize_t, write, F_WRITE, (int fd, const void *b, size_t n), (fd, b, n))
WRAP(ssize_t, pread, F_PREAD, (int fd, void *b, size_t n, off_t o),
    (fd, b, n, o))
WRAP(ssize_t, pwrite, F_PWRITE, (int fd, const void *b, size_t n, off_t o),
    (fd, b, n, o))
WRAP(ssize_t, recvmsg, F_RECVMSG, (int fd, struct msghdr *m, int fl),
    (fd, m, fl))
WRAP(ssize_t, sendmsg, F_SENDMSG, (int fd, const struct msghdr *m, int fl),
    (fd, m, fl))
WRAP(ssize_t, recv, F_RECV, (int fd, void *b, size_t n, int fl), (fd, b, n, fl))
WRAP(ssize_t, send, F_SEND, (int fd, const void *b, size_t n, int fl),
    (fd, b, n, fl))
WRAP(int, poll, F_POLL, (struct pollfd * p, nfds_t n, int t), (p, n, t))
WRAP(int, ppoll, F_PPOLL,
    (struct pollfd * p, nfds_t n, const struct timespec *t, const sigset_t *s),
    (p, n, t, s))
WRAP(int, accept4, F_ACCEPT4, (int fd, __SOCKADDR_ARG a, socklen_t *l, int fl),
    (fd, a, l, fl))
WRAP(int, waitid, F_WAITID, (idtype_t t, id_t id, siginfo_t *i, int o),
    (t, id, i, o))
WRAP(pid_t, waitpid, F_WAITPID, (pid_t p, int *s, int o), (p, s, o))
WRAP(ssize_t, copy_file_range, F_COPY_FILE_RANGE,
    (int i, off_t *io, int o, off_t *oo, size_t n, unsigned fl),
    (i, io, o, oo, n, fl))
WRAP(ssize_t, sendfile, F_SENDFILE, (int o, int i, off_t *off, size_t n),
    (o, i, off, n))
WRAP(ssize_t, splice, F_SPLICE,
    (int i, off_t *io, int o, off_t *oo, size_t n, unsigned fl),
    (i, io, o, oo, n, fl))
WRAP(ssize_t, pread64, F_PREAD64, (int fd, void *b, size_t n, off64_t o),
    (fd, b, n, o))
WRAP(ssize_t, pwrite64, F_PWRITE64,
    (int fd, const void *b, size_t n, off64_t o), (fd, b, n, o))
WRAP(ssize_t, sendfile64, F_SENDFILE64, (int o, int i, off64_t *off, size_t n),
    (o, i, off, n))

/* What _FORTIFY_SOURCE makes of read and pread (glibc's debug/). */
ssize_t __read_chk(int, void *, size_t, size_t);
ssize_t __pread64_chk(int, void *, size_t, off64_t, size_t);
WRAP(ssize_t, __read_chk, F_READ_CHK, (int fd, void *b, size_t n, size_t bl),
    (fd, b, n, bl))
WRAP(ssize_t, __pread64_chk, F_PREAD64_CHK,
    (int fd, void *b, size_t n, off64_t o, size_t bl), (fd, b, n, o, bl))

/* open, openat and their *64 names: the mode is there only with O_CREAT
 * or O_TMPFILE. */
#define WRAP_OPEN(name, f, params, args)                      \
	int name params                                       \
	{                                                     \
		mode_t m = 0;                                 \
		va_list ap;                                   \
                                                              \
		if (flags & (O_CREAT | O_TMPFILE)) {          \
			va_start(ap, flags);                  \
			m = (mode_t)va_arg(ap, unsigned int); \
			va_end(ap);                           \
		}                                             \
		if (io_fails(f))                              \
			return -1;                            \
		return REAL(f, int(*) params) args;           \
	}

WRAP_OPEN(open, F_OPEN, (const char *path, int flags, ...), (path, flags, m))
WRAP_OPEN(open64, F_OPEN64, (const char *path, int flags, ...),
    (path, flags, m))
WRAP_OPEN(openat, F_OPENAT, (int dirfd, const char *path, int flags, ...),
    (dirfd, path, flags, m))
WRAP_OPEN(openat64, F_OPENAT64, (int dirfd, const char *path, int flags, ...),
    (dirfd, path, flags, m))

/* Prints a backtrace on standard error, then dies of SIG (SA_RESETHAND
 * put the default action back). Async-signal-safe once backtrace() has
 * been called once (the constructor: it loads libgcc_s). */
static void
on_crash(int sig)
{
	void *frames[64];
	char line[64];
	int n = snprintf(line, sizeof(line), "faultshim: signal %d\n", sig);

	(void)!((ssize_t(*)(int, const void *, size_t))real[F_WRITE])(2, line,
	    (size_t)n);
	backtrace_symbols_fd(frames, backtrace(frames, 64), 2);
	raise(sig);
}

static void
catch_crashes(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
	struct sigaction sa = {.sa_handler = on_crash,
	    .sa_flags = SA_RESETHAND | SA_NODEFER};
	void *frame;

	(void)backtrace(&frame, 1);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		(void)sigaction(sigs[i], &sa, NULL);
}

/* Reads FAULTSHIM_FUNCS into chosen[]; 0, or -1 for an unknown name. */
static int
choose(const char *list)
{
	char name[32];
	size_t len;

	for (int f = 0; f < F_COUNT; f++)
		chosen[f] = list == NULL || *list == '\0';
	while (list != NULL && *list != '\0') {
		int found = -1;

		len = strcspn(list, ",");
		if (len >= sizeof(name))
			return -1;
		memcpy(name, list, len);
		name[len] = '\0';
		for (int f = 0; f < F_COUNT; f++)
			if (strcmp(name, fn_names[f]) == 0)
				found = f;
		if (found < 0)
			return -1;
		chosen[found] = true;
		list += len + (list[len] == ',');
	}
	return 0;
}

static long
env_long(const char *name, long dflt)
{
	const char *s = getenv(name);

	return s != NULL && *s != '\0' ? strtol(s, NULL, 10) : dflt;
}

__attribute__((constructor)) static void
faultshim_init(void)
{
	const char *m = getenv("FAULTSHIM_MODE");
	const char *after = getenv("FAULTSHIM_AFTER");
	const char *report = getenv("FAULTSHIM_REPORT");

	for (int f = F_READ; f < F_COUNT; f++) {
		void *p = dlsym(RTLD_NEXT, fn_names[f]);

		memcpy(&real[f], &p, sizeof(p));
	}
	self_pid = getpid();
	catch_crashes();
	if (report != NULL && *report != '\0')
		report_fd = ((
		    int (*)(const char *, int, ...))real[F_OPEN])(report,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (choose(getenv("FAULTSHIM_FUNCS")) < 0) {
		fprintf(stderr,
		    "faultshim: FAULTSHIM_FUNCS: an unknown name\n");
		_exit(125);
	}
	fail_n = env_long("FAULTSHIM_N", 0);
	trace = env_long("FAULTSHIM_TRACE", 0) == 1;
	every_k = env_long("FAULTSHIM_K", 0);
	if (after != NULL && *after != '\0') {
		for (int f = F_READ; f < F_COUNT; f++)
			if (strcmp(after, fn_names[f]) == 0)
				after_fn = f;
		if (after_fn < 0) {
			fprintf(stderr,
			    "faultshim: FAULTSHIM_AFTER=%s: not an "
			    "intercepted function\n",
			    after);
			_exit(125);
		}
	} else {
		atomic_store(&armed, true);
	}
	if (m == NULL || strcmp(m, "count") == 0) {
		mode = M_COUNT;
	} else if (strcmp(m, "malloc") == 0 && fail_n >= 1) {
		mode = M_MALLOC;
	} else if (strcmp(m, "eintr") == 0 && every_k >= 2) {
		mode = M_EINTR;
	} else {
		fprintf(stderr,
		    "faultshim: FAULTSHIM_MODE=%s needs FAULTSHIM_N "
		    ">= 1 (malloc) or FAULTSHIM_K >= 2 (eintr)\n",
		    m);
		_exit(125);
	}
}

/* Writes the report with write(2) only (no allocation, no new file). */
__attribute__((destructor)) static void
faultshim_report(void)
{
	char line[96];
	int n;

	if (report_fd < 0 || getpid() != self_pid)
		return;
	mode = M_OFF; /* the report's own calls are not counted */
	for (int f = 0; f < F_COUNT; f++) {
		n = snprintf(line, sizeof(line), "%s %ld %ld\n", fn_names[f],
		    atomic_load(&calls[f]), atomic_load(&injected[f]));
		(void)!((ssize_t(*)(int, const void *,
		    size_t))real[F_WRITE])(report_fd, line, (size_t)n);
	}
	n = snprintf(line, sizeof(line), "armed %d\n",
	    (int)atomic_load(&armed));
	(void)!((ssize_t(*)(int, const void *, size_t))real[F_WRITE])(report_fd,
	    line, (size_t)n);
}
