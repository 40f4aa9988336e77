/*
 * check_util.c: what every check of `stockade check` uses (check.h): the
 * verdicts, starting a process with a deadline, a `stockade run --json`
 * job and its result, the probe's "KEY=value" lines, scratch
 * directories.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "llutil.h"

#define KEEP_MAX (4u << 20)

volatile sig_atomic_t check_interrupted;

static void
verdict(struct check_result *r, enum check_verdict v, const char *fmt,
	va_list ap)
{
	r->verdict = v;
	vsnprintf(r->observed, sizeof(r->observed), fmt, ap);
	/* One line: a newline from an observed value would break the
	 * report's format. */
	for (char *p = r->observed; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
}

void
check_pass(struct check_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verdict(r, CHECK_PASS, fmt, ap);
	va_end(ap);
}

void
check_fail(struct check_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verdict(r, CHECK_FAIL, fmt, ap);
	va_end(ap);
}

void
check_skip(struct check_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verdict(r, CHECK_SKIP, fmt, ap);
	va_end(ap);
}

char *
check_unconst(const char *s)
{
	char *p;

	memcpy(&p, &s, sizeof(p));
	return p;
}

int64_t
check_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
	posix_spawnattr_setflags(at, POSIX_SPAWN_SETPGROUP |
				 POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
}

int
check_exec(struct check_ctx *c, const char *const argv[],
	   const char *const extra_env[], const void *input, size_t len,
	   int64_t deadline_ms, struct check_proc *p)
{
	return check_exec_interrupt(c, argv, extra_env, input, len,
				    deadline_ms, NULL, p);
}

int
check_exec_interrupt(struct check_ctx *c, const char *const argv[],
		     const char *const extra_env[], const void *input,
		     size_t len, int64_t deadline_ms,
		     const char *interrupt_on, struct check_proc *p)
{
	bool interrupted = interrupt_on == NULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char **envp;
	size_t n = 0, m = 0, outcap = 1, errcap = 1, sent = 0;
	int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
	int64_t start = check_now_ms(), deadline;
	pid_t pid;
	int e, st;

	memset(p, 0, sizeof(*p));
	p->status = -1;
	p->out = calloc(1, 1);
	p->err = calloc(1, 1);
	while (c->envp[n] != NULL)
		n++;
	while (extra_env != NULL && extra_env[m] != NULL)
		m++;
	envp = calloc(n + m + 1, sizeof(*envp));
	if (p->out == NULL || p->err == NULL || envp == NULL) {
		free(envp);
		return -ENOMEM;
	}
	memcpy(envp, c->envp, n * sizeof(*envp));
	for (size_t i = 0; i < m; i++)
		envp[n + i] = check_unconst(extra_env[i]);
	/* Only our ends are non-blocking: the child's stdout must block
	 * when the pipe is full, not fail with EAGAIN. */
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
	    (input != NULL && pipe2(in, O_CLOEXEC) < 0) ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(err[0], F_SETFL, O_NONBLOCK) < 0) {
		e = -errno;
		goto fail;
	}
	posix_spawn_file_actions_init(&fa);
	if (input != NULL)
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
						 O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	/* A group of its own, killed whole at the deadline. */
	check_spawnattr_init(&at);
	{
		char *args[260];
		size_t k = 0;

		for (; argv[k] != NULL && k < 259; k++)
			args[k] = check_unconst(argv[k]);
		args[k] = NULL;
		e = posix_spawn(&pid, argv[0], &fa, &at, args, envp);
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e != 0) {
		e = -e;
		goto fail;
	}
	close(out[1]);
	close(err[1]);
	out[1] = err[1] = -1;
	if (input != NULL) {
		close(in[0]);
		in[0] = -1;
		fcntl(in[1], F_SETFL, O_NONBLOCK);
		if (len == 0) {
			close(in[1]);
			in[1] = -1;
		}
	}
	deadline = start + (deadline_ms > 0 ? deadline_ms : 30000);
	while (out[0] >= 0 || err[0] >= 0) {
		struct pollfd pfd[3] = {{out[0], POLLIN, 0},
					{err[0], POLLIN, 0},
					{in[1], POLLOUT, 0}};
		int64_t left = deadline - check_now_ms();

		if (left <= 0 || check_interrupted) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			p->timed_out = true;
			break;
		}
		if (!interrupted && access(interrupt_on, F_OK) == 0) {
			kill(pid, SIGINT);
			interrupted = true;
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
	/* Its output is closed: it has ended or is about to; past the
	 * deadline it is killed (the whole group: what it left behind). */
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

static const char *
json_text(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

int
check_job_run(struct check_ctx *c, const struct check_job_opts *o,
	      struct check_job *j)
{
	const char *argv[256];
	char policy[4096], put[4200];
	size_t n = 0;
	int e;

	memset(j, 0, sizeof(*j));
	j->status = j->out = j->err = "";
	argv[n++] = c->stockade;
	argv[n++] = "run";
	argv[n++] = "--json";
	if (o->policy != NULL) {
		check_tmpname(c, "policy", policy, sizeof(policy));
		if ((e = check_write_file(policy, o->policy,
					  strlen(o->policy), false,
					  c->root)) < 0)
			return e;
		argv[n++] = "--policy";
		argv[n++] = policy;
	}
	if (o->workspace != NULL) {
		argv[n++] = "--workspace";
		argv[n++] = o->workspace;
	}
	if (!o->no_probe) {
		snprintf(put, sizeof(put), "%s:stockade-probe", c->probe);
		argv[n++] = "--put";
		argv[n++] = put;
	}
	for (size_t i = 0; o->run_args != NULL && o->run_args[i] != NULL &&
			   n < 128; i++)
		argv[n++] = o->run_args[i];
	argv[n++] = "--";
	for (size_t i = 0; o->argv[i] != NULL && n < 254; i++)
		argv[n++] = o->argv[i];
	argv[n] = NULL;
	e = check_exec_interrupt(c, argv, o->extra_env, NULL, 0,
				 o->deadline_ms > 0 ? o->deadline_ms : 30000,
				 o->interrupt_on, &j->proc);
	if (o->policy != NULL)
		unlink(policy);
	if (e < 0)
		return e;
	/* --json prints the result object alone on stdout. */
	j->result = json_loads(j->proc.out, JSON_REJECT_DUPLICATES, NULL);
	if (j->result != NULL && json_is_object(j->result)) {
		j->status = json_text(j->result, "status");
		j->out = json_text(j->result, "stdout");
		j->err = json_text(j->result, "stderr");
	} else if (j->result != NULL) {
		json_decref(j->result);
		j->result = NULL;
	}
	return 0;
}

void
check_job_free(struct check_job *j)
{
	check_proc_free(&j->proc);
	json_decref(j->result);
	j->result = NULL;
}

int
check_probe(struct check_ctx *c, struct check_job *j, ...)
{
	const char *argv[32];
	struct check_job_opts o;
	va_list ap;
	size_t n = 0;
	const char *a;

	argv[n++] = "./stockade-probe";
	va_start(ap, j);
	while ((a = va_arg(ap, const char *)) != NULL && n < 31)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	memset(&o, 0, sizeof(o));
	o.argv = argv;
	return check_job_run(c, &o, j);
}

bool
check_value(const struct check_job *j, const char *key, char *buf,
	    size_t len)
{
	size_t klen = strlen(key);
	const char *p = j->out;

	while (p != NULL && *p != '\0') {
		const char *nl = strchr(p, '\n');
		size_t l = nl != NULL ? (size_t)(nl - p) : strlen(p);

		if (l > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			size_t vl = l - klen - 1;

			if (vl >= len)
				vl = len - 1;
			memcpy(buf, p + klen + 1, vl);
			buf[vl] = '\0';
			return true;
		}
		p = nl != NULL ? nl + 1 : NULL;
	}
	if (len > 0)
		buf[0] = '\0';
	return false;
}

const char *
check_job_summary(const struct check_job *j, char *buf, size_t len)
{
	const char *detail = j->result != NULL
		? json_text(j->result, "detail") : "";
	const char *why = *detail != '\0' ? detail
			  : (j->proc.err != NULL ? j->proc.err : "");

	if (j->proc.timed_out)
		snprintf(buf, len, "stockade did not end within %lld ms",
			 (long long)j->proc.elapsed_ms);
	else
		snprintf(buf, len, "stockade exit %d, status \"%s\": %.300s",
			 j->proc.status, j->status, why);
	return buf;
}

void
check_tmpname(struct check_ctx *c, const char *prefix, char *buf,
	      size_t len)
{
	snprintf(buf, len, "%s/%s-%u", c->tmpdir, prefix, ++c->seq);
}

int
check_workspace(struct check_ctx *c, char *buf, size_t len)
{
	check_tmpname(c, "ws", buf, len);
	if (mkdir(buf, 0700) < 0)
		return -errno;
	if (c->root && chown(buf, 65534, 65534) < 0)
		return -errno;
	return 0;
}

int
check_write_file(const char *path, const void *data, size_t len,
		 bool own65534, bool root)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
			    O_NOFOLLOW, 0644);
	size_t done = 0;
	int e = 0;

	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t w = write(fd, (const char *)data + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			e = -errno;
			break;
		}
		done += (size_t)w;
	}
	if (e == 0 && own65534 && root && fchown(fd, 65534, 65534) < 0)
		e = -errno;
	close(fd);
	return e;
}

bool
check_fake_kernel(const char *name, char *buf, size_t len)
{
	const char *list = getenv("STOCKADE_CHECK_FAKE_KERNEL");
	size_t nl = strlen(name);

	while (list != NULL && *list != '\0') {
		size_t l = strcspn(list, ",");

		if (strcmp(name, "i386") == 0 &&
		    ((l == 4 && strncmp(list, "i386", 4) == 0) ||
		     (l == 7 && strncmp(list, "no-i386", 7) == 0))) {
			snprintf(buf, len, "%.*s", (int)l, list);
			return true;
		}
		if (l > nl + 1 && strncmp(list, name, nl) == 0 &&
		    list[nl] == '=') {
			snprintf(buf, len, "%.*s", (int)(l - nl - 1),
				 list + nl + 1);
			return true;
		}
		list += l;
		list += *list == ',';
	}
	return false;
}

int
check_kernel_landlock_abi(void)
{
	char v[16];

	if (check_fake_kernel("landlock-abi", v, sizeof(v)))
		return atoi(v);
	return ll_abi();
}

int
check_kernel_has_i386_entry(void)
{
	char fake[16];
	int status;
	pid_t pid;

	if (check_fake_kernel("i386", fake, sizeof(fake)))
		return strcmp(fake, "i386") == 0;
#if defined(__x86_64__)
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		long ret;

		/* The expected SIGSEGV ends the child at its default
		 * action (not a sanitizer's handler), with no core. */
		(void)signal(SIGSEGV, SIG_DFL);
		(void)setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0});
		__asm__ volatile("int $0x80"
				 : "=a"(ret)
				 : "a"(20L)
				 : "r8", "r9", "r10", "r11", "memory", "cc");
		_exit(ret == (long)getpid() ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		return 0;
	return -1;
#else
	(void)status;
	(void)pid;
	return -1;
#endif
}
