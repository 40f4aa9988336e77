/*
 * check_egress.c: the egress checks of `stockade check` (check.h; issue
 * 25, docs/egress.md, docs/egress-jail.md): a job under a [network]
 * allow-list tries what the policy does not allow, through the proxy and
 * around it, with stockade-probe (probe_egress.c), and each check demands
 * both the refusal and its report in the result's network.refusals
 * (docs/results.md).
 *
 * Nothing leaves loopback: every policy names this check's own DNS
 * server on the host's 127.0.0.1 as its resolver ([network] resolver),
 * which answers every name with 127.0.0.1 (and names whose first label is
 * "linklocal" with 169.254.169.254, asked only of a proxy that has just
 * refused the loopback answer), and the addresses a job dials around the
 * proxy are routed to the job's own loopback by the jail.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "check_jail.h"

#define EG_ALLOWED "allowed.stockade.test"
#define EG_UNLISTED "unlisted.stockade.test"
#define EG_LOOP "loop.stockade.test"
#define EG_LINKLOCAL "linklocal.stockade.test"
#define EG_TLS "tls.stockade.test"
#define EG_OTHER_SNI "other.stockade.test"
/* RFC 5737 TEST-NET-1: the jail routes it to its own loopback. */
#define EG_DIRECT "192.0.2.1"
#define EG_NO_RESOLVER "192.0.2.53"

/* The check's DNS server: a UDP socket on the host's 127.0.0.1 and the
 * thread that answers on it until STOP. */
struct eg_dns {
	int fd;
	unsigned port;
	pthread_t th;
	atomic_bool stop;
};

/* The answer to the question of Q (N bytes, ending at AT, after its
 * type and class) into R: one A record for an A question, none for any
 * other (RFC 1035 4.1). Returns its length. */
static size_t
dns_answer(const uint8_t *q, size_t at, uint8_t *r)
{
	bool a = q[at - 3] == 1 && q[at - 4] == 0;
	bool ll = q[12] == 9 && memcmp(q + 13, "linklocal", 9) == 0;
	uint8_t ans[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0,
	    1};

	if (ll)
		memcpy(ans + 12, (const uint8_t[]){169, 254, 169, 254}, 4);
	memcpy(r, q, at);
	r[2] = 0x81, r[3] = 0x80; /* response, RD, RA, NOERROR */
	r[6] = 0, r[7] = a ? 1 : 0;
	r[8] = r[9] = r[10] = r[11] = 0;
	if (!a)
		return at;
	memcpy(r + at, ans, sizeof(ans));
	return at + sizeof(ans);
}

/* The DNS server's thread: answers each query until D->stop. */
static void *
dns_main(void *arg)
{
	struct eg_dns *d = arg;
	uint8_t q[512], r[600];
	struct sockaddr_storage from;
	struct pollfd p = {.fd = d->fd, .events = POLLIN};

	while (!atomic_load(&d->stop)) {
		socklen_t flen = sizeof(from);
		ssize_t n;
		size_t at = 12;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recvfrom(d->fd, q, sizeof(q), MSG_DONTWAIT,
		    (struct sockaddr *)&from, &flen);
		if (n < 12)
			continue;
		while (at < (size_t)n && q[at] != 0)
			at += (size_t)q[at] + 1;
		at += 5;
		if (at > (size_t)n)
			continue;
		sendto(d->fd, r, dns_answer(q, at, r), 0,
		    (struct sockaddr *)&from, flen);
	}
	return NULL;
}

/* A socket of TYPE bound to the host's 127.0.0.1 on a port the kernel
 * picks, into *PORT. Returns it, or -1 with errno set. */
static int
listen_lo(int type, unsigned *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	if (s < 0)
		return -1;
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0 ||
	    (type == SOCK_STREAM && listen(s, 8) < 0)) {
		int e = errno;

		close(s);
		errno = e;
		return -1;
	}
	*port = ntohs(a.sin_port);
	return s;
}

/* Starts D. Returns 0, or fails R and returns -1. */
static int
dns_start(struct eg_dns *d, struct check_result *r)
{
	memset(d, 0, sizeof(*d));
	atomic_init(&d->stop, false);
	d->fd = listen_lo(SOCK_DGRAM, &d->port);
	if (d->fd < 0) {
		check_fail(r, "cannot make a DNS server on 127.0.0.1: %s",
		    strerror(errno));
		return -1;
	}
	if (pthread_create(&d->th, NULL, dns_main, d) != 0) {
		check_fail(r, "cannot start the DNS server's thread");
		close(d->fd);
		return -1;
	}
	return 0;
}

static void
dns_stop(struct eg_dns *d)
{
	atomic_store(&d->stop, true);
	pthread_join(d->th, NULL);
	close(d->fd);
}

/* Runs the probe's egress ARGV in a job under [network] RULES (lines)
 * with D's server as its resolver, into J. True when the job ended ok
 * with a network object; otherwise R is failed. */
static bool
eg_job(struct check_ctx *c, struct check_result *r, struct check_job *j,
    const struct eg_dns *d, const char *rules, const char *const *argv)
{
	char policy[1024];
	struct pj s = {0};

	snprintf(policy, sizeof(policy),
	    "[network]\nresolver = 127.0.0.1:%u\n%s", d->port, rules);
	s.policy = policy;
	if (!jail_probe_ok(c, r, j, &s, argv))
		return false;
	if (json_object_get(j->result, "network") == NULL) {
		check_fail(r,
		    "the result of a job under a [network] allow-list has no "
		    "network object");
		return false;
	}
	return true;
}

/* The entry of the result's network.refusals for HOST, PORT and REASON,
 * or NULL. */
static json_t *
eg_refusal(const struct check_job *j, const char *host, unsigned port,
    const char *reason)
{
	json_t *list = json_object_get(json_object_get(j->result, "network"),
	    "refusals");
	size_t i;
	json_t *e;

	json_array_foreach(list, i, e)
	{
		const char *h = json_string_value(json_object_get(e, "host"));
		const char *why = json_string_value(
		    json_object_get(e, "reason"));

		if (h != NULL && why != NULL && strcmp(h, host) == 0 &&
		    strcmp(why, reason) == 0 &&
		    json_integer_value(json_object_get(e, "port")) ==
			(json_int_t)port)
			return e;
	}
	return NULL;
}

/* Whether refusal E (may be NULL) has the detail WANT. */
static bool
eg_detail_is(const json_t *e, const char *want)
{
	const char *d = json_string_value(json_object_get(e, "detail"));

	return d != NULL && strcmp(d, want) == 0;
}

/* The refusals of J as one short text, for an observation. */
static const char *
eg_refusals_text(const struct check_job *j, char *buf, size_t len)
{
	json_t *list = json_object_get(json_object_get(j->result, "network"),
	    "refusals");
	size_t i, at = 0;
	json_t *e;

	snprintf(buf, len, "none");
	json_array_foreach(list, i, e)
	{
		int n = snprintf(buf + at, len - at, "%s%s:%lld %s",
		    at ? ", " : "",
		    json_string_value(json_object_get(e, "host")),
		    (long long)json_integer_value(json_object_get(e, "port")),
		    json_string_value(json_object_get(e, "reason")));

		if (n < 0 || (size_t)n >= len - at)
			break;
		at += (size_t)n;
	}
	return buf;
}

/* The result's hint, "" when none. */
static const char *
eg_hint(const struct check_job *j)
{
	const char *h = json_string_value(json_object_get(j->result, "hint"));

	return h != NULL ? h : "";
}

/* egress.unlisted_host_refused: a CONNECT to a name no allow rule
 * matches is refused (403), reported as not_allowed, and the hint names
 * the host (docs/results.md, network). */
static void
eg_unlisted(struct check_ctx *c, struct check_result *r)
{
	struct check_job j = {0};
	struct eg_dns d;
	char v[64], seen[256];

	if (dns_start(&d, r) < 0)
		return;
	if (eg_job(c, r, &j, &d, "allow = " EG_ALLOWED "\n",
		ARGS("egress", "connect", EG_UNLISTED, "443")) &&
	    jail_val(r, &j, "connect." EG_UNLISTED ":443", v, sizeof(v))) {
		if (strcmp(v, "200") == 0)
			check_fail(r, "the proxy opened a tunnel to %s:443",
			    EG_UNLISTED);
		else if (eg_refusal(&j, EG_UNLISTED, 443, "not_allowed") ==
		    NULL)
			check_fail(r,
			    "CONNECT %s:443 answered %s, but network.refusals "
			    "has no not_allowed entry for it: %s",
			    EG_UNLISTED, v,
			    eg_refusals_text(&j, seen, sizeof(seen)));
		else if (strstr(eg_hint(&j), EG_UNLISTED) == NULL)
			check_fail(r, "the hint does not name %s: %s",
			    EG_UNLISTED, eg_hint(&j));
		else
			check_pass(r,
			    "CONNECT %s:443 answered %s; not_allowed in "
			    "network.refusals; the hint names the host",
			    EG_UNLISTED, v);
	}
	check_job_free(&j);
	dns_stop(&d);
}

/* One name of egress.private_address_behind_allowed_name: a CONNECT to
 * allowed NAME:443, which the check's DNS server answers with a private
 * address, is refused as private_address. True when it was. */
static bool
eg_private_one(struct check_ctx *c, struct check_result *r,
    const struct eg_dns *d, const char *name, const char *addr)
{
	struct check_job j = {0};
	char rules[256], key[128], v[64], seen[256];
	bool ok = false;

	snprintf(rules, sizeof(rules), "allow = %s\n", name);
	snprintf(key, sizeof(key), "connect.%s:443", name);
	if (eg_job(c, r, &j, d, rules,
		ARGS("egress", "connect", name, "443")) &&
	    jail_val(r, &j, key, v, sizeof(v))) {
		if (strcmp(v, "200") == 0)
			check_fail(r,
			    "the proxy opened a tunnel to %s:443, which "
			    "resolves to %s",
			    name, addr);
		else if (eg_refusal(&j, name, 443, "private_address") == NULL)
			check_fail(r,
			    "CONNECT %s:443 (resolving to %s) answered %s, "
			    "but network.refusals has no private_address "
			    "entry for it: %s",
			    name, addr, v,
			    eg_refusals_text(&j, seen, sizeof(seen)));
		else
			ok = true;
	}
	check_job_free(&j);
	return ok;
}

/* egress.private_address_behind_allowed_name: an allowed name that
 * resolves to 127.0.0.1, then one that resolves to 169.254.169.254 (a
 * cloud's metadata address), are refused as private_address: only an
 * allow_address opens such an address (docs/egress.md). The second is
 * asked only once the first was refused, so that no proxy that dials
 * private answers is ever sent off the host. */
static void
eg_private(struct check_ctx *c, struct check_result *r)
{
	struct eg_dns d;

	if (dns_start(&d, r) < 0)
		return;
	if (eg_private_one(c, r, &d, EG_LOOP, "127.0.0.1") &&
	    eg_private_one(c, r, &d, EG_LINKLOCAL, "169.254.169.254"))
		check_pass(r,
		    "%s (127.0.0.1) and %s (169.254.169.254), both allowed "
		    "by name: refused, private_address in network.refusals",
		    EG_LOOP, EG_LINKLOCAL);
	dns_stop(&d);
}

/* egress.direct_connect_reported: a TCP connect around the proxy to
 * 192.0.2.1:80 is refused at once (ECONNREFUSED from the jail's own
 * loopback, under 1 s, not a timeout) and reported as direct_connect,
 * tcp (docs/egress-jail.md). */
static void
eg_direct(struct check_ctx *c, struct check_result *r)
{
	struct check_job j = {0};
	struct eg_dns d;
	char v[64], ms[32], seen[256];
	json_t *e;

	if (dns_start(&d, r) < 0)
		return;
	if (eg_job(c, r, &j, &d, "allow = " EG_ALLOWED "\n",
		ARGS("egress", "direct", EG_DIRECT, "80")) &&
	    jail_val(r, &j, "direct." EG_DIRECT ":80", v, sizeof(v)) &&
	    jail_val(r, &j, "direct_ms." EG_DIRECT ":80", ms, sizeof(ms))) {
		e = eg_refusal(&j, EG_DIRECT, 80, "direct_connect");
		if (strcmp(v, "ECONNREFUSED") != 0 || atol(ms) >= 1000)
			check_fail(r,
			    "a connect to %s:80 gave %s after %s ms, not "
			    "ECONNREFUSED at once",
			    EG_DIRECT, v, ms);
		else if (!eg_detail_is(e, "tcp"))
			check_fail(r,
			    "a connect to %s:80 was refused, but "
			    "network.refusals has no direct_connect tcp entry "
			    "for it: %s",
			    EG_DIRECT,
			    eg_refusals_text(&j, seen, sizeof(seen)));
		else
			check_pass(r,
			    "connect to %s:80: ECONNREFUSED in %s ms; "
			    "direct_connect tcp in network.refusals",
			    EG_DIRECT, ms);
	}
	check_job_free(&j);
	dns_stop(&d);
}

/* The host's first resolver of /etc/resolv.conf that is not a loopback
 * address (a loopback one is the job's own loopback in the jail, not a
 * way out), canonical, into BUF; EG_NO_RESOLVER when there is none. */
static void
host_resolver(char *buf, size_t len)
{
	FILE *f = fopen("/etc/resolv.conf", "re");
	char line[256], addr[128];
	struct in6_addr a6;
	struct in_addr a4;

	snprintf(buf, len, "%s", EG_NO_RESOLVER);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, " nameserver %127s", addr) != 1)
			continue;
		if (inet_pton(AF_INET, addr, &a4) == 1 &&
		    (ntohl(a4.s_addr) >> 24) != 127) {
			inet_ntop(AF_INET, &a4, buf, (socklen_t)len);
			break;
		}
		if (inet_pton(AF_INET6, addr, &a6) == 1 &&
		    !IN6_IS_ADDR_LOOPBACK(&a6) && !IN6_IS_ADDR_V4MAPPED(&a6)) {
			inet_ntop(AF_INET6, &a6, buf, (socklen_t)len);
			break;
		}
	}
	if (f != NULL)
		fclose(f);
}

/* egress.jail_dns_refused: a DNS query from the job straight to the
 * host's resolver (port 53, UDP) gets no answer and is reported as
 * direct_connect, udp: names resolve only in the proxy. */
static void
eg_jail_dns(struct check_ctx *c, struct check_result *r)
{
	struct check_job j = {0};
	struct eg_dns d;
	char ns[INET6_ADDRSTRLEN], key[128], v[64], seen[256];
	json_t *e;

	host_resolver(ns, sizeof(ns));
	snprintf(key, sizeof(key), "udp.%s:53", ns);
	if (dns_start(&d, r) < 0)
		return;
	if (eg_job(c, r, &j, &d, "allow = " EG_ALLOWED "\n",
		ARGS("egress", "udp", ns, "53")) &&
	    jail_val(r, &j, key, v, sizeof(v))) {
		e = eg_refusal(&j, ns, 53, "direct_connect");
		if (strcmp(v, "answer") == 0)
			check_fail(r, "a DNS query to %s:53 was answered", ns);
		else if (!eg_detail_is(e, "udp"))
			check_fail(r,
			    "a DNS query to %s:53 got %s, but "
			    "network.refusals has no direct_connect udp entry "
			    "for it: %s",
			    ns, v, eg_refusals_text(&j, seen, sizeof(seen)));
		else
			check_pass(r,
			    "a DNS query to the host's resolver %s:53: %s, no "
			    "answer; direct_connect udp in network.refusals",
			    ns, v);
	}
	check_job_free(&j);
	dns_stop(&d);
}

/* What reached the check's upstream LFD: the bytes of the first
 * connection the proxy made to it, if any (-1: no connection). The job
 * has ended, so a connection the proxy made waits in the backlog: the
 * accept never blocks (a proxy that never dialled, as under a defect
 * that refuses the jail's TCP, left a blocking accept waiting forever). */
static long
upstream_bytes(int lfd)
{
	char buf[512];
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	int s = poll(&p, 1, 0) == 1
	    ? accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)
	    : -1;
	ssize_t n;

	if (s < 0)
		return -1;
	n = recv(s, buf, sizeof(buf), MSG_DONTWAIT);
	close(s);
	return n > 0 ? (long)n : 0;
}

/* The verdict of egress.sni_mismatch_refused on J (the probe's job),
 * with the upstream's share UP (upstream_bytes). */
static void
eg_sni_verdict(struct check_result *r, const struct check_job *j, unsigned port,
    long up)
{
	char key[128], v[64], hello[64], seen[256];
	json_t *e = eg_refusal(j, EG_TLS, port, "sni_mismatch");
	const char *detail = json_string_value(json_object_get(e, "detail"));

	snprintf(key, sizeof(key), "connect.%s:%u", EG_TLS, port);
	if (!jail_val(r, j, key, v, sizeof(v)))
		return;
	snprintf(key, sizeof(key), "hello.%s:%u", EG_TLS, port);
	if (strcmp(v, "200") != 0)
		check_fail(r,
		    "CONNECT %s:%u (allowed, resolving to an allow_address) "
		    "answered %s, not 200: %s",
		    EG_TLS, port, v, eg_refusals_text(j, seen, sizeof(seen)));
	else if (!jail_val(r, j, key, hello, sizeof(hello)))
		return;
	else if (up > 0 || strcmp(hello, "closed") != 0)
		check_fail(r,
		    "a ClientHello naming %s through the tunnel to %s: the "
		    "tunnel was %s, %ld bytes reached the server",
		    EG_OTHER_SNI, EG_TLS, hello, up);
	else if (detail == NULL || strstr(detail, EG_OTHER_SNI) == NULL)
		check_fail(r,
		    "the tunnel was closed, but network.refusals has no "
		    "sni_mismatch entry naming %s: %s",
		    EG_OTHER_SNI, eg_refusals_text(j, seen, sizeof(seen)));
	else
		check_pass(r,
		    "a ClientHello naming %s in a tunnel to %s: closed, no "
		    "byte relayed; sni_mismatch (%s) in network.refusals",
		    EG_OTHER_SNI, EG_TLS, detail);
}

/* egress.sni_mismatch_refused: in a tunnel to an allowed name (resolved
 * by the check's DNS server to 127.0.0.1, opened by allow_address to the
 * check's own server there), a ClientHello naming another host is
 * refused before one byte reaches the server, and reported as
 * sni_mismatch with the name sent. */
static void
eg_sni(struct check_ctx *c, struct check_result *r)
{
	struct check_job j = {0};
	struct eg_dns d;
	char rules[256], port_s[16];
	unsigned port;
	int lfd = listen_lo(SOCK_STREAM, &port);

	if (lfd < 0) {
		check_fail(r, "cannot listen on 127.0.0.1: %s",
		    strerror(errno));
		return;
	}
	snprintf(port_s, sizeof(port_s), "%u", port);
	snprintf(rules, sizeof(rules),
	    "allow = %s:%u\nallow_address = 127.0.0.1:%u\n", EG_TLS, port,
	    port);
	if (dns_start(&d, r) == 0) {
		if (eg_job(c, r, &j, &d, rules,
			ARGS("egress", "hello", EG_TLS, port_s, EG_OTHER_SNI)))
			eg_sni_verdict(r, &j, port, upstream_bytes(lfd));
		check_job_free(&j);
		dns_stop(&d);
	}
	close(lfd);
}

const struct check checks_egress[] = {
    {"egress.unlisted_host_refused", "egress",
	"CONNECT to a name not in [network] allow: refused, not_allowed in "
	"network.refusals, named in the hint",
	eg_unlisted},
    {"egress.private_address_behind_allowed_name", "egress",
	"allowed names resolving to 127.0.0.1 and 169.254.169.254: refused, "
	"private_address in network.refusals",
	eg_private},
    {"egress.direct_connect_reported", "egress",
	"connect to 192.0.2.1:80 around the proxy: ECONNREFUSED under 1 s, "
	"direct_connect tcp in network.refusals",
	eg_direct},
    {"egress.jail_dns_refused", "egress",
	"DNS query from the jail to the host's resolver: no answer, "
	"direct_connect udp port 53 in network.refusals",
	eg_jail_dns},
    {"egress.sni_mismatch_refused", "egress",
	"ClientHello naming another host in an allowed tunnel: closed, "
	"nothing relayed, sni_mismatch in network.refusals",
	eg_sni},
    {NULL, NULL, NULL, NULL},
};
