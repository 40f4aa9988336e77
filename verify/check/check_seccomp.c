/*
 * check_seccomp.c: the seccomp checks of `stockade check` (check.h).
 *
 * The jail's filter (docs/seccomp.md; launcher/zygote/seccomp.c) is observed
 * from inside: each check runs a job of `stockade-probe sys CALL...`
 * (probe_seccomp.c, probe_syscalls.c), which makes each call with
 * harmless arguments and prints the errno it got, and compares three
 * things with what a sound filter gives: each call's answer (the
 * filter's EPERM, EAFNOSUPPORT or ENOSYS, never the kernel's own answer,
 * which would mean the call reached the kernel), the result's "denials"
 * (each refusal recorded by name, with its count) and the job's
 * "status". The foreign ABIs must end the job at the call
 * (policy_violation): those checks, and the bound on the rate of
 * refusals, are in check_seccomp_abi.c (check_seccomp.h). The broker's
 * and the launcher's own confinement is in check_confined.c.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_seccomp.h"
#include "result.h"

#define MAX_CALLS 24
#define MAX_DENIALS 12

/*
 * One `stockade-probe sys` job and what a sound filter gives: each call
 * answered WANT[i], the result's denials exactly DEN (no other), status
 * "ok" (the probe handles each refusal and exits 0; docs/seccomp.md: "A
 * program that handles the refusal and exits 0 is ok, with its denials
 * listed").
 */
struct sys_spec {
	const char *calls[MAX_CALLS];
	const char *want[MAX_CALLS]; /* NULL: EPERM, the filter's refusal */
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
void
seccomp_denials_text(const struct check_job *j, char *buf, size_t len)
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

	json_array_foreach(arr, i, d)
	{
		const char *s = json_string_value(
		    json_object_get(d, "syscall"));

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
bool
seccomp_denials_match(const struct check_job *j, const struct denial_want *want,
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
			snprintf(why, len,
			    "the result's denials count %s "
			    "x%" JSON_INTEGER_FORMAT ", not x%u",
			    want[k].name,
			    json_integer_value(json_object_get(got, "count")),
			    want[k].count);
			return false;
		}
		if (!json_is_integer(json_object_get(got, "first_ms"))) {
			snprintf(why, len, "the denial %s has no first_ms",
			    want[k].name);
			return false;
		}
	}
	json_array_foreach(arr, i, d)
	{
		const char *s = json_string_value(
		    json_object_get(d, "syscall"));
		bool wanted = false;

		for (size_t k = 0; k < n && s != NULL; k++)
			wanted = wanted || strcmp(s, want[k].name) == 0;
		if (!wanted) {
			snprintf(why, len,
			    "an unexpected denial %s in the "
			    "result",
			    s != NULL ? s : "(no name)");
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

/* The answer S wants from its call I. */
static const char *
answer_wanted(const struct sys_spec *s, size_t i)
{
	return s->want[i] != NULL ? s->want[i] : "EPERM";
}

/* Runs the probe's `sys` with S's calls and judges it (struct sys_spec). */
static void
run_sys(struct check_ctx *c, struct check_result *r, const struct sys_spec *s)
{
	const char *argv[MAX_CALLS + 3];
	struct check_job_opts o;
	struct check_job j;
	char answers[300] = "", dens[300], why[300] = "", v[64];
	size_t n = 0, nd = 0, same = 0;
	bool one; /* many calls that want one answer: summed up */

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
	one = n - 2 > 4;
	for (size_t i = 0; i < n - 2; i++)
		one = one &&
		    strcmp(answer_wanted(s, i), answer_wanted(s, 0)) == 0;
	for (size_t i = 0; i < n - 2; i++) {
		const char *w = answer_wanted(s, i);

		if (!check_value(&j, s->calls[i], v, sizeof(v)))
			snprintf(v, sizeof(v), "(no answer)");
		if (one && strcmp(v, w) == 0)
			same++;
		else
			append(answers, sizeof(answers), "%s%s %s",
			    answers[0] != '\0' ? ", " : "", s->calls[i], v);
		if (why[0] == '\0' && strcmp(v, w) != 0)
			snprintf(why, sizeof(why), "%s answered %s, not %s%s",
			    s->calls[i], v, w,
			    filter_answer(w) && !filter_answer(v)
				? " (the kernel's answer: the filter let it "
				  "through)"
				: "");
	}
	if (one)
		append(answers, sizeof(answers), "%s%zu of %zu calls %s",
		    answers[0] != '\0' ? "; " : "", same, n - 2,
		    answer_wanted(s, 0));
	if (why[0] == '\0' && s->no_suid_mode) {
		if (!check_value(&j, "mode", v, sizeof(v)))
			snprintf(why, sizeof(why),
			    "the probe printed no mode "
			    "for its file");
		else if ((strtoul(v, NULL, 8) & 06000) != 0)
			snprintf(why, sizeof(why),
			    "the file was left mode %s: "
			    "a setuid or setgid bit got through",
			    v);
		else
			append(answers, sizeof(answers), "; file mode %s", v);
	}
	seccomp_denials_text(&j, dens, sizeof(dens));
	if (why[0] == '\0')
		(void)seccomp_denials_match(&j, s->den, nd, why, sizeof(why));
	if (why[0] == '\0' && strcmp(j.status, "ok") != 0)
		snprintf(why, sizeof(why), "status %s, not ok (%s)", j.status,
		    json_string_value(json_object_get(j.result, "detail")));
	if (why[0] == '\0')
		check_pass(r, "%s; denials %s; status ok", answers, dens);
	else
		check_fail(r, "%s; %s; denials %s", why, answers, dens);
	check_job_free(&j);
}

/* The families of the default profile's refusals (docs/seccomp.md,
 * launcher/zygote/seccomp.c, the rules no profile can weaken). */

/* Tracing another process, reading or writing its memory, taking its
 * descriptors (ptrace(2), process_vm_readv(2), pidfd_getfd(2)). */
static const struct sys_spec tracing = {
    .calls = {"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"},
    .den = {{"ptrace", 1}, {"process_vm_readv", 1}, {"process_vm_writev", 1},
	{"pidfd_getfd", 1}},
};

/* Mounts and namespaces (mount(2), unshare(2), setns(2)). */
static const struct sys_spec namespaces = {
    .calls = {"mount", "unshare", "setns"},
    .den = {{"mount", 1}, {"unshare", 1}, {"setns", 1}},
};

/* The kernel key ring, which no namespace separates (keyrings(7);
 * CVE-2016-0728). */
static const struct sys_spec keyring = {
    .calls = {"keyctl", "add_key", "request_key"},
    .den = {{"keyctl", 1}, {"add_key", 1}, {"request_key", 1}},
};

/* Kernel attack surface: eBPF, perf events, userfaultfd (bpf(2),
 * perf_event_open(2), userfaultfd(2)). */
static const struct sys_spec attack_surface = {
    .calls = {"bpf", "perf_event_open", "userfaultfd"},
    .den = {{"bpf", 1}, {"perf_event_open", 1}, {"userfaultfd", 1}},
};

/* Replacing the kernel or loading into it (kexec_load(2),
 * init_module(2)). */
static const struct sys_spec kernel_load = {
    .calls = {"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module"},
    .den = {{"kexec_load", 1}, {"kexec_file_load", 1}, {"init_module", 1},
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

/* Multipath TCP sockets (IPPROTO_MPTCP, 262): Landlock's TCP bind and
 * connect rules do not see them (landlock(7), "Network flags"), so the
 * socket rule allows inet and inet6 only with a protocol below 256. */
static const struct sys_spec mptcp = {
    {"socket_mptcp", "socket_mptcp6"},
    {"EAFNOSUPPORT", "EAFNOSUPPORT"},
    {{"socket", 2}},
};

/* clone with a namespace flag: nested namespaces (clone(2)), each of
 * the seven flags on its own. */
static const struct sys_spec clone_ns = {
    .calls = {"clone_newuser", "clone_newns", "clone_newnet", "clone_newpid",
	"clone_newipc", "clone_newuts", "clone_newcgroup"},
    .den = {{"clone", 7}},
};

/* personality other than the default persona: READ_IMPLIES_EXEC makes
 * every readable mapping executable, ADDR_NO_RANDOMIZE turns ASLR off
 * (personality(2)). */
static const struct sys_spec persona = {
    .calls = {"personality_readimplies", "personality_norandom"},
    .den = {{"personality", 2}},
};

/* No setuid or setgid bit from any call of launcher/zygote/seccomp.c's mode
 * rules, each tried with 04755 and with 02755: chmod, fchmod, fchmodat
 * (what coreutils' chmod calls), mkdir(at), mknod(at), creat, open and
 * openat with O_CREAT, and openat with O_TMPFILE. The workspace's files
 * keep their bits on the host, where nosuid does not hold (systemd's
 * RestrictSUIDSGID=). */
static const struct sys_spec suid_modes = {
    .calls = {"chmod_setuid", "chmod_setgid", "fchmod_setuid", "fchmod_setgid",
	"fchmodat_setuid", "fchmodat_setgid", "mkdir_setuid", "mkdir_setgid",
	"mkdirat_setuid", "mkdirat_setgid", "mknod_setuid", "mknod_setgid",
	"mknodat_setuid", "mknodat_setgid", "creat_setuid", "creat_setgid",
	"open_setuid", "open_setgid", "openat_setuid", "openat_setgid",
	"tmpfile_setuid", "tmpfile_setgid"},
    .den = {{"chmod", 2}, {"fchmod", 2}, {"fchmodat", 2}, {"mkdir", 2},
	{"mkdirat", 2}, {"mknod", 2}, {"mknodat", 2}, {"creat", 2}, {"open", 2},
	{"openat", 4}},
    .no_suid_mode = true,
};

/* io_uring: its operations run in kernel threads the filter never sees
 * (io_uring_setup(2)). */
static const struct sys_spec io_uring = {
    .calls = {"io_uring_setup", "io_uring_enter", "io_uring_register"},
    .den = {{"io_uring_setup", 1}, {"io_uring_enter", 1},
	{"io_uring_register", 1}},
};

/* ioctl TIOCSTI and TIOCLINUX, also with a high word set: the kernel
 * reads the request's low 32 bits, so TIOCSTI | 1 << 32 is TIOCSTI to
 * it (CVE-2016-7545, CVE-2017-5226; ioctl_tty(2)). Made on a pipe: a
 * filter that lets one through gets the kernel's ENOTTY. */
static const struct sys_spec tiocsti = {
    .calls = {"tiocsti", "tiocsti_high", "tioclinux"},
    .den = {{"ioctl", 3}},
};

/* A filter of the job's own: ERRNO outranks USER_NOTIF, so its answers
 * would hide refusals from the result (seccomp(2), "Return values"). */
static const struct sys_spec own_filter = {
    .calls = {"prctl_seccomp", "seccomp"},
    .den = {{"prctl", 1}, {"seccomp", 1}},
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
    {"getpid", "socket_inet", "socket_unix", "fork", "personality_default",
	"personality_query", "chmod_plain", "fionread"},
    {"ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"},
    {{NULL, 0}},
};

/* Each refusal is counted: the same call refused three times is one
 * denial with count 3 (docs/seccomp.md, "Every refusal is recorded"). */
static const struct sys_spec counted = {
    .calls = {"ptrace", "keyctl", "ptrace", "ptrace"},
    .den = {{"ptrace", 3}, {"keyctl", 1}},
};

/* The check functions of the tables above, one each. */
#define SYS_CHECK(fn, spec)                                         \
	static void fn(struct check_ctx *c, struct check_result *r) \
	{                                                           \
		run_sys(c, r, &(spec));                             \
	}
SYS_CHECK(tracing_refused, tracing)
SYS_CHECK(namespaces_refused, namespaces)
SYS_CHECK(keyring_refused, keyring)
SYS_CHECK(attack_surface_refused, attack_surface)
SYS_CHECK(kernel_load_refused, kernel_load)
SYS_CHECK(families_refused, families)
SYS_CHECK(mptcp_refused, mptcp)
SYS_CHECK(clone_ns_refused, clone_ns)
SYS_CHECK(persona_refused, persona)
SYS_CHECK(suid_modes_refused, suid_modes)
SYS_CHECK(io_uring_refused, io_uring)
SYS_CHECK(tiocsti_refused, tiocsti)
SYS_CHECK(own_filter_refused, own_filter)
SYS_CHECK(clone3_enosys, clone3)
SYS_CHECK(allowed_work, allowed)
SYS_CHECK(denials_counted, counted)

const struct check checks_seccomp[] = {
    {"seccomp.ptrace_process_vm_refused", "seccomp",
	"ptrace, process_vm_readv, process_vm_writev, pidfd_getfd: EPERM, "
	"each in denials, status ok",
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
	"delete_module: EPERM, each in denials",
	kernel_load_refused},
    {"seccomp.netlink_packet_vsock_refused", "seccomp",
	"socket AF_NETLINK, AF_PACKET, AF_VSOCK: EAFNOSUPPORT, socket:3 in "
	"denials",
	families_refused},
    {"seccomp.mptcp_socket_refused", "seccomp",
	"socket AF_INET and AF_INET6 with IPPROTO_MPTCP: EAFNOSUPPORT, "
	"socket:2 in denials",
	mptcp_refused},
    {"seccomp.clone_namespace_flags_refused", "seccomp",
	"clone with each CLONE_NEW* flag (user, ns, net, pid, ipc, uts, "
	"cgroup): EPERM, clone:7 in denials",
	clone_ns_refused},
    {"seccomp.personality_flags_refused", "seccomp",
	"personality READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE: EPERM, "
	"personality:2 in denials",
	persona_refused},
    {"seccomp.setuid_setgid_modes_refused", "seccomp",
	"chmod, fchmod, fchmodat, mkdir(at), mknod(at), creat, open(at) "
	"O_CREAT, O_TMPFILE, each 04755 and 02755: EPERM, each in denials, "
	"no file with 06000",
	suid_modes_refused},
    {"seccomp.io_uring_refused", "seccomp",
	"io_uring_setup, io_uring_enter, io_uring_register: EPERM, each in "
	"denials",
	io_uring_refused},
    {"seccomp.tiocsti_high_bits_refused", "seccomp",
	"ioctl TIOCSTI, TIOCSTI | 1 << 32 and TIOCLINUX: EPERM (not the "
	"kernel's ENOTTY), ioctl:3 in denials",
	tiocsti_refused},
    {"seccomp.own_filter_refused", "seccomp",
	"prctl(PR_SET_SECCOMP) and seccomp(2): EPERM, both in denials",
	own_filter_refused},
    {"seccomp.clone3_enosys_libc_falls_back", "seccomp",
	"clone3: ENOSYS, not recorded; pthread_create and fork still work",
	clone3_enosys},
    {"seccomp.allowed_calls_work", "seccomp",
	"getpid, inet and unix sockets, fork, the default persona, chmod "
	"0640, ioctl FIONREAD: ok, no denial",
	allowed_work},
    {"seccomp.denials_counted_in_result", "seccomp",
	"ptrace refused 3 times and keyctl once: denials exactly ptrace:3 "
	"keyctl:1 with first_ms, status ok",
	denials_counted},
    {"seccomp.refusal_rate_bounded", "seccomp",
	"a job refused 1.5 s on end gets at most 1000 answers plus 1000 a "
	"second, each counted once",
	seccomp_refusal_rate},
    {"seccomp.x32_abi_ends_job", "seccomp",
	"getpid through the x32 ABI never returns: policy_violation, "
	"denial x32:39",
	seccomp_x32_abi},
    {"seccomp.i386_abi_ends_job", "seccomp",
	"getpid through int 0x80 never returns: policy_violation, denial "
	"i386:20 (a kernel without the i386 entry: SIGSEGV, no denial)",
	seccomp_i386_abi},
    {"seccomp.strict_refusal_ends_job", "seccomp",
	"strict profile: getpid ok, then ptrace ends the job: "
	"policy_violation, denial ptrace:1",
	seccomp_strict_kills},
    {NULL, NULL, NULL, NULL},
};
