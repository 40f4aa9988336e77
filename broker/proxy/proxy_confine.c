/*
 * proxy_confine.c: stockade-proxy confines itself once set up
 * (proxy.h): uid 65534 when started as root, no_new_privs, every
 * capability dropped, a Landlock domain
 * that handles every file-system right with no rule (no file at all),
 * TCP bind (ABI 4 on) with no rule, and both scopes (ABI 6 on); then a
 * seccomp allow-list that kills the process on any other call. A kernel
 * without Landlock is a refusal: there is no weaker mode.
 *
 * TCP connect, with --connect-ports, is allowed to those ports alone:
 * the broker passes the union of its policy's rule ports and its
 * resolver's (a job's list only narrows the policy's, so no job needs
 * another); the decision (egress_decide, egress_check_address) then
 * picks, per job, among them. A compromised proxy reaches no other
 * port of the host or its network. Without the option (tests, a policy
 * with more than PROXY_MAX_CONNECT_PORTS ports) connect is not handled.
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "confine_util.h"
#include "llutil.h"
#include "proxy.h"

/* What the loop, malloc, c-ares and stdio call, whatever the arguments. */
static const char *const allowed[] = {
    "read",
    "write",
    "readv",
    "writev",
    "close",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "epoll_ctl",
    "accept4",
    "connect",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    "getsockopt",
    "setsockopt",
    "getsockname",
    "getpeername",
    "fcntl",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "mmap",
    "munmap",
    "mremap",
    "brk",
    "madvise",
    "exit_group",
    "exit",
    "rt_sigreturn",
    "getrandom",
    "getpid",
    "gettid",
    "poll",
    "ppoll",
    "newfstatat",
    "fstat",
    "lseek",
    "pipe2", /* a relayed connection's pipe (proxy_relay.c) */
    "splice",
};

static int
allow_args(scmp_filter_ctx ctx)
{
	int e;

	/* Sockets of the Internet only: no AF_UNIX, AF_NETLINK, ... */
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		 SCMP_A0(SCMP_CMP_EQ, AF_INET))) < 0 ||
	    (e = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
		 SCMP_A0(SCMP_CMP_EQ, AF_INET6))) < 0)
		return e;
	/* No executable memory. */
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
		 SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0))) < 0)
		return e;
	if ((e = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
		 SCMP_A1(SCMP_CMP_EQ, FIONBIO))) < 0 ||
	    (e = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
		 SCMP_A1(SCMP_CMP_EQ, FIONREAD))) < 0)
		return e;
	return 0;
}

static int
load_seccomp(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int e = ctx == NULL ? -ENOMEM : 0;

	if (e == 0)
		e = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
		    SCMP_ACT_KILL_PROCESS);
	for (size_t i = 0; e == 0 && i < sizeof(allowed) / sizeof(*allowed);
	     i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr != __NR_SCMP_ERROR)
			e = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	if (e == 0)
		e = allow_args(ctx);
	if (e == 0)
		e = seccomp_load(ctx);
	if (ctx != NULL)
		seccomp_release(ctx);
	if (e < 0)
		snprintf(err, errlen, "seccomp: %s", strerror(-e));
	return e;
}

/* Run as root (a broker started by root), the proxy becomes nobody
 * (65534) first: it needs no id of its own, and the files root owns
 * stay out of reach even past a hole in the other layers. Returns 0 or
 * a negative errno with ERR set. */
static int
leave_root(char *err, size_t errlen)
{
	const uid_t nobody = 65534;

	if (getuid() != 0 && geteuid() != 0)
		return 0;
	/* EPERM: a user namespace whose setgroups is denied (unshare -r):
	 * its groups cannot change, nor be a way out. */
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		goto fail;
	/* EINVAL: 65534 is not mapped in this user namespace, which maps
	 * root alone; root there is one ordinary user outside, and stays. */
	if (setresgid(nobody, nobody, nobody) < 0) {
		if (errno == EINVAL)
			return 0;
		goto fail;
	}
	if (setresuid(nobody, nobody, nobody) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "cannot leave root for uid %u: %s",
	    (unsigned)nobody, strerror(errno));
	return -errno;
}

int
proxy_confine(const uint16_t *ports, size_t nports, char *err, size_t errlen)
{
	struct cf_ll_config cfg = {
	    .who = "egress proxy",
	    .deny_tcp_bind = true,
	    .connect_ports = ports,
	    .nconnect_ports = nports,
	    .scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
		LANDLOCK_SCOPE_SIGNAL,
	};
	int abi = 0, e;

	if ((e = leave_root(err, errlen)) < 0)
		return e;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		e = -errno;
		snprintf(err, errlen, "no_new_privs: %s", strerror(errno));
		return e;
	}
	if ((e = cf_drop_caps(NULL, 0, err, errlen)) < 0)
		return e;
	if ((e = cf_landlock_apply(&cfg, NULL, 0, &abi, err, errlen)) < 0)
		return e;
	if ((e = load_seccomp(err, errlen)) < 0)
		return e;
	return abi;
}
