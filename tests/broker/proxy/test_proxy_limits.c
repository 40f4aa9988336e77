/*
 * test_proxy_limits.c: stockade-proxy's bounds and what it sees around
 * it (broker/proxy/; issue 25): the job's caps, the head deadline, jobs
 * it does not serve, names that do not resolve, and direct connections
 * on a packet socket. As test_proxy.c: the real program, confined, on
 * loopback only.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "egress_ctl.h"
#include "egress_test.h"
#include "proxy_test.h"

TestSuite(proxy_limits, .timeout = 60);

Test(proxy_limits, budget_bytes_in)
{
	struct upstream *u = upstream_start(UP_FLOOD);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 16,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 100, -1);
	struct egress_report rep;
	static char buf[20000];
	int fd = connect_req(lport, "127.0.0.1", u->port);

	expect_established(fd);
	cr_assert_lt(read_all(fd, buf, sizeof(buf)), 100);
	close(fd);
	proxy_end(&p, 16, &rep);
	cr_assert_eq(rep.nrefusal, 1);
	cr_assert_eq(rep.refusal[0].reason, EGRESS_REASON_BUDGET);
	cr_assert_str_eq(rep.refusal[0].detail, "max_bytes_in_mb");
	cr_assert_leq(rep.bytes_in, 100);
	proxy_stop(&p);
}

/* ---- The packet socket -------------------------------------------------------- */

/* A network namespace of the test's own, its lo up, and a packet socket
 * on it (as jail init makes one in the jail's); -1 when this process
 * may not make them. */
static int
own_netns_packet_socket(void)
{
	struct ifreq ifr = {0};
	struct sockaddr_ll ll = {.sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_ALL)};
	int fd;

	if (unshare(CLONE_NEWNET) < 0)
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	strcpy(ifr.ifr_name, "lo");
	cr_assert_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	cr_assert_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
	/* 192.0.2.0/24 local to lo, as jail init routes every address
	 * (launcher/init/egress.c): a connect there crosses lo. */
	cr_assert_eq(system("ip route add local 192.0.2.0/24 dev lo table "
			    "local"),
	    0);
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ALL));
	cr_assert_geq(fd, 0, "AF_PACKET: %s", strerror(errno));
	ll.sll_ifindex = (int)if_nametoindex("lo");
	cr_assert_eq(bind(fd, (struct sockaddr *)&ll, sizeof(ll)), 0);
	return fd;
}

static const struct egress_refusal_rec *
find_refusal(const struct egress_report *rep, const char *host, uint16_t port)
{
	for (uint32_t i = 0; i < rep->nrefusal; i++)
		if (strcmp(rep->refusal[i].host, host) == 0 &&
		    rep->refusal[i].port == port)
			return &rep->refusal[i];
	return NULL;
}

/* UDP to a DNS server and a TCP connect, around the proxy: each a
 * direct_connect refusal; the job's own connection to the listener is
 * none. */
Test(proxy_limits, direct_connect_seen)
{
	int pfd = own_netns_packet_socket();

	if (pfd < 0)
		skip_or_fail("cannot make a network namespace (not root?)");
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 19, RULES("allow:example.org"), 1000,
	    pfd);
	struct sockaddr_in dns = {.sin_family = AF_INET, .sin_port = htons(53)};
	struct sockaddr_in closed = {.sin_family = AF_INET,
	    .sin_port = htons(9)};
	struct sockaddr_in own = {.sin_family = AF_INET,
	    .sin_port = htons(9),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const struct egress_refusal_rec *f;
	struct egress_report rep;
	char buf[512];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	close(pfd);
	inet_pton(AF_INET, "127.0.0.9", &dns.sin_addr);
	cr_assert_eq(sendto(fd, "q", 1, 0, (struct sockaddr *)&dns,
			 sizeof(dns)),
	    1);
	close(fd);
	inet_pton(AF_INET, "192.0.2.1", &closed.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(connect(fd, (struct sockaddr *)&closed, sizeof(closed)),
	    0);
	close(fd);
	/* The jail's own loopback is the job's: not reported. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(connect(fd, (struct sockaddr *)&own, sizeof(own)), 0);
	close(fd);
	fd = connect_req(lport, "example.com", 443);
	read_all(fd, buf, sizeof(buf));
	close(fd);
	usleep(200000);
	proxy_end(&p, 19, &rep);
	f = find_refusal(&rep, "127.0.0.9", 53);
	cr_assert_not_null(f, "no udp refusal");
	cr_assert_eq(f->reason, EGRESS_REASON_DIRECT_CONNECT);
	cr_assert_str_eq(f->detail, "udp");
	cr_assert_null(find_refusal(&rep, "127.0.0.1", 9),
	    "the jail's own loopback reported");
	f = find_refusal(&rep, "192.0.2.1", 9);
	cr_assert_not_null(f, "no tcp refusal");
	cr_assert_eq(f->reason, EGRESS_REASON_DIRECT_CONNECT);
	cr_assert_str_eq(f->detail, "tcp");
	cr_assert_null(find_refusal(&rep, "127.0.0.1", lport),
	    "the listener's own traffic reported");
	cr_assert_not_null(find_refusal(&rep, "example.com", 443));
	cr_assert_eq(rep.nrefusal, 3, "%u refusals", rep.nrefusal);
	proxy_stop(&p);
}

/* A client that sends no request is closed once PROXY_HEAD_MS (10 s)
 * passed, and nothing is reported. */
Test(proxy_limits, silent_client_timed_out, .timeout = 30)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 23, RULES("allow:example.org"), 1000,
	    -1);
	struct egress_report rep;
	struct timeval tv = {.tv_sec = 15};
	struct timespec t0, t1;
	char buf[16];
	int fd = dial(lport);

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	send_all(fd, "GET http://exa", 14);
	cr_assert_eq(read(fd, buf, sizeof(buf)), 0, "not closed");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_assert_geq(t1.tv_sec - t0.tv_sec, 9);
	cr_assert_leq(t1.tv_sec - t0.tv_sec, 12);
	close(fd);
	proxy_end(&p, 23, &rep);
	cr_assert_eq(rep.nrefusal + rep.nconn, 0);
	proxy_stop(&p);
}

/* max_connections 1: the second request is refused before any dial. */
Test(proxy_limits, budget_connections)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	struct egress_job caps = {.max_bytes_out = 1000,
	    .max_bytes_in = 1000,
	    .max_connections = 1,
	    .max_concurrent = 1};
	uint16_t lport = proxy_job_caps(&p, 24,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), &caps,
	    -1);
	struct egress_report rep;
	char buf[512];
	int fa = connect_req(lport, "127.0.0.1", u->port), fb;

	expect_established(fa);
	fb = connect_req(lport, "127.0.0.1", u->port);
	read_all(fb, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "%s", buf);
	cr_assert(strstr(buf, "max_connections") != NULL, "%s", buf);
	close(fb);
	close(fa);
	usleep(100000);
	proxy_end(&p, 24, &rep);
	cr_assert_eq(rep.connections, 1);
	cr_assert_eq(rep.nrefusal, 1);
	cr_assert_eq(rep.refusal[0].reason, EGRESS_REASON_BUDGET);
	cr_assert_str_eq(rep.refusal[0].detail, "max_connections");
	proxy_stop(&p);
}

/* max_bytes_out 10: 11 bytes to send end the connection unsent. */
Test(proxy_limits, budget_bytes_out)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	struct egress_job caps = {.max_bytes_out = 10,
	    .max_bytes_in = 1000,
	    .max_connections = 10,
	    .max_concurrent = 10};
	uint16_t lport = proxy_job_caps(&p, 25,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), &caps,
	    -1);
	struct egress_report rep;
	char buf[64];
	int fd = connect_req(lport, "127.0.0.1", u->port);

	expect_established(fd);
	send_all(fd, "12345", 5);
	read_n(fd, buf, 5);
	send_all(fd, "123456", 6);
	cr_assert_eq(read_all(fd, buf, sizeof(buf)), 0);
	close(fd);
	proxy_end(&p, 25, &rep);
	cr_assert_eq(rep.nrefusal, 1);
	cr_assert_eq(rep.refusal[0].reason, EGRESS_REASON_BUDGET);
	cr_assert_str_eq(rep.refusal[0].detail, "max_bytes_out_mb");
	cr_assert_eq(rep.bytes_out, 5);
	proxy_stop(&p);
}

/* A job the proxy cannot serve (a body with a port of 0): its listener
 * is closed at once, and its END answered with proxy_failed. */
Test(proxy_limits, unserved_job)
{
	struct proxy p = proxy_start();
	static uint8_t msg[WIRE_HEADER_SIZE + 64];
	struct egress_report rep;
	struct sockaddr_in sa = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	uint16_t port;
	int lfd = listen_lo(SOCK_STREAM, &port), fd;

	memset(msg, 0, sizeof(msg));
	msg[WIRE_HEADER_SIZE] = 26; /* job 26, every cap 0, port 0 */
	cr_assert_eq(wire_send(p.ctl, msg, WIRE_HEADER_SIZE + 36,
			 WIRE_PROXY_JOB, WIRE_ROLE_BIT(0), &lfd),
	    0);
	close(lfd);
	proxy_end(&p, 26, &rep);
	cr_assert(rep.proxy_failed);
	cr_assert_eq(rep.nrefusal + rep.nconn, 0);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_port = htons(port);
	cr_assert_neq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0,
	    "the listener still accepts");
	close(fd);
	proxy_stop(&p);
}

/* An allowed name that does not exist: 502, and an unreachable entry
 * (the job's result says why its allowed host failed). */
Test(proxy_limits, name_does_not_resolve)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 27, RULES("allow:nx.example:443"), 1000,
	    -1);
	struct egress_report rep;
	char buf[512];
	int fd = connect_req(lport, "nx.example", 443);

	read_all(fd, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 502 ", 13) == 0, "%s", buf);
	close(fd);
	proxy_end(&p, 27, &rep);
	cr_assert_eq(rep.nconn, 0);
	cr_assert_eq(rep.nrefusal, 1);
	cr_assert_eq(rep.refusal[0].reason, EGRESS_REASON_UNREACHABLE);
	cr_assert_str_eq(rep.refusal[0].host, "nx.example");
	cr_assert_str_eq(rep.refusal[0].detail, "no_such_name");
	proxy_stop(&p);
}

/* Garbage on many connections at once, past the job's share of slots:
 * the proxy closes them and keeps serving (END answered, exit 0). */
Test(proxy_limits, garbage_clients_survived)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 29, RULES("allow:example.org"), 1000,
	    -1);
	struct egress_report rep;
	int fd[64];
	uint8_t junk[300];
	char buf[512];

	srand(29);
	for (int i = 0; i < 64; i++) {
		fd[i] = dial(lport);
		for (size_t k = 0; k < sizeof(junk); k++)
			junk[k] = (uint8_t)rand();
		junk[0] = (uint8_t)(i % 3 == 0 ? 5 : i % 3 == 1 ? 'G' : 0x16);
		(void)!write(fd[i], junk, (size_t)(1 + rand() % 299));
	}
	for (int i = 0; i < 64; i++)
		close(fd[i]);
	int c = connect_req(lport, "example.com", 443);

	read_all(c, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "%s", buf);
	close(c);
	proxy_end(&p, 29, &rep);
	cr_assert_eq(rep.connections, 0);
	proxy_stop(&p);
}

/* max_bytes_in across the relay's pipe: the client gets a prefix of
 * the stream, no more than the report counts, and the report no more
 * than the cap; the chunk that would pass it (a pipe's worth at most,
 * 1 MiB) is not relayed. */
Test(proxy_limits, budget_bytes_in_bulk)
{
	const uint64_t cap = (5u << 20) + 3;
	struct upstream *u = upstream_start(UP_BULK);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 32,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), cap, -1);
	struct egress_report rep;
	static uint8_t buf[65536];
	uint64_t got = 0;
	ssize_t n;
	int fd = connect_req(lport, "127.0.0.1", u->port);

	expect_established(fd);
	send_all(fd, "x", 1);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			cr_assert_eq(buf[i], bulk_byte(got + (uint64_t)i));
		got += (uint64_t)n;
	}
	close(fd);
	proxy_end(&p, 32, &rep);
	cr_assert_eq(rep.nrefusal, 1);
	cr_assert_str_eq(rep.refusal[0].detail, "max_bytes_in_mb");
	cr_assert_leq(got, rep.bytes_in);
	cr_assert_leq(rep.bytes_in, cap);
	cr_assert_gt(rep.bytes_in, cap - (1u << 20));
	proxy_stop(&p);
}
