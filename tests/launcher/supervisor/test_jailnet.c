/*
 * test_jailnet.c: a job with a proxy port (issue 25), end to end through
 * a real launcher: the test is the broker (struct supervisor, as in
 * test_session.c), and its net_fn receives the two descriptors jail init
 * made in the job's network namespace (PROTO_NET). The job connects to
 * 127.0.0.1:PORT and writes a line, which the test accepts on the
 * listener after the job; a direct connect to 192.0.2.1:80 is refused at
 * once; a DNS query to 192.0.2.53 is answered by ICMP; and the packet
 * socket holds exactly the two SYNs and the datagram, nothing of the
 * relayed bytes. A job without a port still has no network at all
 * (ENETUNREACH) and sends no NET. A warm pool's jail built for a port
 * serves the next job with one (its sockets made while it was built).
 *
 * Registered twice, as the invoking user and as 65534 (tests/meson.build).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "jobspec.h"
#include "session_util.h"

TestSuite(jailnet, .init = harness_setup, .fini = harness_cleanup,
    .timeout = 120);

#define PORT 3128

/* The payload: a line to the proxy's port, then a direct connect and a
 * DNS query, each outcome printed (errno name, milliseconds). */
static const char probe[] =
    "import errno, os, socket, time\n"
    "def name(e): return errno.errorcode.get(e.errno, str(e))\n"
    "port = int(os.environ.get('P', '0'))\n"
    "if port:\n"
    "    s = socket.create_connection(('127.0.0.1', port), timeout=5)\n"
    "    s.sendall(b'hello proxy\\n'); s.close()\n"
    "s = socket.socket(); t = time.monotonic()\n"
    "try:\n"
    "    s.connect(('192.0.2.1', 80)); r = 'connected'\n"
    "except OSError as e:\n"
    "    r = name(e)\n"
    "print('direct', r, int((time.monotonic() - t) * 1000))\n"
    "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "u.settimeout(3)\n"
    "try:\n"
    "    u.connect(('192.0.2.53', 53)); u.send(b'query')\n"
    "    u.recv(512); print('udp answered')\n"
    "except OSError as e:\n"
    "    print('udp', name(e))\n"
    "print('env', os.environ.get('ALL_PROXY'), os.environ.get('no_proxy'))\n";

/* What the test's net_fn received. */
struct net_got {
	int calls;
	uint64_t job_id;
	int listener, packet;
};

static void
on_net(void *arg, uint64_t job_id, int listener, int packet)
{
	struct net_got *g = arg;

	g->calls++;
	if (g->calls > 1) {
		close(listener);
		close(packet);
		return;
	}
	g->job_id = job_id;
	g->listener = listener;
	g->packet = packet;
}

/* Runs the probe as a job of SS with proxy port PORT_ (0: none); its
 * result into RES, its output into C, the NET into G. */
static void
run_probe(struct session *ss, uint16_t port, struct net_got *g,
    struct captured *c, struct job_result *res)
{
	char *argv[] = {(char *)(uintptr_t) "python3", (char *)(uintptr_t) "-c",
	    (char *)(uintptr_t)probe, NULL};
	char penv[16];
	struct job_spec spec;
	int e;

	memset(g, 0, sizeof(*g));
	g->listener = g->packet = -1;
	memset(c, 0, sizeof(*c));
	memset(res, 0, sizeof(*res));
	ss->sup.net_fn = on_net;
	ss->sup.net_arg = g;
	memset(&spec, 0, sizeof(spec));
	cr_assert_eq(jobspec_from_policy(&spec, &ss->pol, 3, argv), 0);
	if (port != 0)
		cr_assert_eq(jobspec_set_proxy(&spec, port), 0);
	snprintf(penv, sizeof(penv), "P=%u", (unsigned)port);
	{
		char **v = reallocarray(spec.envp, spec.envc + 2, sizeof(*v));

		cr_assert_not_null(v);
		spec.envp = v;
		spec.envp[spec.envc++] = strdup(penv);
		spec.envp[spec.envc] = NULL;
	}
	e = supervisor_run(&ss->sup, &spec, ss->wsfd, on_output, c, res);
	cr_assert_eq(e, 0, "supervisor_run: %s", strerror(-e));
	cr_assert_eq(res->status, JOB_OK, "%s (%s): %s",
	    job_status_name(res->status), res->detail, c->data[2]);
	if (port != 0)
		cr_assert_eq(g->job_id, spec.job_id);
	job_spec_clear(&spec);
}

/* One frame of packet socket FD within WAIT_MS into BUF (SIZE): its
 * length, or 0 when none came. Every frame must be outgoing. */
static size_t
frame(int fd, uint8_t *buf, size_t size, int wait_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct sockaddr_ll ll;
	socklen_t n = sizeof(ll);
	ssize_t r;

	if (poll(&p, 1, wait_ms) <= 0)
		return 0;
	r = recvfrom(fd, buf, size, 0, (struct sockaddr *)&ll, &n);
	cr_assert_gt(r, 0, "recvfrom: %s", strerror(errno));
	cr_assert_eq(ll.sll_pkttype, PACKET_OUTGOING);
	return (size_t)r;
}

/* Asserts the next frame of FD is IPv4 PROTO to DST:DPORT (for TCP a SYN
 * without ACK). */
static void
expect_frame(int fd, int proto, const char *dst, uint16_t dport)
{
	uint8_t buf[2048];
	size_t n = frame(fd, buf, sizeof(buf), 2000), ihl;
	struct in_addr want;

	cr_assert_geq(n, 28, "no frame to %s:%u", dst, dport);
	cr_assert_eq(buf[0] >> 4, 4);
	cr_assert_eq(buf[9], proto, "protocol %u to %s", buf[9], dst);
	cr_assert_eq(inet_pton(AF_INET, dst, &want), 1);
	cr_assert_eq(memcmp(buf + 16, &want, 4), 0, "not to %s", dst);
	ihl = (size_t)(buf[0] & 0xf) * 4;
	cr_assert_eq(buf[ihl + 2] << 8 | buf[ihl + 3], dport);
	if (proto == IPPROTO_TCP)
		cr_assert_eq(buf[ihl + 13] & 0x12, 0x02);
}

/* What a job with a port did: its output, the line on the listener, the
 * frames on the packet socket; closes G's descriptors. */
static void
check_proxied(struct net_got *g, const struct captured *c)
{
	struct pollfd p = {.fd = g->listener, .events = POLLIN};
	uint8_t buf[2048];
	char line[64] = "";
	unsigned ms = 99999;
	int s;

	cr_assert_eq(g->calls, 1, "NET came %d times", g->calls);
	cr_assert(sscanf(c->data[1], "direct ECONNREFUSED %u", &ms) == 1, "%s",
	    c->data[1]);
	cr_assert_lt(ms, 500);
	cr_assert(strstr(c->data[1], "\nudp ECONNREFUSED\n") != NULL, "%s",
	    c->data[1]);
	cr_assert(
	    strstr(c->data[1],
		"\nenv socks5h://127.0.0.1:3128 localhost,127.0.0.1,::1\n") !=
		NULL,
	    "%s", c->data[1]);
	/* The job's line waits on the listener (the job is over). */
	cr_assert_eq(poll(&p, 1, 2000), 1);
	s = accept4(g->listener, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(s, 0, "accept: %s", strerror(errno));
	cr_assert_eq(read(s, line, sizeof(line) - 1), 12);
	cr_assert_str_eq(line, "hello proxy\n");
	close(s);
	/* Two SYNs and the query, in order; nothing of the relay. */
	expect_frame(g->packet, IPPROTO_TCP, "127.0.0.1", PORT);
	expect_frame(g->packet, IPPROTO_TCP, "192.0.2.1", 80);
	expect_frame(g->packet, IPPROTO_UDP, "192.0.2.53", 53);
	cr_assert_eq(frame(g->packet, buf, sizeof(buf), 300), 0, "a 4th frame");
	close(g->listener);
	close(g->packet);
}

Test(jailnet, a_job_with_a_port_reaches_the_listener_only)
{
	struct session ss;
	struct net_got g;
	struct captured c;
	struct job_result res;

	session_open(&ss);
	run_probe(&ss, PORT, &g, &c, &res);
	check_proxied(&g, &c);
	job_result_clear(&res);
	session_close(&ss);
}

Test(jailnet, a_job_without_a_port_has_no_network)
{
	struct session ss;
	struct net_got g;
	struct captured c;
	struct job_result res;

	session_open(&ss);
	run_probe(&ss, 0, &g, &c, &res);
	cr_assert_eq(g.calls, 0);
	cr_assert(strncmp(c.data[1], "direct ENETUNREACH ", 19) == 0, "%s",
	    c.data[1]);
	cr_assert(strstr(c.data[1], "\nudp ENETUNREACH\n") != NULL, "%s",
	    c.data[1]);
	cr_assert(strstr(c.data[1], "\nenv None None\n") != NULL, "%s",
	    c.data[1]);
	job_result_clear(&res);
	session_close(&ss);
}

/* A warm jail is built for the first job's port, its sockets made before
 * it drops its capabilities; the next job with that port takes it and
 * gets working sockets. */
Test(jailnet, a_warm_jail_serves_a_job_with_its_port)
{
	struct session ss;
	struct net_got g;
	struct captured c;
	struct job_result res;

	session_open(&ss);
	ss.sup.pool_size = 1;
	for (int i = 0; i < 3; i++) {
		run_probe(&ss, PORT, &g, &c, &res);
		check_proxied(&g, &c);
		job_result_clear(&res);
	}
	session_close(&ss);
}
