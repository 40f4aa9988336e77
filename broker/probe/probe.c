/*
 * probe.c: stockade-probe's main (probe.h): `stockade-probe COMMAND
 * [ARGS...]`, or `stockade-probe --list`.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "probe.h"

static const struct probe_cmd *const groups[] = {
	probe_jail_cmds, probe_process_cmds, probe_seccomp_cmds,
	probe_syscalls_cmds, probe_results_cmds, probe_boundary_cmds,
};

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

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
			for (const struct probe_cmd *p = groups[g];
			     p->name != NULL; p++)
				printf("%-24s %s\n", p->name, p->usage);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: stockade-probe COMMAND [ARGS...] | "
			"--list\n");
		return 2;
	}
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (const struct probe_cmd *p = groups[g]; p->name != NULL;
		     p++)
			if (strcmp(p->name, argv[1]) == 0)
				return p->fn(argc - 1, argv + 1);
	fprintf(stderr, "stockade-probe: unknown command %s\n", argv[1]);
	return 2;
}
