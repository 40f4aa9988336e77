/*
 * seccomp.c: the jail's seccomp filter, an allow-list built with
 * libseccomp from a profile (policy/seccomp-*.ini, compiled in), loaded
 * by the payload last before exec (payload.c).
 *
 * Every call the profile does not allow gets SCMP_ACT_NOTIFY: the
 * launcher holds the filter's listener (seccomp_unotify(2)), records the
 * call in the result's denials, and answers it: EPERM (EAFNOSUPPORT for
 * socket), or, when the profile says `denied = kill`, it ends the job
 * (policy_violation). Rules no profile can weaken:
 *  - only the native x86_64 ABI: a call through the i386 (int 0x80) or x32
 *    ABI is notified too (SCMP_FLTATR_ACT_BADARCH) and ends the job;
 *  - ENOSYS for clone3, whose flags live in memory a filter cannot read,
 *    so libc falls back to clone, whose flags it can (as Docker and
 *    systemd-nspawn do); ENOSYS for fchmodat2 and openat2, whose mode a
 *    filter cannot read, so libc falls back to fchmodat and openat;
 *  - clone only without namespace flags; ioctl except TIOCSTI and
 *    TIOCLINUX, whatever the high bits (the kernel reads the low 32;
 *    CVE-2016-7545, CVE-2017-5226): allowed are a zero high word with a
 *    low word below, between or above the two, and a sign-extended
 *    negative int, each as whole-argument comparisons (libseccomp's
 *    32-bit macros still compare 64 bits, libseccomp issue #383); any
 *    other high word is refused; socket only for
 *    AF_UNIX, AF_INET, AF_INET6 (AF_NETLINK, AF_PACKET, AF_VSOCK refused:
 *    vsock is not isolated by the network namespace); personality only
 *    the default persona (and the query 0xffffffff);
 *  - no setuid or setgid bits from chmod, fchmod, fchmodat, mkdir(at),
 *    mknod(at), creat, or open(at) with O_CREAT or O_TMPFILE: `nosuid`
 *    protects the jail, not the host, where the workspace's files keep
 *    their bits (systemd's RestrictSUIDSGID= is the model);
 *  - under the /proc monitor (enforce.h), no memfd_create, memfd_secret,
 *    shmget, msgget, semget or vmsplice, no fcntl F_SETPIPE_SZ,
 *    F_OFD_SETLK or F_OFD_SETLKW, and no
 *    setsockopt SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE or SO_RCVBUFFORCE:
 *    memory no process maps, which the monitor cannot see (an open
 *    file description lock belongs to the open file, fcntl(2), so a
 *    file in flight in a unix socket keeps it in no descriptor table,
 *    where the monitor's count of locks cannot see it; a semaphore
 *    set of semget's SEMMSL semaphores is kernel memory; a pipe grown to
 *    pipe-max-size, a socket's buffer raised to wmem_max doubled,
 *    socket(7); a page vmspliced into a pipe keeps its whole folio, a
 *    2 MiB huge page for 4 KiB, after the mapping is gone: 480 MiB held
 *    under --memory 32 by 15 pipes); a cgroup v2 leaf charges it, so
 *    they stay allowed there
 *    (docs/layers.md, "Memory the monitor cannot see").
 * An allowed call with such a rule is allowed only where its arguments
 * pass; elsewhere it is notified like any refused call.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/seccomp.h>

#include <ini.h>

#include "jail.h"

extern const char seccomp_profile_default[];
extern const char seccomp_profile_strict[];

static const struct {
	const char *name;
	const char *text;
} profiles[] = {
    {"default", seccomp_profile_default},
    {"strict", seccomp_profile_strict},
};

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif
/* x86_64 numbers of calls libseccomp 2.5 may not know by name. */
#define NR_FCHMODAT2 452

#define SUID_BITS (S_ISUID | S_ISGID)
#define NS_FLAGS                                                     \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | \
	    CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

/* Calls that take a mode, and which argument holds it. */
static const struct {
	const char *name;
	unsigned mode_arg;
} mode_calls[] = {
    {"chmod", 1},
    {"fchmod", 1},
    {"fchmodat", 2},
    {"mkdir", 1},
    {"mkdirat", 2},
    {"mknod", 1},
    {"mknodat", 2},
    {"creat", 1},
};

/* Calls that hold memory no process maps (see the top of this file). */
static const char *const unseen_memory[] = {
    "memfd_create",
    "memfd_secret",
    "shmget",
    "msgget",
    "semget",
    "vmsplice",
};

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#endif
#ifndef F_OFD_SETLK
#define F_OFD_SETLK 37
#endif
#ifndef F_OFD_SETLKW
#define F_OFD_SETLKW 38
#endif
#ifndef SO_SNDBUFFORCE
#define SO_SNDBUFFORCE 32
#endif
#ifndef SO_RCVBUFFORCE
#define SO_RCVBUFFORCE 33
#endif
/* fcntl commands refused under the monitor, ascending (fcntl(2):
 * F_SETPIPE_SZ; the open file description locks, F_OFD_GETLK allowed). */
static const uint32_t unseen_fcntl[] = {F_OFD_SETLK, F_OFD_SETLKW,
    F_SETPIPE_SZ};
/* SOL_SOCKET options refused under the monitor, ascending (socket(7)). */
static const uint32_t unseen_sockopt[] = {SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE,
    SO_RCVBUFFORCE};

struct loader {
	scmp_filter_ctx ctx;
	bool monitor;
	bool kill;
	bool failed;
	char *why;
	size_t whylen;
};

static int
allow(scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *c)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, c);
}

/* Allows argument ARG of call NR in [LO, HI), HI <= 2^32, as aligned
 * with a zero high word. */
/* masked blocks with a zero high word, each rule ANDed with PRE when PRE
 * is not NULL (a comparison of another argument). */
static int
allow_range(scmp_filter_ctx ctx, int nr, const struct scmp_arg_cmp *pre,
    unsigned arg, uint64_t lo, uint64_t hi)
{
	struct scmp_arg_cmp c[2];
	uint64_t size;
	int e;

	if (pre != NULL)
		c[1] = *pre;
	for (; lo < hi; lo += size) {
		size = lo == 0 ? 1ULL << 32 : lo & -lo;
		while (lo + size > hi)
			size >>= 1;
		c[0] = (struct scmp_arg_cmp){arg, SCMP_CMP_MASKED_EQ,
		    ~(size - 1), lo};
		if ((e = allow(ctx, nr, pre != NULL ? 2 : 1, c)) < 0)
			return e;
	}
	return 0;
}

/*
 * Allows call NR whatever its 32-bit int argument ARG is, except the N
 * values in EXCL (ascending, each below 2^31): the kernel reads the low
 * 32 bits, so a high word could smuggle an excluded value past a 64-bit
 * comparison, and libseccomp's 32-bit macros still compare 64 bits
 * (libseccomp issue #383). Allowed are a zero high word with any other
 * low word, and a sign-extended negative int; any other high word is
 * refused. PRE, when not NULL, is a comparison of another argument
 * ANDed with every rule. Returns 0 or a libseccomp error.
 */
static int
allow_int_except_if(scmp_filter_ctx ctx, int nr, const struct scmp_arg_cmp *pre,
    unsigned arg, const uint32_t *excl, size_t n)
{
	struct scmp_arg_cmp c[2];
	uint64_t lo = 0;
	int e;

	for (size_t i = 0; i <= n; i++) {
		uint64_t hi = i < n ? excl[i] : 0x80000000ULL;

		if ((e = allow_range(ctx, nr, pre, arg, lo, hi)) < 0)
			return e;
		lo = hi + 1;
	}
	/* [2^31, 2^32) with a zero high word, and sign-extended ints. */
	if ((e = allow_range(ctx, nr, pre, arg, 0x80000000ULL, 1ULL << 32)) < 0)
		return e;
	if (pre != NULL)
		c[1] = *pre;
	c[0] = (struct scmp_arg_cmp){arg, SCMP_CMP_GE, 0xffffffff80000000ULL,
	    0};
	return allow(ctx, nr, pre != NULL ? 2 : 1, c);
}

/* allow_int_except_if without a comparison of another argument. */
static int
allow_int_except(scmp_filter_ctx ctx, int nr, unsigned arg,
    const uint32_t *excl, size_t n)
{
	return allow_int_except_if(ctx, nr, NULL, arg, excl, n);
}

/*
 * Under the monitor: fcntl but F_SETPIPE_SZ and the OFD lock commands
 * that set, and setsockopt but the
 * SOL_SOCKET buffer sizes (unseen_fcntl, unseen_sockopt). setsockopt's
 * level and option are ints the kernel reads 32 bits of: any level whose
 * low word is not SOL_SOCKET passes (as allow_int_except), and a level
 * whose low word is SOL_SOCKET, whatever its high word, passes only with
 * an option not in the list. Returns 0 or a libseccomp error; -ENOENT
 * when NAME is neither call.
 */
static int
allow_monitored(scmp_filter_ctx ctx, const char *name, int nr)
{
	static const uint32_t sol_socket[] = {SOL_SOCKET};
	struct scmp_arg_cmp lvl = {1, SCMP_CMP_MASKED_EQ, 0xffffffffULL,
	    SOL_SOCKET};
	int e;

	if (strcmp(name, "fcntl") == 0)
		return allow_int_except(ctx, nr, 1, unseen_fcntl,
		    sizeof(unseen_fcntl) / sizeof(unseen_fcntl[0]));
	if (strcmp(name, "setsockopt") != 0)
		return -ENOENT;
	if ((e = allow_int_except(ctx, nr, 1, sol_socket, 1)) < 0)
		return e;
	return allow_int_except_if(ctx, nr, &lvl, 2, unseen_sockopt,
	    sizeof(unseen_sockopt) / sizeof(unseen_sockopt[0]));
}

/* Allows NAME (number NR), with the fixed argument rules for the calls
 * that have them. Returns 0 or a libseccomp error. */
/*
 * The rules of socket(2) (call number NR) in CTX: unix with any
 * protocol; inet and inet6 with an IP protocol number. Returns 0 or a
 * negative errno from libseccomp.
 */
static int
allow_socket(scmp_filter_ctx ctx, int nr)
{
	/* unix with any protocol; inet and inet6 with an IP protocol
	 * number (below 256): not IPPROTO_MPTCP (262), whose sockets
	 * Landlock's TCP rules do not see. */
	static const int inet[] = {AF_INET, AF_INET6};
	struct scmp_arg_cmp c, two[2];
	int e;

	c = SCMP_A0_64(SCMP_CMP_EQ, AF_UNIX);
	if ((e = allow(ctx, nr, 1, &c)) < 0)
		return e;
	for (size_t i = 0; i < 2 && e == 0; i++) {
		two[0] = SCMP_A0_64(SCMP_CMP_EQ, (scmp_datum_t)inet[i]);
		two[1] = SCMP_A2_64(SCMP_CMP_LT, 256);
		e = allow(ctx, nr, 2, two);
	}
	return e;
}

/*
 * The rules of open(2) or openat(2) (NAME, call number NR) in CTX: no
 * O_CREAT or O_TMPFILE, or a mode without the set-id bits. Returns 0 or
 * a negative errno from libseccomp.
 */
static int
allow_open(scmp_filter_ctx ctx, const char *name, int nr)
{
	unsigned fa = name[4] == 'a' ? 2 : 1;
	struct scmp_arg_cmp c;
	int e;

	/* Not creating, or creating without the bits. */
	c = (struct scmp_arg_cmp){fa, SCMP_CMP_MASKED_EQ, O_CREAT | __O_TMPFILE,
	    0};
	if ((e = allow(ctx, nr, 1, &c)) < 0)
		return e;
	c = (struct scmp_arg_cmp){fa + 1, SCMP_CMP_MASKED_EQ, SUID_BITS, 0};
	return allow(ctx, nr, 1, &c);
}

static int
allow_call(scmp_filter_ctx ctx, const char *name, int nr)
{
	struct scmp_arg_cmp c;
	int e = 0;

	if (strcmp(name, "clone3") == 0)
		return 0; /* ENOSYS, below */
	if (strcmp(name, "ioctl") == 0) {
		static const uint32_t tty[] = {TIOCSTI, TIOCLINUX};

		return allow_int_except(ctx, nr, 1, tty, 2);
	}
	if (strcmp(name, "prctl") == 0) {
		/* A filter of the job's own would answer before the
		 * launcher's listener (ERRNO outranks USER_NOTIF) and hide
		 * its refusals; seccomp(2) itself is not allowed either. */
		static const uint32_t own_filter[] = {PR_SET_SECCOMP};

		return allow_int_except(ctx, nr, 0, own_filter, 1);
	}
	if (strcmp(name, "socketpair") == 0) {
		c = SCMP_A0_64(SCMP_CMP_EQ, AF_UNIX);
		return allow(ctx, nr, 1, &c);
	}
	if (strcmp(name, "clone") == 0) {
		c = SCMP_A0_64(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0);
		return allow(ctx, nr, 1, &c);
	}
	if (strcmp(name, "socket") == 0)
		return allow_socket(ctx, nr);
	if (strcmp(name, "personality") == 0) {
		c = SCMP_A0_32(SCMP_CMP_EQ, PER_LINUX);
		if ((e = allow(ctx, nr, 1, &c)) < 0)
			return e;
		c = SCMP_A0_32(SCMP_CMP_EQ, 0xffffffffu);
		return allow(ctx, nr, 1, &c);
	}
	if (strcmp(name, "open") == 0 || strcmp(name, "openat") == 0)
		return allow_open(ctx, name, nr);
	for (size_t i = 0; i < sizeof(mode_calls) / sizeof(mode_calls[0]); i++)
		if (strcmp(name, mode_calls[i].name) == 0) {
			c = (struct scmp_arg_cmp){mode_calls[i].mode_arg,
			    SCMP_CMP_MASKED_EQ, SUID_BITS, 0};
			return allow(ctx, nr, 1, &c);
		}
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
}

static bool
unseen(const char *name)
{
	for (size_t i = 0; i < sizeof(unseen_memory) / sizeof(unseen_memory[0]);
	     i++)
		if (strcmp(name, unseen_memory[i]) == 0)
			return true;
	return false;
}

/* inih's handler: one key of the profile. */
static int
on_key(void *arg, const char *section, const char *name, const char *value)
{
	struct loader *ld = arg;
	int nr, e;

	if (ld->failed)
		return 0;
	if (strcmp(section, "profile") == 0 && strcmp(name, "denied") == 0 &&
	    (strcmp(value, "errno") == 0 || strcmp(value, "kill") == 0)) {
		ld->kill = strcmp(value, "kill") == 0;
		return 1;
	}
	if (strcmp(section, "allow") != 0 || value[0] != '\0') {
		snprintf(ld->why, ld->whylen, "unknown key [%s] %s = %s",
		    section, name, value);
		ld->failed = true;
		return 0;
	}
	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR || nr < 0) {
		snprintf(ld->why, ld->whylen,
		    "no system call \"%s\" on this "
		    "architecture",
		    name);
		ld->failed = true;
		return 0;
	}
	if (ld->monitor && unseen(name))
		return 1;
	e = ld->monitor ? allow_monitored(ld->ctx, name, nr) : -ENOENT;
	if (e == -ENOENT)
		e = allow_call(ld->ctx, name, nr);
	if (e < 0) {
		snprintf(ld->why, ld->whylen, "cannot allow %s: %s", name,
		    strerror(-e));
		ld->failed = true;
		return 0;
	}
	return 1;
}

int
jail_seccomp_compile(scmp_filter_ctx ctx, struct sock_fprog *prog)
{
	struct stat st;
	size_t got = 0;
	int fd, e = 0;

	prog->len = 0;
	prog->filter = NULL;
	/* libseccomp 2.5 exports to a descriptor only (2.6 adds memory). */
	fd = memfd_create("stockade-seccomp-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if ((e = seccomp_export_bpf(ctx, fd)) < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		e = -errno;
		goto out;
	}
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
		e = -E2BIG;
		goto out;
	}
	prog->filter = malloc((size_t)st.st_size);
	if (prog->filter == NULL) {
		e = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, (char *)prog->filter + got,
		    (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			e = n < 0 ? -errno : -EIO;
			goto out;
		}
		got += (size_t)n;
	}
	prog->len = (unsigned short)(got / sizeof(struct sock_filter));
out:
	close(fd);
	if (e < 0) {
		free(prog->filter);
		prog->filter = NULL;
	}
	return e;
}

int
jail_seccomp_load(const struct sock_fprog *prog)
{
	long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	    SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);

	return fd < 0 ? -errno : (int)fd;
}

const char *
jail_seccomp_profile_name(size_t i)
{
	return i < sizeof(profiles) / sizeof(profiles[0]) ? profiles[i].name
							  : NULL;
}

const char *
jail_seccomp_profile(const char *name)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(profiles[i].name, name) == 0)
			return profiles[i].text;
	return NULL;
}

scmp_filter_ctx
jail_seccomp_build(const char *profile, bool monitor, bool *kill, char *why,
    size_t whylen)
{
	const char *text = jail_seccomp_profile(profile);
	struct loader ld = {.monitor = monitor, .why = why, .whylen = whylen};
	int clone3_errno = ENOSYS;
	int r;

	snprintf(why, whylen, "out of memory");
	if (text == NULL) {
		snprintf(why, whylen,
		    "no seccomp profile \"%s\" (there are "
		    "default and strict)",
		    profile);
		return NULL;
	}
	ld.ctx = seccomp_init(SCMP_ACT_NOTIFY);
	if (ld.ctx == NULL)
		return NULL;
	if (seccomp_attr_set(ld.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_NOTIFY) <
	    0)
		goto fail;
	r = ini_parse_string(text, on_key, &ld);
	if (r != 0 || ld.failed) {
		if (!ld.failed)
			snprintf(why, whylen, "line %d: syntax error", r);
		goto fail_why;
	}
	/* The payload hands the listener over with sendmsg after loading
	 * the filter, a warm jail's payload then receives its job with
	 * recvmsg (jail_wait_payload), and then execs: all three must pass
	 * whatever the profile (a profile without sockets has nothing else
	 * to send or receive on). */
	if (seccomp_rule_add(ld.ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 0) <
		0 ||
	    seccomp_rule_add(ld.ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 0) <
		0 ||
	    seccomp_rule_add(ld.ctx, SCMP_ACT_ALLOW, SCMP_SYS(execve), 0) < 0 ||
	    seccomp_rule_add(ld.ctx, SCMP_ACT_ERRNO(clone3_errno),
		SCMP_SYS(clone3), 0) < 0 ||
	    seccomp_rule_add(ld.ctx, SCMP_ACT_ERRNO(ENOSYS), NR_FCHMODAT2, 0) <
		0 ||
	    seccomp_rule_add(ld.ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2),
		0) < 0)
		goto fail;
	*kill = ld.kill;
	return ld.ctx;
fail:
	snprintf(why, whylen, "libseccomp refused a rule");
fail_why:
	seccomp_release(ld.ctx);
	return NULL;
}
