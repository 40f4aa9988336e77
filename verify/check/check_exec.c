/*
 * check_exec.c: starting a program of the checks with a deadline
 * (check.h, check_exec): its output drained into memory, its input
 * written, its process group killed at the deadline or when we are
 * interrupted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define KEEP_MAX (4u << 20) /* a program's stdout or stderr kept, bytes */

/* Appends what FD has now to *BUF (kept up to KEEP_MAX); closes it and
 * sets *FD -1 at its end. */
static void
drain(int *fd, char **buf, size_t *len, size_t *cap)
{
	char chunk[65536];
	ssize_t n;

	for (;;) {
		n = read(*fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(*fd);
			*fd = -1;
			return;
		}
		if (*len + (size_t)n + 1 > *cap && *len < KEEP_MAX) {
			size_t ncap = (*len + (size_t)n + 1) * 2;
			char *nb = realloc(*buf, ncap);

			if (nb != NULL) {
				*buf = nb;
				*cap = ncap;
			}
		}
		if (*len + (size_t)n + 1 <= *cap) {
			memcpy(*buf + *len, chunk, (size_t)n);
			*len += (size_t)n;
			(*buf)[*len] = '\0';
		}
	}
}

void
check_spawnattr_init(posix_spawnattr_t *at)
{
	sigset_t none, all;

	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(at);
	posix_spawnattr_setpgroup(at, 0);
	posix_spawnattr_setsigmask(at, &none);
	posix_spawnattr_setsigdefault(at, &all);
	posix_spawnattr_setflags(at,
	    POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
		POSIX_SPAWN_SETSIGDEF);
}

int
check_exec(struct check_ctx *c, const char *const argv[],
    const char *const extra_env[], const void *input, size_t len,
    int64_t deadline_ms, struct check_proc *p)
{
	return check_exec_interrupt(c, argv, extra_env, input, len, deadline_ms,
	    NULL, p);
}

/*
 * The environment of a check's program: C->envp then EXTRA_ENV (may be
 * NULL), borrowed strings in a new array (the caller frees the array
 * only). NULL on ENOMEM.
 */
static char **
exec_env(const struct check_ctx *c, const char *const extra_env[])
{
	char **envp;
	size_t n = 0, m = 0;

	while (c->envp[n] != NULL)
		n++;
	while (extra_env != NULL && extra_env[m] != NULL)
		m++;
	envp = calloc(n + m + 1, sizeof(*envp));
	if (envp == NULL)
		return NULL;
	memcpy(envp, c->envp, n * sizeof(*envp));
	for (size_t i = 0; i < m; i++)
		envp[n + i] = check_unconst(extra_env[i]);
	return envp;
}

/*
 * Starts ARGV with ENVP in a process group of its own (killed whole at
 * the deadline), its stdout and stderr the pipes OUT and ERR and its
 * stdin the pipe IN when INPUT (else /dev/null). The pipes are made
 * here, our ends non-blocking; on return the child's ends are closed
 * (set to -1) and the caller closes the rest, also on failure. Returns
 * 0 with *PID, or a negative errno.
 */
static int
exec_spawn(const char *const argv[], char **envp, bool input, int out[2],
    int err[2], int in[2], pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char *args[260];
	size_t k = 0;
	int e;

	/* Only our ends are non-blocking: the child's stdout must block
	 * when the pipe is full, not fail with EAGAIN. */
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    (input && pipe2(in, O_CLOEXEC) < 0) ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(err[0], F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	if (input)
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
		    0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	/* A group of its own, killed whole at the deadline. */
	check_spawnattr_init(&at);
	for (; argv[k] != NULL && k < 259; k++)
		args[k] = check_unconst(argv[k]);
	args[k] = NULL;
	e = posix_spawn(pid, argv[0], &fa, &at, args, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e != 0)
		return -e;
	close(out[1]);
	close(err[1]);
	out[1] = err[1] = -1;
	if (input) {
		close(in[0]);
		in[0] = -1;
	}
	return 0;
}

/* Whether ARGV0 (NUL-terminated) is a stockade program: "stockade" or a
 * path ending in "/stockade". */
static bool
is_stockade(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	return strcmp(base != NULL ? base + 1 : argv0, "stockade") == 0;
}

bool
check_marked_process(const char *mark)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool found = false;

	while (d != NULL && !found && (e = readdir(d)) != NULL) {
		char path[300], buf[4096];
		ssize_t n;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		/* Not stockade itself (broker, spawner, reaper), whose
		 * command line names the job's: the job's own processes. */
		if (n > 0 && is_stockade(buf))
			continue;
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		buf[n > 0 ? n : 0] = '\0';
		found = strstr(buf, mark) != NULL;
	}
	if (d != NULL)
		closedir(d);
	return found;
}

/*
 * While PID's stdout or stderr (OUT[0], ERR[0]) is open: both drained
 * into P, INPUT's LEN bytes written to IN[1] (closed when all is sent;
 * -1: none), SIGINT sent once a process shows the mark INTERRUPT_ON
 * (check_marked_process; NULL: never), and
 * the group killed at DEADLINE (check_now_ms) or on a signal to us
 * (P->timed_out).
 */
static void
exec_pump(pid_t pid, struct check_proc *p, int out[2], int err[2], int in[2],
    const void *input, size_t len, int64_t deadline, const char *interrupt_on)
{
	bool interrupted = interrupt_on == NULL;
	size_t outcap = 1, errcap = 1, sent = 0;

	while (out[0] >= 0 || err[0] >= 0) {
		struct pollfd pfd[3] = {{out[0], POLLIN, 0},
		    {err[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
		int64_t left = deadline - check_now_ms();

		if (left <= 0 || check_interrupted) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			p->timed_out = true;
			break;
		}
		if (!interrupted && check_marked_process(interrupt_on)) {
			kill(pid, SIGINT);
			interrupted = p->interrupt_sent = true;
		}
		/* Looking for INTERRUPT_ON: every 20 ms. */
		if (!interrupted && left > 20)
			left = 20;
		if (poll(pfd, 3, (int)(left > 1000 ? 1000 : left)) < 0 &&
		    errno != EINTR)
			break;
		if (pfd[0].revents != 0)
			drain(&out[0], &p->out, &p->outlen, &outcap);
		if (pfd[1].revents != 0)
			drain(&err[0], &p->err, &p->errlen, &errcap);
		if (in[1] >= 0 && pfd[2].revents != 0) {
			ssize_t w = write(in[1], (const char *)input + sent,
			    len - sent);

			if (w > 0)
				sent += (size_t)w;
			if ((w < 0 && errno != EAGAIN) || sent == len) {
				close(in[1]);
				in[1] = -1;
			}
		}
	}
}

/*
 * PID reaped once its output is closed: it has ended or is about to;
 * past DEADLINE (check_now_ms) or on a signal to us it is killed, the
 * whole group (what it left behind), and P->timed_out set. P->status
 * gets its exit status, or 128 + its signal.
 */
static void
exec_reap(pid_t pid, int64_t deadline, struct check_proc *p)
{
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			st = 0;
			break;
		}
		if (check_now_ms() >= deadline || check_interrupted) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			p->timed_out = true;
			waitpid(pid, &st, 0);
			break;
		}
		usleep(2000);
	}
	p->status = WIFEXITED(st) ? WEXITSTATUS(st)
				  : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

int
check_exec_interrupt(struct check_ctx *c, const char *const argv[],
    const char *const extra_env[], const void *input, size_t len,
    int64_t deadline_ms, const char *interrupt_on, struct check_proc *p)
{
	char **envp;
	int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
	int64_t start = check_now_ms(), deadline;
	pid_t pid;
	int e;

	memset(p, 0, sizeof(*p));
	p->status = -1;
	p->out = calloc(1, 1);
	p->err = calloc(1, 1);
	envp = exec_env(c, extra_env);
	if (p->out == NULL || p->err == NULL || envp == NULL) {
		free(envp);
		return -ENOMEM;
	}
	if ((e = exec_spawn(argv, envp, input != NULL, out, err, in, &pid)) < 0)
		goto fail;
	if (input != NULL) {
		fcntl(in[1], F_SETFL, O_NONBLOCK);
		if (len == 0) {
			close(in[1]);
			in[1] = -1;
		}
	}
	deadline = start + (deadline_ms > 0 ? deadline_ms : 30000);
	exec_pump(pid, p, out, err, in, input, len, deadline, interrupt_on);
	exec_reap(pid, deadline, p);
	e = 0;
fail:
	p->elapsed_ms = check_now_ms() - start;
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
		if (in[i] >= 0)
			close(in[i]);
	}
	free(envp);
	return e;
}

void
check_proc_free(struct check_proc *p)
{
	free(p->out);
	free(p->err);
	p->out = p->err = NULL;
}
