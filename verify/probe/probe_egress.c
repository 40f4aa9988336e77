/*
 * probe_egress.c: the probe commands of the egress checks (probe.h;
 * verify/check/check_egress.c): requests to the jail's egress proxy at
 * 127.0.0.1:3128 (docs/egress-jail.md) and attempts around it, each
 * printed as one "KEY=value" line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe.h"

#define PROXY_PORT 3128
#define WAIT_MS 3000

/* ADDR (IPv4 or IPv6 text) and PORT into *SA. Returns its length, or 0
 * for an address inet_pton(3) does not read. */
static socklen_t
sockaddr_of(const char *addr, unsigned port, struct sockaddr_storage *sa)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		return sizeof(*s4);
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		return sizeof(*s6);
	}
	return 0;
}

/* Waits up to WAIT_MS for FD to be readable: 1, 0 on timeout. */
static int
wait_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, WAIT_MS) > 0 ? 1 : 0;
}

/* A TCP connection to the proxy with "CONNECT HOST:PORT" sent and its
 * answer's status line read. Returns the socket, with the status code
 * (or the errno name) in STATUS; -1 when the tunnel is not open. */
static int
proxy_connect(const char *host, const char *port, char *status, size_t len)
{
	struct sockaddr_storage sa;
	socklen_t sl = sockaddr_of("127.0.0.1", PROXY_PORT, &sa);
	char req[600], ans[1024];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ssize_t n = 0;

	snprintf(req, sizeof(req),
	    "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port, host,
	    port);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sl) < 0 ||
	    write(s, req, strlen(req)) != (ssize_t)strlen(req)) {
		snprintf(status, len, "%s", probe_errname(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	if (wait_readable(s))
		n = read(s, ans, sizeof(ans) - 1);
	ans[n > 0 ? n : 0] = '\0';
	if (n <= 0 || strncmp(ans, "HTTP/1.", 7) != 0 || strlen(ans) < 12) {
		snprintf(status, len, "%s",
		    n < 0	 ? probe_errname(errno)
			: n == 0 ? "no_answer"
				 : "not_http");
		close(s);
		return -1;
	}
	snprintf(status, len, "%.3s", ans + 9);
	if (strcmp(status, "200") != 0) {
		close(s);
		return -1;
	}
	return s;
}

/* A big-endian u16 at P. */
static void
put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* A minimal TLS 1.3 ClientHello in one record whose only extension is
 * server_name SNI (RFC 8446 4.1.2, RFC 6066 3), into OUT (at least 64 +
 * strlen(SNI) bytes). Returns its length. */
static size_t
client_hello(const char *sni, uint8_t *out)
{
	size_t sl = strlen(sni), ext = 9 + sl;
	size_t body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + ext, at = 0;

	out[at++] = 0x16; /* handshake record, legacy version 3.1 */
	put16(out + 1, 0x0301);
	put16(out + 3, 4 + body);
	at = 5;
	out[at++] = 0x01; /* client_hello */
	out[at++] = (uint8_t)(body >> 16);
	put16(out + at, body & 0xffff);
	at += 2;
	put16(out + at, 0x0303);
	memset(out + at + 2, 0x5a, 32); /* random */
	at += 2 + 32;
	out[at++] = 0; /* legacy_session_id */
	put16(out + at, 2);
	put16(out + at + 2, 0x1301); /* TLS_AES_128_GCM_SHA256 */
	at += 4;
	out[at++] = 1;
	out[at++] = 0; /* null compression */
	put16(out + at, ext);
	put16(out + at + 2, 0); /* server_name */
	put16(out + at + 4, 5 + sl);
	put16(out + at + 6, 3 + sl);
	out[at + 8] = 0; /* host_name */
	put16(out + at + 9, sl);
	memcpy(out + at + 11, sni, sl);
	return at + 11 + sl;
}

/* After a ClientHello: what the tunnel did within WAIT_MS. "closed" (end
 * of file or a reset), "data" (bytes came back), "open". */
static const char *
after_hello(int s)
{
	char buf[512];
	ssize_t n;

	if (!wait_readable(s))
		return "open";
	n = read(s, buf, sizeof(buf));
	return n > 0 ? "data" : "closed";
}

/* "connect HOST PORT": connect.HOST:PORT=status code of the CONNECT.
 * "hello HOST PORT SNI": the same, then a ClientHello naming SNI through
 * the tunnel: hello.HOST:PORT=closed, data or open. */
static void
op_connect(const char *host, const char *port, const char *sni)
{
	char key[300], status[32];
	uint8_t hello[400];
	int s = proxy_connect(host, port, status, sizeof(status));

	snprintf(key, sizeof(key), "connect.%s:%s", host, port);
	probe_kv(key, "%s", status);
	if (sni == NULL || s < 0) {
		if (s >= 0)
			close(s);
		return;
	}
	snprintf(key, sizeof(key), "hello.%s:%s", host, port);
	size_t n = client_hello(sni, hello);
	if (write(s, hello, n) != (ssize_t)n)
		probe_kv(key, "%s", probe_errname(errno));
	else
		probe_kv(key, "%s", after_hello(s));
	close(s);
}

/* "direct ADDR PORT": a TCP connect straight to ADDR:PORT, around the
 * proxy: direct.ADDR:PORT=errno name, direct_ms.ADDR:PORT=its time. */
static void
op_direct(const char *addr, unsigned port)
{
	struct sockaddr_storage sa;
	socklen_t sl = sockaddr_of(addr, port, &sa);
	char key[300];
	long long t0 = probe_now_ms();
	int s = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0;
	struct timeval tv = {5, 0};

	if (s >= 0)
		setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (sl == 0)
		e = EINVAL;
	else if (s < 0 || connect(s, (struct sockaddr *)&sa, sl) < 0)
		e = errno;
	snprintf(key, sizeof(key), "direct.%s:%u", addr, port);
	probe_errno(key, e);
	snprintf(key, sizeof(key), "direct_ms.%s:%u", addr, port);
	probe_kv(key, "%lld", probe_now_ms() - t0);
	if (s >= 0)
		close(s);
}

/* "udp ADDR PORT": a DNS query (example.org, A; RFC 1035 4.1) from a
 * connected UDP socket to ADDR:PORT: udp.ADDR:PORT=answer, timeout, or
 * the errno name of the send or the receive (ECONNREFUSED: an ICMP port
 * unreachable came back). */
static void
op_udp(const char *addr, unsigned port)
{
	static const uint8_t q[] = {0x53, 0x4b, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7,
	    'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0, 0, 1, 0, 1};
	struct sockaddr_storage sa;
	socklen_t sl = sockaddr_of(addr, port, &sa);
	char key[300], buf[512];
	int s = socket(sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	const char *what = "timeout";

	snprintf(key, sizeof(key), "udp.%s:%u", addr, port);
	if (sl == 0 || s < 0 || connect(s, (struct sockaddr *)&sa, sl) < 0 ||
	    send(s, q, sizeof(q), 0) < 0)
		what = probe_errname(sl == 0 ? EINVAL : errno);
	else if (wait_readable(s))
		what = recv(s, buf, sizeof(buf), 0) >= 0 ? "answer"
							 : probe_errname(errno);
	probe_kv(key, "%s", what);
	if (s >= 0)
		close(s);
}

/* egress OP ARGS... [OP ARGS...]: the operations in order (above). */
static int
cmd_egress(int argc, char **argv)
{
	for (int i = 1; i < argc;) {
		const char *op = argv[i];

		if (strcmp(op, "connect") == 0 && i + 2 < argc) {
			op_connect(argv[i + 1], argv[i + 2], NULL);
			i += 3;
		} else if (strcmp(op, "hello") == 0 && i + 3 < argc) {
			op_connect(argv[i + 1], argv[i + 2], argv[i + 3]);
			i += 4;
		} else if (strcmp(op, "direct") == 0 && i + 2 < argc) {
			op_direct(argv[i + 1], (unsigned)atoi(argv[i + 2]));
			i += 3;
		} else if (strcmp(op, "udp") == 0 && i + 2 < argc) {
			op_udp(argv[i + 1], (unsigned)atoi(argv[i + 2]));
			i += 3;
		} else {
			fprintf(stderr,
			    "stockade-probe egress: bad operation "
			    "%s\n",
			    op);
			return 2;
		}
	}
	return 0;
}

const struct probe_cmd probe_egress_cmds[] = {
    {"egress",
	"OP...: connect HOST PORT (connect.HOST:PORT=CONNECT status), hello "
	"HOST PORT SNI (and hello.HOST:PORT=closed|data|open after a "
	"ClientHello naming SNI), direct ADDR PORT (direct.ADDR:PORT=errno, "
	"direct_ms.), udp ADDR PORT (udp.ADDR:PORT=answer|timeout|errno)",
	cmd_egress},
    {NULL, NULL, NULL},
};
