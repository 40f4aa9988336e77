/*
 * probe_jail.c: stockade-probe's commands for the checks of the jail's
 * layers (broker/check_jail.c): what a process inside sees of its
 * namespaces, credentials, limits, environment and files.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"

/* Prints "file=<first line of PATH>" or "file=<errno name>". */
static int
first_line(const char *key, const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		probe_errno(key, errno);
		return 0;
	}
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	fclose(f);
	probe_kv(key, "%s", line);
	return 0;
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

/* setgroups: the first line of /proc/self/setgroups. */
static int
cmd_setgroups(int argc, char **argv)
{
	return first_line("setgroups", "/proc/self/setgroups");
}

const struct probe_cmd probe_jail_cmds[] = {
	{"status", "status.NAME=value for each line of /proc/self/status",
	 cmd_status},
	{"setgroups", "setgroups=the first line of /proc/self/setgroups",
	 cmd_setgroups},
	{NULL, NULL, NULL},
};
