/*
 * test_proxy.c: stockade-proxy, the real program, confined as it always
 * is (broker/proxy/; issue 25). The test plays the broker on the control
 * socket and the jail: it makes the listener the proxy accepts on (on
 * 127.0.0.1, standing for the jail's), connects to it as a job would,
 * and runs the upstream servers and a DNS server on loopback (the proxy
 * is started with --dns 127.0.0.1:PORT). Nothing leaves loopback.
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
TestSuite(proxy, .timeout = 60);

/* ---- Allowed and relayed ---------------------------------------------------- */

Test(proxy, connect_relayed_both_ways)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 7,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 1000,
	    -1);
	struct egress_report rep;
	char buf[64];
	int fd = connect_req(lport, "127.0.0.1", u->port);

	expect_established(fd);
	send_all(fd, "ping-pong", 9);
	read_n(fd, buf, 9);
	cr_assert_eq(memcmp(buf, "ping-pong", 9), 0);
	shutdown(fd, SHUT_WR);
	cr_assert_eq(read_all(fd, buf, sizeof(buf)), 0);
	close(fd);
	usleep(100000);
	proxy_end(&p, 7, &rep);
	cr_assert_eq(rep.connections, 1);
	cr_assert_eq(rep.nconn, 1);
	cr_assert_str_eq(rep.conn[0].host, "127.0.0.1");
	cr_assert_str_eq(rep.conn[0].address, "127.0.0.1");
	cr_assert_eq(rep.conn[0].port, u->port);
	cr_assert_eq(rep.conn[0].bytes_out, 9);
	cr_assert_eq(rep.conn[0].bytes_in, 9);
	cr_assert_eq(rep.refusals, 0);
	proxy_stop(&p);
}

/* An absolute-form GET of http://HOST:PORT/x through LPORT; the answer
 * into BUF, its length returned. */
static size_t
http_get(uint16_t lport, const char *host, unsigned port, char *buf,
    size_t size)
{
	char req[256];
	int fd = dial(lport),
	    n = snprintf(req, sizeof(req),
		"GET http://%s:%u/x HTTP/1.1\r\nHost: %s:%u\r\n"
		"Proxy-Connection: keep-alive\r\n\r\n",
		host, port, host, port);
	size_t got;

	send_all(fd, req, (size_t)n);
	got = read_all(fd, buf, size);
	close(fd);
	cr_assert(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", buf);
	cr_assert(strstr(buf, "\r\n\r\nhello") != NULL, "%s", buf);
	return got;
}

/* By address, then by a name the test's DNS resolves to it. */
Test(proxy, absolute_form_get)
{
	struct upstream *u = upstream_start(UP_HTTP);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 8,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port),
		rulef(1, "allow:web.example:%u", u->port)),
	    1000, -1);
	struct egress_report rep;
	char buf[512];
	size_t a = http_get(lport, "127.0.0.1", u->port, buf, sizeof(buf));
	size_t b = http_get(lport, "web.example", u->port, buf, sizeof(buf));

	proxy_end(&p, 8, &rep);
	cr_assert_eq(rep.connections, 2);
	cr_assert_eq(rep.nconn, 2);
	cr_assert_eq(rep.conn[0].bytes_in, a);
	cr_assert_gt(rep.conn[0].bytes_out, 0);
	cr_assert_str_eq(rep.conn[1].host, "web.example");
	cr_assert_eq(rep.conn[1].bytes_in, b);
	cr_assert_eq(rep.bytes_in, a + b);
	proxy_stop(&p);
}

Test(proxy, socks5_address_relayed)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 9,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 1000,
	    -1);
	uint8_t req[] = {5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1,
	    (uint8_t)(u->port >> 8), (uint8_t)u->port};
	uint8_t got[12];
	struct egress_report rep;
	int fd = dial(lport);

	send_all(fd, req, sizeof(req));
	read_n(fd, got, 2 + EGRESS_SOCKS5_REPLY_LEN);
	cr_assert_eq(got[0], 5);
	cr_assert_eq(got[1], 0);
	cr_assert_eq(got[3], EGRESS_SOCKS5_SUCCEEDED);
	send_all(fd, "abc", 3);
	read_n(fd, got, 3);
	cr_assert_eq(memcmp(got, "abc", 3), 0);
	close(fd);
	usleep(100000);
	proxy_end(&p, 9, &rep);
	cr_assert_eq(rep.connections, 1);
	cr_assert_eq(rep.conn[0].bytes_out, 3);
	proxy_stop(&p);
}

/* ---- Refused ------------------------------------------------------------------ */

Test(proxy, name_not_allowed)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 10, RULES("allow:deb.debian.org"), 1000,
	    -1);
	struct egress_report rep;
	char buf[1024];
	int fd = connect_req(lport, "Example.COM", 443);

	read_all(fd, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "%s", buf);
	cr_assert(strstr(buf, "stockade: refused by the [network] policy") !=
		NULL,
	    "%s", buf);
	cr_assert(strstr(buf, "example.com") != NULL, "%s", buf);
	close(fd);
	proxy_end(&p, 10, &rep);
	/* as requested, made printable (egress_report_refusal) */
	expect_refusal(&rep, "Example.COM", EGRESS_REASON_NOT_ALLOWED, NULL);
	proxy_stop(&p);
}

Test(proxy, socks5_name_not_allowed)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 11, RULES("allow:deb.debian.org"), 1000,
	    -1);
	static const uint8_t req[] = {5, 1, 0, 5, 1, 0, 3, 11, 'e', 'x', 'a',
	    'm', 'p', 'l', 'e', '.', 'c', 'o', 'm', 1, 187};
	uint8_t got[12];
	struct egress_report rep;
	int fd = dial(lport);

	send_all(fd, req, sizeof(req));
	read_n(fd, got, 2 + EGRESS_SOCKS5_REPLY_LEN);
	cr_assert_eq(got[1], 0);
	cr_assert_eq(got[3], EGRESS_SOCKS5_NOT_ALLOWED);
	close(fd);
	proxy_end(&p, 11, &rep);
	expect_refusal(&rep, "example.com", EGRESS_REASON_NOT_ALLOWED, NULL);
	cr_assert_eq(rep.refusal[0].port, 443);
	proxy_stop(&p);
}

Test(proxy, socks5_nul_in_host)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 12, RULES("allow:allowed.com"), 1000,
	    -1);
	static const uint8_t req[] = {5, 1, 0, 5, 1, 0, 3, 15, 'a', 'l', 'l',
	    'o', 'w', 'e', 'd', '.', 'c', 'o', 'm', 0, 'x', '.', 'y', 1, 187};
	uint8_t got[12];
	struct egress_report rep;
	int fd = dial(lport);

	send_all(fd, req, sizeof(req));
	read_n(fd, got, 2 + EGRESS_SOCKS5_REPLY_LEN);
	cr_assert_eq(got[3], EGRESS_SOCKS5_NOT_ALLOWED);
	close(fd);
	proxy_end(&p, 12, &rep);
	cr_assert_eq(rep.nrefusal, 1);
	cr_assert_eq(rep.refusal[0].reason, EGRESS_REASON_BAD_REQUEST);
	cr_assert_str_eq(rep.refusal[0].detail, "nul");
	cr_assert_eq(rep.connections, 0);
	proxy_stop(&p);
}

/* An address no allow_address covers: private_address, not dialled. */
Test(proxy, private_address_literal)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 13, RULES("allow:example.org"), 1000,
	    -1);
	struct egress_report rep;
	char buf[1024];
	int fd = connect_req(lport, "127.0.0.1", u->port);

	read_all(fd, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "%s", buf);
	close(fd);
	proxy_end(&p, 13, &rep);
	expect_refusal(&rep, "127.0.0.1", EGRESS_REASON_PRIVATE_ADDRESS, NULL);
	proxy_stop(&p);
}

/* An allowed name whose DNS answer is private (127.0.0.1, from the test's
 * DNS server): refused after resolution, never dialled. */
Test(proxy, allowed_name_resolving_private)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 14,
	    RULES(rulef(0, "allow:rebind.example:%u", u->port)), 1000, -1);
	struct egress_report rep;
	char buf[1024];
	int fd = connect_req(lport, "rebind.example", u->port);

	read_all(fd, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "%s", buf);
	close(fd);
	proxy_end(&p, 14, &rep);
	expect_refusal(&rep, "rebind.example", EGRESS_REASON_PRIVATE_ADDRESS,
	    "loopback");
	proxy_stop(&p);
}

static size_t
hello_for(const char *sni, uint8_t *out)
{
	uint8_t ext[300];
	size_t n = egress_sni_ext(sni, strlen(sni), ext);

	return egress_mk_hello(ext, n, out);
}

/* A name allowed, and its address by allow_address (the test's DNS
 * says 127.0.0.1): a ClientHello for another name is refused, one for
 * the name itself relayed. */
Test(proxy, sni_must_match)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 15,
	    RULES(rulef(0, "allow:tls.example:%u", u->port),
		rulef(1, "allow_address:127.0.0.1/32:%u", u->port)),
	    100000, -1);
	struct egress_report rep;
	uint8_t hello[512], back[512];
	char buf[64];
	size_t n = hello_for("other.example", hello);
	int fd = connect_req(lport, "tls.example", u->port);

	expect_established(fd);
	send_all(fd, hello, n);
	cr_assert_eq(read_all(fd, buf, sizeof(buf)), 0, "echoed: not refused");
	close(fd);
	fd = connect_req(lport, "tls.example", u->port);
	expect_established(fd);
	n = hello_for("TLS.example", hello);
	send_all(fd, hello, n);
	read_n(fd, back, n);
	cr_assert_eq(memcmp(back, hello, n), 0);
	close(fd);
	usleep(100000);
	proxy_end(&p, 15, &rep);
	cr_assert_eq(rep.nrefusal, 1);
	cr_assert_eq(rep.refusal[0].reason, EGRESS_REASON_SNI_MISMATCH);
	cr_assert_str_eq(rep.refusal[0].host, "tls.example");
	cr_assert_eq(rep.connections, 1);
	cr_assert_eq(rep.conn[0].bytes_out, n);
	proxy_stop(&p);
}

Test(proxy, own_port_refused)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 17,
	    RULES("allow_address:127.0.0.0/8:1-65535"), 1000, -1);
	struct egress_report rep;
	char buf[1024];
	int fd = connect_req(lport, "127.0.0.1", lport);

	read_all(fd, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "%s", buf);
	close(fd);
	proxy_end(&p, 17, &rep);
	expect_refusal(&rep, "127.0.0.1", EGRESS_REASON_NOT_ALLOWED,
	    "the proxy itself");
	proxy_stop(&p);
}

Test(proxy, exits_when_control_closes)
{
	struct proxy p = proxy_start();

	proxy_job(&p, 18, RULES("allow:example.org"), 1000, -1);
	proxy_stop(&p); /* exit status 0, asserted there */
}

/* A request the HTTP parser refuses: 400, bad_request with its why. */
Test(proxy, origin_form_bad_request)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 22, RULES("allow:example.org"), 1000,
	    -1);
	static const char req[] =
	    "GET /index.html HTTP/1.1\r\nHost: a.b\r\n\r\n";
	struct egress_report rep;
	char buf[512];
	int fd = dial(lport);

	send_all(fd, req, sizeof(req) - 1);
	read_all(fd, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%s", buf);
	close(fd);
	proxy_end(&p, 22, &rep);
	expect_refusal(&rep, "", EGRESS_REASON_BAD_REQUEST, "origin_form");
	proxy_stop(&p);
}

/* Two jobs at once, each with its rules and its report. */
Test(proxy, two_jobs_apart)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t a = proxy_job(&p, 20,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 1000,
	    -1);
	uint16_t b = proxy_job(&p, 21, RULES("allow:example.org"), 1000, -1);
	struct egress_report ra, rb;
	char buf[512];
	int fa = connect_req(a, "127.0.0.1", u->port);
	int fb = connect_req(b, "127.0.0.1", u->port);

	expect_established(fa);
	read_all(fb, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 403 ", 13) == 0, "%s", buf);
	close(fb);
	proxy_end(&p, 21, &rb);
	expect_refusal(&rb, "127.0.0.1", EGRESS_REASON_PRIVATE_ADDRESS,
	    "loopback");
	send_all(fa, "x", 1);
	read_n(fa, buf, 1);
	close(fa);
	usleep(100000);
	proxy_end(&p, 20, &ra);
	cr_assert_eq(ra.connections, 1);
	cr_assert_eq(ra.refusals, 0);
	cr_assert_eq(ra.conn[0].bytes_out, 1);
	proxy_stop(&p);
}

/* SOCKS5 with a name, allowed: resolved (the test's DNS: 127.0.0.1,
 * which allow_address opens), dialled, relayed; the report names the
 * host and the address dialled. */
Test(proxy, socks5_name_relayed)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 28,
	    RULES(rulef(0, "allow:socks.example:%u", u->port),
		rulef(1, "allow_address:127.0.0.1/32:%u", u->port)),
	    1000, -1);
	uint8_t req[] = {5, 1, 0, 5, 1, 0, 3, 13, 's', 'o', 'c', 'k', 's', '.',
	    'e', 'x', 'a', 'm', 'p', 'l', 'e', (uint8_t)(u->port >> 8),
	    (uint8_t)u->port};
	uint8_t got[12];
	struct egress_report rep;
	int fd = dial(lport);

	uint8_t hello[512], back[512];
	size_t n = hello_for("socks.example", hello);

	send_all(fd, req, sizeof(req));
	read_n(fd, got, 2 + EGRESS_SOCKS5_REPLY_LEN);
	cr_assert_eq(got[3], EGRESS_SOCKS5_SUCCEEDED);
	send_all(fd, hello, n);
	read_n(fd, back, n);
	cr_assert_eq(memcmp(back, hello, n), 0);
	close(fd);
	/* A tunnel to a name carries TLS naming it, not plain bytes: a
	 * Host field behind a shared front would pick another site. */
	fd = dial(lport);
	send_all(fd, req, sizeof(req));
	read_n(fd, got, 2 + EGRESS_SOCKS5_REPLY_LEN);
	cr_assert_eq(got[3], EGRESS_SOCKS5_SUCCEEDED);
	send_all(fd, "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n", 41);
	cr_assert_eq(read_all(fd, (char *)back, sizeof(back)), 0,
	    "plain bytes relayed");
	close(fd);
	usleep(100000);
	proxy_end(&p, 28, &rep);
	cr_assert_eq(rep.connections, 1);
	cr_assert_str_eq(rep.conn[0].host, "socks.example");
	cr_assert_str_eq(rep.conn[0].address, "127.0.0.1");
	cr_assert_eq(rep.refusals, 1);
	cr_assert_eq(rep.refusal[0].reason, EGRESS_REASON_SNI_MISMATCH);
	cr_assert_str_eq(rep.refusal[0].detail, "not_tls");
	proxy_stop(&p);
}

/*
 * --connect-ports confines TCP connect with Landlock (ABI 4 on): a proxy
 * given another port than the upstream's cannot dial it even for a job
 * whose rules allow it (the dial fails: 502, no connection), and one
 * given that port can. What a compromised proxy could reach is the
 * broker's list of its policy's ports (egress_proxy_ports).
 */
Test(proxy, connect_confined_to_the_given_ports)
{
	struct upstream *u = upstream_start(UP_ECHO);
	char other[16], mine[16], buf[256];
	struct egress_report rep;
	ssize_t n;
	int fd;

	snprintf(other, sizeof(other), "%u", u->port == 9 ? 10u : 9u);
	snprintf(mine, sizeof(mine), "%u", (unsigned)u->port);
	for (int pass = 0; pass < 2; pass++) {
		struct proxy p = proxy_start_ports(pass == 0 ? other : mine);
		uint16_t lport = proxy_job(&p, 70 + (uint64_t)pass,
		    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)),
		    1000, -1);

		fd = connect_req(lport, "127.0.0.1", u->port);
		if (pass == 1) {
			expect_established(fd);
			close(fd);
			usleep(100000);
			proxy_end(&p, 71, &rep);
			cr_assert_eq(rep.connections, 1);
			proxy_stop(&p);
			break;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		cr_assert_gt(n, 0);
		buf[n] = '\0';
		if (strncmp(buf, "HTTP/1.1 200", 12) == 0)
			skip_or_fail("Landlock ABI < 4: TCP connect is not "
				     "confined by port on this kernel");
		cr_assert(strncmp(buf, "HTTP/1.1 502", 12) == 0, "%s", buf);
		close(fd);
		proxy_end(&p, 70, &rep);
		cr_assert_eq(rep.connections, 0);
		proxy_stop(&p);
	}
}

/* ---- Bulk: the relay's pipe (splice) ---------------------------------------- */

/* Reads FD to its end, each byte checked against bulk_byte; the count. */
static uint64_t
read_bulk(int fd)
{
	static uint8_t buf[65536];
	uint64_t at = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			cr_assert_eq(buf[i], bulk_byte(at + (uint64_t)i),
			    "byte %llu",
			    (unsigned long long)(at + (uint64_t)i));
		at += (uint64_t)n;
	}
	cr_assert_eq(n, 0, "read: %s", strerror(errno));
	return at;
}

/* 32 MiB through a tunnel: every byte, in order, counted exactly. The
 * client speaks first (a tunnel relays once its first bytes are
 * checked); the upstream's first bytes wait in the buffer meanwhile, the
 * rest go through the pipe after them. */
Test(proxy, bulk_relayed_exactly)
{
	struct upstream *u = upstream_start(UP_BULK);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 30,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)),
	    UINT64_C(1) << 30, -1);
	struct egress_report rep;
	int fd = connect_req(lport, "127.0.0.1", u->port);

	expect_established(fd);
	send_all(fd, "x", 1);
	cr_assert_eq(read_bulk(fd), UP_BULK_LEN);
	close(fd);
	proxy_end(&p, 30, &rep);
	cr_assert_eq(rep.nconn, 1);
	cr_assert_eq(rep.conn[0].bytes_in, UP_BULK_LEN);
	cr_assert_eq(rep.bytes_in, UP_BULK_LEN);
	proxy_stop(&p);
}

/* 18 tunnels open at once, read one after another (the upstream serves
 * one at a time; its backlog of 16 holds the others, connected): more
 * than the proxy's 16 big pipes, so some relay through a default-sized
 * one; each exact. */
Test(proxy, bulk_many_tunnels)
{
	enum { N = 18 };
	struct upstream *u = upstream_start(UP_BULK);
	struct proxy p = proxy_start();
	struct egress_job caps = {.max_bytes_out = 1 << 20,
	    .max_bytes_in = UINT64_C(1) << 40,
	    .max_connections = 100,
	    .max_concurrent = 2 * N};
	uint16_t lport = proxy_job_caps(&p, 31,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), &caps,
	    -1);
	struct egress_report rep;
	int fd[N];

	for (int i = 0; i < N; i++) {
		fd[i] = connect_req(lport, "127.0.0.1", u->port);
		expect_established(fd[i]);
		send_all(fd[i], "x", 1);
	}
	for (int i = 0; i < N; i++) {
		cr_assert_eq(read_bulk(fd[i]), UP_BULK_LEN, "tunnel %d", i);
		close(fd[i]);
	}
	proxy_end(&p, 31, &rep);
	cr_assert_eq(rep.connections, N);
	cr_assert_eq(rep.bytes_in, (uint64_t)N * UP_BULK_LEN);
	proxy_stop(&p);
}

/*
 * A server that speaks first and closes before the client sends a byte
 * (a tunnel to an allow_address may carry any protocol): the client gets
 * the banner and then the end, at once, not at the idle timeout.
 */
Test(proxy, server_close_before_the_client_speaks)
{
	struct upstream *u = upstream_start(UP_BANNER);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 80,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 1000,
	    -1);
	struct egress_report rep;
	struct timeval tv = {.tv_sec = 3};
	char buf[64];
	int fd = connect_req(lport, "127.0.0.1", u->port);

	expect_established(fd);
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)),
	    0);
	size_t have = 0;
	ssize_t n;

	while ((n = read(fd, buf + have, sizeof(buf) - have)) > 0)
		have += (size_t)n;
	cr_assert_eq(n, 0, "no end within 3 s (%s)", strerror(errno));
	cr_assert_eq(have, 7);
	cr_assert_eq(memcmp(buf, "banner\n", 7), 0);
	close(fd);
	usleep(100000);
	proxy_end(&p, 80, &rep);
	cr_assert_eq(rep.connections, 1);
	cr_assert_eq(rep.conn[0].bytes_in, 7);
	proxy_stop(&p);
}
