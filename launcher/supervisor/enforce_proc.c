/*
 * enforce_proc.c: what the enforcer reads from the host's /proc beside
 * the process tree of usage.c (enforce_internal.h): page tables, and the
 * jail's sockets with the charge for each.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce_internal.h"
#include "fsutil.h"

/*
 * Bytes of page tables of process PID: "VmPTE:" of /proc/PID/status
 * (proc(5), kB), or 0 when it is gone or unreadable. Page tables are
 * kernel memory that no proportional set includes: one file page mapped
 * once every 2 MiB costs a 4 KiB page table for each mapping and counts
 * once in the sum of sets, and RLIMIT_AS, the only other bound, is not set (docs/layers.md, "Memory the monitor cannot
 * see").
 */
uint64_t
enf_read_vmpte(int proc_fd, pid_t pid)
{
	return proc_pid_number(proc_fd, pid, "status", "\nVmPTE:") * 1024u;
}

/*
 * The monitor's charge per socket of the jail (docs/layers.md, "Memory
 * the monitor cannot see"): socket buffers are kernel memory no process
 * maps. A socket's queues hold at most its send buffer plus one skb of
 * up to half of it (unix_stream_sendmsg: the sender's sk_wmem_alloc
 * below sk_sndbuf before each skb) and as much again in its receive
 * buffer (TCP, UDP), with SO_SNDBUF and SO_RCVBUF refused under the
 * monitor (seccomp.c) and TCP's autotuning capped at the defaults by
 * jail init (init/jail_init.c): 3/2 of wmem_default plus rmem_default
 * (socket(7); 624 KiB with the kernel's defaults). Returns 0 when INIT
 * shares the launcher's network namespace (layer network_ns off: its
 * count is the host's) or its sockstat cannot be seen, else the charge
 * in bytes.
 */
uint64_t
enf_socket_charge(int proc_fd, pid_t init)
{
	struct stat jail, own;
	char path[64];
	long long w, r;

	/* /proc/PID/ns/net needs ptrace access, which the confined
	 * launcher lacks; each network namespace's /proc/net entries have
	 * inode numbers of their own (proc_alloc_inum). */
	snprintf(path, sizeof(path), "%d/net/sockstat", (int)init);
	if (fstatat(proc_fd, path, &jail, 0) < 0 ||
	    fstatat(proc_fd, "self/net/sockstat", &own, 0) < 0 ||
	    (jail.st_dev == own.st_dev && jail.st_ino == own.st_ino))
		return 0;
	w = read_number_at(proc_fd, "sys/net/core/wmem_default");
	r = read_number_at(proc_fd, "sys/net/core/rmem_default");
	if (w <= 0)
		w = 212992; /* the kernel's default, SK_WMEM_MAX */
	if (r <= 0)
		r = 212992;
	return (uint64_t)(w + r) * 3 / 2;
}

/*
 * Sockets of the jail's network namespace now: "sockets: used N" of
 * /proc/INIT/net/sockstat, a count per network namespace (every socket
 * made there, unix ones included; sock_inuse_get, Linux 4.16). 0 when it
 * cannot be read (the jail is gone).
 */
uint32_t
enf_jail_sockets(int proc_fd, pid_t init)
{
	uint64_t n = proc_pid_number(proc_fd, init, "net/sockstat",
	    "sockets: used ");

	return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}
