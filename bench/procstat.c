/*
 * procstat.c: what bench/jobbench.c reads of /proc (proc(5)) about the
 * sessions it runs: descriptor and mount counts, and a process tree with
 * each process's resident memory. Run by bench/run, not by the tests.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

/* Entries in /proc/PID/fd; -1 if it cannot be read. */
int
count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL)
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* Lines of /proc/self/mountinfo. */
long
count_mounts(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	long n = 0;
	int c;

	if (f == NULL)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* The field KEY ("VmRSS:", "Pss:") of a /proc file in KiB; -1 if absent. */
static long
proc_kb(pid_t pid, const char *file, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, kl) == 0) {
			v = strtol(line + kl, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* PID's parent and command name (comm) from /proc/PID/stat; -1 if gone. */
static pid_t
proc_parent(pid_t pid, char *comm, size_t size)
{
	char path[64], buf[512], *open_p, *close_p;
	ssize_t n;
	int fd;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (open_p == NULL || close_p == NULL || close_p < open_p)
		return -1;
	snprintf(comm, size, "%.*s", (int)(close_p - open_p - 1), open_p + 1);
	if (sscanf(close_p + 2, "%*c %d", &ppid) != 1)
		return -1;
	return ppid;
}

/*
 * The processes below ROOT (ROOT included when WITH_ROOT), alive and not
 * zombies, as a JSON array of {pid, ppid, comm, role, rss_kb, pss_kb}.
 */
json_t *
proc_tree(pid_t root, bool with_root)
{
	pid_t pids[4096], parents[4096], keep[4096];
	char comms[4096][32];
	size_t n = 0, nk = 0;
	json_t *arr = json_array();
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (dir == NULL)
		return arr;
	while ((d = readdir(dir)) != NULL && n < 4096) {
		char *end;
		long p = strtol(d->d_name, &end, 10);

		if (*end != '\0' || p <= 0)
			continue;
		pids[n] = (pid_t)p;
		if ((parents[n] = proc_parent(pids[n], comms[n],
			 sizeof(comms[n]))) >= 0)
			n++;
	}
	closedir(dir);
	if (with_root)
		keep[nk++] = root;
	else
		for (size_t i = 0; i < n; i++)
			if (parents[i] == root)
				keep[nk++] = pids[i];
	for (size_t k = 0; k < nk; k++) /* breadth first: nk grows */
		for (size_t i = 0; i < n && nk < 4096; i++)
			if (parents[i] == keep[k])
				keep[nk++] = pids[i];
	for (size_t k = 0; k < nk; k++) {
		size_t i = 0;
		const char *role;
		char state[8] = "";
		char path[64];
		FILE *f;

		while (i < n && pids[i] != keep[k])
			i++;
		if (i == n)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		if ((f = fopen(path, "re")) != NULL) {
			if (fscanf(f, "%*d (%*[^)]) %7s", state) != 1)
				state[0] = '\0';
			fclose(f);
		}
		if (state[0] == 'Z' || state[0] == '\0')
			continue;
		role = pids[i] == root				    ? "broker"
		    : strcmp(comms[i], "stockade") == 0		    ? "spawner"
		    : strncmp(comms[i], "stockade-launch", 15) == 0 ? "launcher"
		    : strcmp(comms[i], "stockade-zygote") == 0	    ? "zygote"
		    : strcmp(comms[i], "stockade-init") == 0 ? "pool jail"
							     : "other";
		json_array_append_new(arr,
		    json_pack("{s:i,s:i,s:s,s:s,s:I,s:I}", "pid", (int)pids[i],
			"ppid", (int)parents[i], "comm", comms[i], "role", role,
			"rss_kb",
			(json_int_t)proc_kb(pids[i], "status", "VmRSS:"),
			"pss_kb",
			(json_int_t)proc_kb(pids[i], "smaps_rollup", "Pss:")));
	}
	return arr;
}

pid_t
proc_child(pid_t parent, const char *comm)
{
	struct dirent *d;
	DIR *dir = opendir("/proc");
	pid_t found = -1;

	if (dir == NULL)
		return -1;
	while (found < 0 && (d = readdir(dir)) != NULL) {
		char *end, c[32];
		long p = strtol(d->d_name, &end, 10);

		if (*end == '\0' && p > 0 &&
		    proc_parent((pid_t)p, c, sizeof(c)) == parent &&
		    strcmp(c, comm) == 0)
			found = (pid_t)p;
	}
	closedir(dir);
	return found;
}
