/*
 * check_netns.c: the network_ns checks of `stockade check` (check.h,
 * check_jail.h; the table is check_jail.c's): the job's namespace holds
 * lo alone, up; the host's loopback and abstract unix sockets are out of
 * reach; a server on the job's own loopback answers the job
 * (network_namespaces(7), docs/layers.md).
 */
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "check_jail.h"

/* network_ns.only_loopback_up: the job's network namespace has lo and
 * nothing else, lo is up and a datagram to itself arrives
 * (network_namespaces(7)). */
void
net_only_lo(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char ifs[1024], up[16], self[32];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("net")) &&
	    jail_val(r, &j, "net.ifaces", ifs, sizeof(ifs)) &&
	    jail_val(r, &j, "net.lo_up", up, sizeof(up)) &&
	    jail_val(r, &j, "net.self_udp", self, sizeof(self))) {
		if (strcmp(ifs, "lo") == 0 && strcmp(up, "1") == 0 &&
		    strcmp(self, "ok") == 0)
			check_pass(r,
			    "interfaces: lo alone, up; a datagram "
			    "over it arrives");
		else
			check_fail(r,
			    "interfaces: %s; lo up: %s; a datagram to "
			    "itself: %s",
			    ifs, up, self);
	}
	check_job_free(&j);
}

/* network_ns.host_loopback_unreachable: a datagram and a TCP connect
 * the job sends to 127.0.0.1:PORT, where this check listens on the
 * host's loopback (UDP and TCP), arrive at neither: the job's 127.0.0.1
 * is its own, where nothing listens on PORT (the connect is refused,
 * ECONNREFUSED). Landlock handles no TCP right (jobs may serve on their
 * own loopback), so this is the namespace alone keeping the host's
 * ports out of reach (docs/layers.md, network_ns). */
void
net_host_lo_unreachable(struct check_ctx *c, struct check_result *r)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	struct check_job j;
	char port[16], sent[32], tcp[32], got[64];
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int conn;
	ssize_t n;

	memset(&j, 0, sizeof(j));
	if (s < 0 || t < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0 ||
	    bind(t, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(t, 4) < 0) {
		check_fail(r, "cannot listen on the host's 127.0.0.1: %s",
		    strerror(errno));
		goto out;
	}
	snprintf(port, sizeof(port), "%u", (unsigned)ntohs(a.sin_port));
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("net", port)) ||
	    !jail_val(r, &j, "net.host_udp", sent, sizeof(sent)) ||
	    !jail_val(r, &j, "net.host_tcp", tcp, sizeof(tcp)))
		goto out;
	/* The job has ended: a datagram or a connection it made to us is
	 * queued by now. */
	n = recv(s, got, sizeof(got), 0);
	conn = accept4(t, NULL, NULL, SOCK_CLOEXEC);
	if (conn >= 0)
		close(conn);
	if (n >= 0 || conn >= 0)
		check_fail(r,
		    "the job reached the host's loopback at "
		    "127.0.0.1:%s (%s%s; TCP connect: %s)",
		    port, n >= 0 ? "a datagram arrived" : "no datagram",
		    conn >= 0 ? ", a TCP connection arrived" : "", tcp);
	else if (strcmp(tcp, "ECONNREFUSED") != 0)
		check_fail(r,
		    "the job's TCP connect to 127.0.0.1:%s gave %s, "
		    "not ECONNREFUSED from its own loopback",
		    port, tcp);
	else
		check_pass(r,
		    "the job's datagram (sendto: %s) and TCP connect "
		    "(ECONNREFUSED, its own 127.0.0.1) to 127.0.0.1:%s "
		    "never reached the host's listeners",
		    sent, port);
out:
	if (s >= 0)
		close(s);
	if (t >= 0)
		close(t);
	check_job_free(&j);
}

/* network_ns.loopback_tcp_server_works: a job serves TCP on its own
 * loopback and connects to itself (bind, listen, connect, accept, a byte
 * each way), as a test suite's fixture server or `python3 -m http.server`
 * with curl does (issue 22). */
void
net_loopback_tcp(struct check_ctx *c, struct check_result *r)
{
	struct check_job j;
	char v[32];

	if (jail_probe_ok(c, r, &j, &jail_plain, ARGS("net")) &&
	    jail_val(r, &j, "net.self_tcp", v, sizeof(v))) {
		if (strcmp(v, "ok") == 0)
			check_pass(r,
			    "a TCP server on the job's 127.0.0.1 "
			    "answered a client of the same job");
		else
			check_fail(r,
			    "a TCP server on the job's own loopback "
			    "failed: %s",
			    v);
	}
	check_job_free(&j);
}

/* network_ns.host_abstract_socket_unreachable: a connect from the job
 * to an abstract unix socket this check listens on in the host's network
 * namespace is refused: ECONNREFUSED, the name is not in the job's
 * namespace (unix(7): abstract names belong to the network namespace);
 * EPERM would mean the namespace is shared and only Landlock's scope
 * held (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, landlock(7), ABI 6). */
void
net_host_abstract_unreachable(struct check_ctx *c, struct check_result *r)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct check_job j;
	char name[64], v[64];
	socklen_t al;
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int got;

	memset(&j, 0, sizeof(j));
	snprintf(name, sizeof(name), "stockade-check-%ld-%u", (long)getpid(),
	    c->seq++);
	memcpy(a.sun_path + 1, name, strlen(name));
	al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(name));
	if (s < 0 || bind(s, (struct sockaddr *)&a, al) < 0 ||
	    listen(s, 4) < 0) {
		check_fail(r, "cannot listen on the abstract socket @%s: %s",
		    name, strerror(errno));
		goto out;
	}
	if (!jail_probe_ok(c, r, &j, &jail_plain, ARGS("abstract", name)) ||
	    !jail_val(r, &j, "abstract_connect", v, sizeof(v)))
		goto out;
	got = accept4(s, NULL, NULL, SOCK_CLOEXEC);
	if (got >= 0) {
		close(got);
		check_fail(r,
		    "the job connected to the host's abstract socket "
		    "@%s (connect: %s)",
		    name, v);
	} else if (strcmp(v, "ECONNREFUSED") == 0) {
		check_pass(r,
		    "connect to the host's abstract socket @%s: "
		    "ECONNREFUSED, not in the job's namespace",
		    name);
	} else if (strcmp(v, "EPERM") == 0) {
		check_pass(r,
		    "connect to the host's abstract socket @%s: "
		    "EPERM, Landlock's scope (the namespace let it "
		    "through: see network_ns.own_namespace)",
		    name);
	} else {
		check_fail(r,
		    "connect to the host's abstract socket @%s: %s "
		    "(want ECONNREFUSED)",
		    name, v);
	}
out:
	if (s >= 0)
		close(s);
	check_job_free(&j);
}

/* network_ns.own_namespace: the job has a network namespace of its own. */
void
net_own(struct check_ctx *c, struct check_result *r)
{
	jail_own_namespace(c, r, "net");
}
