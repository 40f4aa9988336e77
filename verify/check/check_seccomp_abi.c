/*
 * check_seccomp_abi.c: the seccomp checks that end the job or bound it
 * (check_seccomp.h; their entries are in check_seccomp.c's table): a
 * call through a foreign ABI (x32, i386) or refused under the strict
 * profile ends the job as policy_violation, and a flood of refusals is
 * answered at a bounded rate (docs/seccomp.md).
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_seccomp.h"
#include "result.h"

/*
 * On a kernel without the i386 entry (check_kernel_has_i386_entry() is
 * 0) `int $0x80` faults before any system call is made, so no filter
 * ever sees it: the job must end by that SIGSEGV (status crash), with no
 * denial and the call never answered. Anything else (a denial, another
 * status) means the job did not meet the kernel we probed. Sets WHY
 * (LEN bytes) to the reason, or leaves it empty.
 */
static void
no_i386_entry_outcome(const struct check_job *j, char *why, size_t len)
{
	const char *sig = json_string_value(
	    json_object_get(j->result, "signal"));
	size_t nden = json_array_size(json_object_get(j->result, "denials"));

	if (strcmp(j->status, "crash") != 0 || sig == NULL ||
	    strcmp(sig, "SIGSEGV") != 0)
		snprintf(why, len,
		    "this kernel has no i386 entry, so int "
		    "0x80 must fault with SIGSEGV, but the job ended "
		    "with status %s, signal %s",
		    j->status, sig != NULL ? sig : "none");
	else if (nden != 0)
		snprintf(why, len,
		    "int 0x80 faulted, yet the result lists "
		    "%zu denial(s) for a call the kernel never made",
		    nden);
}

/*
 * A job of `stockade-probe sys [BEFORE] CALL` on POLICY (NULL: the
 * default) ends at CALL: BEFORE, an allowed call, answered ok (or, with
 * no BEFORE, the probe printed CALL.start=1, as it does for a foreign-ABI
 * call), CALL never answered, the status is policy_violation and the
 * result's only denial is DENIAL_NAME ("x32:39"), which its detail names.
 * A filter written for x86_64 numbers would read another ABI's numbers
 * wrongly (seccomp(2), "Caveats"; CVE-2009-0835).
 */
static void
ends_job(struct check_ctx *c, struct check_result *r, const char *policy,
    const char *before, const char *call, const char *denial_name)
{
	const char *argv[] = {"./stockade-probe", "sys",
	    before != NULL ? before : call, call, NULL};
	const struct denial_want want[] = {{denial_name, 1}};
	struct check_job_opts o;
	struct check_job j;
	char key[32], v[64] = "", dens[200], why[300] = "";
	const char *detail;

	if (before == NULL)
		argv[3] = NULL;
	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.policy = policy;
	o.deadline_ms = JOB_DEADLINE_MS;
	if (check_job_run(c, &o, &j) < 0 || j.result == NULL ||
	    j.proc.timed_out) {
		check_fail(r, "no result: %s",
		    check_job_summary(&j, why, sizeof(why)));
		check_job_free(&j);
		return;
	}
	detail = json_string_value(json_object_get(j.result, "detail"));
	seccomp_denials_text(&j, dens, sizeof(dens));
	snprintf(key, sizeof(key), "%s.start", call);
	if (before != NULL &&
	    (!check_value(&j, before, v, sizeof(v)) || strcmp(v, "ok") != 0))
		snprintf(why, sizeof(why),
		    "the allowed %s before it gave "
		    "\"%s\" (stdout \"%.100s\", status %s)",
		    before, v, j.out, j.status);
	else if (before == NULL && !check_value(&j, key, v, sizeof(v)))
		snprintf(why, sizeof(why),
		    "the probe never made the call "
		    "(stdout \"%.100s\")",
		    j.out);
	else if (check_value(&j, call, v, sizeof(v)))
		snprintf(why, sizeof(why),
		    "%s returned %s to the program, "
		    "which ran on (status %s)",
		    call, v, j.status);
	else if (strcmp(call, "int80") == 0 &&
	    check_kernel_has_i386_entry() == 0) {
		no_i386_entry_outcome(&j, why, sizeof(why));
		if (why[0] == '\0')
			check_pass(r,
			    "this kernel has no i386 entry (no IA32 "
			    "emulation): int 0x80 faults with SIGSEGV "
			    "outside any filter and did so in the jail "
			    "(status crash, no denial); there is no "
			    "i386 ABI to filter");
		else
			check_fail(r, "%s; denials %s", why, dens);
		check_job_free(&j);
		return;
	} else if (strcmp(j.status, "policy_violation") != 0)
		snprintf(why, sizeof(why), "status %s, not policy_violation",
		    j.status);
	else if (!seccomp_denials_match(&j, want, 1, why, sizeof(why)))
		;
	else if (detail == NULL || strstr(detail, denial_name) == NULL)
		snprintf(why, sizeof(why),
		    "the detail does not name %s: "
		    "\"%.200s\"",
		    denial_name, detail != NULL ? detail : "");
	if (why[0] == '\0')
		check_pass(r,
		    "%s%s%s ended the job: status policy_violation, "
		    "denials %s",
		    before != NULL ? before : "",
		    before != NULL ? " ok, then " : "", call, dens);
	else
		check_fail(r, "%s; denials %s", why, dens);
	check_job_free(&j);
}

/* seccomp.x32_abi_ends_job: getpid through the x32 ABI (the x32 bit
 * 0x40000000 in the number) ends the job (docs/seccomp.md). */
void
seccomp_x32_abi(struct check_ctx *c, struct check_result *r)
{
	ends_job(c, r, NULL, NULL, "x32", "x32:39");
}

/* seccomp.i386_abi_ends_job: getpid through `int $0x80` (the i386 ABI)
 * ends the job (docs/seccomp.md). */
void
seccomp_i386_abi(struct check_ctx *c, struct check_result *r)
{
	ends_job(c, r, NULL, NULL, "int80", "i386:20");
}

/* seccomp.strict_refusal_ends_job: under the strict profile (`denied =
 * kill`, policy/seccomp-strict.ini) a refused call ends the job: the
 * allowed getpid before it answered, ptrace never returned
 * (docs/seccomp.md, Profiles). */
void
seccomp_strict_kills(struct check_ctx *c, struct check_result *r)
{
	ends_job(c, r, "[jail]\nseccomp_profile = strict\n", "getpid", "ptrace",
	    "ptrace");
}

/*
 * seccomp.refusal_rate_bounded: a job refused 1.5 s on end (the probe's
 * refusal-flood: socket(AF_VSOCK) in a loop) gets at most DENIALS_BURST
 * + DENIALS_RATE answers a second of its wall time (shared/result.h; the
 * token bucket of launcher/supervisor/denials.c), each counted once: the result's
 * socket count is the number of refusals the probe saw. Without the
 * bound the launcher answered 10,000 to 30,000 a second here, spending
 * as much CPU as the job, and no limit counts it (issue 23). The bound
 * is an upper one, so load cannot make a sound launcher fail it.
 */
void
seccomp_refusal_rate(struct check_ctx *c, struct check_result *r)
{
	static const char *const argv[] = {"./stockade-probe", "refusal-flood",
	    "1500", NULL};
	struct check_job_opts o;
	struct check_job j;
	char why[300], v[32], dens[300];
	unsigned long long refused, other, nsocket = 0, wall, bound;
	json_t *arr, *d;
	size_t i;

	memset(&o, 0, sizeof(o));
	o.argv = argv;
	o.deadline_ms = JOB_DEADLINE_MS;
	if (check_job_run(c, &o, &j) < 0 || j.result == NULL ||
	    j.proc.timed_out) {
		check_fail(r, "no result: %s",
		    check_job_summary(&j, why, sizeof(why)));
		goto out;
	}
	if (strcmp(j.status, "ok") != 0 ||
	    !check_value(&j, "refused", v, sizeof(v))) {
		check_fail(r, "status %s, no refusal count: %s", j.status,
		    check_job_summary(&j, why, sizeof(why)));
		goto out;
	}
	refused = strtoull(v, NULL, 10);
	other = check_value(&j, "other", v, sizeof(v)) ? strtoull(v, NULL, 10)
						       : 1;
	arr = json_object_get(j.result, "denials");
	json_array_foreach(arr, i,
	    d) if (strcmp(json_string_value(json_object_get(d, "syscall"))
			   ? json_string_value(json_object_get(d, "syscall"))
			   : "",
		       "socket") == 0)
	    nsocket += (unsigned long long)json_integer_value(
		json_object_get(d, "count"));
	wall = (unsigned long long)json_integer_value(
	    json_object_get(j.result, "wall_ms"));
	/* Answers by the job's millisecond T: at most BURST + RATE * T;
	 * 50 for the milliseconds between the jail's clock and ours. */
	bound = DENIALS_BURST + DENIALS_RATE * wall / 1000 + 50;
	seccomp_denials_text(&j, dens, sizeof(dens));
	if (refused == 0 || other != 0)
		check_fail(r,
		    "%llu calls refused, %llu answered otherwise "
		    "(socket(AF_VSOCK) must be refused)",
		    refused, other);
	else if (nsocket != refused)
		check_fail(r,
		    "the result counts %llu refusals of socket, the "
		    "job saw %llu; denials %s",
		    nsocket, refused, dens);
	else if (refused > bound)
		check_fail(r,
		    "%llu refusals answered in %llu ms (%llu a "
		    "second), over the bound of %llu: the launcher "
		    "answers a flood at any rate, spending CPU no limit "
		    "counts",
		    refused, wall, refused * 1000 / (wall > 0 ? wall : 1),
		    bound);
	else
		check_pass(r,
		    "%llu refusals answered in %llu ms (bound %llu), "
		    "each counted once",
		    refused, wall, bound);
out:
	check_job_free(&j);
}
