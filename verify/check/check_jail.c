/*
 * check_jail.c: the checks of the jail's namespaces (check.h,
 * check_jail.h): user_ns, pid_ns, mount_ns (check_mounts.c), network_ns
 * (check_netns.c), ipc_ns and uts_ns. Each runs stockade-probe
 * (probe_jail.c) in a real job and compares what it saw with what a
 * sound jail shows (docs/layers.md says what each layer does).
 *
 * A namespace is observed from both sides: the probe reads the
 * namespace links of /proc/self/ns and the check compares them with its
 * own (jail_own_namespace), and it shows what the namespace hides (the
 * host's interfaces, abstract sockets, System V objects, hostname,
 * processes, mounts).
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "check.h"
#include "check_jail.h"

/* ---- user_ns --------------------------------------------------------- */

/* user_ns.setgroups_denied: /proc/self/setgroups says "deny", so the
 * payload cannot drop a group to reach what it denies
 * (user_namespaces(7), CVE-2014-8989). */
static void
setgroups_denied(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[256];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("setgroups")) &&
	    jail_val(r, &j, "setgroups", v, sizeof(v))) {
		if (strcmp(v, "deny") == 0)
			check_pass(r, "/proc/self/setgroups says \"deny\"");
		else
			check_fail(r, "/proc/self/setgroups says \"%s\"", v);
	}
	check_job_free(&j);
}

/*
 * The map FILE ("uid_map") as the probe read it is one line: the
 * payload's id INSIDE (the probe's KEY: "uid") to OUTSIDE, count 1
 * (user_namespaces(7)): a wider map would let a process with CAP_SETUID
 * in the jail become other host users.
 */
static void
single_id_map(struct check_ctx *c, struct check_result *r, const char *file,
    const char *key, unsigned outside)
{
	struct check_job j;
	char map[4096], id[32];
	unsigned in, out, count;
	int used = 0;

	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("ids")) ||
	    !jail_val(r, &j, file, map, sizeof(map)) ||
	    !jail_val(r, &j, key, id, sizeof(id)))
		goto out;
	/* The probe printed the map's newlines as "\n". */
	if (sscanf(map, " %u %u %u%n", &in, &out, &count, &used) != 3 ||
	    strcmp(map + used, "\\n") != 0)
		check_fail(r, "/proc/self/%s is not one line: \"%s\"", file,
		    map);
	else if (count != 1 || in != (unsigned)atoi(id) || out != outside)
		check_fail(r,
		    "/proc/self/%s maps %u ids from %u to %u (want "
		    "1 id, the payload's %s, to %u)",
		    file, count, in, out, id, outside);
	else
		check_pass(r,
		    "/proc/self/%s maps exactly one id, %u to host "
		    "id %u",
		    file, in, out);
out:
	check_job_free(&j);
}

/* user_ns.uid_map_single_id: the payload's uid to the caller's (65534
 * for a root caller), one id (user_namespaces(7)). */
static void
uid_map_single(struct check_ctx *c, struct check_result *r)
{
	single_id_map(c, r, "uid_map", "uid",
	    c->root ? 65534u : (unsigned)geteuid());
}

/* user_ns.gid_map_single_id: the payload's gid to the caller's (65534
 * for a root caller), one id. */
static void
gid_map_single(struct check_ctx *c, struct check_result *r)
{
	single_id_map(c, r, "gid_map", "gid",
	    c->root ? 65534u : (unsigned)getegid());
}

/* user_ns.ids_not_root: the payload's real and effective uid and gid are
 * not 0 in its namespace, and it holds no group 0. */
static void
ids_not_root(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char uid[32], euid[32], gid[32], egid[32], groups[1024];

	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("ids")) ||
	    !jail_val(r, &j, "uid", uid, sizeof(uid)) ||
	    !jail_val(r, &j, "euid", euid, sizeof(euid)) ||
	    !jail_val(r, &j, "gid", gid, sizeof(gid)) ||
	    !jail_val(r, &j, "egid", egid, sizeof(egid)) ||
	    !jail_val(r, &j, "groups", groups, sizeof(groups)))
		goto out;
	if (atoi(uid) == 0 || atoi(euid) == 0 || atoi(gid) == 0 ||
	    atoi(egid) == 0 || jail_list_has(groups, "0"))
		check_fail(r, "uid %s euid %s gid %s egid %s groups [%s]", uid,
		    euid, gid, egid, groups);
	else
		check_pass(r,
		    "uid %s euid %s gid %s egid %s, groups [%s]: no "
		    "root",
		    uid, euid, gid, egid, groups);
out:
	check_job_free(&j);
}

/* user_ns.own_namespace: the job has a user namespace of its own. */
static void
userns_own(struct check_ctx *c, struct check_result *r)
{
	jail_own_namespace(c, r, "user");
}

/* ---- pid_ns ---------------------------------------------------------- */

/* pid_ns.payload_is_pid_2_under_stockade_init: the program is pid 2 of
 * its namespace, the child of pid 1, stockade-init (pid_namespaces(7)). */
static void
pid_two(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pid[32], ppid[32], comm[64];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("pid")) &&
	    jail_val(r, &j, "pid", pid, sizeof(pid)) &&
	    jail_val(r, &j, "ppid", ppid, sizeof(ppid)) &&
	    jail_val(r, &j, "init_comm", comm, sizeof(comm))) {
		if (strcmp(pid, "2") == 0 && strcmp(ppid, "1") == 0 &&
		    strcmp(comm, "stockade-init") == 0)
			check_pass(r,
			    "the program is pid 2, its parent pid 1 "
			    "is stockade-init");
		else
			check_fail(r,
			    "the program is pid %s, its parent %s; "
			    "pid 1 is \"%s\"",
			    pid, ppid, comm);
	}
	check_job_free(&j);
}

/* pid_ns.proc_is_the_jails_own: /proc is a procfs of the job's pid
 * namespace: /proc/self names the program's own pid, and it lists the
 * job's two processes only, not the host's ("/proc and pid namespaces",
 * pid_namespaces(7)). */
static void
proc_own(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char pid[32], self[32], pids[32];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("pid")) &&
	    jail_val(r, &j, "pid", pid, sizeof(pid)) &&
	    jail_val(r, &j, "proc_self", self, sizeof(self)) &&
	    jail_val(r, &j, "proc.pids", pids, sizeof(pids))) {
		if (strcmp(pid, self) == 0 && atoi(pids) >= 1 &&
		    atoi(pids) <= 3)
			check_pass(r,
			    "/proc/self is %s, the program's pid; "
			    "/proc lists %s processes",
			    self, pids);
		else
			check_fail(r,
			    "/proc/self is %s for pid %s; /proc lists "
			    "%s processes (the host's /proc?)",
			    self, pid, pids);
	}
	check_job_free(&j);
}

/* pid_ns.own_namespace: the job has a pid namespace of its own. */
static void
pidns_own(struct check_ctx *c, struct check_result *r)
{
	jail_own_namespace(c, r, "pid");
}

/* ---- ipc_ns ---------------------------------------------------------- */

/* ipc_ns.host_sysv_objects_invisible: a System V shared memory segment
 * this check makes on the host is not among the job's; the job sees no
 * segment, queue or semaphore set at all (ipc_namespaces(7)). The
 * segment is attached and at once marked for removal (IPC_RMID): it
 * stays listed while attached, and goes when this process detaches or
 * dies, interrupted or not (shmctl(2)). */
static void
sysv_invisible(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char shm[32], msg[32], sem[32];
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	void *at = id >= 0 ? shmat(id, NULL, SHM_RDONLY) : (void *)-1;

	memset(&j, 0, sizeof(j));
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	if (at == (void *)-1) {
		check_fail(r,
		    "cannot make and attach a host shared memory "
		    "segment: %s",
		    strerror(errno));
		return;
	}
	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("sysvipc")) &&
	    jail_val(r, &j, "ipc.shm", shm, sizeof(shm)) &&
	    jail_val(r, &j, "ipc.msg", msg, sizeof(msg)) &&
	    jail_val(r, &j, "ipc.sem", sem, sizeof(sem))) {
		if (strcmp(shm, "0") == 0 && strcmp(msg, "0") == 0 &&
		    strcmp(sem, "0") == 0)
			check_pass(r,
			    "the job sees no System V object (the "
			    "host has segment %d)",
			    id);
		else
			check_fail(r,
			    "the job sees %s shared memory segments "
			    "(the host's %d among them?), %s queues, %s "
			    "semaphore sets",
			    shm, id, msg, sem);
	}
	shmdt(at);
	check_job_free(&j);
}

/* ipc_ns.own_namespace: the job has an IPC namespace of its own. */
static void
ipcns_own(struct check_ctx *c, struct check_result *r)
{
	jail_own_namespace(c, r, "ipc");
}

/* ipc_ns.cgroup_namespace_own: CLONE_NEWCGROUP, of the same layer
 * (ipc_uts, docs/layers.md): the job's cgroup namespace is its own and
 * /proc/self/cgroup shows it at the root of every hierarchy
 * (cgroup_namespaces(7)). */
static void
cgroupns_own(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char mine[128], theirs[128], cg[4096];
	ssize_t n = readlink("/proc/self/ns/cgroup", mine, sizeof(mine) - 1);

	memset(&j, 0, sizeof(j));
	if (n < 0) {
		check_fail(r, "cannot read our /proc/self/ns/cgroup: %s",
		    strerror(errno));
		return;
	}
	mine[n] = '\0';
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("ns")) ||
	    !jail_val(r, &j, "ns.cgroup", theirs, sizeof(theirs)))
		goto out;
	if (strcmp(mine, theirs) == 0) {
		check_fail(r,
		    "the job's cgroup namespace is the caller's own, "
		    "%s",
		    theirs);
		goto out;
	}
	check_job_free(&j);
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("sysvipc")) ||
	    !jail_val(r, &j, "cgroup", cg, sizeof(cg)))
		goto out;
	/* Lines "ID:CONTROLLERS:PATH", joined by "\n" by the probe. */
	for (char *line = cg; *line != '\0';) {
		char *end = strstr(line, "\\n");
		char *colon;

		if (end != NULL)
			*end = '\0';
		colon = strrchr(line, ':');
		if (colon != NULL && strcmp(colon + 1, "/") != 0) {
			check_fail(r,
			    "/proc/self/cgroup shows the host's path: "
			    "%s",
			    line);
			goto out;
		}
		line = end != NULL ? end + 2 : line + strlen(line);
	}
	check_pass(r,
	    "the job's cgroup namespace is %s (ours %s); every "
	    "hierarchy shows /",
	    theirs, mine);
out:
	check_job_free(&j);
}

/* ---- uts_ns ---------------------------------------------------------- */

/* uts_ns.hostname_is_policys: a policy's hostname = stockade-check is the
 * job's host name, not the host's (uts_namespaces(7)). */
static void
hostname_policys(struct check_ctx *c, struct check_result *r)
{
	const struct pj s = {.policy = "[jail]\nhostname = stockade-check\n"};
	struct check_job j;
	struct utsname u;
	char name[256];

	if (!jail_probe_ok(c, r, &j, &s, ARGS("uts")) ||
	    !jail_val(r, &j, "hostname", name, sizeof(name)))
		goto out;
	uname(&u);
	if (strcmp(name, "stockade-check") == 0)
		check_pass(r,
		    "the job's host name is \"stockade-check\", the "
		    "policy's (the host's is \"%s\")",
		    u.nodename);
	else
		check_fail(r,
		    "the job's host name is \"%s\" (the host's is "
		    "\"%s\"), not the policy's \"stockade-check\"",
		    name, u.nodename);
out:
	check_job_free(&j);
}

/* uts_ns.own_namespace: the job has a UTS namespace of its own. */
static void
utsns_own(struct check_ctx *c, struct check_result *r)
{
	jail_own_namespace(c, r, "uts");
}

const struct check checks_jail[] = {
    {"user_ns.setgroups_denied", "user_ns",
	"/proc/self/setgroups says \"deny\"", setgroups_denied},
    {"user_ns.uid_map_single_id", "user_ns",
	"uid_map: the payload's uid to the caller's (65534 as root), 1 id",
	uid_map_single},
    {"user_ns.gid_map_single_id", "user_ns",
	"gid_map: the payload's gid to the caller's (65534 as root), 1 id",
	gid_map_single},
    {"user_ns.ids_not_root", "user_ns",
	"uid, euid, gid, egid not 0, no group 0", ids_not_root},
    {"user_ns.own_namespace", "user_ns",
	"the job's user namespace is not the caller's", userns_own},
    {"pid_ns.payload_is_pid_2_under_stockade_init", "pid_ns",
	"the program is pid 2, child of pid 1 stockade-init", pid_two},
    {"pid_ns.proc_is_the_jails_own", "pid_ns",
	"/proc/self is the program's pid; /proc lists the job alone", proc_own},
    {"pid_ns.own_namespace", "pid_ns",
	"the job's pid namespace is not the caller's", pidns_own},
    {"mount_ns.old_root_detached", "mount_ns",
	"one mount at /, no mount of the host's tree", mnt_old_root_detached},
    {"mount_ns.root_read_only", "mount_ns",
	"/ is a read-only, nosuid, nodev tmpfs", mnt_root_ro},
    {"mount_ns.workspace_nosuid_nodev", "mount_ns",
	"/work is mounted nosuid,nodev", mnt_work_nosuid},
    {"mount_ns.binds_read_only", "mount_ns", "/usr is mounted ro,nosuid,nodev",
	mnt_binds_ro},
    {"mount_ns.tmp_home_shm_nosuid_nodev", "mount_ns",
	"/tmp, home, /dev/shm: nosuid,nodev tmpfs; /dev/shm noexec too",
	mnt_tmpfs_flags},
    {"mount_ns.etc_write_refused_read_only", "mount_ns",
	"open(/etc/NEW, O_CREAT): EROFS", mnt_etc_write_refused},
    {"mount_ns.proc_sys_read_only", "mount_ns",
	"/proc/sys is mounted read-only", mnt_proc_sys_ro},
    {"mount_ns.host_dev_hidden", "mount_ns",
	"/dev is a read-only tmpfs without the host's devices", mnt_dev_hidden},
    {"mount_ns.host_paths_absent", "mount_ns",
	"/etc/shadow, /root, /sys, /var, /boot, the host's /tmp: ENOENT",
	mnt_host_paths_absent},
    {"mount_ns.proc_host_facts_masked", "mount_ns",
	"/proc/cmdline, keys, key-users, partitions, diskstats, zoneinfo, "
	"buddyinfo, iomem, config.gz, kallsyms, swaps, timer_list: empty",
	mnt_proc_host_facts_masked},
    {"mount_ns.boot_id_own", "mount_ns",
	"/proc/sys/kernel/random/boot_id: a UUID of each job's own",
	mnt_boot_id_own},
    {"network_ns.only_loopback_up", "network_ns",
	"interfaces: lo alone, up, carrying a datagram", net_only_lo},
    {"network_ns.host_loopback_unreachable", "network_ns",
	"a datagram and a TCP connect to the host's 127.0.0.1 do not arrive "
	"(ECONNREFUSED from the job's own loopback)",
	net_host_lo_unreachable},
    {"network_ns.loopback_tcp_server_works", "network_ns",
	"a TCP server on the job's own 127.0.0.1 answers the job",
	net_loopback_tcp},
    {"network_ns.host_abstract_socket_unreachable", "network_ns",
	"connect to a host abstract unix socket: ECONNREFUSED",
	net_host_abstract_unreachable},
    {"network_ns.own_namespace", "network_ns",
	"the job's network namespace is not the caller's", net_own},
    {"ipc_ns.host_sysv_objects_invisible", "ipc_ns",
	"the job sees no System V object, not the host's segment",
	sysv_invisible},
    {"ipc_ns.own_namespace", "ipc_ns",
	"the job's IPC namespace is not the caller's", ipcns_own},
    {"ipc_ns.cgroup_namespace_own", "ipc_ns",
	"the job's cgroup namespace is its own; /proc/self/cgroup shows /",
	cgroupns_own},
    {"uts_ns.hostname_is_policys", "uts_ns",
	"hostname = stockade-check: the job's host name", hostname_policys},
    {"uts_ns.own_namespace", "uts_ns",
	"the job's UTS namespace is not the caller's", utsns_own},
    {NULL, NULL, NULL, NULL},
};
