/*
 * jail_init.c: the life of a jail's init (pid 1), jail_init_main.
 *
 * The launcher's zygote (zygote.h; zygote/jail_start.c) clones init with CLONE_NEWUSER | NEWPID
 * | NEWNET | NEWIPC | NEWUTS | NEWCGROUP, CLONE_PIDFD (clone3, so a pidfd
 * exists from the start and nobody waits by pid alone) and CLONE_PARENT
 * (init is the launcher's child), and hands the pidfd and the pipes to
 * the launcher. Init then, in this order, and
 * aborting the job at the first failure (style.md rule 12):
 *   1. waits until the zygote has written its one-line uid and gid maps
 *      (payload ids inside -> the launcher's ids outside, or "nobody"
 *      outside when the launcher is root; setgroups denied first;
 *      user_namespaces(7)), then takes the payload's ids;
 *   2. PR_SET_PDEATHSIG(SIGKILL), after the id change that would clear
 *      it, and checks the launcher is still there: if the launcher dies,
 *      init and so the whole jail die with it;
 *   3. enters the workspace directory (or takes the zygote's detached
 *      id-mapped copy of it), unshares the mount namespace and builds the
 *      root file system (mounts.c);
 *   4. sets the hostname, brings up lo (the only interface of its new
 *      network namespace);
 *   5. drops every capability, bounding set included (libcap-ng), and
 *      makes itself non-dumpable so the payload cannot read its memory;
 *   6. forks the payload (payload.c) and becomes a reaper: it reaps every
 *      process of the jail, forwards termination signals to the payload
 *      and, when the payload exits, reports its wait status and exits. As
 *      pid 1 exits the kernel kills every process left in the namespace,
 *      so nothing the job started outlives it (pid_namespaces(7)).
 *
 * Layers switched off (evaluation only; docs/layers.md says what each
 * one changes) leave steps out: a namespace not made, the maps not
 * written, no mounts, no hostname, no loopback, capabilities kept. Two
 * change the steps instead:
 *   - user_ns off: init has the zygote's ids; it takes the payload's host
 *     ids (H's outer ids) only after step 4, since the mounts, the
 *     hostname and lo need the capabilities a root zygote keeps;
 *   - pid_ns off: init is an ordinary process, not pid 1. It becomes a
 *     child subreaper (PR_SET_CHILD_SUBREAPER, prctl(2)), so that every
 *     orphan of the job is reparented to it and stays in the tree the
 *     monitor walks (usage.c), and with layer process_group on it kills
 *     that whole tree before it exits (kill_tree): when the payload ends,
 *     and on JAIL_KILL_SIGNAL, which the launcher sends instead of
 *     SIGKILL and which is init's parent-death signal too.
 */
#include "jail.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "landlock_jail.h"
#include "log.h"
#include "mounts.h"
#include "init_internal.h"
#include "jail_init.h"

static _Noreturn void
setup_failed(int status_fd, int stage, int err)
{
	jail_send_record(status_fd, INIT_REC_SETUP_FAILED, stage,
	    err < 0 ? -err : err);
	_exit(1);
}

/* As setup_failed, for the mount set-up: a failed bind (BIND >= 0, its
 * index in the job's mounts) is reported as such, so that the result
 * names its path. */
static _Noreturn void
mounts_failed(int status_fd, int stage, int bind, int err)
{
	if (stage == STAGE_BIND && bind >= 0) {
		jail_send_record(status_fd, INIT_REC_BIND_FAILED, bind,
		    err < 0 ? -err : err);
		_exit(1);
	}
	setup_failed(status_fd, stage, err);
}

/*
 * Every capability set emptied (effective, permitted, inheritable,
 * bounding, ambient; libcap-ng), after the securebits are set and locked
 * (capabilities(7), "The securebits flags"): no capability is regained
 * through a uid 0 (SECBIT_NOROOT), none is kept or cleared by a change of
 * ids (SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS off), no ambient set can
 * be raised again (SECBIT_NO_CAP_AMBIENT_RAISE), and none of this can be
 * undone (the _LOCKED bits). Setting them needs CAP_SETPCAP, which init
 * still has in its user namespace at this point.
 */
static int
drop_all_caps(void)
{
	const capng_select_t sets = CAPNG_SELECT_ALL;

	if (prctl(PR_SET_SECUREBITS,
		SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		    SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
		    SECBIT_NO_CAP_AMBIENT_RAISE |
		    SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		0, 0, 0) < 0)
		return -errno;
	/* libcap-ng remembers the pid of the last process it read (the
	 * zygote's, when it read its own), and a raw clone3 runs no atfork
	 * handler to reset it: name ourselves, or capset(2) would aim at
	 * the zygote and fail. */
	capng_setpid(getpid());
	capng_clear(sets);
	if (capng_apply(sets) != 0)
		return -EPERM;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor above 2 except the N in KEEP (rule 10). */
static void
close_all_except(int *keep, size_t n)
{
	unsigned from = 3;

	qsort(keep, n, sizeof(*keep), cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned)keep[i] > from)
			syscall(SYS_close_range, from, (unsigned)keep[i] - 1,
			    0);
		from = (unsigned)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/* FD (a result: a negative errno passes through) moved to 3 or above
 * with the fcntl(2) command CMD (F_DUPFD_CLOEXEC): init has closed 0, 1
 * and 2, which the payload's standard streams will take. Returns it, or
 * a negative errno with errno set too. */
static int
above_stdio(int fd, int cmd)
{
	int high, e;

	if (fd < 0 || fd > 2)
		return fd;
	high = fcntl(fd, cmd, 3);
	e = errno;
	close(fd);
	errno = e;
	return high < 0 ? -e : high;
}

/* An O_PATH descriptor of directory PATH numbered 3 or above, or a
 * negative errno with errno set. */
static int
open_above_stdio(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	return above_stdio(fd < 0 ? -errno : fd, F_DUPFD_CLOEXEC);
}

/*
 * Arms init's parent-death signal SIG and checks that the launcher did
 * not die before it took effect: getppid() says nothing (0 in a pid
 * namespace of our own; a subreaper's pid otherwise), its pidfd does.
 */
static void
arm_parent_death(const struct jail_host *h, int status_fd, int sig)
{
	struct pollfd alive = {.fd = h->launcher_pidfd, .events = POLLIN};

	if (prctl(PR_SET_PDEATHSIG, sig) < 0 || poll(&alive, 1, 0) != 0)
		setup_failed(status_fd, STAGE_PARENT, ESRCH);
}

/*
 * Without a user namespace (layer user_ns off): the payload's host ids,
 * H's outer ids (the launcher's own, or 65534 for a root launcher, never
 * root), taken by init itself; as root, its supplementary groups go
 * first. The change clears every capability, none kept (no
 * SECBIT_KEEP_CAPS; capabilities(7)).
 */
static int
take_outer_ids(const struct jail_host *h)
{
	if (geteuid() == 0 && setgroups(0, NULL) < 0)
		return -errno;
	if (setresgid(h->outer_gid, h->outer_gid, h->outer_gid) < 0 ||
	    setresuid(h->outer_uid, h->outer_uid, h->outer_uid) < 0)
		return -errno;
	return 0;
}

/* Without a user namespace: no securebits (setting them needs
 * CAP_SETPCAP, which no zygote keeps) and no bounding set (a root zygote
 * emptied its own); the sets init may still hold, and the ambient set. */
static int
drop_caps_host(void)
{
	capng_setpid(getpid());
	capng_clear(CAPNG_SELECT_CAPS);
	if (capng_apply(CAPNG_SELECT_CAPS) != 0)
		return -EPERM;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/*
 * A warm pool's jail, built for TEMPLATE: waits on GO_FD for the job's RUN
 * message from the launcher and returns it, decoded (leaked: init execs
 * nothing and exits after its payload). The launcher discarding the jail
 * (EOF) ends init quietly; a message that does not decode, or a job that
 * asks for what the jail was not built for (jail_pool_compatible: a
 * launcher is not trusted to widen a jail), is a set-up failure. The
 * message carries the job's stdin pipe exactly when its spec has
 * JOB_F_STDIN (else it is a set-up failure too); it is stored in
 * *STDIN_FD. Signals
 * are blocked: the wait is not interrupted, and the kernel's SIGKILL
 * still ends it.
 */
static const struct job_spec *
take_job(const struct job_spec *template, int go_fd, int status_fd,
    int *stdin_fd)
{
	struct job_spec *job = calloc(1, sizeof(*job));
	uint8_t *msg = malloc(PROTO_MAX_MSG);
	const uint8_t *body;
	size_t body_len, nfds = 0;
	uint16_t type;
	struct stat st;
	int n, in = -1, fl;

	if (job == NULL || msg == NULL)
		setup_failed(status_fd, STAGE_POOL_JOB, ENOMEM);
	/* At most one descriptor: the job's stdin (more, or a control
	 * message of another kind, is -EBADMSG with all of them closed). */
	n = proto_recv_fds(go_fd, msg, PROTO_MAX_MSG, &in, 1, &nfds);
	if (n == 0)
		_exit(0);
	if (n < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, -n);
	if (proto_decode_header(msg, (size_t)n, &type, &body, &body_len) < 0 ||
	    type != PROTO_RUN || proto_decode_run(body, body_len, job) < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, EBADMSG);
	/* The job's stdin exactly when its spec says so, and then the read
	 * end of a pipe only (proto.h, JOB_F_STDIN), as the launcher
	 * checked; numbered above the standard streams, which init has
	 * closed and the payload's will take. */
	if (!jail_pool_compatible(template, job) ||
	    ((job->flags & JOB_F_STDIN) != 0) != (nfds == 1) ||
	    (nfds == 1 &&
		(fstat(in, &st) < 0 || !S_ISFIFO(st.st_mode) ||
		    (fl = fcntl(in, F_GETFL)) < 0 ||
		    (fl & (O_ACCMODE | O_PATH)) != O_RDONLY)))
		setup_failed(status_fd, STAGE_POOL_JOB, EPERM);
	if (nfds == 1 && (*stdin_fd = above_stdio(in, F_DUPFD_CLOEXEC)) < 0)
		setup_failed(status_fd, STAGE_POOL_JOB, -*stdin_fd);
	close(go_fd);
	free(msg);
	return job;
}

/*
 * The body of jail init (pid 1 of the jail); never returns. SYNC_FD is
 * the read end of the pipe on which the launcher says the id maps are
 * written; STATUS_FD the write end of the status pipe; OUT_FD and ERR_FD
 * the write ends of the payload's output pipes; NOTIFY_FD the socket on
 * which the payload sends the seccomp listener to the launcher; GO_FD,
 * for a warm pool's jail, the socket its job comes on (else -1).
 */
/*
 * Init's first steps, before any mount: waits for the zygote's id maps
 * on SYNC_FD (and closes it), takes the payload's ids in the new user
 * namespace, arms the parent-death signal, bounds TCP's buffers in the
 * network namespace, and without a pid namespace holds the host's /proc
 * into C->proc_fd and becomes a child subreaper. A failure is reported on
 * C->status_fd and ends init.
 */
static void
init_ids(struct init_ctx *c, int sync_fd)
{
	const struct job_spec *spec = c->spec;
	int status_fd = c->status_fd, e;
	char go;

	/* Wait for the maps; EOF means the launcher died or gave up on us. */
	if (read(sync_fd, &go, 1) != 1)
		setup_failed(status_fd, STAGE_ID_MAPS, EPIPE);
	close(sync_fd);
	/* Our kernel ids were the launcher's; now become the payload's ids
	 * inside. Capabilities in the new namespace survive: its uid 0 is
	 * unmapped, so no setuid "root to non-root" transition drops them. */
	if (c->userns &&
	    (setresgid(spec->gid, spec->gid, spec->gid) < 0 ||
		setresuid(spec->uid, spec->uid, spec->uid) < 0))
		setup_failed(status_fd, STAGE_SET_IDS, errno);

	/* Only now: a change of effective ids clears the parent-death
	 * signal (prctl(2)). Without a pid namespace init must outlive the
	 * launcher long enough to end the job's processes. */
	arm_parent_death(c->h, status_fd,
	    c->pidns ? SIGKILL : JAIL_KILL_SIGNAL);

	/* Kernel memory no process maps, bounded per namespace while init
	 * still holds its capabilities (layer limits; without a user
	 * namespace the host's sysctl holds). The inotify watch bound is
	 * one of the user namespace's maxima (quotas.c). */
	if (c->userns && !job_spec_layer_off(spec, JOB_LAYER_LIMITS) &&
	    !job_spec_layer_off(spec, JOB_LAYER_NETWORK_NS) &&
	    (e = jail_init_tcp_buffers()) < 0)
		setup_failed(status_fd, STAGE_TCP_BUFFERS, -e);

	if (!c->pidns) {
		/* The host's /proc, held before any mount: kill_tree walks
		 * the job's processes in it. */
		c->proc_fd = open_above_stdio("/proc");
		if (c->proc_fd < 0)
			setup_failed(status_fd, STAGE_PROC, errno);
		if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
			setup_failed(status_fd, STAGE_SUBREAPER, errno);
	}
}

/*
 * With a mount namespace: enters the workspace directory WSFD (unless
 * WORK_TREE_FD, the id-mapped copy, is given), closes WSFD, unshares the
 * mount namespace and builds the root (mounts.c), then holds /tmp and
 * home into C->tmp_fd and C->home_fd. A failure ends init.
 */
static void
init_mounts(struct init_ctx *c, int wsfd, int work_tree_fd)
{
	const struct job_spec *spec = c->spec;
	int status_fd = c->status_fd, stage, bind, e;

	if (work_tree_fd < 0 && fchdir(wsfd) < 0)
		setup_failed(status_fd, STAGE_WORK, errno);
	close(wsfd);
	if (unshare(CLONE_NEWNS) < 0)
		setup_failed(status_fd, STAGE_MOUNT_NS, errno);
	if ((e = mounts_build_root(spec, work_tree_fd,
		 c->userns ? (uid_t)-1 : c->h->outer_uid,
		 c->userns ? (gid_t)-1 : c->h->outer_gid, &stage, &bind)) < 0)
		mounts_failed(status_fd, stage, bind, e);
	/* Held to tell, when the payload ends, whether /tmp or home
	 * filled up (disk_full); opened before any code of the job
	 * runs. Only the tmpfs of layers limits and private_cwd. */
	if (!job_spec_layer_off(spec, JOB_LAYER_PRIVATE_CWD) &&
	    !job_spec_layer_off(spec, JOB_LAYER_LIMITS)) {
		c->tmp_fd = open_above_stdio("/tmp");
		c->home_fd = open_above_stdio(spec->home);
		if (c->tmp_fd < 0 || c->home_fd < 0)
			setup_failed(status_fd, STAGE_TMP, errno);
	}
}

/*
 * The hostname and lo; without a user namespace, the payload's host ids
 * taken now (the steps before needed the zygote's capabilities); the
 * launcher's pidfd closed; the workspace entered (/work, or WSFD itself,
 * closed then, without a mount namespace, with the user quotas set
 * through the host's /proc). A failure ends init.
 */
static void
init_names_and_work(struct init_ctx *c, int wsfd)
{
	const struct job_spec *spec = c->spec;
	int status_fd = c->status_fd, e;

	if (!job_spec_layer_off(spec, JOB_LAYER_IPC_UTS) &&
	    sethostname(spec->hostname, strlen(spec->hostname)) < 0)
		setup_failed(status_fd, STAGE_HOSTNAME, errno);
	/* A root zygote keeps no CAP_NET_ADMIN: without a user namespace
	 * lo stays down, and the network namespace is empty. */
	if (!job_spec_layer_off(spec, JOB_LAYER_NETWORK_NS) &&
	    (e = jail_init_loopback()) < 0 && (c->userns || e != -EPERM))
		setup_failed(status_fd, STAGE_LOOPBACK, e);

	if (!c->userns) {
		if ((e = take_outer_ids(c->h)) < 0)
			setup_failed(status_fd, STAGE_SET_IDS, e);
		arm_parent_death(c->h, status_fd,
		    c->pidns ? SIGKILL : JAIL_KILL_SIGNAL);
	}
	close(c->h->launcher_pidfd);
	if (c->mountns && !c->userns && chdir("/work") < 0)
		setup_failed(status_fd, STAGE_WORK, errno);
	if (!c->mountns) {
		/* The host's file system; the workspace is the current
		 * directory (a root launcher's real one: an id-mapped mount
		 * needs a mount namespace to live in), entered with the
		 * payload's ids: a root init keeps no capability to pass
		 * the workspace's permissions. */
		if (fchdir(wsfd) < 0)
			setup_failed(status_fd, STAGE_WORK, errno);
		close(wsfd);
		/* The quotas mounts.c sets otherwise, through the host's
		 * /proc (which shows this user namespace's files). */
		if (c->userns && !job_spec_layer_off(spec, JOB_LAYER_LIMITS) &&
		    (e = jail_user_quotas("/proc/sys/user",
			 job_spec_layer_off(spec, JOB_LAYER_SECCOMP))) < 0)
			setup_failed(status_fd, STAGE_USER_QUOTAS, -e);
	}
}

/*
 * Init's own lock-down before the payload: capabilities dropped (all of
 * them in a user namespace, the host set otherwise), not dumpable, and
 * the payload's Landlock ruleset built (so that a warm jail has it
 * ready; the payload alone is restricted by it). Returns the ruleset's
 * descriptor (-1: layer landlock off) with its ABI in *ABI. A failure
 * ends init.
 */
static int
init_lockdown(const struct init_ctx *c, int *abi)
{
	const struct job_spec *spec = c->spec;
	int status_fd = c->status_fd, landlock_rs = -1, e;

	if (!job_spec_layer_off(spec, JOB_LAYER_CAPS_NNP) &&
	    (e = c->userns ? drop_all_caps() : drop_caps_host()) < 0)
		setup_failed(status_fd, STAGE_CAPS, e);
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		setup_failed(status_fd, STAGE_CAPS, errno);
	/* The payload's Landlock ruleset, built here so that a warm jail
	 * has it ready; the payload alone is restricted by it. */
	if (!job_spec_layer_off(spec, JOB_LAYER_LANDLOCK) &&
	    (landlock_rs = above_stdio(jail_landlock_build(spec, abi),
		 F_DUPFD_CLOEXEC)) < 0)
		setup_failed(status_fd, STAGE_LANDLOCK, -landlock_rs);
	return landlock_rs;
}

_Noreturn void
jail_init_main(const struct job_spec *spec, int wsfd, int work_tree_fd,
    const struct jail_host *h, int sync_fd, int status_fd, int out_fd,
    int err_fd, int notify_fd, int go_fd)
{
	int keep[] = {wsfd, work_tree_fd, h->launcher_pidfd, sync_fd, status_fd,
	    out_fd, err_fd, notify_fd, h->stdin_fd, go_fd};
	struct init_ctx c = {
	    .spec = spec,
	    .h = h,
	    .status_fd = status_fd,
	    .userns = !job_spec_layer_off(spec, JOB_LAYER_USER_NS),
	    .pidns = !job_spec_layer_off(spec, JOB_LAYER_PID_NS),
	    .mountns = !job_spec_layer_off(spec, JOB_LAYER_MOUNT_NS),
	    .group = !job_spec_layer_off(spec, JOB_LAYER_PROCESS_GROUP),
	    .tmp_fd = -1,
	    .home_fd = -1,
	    .proc_fd = -1,
	};
	int landlock_rs, landlock_abi = 0;
	sigset_t all;
	pid_t payload;
	int in_fd = h->stdin_fd;

	/* Not the zygote's name: `ps` and /proc/1/status in the jail. */
	prctl(PR_SET_NAME, "stockade-init");
	/* The broker's socket and anything else of the launcher's stay out;
	 * stdio too, since the launcher's stderr is the caller's terminal. */
	close_all_except(keep, sizeof(keep) / sizeof(keep[0]));
	close(0);
	close(1);
	close(2);

	init_ids(&c, sync_fd);
	if (c.mountns)
		init_mounts(&c, wsfd, work_tree_fd);
	init_names_and_work(&c, wsfd);
	landlock_rs = init_lockdown(&c, &landlock_abi);

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, NULL) < 0)
		setup_failed(status_fd, STAGE_SIGNALS, errno);

	/* A warm pool's jail: built; now the job (pool.h). */
	if (go_fd >= 0)
		c.spec = spec = take_job(spec, go_fd, status_fd, &in_fd);

	payload = fork();
	if (payload < 0)
		setup_failed(status_fd, STAGE_FORK_PAYLOAD, errno);
	if (payload == 0) {
		if (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
			setup_failed(status_fd, STAGE_STDIO, errno);
		jail_exec_payload(spec, h->filter, landlock_rs, landlock_abi,
		    status_fd, notify_fd, in_fd);
	}
	close(out_fd);
	close(err_fd);
	close(notify_fd);
	if (landlock_rs >= 0)
		close(landlock_rs);
	if (in_fd >= 0)
		close(in_fd);
	jail_init_reap(&c, payload, &all);
}
