/*
 * test_seccomp.c: the payload's seccomp filter (launcher/zygote/seccomp.c,
 * launcher/supervisor/denials.c, policy/seccomp-*.ini; issue 5, item 1 and
 * "What it must show"), observed from inside the jail through the real
 * `stockade run`.
 *
 * Each call is made by tests/lib/try_syscall.c, copied into the job's
 * workspace and run as /work/try-syscall NAME: one system call, one line
 * "NAME ret=R errno=E(ENAME)", exit 0. The filter's answer is told from
 * the kernel's in two ways: the errno (try-syscall's arguments make each
 * call fail otherwise, or succeed: ENOENT, EBADF, EINVAL, never the
 * filter's EPERM for most), and the call's entry in the result's
 * `denials`, which only the launcher's listener writes. docs/seccomp.md
 * is the contract: where the jail contradicts it, the test fails saying
 * so.
 *
 * Then real programs under the default profile, which must run with no
 * denial at all, and the strict profile.
 *
 * Registered twice (tests/meson.build), as the invoking user and as
 * 65534; a skip for a kernel layer fails under STOCKADE_MUST_WORK=1.
 * Programs the host lacks (gcc, git, numpy) skip with the reason.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "harness.h"
#include "x86_abi.h"

/*
 * try-syscall's bytes, read before harness_setup drops privileges: the
 * 65534 variant's copy of the test binaries (tests/lib/harness.c) holds only
 * the helpers it lists, and the build tree may not be readable by 65534.
 * Empty, with load_error set, when it could not be read.
 */
static char *helper_bytes;
static size_t helper_len;
static char load_error[PATH_MAX + 128];

static void
load_helper(void)
{
	const char *bin = getenv("STOCKADE_BIN");
	char dir[PATH_MAX], path[PATH_MAX + 32];

	if (bin == NULL || strlen(bin) >= sizeof(dir)) {
		snprintf(load_error, sizeof(load_error), "STOCKADE_BIN unset");
		return;
	}
	snprintf(dir, sizeof(dir), "%s", bin);
	snprintf(path, sizeof(path), "%s/tests/try-syscall", dirname(dir));
	helper_bytes = harness_read_file(path, &helper_len);
	if (helper_bytes == NULL)
		snprintf(load_error, sizeof(load_error), "%s: %s", path,
		    strerror(errno));
}

static void
seccomp_init(void)
{
	load_helper();
	harness_setup();
}

static void
seccomp_fini(void)
{
	free(helper_bytes);
	helper_bytes = NULL;
	harness_cleanup();
}

TestSuite(seccomp, .init = seccomp_init, .fini = seccomp_fini, .timeout = 120);

/* A fresh workspace holding /work/try-syscall (mode 0755). */
static const char *
workspace_with_helper(void)
{
	const char *ws = harness_workspace();
	char path[PATH_MAX];
	int fd;

	cr_assert_not_null(helper_bytes, "try-syscall: %s", load_error);
	snprintf(path, sizeof(path), "%s/try-syscall", ws);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, helper_bytes, helper_len), (ssize_t)helper_len,
	    "%s: %s", path, strerror(errno));
	cr_assert_eq(close(fd), 0);
	cr_assert_eq(chmod(path, 0755), 0);
	return ws;
}

/* The string field KEY of the result ("" when absent or null). */
static const char *
jstr(const struct run_out *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o->json, key));

	return v != NULL ? v : "";
}

/* Asserts that O has a JSON result. */
static void
need_json(const struct run_out *o)
{
	cr_assert_not_null(o->json, "no JSON result (exit %d): %s / %s",
	    o->status, o->out, o->err);
}

/*
 * The count of SYSCALL in the result's denials, 0 when absent. Checks
 * every entry's shape on the way: a name, count >= 1, and
 * 0 <= first_ms <= wall_ms.
 */
static long long
denial_count(const struct run_out *o, const char *syscall)
{
	json_t *d = json_object_get(o->json, "denials"), *e;
	long long wall = json_integer_value(
	    json_object_get(o->json, "wall_ms"));
	long long found = 0;
	size_t i;

	cr_assert(json_is_array(d), "denials is not an array: %s", o->out);
	json_array_foreach(d, i, e)
	{
		const char *name = json_string_value(
		    json_object_get(e, "syscall"));
		json_t *count = json_object_get(e, "count");
		json_t *first = json_object_get(e, "first_ms");

		cr_assert_not_null(name, "a denial without a name: %s", o->out);
		cr_assert(json_is_integer(count) &&
			json_integer_value(count) >= 1,
		    "denial %s: count: %s", name, o->out);
		cr_assert(json_is_integer(first) &&
			json_integer_value(first) >= 0 &&
			json_integer_value(first) <= wall,
		    "denial %s: first_ms not within the job: %s", name, o->out);
		if (strcmp(name, syscall) == 0)
			found = json_integer_value(count);
	}
	return found;
}

static size_t
denials_len(const struct run_out *o)
{
	return json_array_size(json_object_get(o->json, "denials"));
}

/* Asserts the job ran to its end with exit 0 and nothing refused. */
static void
expect_clean(const struct run_out *o)
{
	need_json(o);
	cr_assert_str_eq(jstr(o, "status"), "ok", "%s", o->out);
	cr_assert_eq(json_integer_value(json_object_get(o->json, "exit_code")),
	    0, "%s", o->out);
	(void)denial_count(o, "");
	cr_assert_eq(denials_len(o), 0,
	    "the profile refused a call the program makes: %s", o->out);
}

/* Runs /work/try-syscall CALL under POLICY (NULL: the default). */
static void
run_call(const char *call, const char *policy, struct run_out *o)
{
	const char *ws = workspace_with_helper();

	if (policy != NULL)
		RUN(o, "run", "--json", "--policy", policy, "--workspace", ws,
		    "--", "/work/try-syscall", call);
	else
		RUN(o, "run", "--json", "--workspace", ws, "--",
		    "/work/try-syscall", call);
	need_json(o);
}

/*
 * The errno name try-syscall printed for CALL ("OK" for success), and its
 * return value in *RET. Asserts the line's form.
 */
static const char *
call_errno(const struct run_out *o, const char *call, long *ret)
{
	static char name[64];
	char prefix[128];
	const char *out = jstr(o, "stdout");
	int e;

	snprintf(prefix, sizeof(prefix), "%s ret=", call);
	cr_assert_eq(strncmp(out, prefix, strlen(prefix)), 0,
	    "try-syscall printed no line for %s: %s", call, o->out);
	cr_assert_eq(sscanf(out + strlen(prefix), "%ld errno=%d(%63[A-Z0-9])",
			 ret, &e, name),
	    3, "try-syscall's line: %s", out);
	cr_assert_eq(e == 0, strcmp(name, "OK") == 0, "%s", out);
	return name;
}

/*
 * CALL refused by the filter: the job ran on (status ok, exit 0: the
 * program handled the refusal), the call failed with WANT, and the
 * result's denials name DENIAL, the only refusal of the job. CLAIM is what
 * docs/seccomp.md promises, for the failure message.
 */
static void
expect_denied(const char *call, const char *want, const char *denial,
    const char *claim)
{
	struct run_out o;
	const char *got;
	long ret;

	run_call(call, NULL, &o);
	got = call_errno(&o, call, &ret);
	cr_assert_str_eq(got, want,
	    "%s answered %s (ret %ld), not the filter's %s; "
	    "docs/seccomp.md: %s. Result: %s",
	    call, got, ret, want, claim, o.out);
	cr_assert_geq(denial_count(&o, denial), 1,
	    "%s is not in the result's denials as \"%s\" "
	    "(docs/seccomp.md: every refusal is recorded): %s",
	    call, denial, o.out);
	cr_assert_eq(denials_len(&o), 1, "other calls refused too: %s", o.out);
	cr_assert_str_eq(jstr(&o, "status"), "ok", "%s", o.out);
	cr_assert_eq(json_integer_value(json_object_get(o.json, "exit_code")),
	    0, "%s", o.out);
	run_out_free(&o);
}

#define DENY_LIST "denied by the issue's list and the default profile"

/* One Test per refused call: errno EPERM and the denial's name. */
#define DENIED(test, call, denial)                               \
	Test(seccomp, test)                                      \
	{                                                        \
		expect_denied(call, "EPERM", denial, DENY_LIST); \
	}

DENIED(ptrace, "ptrace", "ptrace")
DENIED(process_vm_readv, "process_vm_readv", "process_vm_readv")
DENIED(process_vm_writev, "process_vm_writev", "process_vm_writev")
DENIED(bpf, "bpf", "bpf")
DENIED(perf_event_open, "perf_event_open", "perf_event_open")
DENIED(userfaultfd, "userfaultfd", "userfaultfd")
DENIED(keyctl, "keyctl", "keyctl")
DENIED(add_key, "add_key", "add_key")
DENIED(request_key, "request_key", "request_key")
DENIED(mount, "mount", "mount")
DENIED(umount2, "umount2", "umount2")
DENIED(pivot_root, "pivot_root", "pivot_root")
DENIED(fsopen, "fsopen", "fsopen")
DENIED(fsmount, "fsmount", "fsmount")
DENIED(fsconfig, "fsconfig", "fsconfig")
DENIED(move_mount, "move_mount", "move_mount")
DENIED(open_tree, "open_tree", "open_tree")
DENIED(mount_setattr, "mount_setattr", "mount_setattr")
DENIED(unshare_newuser, "unshare-user", "unshare")
DENIED(setns, "setns", "setns")
DENIED(kexec_load, "kexec_load", "kexec_load")
DENIED(kexec_file_load, "kexec_file_load", "kexec_file_load")
DENIED(init_module, "init_module", "init_module")
DENIED(finit_module, "finit_module", "finit_module")
DENIED(delete_module, "delete_module", "delete_module")
DENIED(swapon, "swapon", "swapon")
DENIED(reboot, "reboot", "reboot")
DENIED(acct, "acct", "acct")
DENIED(quotactl, "quotactl", "quotactl")
DENIED(lookup_dcookie, "lookup_dcookie", "lookup_dcookie")
DENIED(open_by_handle_at, "open_by_handle_at", "open_by_handle_at")
DENIED(name_to_handle_at, "name_to_handle_at", "name_to_handle_at")
DENIED(settimeofday, "settimeofday", "settimeofday")
DENIED(clock_settime, "clock_settime", "clock_settime")
DENIED(io_uring_setup, "io_uring_setup", "io_uring_setup")
DENIED(io_uring_enter, "io_uring_enter", "io_uring_enter")
DENIED(io_uring_register, "io_uring_register", "io_uring_register")

/* The fixed argument rules (docs/seccomp.md, "Rules no profile can
 * weaken"). */
Test(seccomp, personality_read_implies_exec)
{
	expect_denied("personality-readimplies", "EPERM", "personality",
	    "personality other than the default persona is refused");
}

Test(seccomp, clone_with_a_namespace_flag)
{
	expect_denied("clone-newns", "EPERM", "clone",
	    "clone with any namespace flag is refused, recorded");
}

Test(seccomp, ioctl_tiocsti)
{
	expect_denied("tiocsti", "EPERM", "ioctl",
	    "ioctl TIOCSTI is refused, recorded");
}

Test(seccomp, ioctl_tiocsti_with_high_bits)
{
	/* The kernel reads the request's low 32 bits: this is TIOCSTI. A
	 * filter comparing all 64 bits sees a number past TIOCLINUX. */
	expect_denied("tiocsti-high", "EPERM", "ioctl",
	    "TIOCSTI is compared on the low 32 bits the kernel "
	    "reads, so high bits cannot slip past (TIOCSTI | 1 << "
	    "32 got through to the kernel: ENOTTY is the kernel's "
	    "answer for /dev/null)");
}

Test(seccomp, ioctl_tioclinux)
{
	expect_denied("tioclinux", "EPERM", "ioctl",
	    "ioctl TIOCLINUX is refused, recorded");
}

Test(seccomp, socket_mptcp)
{
	expect_denied("socket-mptcp", "EAFNOSUPPORT", "socket",
	    "inet sockets only with an IP protocol below 256: MPTCP "
	    "refused, recorded");
}

Test(seccomp, socketpair_netlink)
{
	expect_denied("socketpair-netlink", "EPERM", "socketpair",
	    "socketpair other than AF_UNIX is refused, recorded");
}

Test(seccomp, prctl_set_seccomp)
{
	expect_denied("prctl-seccomp", "EPERM", "prctl",
	    "prctl(PR_SET_SECCOMP) is refused, recorded: a filter "
	    "of the job's own could hide refusals");
}

Test(seccomp, socket_netlink)
{
	expect_denied("socket-netlink", "EAFNOSUPPORT", "socket",
	    "socket other than AF_UNIX, AF_INET, AF_INET6: "
	    "EAFNOSUPPORT, recorded");
}

Test(seccomp, socket_packet)
{
	expect_denied("socket-packet", "EAFNOSUPPORT", "socket",
	    "socket other than AF_UNIX, AF_INET, AF_INET6: "
	    "EAFNOSUPPORT, recorded");
}

Test(seccomp, socket_vsock)
{
	expect_denied("socket-vsock", "EAFNOSUPPORT", "socket",
	    "socket other than AF_UNIX, AF_INET, AF_INET6: "
	    "EAFNOSUPPORT, recorded");
}

/* clone3's ENOSYS is an answer for libc, not a refusal: no denial. */
Test(seccomp, clone3_is_enosys_not_a_denial)
{
	struct run_out o;
	const char *got;
	long ret;

	run_call("clone3", NULL, &o);
	got = call_errno(&o, "clone3", &ret);
	cr_assert_str_eq(got, "ENOSYS",
	    "clone3 answered %s (ret %ld); "
	    "docs/seccomp.md: clone3 gets ENOSYS: %s",
	    got, ret, o.out);
	expect_clean(&o);
	run_out_free(&o);
}

/* ---- allowed calls ----------------------------------------------------------
 * */

static void
expect_allowed(const char *call)
{
	struct run_out o;
	const char *got;
	long ret;

	run_call(call, NULL, &o);
	got = call_errno(&o, call, &ret);
	cr_assert_str_eq(got, "OK", "%s failed with %s: %s", call, got, o.out);
	cr_assert_geq(ret, 0, "%s", o.out);
	expect_clean(&o);
	run_out_free(&o);
}

Test(seccomp, getpid_is_allowed)
{
	expect_allowed("getpid");
}

Test(seccomp, socket_inet_is_allowed)
{
	expect_allowed("socket-inet");
}

Test(seccomp, personality_default_is_allowed)
{
	expect_allowed("personality-default");
}

/* ---- foreign ABIs -----------------------------------------------------------
 * */

/* CALL through a foreign ABI ends the job: policy_violation, SIGKILL,
 * the denial DENIAL ("x32:39") named in denials and in the detail. */
static void
expect_abi_kill(const char *call, const char *denial, struct run_out *o)
{
	run_call(call, NULL, o);
	cr_assert_str_eq(jstr(o, "status"), "policy_violation",
	    "docs/seccomp.md: a foreign ABI ends the job: %s", o->out);
	cr_assert_str_eq(jstr(o, "signal"), "SIGKILL", "%s", o->out);
	cr_assert(json_is_null(json_object_get(o->json, "exit_code")), "%s",
	    o->out);
	cr_assert_eq(denial_count(o, denial), 1, "%s not in denials: %s",
	    denial, o->out);
	cr_assert_eq(denials_len(o), 1, "%s", o->out);
	cr_assert_not_null(strstr(jstr(o, "detail"), denial),
	    "the detail does not name %s: %s", denial, o->out);
}

Test(seccomp, x32_call_ends_the_job)
{
	struct run_out o;

	expect_abi_kill("x32", "x32:39", &o);
	run_out_free(&o);
}

/*
 * int 0x80 on a kernel without the i386 entry (x86_has_i386_entry() is
 * false) faults before any system call exists for a filter to see: the
 * job is a crash by SIGSEGV with no denial, and the call never returns.
 */
static void
expect_int80_fault(struct run_out *o)
{
	run_call("int80", NULL, o);
	cr_assert_str_eq(jstr(o, "status"), "crash",
	    "no i386 entry: int 0x80 faults: %s", o->out);
	cr_assert_str_eq(jstr(o, "signal"), "SIGSEGV", "%s", o->out);
	cr_assert_eq(denials_len(o), 0,
	    "a denial for a call the kernel "
	    "never made: %s",
	    o->out);
}

/* The i386 ABI: killed by the filter where the kernel has the entry,
 * a fault where it has none; both branches assert what this kernel
 * must give (x86_abi.h). */
static void
expect_int80(struct run_out *o)
{
	if (x86_has_i386_entry())
		expect_abi_kill("int80", "i386:20", o);
	else
		expect_int80_fault(o);
}

Test(seccomp, int80_call_ends_the_job)
{
	struct run_out o;

	expect_int80(&o);
	run_out_free(&o);
}

/*
 * A call that ends the job must not return to the program first (the
 * issue: the x32 and i386 ABIs "are killed"; docs/seccomp.md: "the
 * launcher ends the job"). try-syscall prints as soon as its call
 * returns, so any output means the program ran on after the refused
 * call. The launcher racing its answer against its kill shows only some
 * of the time: several runs of each.
 */
Test(seccomp, a_killing_refusal_never_returns, .timeout = 300)
{
	struct run_out o;

	for (int round = 0; round < 5; round++)
		for (size_t i = 0; i < 2; i++) {
			if (i == 0)
				expect_abi_kill("x32", "x32:39", &o);
			else
				expect_int80(&o);
			cr_assert_str_eq(jstr(&o, "stdout"), "",
			    "the refused %s call returned to the "
			    "program before the job was killed "
			    "(round %d): %s",
			    i == 0 ? "x32" : "int80", round + 1, o.out);
			run_out_free(&o);
		}
}

/* ---- real programs under the default profile
 * --------------------------------- */

/* Runs ARGV (a NULL-terminated list, after "--") in a fresh workspace
 * holding the file NAME with TEXT (when NAME is not NULL). */
static void
run_in_workspace(const char *name, const char *text, const char *const argv[],
    struct run_out *o)
{
	const char *ws = harness_workspace();
	const char *full[32];
	char path[PATH_MAX];
	size_t n = 0;

	if (name != NULL) {
		snprintf(path, sizeof(path), "%s/%s", ws, name);
		harness_write_file(path, text);
	}
	full[n++] = "run";
	full[n++] = "--json";
	full[n++] = "--workspace";
	full[n++] = ws;
	full[n++] = "--";
	for (size_t i = 0; argv[i] != NULL; i++) {
		cr_assert_lt(n, sizeof(full) / sizeof(full[0]) - 1);
		full[n++] = argv[i];
	}
	full[n] = NULL;
	harness_run(full, o);
	need_json(o);
}

#define RUN_IN(o, name, text, ...)                               \
	do {                                                     \
		const char *const argv_[] = {__VA_ARGS__, NULL}; \
		run_in_workspace((name), (text), argv_, (o));    \
	} while (0)

Test(seccomp, python_subprocess_falls_back_from_clone3)
{
	struct run_out o;

	/* glibc's posix_spawn and fork try clone3 first; ENOSYS sends
	 * them to clone, whose flags the filter reads. */
	RUN_IN(&o, NULL, NULL, "python3", "-c",
	    "import os, subprocess\n"
	    "r = subprocess.run(['true'])\n"
	    "out = subprocess.run(['sh', '-c', 'echo child'],\n"
	    "                     capture_output=True, text=True).stdout\n"
	    "pid = os.fork()\n"
	    "if pid == 0:\n"
	    "    os._exit(7)\n"
	    "_, st = os.waitpid(pid, 0)\n"
	    "print(r.returncode, out.strip(), "
	    "os.waitstatus_to_exitcode(st))\n");
	expect_clean(&o);
	cr_assert_str_eq(jstr(&o, "stdout"), "0 child 7\n", "%s", o.out);
	run_out_free(&o);
}

Test(seccomp, python_multiprocessing_and_threading)
{
	static const char script[] =
	    "import multiprocessing, threading\n"
	    "def square(x):\n"
	    "    return x * x\n"
	    "def work(out, i):\n"
	    "    out[i] = sum(range(i * 1000))\n"
	    "if __name__ == '__main__':\n"
	    "    with multiprocessing.Pool(2) as pool:\n"
	    "        print(sum(pool.map(square, range(10))))\n"
	    "    out = [0] * 4\n"
	    "    ts = [threading.Thread(target=work, args=(out, i))\n"
	    "          for i in range(4)]\n"
	    "    [t.start() for t in ts]\n"
	    "    [t.join() for t in ts]\n"
	    "    print(sum(out))\n";
	struct run_out o;

	RUN_IN(&o, "mp.py", script, "python3", "mp.py");
	expect_clean(&o);
	/* 0 + 1 + ... + 81; and sum(range(k)) for k = 0, 1000, 2000,
	 * 3000. */
	cr_assert_str_eq(jstr(&o, "stdout"), "285\n6997000\n", "%s", o.out);
	run_out_free(&o);
}

Test(seccomp, numpy)
{
	static const char script[] =
	    "import numpy\n"
	    "a = numpy.arange(100 * 100, dtype=float).reshape(100, 100)\n"
	    "b = a @ a.T\n"
	    "print(int(numpy.trace(numpy.linalg.inv(numpy.eye(50) * 2)) * 4),"
	    " int(b[1, 1]))\n";
	struct run_out o;

	RUN_IN(&o, NULL, NULL, "python3", "-c", "import numpy");
	need_json(&o);
	if (strstr(jstr(&o, "stderr"), "No module named 'numpy'") != NULL) {
		run_out_free(&o);
		cr_skip_test("numpy is not installed for the jail's python3");
		return;
	}
	expect_clean(&o);
	run_out_free(&o);
	RUN_IN(&o, NULL, NULL, "python3", "-c", script);
	expect_clean(&o);
	/* trace(inv(2I)) * 4 = 50 * 0.5 * 4; sum of (100 + j)^2, j < 100. */
	cr_assert_str_eq(jstr(&o, "stdout"), "100 2318350\n", "%s", o.out);
	run_out_free(&o);
}

/* True when PROGRAM is on the host's /usr (the jail binds it). */
static bool
have(const char *program)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/usr/bin/%s", program);
	return access(path, X_OK) == 0;
}

Test(seccomp, gcc_compiles_and_runs_a_c_file)
{
	static const char source[] =
	    "#include <stdio.h>\n"
	    "int main(void) { printf(\"%d\\n\", 6 * 7); return 0; }\n";
	struct run_out o;

	if (!have("gcc")) {
		cr_skip_test("no gcc on this host");
		return;
	}
	RUN_IN(&o, "hello.c", source, "sh", "-c",
	    "gcc -O2 -Wall -o hello hello.c && ./hello");
	expect_clean(&o);
	cr_assert_str_eq(jstr(&o, "stdout"), "42\n", "%s", o.out);
	run_out_free(&o);
}

Test(seccomp, sh_pipes_substitutions_and_subshells)
{
	struct run_out o;

	RUN_IN(&o, NULL, NULL, "sh", "-c",
	    "echo a | tr a b; x=$(echo sub); echo $x; (exit 3); echo $?; "
	    "sleep 0 & wait; echo $?");
	expect_clean(&o);
	cr_assert_str_eq(jstr(&o, "stdout"), "b\nsub\n3\n0\n", "%s", o.out);
	run_out_free(&o);
}

Test(seccomp, git_init_and_commit_in_work)
{
	struct run_out o;

	if (!have("git")) {
		cr_skip_test("no git on this host");
		return;
	}
	RUN_IN(&o, NULL, NULL, "sh", "-c",
	    "git init -q /work/repo && cd /work/repo && echo x > f && "
	    "git add f && git -c user.name=t -c user.email=t@example.org "
	    "commit -q -m first && git log --format=%s");
	expect_clean(&o);
	cr_assert_str_eq(jstr(&o, "stdout"), "first\n", "%s", o.out);
	run_out_free(&o);
}

Test(seccomp, tar_create_and_extract_in_work)
{
	struct run_out o;

	RUN_IN(&o, NULL, NULL, "sh", "-c",
	    "mkdir -p d/e && echo x > d/e/f && ln -s e/f d/l && "
	    "tar cf a.tar d && mkdir out && tar xf a.tar -C out && "
	    "cat out/d/e/f out/d/l && tar tf a.tar | sort");
	expect_clean(&o);
	cr_assert_str_eq(jstr(&o, "stdout"), "x\nx\nd/\nd/e/\nd/e/f\nd/l\n",
	    "%s", o.out);
	run_out_free(&o);
}

/* unshare(1) fails and says why; the program's non-zero exit after a
 * refusal is policy_violation naming the call (docs/seccomp.md). */
Test(seccomp, unshare_command_fails)
{
	struct run_out o;

	if (!have("unshare")) {
		/* util-linux's unshare is absent: the bare call instead. */
		expect_denied("unshare-user", "EPERM", "unshare", DENY_LIST);
		return;
	}
	RUN_IN(&o, NULL, NULL, "unshare", "-U", "true");
	cr_assert_str_eq(jstr(&o, "status"), "policy_violation",
	    "docs/seccomp.md: a non-zero exit after a refusal is "
	    "policy_violation: %s",
	    o.out);
	cr_assert_neq(json_integer_value(json_object_get(o.json, "exit_code")),
	    0, "%s", o.out);
	cr_assert_geq(denial_count(&o, "unshare"), 1, "%s", o.out);
	cr_assert_not_null(strstr(jstr(&o, "stderr"),
			       "Operation not permitted"),
	    "%s", o.out);
	cr_assert_not_null(strstr(jstr(&o, "detail"), "unshare"),
	    "the detail does not name the call: %s", o.out);
	run_out_free(&o);
}

/* ---- the strict profile ---------------------------------------------------
 * */

static const char *
strict_policy(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/strict.ini",
	    harness_tmpdir("stockade-seccomp-policy"));
	harness_write_file(path, "[jail]\nseccomp_profile = strict\n");
	return path;
}

/* Asserts that the strict profile refused nothing but EXCEPT (NULL:
 * nothing at all). */
static void
expect_strict_refused_only(const struct run_out *o, const char *except)
{
	json_t *d = json_object_get(o->json, "denials"), *e;
	size_t i;

	(void)denial_count(o, "");
	json_array_foreach(d, i, e)
	{
		const char *name = json_string_value(
		    json_object_get(e, "syscall"));

		if (except != NULL && strcmp(name, except) == 0)
			continue;
		cr_assert_fail("the strict profile (docs/seccomp.md: \"one "
			       "static program\") refused %s, which "
			       "try-syscall, a static glibc program, makes "
			       "%s: %s",
		    name,
		    strcmp(name, "readlink") == 0
			? "at start-up (readlink(\"/proc/self/"
			  "exe\") in static glibc's "
			  "initialisation)"
			: "outside the call it was asked for",
		    o->out);
	}
}

Test(seccomp, strict_profile_runs_a_static_program)
{
	struct run_out o;
	const char *got;
	long ret;

	run_call("getpid", strict_policy(), &o);
	expect_strict_refused_only(&o, NULL);
	got = call_errno(&o, "getpid", &ret);
	cr_assert_str_eq(got, "OK", "%s", o.out);
	expect_clean(&o);
	run_out_free(&o);
}

Test(seccomp, strict_profile_ends_the_job_at_a_refusal)
{
	struct run_out o;

	/* socket is not in the strict profile at all: denied = kill. */
	run_call("socket-inet", strict_policy(), &o);
	expect_strict_refused_only(&o, "socket");
	cr_assert_str_eq(jstr(&o, "status"), "policy_violation",
	    "docs/seccomp.md: under strict a refused call ends "
	    "the job: %s",
	    o.out);
	cr_assert_str_eq(jstr(&o, "signal"), "SIGKILL", "%s", o.out);
	cr_assert_eq(denial_count(&o, "socket"), 1, "%s", o.out);
	cr_assert_not_null(strstr(jstr(&o, "detail"), "socket"),
	    "the detail does not name the call: %s", o.out);
	run_out_free(&o);
}

/*
 * A refused call whose caller is interrupted by a signal before the
 * launcher answers (the kernel then says ENOENT, which libseccomp reports
 * as ECANCELED): nothing to answer, and not a reason to end the job. Four
 * threads make refused calls while the main thread signals them for a
 * second; the job must end ok, its refusals recorded.
 */
Test(seccomp, interrupted_refusals_do_not_end_the_job, .timeout = 60)
{
	static const char script[] =
	    "import ctypes, signal, threading, time\n"
	    "libc = ctypes.CDLL(None, use_errno=True)\n"
	    "signal.signal(signal.SIGUSR1, lambda *a: None)\n"
	    "stop = False\n"
	    "def spin():\n"
	    "    while not stop:\n"
	    "        libc.ptrace(0, 0, 0, 0)\n"
	    "ts = [threading.Thread(target=spin) for _ in range(4)]\n"
	    "for t in ts:\n"
	    "    t.start()\n"
	    "end = time.time() + 1\n"
	    "while time.time() < end:\n"
	    "    for t in ts:\n"
	    "        signal.pthread_kill(t.ident, signal.SIGUSR1)\n"
	    "stop = True\n"
	    "for t in ts:\n"
	    "    t.join()\n"
	    "print('survived')\n";
	struct run_out o;

	RUN(&o, "run", "--json", "--timeout", "20", "--", "python3", "-c",
	    script);
	cr_assert_not_null(o.json, "no result: %s / %s", o.out, o.err);
	cr_assert_str_eq(json_string_value(json_object_get(o.json, "status")),
	    "ok", "%s", o.out);
	cr_assert_str_eq(json_string_value(json_object_get(o.json, "stdout")),
	    "survived\n", "%s", o.out);
	cr_assert_geq(denial_count(&o, "ptrace"), 1, "%s", o.out);
	run_out_free(&o);
}
