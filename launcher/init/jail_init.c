/*
 * jail_init.c: the life of a jail's init (pid 1), jail_init_main.
 *
 * The launcher's zygote (zygote.h; zygote/jail_start.c) clones init with
 * CLONE_NEWUSER | NEWPID | NEWNET | NEWIPC | NEWUTS | NEWCGROUP,
 * CLONE_PIDFD (clone3, so a pidfd exists from the start and nobody waits
 * by pid alone) and CLONE_PARENT (init is the launcher's child), and hands
 * the pidfd and the pipes to the launcher. Init then, in this order, and
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
 *      root file system (mounts.c; /work over the job's stage, stage.c);
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
 * Steps 1 to 5 are the table init_steps, run in order by
 * run_init_steps. Layers switched off (evaluation only; docs/layers.md
 * says what each one changes) leave steps out, and that table's layer
 * column is where: a namespace not made, the maps not written, no
 * mounts, no hostname, no loopback, capabilities kept. Two change the
 * steps instead (a step's OFF column):
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

_Noreturn void
setup_failed(int status_fd, int stage, int err)
{
	jail_send_record(status_fd, INIT_REC_SETUP_FAILED, stage,
	    err < 0 ? -err : err);
	_exit(1);
}

/* As setup_failed, for the mount set-up: a failed bind (BIND >= 0, its
 * index in the job's mounts) is reported as such, to name its path. */
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
int
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
 * One step of init's set-up: ON runs when LAYER is on (or when LAYER is
 * 0, a step of every jail), OFF, when not NULL, in its place when an
 * evaluation turned LAYER off (docs/layers.md). A step that fails
 * reports its stage on the status pipe and ends init (setup_failed).
 */
struct init_step {
	enum job_layer layer;
	void (*on)(struct init_setup *);
	void (*off)(struct init_setup *);
	const char *what;
};

/* Waits for the zygote's id maps; EOF means the launcher died or gave
 * up on us. */
static void
wait_for_maps(struct init_setup *s)
{
	char go;

	if (read(s->sync_fd, &go, 1) != 1)
		setup_failed(s->c->status_fd, STAGE_ID_MAPS, EPIPE);
	close(s->sync_fd);
}

/* Our kernel ids were the launcher's; now become the payload's ids
 * inside. Capabilities in the new namespace survive: its uid 0 is
 * unmapped, so no setuid "root to non-root" transition drops them. */
static void
take_payload_ids(struct init_setup *s)
{
	const struct job_spec *spec = s->c->spec;

	if (setresgid(spec->gid, spec->gid, spec->gid) < 0 ||
	    setresuid(spec->uid, spec->uid, spec->uid) < 0)
		setup_failed(s->c->status_fd, STAGE_SET_IDS, errno);
}

/* Only after the ids: a change of effective ids clears the parent-death
 * signal (prctl(2)). Without a pid namespace init must outlive the
 * launcher long enough to end the job's processes. */
static void
parent_death(struct init_setup *s)
{
	arm_parent_death(s->c->h, s->c->status_fd,
	    s->c->pidns ? SIGKILL : JAIL_KILL_SIGNAL);
}

/* Kernel memory no process maps, bounded per namespace while init still
 * holds its capabilities (layer limits), in a network namespace of the
 * jail's own and with a user namespace (without one the host's sysctl
 * holds). The inotify watch bound is one of the user namespace's maxima
 * (quotas.c). */
static void
bound_tcp_buffers(struct init_setup *s)
{
	int e;

	if (!s->c->userns ||
	    job_spec_layer_off(s->c->spec, JOB_LAYER_NETWORK_NS))
		return;
	if ((e = jail_init_tcp_buffers()) < 0)
		setup_failed(s->c->status_fd, STAGE_TCP_BUFFERS, -e);
}

/* Without a pid namespace: the host's /proc, held before any mount
 * (kill_tree walks the job's processes in it), and init a child
 * subreaper. */
static void
hold_host_proc(struct init_setup *s)
{
	struct init_ctx *c = s->c;

	c->proc_fd = open_above_stdio("/proc");
	if (c->proc_fd < 0)
		setup_failed(c->status_fd, STAGE_PROC, errno);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		setup_failed(c->status_fd, STAGE_SUBREAPER, errno);
}

/* The mount namespace: enters the workspace directory (unless the
 * id-mapped copy is given), closes it, unshares the mount namespace and
 * builds the root (mounts.c), /work with the job's stage in C->stage_fd. */
static void
build_root(struct init_setup *s)
{
	struct init_ctx *c = s->c;
	int stage, bind, e;

	if (s->work_tree_fd < 0 && fchdir(s->wsfd) < 0)
		setup_failed(c->status_fd, STAGE_WORK, errno);
	close(s->wsfd);
	if (unshare(CLONE_NEWNS) < 0)
		setup_failed(c->status_fd, STAGE_MOUNT_NS, errno);
	if ((e = mounts_build_root(c->spec, s->work_tree_fd,
		 c->userns ? (uid_t)-1 : c->h->outer_uid,
		 c->userns ? (gid_t)-1 : c->h->outer_gid, &stage, &bind,
		 &c->stage_fd)) < 0)
		mounts_failed(c->status_fd, stage, bind, e);
}

/*
 * /tmp and home held in C->tmp_fd and C->home_fd, to tell, when the
 * payload ends, whether either filled up (disk_full); opened before any
 * code of the job runs. Only the tmpfs of layers limits and private_cwd,
 * which a mount namespace holds.
 */
static void
hold_tmp_and_home(struct init_setup *s)
{
	struct init_ctx *c = s->c;

	if (!c->mountns || job_spec_layer_off(c->spec, JOB_LAYER_LIMITS))
		return;
	c->tmp_fd = open_above_stdio("/tmp");
	c->home_fd = open_above_stdio(c->spec->home);
	if (c->tmp_fd < 0 || c->home_fd < 0)
		setup_failed(c->status_fd, STAGE_TMP, errno);
}

/* The jail's hostname, in its UTS namespace. */
static void
set_hostname(struct init_setup *s)
{
	const struct job_spec *spec = s->c->spec;

	if (sethostname(spec->hostname, strlen(spec->hostname)) < 0)
		setup_failed(s->c->status_fd, STAGE_HOSTNAME, errno);
}

/* lo up. A root zygote keeps no CAP_NET_ADMIN: without a user namespace
 * lo stays down, and the network namespace is empty. */
static void
bring_up_loopback(struct init_setup *s)
{
	int e;

	if ((e = jail_init_loopback()) < 0 && (s->c->userns || e != -EPERM))
		setup_failed(s->c->status_fd, STAGE_LOOPBACK, e);
}

/* Without a user namespace: the payload's host ids taken now (the steps
 * before needed the zygote's capabilities), and the parent-death signal
 * armed again, since the change cleared it. */
static void
take_host_ids(struct init_setup *s)
{
	int e;

	if ((e = take_outer_ids(s->c->h)) < 0)
		setup_failed(s->c->status_fd, STAGE_SET_IDS, e);
	parent_death(s);
}

/* The launcher's pidfd, needed no more. */
static void
close_launcher_pidfd(struct init_setup *s)
{
	close(s->c->h->launcher_pidfd);
}

/* With a mount namespace: /work entered again after the change to the
 * host ids (the root was built as the zygote's). */
static void
enter_work(struct init_setup *s)
{
	if (!s->c->userns && chdir("/work") < 0)
		setup_failed(s->c->status_fd, STAGE_WORK, errno);
}

/*
 * Without a mount namespace: the host's file system; the workspace is
 * the current directory (a root launcher's real one: an id-mapped mount
 * needs a mount namespace to live in), entered with the payload's ids: a
 * root init keeps no capability to pass the workspace's permissions.
 */
static void
enter_host_workspace(struct init_setup *s)
{
	if (fchdir(s->wsfd) < 0)
		setup_failed(s->c->status_fd, STAGE_WORK, errno);
	close(s->wsfd);
}

/* Without a mount namespace: the quotas mounts.c sets otherwise, through
 * the host's /proc (which shows this user namespace's files), with a
 * user namespace and layer limits on. */
static void
host_proc_user_quotas(struct init_setup *s)
{
	const struct job_spec *spec = s->c->spec;
	int e;

	if (s->c->userns && !job_spec_layer_off(spec, JOB_LAYER_LIMITS) &&
	    (e = jail_user_quotas("/proc/sys/user",
		 job_spec_layer_off(spec, JOB_LAYER_SECCOMP))) < 0)
		setup_failed(s->c->status_fd, STAGE_USER_QUOTAS, -e);
}

/* Every capability dropped: all of them in a user namespace, the host
 * set otherwise. */
static void
drop_caps(struct init_setup *s)
{
	int e;

	if ((e = s->c->userns ? drop_all_caps() : drop_caps_host()) < 0)
		setup_failed(s->c->status_fd, STAGE_CAPS, e);
}

/* Not dumpable, so the payload cannot read init's memory. */
static void
not_dumpable(struct init_setup *s)
{
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		setup_failed(s->c->status_fd, STAGE_CAPS, errno);
}

/* The payload's Landlock ruleset, built here so that a warm jail has it
 * ready; the payload alone is restricted by it. */
static void
build_landlock(struct init_setup *s)
{
	if ((s->landlock_rs = above_stdio(jail_landlock_build(s->c->spec,
					      &s->landlock_abi),
		 F_DUPFD_CLOEXEC)) < 0)
		setup_failed(s->c->status_fd, STAGE_LANDLOCK, -s->landlock_rs);
}

/*
 * Init's set-up, in order (style.md rule 12; the numbers are those of
 * this file's head). The layer column is the only place an evaluation's
 * switch (docs/layers.md) reaches these steps; a step that still looks
 * at a layer says so in its comment.
 */
static const struct init_step init_steps[] = {
    /* 1, 2: ids and parent death */
    {0, wait_for_maps, NULL, "the zygote's id maps"},
    {JOB_LAYER_USER_NS, take_payload_ids, NULL, "the payload's ids"},
    {0, parent_death, NULL, "parent-death signal"},
    {JOB_LAYER_LIMITS, bound_tcp_buffers, NULL, "TCP buffers bounded"},
    {JOB_LAYER_PID_NS, NULL, hold_host_proc, "host /proc, subreaper"},
    /* 3: the root file system */
    {JOB_LAYER_MOUNT_NS, build_root, NULL, "the root file system"},
    {JOB_LAYER_PRIVATE_CWD, hold_tmp_and_home, NULL, "/tmp, home held"},
    /* 4: names, and the workspace */
    {JOB_LAYER_IPC_UTS, set_hostname, NULL, "hostname"},
    {JOB_LAYER_NETWORK_NS, bring_up_loopback, NULL, "lo up"},
    {JOB_LAYER_NETWORK_NS, jail_init_make_egress, NULL, "proxy sockets"},
    {JOB_LAYER_USER_NS, NULL, take_host_ids, "the payload's host ids"},
    {0, close_launcher_pidfd, NULL, "the launcher's pidfd closed"},
    {JOB_LAYER_MOUNT_NS, enter_work, enter_host_workspace, "workspace"},
    {JOB_LAYER_MOUNT_NS, NULL, host_proc_user_quotas, "user quotas"},
    /* 5: lock-down */
    {JOB_LAYER_CAPS_NNP, drop_caps, NULL, "capabilities dropped"},
    {0, not_dumpable, NULL, "not dumpable"},
    {JOB_LAYER_LANDLOCK, build_landlock, NULL, "the Landlock ruleset"},
};

/* Runs init_steps for S's job: each step's ON, or its OFF when the
 * evaluation turned its layer off. Returns when all have run (a failed
 * step ends init). */
static void
run_init_steps(struct init_setup *s)
{
	for (size_t i = 0; i < sizeof(init_steps) / sizeof(init_steps[0]);
	     i++) {
		const struct init_step *st = &init_steps[i];
		void (*run)(struct init_setup *) = st->on;

		if (st->layer != 0 && job_spec_layer_off(s->c->spec, st->layer))
			run = st->off;
		if (run != NULL)
			run(s);
	}
}

/*
 * The body of jail init (pid 1 of the jail); never returns. SYNC_FD is
 * the read end of the pipe on which the launcher says the id maps are
 * written; STATUS_FD the write end of the status pipe; OUT_FD and ERR_FD
 * the write ends of the payload's output pipes; NOTIFY_FD the socket on
 * which the payload sends the seccomp listener to the launcher; GO_FD,
 * for a warm pool's jail, the socket its job comes on (else -1).
 */
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
	    .egress_listener = -1,
	    .egress_packet = -1,
	    .stage_fd = -1,
	};
	struct init_setup setup = {
	    .c = &c,
	    .sync_fd = sync_fd,
	    .wsfd = wsfd,
	    .work_tree_fd = work_tree_fd,
	    .landlock_rs = -1,
	    .landlock_abi = 0,
	};
	sigset_t all;
	pid_t payload;

	/* Not the zygote's name: `ps` and /proc/1/status in the jail. */
	prctl(PR_SET_NAME, "stockade-init");
	/* The broker's socket and anything else of the launcher's stay out;
	 * stdio too, since the launcher's stderr is the caller's terminal. */
	close_all_except(keep, sizeof(keep) / sizeof(keep[0]));
	close(0);
	close(1);
	close(2);

	run_init_steps(&setup);

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, NULL) < 0)
		setup_failed(status_fd, STAGE_SIGNALS, errno);

	payload = jail_init_start_payload(&setup, go_fd, out_fd, err_fd,
	    notify_fd, h->stdin_fd);
	jail_init_reap(&c, payload, &all);
}
