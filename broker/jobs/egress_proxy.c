/*
 * egress_proxy.c: the broker's side of its egress proxy (egress_proxy.h):
 * starting `stockade-proxy`, handing it jobs, taking their reports.
 */
#include "egress_proxy.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fsutil.h"
#include "install_path.h"
#include "proto.h"
#include "spawner.h"

void
egress_proxy_init(struct egress_proxy *px)
{
	memset(px, 0, sizeof(*px));
	px->pidfd = px->sock = -1;
	pthread_mutex_init(&px->lock, NULL);
}

/* Opens the proxy's program: PATH, or the search of install_path.h.
 * Returns the O_PATH descriptor or a negative errno, ERR set. */
static int
open_program(const char *path, char *err, size_t errlen)
{
	char tried[1024];
	int fd;

	if (path != NULL) {
		if ((fd = install_open_exe(path)) < 0)
			snprintf(err, errlen,
			    "cannot use %s as the egress "
			    "proxy: %s",
			    path, strerror(-fd));
		return fd;
	}
	fd = install_open_helper(NULL, EGRESS_PROXY_NAME, true, NULL, 0, tried,
	    sizeof(tried));
	if (fd < 0)
		snprintf(err, errlen,
		    "cannot find the egress proxy %s (tried %s): %s; "
		    "reinstall stockade",
		    EGRESS_PROXY_NAME, tried, strerror(-fd));
	return fd;
}

int
egress_proxy_ports(const struct egress_rules *rules, char *out, size_t size)
{
	static const struct egress_ports dflt[] = {{53, 53}, {80, 80},
	    {443, 443}};
	size_t len = 0, total = 0;
	int n;

	out[0] = '\0';
	for (size_t i = 0; i < 3 + rules->n; i++) {
		const struct egress_ports *p = i < 3 ? &dflt[i]
						     : &rules->v[i - 3].ports;

		/* Deny rules dial nothing; an allow without ports is
		 * 443 and 80, above. */
		if (i >= 3 &&
		    (rules->v[i - 3].kind == EGRESS_RULE_DENY || p->lo == 0))
			continue;
		total += (size_t)(p->hi - p->lo) + 1;
		if (total > EGRESS_PROXY_MAX_PORTS)
			return -E2BIG;
		n = p->lo == p->hi
		    ? snprintf(out + len, size - len, "%s%u",
			  len > 0 ? "," : "", (unsigned)p->lo)
		    : snprintf(out + len, size - len, "%s%u-%u",
			  len > 0 ? "," : "", (unsigned)p->lo, (unsigned)p->hi);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return 0;
}

/* Forks the proxy from EXE (borrowed) into PX, with "--connect-ports
 * PORTS" when PORTS is not "" and "--dns DNS" when DNS is not NULL.
 * Returns 0 or -errno. */
static int
fork_program(struct egress_proxy *px, int exe, char *ports, const char *dns)
{
	char arg0[] = EGRESS_PROXY_NAME, arg1[] = "--fd", arg2[] = "3";
	char opt_ports[] = "--connect-ports", opt_dns[] = "--dns";
	char *argv[8] = {arg0, arg1, arg2};
	size_t n = 3;

	if (ports[0] != '\0') {
		argv[n++] = opt_ports;
		argv[n++] = ports;
	}
	if (dns != NULL) {
		argv[n++] = opt_dns;
		argv[n++] = (char *)(uintptr_t)dns;
	}
	argv[n] = NULL;
	int sv[2], pidfd = -1, e;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid = (pid_t)syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0, &pidfd, 0, 0);
	if (pid < 0) {
		e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0) {
		if (dns == NULL)
			argv[3] = NULL;
		spawner_exec_helper(sv[1], exe, argv);
	}
	close(sv[1]);
	px->pid = pid;
	px->pidfd = pidfd;
	px->sock = sv[0];
	px->dead = false;
	return 0;
}

/* The little-endian u32 at P. */
static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* Waits for the proxy's first word: READY, or FAILED with its errno and
 * why. Returns 0 or a negative errno with ERR set. */
static int
await_ready(struct egress_proxy *px, char *err, size_t errlen)
{
	uint8_t buf[WIRE_HEADER_SIZE + 512];
	struct wire_msg m;
	int fds[1], n, e;

	e = spawner_wait_readable(px->sock,
	    spawner_now_ms() + EGRESS_PROXY_START_MS);
	if (e < 0) {
		snprintf(err, errlen,
		    "the egress proxy did not say it was "
		    "ready within %u ms",
		    EGRESS_PROXY_START_MS);
		return e;
	}
	n = wire_recv(px->sock, buf, sizeof(buf) - 1, fds, 0, &m);
	if (n > 0 && m.type == WIRE_PROXY_READY && m.body_len == 4) {
		px->landlock_abi = le32(m.body);
		return 0;
	}
	if (n > 0 && m.type == WIRE_PROXY_FAILED && m.body_len >= 4) {
		int32_t code = (int32_t)le32(m.body);

		buf[n] = '\0'; /* the why, after the errno, may lack its NUL */
		snprintf(err, errlen, "the egress proxy cannot run here: %.*s",
		    (int)(m.body_len - 4), (const char *)m.body + 4);
		/* The proxy sends its errno positive. */
		return code > 0 ? -code : code < 0 ? code : -EPERM;
	}
	snprintf(err, errlen, "the egress proxy %s before it was ready",
	    n == 0 ? "exited" : "broke its protocol");
	return n == 0 ? -EPIPE : -EPROTO;
}

/* Adds the port of the resolver DNS ("ADDR:PORT", "[V6]:PORT"; NULL:
 * none) to the list PORTS (SIZE bytes) when it is not empty: the proxy
 * asks its resolver over TCP when an answer is truncated. */
static void
add_dns_port(char *ports, size_t size, const char *dns)
{
	const char *colon = dns != NULL ? strrchr(dns, ':') : NULL;
	size_t len = strlen(ports);

	if (colon != NULL && len > 0 && strcmp(colon + 1, "53") != 0)
		(void)snprintf(ports + len, size - len, ",%s", colon + 1);
}

int
egress_proxy_start(struct egress_proxy *px, const struct egress_rules *rules,
    const char *path, const char *dns, char *err, size_t errlen)
{
	static char ports[EGRESS_PROXY_MAX_PORTS * 6 + 1];
	int exe, e;

	/* Too many ports for one rule each: connect is then confined by
	 * the decision alone (docs/egress.md). */
	if (rules == NULL ||
	    egress_proxy_ports(rules, ports, sizeof(ports)) < 0)
		ports[0] = '\0';
	if ((exe = open_program(path, err, errlen)) < 0)
		return exe;
	if (dns != NULL && dns[0] == '\0')
		dns = NULL;
	add_dns_port(ports, sizeof(ports), dns);
	e = fork_program(px, exe, ports, dns);
	close(exe);
	if (e < 0) {
		snprintf(err, errlen, "cannot start the egress proxy: %s",
		    strerror(-e));
		return e;
	}
	if ((e = await_ready(px, err, errlen)) < 0)
		egress_proxy_stop(px);
	return e;
}

int
egress_proxy_job(struct egress_proxy *px, const struct egress_job *job,
    int listener, int packet)
{
	uint8_t *msg = malloc(PROTO_MAX_MSG);
	int fds[2] = {listener, packet}, e;
	uint32_t roles = WIRE_ROLE_BIT(0);
	long n;

	if (msg == NULL)
		return -ENOMEM;
	n = egress_job_encode(job, msg + WIRE_HEADER_SIZE,
	    PROTO_MAX_MSG - WIRE_HEADER_SIZE);
	if (n < 0) {
		free(msg);
		return (int)n;
	}
	if (packet >= 0)
		roles |= WIRE_ROLE_BIT(1);
	pthread_mutex_lock(&px->lock);
	e = px->dead || px->pid == 0
	    ? -EPIPE
	    : wire_send(px->sock, msg, WIRE_HEADER_SIZE + (size_t)n,
		  WIRE_PROXY_JOB, roles, fds);
	if (e == -EPIPE || e == -ECONNRESET)
		px->dead = true;
	pthread_mutex_unlock(&px->lock);
	free(msg);
	return e;
}

/* Sends END for JOB_ID and reads the report that answers it into REP.
 * Returns 0 or a negative errno. PX's lock is held. */
static int
end_locked(struct egress_proxy *px, uint64_t job_id, struct egress_report *rep)
{
	uint8_t end[WIRE_HEADER_SIZE + 8];
	uint8_t *buf = malloc(WIRE_HEADER_SIZE + EGRESS_REPORT_WIRE_MAX);
	struct wire_msg m;
	int fds[1], e, n;

	if (buf == NULL)
		return -ENOMEM;
	for (int i = 0; i < 8; i++)
		end[WIRE_HEADER_SIZE + i] = (uint8_t)(job_id >> (8 * i));
	e = wire_send(px->sock, end, sizeof(end), WIRE_PROXY_END, 0, NULL);
	if (e == 0)
		e = spawner_wait_readable(px->sock,
		    spawner_now_ms() + EGRESS_PROXY_REPORT_MS);
	if (e == 0) {
		n = wire_recv(px->sock, buf,
		    WIRE_HEADER_SIZE + EGRESS_REPORT_WIRE_MAX, fds, 0, &m);
		if (n <= 0)
			e = n == 0 ? -EPIPE : n;
		else if (m.type != WIRE_PROXY_REPORT ||
		    egress_report_decode(m.body, m.body_len, rep) < 0 ||
		    rep->job_id != job_id)
			e = -EPROTO;
	}
	free(buf);
	return e;
}

int
egress_proxy_end(struct egress_proxy *px, uint64_t job_id,
    struct egress_report *rep)
{
	int e;

	memset(rep, 0, sizeof(*rep));
	pthread_mutex_lock(&px->lock);
	e = px->dead || px->pid == 0 ? -EPIPE : end_locked(px, job_id, rep);
	if (e < 0 && e != -ENOMEM && !px->dead) {
		/* Dead, silent or lying: it serves no job from now on. */
		px->dead = true;
		if (px->pidfd >= 0)
			syscall(SYS_pidfd_send_signal, px->pidfd, SIGKILL, NULL,
			    0);
	}
	pthread_mutex_unlock(&px->lock);
	if (e < 0) {
		memset(rep, 0, sizeof(*rep));
		rep->job_id = job_id;
		rep->proxy_failed = true;
	}
	return e;
}

void
egress_proxy_stop(struct egress_proxy *px)
{
	pthread_mutex_lock(&px->lock);
	spawner_end_child(&px->pid, &px->pidfd, &px->sock, 2000);
	px->dead = false;
	px->landlock_abi = 0;
	pthread_mutex_unlock(&px->lock);
}
