/*
 * probe_process.c: stockade-probe's commands for the checks of the
 * layers that shape and hold the job's process (verify/check/check_process.c,
 * check_limits.c, check_privs.c): its limits, environment, working
 * directory, session and descriptors, credentials, and the few attempts
 * (a write, a bind, a connect, a signal, an ioctl) that tell whether
 * Landlock holds.
 *
 * Every attempt is harmless whatever the jail does: the write to
 * /proc/self/comm writes this process's own name back, the bind is to an
 * ephemeral loopback port, the connect to the jail's own loopback, the
 * signal is signal 0, the ioctl only reads. The one process this probe
 * leaves behind (`leftover`) ends by itself within about 2 s.
 *
 * The commands of the limits checks (rlimits, kmem, userquotas) are in
 * probe_limits.c (probe_limits.h); their entries stay in this file's
 * table.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "probe_limits.h"

/* The leftover's heartbeat: one beat every LEFTOVER_BEAT_MS, at most
 * LEFTOVER_BEATS, so that one a defective jail lets live ends by itself. */
#define LEFTOVER_FILE "stockade-probe-beat"
#define LEFTOVER_BEAT_MS 10
#define LEFTOVER_BEATS 200

extern char **environ;

/* The number of entries of directory PATH but . and .., or -errno. */
static long
count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	long n = 0;

	if (d == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* status: the lines of /proc/self/status that say how the process is
 * held (capabilities, no_new_privs, seccomp), as "status.Name=value". */
static int
cmd_status(int argc, char **argv)
{
	char line[512], key[600];
	FILE *f = fopen("/proc/self/status", "re");

	if (f == NULL) {
		probe_errno("status", errno);
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');
		char *v;

		if (colon == NULL)
			continue;
		*colon = '\0';
		v = colon + 1;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		snprintf(key, sizeof(key), "status.%s", line);
		probe_kv(key, "%s", v);
	}
	fclose(f);
	return 0;
}

/* env: "env.count=N", "env.names=A,B,..." in order, and "env.NAME=value"
 * for each variable of the environment. */
static int
cmd_env(int argc, char **argv)
{
	char names[8192] = "", key[300];
	size_t n = 0;

	for (char **e = environ; e != NULL && *e != NULL; e++, n++) {
		const char *eq = strchr(*e, '=');
		size_t nl = eq != NULL ? (size_t)(eq - *e) : strlen(*e);
		size_t l = strlen(names);

		if (nl > 255)
			nl = 255;
		snprintf(names + l, sizeof(names) - l, "%s%.*s",
		    n > 0 ? "," : "", (int)nl, *e);
		snprintf(key, sizeof(key), "env.%.*s", (int)nl, *e);
		probe_kv(key, "%s", eq != NULL ? eq + 1 : "");
	}
	probe_kv("env.count", "%zu", n);
	probe_kv("env.names", "%s", names);
	return 0;
}

/* Prints KEY.fs=<f_type in hex> and KEY.bytes=<size> of PATH. */
static void
fs_of(const char *key, const char *path)
{
	struct statfs sf;
	char k[64];

	snprintf(k, sizeof(k), "%s.fs", key);
	if (path == NULL || statfs(path, &sf) < 0) {
		probe_errno(k, path == NULL ? ENOENT : errno);
		return;
	}
	probe_kv(k, "0x%lx", (unsigned long)sf.f_type);
	snprintf(k, sizeof(k), "%s.bytes", key);
	probe_kv(k, "%llu",
	    (unsigned long long)sf.f_blocks * (unsigned long long)sf.f_bsize);
}

/* cwd: the working directory (getcwd, and whether it is /work itself),
 * HOME and TMPDIR, the file systems of /tmp, HOME and /dev/shm and how
 * many entries /tmp holds. */
static int
cmd_cwd(int argc, char **argv)
{
	char cwd[4096];
	struct stat here, work;
	const char *home = getenv("HOME"), *tmpdir = getenv("TMPDIR");
	long n;

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		probe_errno("cwd", errno);
	else
		probe_kv("cwd", "%s", cwd);
	if (stat(".", &here) < 0 || stat("/work", &work) < 0)
		probe_errno("cwd.is_work", errno);
	else
		probe_kv("cwd.is_work", "%d",
		    here.st_dev == work.st_dev && here.st_ino == work.st_ino);
	probe_kv("home", "%s", home != NULL ? home : "(unset)");
	probe_kv("tmpdir", "%s", tmpdir != NULL ? tmpdir : "(unset)");
	fs_of("tmp", "/tmp");
	fs_of("homedir", home);
	fs_of("shm", "/dev/shm");
	fs_of("root", "/");
	n = count_entries("/tmp");
	if (n < 0)
		probe_errno("tmp.entries", (int)-n);
	else
		probe_kv("tmp.entries", "%ld", n);
	return 0;
}

/* What descriptor FD is: "chr MAJ:MIN", "fifo", "sock", "reg", "dir" or
 * the errno name. */
static void
fd_kind(const char *key, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		probe_errno(key, errno);
	else if (S_ISCHR(st.st_mode))
		probe_kv(key, "chr %u:%u", major(st.st_rdev),
		    minor(st.st_rdev));
	else
		probe_kv(key, "%s",
		    S_ISFIFO(st.st_mode)       ? "fifo"
			: S_ISSOCK(st.st_mode) ? "sock"
			: S_ISREG(st.st_mode)  ? "reg"
			: S_ISDIR(st.st_mode)  ? "dir"
					       : "other");
}

/* session: the session and terminal: pid, session id, process group,
 * the controlling terminal of /proc/self/stat (tty_nr, proc(5)), what
 * descriptors 0, 1 and 2 are, whether 0 answers TIOCGPGRP, and every
 * open descriptor ("fds=0,1,2", the listing's own left out). */
static int
cmd_session(int argc, char **argv)
{
	char buf[1024], list[1024] = "";
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	DIR *d;
	struct dirent *de;
	pid_t pg;

	if (fd >= 0)
		close(fd);
	probe_kv("pid", "%d", (int)getpid());
	probe_kv("sid", "%d", (int)getsid(0));
	probe_kv("pgrp", "%d", (int)getpgrp());
	if (n > 0) {
		/* After "pid (comm) ": state ppid pgrp session tty_nr. */
		char *p;
		int ppid, pgrp, sess, tty;
		char state;

		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (p != NULL &&
		    sscanf(p + 1, " %c %d %d %d %d", &state, &ppid, &pgrp,
			&sess, &tty) == 5)
			probe_kv("tty_nr", "%d", tty);
	}
	fd_kind("fd0", 0);
	fd_kind("fd1", 1);
	fd_kind("fd2", 2);
	probe_errno("tiocgpgrp", ioctl(0, TIOCGPGRP, &pg) < 0 ? errno : 0);
	d = opendir("/proc/self/fd");
	if (d == NULL) {
		probe_errno("fds", errno);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(list);

		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		snprintf(list + l, sizeof(list) - l, "%s%s", l > 0 ? "," : "",
		    de->d_name);
	}
	closedir(d);
	probe_kv("fds", "%s", list);
	return 0;
}

/* caps: the securebits (prctl PR_GET_SECUREBITS) and the answer to
 * raising CAP_CHOWN into the ambient set. */
static int
cmd_caps(int argc, char **argv)
{
	int bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);

	if (bits < 0)
		probe_errno("securebits", errno);
	else
		probe_kv("securebits", "0x%x", (unsigned)bits);
	probe_errno("ambient_raise",
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, 0 /* CHOWN */, 0, 0) < 0
		? errno
		: 0);
	probe_kv("no_new_privs", "%d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	return 0;
}

/* landlock: what Landlock refuses and the mount layer alone would allow:
 * writing this process's own name into /proc/self/comm (/proc is a
 * read-write procfs, Landlock grants it read), a TCP bind to an
 * ephemeral port on 127.0.0.1 and a TCP connect to 127.0.0.1:9 (no
 * network rule), signal 0 to init (not
 * in the payload's domain, LANDLOCK_SCOPE_SIGNAL) and a terminal ioctl on
 * /dev/null (LANDLOCK_ACCESS_FS_IOCTL_DEV not granted). Each prints its
 * errno name, "ok" when it succeeded. */
static int
cmd_landlock(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct winsize ws;
	char name[32] = "";
	int fd, s, r;

	prctl(PR_GET_NAME, name, 0, 0, 0);
	fd = open("/proc/self/comm", O_WRONLY | O_CLOEXEC);
	r = fd < 0 ? errno : 0;
	if (fd >= 0) {
		(void)!write(fd, name, strlen(name));
		close(fd);
	}
	probe_errno("proc_comm_write", r);

	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		probe_kv("tcp_bind", "socket:%s", probe_errname(errno));
	} else {
		probe_errno("tcp_bind",
		    bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno : 0);
		close(s);
	}

	/* Port 9, where nothing listens: without Landlock, ECONNREFUSED. */
	a.sin_port = htons(9);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		probe_kv("tcp_connect", "socket:%s", probe_errname(errno));
	} else {
		probe_errno("tcp_connect",
		    connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 ? errno
								     : 0);
		close(s);
	}

	probe_errno("signal_init", kill(1, 0) < 0 ? errno : 0);

	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		probe_kv("dev_ioctl", "open:%s", probe_errname(errno));
	} else {
		probe_errno("dev_ioctl",
		    ioctl(fd, TIOCGWINSZ, &ws) < 0 ? errno : 0);
		close(fd);
	}
	return 0;
}

/* The leftover itself: its own session, no standard streams of the job,
 * deaf to the signals a polite stop sends, beating into LEFTOVER_FILE. */
static _Noreturn void
leftover_beat(void)
{
	const struct timespec pause = {0, LEFTOVER_BEAT_MS * 1000000L};
	int null = open("/dev/null", O_RDWR), fd;

	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPWR, SIG_IGN);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	fd = open(LEFTOVER_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		_exit(1);
	for (unsigned n = 1; n <= LEFTOVER_BEATS; n++) {
		char b[16];
		int l = snprintf(b, sizeof(b), "%010u", n);

		(void)!pwrite(fd, b, (size_t)l, 0);
		nanosleep(&pause, NULL);
	}
	_exit(0);
}

/* leftover [wait]: leaves a process behind the way a daemon does (a
 * child that calls setsid and forks again, so the leftover's parent is
 * gone and it is in no group or session of the job), which writes a
 * counter into ./stockade-probe-beat every 10 ms for about 2 s. Returns
 * once the first beat is there ("leftover.started=1"; 0 when none came
 * within 1 s), or with "wait" stays until it is killed (a job that ends
 * by its timeout), 3 s at most. */
static int
cmd_leftover(int argc, char **argv)
{
	bool wait = argc > 1 && strcmp(argv[1], "wait") == 0;
	long long until = probe_now_ms() + 1000;
	struct stat st;
	pid_t p;

	unlink(LEFTOVER_FILE);
	p = fork();
	if (p < 0) {
		probe_errno("leftover.started", errno);
		return 0;
	}
	if (p == 0) {
		setsid();
		if (fork() == 0)
			leftover_beat();
		_exit(0);
	}
	waitpid(p, NULL, 0);
	while (!(stat(LEFTOVER_FILE, &st) == 0 && st.st_size > 0) &&
	    probe_now_ms() < until)
		usleep(2000);
	probe_kv("leftover.started", "%d", st.st_size > 0);
	/* Bounded too: a jail that never ends the job costs seconds. */
	for (until = probe_now_ms() + 3000; wait && probe_now_ms() < until;)
		usleep(10000);
	return 0;
}

const struct probe_cmd probe_process_cmds[] = {
    {"status", "status.NAME=value for each line of /proc/self/status",
	cmd_status},
    {"rlimits", "rlimit.NAME=soft hard for each resource", limits_cmd_rlimits},
    {"userquotas",
	"userquota.NAME=value for /proc/sys/user/NAME, "
	"rlimit.SIGPENDING",
	limits_cmd_userquotas},
    {"env", "env.count, env.names, env.NAME=value", cmd_env},
    {"cwd",
	"cwd, cwd.is_work, home, tmpdir, tmp/homedir/shm/root .fs "
	".bytes, tmp.entries",
	cmd_cwd},
    {"session", "pid, sid, pgrp, tty_nr, fd0..fd2, tiocgpgrp, fds",
	cmd_session},
    {"caps", "securebits, ambient_raise, no_new_privs", cmd_caps},
    {"landlock",
	"proc_comm_write, tcp_bind, tcp_connect, signal_init, "
	"dev_ioctl (errno names)",
	cmd_landlock},
    {"kmem",
	"kmem.semget, setpipe_sz, so_sndbuf, so_rcvbuf (errno "
	"names), kmem.inotify_watches",
	limits_cmd_kmem},
    {"leftover",
	"[wait]: leaves a process beating into "
	"./stockade-probe-beat for 2 s; leftover.started=1",
	cmd_leftover},
    {NULL, NULL, NULL},
};
