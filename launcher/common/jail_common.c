/*
 * jail_common.c: what the supervisor, the zygote and the jail share about
 * a jail (jail.h): which layer sets a launcher refuses, which specs one
 * warm jail may serve, the names of the set-up stages, the records init
 * and the payload send on the status pipe, and closing a jail's
 * descriptors.
 */

#include "jail.h"

#include <stdint.h>
#include <string.h>

#include "fsutil.h"

static const char *const stage_names[] = {
    [STAGE_PARENT] = "launcher gone",
    [STAGE_ID_MAPS] = "user namespace id maps",
    [STAGE_MOUNT_NS] = "mount namespace",
    [STAGE_ROOT_TMPFS] = "root tmpfs",
    [STAGE_BIND] = "read-only bind mounts",
    [STAGE_ETC] = "/etc files",
    [STAGE_DEV] = "/dev",
    [STAGE_PROC] = "/proc mount",
    [STAGE_TMP] = "/tmp tmpfs",
    [STAGE_HOME] = "home tmpfs",
    [STAGE_WORK] = "the workspace at /work",
    [STAGE_HOSTNAME] = "hostname",
    [STAGE_LOOPBACK] = "loopback interface",
    [STAGE_PIVOT_ROOT] = "pivot_root",
    [STAGE_REMOUNT_ROOT] = "read-only root",
    [STAGE_CAPS] = "dropping capabilities",
    [STAGE_FORK_PAYLOAD] = "starting the payload",
    [STAGE_SIGNALS] = "signal set-up",
    [STAGE_SET_IDS] = "switching to the payload's ids",
    [STAGE_SETSID] = "setsid",
    [STAGE_STDIO] = "standard streams",
    [STAGE_RLIMITS] = "rlimits",
    [STAGE_CLOSE_FDS] = "closing descriptors",
    [STAGE_NO_NEW_PRIVS] = "no_new_privs",
    [STAGE_SECCOMP] = "loading the seccomp filter",
    [STAGE_LANDLOCK] = "Landlock ruleset",
    [STAGE_SUBREAPER] = "child subreaper",
    [STAGE_PRIVATE_DIRS] = "private HOME and TMPDIR in the workspace",
    [STAGE_POOL_JOB] = "taking the job in a warm jail",
    [STAGE_PROC_MASK] = "masking host facts in /proc",
    [STAGE_USER_QUOTAS] = "per-user kernel quotas (/proc/sys/user)",
    [STAGE_TCP_BUFFERS] = "the network namespace's TCP buffer bound",
    [STAGE_EGRESS] = "the egress proxy's listener, routes and packet socket",
    [STAGE_WORK_STAGE] = "the job's stage tmpfs under /work (issue 26; "
			 "needs tmpfs with user xattrs in a user namespace, "
			 "Linux 6.6)",
    [STAGE_WORK_OVERLAY] = "the overlay at /work over the job's stage "
			   "(needs overlayfs in a user namespace with "
			   "userxattr and detached layers, Linux 6.15)",
};

const char *
jail_layers_refusal(uint32_t off, bool as_root)
{
	const uint32_t ns = JOB_LAYER_BIT(JOB_LAYER_PID_NS) |
	    JOB_LAYER_BIT(JOB_LAYER_MOUNT_NS) |
	    JOB_LAYER_BIT(JOB_LAYER_NETWORK_NS) |
	    JOB_LAYER_BIT(JOB_LAYER_IPC_UTS);
	const uint32_t needs_nnp = JOB_LAYER_BIT(JOB_LAYER_LANDLOCK) |
	    JOB_LAYER_BIT(JOB_LAYER_SECCOMP);

	if ((off & JOB_LAYER_BIT(JOB_LAYER_USER_NS)) && !as_root &&
	    (off & ns) != ns)
		return "layer user_ns is off while pid_ns, mount_ns, "
		       "network_ns "
		       "or ipc_uts is on: without a user namespace an "
		       "unprivileged launcher can make no other namespace "
		       "(user_namespaces(7)); switch those off too, or run as "
		       "root";
	if ((off & JOB_LAYER_BIT(JOB_LAYER_USER_NS)) &&
	    (off & JOB_LAYER_BIT(JOB_LAYER_CAPS_NNP)) &&
	    (off & needs_nnp) != needs_nnp)
		return "layer caps_nnp is off while landlock or seccomp is on, "
		       "without a user namespace: a Landlock domain or a "
		       "seccomp "
		       "filter without no_new_privs needs CAP_SYS_ADMIN in the "
		       "payload's user namespace (seccomp(2), "
		       "landlock_restrict_self(2)); keep user_ns on, or switch "
		       "landlock and seccomp off too";
	return NULL;
}

static bool
str_eq(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

bool
jail_same_authority(const struct job_spec *a, const struct job_spec *b)
{
	/* JOB_F_STDIN says where one job reads from, not what the jail is
	 * (proto.h). The proxy's port is: a warm jail's init makes the
	 * listener and the routes while it is built, before it drops its
	 * capabilities, so a jail built without them cannot take a job
	 * with network, nor one built with them a job without. */
	if (a->uid != b->uid || a->gid != b->gid ||
	    ((a->flags ^ b->flags) & ~JOB_F_STDIN) != 0 ||
	    job_spec_layers_off(a) != job_spec_layers_off(b) ||
	    a->nmounts != b->nmounts || !str_eq(a->hostname, b->hostname) ||
	    !str_eq(a->user, b->user) || !str_eq(a->home, b->home) ||
	    !str_eq(a->seccomp_profile, b->seccomp_profile) ||
	    a->proxy_port != b->proxy_port)
		return false;
	for (uint32_t i = 0; i < a->nmounts; i++)
		if (a->mounts[i].kind != b->mounts[i].kind ||
		    !str_eq(a->mounts[i].source, b->mounts[i].source) ||
		    !str_eq(a->mounts[i].target, b->mounts[i].target))
			return false;
	return true;
}

bool
jail_pool_compatible(const struct job_spec *a, const struct job_spec *b)
{
	/* The stage is made with the jail (issue 26): its size and
	 * inodes are the template's. A waiting jail's payload has set its
	 * rlimits already (issue 27; jail_wait_payload): the limits they
	 * come from are the template's too. */
	const struct job_limits *la = &a->limits, *lb = &b->limits;

	return jail_same_authority(a, b) && la->cpu_ms == lb->cpu_ms &&
	    la->memory_bytes == lb->memory_bytes &&
	    la->fsize_bytes == lb->fsize_bytes && la->nproc == lb->nproc &&
	    la->nofile == lb->nofile &&
	    a->limits.tmp_bytes == b->limits.tmp_bytes &&
	    a->limits.home_bytes == b->limits.home_bytes &&
	    a->workspace_allow == b->workspace_allow &&
	    a->stage_files == b->stage_files;
}

const char *
jail_stage_name(int stage)
{
	if (stage <= 0 || stage > STAGE_MAX)
		return "unknown stage";
	return stage_names[stage];
}

void
jail_send_record(int fd, int32_t kind, int32_t a, int32_t b)
{
	(void)wire_status_write(fd, (uint16_t)kind, a, b);
}

void
jail_close(struct jail *j)
{
	close_fdp(&j->pidfd);
	close_fdp(&j->out_fd);
	close_fdp(&j->err_fd);
	close_fdp(&j->status_fd);
	close_fdp(&j->notify_sock);
	close_fdp(&j->go_fd);
}
