/*
 * probe_out.c: what stockade-probe's commands print with (probe.h:
 * probe_kv, probe_errno, probe_errname) and probe_now_ms; apart from
 * probe.c's main so that tests/lib/try_syscall.c, built from
 * probe_syscalls.c and probe_seccomp.c, links them without it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "probe.h"

void
probe_kv(const char *key, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%s=", key);
	for (const char *p = buf; *p != '\0'; p++) {
		if (*p == '\n')
			fputs("\\n", stdout);
		else
			putchar(*p);
	}
	putchar('\n');
	fflush(stdout);
}

long long
probe_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *
probe_errname(int err)
{
	static char other[32];

	if (err == 0)
		return "ok";
	/* glibc 2.32+: strerrorname_np gives "EPERM". */
	const char *n = strerrorname_np(err);
	if (n != NULL)
		return n;
	snprintf(other, sizeof(other), "E%d", err);
	return other;
}

void
probe_errno(const char *key, int err)
{
	probe_kv(key, "%s", probe_errname(err));
}
