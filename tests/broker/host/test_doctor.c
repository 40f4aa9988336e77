/*
 * test_doctor.c: `stockade doctor` (broker/cli/cmd_doctor.c) and the cached
 * verdict every command will check first (broker/host/doctor.c,
 * doctor_cached_verdict), issue 5 item 5.
 *
 * The program runs for real (STOCKADE_BIN): on this host it must say
 * "full", or "degraded: cgroup v2 delegation" where no delegated cgroup
 * v2 is at hand, and exit 0; inside a throwaway user namespace whose
 * user.max_user_namespaces is 0 it must say "refused" with the fix and
 * exit 69 (as test_jail.c's refuses_without_user_namespaces does for
 * `stockade run`).
 *
 * The cache is driven in-process. What changes the process (a seccomp
 * filter that hides openat2, a user namespace) happens in a forked child,
 * which reports one line through a pipe: Criterion's assertions must not
 * run in a process it did not make (as in test_confine.c).
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534, like the other jail suites; skips become failures under
 * STOCKADE_MUST_WORK=1.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "doctor.h"
#include "harness.h"
#include "preflight.h"

TestSuite(doctor, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 60);

/* The checks, in the order doctor prints them (doctor.h). */
static const char *const names[] = {
    "kernel",
    "user_namespaces",
    "namespaces",
    "proc_mount",
    "openat2",
    "seccomp",
    "landlock",
    "seccomp_notify",
    "cgroup",
    "egress_proxy",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

/* The last line of TEXT (without its newline), into BUF. */
static const char *
last_line(const char *text, char *buf, size_t size)
{
	size_t len = strlen(text);
	const char *p;

	while (len > 0 && text[len - 1] == '\n')
		len--;
	for (p = text + len; p > text && p[-1] != '\n'; p--)
		;
	snprintf(buf, size, "%.*s", (int)(text + len - p), p);
	return buf;
}

/*
 * Skips (a failure under STOCKADE_MUST_WORK=1) when this kernel lacks a
 * layer doctor requires, seen by the test's own probes, so that a
 * refusal there is not mistaken for a bug; user namespaces were checked
 * by harness_setup.
 */
static void
require_host_layers(void)
{
	if (syscall(SYS_landlock_create_ruleset, NULL, 0,
		LANDLOCK_CREATE_RULESET_VERSION) < 0)
		harness_skip("this kernel has no Landlock: doctor refuses");
	if (syscall(SYS_openat2, -1, "", NULL, 0) < 0 && errno == ENOSYS)
		harness_skip("this kernel has no openat2: doctor refuses");
}

/* The verdict this host may give: every required layer is here; the
 * only optional layer it may miss is a delegated cgroup v2. */
static void
assert_host_verdict(const char *v)
{
	cr_assert(strcmp(v, "full") == 0 ||
		strcmp(v, "degraded: cgroup v2 delegation") == 0,
	    "verdict \"%s\"", v);
}

Test(doctor, host_is_full_or_degraded_by_cgroups_only)
{
	struct run_out o;
	char v[1024], line[256];

	require_host_layers();
	RUN(&o, "doctor");
	cr_assert_eq(o.status, 0, "exit %d; stdout: %s; stderr: %s", o.status,
	    o.out, o.err);
	cr_assert_eq(o.err_len, 0, "stderr: %s", o.err);
	assert_host_verdict(last_line(o.out, v, sizeof(v)));
	/* Every required layer said ok, each on its own line. */
	for (size_t i = 0; i < 6; i++) {
		static const char *const layers[] = {
		    "unprivileged user namespaces",
		    "pid, net and mount namespaces",
		    "/proc in a user namespace",
		    "openat2 (RESOLVE_BENEATH)",
		    "seccomp filter",
		    "Landlock",
		};

		snprintf(line, sizeof(line), "\nok       %s: ", layers[i]);
		cr_assert_not_null(strstr(o.out, line), "no \"%s\" in:\n%s",
		    line + 1, o.out);
	}
	cr_log_info("stockade doctor took %ld ms (spawn to reap)", o.wall_ms);
	run_out_free(&o);
}

Test(doctor, json_has_every_check)
{
	static const char *const fields[] = {
	    "name",
	    "layer",
	    "status",
	    "observed",
	    "fix",
	};
	struct run_out o, t;
	struct utsname u;
	char kernel[512], v[1024];
	json_t *checks, *c;
	const char *key;
	size_t i;

	require_host_layers();
	RUN(&o, "doctor", "--json");
	cr_assert_eq(o.status, 0, "exit %d; stderr: %s", o.status, o.err);
	cr_assert(json_is_object(o.json), "not one JSON object: %s", o.out);
	cr_assert_eq(json_object_size(o.json), 3, "%s", o.out);
	cr_assert(json_is_string(json_object_get(o.json, "verdict")));
	assert_host_verdict(
	    json_string_value(json_object_get(o.json, "verdict")));
	cr_assert_eq(uname(&u), 0);
	snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release,
	    u.machine);
	cr_assert_str_eq(json_string_value(json_object_get(o.json, "kernel")),
	    kernel);
	checks = json_object_get(o.json, "checks");
	cr_assert(json_is_array(checks));
	cr_assert_eq(json_array_size(checks), NNAMES, "%s", o.out);
	json_array_foreach(checks, i, c)
	{
		const char *st, *fix;
		json_t *val;

		cr_assert_eq(json_object_size(c), 5, "check %zu: %s", i, o.out);
		for (size_t f = 0; f < 5; f++)
			cr_assert(json_is_string(json_object_get(c, fields[f])),
			    "check %zu: %s is not a string", i, fields[f]);
		json_object_foreach(c, key, val)
		    cr_assert(strcmp(key, "fix") == 0 ||
			    json_string_length(val) > 0,
			"check %zu: empty %s", i, key);
		cr_assert_str_eq(json_string_value(json_object_get(c, "name")),
		    names[i]);
		st = json_string_value(json_object_get(c, "status"));
		fix = json_string_value(json_object_get(c, "fix"));
		cr_assert(strcmp(st, "ok") == 0 || strcmp(st, "missing") == 0,
		    "%s: %s", names[i], st);
		/* A fix exactly where something is missing. */
		cr_assert_eq(strcmp(st, "ok") == 0, fix[0] == '\0',
		    "%s: status %s, fix \"%s\"", names[i], st, fix);
		/* Only the cgroup may be missing on this host. */
		if (strcmp(names[i], "cgroup") != 0)
			cr_assert_str_eq(st, "ok", "%s", names[i]);
		/* Without it, the fix names what only the kernel bounds
		 * under the monitor (issue 23: epoll watches in flight). */
		else if (strcmp(st, "missing") == 0)
			cr_assert(strstr(fix, "fs.epoll.max_user_watches") !=
				NULL,
			    "cgroup fix \"%s\" does not name the epoll "
			    "bound",
			    fix);
	}
	/* The text form ends with the same verdict. */
	RUN(&t, "doctor");
	cr_assert_str_eq(last_line(t.out, v, sizeof(v)),
	    json_string_value(json_object_get(o.json, "verdict")));
	run_out_free(&t);
	run_out_free(&o);
}

Test(doctor, bad_arguments_are_a_usage_error)
{
	struct run_out o;

	RUN(&o, "doctor", "--jsn");
	cr_assert_eq(o.status, 2, "exit %d", o.status);
	cr_assert_eq(o.out_len, 0, "%s", o.out);
	cr_assert_not_null(strstr(o.err, "usage: stockade doctor [--json]"));
	run_out_free(&o);
}

/* Runs `stockade doctor ARG` (ARG may be NULL) in a throwaway user
 * namespace whose user.max_user_namespaces is 0, into O. */
static void
doctor_without_userns(const char *arg, struct run_out *o)
{
	const char *script =
	    "echo 0 > /proc/sys/user/max_user_namespaces || exit 99; "
	    "exec \"$0\" doctor $1";
	const char *const argv[] = {"unshare", "--user", "--map-root-user",
	    "sh", "-c", script, harness_stockade(), arg != NULL ? arg : "",
	    NULL};

	harness_spawn(argv, o);
	cr_assert_neq(o->status, 99, "cannot turn user namespaces off: %s",
	    o->err);
}

Test(doctor, refuses_without_user_namespaces)
{
	struct run_out o;
	char v[1024];

	require_host_layers();
	doctor_without_userns(NULL, &o);
	cr_assert_eq(o.status, 69, "exit %d; stdout: %s; stderr: %s", o.status,
	    o.out, o.err);
	cr_assert_not_null(strstr(o.out,
			       "\nrefused  unprivileged user "
			       "namespaces: user namespaces are disabled "
			       "(user.max_user_namespaces = 0)\n"
			       "         fix: sysctl -w "
			       "user.max_user_namespaces=15000, and make it "
			       "permanent in /etc/sysctl.d/\n"),
	    "%s", o.out);
	/* The layers that are there are still said to be there. */
	cr_assert_not_null(strstr(o.out, "\nok       Landlock: "), "%s", o.out);
	cr_assert_str_eq(last_line(o.out, v, sizeof(v)),
	    "refused: unprivileged user namespaces; pid, net and "
	    "mount namespaces; /proc in a user namespace");
	run_out_free(&o);
}

Test(doctor, refuses_without_user_namespaces_in_json)
{
	struct run_out o;
	json_t *c;
	size_t i;

	require_host_layers();
	doctor_without_userns("--json", &o);
	cr_assert_eq(o.status, 69, "exit %d; stdout: %s; stderr: %s", o.status,
	    o.out, o.err);
	cr_assert(json_is_object(o.json), "%s", o.out);
	cr_assert_eq(strncmp(json_string_value(
				 json_object_get(o.json, "verdict")),
			 "refused: unprivileged user namespaces", 37),
	    0, "%s", o.out);
	json_array_foreach(json_object_get(o.json, "checks"), i, c)
	{
		const char *n = json_string_value(json_object_get(c, "name"));
		const char *st = json_string_value(
		    json_object_get(c, "status"));

		cr_assert_str_eq(n, names[i]);
		if (i >= 1 && i <= 3)
			cr_assert_str_eq(st, "refused", "%s", n);
		else if (strcmp(n, "cgroup") != 0)
			cr_assert_str_eq(st, "ok", "%s", n);
	}
	c = json_array_get(json_object_get(o.json, "checks"), 1);
	cr_assert_str_eq(json_string_value(json_object_get(c, "fix")),
	    "sysctl -w user.max_user_namespaces=15000, and make "
	    "it permanent in /etc/sysctl.d/");
	run_out_free(&o);
}

/* A user namespace, but no mount namespace in it (user.max_mnt_namespaces
 * 0 in a throwaway user namespace, as a container's profile may refuse
 * CLONE_NEWNS): preflight_userns's second step fails with no AppArmor
 * restriction, so the user namespaces check passes and the namespaces
 * check names the refusal (preflight.h). */
Test(doctor, mount_namespace_refused_is_the_namespaces_check)
{
	const char *script =
	    "echo 0 > /proc/sys/user/max_mnt_namespaces || exit 99; "
	    "exec \"$0\" doctor";
	const char *const argv[] = {"unshare", "--user", "--map-root-user",
	    "sh", "-c", script, harness_stockade(), NULL};
	struct run_out o;
	char v[1024];

	require_host_layers();
	harness_spawn(argv, &o);
	cr_assert_neq(o.status, 99, "cannot turn mount namespaces off: %s",
	    o.err);
	cr_assert_eq(o.status, 69, "exit %d; stdout: %s; stderr: %s", o.status,
	    o.out, o.err);
	cr_assert_not_null(strstr(o.out,
			       "\nok       unprivileged user "
			       "namespaces: "),
	    "%s", o.out);
	cr_assert_not_null(strstr(o.out,
			       "\nrefused  pid, net and mount "
			       "namespaces: "),
	    "%s", o.out);
	cr_assert_str_eq(last_line(o.out, v, sizeof(v)),
	    "refused: pid, net and mount namespaces; /proc in a "
	    "user namespace");
	run_out_free(&o);
}

/* What doctor observed quotes the host, which need not be UTF-8 (a cgroup
 * named with byte 0xff): --json, the readiness probe, must still print
 * one valid object, the bad byte as U+FFFD, not fail with exit 70. */
Test(doctor, json_of_non_utf8_observations_is_valid)
{
	struct doctor_report r;
	json_t *j, *c;
	char *text;

	cr_assert_eq(NNAMES, DOCTOR_NCHECKS);
	memset(&r, 0, sizeof(r));
	for (size_t i = 0; i < NNAMES; i++) {
		r.checks[i].name = names[i];
		r.checks[i].layer = "a layer";
		r.checks[i].ran = true;
		r.checks[i].status = DOCTOR_OK;
	}
	snprintf(r.checks[NNAMES - 1].observed,
	    sizeof(r.checks[NNAMES - 1].observed),
	    "/sys/fs/cgroup/stk\xff (this process's cgroup)");
	snprintf(r.checks[NNAMES - 1].fix, sizeof(r.checks[NNAMES - 1].fix),
	    "fix \xc3");
	snprintf(r.kernel, sizeof(r.kernel), "Linux 6.1\xfe x86_64");
	snprintf(r.verdict, sizeof(r.verdict), "full");
	j = doctor_to_json(&r);
	cr_assert_not_null(j);
	text = json_dumps(j, JSON_COMPACT);
	cr_assert_not_null(text);
	c = json_array_get(json_object_get(j, "checks"), NNAMES - 1);
	cr_assert_str_eq(json_string_value(json_object_get(c, "observed")),
	    "/sys/fs/cgroup/stk\xef\xbf\xbd (this process's cgroup)");
	cr_assert_str_eq(json_string_value(json_object_get(c, "fix")),
	    "fix \xef\xbf\xbd");
	cr_assert_str_eq(json_string_value(json_object_get(j, "kernel")),
	    "Linux 6.1\xef\xbf\xbd x86_64");
	free(text);
	json_decref(j);
}

/* ---- doctor_cached_verdict ---------------------------------------------- */

struct child_out {
	int status; /* wait status */
	char text[4096]; /* what the child wrote */
};

/* Forks a child that runs FN, writes the text it left in its buffer and
 * exits with FN's result; collects both. */
static void
run_child(int (*fn)(char *buf, size_t len), struct child_out *out)
{
	int p[2];
	size_t got = 0;
	ssize_t n;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char buf[4096] = "";
		int r;

		close(p[0]);
		alarm(30);
		r = fn(buf, sizeof(buf));
		(void)!write(p[1], buf, strlen(buf));
		_exit(r);
	}
	close(p[1]);
	while (got + 1 < sizeof(out->text) &&
	    (n = read(p[0], out->text + got, sizeof(out->text) - 1 - got)) > 0)
		got += (size_t)n;
	close(p[0]);
	cr_assert_eq(waitpid(pid, &out->status, 0), pid);
	cr_assert(WIFEXITED(out->status), "child killed by signal %d",
	    WTERMSIG(out->status));
}

/* In a child whose openat2 answers ENOSYS (a filter of its own), so that
 * a check run there must refuse: the verdict, and why. Exit 0: the
 * verdict passed (from the cache); 1: refused (BUF: why); 2: set-up. */
static int
verdict_without_openat2(char *buf, size_t len)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (ctx == NULL ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2),
		0) < 0 ||
	    seccomp_load(ctx) < 0) {
		snprintf(buf, len, "cannot load the filter");
		return 2;
	}
	seccomp_release(ctx);
	return doctor_cached_verdict(buf, len) == 0 ? 0 : 1;
}

/* Whether a cached pass is used: 0 yes, 1 no (checked and refused). */
static int
cache_used(void)
{
	struct child_out c;

	run_child(verdict_without_openat2, &c);
	cr_assert_neq(WEXITSTATUS(c.status), 2, "%s", c.text);
	if (WEXITSTATUS(c.status) == 1)
		cr_assert(strstr(c.text, "openat2") != NULL &&
			strstr(c.text, ". Fix: ") != NULL,
		    "why: %s", c.text);
	return WEXITSTATUS(c.status);
}

/* The cache file's path in DIR into PATH (doctor.h: named by the uid
 * and the running binary's inode, this test's). */
static void
cache_path(char *path, size_t size, const char *dir)
{
	struct stat x;

	cr_assert_eq(stat("/proc/self/exe", &x), 0);
	snprintf(path, size, "%s/stockade-doctor-%u-%ju", dir,
	    (unsigned)geteuid(), (uintmax_t)x.st_ino);
}

/* A fresh directory for XDG_RUNTIME_DIR (mode 0700, ours); the cache
 * file's path in it into PATH. */
static const char *
runtime_dir(char *path, size_t size)
{
	const char *dir = harness_tmpdir("stockade-doctor-xdg-");

	cr_assert_eq(chmod(dir, 0700), 0);
	cr_assert_eq(setenv("XDG_RUNTIME_DIR", dir, 1), 0);
	cache_path(path, size, dir);
	return dir;
}

Test(doctor, cached_verdict_passes_once_per_boot_in_our_runtime_dir)
{
	char path[4096], boot[64], why[2048], head[128], *text;
	struct stat st;
	long t0, t1, t2;
	int fd;

	require_host_layers();
	runtime_dir(path, sizeof(path));
	t0 = harness_now_ms();
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	t1 = harness_now_ms();
	cr_assert_eq(lstat(path, &st), 0, "no cache %s: %s", path,
	    strerror(errno));
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert_eq(st.st_uid, geteuid());
	/* Keyed by the boot. */
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(read(fd, boot, 36), 36);
	close(fd);
	boot[36] = '\0';
	text = harness_read_file(path, NULL);
	cr_assert_not_null(text);
	snprintf(head, sizeof(head),
	    "stockade doctor cache 1\nboot %s\nuid %u\n", boot,
	    (unsigned)geteuid());
	cr_assert_eq(strncmp(text, head, strlen(head)), 0, "%s", text);
	free(text);

	/* The pass is used: a process that has lost openat2 is not
	 * checked again... */
	t2 = harness_now_ms();
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	cr_log_info("doctor_cached_verdict: %ld ms checked, %ld ms cached",
	    t1 - t0, harness_now_ms() - t2);
	cr_assert_eq(cache_used(), 0);
	/* ...and without the cache the same process is refused, with the
	 * cause and the fix; a refusal is not cached. */
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(cache_used(), 1);
	cr_assert_eq(lstat(path, &st), -1, "a refusal was cached");
}

Test(doctor, cached_verdict_ignores_a_file_others_could_write)
{
	char path[4096], why[2048], real[4200];
	const char *dir;
	struct stat st;

	require_host_layers();
	dir = runtime_dir(path, sizeof(path));
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(cache_used(), 0);

	/* Group- or other-writable: ignored, then replaced by a pass. */
	cr_assert_eq(chmod(path, 0620), 0);
	cr_assert_eq(cache_used(), 1);
	cr_assert_eq(chmod(path, 0602), 0);
	cr_assert_eq(cache_used(), 1);
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert_eq(cache_used(), 0);

	/* A symbolic link to a valid cache: not followed. */
	snprintf(real, sizeof(real), "%s/real", dir);
	cr_assert_eq(rename(path, real), 0);
	cr_assert_eq(symlink(real, path), 0);
	cr_assert_eq(cache_used(), 1);
	cr_assert_eq(unlink(path), 0);

	/* A second link to it (someone else's hard link): ignored. */
	cr_assert_eq(link(real, path), 0);
	cr_assert_eq(cache_used(), 1);
	cr_assert_eq(unlink(real), 0);
	cr_assert_eq(cache_used(), 0);

	/* Another user's file (root can make one): ignored. */
	if (geteuid() == 0) {
		cr_assert_eq(chown(path, 65534, 65534), 0);
		cr_assert_eq(cache_used(), 1);
	}
}

Test(doctor, cached_verdict_not_kept_outside_a_private_runtime_dir)
{
	char path[4096], why[2048];
	const char *dir;
	struct stat st;

	require_host_layers();
	/* A runtime directory others may write to: nothing is cached. */
	dir = runtime_dir(path, sizeof(path));
	cr_assert_eq(chmod(dir, 0770), 0);
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(lstat(path, &st), -1, "cached in a shared directory");
	cr_assert_eq(cache_used(), 1);
	/* Relative: nothing is cached, every call checks. */
	cr_assert_eq(chmod(dir, 0700), 0);
	cr_assert_eq(setenv("XDG_RUNTIME_DIR", "relative", 1), 0);
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(lstat(path, &st), -1);
	cr_assert_eq(cache_used(), 1);
}

Test(doctor, cached_verdict_without_xdg_runtime_dir_in_a_private_fallback)
{
	char path[4096], run[64], why[2048];
	struct stat st;

	require_host_layers();
	/* Not set (root, cron, CI): /run/user/EUID when it is ours, else
	 * /tmp/stockade-EUID, mode 0700 (test_doctor_cache.c has the
	 * rules). */
	cr_assert_eq(unsetenv("XDG_RUNTIME_DIR"), 0);
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	snprintf(run, sizeof(run), "/run/user/%u", (unsigned)geteuid());
	if (lstat(run, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == geteuid() && (st.st_mode & 022) == 0) {
		cache_path(path, sizeof(path), run);
	} else {
		snprintf(path, sizeof(path), "/tmp/stockade-%u",
		    (unsigned)geteuid());
		cr_assert_eq(lstat(path, &st), 0, "%s: %s", path,
		    strerror(errno));
		cr_assert(S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
			(st.st_mode & 022) == 0,
		    "%s mode %o uid %u", path, st.st_mode & 07777,
		    (unsigned)st.st_uid);
		snprintf(run, sizeof(run), "/tmp/stockade-%u",
		    (unsigned)geteuid());
		cache_path(path, sizeof(path), run);
	}
	cr_assert_eq(lstat(path, &st), 0, "no cache %s: %s", path,
	    strerror(errno));
	cr_assert_eq(st.st_uid, geteuid());
	cr_assert_eq(cache_used(), 0);
	/* Forged by another user (root can make one): ignored, checked. */
	if (geteuid() == 0) {
		cr_assert_eq(chown(path, 65534, 65534), 0);
		cr_assert_eq(cache_used(), 1);
		cr_assert_eq(unlink(path), 0);
	}
}

/* In a child's own user namespace (ids mapped to themselves) whose
 * user.max_user_namespaces is 0: doctor_cached_verdict's refusal must be
 * exactly preflight_userns's message. Exit 0 when it is, 1 with BUF
 * saying what differed, 2 for a set-up failure. */
static int
verdict_without_userns(char *buf, size_t len)
{
	char map[64], want[1024], why[1024];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int fd;

	if (unshare(CLONE_NEWUSER) < 0) {
		snprintf(buf, len, "unshare: %s", strerror(errno));
		return 2;
	}
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, map, strlen(map)) < 0) {
		snprintf(buf, len, "uid_map: %s", strerror(errno));
		return 2;
	}
	close(fd);
	fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "deny", 4) < 0)
		return 2;
	close(fd);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return 2;
	close(fd);
	fd = open("/proc/sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0\n", 2) < 0) {
		snprintf(buf, len, "max_user_namespaces: %s", strerror(errno));
		return 2;
	}
	close(fd);
	if (preflight_userns(want, sizeof(want)) == 0) {
		snprintf(buf, len, "preflight_userns passed");
		return 2;
	}
	if (doctor_cached_verdict(why, sizeof(why)) == 0) {
		snprintf(buf, len,
		    "passed (a cache of another user namespace "
		    "used?)");
		return 1;
	}
	if (strcmp(why, want) != 0) {
		snprintf(buf, len, "why \"%s\", preflight \"%s\"", why, want);
		return 1;
	}
	snprintf(buf, len, "%s", why);
	return 0;
}

Test(doctor, cached_verdict_refuses_with_preflights_words)
{
	struct child_out c;
	char path[4096], why[2048];

	require_host_layers();
	/* A pass cached outside does not answer for another user
	 * namespace. */
	runtime_dir(path, sizeof(path));
	cr_assert_eq(doctor_cached_verdict(why, sizeof(why)), 0, "%s", why);
	run_child(verdict_without_userns, &c);
	cr_assert_eq(WEXITSTATUS(c.status), 0, "%s", c.text);
	cr_assert_str_eq(c.text,
	    "user namespaces are disabled "
	    "(user.max_user_namespaces = 0). Fix: sysctl -w "
	    "user.max_user_namespaces=15000, and make it permanent "
	    "in /etc/sysctl.d/");
}

/*
 * Issue 23: the text `stockade doctor` prints quotes the host (paths,
 * sysctl values, kernel strings, error texts); a value with ESC or a C1
 * control in it must reach the terminal in caret notation. A report
 * made here, printed to a memory stream, must hold no ESC, no C1 control
 * and no byte that is not UTF-8; the lines keep their indentation.
 */
Test(doctor, text_escapes_what_it_quotes)
{
	struct doctor_report *r = calloc(1, sizeof(*r));
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	cr_assert_not_null(r);
	r->checks[0].layer = "user namespaces";
	r->checks[0].ran = true;
	r->checks[0].status = DOCTOR_REFUSED;
	snprintf(r->checks[0].observed, sizeof(r->checks[0].observed),
	    "user.max_user_namespaces = \x1b]0;pwn\x07, path "
	    "/tmp/\xc2\x9b"
	    "2J/x\xff");
	snprintf(r->checks[0].fix, sizeof(r->checks[0].fix),
	    "line one\nprofile stockade /opt/\x1b[31m/stockade {");
	snprintf(r->verdict, sizeof(r->verdict),
	    "refused: \xc2\x9d"
	    "52;c;x");
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	doctor_print_text(f, r);
	cr_assert_eq(fclose(f), 0);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		cr_assert(c != 0x1b && c != 0x07 && c != 0xff,
		    "byte 0x%02x at %zu: %s", c, i, text);
		cr_assert(!(c == 0xc2 && i + 1 < len &&
			      (unsigned char)text[i + 1] <= 0x9f),
		    "raw C1 at %zu: %s", i, text);
	}
	cr_assert_not_null(strstr(text,
			       "= ^[]0;pwn^G, path /tmp/^[[2J/x"
			       "\xef\xbf\xbd\n"),
	    "%s", text);
	cr_assert_not_null(strstr(text,
			       "         fix: line one\n"
			       "              profile stockade /opt/^[[31m/"),
	    "%s", text);
	cr_assert_not_null(strstr(text, "refused: ^[]52;c;x\n"), "%s", text);
	free(text);
	free(r);
}
