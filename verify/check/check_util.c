/*
 * check_util.c: what every check of `stockade check` uses (check.h): the
 * verdicts, a `stockade run --json` job and its result, the probe's
 * "KEY=value" lines, scratch directories. Starting a process with a
 * deadline is check_exec.c.
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
		if ((e = check_write_file(policy, o->policy, strlen(o->policy),
			 false, c->root)) < 0)
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
	for (size_t i = 0;
	     o->run_args != NULL && o->run_args[i] != NULL && n < 128; i++)
		argv[n++] = o->run_args[i];
	argv[n++] = "--";
	for (size_t i = 0; o->argv[i] != NULL && n < 254; i++)
		argv[n++] = o->argv[i];
	argv[n] = NULL;
	e = check_exec_interrupt(c, argv, o->extra_env, NULL, 0,
	    o->deadline_ms > 0 ? o->deadline_ms : 30000, o->interrupt_on,
	    &j->proc);
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
check_value(const struct check_job *j, const char *key, char *buf, size_t len)
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
	const char *detail = j->result != NULL ? json_text(j->result, "detail")
					       : "";
	const char *why = *detail != '\0'
	    ? detail
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
check_tmpname(struct check_ctx *c, const char *prefix, char *buf, size_t len)
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
check_write_file(const char *path, const void *data, size_t len, bool own65534,
    bool root)
{
	int fd = open(path,
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
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
