/*
 * test_egress.c: jail init's controlled-egress sockets (issue 25;
 * launcher/init/egress.c) and the supervisor's check of them
 * (launcher/supervisor/notify.c, job_net_sockets_ok), in a user and
 * network namespace each test makes for itself (unshare(2); as root, a
 * network namespace alone, since a Criterion worker has threads), as init
 * makes them in a jail: the listener at 127.0.0.1:PORT takes a
 * connection; a direct connect anywhere else, IPv4 or IPv6, is refused
 * at once (the AnyIP routes to lo); a UDP datagram anywhere is answered
 * by ICMP (ECONNREFUSED); and the packet socket sees exactly the SYNs
 * and the UDP datagram the test sent, never lo's echo, answers, or the
 * bytes of a connection already open.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "init_internal.h"
#include "monitor_internal.h"

#define PORT 3128

/* egress.c's helper from jail_init.c, which this test does not link:
 * the test's standard streams are open, so nothing moves. */
int
above_stdio(int fd, int cmd)
{
	(void)cmd;
	return fd;
}

/* jail_init.c's too: init's set-up steps, not called here. */
_Noreturn void
setup_failed(int status_fd, int stage, int err)
{
	(void)status_fd;
	cr_assert_fail("setup_failed: stage %d, %s", stage, strerror(err));
	abort();
}

static int listener = -1, packet = -1;

/* A user and network namespace of the test's own, lo up, and init's
 * egress sockets in it. */
static void
setup(void)
{
	int e;

	/* A user namespace needs a single-threaded caller, which a
	 * Criterion worker is not; as root a network namespace alone
	 * does. */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0 &&
	    (geteuid() != 0 || unshare(CLONE_NEWNET) < 0))
		cr_skip_test("unshare(CLONE_NEWNET): %s (as root it works)",
		    strerror(errno));
	cr_assert_eq(jail_init_loopback(), 0);
	e = jail_egress_make(PORT, &listener, &packet);
	cr_assert_eq(e, 0, "jail_egress_make: %s", strerror(-e));
}

TestSuite(egress, .init = setup, .timeout = 30);

static long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* connect(2) of a new blocking socket of FAMILY and TYPE to A (LEN
 * bytes): the errno, 0 on success (the socket into *FD, else closed). */
static int
try_connect(int family, int type, const void *a, socklen_t len, int *fd)
{
	int s = socket(family, type | SOCK_CLOEXEC, 0), e = 0;

	cr_assert_geq(s, 0);
	if (connect(s, a, len) < 0)
		e = errno;
	if (e != 0 || fd == NULL)
		close(s);
	else
		*fd = s;
	return e;
}

static struct sockaddr_in
v4(const char *ip, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};

	cr_assert_eq(inet_pton(AF_INET, ip, &a.sin_addr), 1);
	return a;
}

static struct sockaddr_in6
v6(const char *ip, uint16_t port)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6,
	    .sin6_port = htons(port)};

	cr_assert_eq(inet_pton(AF_INET6, ip, &a.sin6_addr), 1);
	return a;
}

/* One frame of the packet socket: its bytes into BUF (SIZE), its length
 * returned; 0 when none came within WAIT_MS. Each must be outgoing. */
static size_t
frame(uint8_t *buf, size_t size, int wait_ms)
{
	struct pollfd p = {.fd = packet, .events = POLLIN};
	struct sockaddr_ll ll;
	socklen_t n = sizeof(ll);
	ssize_t r;

	if (poll(&p, 1, wait_ms) <= 0)
		return 0;
	r = recvfrom(packet, buf, size, 0, (struct sockaddr *)&ll, &n);
	cr_assert_gt(r, 0, "recvfrom: %s", strerror(errno));
	cr_assert_eq(ll.sll_pkttype, PACKET_OUTGOING);
	return (size_t)r;
}

/* Asserts the frame BUF (LEN bytes) is IPv4 protocol PROTO to DST:PORT,
 * and for TCP a SYN without ACK. */
static void
assert_v4(const uint8_t *buf, size_t len, int proto, const char *dst,
    uint16_t port)
{
	struct in_addr want;
	size_t ihl;

	cr_assert_geq(len, 28);
	cr_assert_eq(buf[0] >> 4, 4);
	cr_assert_eq(buf[9], proto);
	cr_assert_eq(inet_pton(AF_INET, dst, &want), 1);
	cr_assert_eq(memcmp(buf + 16, &want, 4), 0);
	ihl = (size_t)(buf[0] & 0xf) * 4;
	cr_assert_eq(buf[ihl + 2] << 8 | buf[ihl + 3], port);
	if (proto == IPPROTO_TCP)
		cr_assert_eq(buf[ihl + 13] & 0x12, 0x02, "flags %#x",
		    buf[ihl + 13]);
}

/* A direct connect anywhere is refused at once, and its SYN is what the
 * packet socket shows; lo's RST and echo are not. */
Test(egress, direct_connect_refused_and_seen)
{
	struct sockaddr_in a = v4("192.0.2.1", 80);
	uint8_t buf[2048];
	long t0 = now_ms();
	size_t n;

	cr_assert_eq(try_connect(AF_INET, SOCK_STREAM, &a, sizeof(a), NULL),
	    ECONNREFUSED);
	cr_assert_lt(now_ms() - t0, 500);
	n = frame(buf, sizeof(buf), 1000);
	assert_v4(buf, n, IPPROTO_TCP, "192.0.2.1", 80);
	cr_assert_eq(frame(buf, sizeof(buf), 200), 0, "a 2nd frame");
}

Test(egress, direct_connect_ipv6_refused_and_seen)
{
	struct sockaddr_in6 a = v6("2001:db8::1", 443);
	struct in6_addr want;
	uint8_t buf[2048];
	long t0 = now_ms();
	size_t n;

	cr_assert_eq(try_connect(AF_INET6, SOCK_STREAM, &a, sizeof(a), NULL),
	    ECONNREFUSED);
	cr_assert_lt(now_ms() - t0, 500);
	n = frame(buf, sizeof(buf), 1000);
	cr_assert_geq(n, 60);
	cr_assert_eq(buf[0] >> 4, 6);
	cr_assert_eq(buf[6], IPPROTO_TCP);
	cr_assert_eq(inet_pton(AF_INET6, "2001:db8::1", &want), 1);
	cr_assert_eq(memcmp(buf + 24, &want, 16), 0);
	cr_assert_eq(buf[42] << 8 | buf[43], 443);
	cr_assert_eq(buf[53] & 0x12, 0x02);
	cr_assert_eq(frame(buf, sizeof(buf), 200), 0, "a 2nd frame");
}

/* A DNS query to any resolver goes to lo, which answers ICMP port
 * unreachable: ECONNREFUSED on the receive, no timeout; the datagram
 * shows, the ICMP does not. */
Test(egress, udp_refused_and_seen)
{
	struct sockaddr_in a = v4("192.0.2.53", 53);
	struct pollfd p;
	uint8_t buf[2048];
	int fd = -1;
	size_t n;

	cr_assert_eq(try_connect(AF_INET, SOCK_DGRAM, &a, sizeof(a), &fd), 0);
	cr_assert_eq(send(fd, "query", 5, 0), 5);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	cr_assert_eq(poll(&p, 1, 500), 1);
	cr_assert_eq(recv(fd, buf, sizeof(buf), 0), -1);
	cr_assert_eq(errno, ECONNREFUSED);
	close(fd);
	n = frame(buf, sizeof(buf), 1000);
	assert_v4(buf, n, IPPROTO_UDP, "192.0.2.53", 53);
	cr_assert_eq(memcmp(buf + n - 5, "query", 5), 0);
	cr_assert_eq(frame(buf, sizeof(buf), 200), 0, "a 2nd frame");
}

/* The proxy's listener takes a connection, both ways carry bytes, and
 * the packet socket shows its SYN and nothing after it. */
Test(egress, relay_shows_only_its_syn)
{
	struct sockaddr_in a = v4("127.0.0.1", PORT);
	struct pollfd p = {.fd = listener, .events = POLLIN};
	uint8_t buf[2048];
	char line[16];
	int c = -1, s;
	size_t n;

	cr_assert_eq(try_connect(AF_INET, SOCK_STREAM, &a, sizeof(a), &c), 0);
	cr_assert_eq(poll(&p, 1, 1000), 1);
	s = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(s, 0);
	cr_assert_eq(write(c, "hello\n", 6), 6);
	cr_assert_eq(read(s, line, sizeof(line)), 6);
	cr_assert_eq(memcmp(line, "hello\n", 6), 0);
	memset(buf, 'x', 1500);
	cr_assert_eq(write(s, buf, 1500), 1500);
	cr_assert_gt(read(c, buf, sizeof(buf)), 0);
	close(c);
	close(s);
	n = frame(buf, sizeof(buf), 1000);
	assert_v4(buf, n, IPPROTO_TCP, "127.0.0.1", PORT);
	cr_assert_eq(frame(buf, sizeof(buf), 300), 0, "relay traffic seen");
}

/* The filter is locked: whoever holds the socket cannot widen it. */
Test(egress, filter_locked)
{
	struct sock_fprog prog;
	int dummy = 0;

	cr_assert_eq(setsockopt(packet, SOL_SOCKET, SO_DETACH_FILTER, &dummy,
			 sizeof(dummy)),
	    -1);
	cr_assert_eq(errno, EPERM);
	jail_egress_filter(&prog);
	cr_assert_eq(setsockopt(packet, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
			 sizeof(prog)),
	    -1);
	cr_assert_eq(errno, EPERM);
}

/* The port is taken: nobody else in the namespace can listen there. */
Test(egress, port_taken)
{
	struct sockaddr_in a = v4("127.0.0.1", PORT), any = v4("0.0.0.0", PORT);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	cr_assert_geq(s, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), -1);
	cr_assert_eq(errno, EADDRINUSE);
	cr_assert_eq(bind(s, (struct sockaddr *)&any, sizeof(any)), -1);
	cr_assert_eq(errno, EADDRINUSE);
	close(s);
}

/* The supervisor's check: the pair as init made it, for its port only,
 * in its order only. */
Test(egress, supervisor_check)
{
	int other = jail_egress_listener(PORT + 1);

	cr_assert_geq(other, 0);
	cr_assert(job_net_sockets_ok(listener, packet, PORT));
	cr_assert_not(job_net_sockets_ok(listener, packet, PORT + 1));
	cr_assert_not(job_net_sockets_ok(packet, listener, PORT));
	cr_assert_not(job_net_sockets_ok(listener, listener, PORT));
	cr_assert(job_net_sockets_ok(other, packet, PORT + 1));
	close(other);
	/* Bound but not listening. */
	other = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	{
		struct sockaddr_in a = v4("127.0.0.1", PORT + 2);

		cr_assert_eq(bind(other, (struct sockaddr *)&a, sizeof(a)), 0);
	}
	cr_assert_not(job_net_sockets_ok(other, packet, PORT + 2));
	close(other);
}

/* A second set of routes is refused (they exist), and port 0 is. */
Test(egress, make_refusals)
{
	int l = 5, p = 5;

	cr_assert_eq(jail_egress_routes(), -EEXIST);
	cr_assert_eq(jail_egress_make(0, &l, &p), -EINVAL);
	cr_assert_eq(l, -1);
	cr_assert_eq(p, -1);
}

/* The port is part of a jail's authority (jail_common.c): a warm jail
 * built with sockets takes no job without them, nor the reverse, nor a
 * job with another port. Runs without the namespace. */
Test(authority, proxy_port)
{
	struct job_spec a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	cr_assert(jail_same_authority(&a, &b));
	a.proxy_port = PORT;
	cr_assert_not(jail_same_authority(&a, &b));
	cr_assert_not(jail_pool_compatible(&a, &b));
	cr_assert_not(jail_pool_compatible(&b, &a));
	b.proxy_port = PORT + 1;
	cr_assert_not(jail_same_authority(&a, &b));
	b.proxy_port = PORT;
	cr_assert(jail_same_authority(&a, &b));
	cr_assert(jail_pool_compatible(&a, &b));
	cr_assert_str_eq(jail_stage_name(STAGE_EGRESS),
	    "the egress proxy's listener, routes and packet socket");
	cr_assert_eq(STAGE_MAX, STAGE_WORK_OVERLAY);
}

/* Issue 26: a warm jail's stage is built with its template's allowance,
 * so a job of another workspace_allow or stage_files is not one it may
 * take (a cold jail runs it); the authority is the same. */
Test(authority, stage_size)
{
	struct job_spec a, b;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.workspace_allow = b.workspace_allow = 1u << 20;
	a.stage_files = b.stage_files = 100;
	cr_assert(jail_pool_compatible(&a, &b));
	b.workspace_allow++;
	cr_assert(jail_same_authority(&a, &b));
	cr_assert_not(jail_pool_compatible(&a, &b));
	b.workspace_allow = a.workspace_allow;
	b.stage_files = 0;
	cr_assert_not(jail_pool_compatible(&a, &b));
	cr_assert_not(jail_pool_compatible(&b, &a));
	cr_assert_str_neq(jail_stage_name(STAGE_WORK_STAGE), "unknown stage");
	cr_assert_str_neq(jail_stage_name(STAGE_WORK_OVERLAY), "unknown stage");
}
