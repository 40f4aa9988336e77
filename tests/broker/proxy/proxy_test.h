/*
 * proxy_test.h: the helpers of test_proxy.c (proxy_test.c). Every one
 * asserts (Criterion) rather than return an error.
 */
#ifndef STOCKADE_PROXY_TEST_H
#define STOCKADE_PROXY_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress_ctl.h"
#include "proto.h"
#include "wire.h"

/* An upstream server on 127.0.0.1: UP_ECHO echoes, UP_HTTP answers a
 * request head with "200 OK" and "hello", UP_FLOOD sends 10000 bytes at
 * once, UP_BULK sends UP_BULK_LEN bytes of bulk_byte(0..) then
 * half-closes, UP_BANNER sends "banner\n" and closes before the client
 * says anything (a server-speaks-first protocol). One connection at a time, in a thread, until the test
 * ends. */
enum up_mode { UP_ECHO, UP_HTTP, UP_FLOOD, UP_BULK, UP_BANNER };

#define UP_BULK_LEN (32u << 20)

/* Byte I of UP_BULK's stream: no period of a page or a pipe's size. */
static inline uint8_t
bulk_byte(uint64_t i)
{
	return (uint8_t)(i * 7 + (i / 4093) * 13);
}

struct upstream {
	int lfd;
	uint16_t port;
	enum up_mode mode;
};

struct upstream *upstream_start(enum up_mode mode);

/* A socket of TYPE (SOCK_STREAM: listening) bound to 127.0.0.1:0; its
 * port in *PORT. */
int listen_lo(int type, uint16_t *port);

/* A DNS server on 127.0.0.1 that answers every A question 127.0.0.1
 * and any other with no record, but NXDOMAIN for a name whose first
 * label is "nx"; its port. */
uint16_t dns_start(void);

/* A running stockade-proxy (STOCKADE_PROXY) and the control socket. */
struct proxy {
	pid_t pid;
	int ctl;
};

/* Skips the test, or fails it under STOCKADE_MUST_WORK=1. */
void skip_or_fail(const char *why);
/* Receives one message within 5 s into BUF: its type, -1 at EOF. */
int recv_msg(int ctl, uint8_t *buf, size_t size, struct wire_msg *m);
/* Starts the proxy with --dns at a dns_start server; asserts READY (a
 * proxy refusing for want of Landlock: skip_or_fail). */
struct proxy proxy_start(void);
/* The same with --connect-ports PORTS (NULL: none). */
struct proxy proxy_start_ports(const char *ports);
/* Hands job ID with RULES ("allow:x", "allow_address:x", "deny:x", N of
 * them) and MAX_IN; PFD, when not -1, as its packet socket. Returns the
 * port of the job's listener (127.0.0.1). */
uint16_t proxy_job(struct proxy *p, uint64_t id, const char *const *rules,
    size_t n, uint64_t max_in, int pfd);
/* The same with the caps of CAPS (its rules, id and port unused). */
uint16_t proxy_job_caps(struct proxy *p, uint64_t id, const char *const *rules,
    size_t n, const struct egress_job *caps, int pfd);
/* Ends job ID and decodes its report into REP. */
void proxy_end(struct proxy *p, uint64_t id, struct egress_report *rep);
/* Closes the control socket; asserts the proxy exits 0. */
void proxy_stop(struct proxy *p);

/* A job's side: a connection to 127.0.0.1:PORT with a 5 s read timeout. */
int dial(uint16_t port);
void send_all(int fd, const void *data, size_t len);
/* Reads exactly LEN bytes. */
void read_n(int fd, void *buf, size_t len);
/* Reads to the end (at most SIZE - 1 bytes, NUL-terminated): the count. */
size_t read_all(int fd, char *buf, size_t size);
/* Reads "HTTP/1.1 200 Connection established" and its empty line. */
void expect_established(int fd);
/* Connects to LPORT and sends "CONNECT HOST:PORT". */
int connect_req(uint16_t lport, const char *host, uint16_t port);
/* FMT with PORT into rule buffer I (0..7). */
const char *rulef(int i, const char *fmt, unsigned port)
    __attribute__((format(printf, 2, 0)));
/* REP has one refusal, of HOST for REASON (with DETAIL unless NULL),
 * and no connection. */
void expect_refusal(const struct egress_report *rep, const char *host,
    enum egress_reason reason, const char *detail);

/* RULES("allow:a", "deny:b"): the list and its count, for proxy_job. */
#define RULES(...)                          \
	(const char *const[]){__VA_ARGS__}, \
	    sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *)

#endif
