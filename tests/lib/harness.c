/* harness.c: see harness.h. */
#include "harness.h"
#include "proto.h"

#include "fsutil.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNPRIV_ID 65534
#define RUN_DEADLINE_MS 30000
#define MAX_TMPDIRS 16

extern char **environ;

static char stockade_path[PATH_MAX];
static char launcher_path[PATH_MAX];
/* Where the helper programs of tests/ are (harness_helper). */
static char helper_dir[PATH_MAX];
static char helper_path[PATH_MAX];
/* The helpers built in tests/ (tests/meson.build), copied with the two
 * binaries in the 65534 variant. */
static const char *const helpers[] = {
    "fake-launcher-silent",
    "fake-launcher-hang",
    "with-enosys",
};
static bool unprivileged;
static char *tmpdirs[MAX_TMPDIRS];
static size_t ntmpdirs;
/* STOCKADE_RESULTS_DIR, opened in harness_setup before any privilege is
 * dropped (the build tree may not be enterable by 65534), and how many
 * results this process kept there (keep_result). */
static int results_fd = -1;
static unsigned results_count;
static char results_test[64]; /* the test binary's name: test_jail */

/*
 * Criterion 2.4 drops the message of an assertion that fails in .init
 * (and, with --tap, the worker's stderr): it reports only "unexpected
 * signal". So harness_setup records why it failed here, and the test's
 * first call into the harness fails with that message (harness_cleanup,
 * the .fini, fails too if the test made none).
 */
static bool in_setup;
static char pending[3 * PATH_MAX];

#define SETUP_REQUIRE(cond, ...)                                         \
	do {                                                             \
		if (!(cond)) {                                           \
			snprintf(pending, sizeof(pending), __VA_ARGS__); \
			return false;                                    \
		}                                                        \
	} while (0)

static void
check_setup(void)
{
	static char why[sizeof(pending)];

	if (pending[0] != '\0') {
		/* Reported once, by whichever call comes first. */
		memcpy(why, pending, sizeof(why));
		pending[0] = '\0';
		cr_assert_fail("harness_setup: %s", why);
	}
}

long
harness_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
harness_skip(const char *reason)
{
	const char *must = getenv("STOCKADE_MUST_WORK");

	if (must != NULL && strcmp(must, "1") == 0) {
		if (!in_setup)
			cr_assert_fail("%s (not skipped: STOCKADE_MUST_WORK=1)",
			    reason);
		snprintf(pending, sizeof(pending),
		    "%s (not skipped: STOCKADE_MUST_WORK=1)", reason);
		return;
	}
	criterion_skip_test("%s", reason);
}

const char *
harness_stockade(void)
{
	check_setup();
	return stockade_path;
}

const char *
harness_launcher(void)
{
	check_setup();
	return launcher_path;
}

const char *
harness_helper(const char *name)
{
	check_setup();
	cr_assert_lt(snprintf(helper_path, sizeof(helper_path), "%s/%s",
			 helper_dir, name),
	    (int)sizeof(helper_path));
	cr_assert_eq(access(helper_path, X_OK), 0, "helper %s: %s", helper_path,
	    strerror(errno));
	return helper_path;
}

bool
harness_unprivileged(void)
{
	return unprivileged;
}

static void
remember_dir(const char *path)
{
	cr_assert_lt(ntmpdirs, MAX_TMPDIRS, "too many temporary directories");
	tmpdirs[ntmpdirs] = strdup(path);
	cr_assert_not_null(tmpdirs[ntmpdirs]);
	ntmpdirs++;
}

static char *
make_tmpdir(const char *prefix)
{
	char tmpl[PATH_MAX];

	check_setup();
	snprintf(tmpl, sizeof(tmpl), "/tmp/%s-XXXXXX", prefix);
	cr_assert_not_null(mkdtemp(tmpl), "mkdtemp %s: %s", tmpl,
	    strerror(errno));
	remember_dir(tmpl);
	return tmpdirs[ntmpdirs - 1];
}

const char *
harness_tmpdir(const char *prefix)
{
	return make_tmpdir(prefix);
}

uid_t
harness_workspace_owner(void)
{
	return geteuid() == 0 ? PROTO_ROOT_PAYLOAD_ID : geteuid();
}

const char *
harness_workspace(void)
{
	const char *dir = make_tmpdir("stockade-test-ws");

	/* A root broker refuses a workspace owned by root (workspace.h): a
	 * root deployment gives its jobs a directory of an ordinary user,
	 * here the one root-run jobs map to. */
	if (geteuid() == 0)
		cr_assert_eq(chown(dir, PROTO_ROOT_PAYLOAD_ID,
				 PROTO_ROOT_PAYLOAD_ID),
		    0, "chown %s: %s", dir, strerror(errno));
	return dir;
}

/* Copies SRC to DST, mode 0755, owned by 65534. */
static bool
copy_exe(const char *src, const char *dst)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC);
	int out;
	ssize_t n;
	bool ok;

	SETUP_REQUIRE(in >= 0, "open %s: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0)
		close(in);
	SETUP_REQUIRE(out >= 0, "create %s: %s", dst, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	ok = n == 0 && fchmod(out, 0755) == 0 &&
	    fchown(out, UNPRIV_ID, UNPRIV_ID) == 0;
	close(in);
	ok = close(out) == 0 && ok;
	SETUP_REQUIRE(ok, "copy %s to %s: %s", src, dst, strerror(errno));
	return true;
}

/* Root only: copies the binaries somewhere 65534 can reach, then becomes
 * 65534 for good. */
static bool
become_unprivileged(void)
{
	char dir[PATH_MAX] = "/tmp/stockade-test-XXXXXX";
	char src_launcher[PATH_MAX], src_stockade[PATH_MAX];
	uid_t r, e, s;
	gid_t gr, ge, gs;

	SETUP_REQUIRE(mkdtemp(dir) != NULL, "mkdtemp %s: %s", dir,
	    strerror(errno));
	remember_dir(dir);
	snprintf(src_launcher, sizeof(src_launcher), "%s", launcher_path);
	snprintf(src_stockade, sizeof(src_stockade), "%s", stockade_path);
	snprintf(launcher_path, sizeof(launcher_path), "%s/stockade-launcher",
	    dir);
	snprintf(stockade_path, sizeof(stockade_path), "%s/stockade", dir);
	if (!copy_exe(src_launcher, launcher_path) ||
	    !copy_exe(src_stockade, stockade_path))
		return false;
	/* stockade-eval beside them when built (test_eval.c runs it as the
	 * decoy; `stockade eval` executes it), and stockade-proxy (a policy
	 * that allows hosts runs its jobs through it). */
	for (size_t i = 0; i < 2; i++) {
		static const char *const beside[] = {"stockade-eval",
		    "stockade-proxy"};
		char src[PATH_MAX + 64], dst[PATH_MAX + 64], *slash;

		snprintf(src, sizeof(src), "%s", src_stockade);
		if ((slash = strrchr(src, '/')) != NULL)
			snprintf(slash, sizeof(src) - (size_t)(slash - src),
			    "/%s", beside[i]);
		snprintf(dst, sizeof(dst), "%s/%s", dir, beside[i]);
		if (access(src, F_OK) == 0 && !copy_exe(src, dst))
			return false;
	}
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		char src[PATH_MAX + 64], dst[PATH_MAX + 64];

		snprintf(src, sizeof(src), "%s/%s", helper_dir, helpers[i]);
		snprintf(dst, sizeof(dst), "%s/%s", dir, helpers[i]);
		if (access(src, F_OK) == 0 && !copy_exe(src, dst))
			return false;
	}
	snprintf(helper_dir, sizeof(helper_dir), "%s", dir);
	SETUP_REQUIRE(chmod(dir, 0755) == 0 &&
		chown(dir, UNPRIV_ID, UNPRIV_ID) == 0,
	    "chmod/chown %s: %s", dir, strerror(errno));

	SETUP_REQUIRE(setgroups(0, NULL) == 0, "setgroups: %s",
	    strerror(errno));
	SETUP_REQUIRE(setresgid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID) == 0,
	    "setresgid: %s", strerror(errno));
	SETUP_REQUIRE(setresuid(UNPRIV_ID, UNPRIV_ID, UNPRIV_ID) == 0,
	    "setresuid: %s", strerror(errno));
	SETUP_REQUIRE(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0,
	    "PR_SET_DUMPABLE: %s", strerror(errno));
	/* For good: none of the ids is 0, and root cannot come back. */
	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	SETUP_REQUIRE(r == UNPRIV_ID && e == UNPRIV_ID && s == UNPRIV_ID &&
		gr == UNPRIV_ID && ge == UNPRIV_ID && gs == UNPRIV_ID &&
		getgroups(0, NULL) == 0 && setuid(0) == -1,
	    "privileges were not dropped completely");
	unprivileged = true;
	return true;
}

/* Can this process create a user namespace? 0, or the errno of the
 * forked unshare(CLONE_NEWUSER). */
static int
probe_userns(void)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0x7f));
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return errno;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return EINVAL;
}

/*
 * Opens STOCKADE_RESULTS_DIR (tests/meson.build), making it mode 01777
 * when missing so that every variant, 65534 included, can add files. A
 * failure is only a diagnostic: no test fails because its results could
 * not be kept (result-schema then reports what is missing).
 */
static void
open_results_dir(void)
{
	const char *dir = getenv("STOCKADE_RESULTS_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (dir == NULL || dir[0] == '\0' || results_fd >= 0)
		return;
	/* Criterion's workers run as argv[0] "boxfort-worker": the name
	 * of the executable itself says which test file this is. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	snprintf(results_test, sizeof(results_test), "%s",
	    n > 0 ? basename(exe) : program_invocation_short_name);
	if (mkdir(dir, 01777) == 0)
		(void)chmod(dir, 01777); /* the umask took the sticky bits */
	results_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (results_fd < 0)
		cr_log_warn("results are not kept: open %s: %s", dir,
		    strerror(errno));
}

/*
 * Keeps the result stockade printed (OUT->out, OUT->json parsed from it)
 * as <test>-<pid>-<counter>.json in STOCKADE_RESULTS_DIR, for
 * tests/system/validate_results.py, when it is a JSON object with a "status".
 * Written under a dot name and renamed, so that the validator never sees
 * half a file. Failures are diagnostics only.
 */
static void
keep_result(const struct run_out *out)
{
	char name[128], tmp[160];
	size_t done = 0;
	int fd;

	if (results_fd < 0 || !json_is_object(out->json) ||
	    json_object_get(out->json, "status") == NULL)
		return;
	snprintf(name, sizeof(name), "%s%s-%ld-%u.json", results_test,
	    unprivileged ? "-65534" : "", (long)getpid(), ++results_count);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(results_fd, tmp,
	    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		cr_log_warn("result not kept: create %s: %s", tmp,
		    strerror(errno));
		return;
	}
	while (done < out->out_len) {
		ssize_t n = write(fd, out->out + done, out->out_len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (close(fd) != 0 || done != out->out_len ||
	    renameat(results_fd, tmp, results_fd, name) != 0) {
		cr_log_warn("result not kept: write %s: %s", name,
		    strerror(errno));
		(void)unlinkat(results_fd, tmp, 0);
	}
}

static bool
setup(void)
{
	const char *bin = getenv("STOCKADE_BIN");
	const char *as = getenv("STOCKADE_TEST_AS_USER");
	char copy[PATH_MAX];
	int e;

	SETUP_REQUIRE(bin != NULL && bin[0] == '/' &&
		strlen(bin) < sizeof(stockade_path) - 32,
	    "STOCKADE_BIN must be the absolute path of build/stockade "
	    "(tests/meson.build sets it)");
	snprintf(stockade_path, sizeof(stockade_path), "%s", bin);
	snprintf(copy, sizeof(copy), "%s", bin);
	snprintf(launcher_path, sizeof(launcher_path), "%s/stockade-launcher",
	    dirname(copy));
	SETUP_REQUIRE(snprintf(helper_dir, sizeof(helper_dir), "%s/tests",
			  copy) < (int)sizeof(helper_dir),
	    "%s/tests: path too long", copy);
	SETUP_REQUIRE(access(stockade_path, X_OK) == 0, "%s: %s", stockade_path,
	    strerror(errno));
	SETUP_REQUIRE(access(launcher_path, X_OK) == 0, "%s: %s", launcher_path,
	    strerror(errno));

	open_results_dir();
	if (as != NULL && as[0] != '\0') {
		SETUP_REQUIRE(strcmp(as, "65534") == 0,
		    "STOCKADE_TEST_AS_USER=%s: only 65534 is "
		    "supported",
		    as);
		if (geteuid() == 0) {
			if (!become_unprivileged())
				return false;
		} else {
			unprivileged = true; /* already an ordinary user */
		}
	}
	if ((e = probe_userns()) != 0) {
		char reason[256];

		snprintf(reason, sizeof(reason),
		    "uid %u cannot create a user namespace "
		    "(unshare(CLONE_NEWUSER): %s); stockade refuses to run "
		    "here",
		    (unsigned)geteuid(), strerror(e));
		harness_skip(reason);
		return pending[0] == '\0';
	}
	return true;
}

void
harness_setup(void)
{
	pending[0] = '\0';
	in_setup = true;
	(void)setup();
	in_setup = false;
}

static int
make_writable(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	if (flag == FTW_D || flag == FTW_DNR)
		(void)chmod(path, (st->st_mode & 07777) | S_IRWXU);
	return 0;
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)remove(path);
	return 0;
}

void
harness_cleanup(void)
{
	for (size_t i = ntmpdirs; i-- > 0;) {
		/* A job may have left directories without write permission. */
		(void)nftw(tmpdirs[i], make_writable, 32, FTW_PHYS);
		(void)nftw(tmpdirs[i], remove_entry, 32, FTW_DEPTH | FTW_PHYS);
		/* nftw stops at PATH_MAX: a deeper tree a failed test left
		 * goes with the code under test, which any depth is for. */
		if (access(tmpdirs[i], F_OK) == 0)
			(void)remove_tree_at(AT_FDCWD, tmpdirs[i]);
		free(tmpdirs[i]);
		tmpdirs[i] = NULL;
	}
	ntmpdirs = 0;
	/* A set-up failure the test body never ran into still fails it. */
	check_setup();
}

void
harness_random_hex(char *buf, size_t size)
{
	unsigned char raw[128];
	size_t n = size - 1;

	cr_assert(size >= 2 && n <= sizeof(raw));
	cr_assert_eq(getrandom(raw, n, 0), (ssize_t)n);
	for (size_t i = 0; i < n; i++)
		buf[i] = "0123456789abcdef"[raw[i] & 15];
	buf[n] = '\0';
}

void
harness_random_digits(char *buf, size_t size)
{
	unsigned char raw[128];
	size_t n = size - 1;

	cr_assert(size >= 2 && n <= sizeof(raw));
	cr_assert_eq(getrandom(raw, n, 0), (ssize_t)n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)('0' + raw[i] % 10);
	/* A leading 1-9, so the marker never reads as a shorter number. */
	buf[0] = (char)('1' + raw[0] % 9);
	buf[n] = '\0';
}

struct growbuf {
	char *data;
	size_t len, cap;
};

static void
grow_append(struct growbuf *b, const char *data, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + len + 1)
			cap *= 2;
		b->data = realloc(b->data, cap);
		cr_assert_not_null(b->data);
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

/* Reads what FD has now into B. Returns false at end of file. */
static bool
drain(int fd, struct growbuf *b)
{
	char chunk[16384];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n > 0) {
			grow_append(b, chunk, (size_t)n);
			continue;
		}
		if (n == 0)
			return false;
		if (errno == EINTR)
			continue;
		cr_assert_eq(errno, EAGAIN, "read: %s", strerror(errno));
		return true;
	}
}

int
harness_run(const char *const argv[], struct run_out *out)
{
	const char *full[256];
	size_t n = 0;

	check_setup();
	full[n++] = stockade_path;
	for (size_t i = 0; argv[i] != NULL; i++) {
		cr_assert_lt(n, sizeof(full) / sizeof(full[0]) - 1);
		full[n++] = argv[i];
	}
	full[n] = NULL;
	return harness_spawn(full, out);
}

int
harness_spawn(const char *const full[], struct run_out *out)
{
	posix_spawn_file_actions_t fa;
	struct growbuf ob = {0}, eb = {0};
	int po[2], pe[2], pidfd, st;
	bool open_o = true, open_e = true, reaped = false;
	long start, deadline;
	pid_t pid;
	bool json = false;

	check_setup();
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; full[i] != NULL; i++)
		if (strcmp(full[i], "--json") == 0)
			json = true;

	cr_assert_eq(pipe2(po, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(pe, O_CLOEXEC), 0);
	cr_assert_eq(posix_spawn_file_actions_init(&fa), 0);
	cr_assert_eq(posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
			 O_RDONLY, 0),
	    0);
	cr_assert_eq(posix_spawn_file_actions_adddup2(&fa, po[1], 1), 0);
	cr_assert_eq(posix_spawn_file_actions_adddup2(&fa, pe[1], 2), 0);

	start = harness_now_ms();
	cr_assert_eq(posix_spawnp(&pid, full[0], &fa, NULL,
			 (char *const *)(uintptr_t)full, environ),
	    0, "posix_spawn %s", full[0]);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	fcntl(po[0], F_SETFL, O_NONBLOCK);
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	cr_assert_geq(pidfd, 0, "pidfd_open: %s", strerror(errno));

	deadline = start + RUN_DEADLINE_MS;
	while (!reaped) {
		struct pollfd p[3] = {
		    {.fd = open_o ? po[0] : -1, .events = POLLIN},
		    {.fd = open_e ? pe[0] : -1, .events = POLLIN},
		    {.fd = pidfd, .events = POLLIN},
		};
		long left = deadline - harness_now_ms();
		int r;

		if (left <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			cr_assert_fail("stockade still running after %d ms; "
				       "stdout: %s; stderr: %s",
			    RUN_DEADLINE_MS, ob.data ? ob.data : "",
			    eb.data ? eb.data : "");
		}
		r = poll(p, 3, (int)left);
		if (r < 0) {
			cr_assert_eq(errno, EINTR);
			continue;
		}
		if (open_o && p[0].revents)
			open_o = drain(po[0], &ob);
		if (open_e && p[1].revents)
			open_e = drain(pe[0], &eb);
		if (p[2].revents) {
			while (waitpid(pid, &st, 0) < 0)
				cr_assert_eq(errno, EINTR);
			reaped = true;
		}
	}
	out->wall_ms = harness_now_ms() - start;
	/* Everything stockade wrote is in the pipes now; a process that
	 * still held a write end (there must be none) cannot stall us. */
	if (open_o)
		(void)drain(po[0], &ob);
	if (open_e)
		(void)drain(pe[0], &eb);
	close(po[0]);
	close(pe[0]);
	close(pidfd);

	grow_append(&ob, "", 0);
	grow_append(&eb, "", 0);
	out->out = ob.data;
	out->out_len = ob.len;
	out->err = eb.data;
	out->err_len = eb.len;
	if (WIFEXITED(st))
		out->status = WEXITSTATUS(st);
	else
		out->status = 128 + WTERMSIG(st);
	if (json) {
		json_error_t jerr;

		out->json = json_loadb(out->out, out->out_len, 0, &jerr);
		keep_result(out);
	}
	return out->status;
}

void
run_out_free(struct run_out *out)
{
	free(out->out);
	free(out->err);
	json_decref(out->json);
	memset(out, 0, sizeof(*out));
}

char *
harness_read_file(const char *path, size_t *len)
{
	struct growbuf b = {0};
	char chunk[16384];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return NULL;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			close(fd);
			free(b.data);
			errno = e;
			return NULL;
		}
		grow_append(&b, chunk, (size_t)n);
	}
	close(fd);
	grow_append(&b, "", 0);
	if (len != NULL)
		*len = b.len;
	return b.data;
}

void
harness_write_file(const char *path, const char *data)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(data);

	cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len, "write %s", path);
	cr_assert_eq(close(fd), 0);
}

/* Scans /proc once; returns how many processes carry MARKER. */
static int
scan_marked(const char *marker, pid_t *pids, size_t npids)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t mlen = strlen(marker);
	pid_t self = getpid();
	int count = 0;

	cr_assert_not_null(d, "opendir /proc: %s", strerror(errno));
	while ((de = readdir(d)) != NULL) {
		char path[300];
		size_t len;
		char *cmd;
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		cmd = harness_read_file(path, &len);
		if (cmd == NULL)
			continue; /* gone, or unreadable */
		if (memmem(cmd, len, marker, mlen) != NULL) {
			if ((size_t)count < npids)
				pids[count] = pid;
			count++;
		}
		free(cmd);
	}
	closedir(d);
	return count;
}

int
harness_count_marked(const char *marker, int wait_ms, pid_t *pids, size_t npids)
{
	long deadline = harness_now_ms() + wait_ms;
	int n;

	for (;;) {
		n = scan_marked(marker, pids, npids);
		if (n == 0 || harness_now_ms() >= deadline)
			return n;
		usleep(20000);
	}
}

void
harness_proc_ticks(pid_t pid, char *state, unsigned long long *ticks)
{
	char path[64], *text, *p;
	unsigned long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = harness_read_file(path, NULL);
	cr_assert_not_null(text, "%s", path);
	/* The command name may hold anything, spaces and ')' too: the
	 * fields start after its last ')'. */
	p = strrchr(text, ')');
	cr_assert_not_null(p);
	cr_assert_eq(sscanf(p + 2,
			 "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%llu %llu",
			 state, &ut, &st),
	    3);
	*ticks = ut + st;
	free(text);
}
