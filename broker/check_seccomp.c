/*
 * check_seccomp.c: the seccomp checks of `stockade check` (check.h), and
 * the boundary checks that stockade's own processes, the broker and the
 * launcher, are confined (docs/confinement.md).
 *
 * The jail's filter (docs/seccomp.md; launcher/seccomp.c) is observed
 * from inside: each check runs a job of `stockade-probe sys CALL...`
 * (probe_seccomp.c), which makes each call with harmless arguments and
 * prints the errno it got, and compares three things with what a sound
 * filter gives: each call's answer (the filter's EPERM, EAFNOSUPPORT or
 * ENOSYS, never the kernel's own answer, which would mean the call
 * reached the kernel), the result's "denials" (each refusal recorded by
 * name, with its count) and the job's "status". The foreign ABIs must end
 * the job at the call (policy_violation).
 *
 * The broker and the launcher are observed from outside: a job that
 * sleeps is started, the two processes are found in /proc (the broker is
 * the `stockade run` process, the launcher its child whose own
 * grandchild is the job), and their /proc/PID/status is compared with
 * their contracts (broker/confine.h, launcher/confine.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Every job here is a few probe calls: a hang is a defect. */
#define JOB_DEADLINE_MS 10000

#define MAX_CALLS 12
#define MAX_DENIALS 8

/* A denial the result must list, with its exact count. */
struct denial_want {
	const char *name;
	unsigned count;
};

/*
 * One `stockade-probe sys` job and what a sound filter gives: each call
 * answered WANT[i], the result's denials exactly DEN (no other), status
 * "ok" (the probe handles each refusal and exits 0; docs/seccomp.md: "A
 * program that handles the refusal and exits 0 is ok, with its denials
 * listed").
 */
struct sys_spec {
	const char *calls[MAX_CALLS];
	const char *want[MAX_CALLS];
	struct denial_want den[MAX_DENIALS];
	bool no_suid_mode; /* the mode file must have no 06000 bit */
	const char *policy; /* NULL: the embedded default */
};

/* Appends printf-style text to BUF (LEN bytes), truncating quietly. */
static void __attribute__((format(printf, 3, 4)))
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* The result's denials as "name xCOUNT, name xCOUNT", or "none". */
static void
denials_text(const struct check_job *j, char *buf, size_t len)
{
	json_t *arr = json_object_get(j->result, "denials");
	size_t i;
	json_t *d;

	buf[0] = '\0';
	json_array_foreach(arr, i, d)
		append(buf, len, "%s%s x%" JSON_INTEGER_FORMAT, i > 0 ? ", " : "",
		       json_string_value(json_object_get(d, "syscall")) != NULL
			       ? json_string_value(json_object_get(d, "syscall"))
			       : "?",
		       json_integer_value(json_object_get(d, "count")));
	if (buf[0] == '\0')
		snprintf(buf, len, "none");
}

/* The denial NAME of J's result, or NULL. */
static json_t *
denial(const struct check_job *j, const char *name)
{
	json_t *arr = json_object_get(j->result, "denials");
	size_t i;
	json_t *d;

	json_array_foreach(arr, i, d) {
		const char *s = json_string_value(json_object_get(d, "syscall"));

		if (s != NULL && strcmp(s, name) == 0)
			return d;
	}
	return NULL;
}

/*
 * Compares J's denials with the N wanted ones (exactly those, with their
 * counts, each with a first_ms). Returns true when they match; otherwise
 * writes what differs into WHY.
 */
static bool
denials_match(const struct check_job *j, const struct denial_want *want,
	      size_t n, char *why, size_t len)
{
	json_t *arr = json_object_get(j->result, "denials");
	size_t i;
	json_t *d;

	if (!json_is_array(arr)) {
		snprintf(why, len, "the result has no \"denials\" array");
		return false;
	}
	for (size_t k = 0; k < n; k++) {
		json_t *got = denial(j, want[k].name);

		if (got == NULL) {
			snprintf(why, len, "%s is not in the result's denials",
				 want[k].name);
			return false;
		}
		if (json_integer_value(json_object_get(got, "count")) !=
		    (json_int_t)want[k].count) {
			snprintf(why, len, "the result's denials count %s x%"
				 JSON_INTEGER_FORMAT ", not x%u",
				 want[k].name,
				 json_integer_value(json_object_get(got,
								    "count")),
				 want[k].count);
			return false;
		}
		if (!json_is_integer(json_object_get(got, "first_ms"))) {
			snprintf(why, len, "the denial %s has no first_ms",
				 want[k].name);
			return false;
		}
	}
	json_array_foreach(arr, i, d) {
		const char *s = json_string_value(json_object_get(d, "syscall"));
		bool wanted = false;

		for (size_t k = 0; k < n && s != NULL; k++)
			wanted = wanted || strcmp(s, want[k].name) == 0;
		if (!wanted) {
			snprintf(why, len, "an unexpected denial %s in the "
				 "result", s != NULL ? s : "(no name)");
			return false;
		}
	}
	return true;
}

/* Whether ANSWER is one the jail's filter gives (docs/seccomp.md). */
static bool
filter_answer(const char *answer)
{
	return strcmp(answer, "EPERM") == 0 ||
	       strcmp(answer, "EAFNOSUPPORT") == 0 ||
	       strcmp(answer, "ENOSYS") == 0;
}

/* Runs the probe's `sys` with S's calls and judges it (struct sys_spec). */
static void
run_sys(struct check_ctx *c, struct check_result *r, const struct sys_spec *s)
{
	const char *argv[MAX_CALLS + 3];
	struct check_job_opts o;
	struct check_job j;
	char answers[300] = "", dens[200], why[300] = "", v[64];
	size_t n = 0, nd = 0;

	argv[n++] = "./stockade-probe";
	argv[n++] = "sys";
	for (size_t i = 0; i < MAX_CALLS && s->calls[i] != NULL; i++)
		argv[n++] = s->calls[i];
	argv[n] = NULL;
	while (nd < MAX_DENIALS && s->den[nd].name != NULL)
		nd++;
	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.policy = s->policy;
	o.deadline_ms = JOB_DEADLINE_MS;
	if (check_job_run(c, &o, &j) < 0 || j.result == NULL ||
	    j.proc.timed_out) {
		check_fail(r, "no result: %s",
			   check_job_summary(&j, why, sizeof(why)));
		check_job_free(&j);
		return;
	}
	for (size_t i = 0; s->calls[i] != NULL && i < MAX_CALLS; i++) {
		if (!check_value(&j, s->calls[i], v, sizeof(v)))
			snprintf(v, sizeof(v), "(no answer)");
		append(answers, sizeof(answers), "%s%s %s", i > 0 ? ", " : "",
		       s->calls[i], v);
		if (why[0] == '\0' && strcmp(v, s->want[i]) != 0)
			snprintf(why, sizeof(why), "%s answered %s, not %s%s",
				 s->calls[i], v, s->want[i],
				 filter_answer(s->want[i]) && !filter_answer(v)
				 ? " (the kernel's answer: the filter let it "
				   "through)" : "");
	}
	if (why[0] == '\0' && s->no_suid_mode) {
		if (!check_value(&j, "mode", v, sizeof(v)))
			snprintf(why, sizeof(why), "the probe printed no mode "
				 "for its file");
		else if ((strtoul(v, NULL, 8) & 06000) != 0)
			snprintf(why, sizeof(why), "the file was left mode %s: "
				 "a setuid or setgid bit got through", v);
		else
			append(answers, sizeof(answers), "; file mode %s", v);
	}
	denials_text(&j, dens, sizeof(dens));
	if (why[0] == '\0')
		(void)denials_match(&j, s->den, nd, why, sizeof(why));
	if (why[0] == '\0' && strcmp(j.status, "ok") != 0)
		snprintf(why, sizeof(why), "status %s, not ok (%s)", j.status,
			 json_string_value(json_object_get(j.result, "detail")));
	if (why[0] == '\0')
		check_pass(r, "%s; denials %s; status ok", answers, dens);
	else
		check_fail(r, "%s; %s; denials %s", why, answers, dens);
	check_job_free(&j);
}

/* A kernel built or booted without IA32 emulation (ia32_emulation=0) has
 * no int 0x80 entry: the instruction faults (SIGSEGV) before seccomp
 * sees a call, so there is no i386 ABI to filter. J shows that: the job
 * died of SIGSEGV with no denial. */
static bool
no_i386_entry(const struct check_job *j)
{
	const char *sig = json_string_value(json_object_get(j->result,
							    "signal"));

	return sig != NULL && strcmp(sig, "SIGSEGV") == 0 &&
	       json_array_size(json_object_get(j->result, "denials")) == 0;
}

/*
 * A call through the foreign ABI CALL ("x32", "int80") ends the job at the
 * call: the probe printed CALL.start=1 but no answer, the status is
 * policy_violation, the result's only denial is DENIAL ("x32:39") and
 * its detail names it. A filter written for x86_64 numbers would read
 * another ABI's numbers wrongly (seccomp(2), "Caveats"; CVE-2009-0835).
 */
static void
foreign_abi(struct check_ctx *c, struct check_result *r, const char *call,
	    const char *denial_name)
{
	const char *argv[] = {"./stockade-probe", "sys", call, NULL};
	const struct denial_want want[] = {{denial_name, 1}};
	struct check_job_opts o;
	struct check_job j;
	char key[32], v[64], dens[200], why[300] = "";
	const char *detail;

	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.deadline_ms = JOB_DEADLINE_MS;
	if (check_job_run(c, &o, &j) < 0 || j.result == NULL ||
	    j.proc.timed_out) {
		check_fail(r, "no result: %s",
			   check_job_summary(&j, why, sizeof(why)));
		check_job_free(&j);
		return;
	}
	detail = json_string_value(json_object_get(j.result, "detail"));
	denials_text(&j, dens, sizeof(dens));
	snprintf(key, sizeof(key), "%s.start", call);
	if (!check_value(&j, key, v, sizeof(v)))
		snprintf(why, sizeof(why), "the probe never made the call "
			 "(stdout \"%.100s\")", j.out);
	else if (check_value(&j, call, v, sizeof(v)))
		snprintf(why, sizeof(why), "the call returned %s to the "
			 "program, which ran on (status %s)", v, j.status);
	else if (strcmp(call, "int80") == 0 && no_i386_entry(&j)) {
		check_pass(r, "this kernel has no i386 entry (ia32_emulation "
			   "off): int 0x80 raised SIGSEGV before any filter, "
			   "denials %s", dens);
		check_job_free(&j);
		return;
	} else if (strcmp(j.status, "policy_violation") != 0)
		snprintf(why, sizeof(why), "status %s, not policy_violation",
			 j.status);
	else if (!denials_match(&j, want, 1, why, sizeof(why)))
		;
	else if (detail == NULL || strstr(detail, denial_name) == NULL)
		snprintf(why, sizeof(why), "the detail does not name %s: "
			 "\"%.200s\"", denial_name, detail != NULL ? detail : "");
	if (why[0] == '\0')
		check_pass(r, "the job ended at the call: status "
			   "policy_violation, denials %s", dens);
	else
		check_fail(r, "%s; denials %s", why, dens);
	check_job_free(&j);
}

/* seccomp.x32_abi_ends_job: getpid through the x32 ABI (the x32 bit
 * 0x40000000 in the number) ends the job (docs/seccomp.md). */
static void
x32_abi(struct check_ctx *c, struct check_result *r)
{
	foreign_abi(c, r, "x32", "x32:39");
}

/* seccomp.i386_abi_ends_job: getpid through `int $0x80` (the i386 ABI)
 * ends the job (docs/seccomp.md). */
static void
i386_abi(struct check_ctx *c, struct check_result *r)
{
	foreign_abi(c, r, "int80", "i386:20");
}

/* The families of the default profile's refusals (docs/seccomp.md,
 * launcher/seccomp.c, the rules no profile can weaken). */

/* Tracing another process or reading its memory (ptrace(2),
 * process_vm_readv(2)). */
static const struct sys_spec tracing = {
	{"ptrace", "process_vm_readv"},
	{"EPERM", "EPERM"},
	{{"ptrace", 1}, {"process_vm_readv", 1}},
};

/* Mounts and namespaces (mount(2), unshare(2), setns(2)). */
static const struct sys_spec namespaces = {
	{"mount", "unshare", "setns"},
	{"EPERM", "EPERM", "EPERM"},
	{{"mount", 1}, {"unshare", 1}, {"setns", 1}},
};

/* The kernel key ring, which no namespace separates (keyrings(7);
 * CVE-2016-0728). */
static const struct sys_spec keyring = {
	{"keyctl", "add_key", "request_key"},
	{"EPERM", "EPERM", "EPERM"},
	{{"keyctl", 1}, {"add_key", 1}, {"request_key", 1}},
};

/* Kernel attack surface: eBPF, perf events, userfaultfd (bpf(2),
 * perf_event_open(2), userfaultfd(2)). */
static const struct sys_spec attack_surface = {
	{"bpf", "perf_event_open", "userfaultfd"},
	{"EPERM", "EPERM", "EPERM"},
	{{"bpf", 1}, {"perf_event_open", 1}, {"userfaultfd", 1}},
};

/* Replacing the kernel or loading into it (kexec_load(2),
 * init_module(2)). */
static const struct sys_spec kernel_load = {
	{"kexec_load", "kexec_file_load", "init_module", "finit_module",
	 "delete_module"},
	{"EPERM", "EPERM", "EPERM", "EPERM", "EPERM"},
	{{"kexec_load", 1}, {"kexec_file_load", 1}, {"init_module", 1},
	 {"finit_module", 1}, {"delete_module", 1}},
};

/* Socket families beyond unix, inet and inet6: netlink (the kernel's
 * own configuration interfaces), packet (raw frames) and vsock, which
 * the network namespace does not isolate (vsock(7)). EAFNOSUPPORT, so a
 * program falls back as it would on a kernel without the family. */
static const struct sys_spec families = {
	{"socket_netlink", "socket_packet", "socket_vsock"},
	{"EAFNOSUPPORT", "EAFNOSUPPORT", "EAFNOSUPPORT"},
	{{"socket", 3}},
};

/* clone with a namespace flag: nested namespaces (clone(2)). */
static const struct sys_spec clone_ns = {
	{"clone_newuser", "clone_newns", "clone_newnet"},
	{"EPERM", "EPERM", "EPERM"},
	{{"clone", 3}},
};

/* personality other than the default persona: READ_IMPLIES_EXEC makes
 * every readable mapping executable, ADDR_NO_RANDOMIZE turns ASLR off
 * (personality(2)). */
static const struct sys_spec persona = {
	{"personality_readimplies", "personality_norandom"},
	{"EPERM", "EPERM"},
	{{"personality", 2}},
};

/* No setuid or setgid bit from chmod, fchmod or open(O_CREAT): the
 * workspace's files keep their bits on the host, where nosuid does not
 * hold (systemd's RestrictSUIDSGID=). */
static const struct sys_spec suid_modes = {
	{"chmod_setuid", "chmod_setgid", "fchmod_setuid", "open_setuid"},
	{"EPERM", "EPERM", "EPERM", "EPERM"},
	{{"chmod", 2}, {"fchmod", 1}, {"openat", 1}},
	.no_suid_mode = true,
};

/* io_uring: its operations run in kernel threads the filter never sees
 * (io_uring_setup(2)). */
static const struct sys_spec io_uring = {
	{"io_uring_setup", "io_uring_enter", "io_uring_register"},
	{"EPERM", "EPERM", "EPERM"},
	{{"io_uring_setup", 1}, {"io_uring_enter", 1},
	 {"io_uring_register", 1}},
};

/* ioctl TIOCSTI and TIOCLINUX, also with a high word set: the kernel
 * reads the request's low 32 bits, so TIOCSTI | 1 << 32 is TIOCSTI to
 * it (CVE-2016-7545, CVE-2017-5226; ioctl_tty(2)). Made on a pipe: a
 * filter that lets one through gets the kernel's ENOTTY. */
static const struct sys_spec tiocsti = {
	{"tiocsti", "tiocsti_high", "tioclinux"},
	{"EPERM", "EPERM", "EPERM"},
	{{"ioctl", 3}},
};

/* A filter of the job's own: ERRNO outranks USER_NOTIF, so its answers
 * would hide refusals from the result (seccomp(2), "Return values"). */
static const struct sys_spec own_filter = {
	{"prctl_seccomp", "seccomp"},
	{"EPERM", "EPERM"},
	{{"prctl", 1}, {"seccomp", 1}},
};

/* clone3 answers ENOSYS, not EPERM: its flags are in memory a filter
 * cannot read, and glibc falls back to clone on ENOSYS only, so a thread
 * and a fork still work; ENOSYS is an answer for libc, not a refusal,
 * and is not recorded. */
static const struct sys_spec clone3 = {
	{"clone3", "pthread", "fork"},
	{"ENOSYS", "ok", "ok"},
	{{NULL, 0}},
};

/* What the default profile allows works, each with an argument rule of
 * its own (a socket of an allowed family, fork, the default persona and
 * the query, a mode without setuid, an ioctl between the refused
 * requests), and no denial is recorded. */
static const struct sys_spec allowed = {
	{"getpid", "socket_inet", "socket_unix", "fork",
	 "personality_default", "personality_query", "chmod_plain",
	 "fionread"},
	{"ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"},
	{{NULL, 0}},
};

/* Each refusal is counted: the same call refused three times is one
 * denial with count 3 (docs/seccomp.md, "Every refusal is recorded"). */
static const struct sys_spec counted = {
	{"ptrace", "keyctl", "ptrace", "ptrace"},
	{"EPERM", "EPERM", "EPERM", "EPERM"},
	{{"ptrace", 3}, {"keyctl", 1}},
};

/* The check functions of the tables above, one each. */
#define SYS_CHECK(fn, spec)                                              \
	static void fn(struct check_ctx *c, struct check_result *r)      \
	{                                                                \
		run_sys(c, r, &(spec));                                  \
	}
SYS_CHECK(tracing_refused, tracing)
SYS_CHECK(namespaces_refused, namespaces)
SYS_CHECK(keyring_refused, keyring)
SYS_CHECK(attack_surface_refused, attack_surface)
SYS_CHECK(kernel_load_refused, kernel_load)
SYS_CHECK(families_refused, families)
SYS_CHECK(clone_ns_refused, clone_ns)
SYS_CHECK(persona_refused, persona)
SYS_CHECK(suid_modes_refused, suid_modes)
SYS_CHECK(io_uring_refused, io_uring)
SYS_CHECK(tiocsti_refused, tiocsti)
SYS_CHECK(own_filter_refused, own_filter)
SYS_CHECK(clone3_enosys, clone3)
SYS_CHECK(allowed_work, allowed)
SYS_CHECK(denials_counted, counted)

/*
 * seccomp.strict_refusal_ends_job: under the strict profile (`denied =
 * kill`, policy/seccomp-strict.ini) a refused call ends the job: the
 * allowed getpid before it answered, ptrace never returned, status
 * policy_violation with ptrace the one denial (docs/seccomp.md).
 */
static void
strict_kills(struct check_ctx *c, struct check_result *r)
{
	const char *argv[] = {"./stockade-probe", "sys", "getpid", "ptrace",
			      NULL};
	const struct denial_want want[] = {{"ptrace", 1}};
	struct check_job_opts o;
	struct check_job j;
	char v[64], dens[200], why[300] = "";

	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.policy = "[jail]\nseccomp_profile = strict\n";
	o.deadline_ms = JOB_DEADLINE_MS;
	if (check_job_run(c, &o, &j) < 0 || j.result == NULL ||
	    j.proc.timed_out) {
		check_fail(r, "no result: %s",
			   check_job_summary(&j, why, sizeof(why)));
		check_job_free(&j);
		return;
	}
	denials_text(&j, dens, sizeof(dens));
	if (!check_value(&j, "getpid", v, sizeof(v)) || strcmp(v, "ok") != 0)
		snprintf(why, sizeof(why), "the allowed getpid before it gave "
			 "\"%s\" (stdout \"%.100s\", status %s)", v, j.out,
			 j.status);
	else if (check_value(&j, "ptrace", v, sizeof(v)))
		snprintf(why, sizeof(why), "ptrace returned %s to the program, "
			 "which ran on (status %s)", v, j.status);
	else if (strcmp(j.status, "policy_violation") != 0)
		snprintf(why, sizeof(why), "status %s, not policy_violation",
			 j.status);
	else
		(void)denials_match(&j, want, 1, why, sizeof(why));
	if (why[0] == '\0')
		check_pass(r, "getpid ok, then ptrace ended the job: status "
			   "policy_violation, denials %s", dens);
	else
		check_fail(r, "%s; denials %s", why, dens);
	check_job_free(&j);
}

/* ---- the broker's and the launcher's own confinement ------------------- */

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
	int64_t until = mono_ms() + 2000;
	int st;

	kill(pid, SIGTERM);
	while (mono_ms() < until) {
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
			      "--timeout", "20", "--", "./stockade-probe",
			      "sleep", "10000", NULL};
	char *args[16];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	pid_t pid, l = 0;
	int64_t until;
	int e, st;

	snprintf(put, sizeof(put), "%s:stockade-probe", c->probe);
	for (size_t i = 0; i < sizeof(argv) / sizeof(argv[0]); i++)
		memcpy(&args[i], &argv[i], sizeof(args[i]));
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
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
				 POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	e = posix_spawn(&pid, c->stockade, &fa, &at, args, c->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e != 0) {
		snprintf(why, len, "cannot start %.200s: %s", c->stockade,
			 strerror(e));
		return -1;
	}
	until = mono_ms() + 5000;
	while (mono_ms() < until) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			snprintf(why, len, "stockade run ended (%s %d) before "
				 "its job ran", WIFEXITED(st) ? "exit" :
				 "signal", WIFEXITED(st) ? WEXITSTATUS(st) :
				 WTERMSIG(st));
			return -1;
		}
		if ((l = find_launcher(pid)) > 0)
			break;
		usleep(5000);
	}
	e = -1;
	if (l <= 0)
		snprintf(why, len, "no launcher with a running job under "
			 "stockade run (pid %d) within 5 s", (int)pid);
	else if (read_status(pid, broker) < 0 || read_status(l, launcher) < 0)
		snprintf(why, len, "cannot read /proc/%d/status or "
			 "/proc/%d/status", (int)pid, (int)l);
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

	buf[0] = '\0';
	if (__builtin_popcountll(mask) > 4) {
		snprintf(buf, len, "%d capabilities", __builtin_popcountll(mask));
		return;
	}
	for (unsigned cap = 0; cap < 64; cap++) {
		const char *nm = NULL;

		if ((mask & (1ULL << cap)) == 0)
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (names[i].cap == cap)
				nm = names[i].name;
		if (nm != NULL)
			append(buf, len, "%s%s", buf[0] != '\0' ? "," : "", nm);
		else
			append(buf, len, "%scap %u", buf[0] != '\0' ? "," : "",
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

	snprintf(line, sizeof(line), "%s %s (pid %d, euid %ld): NoNewPrivs "
		 "%d, Seccomp %d (%d filter%s), CapEff %016" PRIx64 ", CapBnd "
		 "%016" PRIx64, who, s->comm, (int)s->pid, s->euid, s->nnp,
		 s->seccomp, s->filters, s->filters == 1 ? "" : "s", s->eff,
		 s->bnd);
	if (s->nnp != 1)
		check_fail(r, "no_new_privs is not set: %s", line);
	else if (s->seccomp != 2 || s->filters < 1)
		check_fail(r, "no seccomp filter is loaded: %s", line);
	else if (((s->eff | s->prm) & ~may) != 0) {
		cap_names((s->eff | s->prm) & ~may, extra, sizeof(extra));
		check_fail(r, "it kept %s: %s", extra, line);
	} else if (s->inh != 0 || s->amb != 0)
		check_fail(r, "inheritable %016" PRIx64 " or ambient %016" PRIx64
			   " capabilities: %s", s->inh, s->amb, line);
	else if (s->euid == 0 && s->bnd != 0) {
		cap_names(s->bnd, extra, sizeof(extra));
		check_fail(r, "its bounding set still holds %s: %s", extra,
			   line);
	} else
		check_pass(r, "%s", line);
}

/* boundary.launcher_confined: the running launcher has no_new_privs, a
 * seccomp filter, and as root only CAP_DAC_READ_SEARCH with an empty
 * bounding set (launcher/confine.h; docs/confinement.md). */
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

/* boundary.broker_confined: the running broker (`stockade run`) has
 * no_new_privs, a seccomp filter, and as root only CAP_CHOWN,
 * CAP_DAC_OVERRIDE and CAP_FOWNER with an empty bounding set
 * (broker/confine.h; docs/confinement.md). */
static void
broker_confined(struct check_ctx *c, struct check_result *r)
{
	struct confined b, l;
	char why[300];

	if (observe_helpers(c, &b, &l, why, sizeof(why)) < 0) {
		check_fail(r, "%s", why);
		return;
	}
	judge(r, "broker", &b, 1ULL << CAP_CHOWN |
	      1ULL << CAP_DAC_OVERRIDE | 1ULL << CAP_FOWNER);
}

const struct check checks_seccomp[] = {
	{"seccomp.ptrace_process_vm_refused", "seccomp",
	 "ptrace and process_vm_readv: EPERM, both in denials, status ok",
	 tracing_refused},
	{"seccomp.mount_unshare_setns_refused", "seccomp",
	 "mount, unshare and setns: EPERM, each in denials", namespaces_refused},
	{"seccomp.keyring_calls_refused", "seccomp",
	 "keyctl, add_key and request_key: EPERM, each in denials",
	 keyring_refused},
	{"seccomp.bpf_perf_userfaultfd_refused", "seccomp",
	 "bpf, perf_event_open and userfaultfd: EPERM, each in denials",
	 attack_surface_refused},
	{"seccomp.kexec_module_calls_refused", "seccomp",
	 "kexec_load, kexec_file_load, init_module, finit_module, "
	 "delete_module: EPERM, each in denials", kernel_load_refused},
	{"seccomp.netlink_packet_vsock_refused", "seccomp",
	 "socket AF_NETLINK, AF_PACKET, AF_VSOCK: EAFNOSUPPORT, socket:3 in "
	 "denials", families_refused},
	{"seccomp.clone_namespace_flags_refused", "seccomp",
	 "clone with CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET: EPERM, clone:3 "
	 "in denials", clone_ns_refused},
	{"seccomp.personality_flags_refused", "seccomp",
	 "personality READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE: EPERM, "
	 "personality:2 in denials", persona_refused},
	{"seccomp.setuid_setgid_modes_refused", "seccomp",
	 "chmod 04755 and 02755, fchmod 04755, open(O_CREAT, 04755): EPERM, "
	 "file mode without 06000, in denials", suid_modes_refused},
	{"seccomp.io_uring_refused", "seccomp",
	 "io_uring_setup, io_uring_enter, io_uring_register: EPERM, each in "
	 "denials", io_uring_refused},
	{"seccomp.tiocsti_high_bits_refused", "seccomp",
	 "ioctl TIOCSTI, TIOCSTI | 1 << 32 and TIOCLINUX: EPERM (not the "
	 "kernel's ENOTTY), ioctl:3 in denials", tiocsti_refused},
	{"seccomp.own_filter_refused", "seccomp",
	 "prctl(PR_SET_SECCOMP) and seccomp(2): EPERM, both in denials",
	 own_filter_refused},
	{"seccomp.clone3_enosys_libc_falls_back", "seccomp",
	 "clone3: ENOSYS, not recorded; pthread_create and fork still work",
	 clone3_enosys},
	{"seccomp.allowed_calls_work", "seccomp",
	 "getpid, inet and unix sockets, fork, the default persona, chmod "
	 "0640, ioctl FIONREAD: ok, no denial", allowed_work},
	{"seccomp.denials_counted_in_result", "seccomp",
	 "ptrace refused 3 times and keyctl once: denials exactly ptrace:3 "
	 "keyctl:1 with first_ms, status ok", denials_counted},
	{"seccomp.x32_abi_ends_job", "seccomp",
	 "getpid through the x32 ABI never returns: policy_violation, "
	 "denial x32:39", x32_abi},
	{"seccomp.i386_abi_ends_job", "seccomp",
	 "getpid through int 0x80 never returns: policy_violation, denial "
	 "i386:20", i386_abi},
	{"seccomp.strict_refusal_ends_job", "seccomp",
	 "strict profile: getpid ok, then ptrace ends the job: "
	 "policy_violation, denial ptrace:1", strict_kills},
	{"boundary.launcher_confined", "boundary",
	 "the running launcher: NoNewPrivs 1, Seccomp 2, as root only "
	 "CAP_DAC_READ_SEARCH and an empty bounding set", launcher_confined},
	{"boundary.broker_confined", "boundary",
	 "the running broker: NoNewPrivs 1, Seccomp 2, as root only "
	 "CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER and an empty bounding set",
	 broker_confined},
	{NULL, NULL, NULL, NULL},
};
