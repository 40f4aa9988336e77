/*
 * proxy_test.c: what test_proxy.c uses (proxy_test.h): loopback
 * servers, a loopback DNS server, the broker's side of the control
 * socket and a job's side of the listener.
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
#include "proto.h"
#include "wire.h"
#include "proxy_test.h"

/* ---- Loopback servers ----------------------------------------------------- */

int
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

/* UP_BULK: UP_BULK_LEN bytes of bulk_byte, then a half-close. */
static void
serve_bulk(int fd)
{
	static uint8_t chunk[65536];
	uint64_t at = 0;

	while (at < UP_BULK_LEN) {
		size_t len = sizeof(chunk);

		for (size_t i = 0; i < len; i++)
			chunk[i] = bulk_byte(at + i);
		if (send(fd, chunk, len, MSG_NOSIGNAL) != (ssize_t)len)
			return;
		at += len;
	}
	shutdown(fd, SHUT_WR);
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
	if (mode == UP_BULK)
		serve_bulk(fd);
	if (mode == UP_BANNER) {
		(void)!write(fd, "banner\n", 7);
		close(fd);
		return;
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

struct upstream *
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
		/* a name whose first label is "nx" does not exist */
		bool nx = q[12] == 2 && q[13] == 'n' && q[14] == 'x';
		bool a = q[at - 3] == 1 && !nx;
		memcpy(r, q, at);
		r[2] = 0x81; /* response, RD */
		r[3] = nx ? 0x83 : 0x80; /* RA, NXDOMAIN or NOERROR */
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

uint16_t
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

void
skip_or_fail(const char *why)
{
	const char *must = getenv("STOCKADE_MUST_WORK");

	if (must != NULL && strcmp(must, "1") == 0)
		cr_assert_fail("%s (not skipped: STOCKADE_MUST_WORK=1)", why);
	cr_skip_test("%s", why);
}

/* Receives one message within 5 s into BUF; its type, or -1 at EOF. */
int
recv_msg(int ctl, uint8_t *buf, size_t size, struct wire_msg *m)
{
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	int fds[WIRE_MAX_FDS];

	cr_assert_eq(poll(&p, 1, 5000), 1, "no message from the proxy");
	int n = wire_recv(ctl, buf, size, fds, WIRE_MAX_FDS, m);

	cr_assert_geq(n, 0, "wire_recv: %s", strerror(-n));
	return n == 0 ? -1 : m->type;
}

/* The proxy runs with no_new_privs and a seccomp filter (proc(5)). */
static void
expect_confined(pid_t pid)
{
	char path[64], status[4096];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	n = read(fd, status, sizeof(status) - 1);
	close(fd);
	cr_assert_gt(n, 0);
	status[n] = '\0';
	cr_assert(strstr(status, "NoNewPrivs:\t1\n") != NULL, "%s", status);
	cr_assert(strstr(status, "Seccomp:\t2\n") != NULL, "%s", status);
	cr_assert(strstr(status, "CapEff:\t0000000000000000\n") != NULL, "%s",
	    status);
}

struct proxy
proxy_start(void)
{
	return proxy_start_ports(NULL);
}

struct proxy
proxy_start_ports(const char *ports)
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
		if (ports != NULL)
			execl(path, "stockade-proxy", "--fd", fdtext, "--dns",
			    dns, "--connect-ports", ports, (char *)NULL);
		else
			execl(path, "stockade-proxy", "--fd", fdtext, "--dns",
			    dns, (char *)NULL);
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
	expect_confined(p.pid);
	cr_assert_eq(m.body_len, 4);
	cr_assert_geq(m.body[0], 1, "Landlock ABI %u", m.body[0]);
	return p;
}

uint16_t
proxy_job(struct proxy *p, uint64_t id, const char *const *rules, size_t n,
    uint64_t max_in, int pfd)
{
	struct egress_job caps = {.max_bytes_out = 1 << 20,
	    .max_bytes_in = max_in,
	    .max_connections = 100,
	    .max_concurrent = 10};

	return proxy_job_caps(p, id, rules, n, &caps, pfd);
}

uint16_t
proxy_job_caps(struct proxy *p, uint64_t id, const char *const *rules, size_t n,
    const struct egress_job *caps, int pfd)
{
	struct egress_job job = {.job_id = id,
	    .max_bytes_out = caps->max_bytes_out,
	    .max_bytes_in = caps->max_bytes_in,
	    .max_connections = caps->max_connections,
	    .max_concurrent = caps->max_concurrent};
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
	int fds[2] = {lfd, pfd};
	uint32_t roles = WIRE_ROLE_BIT(0) | (pfd >= 0 ? WIRE_ROLE_BIT(1) : 0);

	cr_assert_eq(wire_send(p->ctl, msg, WIRE_HEADER_SIZE + (size_t)len,
			 WIRE_PROXY_JOB, roles, fds),
	    0);
	close(lfd);
	egress_job_clear(&job);
	return port;
}

void
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

void
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

int
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

void
send_all(int fd, const void *data, size_t len)
{
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
}

/* Reads exactly LEN bytes into BUF. */
void
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
size_t
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

void
expect_established(int fd)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	char got[sizeof(ok)] = "";

	read_n(fd, got, sizeof(ok) - 1);
	cr_assert_str_eq(got, ok);
}

int
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

static char rule_buf[8][80];

const char *
rulef(int i, const char *fmt, unsigned port)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(rule_buf[i], sizeof(rule_buf[i]), fmt, port);
#pragma GCC diagnostic pop
	return rule_buf[i];
}

void
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
