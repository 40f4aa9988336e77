/*
 * check_privs.c: the checks of the layers that take privileges away
 * (check.h, check_jail.h): capabilities, no_new_privs and Landlock. Each
 * runs stockade-probe (probe_process.c) in a real job and compares what
 * it saw with what a sound jail shows (docs/layers.md).
 *
 * no_new_privs is also checked with Landlock and seccomp switched off
 * (`stockade run --unsafe-evaluation`), which set it as a side effect,
 * to see that layer caps_nnp sets it by itself.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_jail.h"
#include "llutil.h"

/* ---- capabilities ---------------------------------------------------- */

/* The capability sets NAMES ("CapInh,CapPrm") of /proc/self/status are
 * all zero (capabilities(7)). */
static void
caps_zero(struct check_ctx *c, struct check_result *r, const char *names)
{
	struct check_job j;
	char list[128], key[64], v[64], seen[512] = "";

	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("status")))
		goto out;
	snprintf(list, sizeof(list), "%s", names);
	for (char *n = strtok(list, ","); n != NULL; n = strtok(NULL, ",")) {
		size_t l = strlen(seen);

		snprintf(key, sizeof(key), "status.%s", n);
		if (!jail_val(r, &j, key, v, sizeof(v)))
			goto out;
		if (strspn(v, "0") != strlen(v) || v[0] == '\0') {
			check_fail(r, "%s is %s in /proc/self/status", n, v);
			goto out;
		}
		snprintf(seen + l, sizeof(seen) - l, "%s%s", l > 0 ? ", " : "",
		    n);
	}
	check_pass(r, "%s: all zero in /proc/self/status", seen);
out:
	check_job_free(&j);
}

/* capabilities.no_capability_held: the inheritable, permitted, effective
 * and ambient sets are empty. */
static void
caps_none(struct check_ctx *c, struct check_result *r)
{
	caps_zero(c, r, "CapInh,CapPrm,CapEff,CapAmb");
}

/* capabilities.bounding_set_empty: the bounding set is empty, so no
 * exec can bring a capability back (capabilities(7), "Capability
 * bounding set"). */
static void
caps_bounding(struct check_ctx *c, struct check_result *r)
{
	caps_zero(c, r, "CapBnd");
}

/* capabilities.securebits_locked: NOROOT, NO_SETUID_FIXUP and
 * NO_CAP_AMBIENT_RAISE are set, KEEP_CAPS is not, and all four are
 * locked (capabilities(7), "The securebits flags"): 0xef. */
static void
securebits(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[32];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("caps")) &&
	    jail_val(r, &j, "securebits", v, sizeof(v))) {
		if ((strtoul(v, NULL, 16) & 0xff) == 0xef)
			check_pass(r,
			    "securebits %s: NOROOT, NO_SETUID_FIXUP, "
			    "NO_CAP_AMBIENT_RAISE set and locked, "
			    "KEEP_CAPS off and locked",
			    v);
		else
			check_fail(r,
			    "securebits %s (want 0xef: set and "
			    "locked)",
			    v);
	}
	check_job_free(&j);
}

/* ---- no_new_privs ---------------------------------------------------- */

/* NoNewPrivs of /proc/self/status is 1 in a job as S says. */
static void
nnp_is_set(struct check_ctx *c, struct check_result *r, const struct pj *s,
    const char *how)
{
	struct check_job j;
	char v[256];

	if (jail_probe_ok(c, r, &j, s, ARGS("status")) &&
	    jail_val(r, &j, "status.NoNewPrivs", v, sizeof(v))) {
		if (strcmp(v, "1") == 0)
			check_pass(r, "NoNewPrivs is 1 in /proc/self/status%s",
			    how);
		else
			check_fail(r, "NoNewPrivs is %s in /proc/self/status%s",
			    v, how);
	}
	check_job_free(&j);
}

/* no_new_privs.set: NoNewPrivs is 1 in /proc/self/status (prctl(2)
 * PR_SET_NO_NEW_PRIVS): no exec gains privileges. */
static void
nnp_set(struct check_ctx *c, struct check_result *r)
{
	nnp_is_set(c, r, &jail_plain, "");
}

/* no_new_privs.set_without_landlock_or_seccomp: with the Landlock and
 * seccomp layers switched off (an unsafe evaluation), NoNewPrivs is
 * still 1: layer caps_nnp sets it itself, not only as the side effect of
 * landlock_restrict_self(2), which needs it, or of libseccomp's load
 * (SCMP_FLTATR_CTL_NNP; docs/layers.md, 11). */
static void
nnp_set_alone(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {
	    .policy = "[jail]\nunsafe_layers_off = landlock, seccomp\n",
	    .run_args = ARGS("--unsafe-evaluation"),
	};

	nnp_is_set(c, r, &s, " with the landlock and seccomp layers off");
}

/* ---- landlock -------------------------------------------------------- */

/* landlock.abi_reported: the result's landlock_abi is this kernel's
 * Landlock ABI (landlock_create_ruleset(2), the version), not 0. */
static void
ll_abi_reported(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	int abi = ll_abi();
	json_t *v;

	if (abi <= 0) {
		check_fail(r,
		    "this kernel has no Landlock (%s): stockade "
		    "cannot run here",
		    strerror(-abi));
		return;
	}
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("caps")))
		goto out;
	v = json_object_get(j.result, "landlock_abi");
	if (json_is_integer(v) && json_integer_value(v) == abi)
		check_pass(r, "the result's landlock_abi is %d, the kernel's",
		    abi);
	else if (json_is_integer(v))
		check_fail(r,
		    "the result's landlock_abi is %lld, the kernel's "
		    "is %d",
		    (long long)json_integer_value(v), abi);
	else
		check_fail(r, "the result has no integer landlock_abi");
out:
	check_job_free(&j);
}

/*
 * The probe's Landlock attempt KEY is answered WANT (an errno name). The
 * kernel needs ABI MIN_ABI for the right. Below it (check_kernel_landlock_abi)
 * Landlock cannot refuse the attempt, so the check observes the jail the
 * kernel allows instead: the probe still runs, and the answer must be
 * WANT or LACKING, the kernel's own answer without that right, which
 * ELSEWHERE explains is harmless (what else bounds it). Never a skip:
 * the attempt is possible on every kernel.
 */
static void
ll_refused(struct check_ctx *c, struct check_result *r, const char *key,
    const char *want, int min_abi, const char *what, const char *lacking,
    const char *elsewhere)
{
	struct check_job j;
	char v[64];
	int abi = check_kernel_landlock_abi();

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("landlock")) &&
	    jail_val(r, &j, key, v, sizeof(v))) {
		if (abi > 0 && abi < min_abi &&
		    (strcmp(v, lacking) == 0 || strcmp(v, want) == 0))
			check_pass(r,
			    "this kernel's Landlock ABI %d has no "
			    "such right (ABI %d): %s answered %s; %s",
			    abi, min_abi, what, v, elsewhere);
		else if (abi > 0 && abi < min_abi)
			check_fail(r,
			    "this kernel's Landlock ABI %d has no "
			    "such right (ABI %d): %s answered %s, "
			    "neither %s nor %s",
			    abi, min_abi, what, v, want, lacking);
		else if (strcmp(v, want) == 0)
			check_pass(r, "%s: %s", what, v);
		else
			check_fail(r, "%s: %s (want %s from Landlock)", what, v,
			    want);
	}
	check_job_free(&j);
}

/* landlock.proc_write_refused: opening /proc/self/comm for writing is
 * refused (EACCES): /proc is a read-write procfs, and Landlock grants it
 * reading only (launcher/payload/landlock_jail.c). */
static void
ll_proc_write(struct check_ctx *c, struct check_result *r)
{
	ll_refused(c, r, "proc_comm_write", "EACCES", 1,
	    "open(/proc/self/comm, O_WRONLY)", "EACCES",
	    "every Landlock ABI has this right");
}

/* landlock.signal_to_init_refused: kill(1, 0) is refused (EPERM): init,
 * of the job's own ids, is outside the payload's domain and signals are
 * scoped (LANDLOCK_SCOPE_SIGNAL, ABI 6). */
static void
ll_signal(struct check_ctx *c, struct check_result *r)
{
	ll_refused(c, r, "signal_init", "EPERM", 6, "kill(1, 0) to init", "ok",
	    "init is the job's own (its pid namespace), and no "
	    "host process is in that namespace to signal "
	    "(pid_ns.proc_is_the_jails_own, pid_ns.own_namespace)");
}

/* landlock.device_ioctl_refused: TIOCGWINSZ on /dev/null is refused
 * (EACCES) before the driver answers ENOTTY:
 * LANDLOCK_ACCESS_FS_IOCTL_DEV is handled and granted nowhere (ABI 5). */
static void
ll_dev_ioctl(struct check_ctx *c, struct check_result *r)
{
	ll_refused(c, r, "dev_ioctl", "EACCES", 5,
	    "ioctl(TIOCGWINSZ) on /dev/null", "ENOTTY",
	    "the jail's devices are /dev/null, zero, full, random and "
	    "urandom, and the ioctls that reach a terminal (TIOCSTI, "
	    "TIOCLINUX) are the seccomp filter's to refuse");
}

const struct check checks_privs[] = {
    {"capabilities.no_capability_held", "capabilities",
	"CapInh, CapPrm, CapEff, CapAmb all 0", caps_none},
    {"capabilities.bounding_set_empty", "capabilities", "CapBnd 0",
	caps_bounding},
    {"capabilities.securebits_locked", "capabilities",
	"securebits 0xef: set and locked", securebits},
    {"no_new_privs.set", "no_new_privs", "NoNewPrivs is 1 in /proc/self/status",
	nnp_set},
    {"no_new_privs.set_without_landlock_or_seccomp", "no_new_privs",
	"landlock and seccomp off: NoNewPrivs still 1", nnp_set_alone},
    {"landlock.abi_reported", "landlock",
	"the result's landlock_abi is the kernel's", ll_abi_reported},
    {"landlock.proc_write_refused", "landlock",
	"open(/proc/self/comm, O_WRONLY): EACCES", ll_proc_write},
    {"landlock.signal_to_init_refused", "landlock", "kill(1, 0): EPERM",
	ll_signal},
    {"landlock.device_ioctl_refused", "landlock",
	"ioctl(TIOCGWINSZ) on /dev/null: EACCES", ll_dev_ioctl},
    {NULL, NULL, NULL, NULL},
};
