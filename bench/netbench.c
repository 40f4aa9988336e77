/*
 * netbench.c: the pieces of bench/egress.py (issue 25's bench targets;
 * docs/benchmarks.md, "Egress through the proxy"). Three commands:
 *
 *   netbench serve ADDR MIB
 *	An HTTP/1.1 server on ADDR (an IPv4 address, port chosen by the
 *	kernel, printed on stdout as one line): GET /big answers MIB MiB of
 *	zeros from a memfd with sendfile(2), any other path one byte;
 *	"Connection: close" on every answer, one connection at a time. It
 *	runs until killed.
 *   netbench proxy PROXY RULE
 *	Starts the stockade-proxy program PROXY as the broker does (a
 *	SOCK_SEQPACKET socketpair, "--fd N --connect-ports PORT", PORT the
 *	rule's), waits for WIRE_PROXY_READY,
 *	hands it one job (WIRE_PROXY_JOB) allowing RULE ("127.0.0.2/32:PORT",
 *	an allow_address rule) with caps far above what the bench moves, and
 *	a listener on 127.0.0.1 standing for the jail's; prints that
 *	listener's port and the proxy's pid on one line, then waits for end
 *	of input, ends the job (WIRE_PROXY_END) and prints the proxy's
 *	report as one JSON line (connections, bytes_in, bytes_out,
 *	refusals).
 *   netbench setup N HOST PORT [PROXYPORT]
 *	N GETs of /one one after another, each on a new connection to
 *	HOST:PORT, or through the proxy on 127.0.0.1:PROXYPORT (absolute
 *	form, RFC 9112 section 3.2.2); each timed from socket(2) to the end
 *	of the answer (the server closes). Prints one JSON line: n,
 *	median_us, p95_us, mean_us.
 *
 * Loopback only, as the bench needs nothing else. Exit status 0, or 1 on
 * any failure (a message on stderr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "egress_ctl.h"
#include "egress_rules.h"
#include "wire.h"

static void
die(const char *what)
{
	fprintf(stderr, "netbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* A listening TCP socket on ADDR:0; its port in *PORT. */
static int
listen_on(const char *addr, uint16_t *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		die("socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		die("bind");
	*port = ntohs(sa.sin_port);
	return fd;
}

/* ---- serve ---------------------------------------------------------------- */

/* Reads a request head from FD; true when it asked for /big. */
static bool
read_head(int fd, bool *big)
{
	char buf[4096];
	size_t len = 0;

	while (len < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL) {
			*big = strstr(buf, "/big ") != NULL;
			return true;
		}
	}
	return false;
}

static void
serve_one(int fd, int memfd, off_t size)
{
	char head[160];
	bool big = false;
	off_t off = 0, want;

	if (!read_head(fd, &big))
		return;
	want = big ? size : 1;
	int n = snprintf(head, sizeof(head),
	    "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\n"
	    "Connection: close\r\n\r\n",
	    (long long)want);

	if (write(fd, head, (size_t)n) != n)
		return;
	while (off < want)
		if (sendfile(fd, memfd, &off, (size_t)(want - off)) <= 0)
			return;
}

static _Noreturn void
cmd_serve(const char *addr, long mib)
{
	uint16_t port;
	int lfd = listen_on(addr, &port);
	int memfd = memfd_create("netbench", MFD_CLOEXEC);
	off_t size = (off_t)mib << 20;

	if (memfd < 0 || ftruncate(memfd, size) != 0)
		die("memfd");
	printf("%u\n", (unsigned)port);
	fflush(stdout);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		serve_one(fd, memfd, size);
		shutdown(fd, SHUT_WR);
		close(fd);
	}
}

/* ---- proxy ---------------------------------------------------------------- */

/* Receives one message from CTL into BUF (SIZE bytes) within 10 s; its
 * type, or -1. */
static int
recv_msg(int ctl, uint8_t *buf, size_t size, struct wire_msg *m)
{
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	int fds[WIRE_MAX_FDS];

	if (poll(&p, 1, 10000) != 1)
		return -1;
	int n = wire_recv(ctl, buf, size, fds, WIRE_MAX_FDS, m);

	return n <= 0 ? -1 : (int)m->type;
}

/* Starts PATH on a new socketpair, TCP connect confined to PORTS (as
 * the broker does: the policy's ports); its end in *CTL, the pid
 * returned. */
static pid_t
proxy_start(const char *path, const char *ports, int *ctl)
{
	static uint8_t buf[WIRE_HEADER_SIZE + 1024];
	struct wire_msg m;
	char fdtext[16];
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair");
	snprintf(fdtext, sizeof(fdtext), "%d", sv[1]);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		fcntl(sv[1], F_SETFD, 0);
		execl(path, "stockade-proxy", "--fd", fdtext, "--connect-ports",
		    ports, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	*ctl = sv[0];
	if (recv_msg(*ctl, buf, sizeof(buf), &m) != WIRE_PROXY_READY) {
		fprintf(stderr, "netbench: the proxy is not ready\n");
		exit(1);
	}
	return pid;
}

/* Hands the proxy job 1 allowing RULE; returns the listener's port. */
static uint16_t
proxy_job(int ctl, const char *rule)
{
	static uint8_t msg[WIRE_HEADER_SIZE + 65536];
	struct egress_job job = {.job_id = 1,
	    .max_bytes_out = UINT64_C(1) << 40,
	    .max_bytes_in = UINT64_C(1) << 40,
	    .max_connections = 1000000,
	    .max_concurrent = 16};
	struct egress_rule r;
	uint16_t port;
	int lfd = listen_on("127.0.0.1", &port);

	if (egress_rule_parse(EGRESS_RULE_ALLOW_ADDRESS, rule, &r) != 0 ||
	    egress_rules_add(&job.rules, &r) != 0) {
		fprintf(stderr, "netbench: bad rule %s\n", rule);
		exit(1);
	}
	job.port = port;
	long len = egress_job_encode(&job, msg + WIRE_HEADER_SIZE, 65536);

	if (len < 0 ||
	    wire_send(ctl, msg, WIRE_HEADER_SIZE + (size_t)len, WIRE_PROXY_JOB,
		WIRE_ROLE_BIT(0), &lfd) != 0)
		die("WIRE_PROXY_JOB");
	close(lfd);
	egress_job_clear(&job);
	return port;
}

/* Ends job 1 and prints its report. */
static void
proxy_end(int ctl)
{
	static uint8_t msg[WIRE_HEADER_SIZE + EGRESS_REPORT_WIRE_MAX];
	static struct egress_report rep;
	struct wbuf w;
	struct wire_msg m;

	wbuf_init(&w, msg + WIRE_HEADER_SIZE, 8);
	wbuf_put_u64(&w, 1);
	if (wire_send(ctl, msg, WIRE_HEADER_SIZE + 8, WIRE_PROXY_END, 0,
		NULL) != 0 ||
	    recv_msg(ctl, msg, sizeof(msg), &m) != WIRE_PROXY_REPORT ||
	    egress_report_decode(m.body, m.body_len, &rep) != 0) {
		fprintf(stderr, "netbench: no report from the proxy\n");
		exit(1);
	}
	printf("{\"connections\": %llu, \"bytes_in\": %llu, "
	       "\"bytes_out\": %llu, \"refusals\": %llu}\n",
	    (unsigned long long)rep.connections,
	    (unsigned long long)rep.bytes_in, (unsigned long long)rep.bytes_out,
	    (unsigned long long)rep.refusals);
}

static int
cmd_proxy(const char *path, const char *rule)
{
	int ctl, status;
	char c;
	const char *colon = strrchr(rule, ':');
	pid_t pid = proxy_start(path, colon != NULL ? colon + 1 : "80", &ctl);

	printf("%u %d\n", (unsigned)proxy_job(ctl, rule), (int)pid);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	proxy_end(ctl);
	close(ctl);
	if (waitpid(pid, &status, 0) != pid || status != 0) {
		fprintf(stderr, "netbench: the proxy ended with %#x\n", status);
		return 1;
	}
	return 0;
}

/* ---- setup ---------------------------------------------------------------- */

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One GET of /one on a new connection to 127.0.0.1:CPORT with request
 * REQ; its time in microseconds. */
static double
one_get(const char *caddr, uint16_t cport, const char *req)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
	    .sin_port = htons(cport)};
	char buf[512];
	ssize_t n;
	double t0 = now_us();
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;

	inet_pton(AF_INET, caddr, &sa.sin_addr);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		die("connect");
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		die("write");
	size_t got = 0;

	while ((n = read(fd, buf + (got > 0 ? 12 : 0), sizeof(buf) - 12)) > 0)
		got += (size_t)n; /* the first 12 bytes stay */
	if (n < 0 || got < 12 || memcmp(buf, "HTTP/1.1 200", 12) != 0) {
		fprintf(stderr, "netbench: bad answer (%zu bytes)\n", got);
		exit(1);
	}
	close(fd);
	return now_us() - t0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
cmd_setup(long n, const char *host, const char *port, const char *pport)
{
	char req[256];
	double *t = calloc((size_t)n, sizeof(*t)), sum = 0;
	const char *caddr = pport != NULL ? "127.0.0.1" : host;
	uint16_t cport = (uint16_t)atoi(pport != NULL ? pport : port);

	if (t == NULL)
		die("calloc");
	if (pport != NULL)
		snprintf(req, sizeof(req),
		    "GET http://%s:%s/one HTTP/1.1\r\nHost: %s:%s\r\n"
		    "Connection: close\r\n\r\n",
		    host, port, host, port);
	else
		snprintf(req, sizeof(req),
		    "GET /one HTTP/1.1\r\nHost: %s:%s\r\n"
		    "Connection: close\r\n\r\n",
		    host, port);
	for (long i = 0; i < n; i++) {
		t[i] = one_get(caddr, cport, req);
		sum += t[i];
	}
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("{\"n\": %ld, \"median_us\": %.1f, \"p95_us\": %.1f, "
	       "\"mean_us\": %.1f}\n",
	    n, t[n / 2], t[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1],
	    sum / (double)n);
	free(t);
	return 0;
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && strcmp(argv[1], "serve") == 0)
		cmd_serve(argv[2], atol(argv[3]));
	if (argc == 4 && strcmp(argv[1], "proxy") == 0)
		return cmd_proxy(argv[2], argv[3]);
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "setup") == 0 &&
	    atol(argv[2]) > 0)
		return cmd_setup(atol(argv[2]), argv[3], argv[4],
		    argc == 6 ? argv[5] : NULL);
	fprintf(stderr,
	    "usage: netbench serve ADDR MIB | proxy PROXY RULE | "
	    "setup N HOST PORT [PROXYPORT]\n");
	return 2;
}
