/*
 * check_confined.c: the boundary checks that stockade's own processes,
 * the broker and the launcher, are confined (docs/confinement.md), for
 * `stockade check` (check.h).
 *
 * They are observed from outside: a job that sleeps is started, the two
 * processes are found in /proc (the broker is the `stockade run`
 * process, the launcher its child whose own grandchild is the job), and
 * their /proc/PID/status is compared with their contracts
 * (broker/host/confine.h, launcher/supervisor/confine.h): NoNewPrivs, Seccomp mode 2
 * and the capability sets. That shows a filter is loaded, not what it
 * holds: the rules of the broker's filter are tested from inside by
 * tests/broker/host/test_confine.c, the launcher's by
 * tests/launcher/supervisor/test_launcher_confine.c
 * (each call refused or allowed, as the invoking user and as 65534).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* The parent of process PID (from /proc/PID/stat, after the command
 * name, which may hold anything), or -1. */
static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;
	long pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %*c %ld", &pp) != 1)
		return -1;
	return (pid_t)pp;
}

#define MAX_PROCS 8192

/* Every process's pid and parent now, into PIDS and PPIDS; the count. */
static size_t
process_table(pid_t *pids, pid_t *ppids)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && n < MAX_PROCS) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pids[n] = (pid_t)atoi(de->d_name);
		if ((ppids[n] = parent_of(pids[n])) > 0)
			n++;
	}
	closedir(d);
	return n;
}

/*
 * The launcher of the broker BROKER: its child that has a grandchild
 * (the launcher's children are its zygote, which has none, and each
 * jail's init, whose child is the job). 0 while there is none yet.
 */
static pid_t
find_launcher(pid_t broker)
{
	pid_t *pids = calloc(MAX_PROCS, sizeof(*pids));
	pid_t *ppids = calloc(MAX_PROCS, sizeof(*ppids));
	pid_t found = 0;
	size_t n = pids != NULL && ppids != NULL ? process_table(pids, ppids)
						 : 0;

	for (size_t a = 0; a < n && found == 0; a++) {
		if (ppids[a] != broker)
			continue;
		for (size_t b = 0; b < n; b++) {
			if (ppids[b] != pids[a])
				continue;
			for (size_t k = 0; k < n && found == 0; k++)
				if (ppids[k] == pids[b])
					found = pids[a];
		}
	}
	free(pids);
	free(ppids);
	return found;
}

/* The /proc/PID/status fields a confinement shows. */
struct confined {
	pid_t pid;
	char comm[32];
	long euid;
	int nnp, seccomp, filters;
	uint64_t inh, prm, eff, bnd, amb;
};

/* Reads /proc/PID/status into S. Returns 0 or a negative errno. */
static int
read_status(pid_t pid, struct confined *s)
{
	char path[64], line[512];
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->euid = s->nnp = s->seccomp = s->filters = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *v = strchr(line, ':');

		if (v == NULL)
			continue;
		*v++ = '\0';
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (strcmp(line, "Name") == 0)
			snprintf(s->comm, sizeof(s->comm), "%s", v);
		else if (strcmp(line, "Uid") == 0)
			sscanf(v, "%*d %ld", &s->euid);
		else if (strcmp(line, "NoNewPrivs") == 0)
			s->nnp = atoi(v);
		else if (strcmp(line, "Seccomp") == 0)
			s->seccomp = atoi(v);
		else if (strcmp(line, "Seccomp_filters") == 0)
			s->filters = atoi(v);
		else if (strcmp(line, "CapInh") == 0)
			s->inh = strtoull(v, NULL, 16);
		else if (strcmp(line, "CapPrm") == 0)
			s->prm = strtoull(v, NULL, 16);
		else if (strcmp(line, "CapEff") == 0)
			s->eff = strtoull(v, NULL, 16);
		else if (strcmp(line, "CapBnd") == 0)
			s->bnd = strtoull(v, NULL, 16);
		else if (strcmp(line, "CapAmb") == 0)
			s->amb = strtoull(v, NULL, 16);
	}
	fclose(f);
	return 0;
}

/* Ends the `stockade run` process PID the way a user's ^C would (SIGTERM:
 * the broker cancels the job and cleans up), then its whole group if it
 * is still there after two seconds; reaps it. */
static void
end_run(pid_t pid)
{
	int64_t until = check_now_ms() + 2000;
	int st;

	kill(pid, SIGTERM);
	while (check_now_ms() < until) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			return;
		usleep(2000);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/*
 * Starts a job that sleeps, waits until it runs (the broker and the
 * launcher confine themselves before they run a job: cmd_run.c, the
 * launcher's main.c), and reads the status of the broker (the `stockade
 * run` process) into BROKER and of its launcher into LAUNCHER. Returns 0,
 * or -1 with WHY (LEN bytes) saying what went wrong.
 */
static int
observe_helpers(struct check_ctx *c, struct confined *broker,
    struct confined *launcher, char *why, size_t len)
{
	char put[4200];
	const char *argv[] = {c->stockade, "run", "--json", "--put", put,
	    "--timeout", "20", "--", "./stockade-probe", "sleep", "10000",
	    NULL};
	char *args[16];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	pid_t pid, l = 0;
	int64_t until;
	int e, st;

	snprintf(put, sizeof(put), "%s:stockade-probe", c->probe);
	for (size_t i = 0; i < sizeof(argv) / sizeof(argv[0]); i++)
		args[i] = argv[i] != NULL ? check_unconst(argv[i]) : NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at,
	    POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
		POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&pid, c->stockade, &fa, &at, args, c->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e != 0) {
		snprintf(why, len, "cannot start %.200s: %s", c->stockade,
		    strerror(e));
		return -1;
	}
	until = check_now_ms() + 5000;
	while (check_now_ms() < until) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			snprintf(why, len,
			    "stockade run ended (%s %d) before "
			    "its job ran",
			    WIFEXITED(st) ? "exit" : "signal",
			    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			return -1;
		}
		if ((l = find_launcher(pid)) > 0)
			break;
		usleep(5000);
	}
	e = -1;
	if (l <= 0)
		snprintf(why, len,
		    "no launcher with a running job under "
		    "stockade run (pid %d) within 5 s",
		    (int)pid);
	else if (read_status(pid, broker) < 0 || read_status(l, launcher) < 0)
		snprintf(why, len,
		    "cannot read /proc/%d/status or "
		    "/proc/%d/status",
		    (int)pid, (int)l);
	else
		e = 0;
	end_run(pid);
	return e;
}

/* The names of the capabilities in MASK, or "none"; more than four are
 * counted instead. */
static void
cap_names(uint64_t mask, char *buf, size_t len)
{
	static const struct {
		unsigned cap;
		const char *name;
	} names[] = {
	    {CAP_CHOWN, "CAP_CHOWN"},
	    {CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE"},
	    {CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH"},
	    {CAP_FOWNER, "CAP_FOWNER"},
	    {CAP_SETGID, "CAP_SETGID"},
	    {CAP_SETUID, "CAP_SETUID"},
	    {CAP_SETPCAP, "CAP_SETPCAP"},
	    {CAP_NET_ADMIN, "CAP_NET_ADMIN"},
	    {CAP_SYS_PTRACE, "CAP_SYS_PTRACE"},
	    {CAP_SYS_ADMIN, "CAP_SYS_ADMIN"},
	};
	size_t n;

	buf[0] = '\0';
	if (__builtin_popcountll(mask) > 4) {
		snprintf(buf, len, "%d capabilities",
		    __builtin_popcountll(mask));
		return;
	}
	for (unsigned cap = 0; cap < 64; cap++) {
		const char *nm = NULL;

		if ((mask & (1ULL << cap)) == 0)
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (names[i].cap == cap)
				nm = names[i].name;
		n = strlen(buf);
		if (nm != NULL)
			snprintf(buf + n, len - n, "%s%s", n > 0 ? "," : "",
			    nm);
		else
			snprintf(buf + n, len - n, "%scap %u", n > 0 ? "," : "",
			    cap);
	}
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
}

/*
 * Judges S, the status of WHO ("launcher", "broker"), against its
 * contract: no_new_privs set, a seccomp filter loaded (mode 2), no
 * inheritable or ambient capability, and as root no capability but KEEP
 * in its effective and permitted sets and an empty bounding set (it
 * holds CAP_SETPCAP before it drops: cf_drop_caps, confine_util.h); as
 * any other user none at all.
 */
static void
judge(struct check_result *r, const char *who, const struct confined *s,
    uint64_t keep)
{
	char extra[200], line[300];
	uint64_t may = s->euid == 0 ? keep : 0;

	snprintf(line, sizeof(line),
	    "%s %s (pid %d, euid %ld): NoNewPrivs "
	    "%d, Seccomp %d (%d filter%s), CapEff %016" PRIx64 ", CapBnd "
	    "%016" PRIx64,
	    who, s->comm, (int)s->pid, s->euid, s->nnp, s->seccomp, s->filters,
	    s->filters == 1 ? "" : "s", s->eff, s->bnd);
	if (s->nnp != 1)
		check_fail(r, "no_new_privs is not set: %s", line);
	else if (s->seccomp != 2 || s->filters < 1)
		check_fail(r, "no seccomp filter is loaded: %s", line);
	else if (((s->eff | s->prm) & ~may) != 0) {
		cap_names((s->eff | s->prm) & ~may, extra, sizeof(extra));
		check_fail(r, "it kept %s: %s", extra, line);
	} else if (s->inh != 0 || s->amb != 0)
		check_fail(r,
		    "inheritable %016" PRIx64 " or ambient %016" PRIx64
		    " capabilities: %s",
		    s->inh, s->amb, line);
	else if (s->euid == 0 && s->bnd != 0) {
		cap_names(s->bnd, extra, sizeof(extra));
		check_fail(r, "its bounding set still holds %s: %s", extra,
		    line);
	} else
		check_pass(r, "%s", line);
}

/* boundary.launcher_confined: the running launcher's /proc/PID/status
 * shows no_new_privs, a seccomp filter (whose rules
 * tests/launcher/supervisor/test_launcher_confine.c tests), and as root only
 * CAP_DAC_READ_SEARCH with an empty bounding set (launcher/supervisor/confine.h;
 * docs/confinement.md). */
static void
launcher_confined(struct check_ctx *c, struct check_result *r)
{
	struct confined b, l;
	char why[300];

	if (observe_helpers(c, &b, &l, why, sizeof(why)) < 0) {
		check_fail(r, "%s", why);
		return;
	}
	judge(r, "launcher", &l, 1ULL << CAP_DAC_READ_SEARCH);
}

/* boundary.broker_confined: the running broker's (`stockade run`)
 * /proc/PID/status shows no_new_privs, a seccomp filter (whose rules
 * tests/broker/host/test_confine.c tests), and as root only CAP_CHOWN,
 * CAP_DAC_OVERRIDE and CAP_FOWNER with an empty bounding set
 * (broker/host/confine.h; docs/confinement.md). */
static void
broker_confined(struct check_ctx *c, struct check_result *r)
{
	struct confined b, l;
	char why[300];

	if (observe_helpers(c, &b, &l, why, sizeof(why)) < 0) {
		check_fail(r, "%s", why);
		return;
	}
	judge(r, "broker", &b,
	    1ULL << CAP_CHOWN | 1ULL << CAP_DAC_OVERRIDE | 1ULL << CAP_FOWNER);
}

const struct check checks_confined[] = {
    {"boundary.launcher_confined", "boundary",
	"the running launcher's /proc/PID/status: NoNewPrivs 1, Seccomp 2 "
	"(a filter loaded; its rules: "
	"tests/launcher/supervisor/test_launcher_confine.c), as "
	"root only CAP_DAC_READ_SEARCH and an empty bounding set",
	launcher_confined},
    {"boundary.broker_confined", "boundary",
	"the running broker's /proc/PID/status: NoNewPrivs 1, Seccomp 2 (a "
	"filter loaded; its rules: tests/broker/host/test_confine.c), as "
	"root only CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER and an empty "
	"bounding set",
	broker_confined},
    {NULL, NULL, NULL, NULL},
};
