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
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "egress_ctl.h"
#include "egress_test.h"
#include "proto.h"
#include "wire.h"

/* ---- Loopback servers ----------------------------------------------------- */

enum up_mode { UP_ECHO, UP_HTTP, UP_FLOOD };

struct upstream {
	int lfd;
	uint16_t port;
	enum up_mode mode;
};

static int
listen_lo(int type, uint16_t *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (type == SOCK_STREAM)
		cr_assert_eq(listen(fd, 16), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static void
serve_one(int fd, enum up_mode mode)
{
	char buf[4096];
	static char flood[10000];
	static const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
				   "Connection: close\r\n\r\nhello";
	size_t have = 0;
	ssize_t n;

	if (mode == UP_FLOOD) {
		memset(flood, 'f', sizeof(flood));
		(void)!write(fd, flood, sizeof(flood));
	}
	while ((n = read(fd, buf + have, sizeof(buf) - have - 1)) > 0) {
		if (mode == UP_ECHO)
			(void)!write(fd, buf + have, (size_t)n);
		have += (size_t)n;
		buf[have] = '\0';
		if (mode == UP_HTTP && strstr(buf, "\r\n\r\n") != NULL) {
			(void)!write(fd, resp, sizeof(resp) - 1);
			break;
		}
		if (have > sizeof(buf) - 512)
			have = 0;
	}
	close(fd);
}

static void *
upstream_main(void *arg)
{
	struct upstream *u = arg;
	int fd;

	while ((fd = accept(u->lfd, NULL, NULL)) >= 0)
		serve_one(fd, u->mode);
	return NULL;
}

static struct upstream *
upstream_start(enum up_mode mode)
{
	struct upstream *u = calloc(1, sizeof(*u));
	pthread_t th;

	u->mode = mode;
	u->lfd = listen_lo(SOCK_STREAM, &u->port);
	cr_assert_eq(pthread_create(&th, NULL, upstream_main, u), 0);
	pthread_detach(th);
	return u;
}

/* A DNS server that answers every A question with 127.0.0.1 and every
 * other with no record (RFC 1035 section 4.1). */
static void *
dns_main(void *arg)
{
	int fd = *(int *)arg;
	uint8_t q[512], r[600];
	struct sockaddr_storage from;

	for (;;) {
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, q, sizeof(q), 0,
		    (struct sockaddr *)&from, &flen);
		size_t at = 12;

		if (n < 12)
			continue;
		while (at < (size_t)n && q[at] != 0)
			at += (size_t)q[at] + 1;
		at += 5;
		if (at > (size_t)n)
			continue;
		bool a = q[at - 3] == 1;
		memcpy(r, q, at);
		r[2] = 0x81, r[3] = 0x80; /* response, RD, RA, NOERROR */
		r[6] = 0, r[7] = a ? 1 : 0;
		r[8] = r[9] = r[10] = r[11] = 0;
		if (a) {
			static const uint8_t ans[] = {0xc0, 0x0c, 0, 1, 0, 1, 0,
			    0, 0, 60, 0, 4, 127, 0, 0, 1};
			memcpy(r + at, ans, sizeof(ans));
			at += sizeof(ans);
		}
		sendto(fd, r, at, 0, (struct sockaddr *)&from, flen);
	}
	return NULL;
}

static uint16_t
dns_start(void)
{
	static int fd;
	uint16_t port;
	pthread_t th;

	fd = listen_lo(SOCK_DGRAM, &port);
	cr_assert_eq(pthread_create(&th, NULL, dns_main, &fd), 0);
	pthread_detach(th);
	return port;
}

/* ---- The proxy ----------------------------------------------------------- */

struct proxy {
	pid_t pid;
	int ctl;
};

static void
skip_or_fail(const char *why)
{
	const char *must = getenv("STOCKADE_MUST_WORK");

	if (must != NULL && strcmp(must, "1") == 0)
		cr_assert_fail("%s (not skipped: STOCKADE_MUST_WORK=1)", why);
	cr_skip_test("%s", why);
}

/* Receives one message within 5 s into BUF; its type, or -1 at EOF. */
static int
recv_msg(int ctl, uint8_t *buf, size_t size, struct wire_msg *m)
{
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	int fds[WIRE_MAX_FDS];

	cr_assert_eq(poll(&p, 1, 5000), 1, "no message from the proxy");
	int n = wire_recv(ctl, buf, size, fds, WIRE_MAX_FDS, m);

	cr_assert_geq(n, 0, "wire_recv: %s", strerror(-n));
	return n == 0 ? -1 : m->type;
}

static struct proxy
proxy_start(void)
{
	const char *path = getenv("STOCKADE_PROXY");
	char fdtext[16], dns[32];
	static uint8_t buf[WIRE_HEADER_SIZE + 1024];
	struct proxy p;
	struct wire_msg m;
	int sv[2];

	cr_assert_not_null(path, "STOCKADE_PROXY is not set (meson sets it)");
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
	    0);
	snprintf(dns, sizeof(dns), "127.0.0.1:%u", (unsigned)dns_start());
	snprintf(fdtext, sizeof(fdtext), "%d", sv[1]);
	p.pid = fork();
	cr_assert_geq(p.pid, 0);
	if (p.pid == 0) {
		fcntl(sv[1], F_SETFD, 0);
		execl(path, "stockade-proxy", "--fd", fdtext, "--dns", dns,
		    (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	p.ctl = sv[0];
	int type = recv_msg(p.ctl, buf, sizeof(buf), &m);

	if (type == WIRE_PROXY_FAILED) {
		struct rbuf r;
		int32_t err = 0;

		rbuf_init(&r, m.body, m.body_len);
		rbuf_get_i32(&r, &err);
		if (err == EOPNOTSUPP)
			skip_or_fail("no Landlock: the proxy refuses to run");
	}
	cr_assert_eq(type, WIRE_PROXY_READY, "the proxy answered %d", type);
	cr_assert_eq(m.body_len, 4);
	cr_assert_geq(m.body[0], 1, "Landlock ABI %u", m.body[0]);
	return p;
}

/* Hands the proxy job ID with RULES ("allow:x", "allow_address:x",
 * "deny:x") and MAX_IN; returns the port of the job's listener. */
static uint16_t
proxy_job(struct proxy *p, uint64_t id, const char *const *rules, size_t n,
    uint64_t max_in)
{
	struct egress_job job = {.job_id = id,
	    .max_bytes_out = 1 << 20,
	    .max_bytes_in = max_in,
	    .max_connections = 100,
	    .max_concurrent = 10};
	static uint8_t msg[WIRE_HEADER_SIZE + 65536];
	uint16_t port;
	int lfd = listen_lo(SOCK_STREAM, &port);

	for (size_t i = 0; i < n; i++) {
		const char *colon = strchr(rules[i], ':');
		size_t k = (size_t)(colon - rules[i]);
		enum egress_rule_kind kind = k == 5 ? EGRESS_RULE_ALLOW
		    : k == 4			    ? EGRESS_RULE_DENY
						    : EGRESS_RULE_ALLOW_ADDRESS;
		struct egress_rule r;

		cr_assert_eq(egress_rule_parse(kind, colon + 1, &r), 0, "%s",
		    rules[i]);
		cr_assert_eq(egress_rules_add(&job.rules, &r), 0);
	}
	job.port = port;
	long len = egress_job_encode(&job, msg + WIRE_HEADER_SIZE, 65536);

	cr_assert_gt(len, 0);
	cr_assert_eq(wire_send(p->ctl, msg, WIRE_HEADER_SIZE + (size_t)len,
			 WIRE_PROXY_JOB, WIRE_ROLE_BIT(0), &lfd),
	    0);
	close(lfd);
	egress_job_clear(&job);
	return port;
}

static void
proxy_end(struct proxy *p, uint64_t id, struct egress_report *rep)
{
	static uint8_t msg[WIRE_HEADER_SIZE + EGRESS_REPORT_WIRE_MAX];
	struct wbuf w;
	struct wire_msg m;

	wbuf_init(&w, msg + WIRE_HEADER_SIZE, 8);
	wbuf_put_u64(&w, id);
	cr_assert_eq(wire_send(p->ctl, msg, WIRE_HEADER_SIZE + 8,
			 WIRE_PROXY_END, 0, NULL),
	    0);
	cr_assert_eq(recv_msg(p->ctl, msg, sizeof(msg), &m), WIRE_PROXY_REPORT);
	cr_assert_eq(egress_report_decode(m.body, m.body_len, rep), 0);
	cr_assert_eq(rep->job_id, id);
}

static void
proxy_stop(struct proxy *p)
{
	int status;

	close(p->ctl);
	cr_assert_eq(waitpid(p->pid, &status, 0), p->pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "the proxy ended with status %#x (a seccomp kill is signal 31)",
	    status);
}

/* ---- A job's side ---------------------------------------------------------- */

static int
dial(uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	    .sin_port = htons(port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void
send_all(int fd, const void *data, size_t len)
{
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
}

/* Reads exactly LEN bytes into BUF. */
static void
read_n(int fd, void *buf, size_t len)
{
	size_t have = 0;

	while (have < len) {
		ssize_t n = read(fd, (char *)buf + have, len - have);

		cr_assert_gt(n, 0, "read %zu of %zu bytes", have, len);
		have += (size_t)n;
	}
}

/* Reads to the end (at most SIZE - 1 bytes, NUL-terminated); the count. */
static size_t
read_all(int fd, char *buf, size_t size)
{
	size_t have = 0;
	ssize_t n;

	while (
	    have < size - 1 && (n = read(fd, buf + have, size - 1 - have)) > 0)
		have += (size_t)n;
	cr_assert(have < size - 1 || n >= 0);
	buf[have] = '\0';
	return have;
}

static void
expect_established(int fd)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	char got[sizeof(ok)] = "";

	read_n(fd, got, sizeof(ok) - 1);
	cr_assert_str_eq(got, ok);
}

static int
connect_req(uint16_t lport, const char *host, uint16_t port)
{
	char req[512];
	int fd = dial(lport),
	    n = snprintf(req, sizeof(req),
		"CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", host, port,
		host, port);

	send_all(fd, req, (size_t)n);
	return fd;
}

#define RULES(...)                          \
	(const char *const[]){__VA_ARGS__}, \
	    sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)

static char rule_buf[8][80];

__attribute__((format(printf, 2, 0))) static const char *
rulef(int i, const char *fmt, unsigned port)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(rule_buf[i], sizeof(rule_buf[i]), fmt, port);
#pragma GCC diagnostic pop
	return rule_buf[i];
}

static void
expect_refusal(const struct egress_report *rep, const char *host,
    enum egress_reason reason, const char *detail)
{
	cr_assert_eq(rep->nrefusal, 1, "%u refusals", rep->nrefusal);
	cr_assert_str_eq(rep->refusal[0].host, host);
	cr_assert_eq(rep->refusal[0].reason, reason, "%s",
	    egress_reason_name(rep->refusal[0].reason));
	if (detail != NULL)
		cr_assert_str_eq(rep->refusal[0].detail, detail);
	cr_assert_eq(rep->connections, 0);
}

TestSuite(proxy, .timeout = 60);

/* ---- Allowed and relayed ---------------------------------------------------- */

Test(proxy, connect_relayed_both_ways)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 7,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 1000);
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

Test(proxy, absolute_form_get)
{
	struct upstream *u = upstream_start(UP_HTTP);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 8,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 1000);
	struct egress_report rep;
	char req[256], buf[512];
	int fd = dial(lport),
	    n = snprintf(req, sizeof(req),
		"GET http://127.0.0.1:%u/x HTTP/1.1\r\n"
		"Host: 127.0.0.1:%u\r\n"
		"Proxy-Connection: keep-alive\r\n\r\n",
		u->port, u->port);
	size_t got;

	send_all(fd, req, (size_t)n);
	got = read_all(fd, buf, sizeof(buf));
	cr_assert(strncmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0, "%s", buf);
	cr_assert(strstr(buf, "\r\n\r\nhello") != NULL, "%s", buf);
	close(fd);
	proxy_end(&p, 8, &rep);
	cr_assert_eq(rep.connections, 1);
	cr_assert_eq(rep.conn[0].bytes_in, got);
	cr_assert_gt(rep.conn[0].bytes_out, 0);
	proxy_stop(&p);
}

Test(proxy, socks5_address_relayed)
{
	struct upstream *u = upstream_start(UP_ECHO);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 9,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 1000);
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
	uint16_t lport = proxy_job(&p, 10, RULES("allow:deb.debian.org"), 1000);
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
	uint16_t lport = proxy_job(&p, 11, RULES("allow:deb.debian.org"), 1000);
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
	uint16_t lport = proxy_job(&p, 12, RULES("allow:allowed.com"), 1000);
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
	uint16_t lport = proxy_job(&p, 13, RULES("allow:example.org"), 1000);
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
	    RULES(rulef(0, "allow:rebind.example:%u", u->port)), 1000);
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
	    100000);
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

Test(proxy, budget_bytes_in)
{
	struct upstream *u = upstream_start(UP_FLOOD);
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 16,
	    RULES(rulef(0, "allow_address:127.0.0.1/32:%u", u->port)), 100);
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

Test(proxy, own_port_refused)
{
	struct proxy p = proxy_start();
	uint16_t lport = proxy_job(&p, 17,
	    RULES("allow_address:127.0.0.0/8:1-65535"), 1000);
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

	proxy_job(&p, 18, RULES("allow:example.org"), 1000);
	proxy_stop(&p); /* exit status 0, asserted there */
}
