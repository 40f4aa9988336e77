/*
 * check_limits.c: the checks of layer limits (check_jail.h): the
 * resource limits a job's program starts with (its rlimits and the sizes
 * of its tmpfs) against the job's limits and the policy
 * (launcher/payload/payload.c, launcher/init/mounts.c; docs/layers.md, 1).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_jail.h"

/* The rlimit RES (the probe's name: "FSIZE") the probe saw in J is
 * "WANT_CUR WANT_MAX"; SOURCE names the figure it comes from. */
static void
rlimit_is(struct check_result *r, const struct check_job *j, const char *res,
    long long want_cur, long long want_max, const char *source)
{
	char key[64], v[128], want[64];

	snprintf(key, sizeof(key), "rlimit.%s", res);
	if (!jail_val(r, j, key, v, sizeof(v)))
		return;
	snprintf(want, sizeof(want), "%lld %lld", want_cur, want_max);
	if (strcmp(v, want) == 0)
		check_pass(r, "RLIMIT_%s is %s (soft hard), %s", res, v,
		    source);
	else
		check_fail(r, "RLIMIT_%s is %s (soft hard), %s wants %s", res,
		    v, source, want);
}

/* limits.rlimit_fsize_is_file_size: a job run with --file-size 3 has
 * RLIMIT_FSIZE 3 MiB, soft and hard (setrlimit(2); docs/layers.md). */
void
lim_rlimit_fsize(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--file-size", "3")};
	struct check_job j;

	if (jail_probe_ok(c, r, &j, &s, ARGS("rlimits"))) {
		json_int_t mb = jail_job_limit(&j, "file_size_mb");

		if (mb != 3)
			check_fail(r,
			    "the result's limits.file_size_mb is %lld "
			    "for --file-size 3",
			    (long long)mb);
		else
			rlimit_is(r, &j, "FSIZE", 3 * MIB, 3 * MIB,
			    "limits.file_size_mb 3");
	}
	check_job_free(&j);
}

/* limits.rlimit_nofile_is_open_files: a policy's open_files = 100 is the
 * job's RLIMIT_NOFILE, soft and hard. */
void
lim_rlimit_nofile(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.policy = "[limits]\nopen_files = 100\n"};
	struct check_job j;

	if (jail_probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "NOFILE", 100, 100,
		    "the policy's open_files 100");
	check_job_free(&j);
}

/* limits.rlimit_nproc_is_processes: a job run with --processes 17 has
 * RLIMIT_NPROC 17 (counted per user namespace, so per jail). */
void
lim_rlimit_nproc(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--processes", "17")};
	struct check_job j;

	if (jail_probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "NPROC", 17, 17, "--processes 17");
	check_job_free(&j);
}

/* limits.rlimit_core_zero: RLIMIT_CORE is 0, soft and hard, whatever the
 * caller's: no core file of the job's memory (core(5)). */
void
lim_rlimit_core(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("rlimits")))
		rlimit_is(r, &j, "CORE", 0, 0, "no core dumps");
	check_job_free(&j);
}

/* limits.rlimit_data_twice_memory: a job run with --memory 100 has
 * RLIMIT_DATA 200 MiB, the per-process backstop of the memory limit
 * (policy/default.ini, memory_mb). */
void
lim_rlimit_data(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--memory", "100")};
	struct check_job j;

	if (jail_probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "DATA", 200 * MIB, 200 * MIB,
		    "twice --memory 100");
	check_job_free(&j);
}

/* limits.rlimit_cpu_past_cpu_time: a job run with --cpu-time 7 has
 * RLIMIT_CPU 8 s soft (SIGXCPU a second past the limit) and 9 s hard
 * (SIGKILL; setrlimit(2)). */
void
lim_rlimit_cpu(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--cpu-time", "7")};
	struct check_job j;

	if (jail_probe_ok(c, r, &j, &s, ARGS("rlimits")))
		rlimit_is(r, &j, "CPU", 8, 9, "--cpu-time 7 plus 1 s and 2 s");
	check_job_free(&j);
}

/* limits.no_realtime_nice_or_locked_memory: RLIMIT_RTPRIO, RLIMIT_RTTIME
 * and RLIMIT_NICE are 0 and RLIMIT_MEMLOCK and RLIMIT_MSGQUEUE 64 KiB,
 * so nothing of the caller's limits leaks in (payload.c). */
void
lim_rlimit_misc(struct check_ctx *c, struct check_result *r)
{
	static const struct {
		const char *res, *want;
	} want[] = {
	    {"RTPRIO", "0 0"},
	    {"RTTIME", "0 0"},
	    {"NICE", "0 0"},
	    {"MEMLOCK", "65536 65536"},
	    {"MSGQUEUE", "65536 65536"},
	};
	struct check_job j;
	char key[64], v[128];
	size_t i;

	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("rlimits")))
		goto out;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(key, sizeof(key), "rlimit.%s", want[i].res);
		if (!jail_val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, want[i].want) != 0) {
			check_fail(r, "RLIMIT_%s is %s (soft hard), not %s",
			    want[i].res, v, want[i].want);
			goto out;
		}
	}
	check_pass(r,
	    "RLIMIT_RTPRIO, RTTIME and NICE are 0 0, MEMLOCK and "
	    "MSGQUEUE 65536 65536");
out:
	check_job_free(&j);
}

/*
 * limits.user_quotas_bounded: what one job may take of the invoking
 * user's kernel quotas (issue 23, point 2). The jail's uid is a host
 * uid and the kernel charges the jail's inotify instances and watches,
 * fanotify groups and marks, namespaces, queued signals and POSIX timers
 * to the host user too (kernel/ucount.c, hierarchical), so: the jail
 * user namespace's own /proc/sys/user maxima at most launcher/common/jail.h's
 * (32 inotify instances, 8192 watches, 8 fanotify groups, 8192 marks, no
 * namespace: a fresh user namespace's are INT_MAX), and RLIMIT_SIGPENDING
 * 256 soft and hard (a caller's is typically tens of thousands: all of
 * the user's). A quota this kernel lacks ("absent") charges nothing.
 */
void
lim_user_quotas(struct check_ctx *c, struct check_result *r)
{
	static const struct {
		const char *name;
		long long most;
	} want[] = {
	    {"max_inotify_instances", 32},
	    {"max_inotify_watches", 8192},
	    {"max_fanotify_groups", 8},
	    {"max_fanotify_marks", 8192},
	    {"max_user_namespaces", 0},
	    {"max_pid_namespaces", 0},
	    {"max_net_namespaces", 0},
	    {"max_mnt_namespaces", 0},
	    {"max_ipc_namespaces", 0},
	    {"max_uts_namespaces", 0},
	    {"max_cgroup_namespaces", 0},
	    {"max_time_namespaces", 0},
	};
	struct check_job j;
	char key[64], v[128], *end;
	long long n;
	size_t i;

	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("userquotas")) ||
	    !jail_val(r, &j, "rlimit.SIGPENDING", v, sizeof(v)))
		goto out;
	if (strcmp(v, "256 256") != 0) {
		check_fail(r,
		    "RLIMIT_SIGPENDING is %s (soft hard), not 256 256: "
		    "one job may fill the host user's pending-signal "
		    "quota (timer_create and sigqueue then fail for all "
		    "of the user's programs)",
		    v);
		goto out;
	}
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(key, sizeof(key), "userquota.%s", want[i].name);
		if (!jail_val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strcmp(v, "absent") == 0)
			continue;
		n = strtoll(v, &end, 10);
		if (end == v || *end != '\0' || n < 0 || n > want[i].most) {
			check_fail(r,
			    "the jail's /proc/sys/user/%s is %s, over "
			    "%lld: one job may take that much of the host "
			    "user's quota",
			    want[i].name, v, want[i].most);
			goto out;
		}
	}
	check_pass(r,
	    "RLIMIT_SIGPENDING 256 256; the jail's inotify "
	    "instances at most 32, watches 8192, fanotify groups 8, "
	    "marks 8192, namespaces 0");
out:
	check_job_free(&j);
}

/* limits.tmpfs_sizes_capped: with --tmp-size 5, /tmp and /dev/shm are
 * 5 MiB tmpfs and home a tmpfs of the policy's home_mb (tmpfs(5) size=). */
void
lim_tmpfs_sizes(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.run_args = ARGS("--tmp-size", "5")};
	struct check_job j;
	char tmp[64], shm[64], home[64];
	long long home_want;

	if (!jail_probe_ok(c, r, &j, &s, ARGS("cwd")) ||
	    !jail_val(r, &j, "tmp.bytes", tmp, sizeof(tmp)) ||
	    !jail_val(r, &j, "shm.bytes", shm, sizeof(shm)) ||
	    !jail_val(r, &j, "homedir.bytes", home, sizeof(home)))
		goto out;
	home_want = (long long)jail_job_limit(&j, "home_mb") * MIB;
	if (atoll(tmp) != 5 * MIB || atoll(shm) != 5 * MIB || home_want <= 0 ||
	    atoll(home) != home_want)
		check_fail(r,
		    "/tmp is %s bytes, /dev/shm %s, home %s: want "
		    "%lld, %lld and %lld (home_mb)",
		    tmp, shm, home, 5 * MIB, 5 * MIB, home_want);
	else
		check_pass(r,
		    "/tmp and /dev/shm are %s-byte tmpfs, home %s "
		    "bytes (limits.home_mb)",
		    tmp, home);
out:
	check_job_free(&j);
}

/* limits.unseen_memory_refused_under_monitor: under enforcement =
 * monitor, the calls that hold kernel memory no process maps, beyond
 * shmget, msgget and memfd_create, are refused (EPERM): semget, fcntl
 * F_SETPIPE_SZ, setsockopt SO_SNDBUF and SO_RCVBUF, vmsplice
 * (launcher/zygote/seccomp.c; docs/layers.md, "Memory the monitor cannot see";
 * issue 23: semaphore sets pinned 500 MiB under --memory 32, and pages
 * vmspliced from huge pages into 15 pipes 480 MiB). Under cgroup2 the leaf charges
 * that memory and the calls stay allowed: nothing to check then. */
void
lim_unseen_memory(struct check_ctx *c, struct check_result *r)
{
	static const char *const keys[] = {"kmem.semget", "kmem.setpipe_sz",
	    "kmem.so_sndbuf", "kmem.so_rcvbuf", "kmem.vmsplice"};
	struct check_job j;
	const char *enf;
	char v[64];

	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("kmem")))
		goto out;
	enf = json_string_value(json_object_get(j.result, "enforcement"));
	if (enf == NULL || strcmp(enf, "monitor") != 0) {
		check_skip(r,
		    "enforcement is %s, not monitor: a cgroup v2 leaf "
		    "charges this memory",
		    enf != NULL ? enf : "absent");
		goto out;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!jail_val(r, &j, keys[i], v, sizeof(v)))
			goto out;
		if (strcmp(v, "EPERM") != 0) {
			check_fail(r,
			    "under the monitor %s is %s, not EPERM: "
			    "kernel memory no process maps, which the "
			    "monitor cannot see",
			    keys[i] + 5, v);
			goto out;
		}
	}
	check_pass(r,
	    "under the monitor semget, F_SETPIPE_SZ, SO_SNDBUF, "
	    "SO_RCVBUF and vmsplice are refused (EPERM)");
out:
	check_job_free(&j);
}

/* limits.ofd_locks_refused_under_monitor: under enforcement = monitor,
 * fcntl F_OFD_SETLK and F_OFD_SETLKW are refused (EPERM) while F_SETLK
 * and F_OFD_GETLK work (launcher/zygote/seccomp.c): an open file description
 * lock belongs to the open file (fcntl(2)), which a unix socket can hold
 * in flight in no descriptor table, where the monitor's count of the
 * "lock:" lines of fdinfo cannot see it; a POSIX lock dies with any
 * close of its file by its owner (issue 23, point 1; docs/layers.md).
 * Under cgroup2 the leaf charges locks: nothing to check then. */
void
lim_ofd_locks(struct check_ctx *c, struct check_result *r)
{
	static const char *const keys[] = {"kmem.ofd_setlk", "kmem.ofd_setlkw",
	    "kmem.ofd_getlk", "kmem.setlk"};
	static const char *const want[] = {"EPERM", "EPERM", "ok", "ok"};
	struct check_job j;
	const char *enf;
	char v[64];

	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("kmem")))
		goto out;
	enf = json_string_value(json_object_get(j.result, "enforcement"));
	if (enf == NULL || strcmp(enf, "monitor") != 0) {
		check_skip(r,
		    "enforcement is %s, not monitor: a cgroup v2 leaf "
		    "charges locks",
		    enf != NULL ? enf : "absent");
		goto out;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!jail_val(r, &j, keys[i], v, sizeof(v)))
			goto out;
		if (strcmp(v, want[i]) != 0) {
			check_fail(r, "under the monitor %s is %s, not %s%s",
			    keys[i] + 5, v, want[i],
			    i < 2 ? ": a lock of the open file, unseen "
				    "while the file is in flight"
				  : "");
			goto out;
		}
	}
	check_pass(r,
	    "under the monitor F_OFD_SETLK and F_OFD_SETLKW are "
	    "refused (EPERM); F_OFD_GETLK and F_SETLK work");
out:
	check_job_free(&j);
}
