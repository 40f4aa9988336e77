/* probe.c: see probe.h. */
#include "probe.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

int probe_fd = -1;
int probe_failures;

void
probe_say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(probe_fd, line, (size_t)n) < 0)
		_exit(99);
}

pid_t
probe_start(void (*fn)(void *), void *arg, int *fd)
{
	int p[2];
	pid_t pid;

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(p[0]);
		probe_fd = p[1];
		probe_failures = 0;
		fn(arg);
		probe_say("DONE");
		_exit(probe_failures ? 1 : 0);
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

bool
probe_read(int fd, char *text, size_t size, size_t *len, const char *until)
{
	text[*len] = '\0';
	while (until == NULL || strstr(text, until) == NULL) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&pf, 1, 60000) != 1)
			return false;
		n = read(fd, text + *len, size - 1 - *len);
		if (n <= 0)
			break;
		*len += (size_t)n;
		text[*len] = '\0';
	}
	return true;
}

void
probe_run(void (*fn)(void *), void *arg, struct probe_out *out)
{
	size_t len = 0;
	int fd;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	pid = probe_start(fn, arg, &fd);
	if (!probe_read(fd, out->text, sizeof(out->text), &len, NULL))
		kill(pid, SIGKILL);
	close(fd);
	cr_assert_eq(waitpid(pid, &out->status, 0), pid);
}

void
probe_assert_ok(const struct probe_out *o)
{
	cr_assert(WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0,
	    "confined child: wait status 0x%x; it said:\n%s",
	    (unsigned)o->status, o->text);
	cr_assert_not_null(strstr(o->text, "DONE\n"), "%s", o->text);
}

void
probe_check_confined(const char *st, unsigned long long kept)
{
	static const char *const sets[] = {"\nCapInh:", "\nCapPrm:",
	    "\nCapEff:", "\nCapBnd:", "\nCapAmb:"};
	unsigned long long v[5];

	CHECK(probe_status_field(st, "\nSeccomp:") == 2, "Seccomp: %ld",
	    probe_status_field(st, "\nSeccomp:"));
	CHECK(probe_status_field(st, "\nNoNewPrivs:") == 1, "NoNewPrivs: %ld",
	    probe_status_field(st, "\nNoNewPrivs:"));
	for (size_t i = 0; i < 5; i++) {
		const char *f = strstr(st, sets[i]);

		CHECK(f != NULL, "no %s in the status", sets[i] + 1);
		v[i] = f ? strtoull(f + strlen(sets[i]), NULL, 16) : ~0ULL;
	}
	probe_say("note: CapInh %llx CapPrm %llx CapEff %llx CapBnd %llx "
		  "CapAmb %llx",
	    v[0], v[1], v[2], v[3], v[4]);
	CHECK(v[0] == 0 && v[4] == 0, "inheritable %llx, ambient %llx", v[0],
	    v[4]);
	if (geteuid() == 0) {
		CHECK(v[1] == kept && v[2] == kept,
		    "root: permitted %llx, "
		    "effective %llx, wanted %llx",
		    v[1], v[2], kept);
		CHECK(v[3] == 0, "root: bounding set %llx", v[3]);
	} else {
		CHECK(v[1] == 0 && v[2] == 0, "permitted %llx, effective %llx",
		    v[1], v[2]);
	}
}

struct no_landlock_run {
	void (*fn)(const struct probe_no_landlock *);
	const struct probe_no_landlock *k;
};

/* The child of probe_run_without_landlock. */
static void
no_landlock_child(void *arg)
{
	const struct no_landlock_run *run = arg;
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	/* What a kernel without Landlock answers, made with a filter. */
	CHECK(ctx != NULL, "setup");
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "nnp");
	CHECK(ctx != NULL &&
		seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)run->k->answer),
		    SCMP_SYS(landlock_create_ruleset), 0) == 0 &&
		seccomp_load(ctx) == 0,
	    "filter");
	if (probe_failures)
		return;
	run->fn(run->k);
}

void
probe_run_without_landlock(void (*fn)(const struct probe_no_landlock *))
{
	static const struct probe_no_landlock kinds[] = {
	    {ENOSYS, "not built in"},
	    {EOPNOTSUPP, "not enabled at boot"},
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct no_landlock_run run = {.fn = fn, .k = &kinds[i]};
		struct probe_out o;

		probe_run(no_landlock_child, &run, &o);
		probe_assert_ok(&o);
	}
}

void
probe_check_refusal(const struct probe_no_landlock *k, int e, const char *err,
    const char *who)
{
	char unconfined[64];

	snprintf(unconfined, sizeof(unconfined),
	    "the %s does not run "
	    "unconfined",
	    who);
	CHECK(e == -EOPNOTSUPP, "the %s's confinement gave %d (%s)", who, e,
	    err);
	CHECK(strstr(err, "lsm=") != NULL &&
		strstr(err, "CONFIG_SECURITY_LANDLOCK=y") != NULL &&
		strstr(err, unconfined) != NULL && strstr(err, k->want) != NULL,
	    "message: %s", err);
	/* Refused before a filter of its own: only the test's is loaded. */
	CHECK(probe_status_field_self("\nSeccomp_filters:") == 1,
	    "filters: %ld", probe_status_field_self("\nSeccomp_filters:"));
}

long
probe_status_field(const char *st, const char *field)
{
	const char *p = strstr(st, field);

	return p == NULL ? -1 : strtol(p + strlen(field), NULL, 10);
}

long
probe_status_field_self(const char *field)
{
	char st[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t len = fd >= 0 ? read(fd, st, sizeof(st) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return -1;
	st[len] = '\0';
	return probe_status_field(st, field);
}

int
probe_landlock_abi(void)
{
	return (int)syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
}

bool
probe_need_landlock(void)
{
	if (probe_landlock_abi() >= 1)
		return true;
	harness_skip("this kernel has no Landlock");
	return false;
}
