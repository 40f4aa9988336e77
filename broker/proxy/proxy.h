/*
 * proxy.h: the inside of stockade-proxy, the egress proxy of a session
 * (issue 25; docs/egress.md; the messages are shared/egress_ctl.h's).
 * One thread, one epoll, non-blocking sockets, CLOCK_MONOTONIC
 * deadlines. Memory is bounded: PROXY_MAX_JOBS jobs, PROXY_MAX_CONNS
 * connections in all, two PROXY_BUF buffers each, and for at most
 * PROXY_MAX_PIPES relaying connections at once one pipe, two more
 * descriptors (the upstream's bytes go to the client through it with
 * splice(2), no copy through the proxy; the others read and send). The
 * descriptors stay under 1024 (2 a connection, 2 a pipe, 2 a job, a
 * few more). A pipe holds page references in the kernel, at most its
 * size: PROXY_PIPE for PROXY_BIG_PIPES connections at most,
 * PROXY_PIPE_DEF for the others (19 MiB, 4864 pages, in all: under the
 * 16384 pages of a user's pipe-user-pages-soft, pipe(7), so the user's
 * other pipes keep theirs; over it, F_SETPIPE_SZ fails and the pipe
 * keeps its default size).
 */
#ifndef STOCKADE_PROXY_H
#define STOCKADE_PROXY_H

#include <ares.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress_ctl.h"
#include "egress_parse.h"

#define PROXY_MAX_JOBS 64u /* jobs active at once */
#define PROXY_MAX_CONNS 256u /* connections open at once, all jobs */
#define PROXY_BUF (64u * 1024u) /* one direction's buffer, bytes */
#define PROXY_PIPE (1024u * 1024u) /* a big relay pipe's size, bytes */
#define PROXY_PIPE_DEF (64u * 1024u) /* the others' (pipe(7)'s default) */
#define PROXY_BIG_PIPES 16u /* big relay pipes at once, all jobs */
#define PROXY_MAX_PIPES 64u /* relay pipes at once, all jobs */
#define PROXY_HEAD_MS 10000 /* a request head must be in within this */
#define PROXY_DIAL_MS 10000 /* resolving and connecting, in all */
#define PROXY_IDLE_MS 300000 /* a connection with no byte either way */
/* Connections a job may hold beyond its max_concurrent: those still
 * sending their request (so that one job cannot take every slot). Past
 * them its listener is not read: new ones wait in the backlog. */
#define PROXY_JOB_PENDING 16u

/* What an epoll event's data names (its top byte). */
enum proxy_ev {
	PEV_CTL = 1, /* the control socket */
	PEV_LISTEN, /* a job's listener; low bits: the job's slot */
	PEV_PACKET, /* a job's packet socket */
	PEV_CLIENT, /* a connection's client side; the conn's slot */
	PEV_UPSTREAM, /* its upstream side */
	PEV_ARES, /* a c-ares socket; low bits: the fd */
};

struct proxy_job {
	bool used;
	struct egress_job spec; /* the broker's; owns its rules */
	int lfd, pfd; /* listener, packet socket (-1: none) */
	struct egress_addr self; /* the listener's address */
	struct egress_report rep;
	uint64_t bytes_out, bytes_in; /* so far, every connection */
	uint32_t made; /* connections counted against max_connections */
	uint32_t open; /* connections open now */
	uint32_t slots; /* connection slots it holds, in any state */
	bool paused; /* its listener is not watched: no slot for it */
};

enum conn_state {
	CS_FREE = 0,
	CS_HEAD, /* reading the request (HTTP head or SOCKS) */
	CS_RESOLVE, /* a c-ares query is out */
	CS_CONNECT, /* the upstream connect is in progress */
	CS_HELLO, /* tunnel: holding client bytes until the TLS check */
	CS_RELAY, /* relaying both ways */
	CS_CLOSING, /* flushing a last answer to the client */
};

enum conn_kind {
	CK_NONE = 0,
	CK_CONNECT, /* HTTP CONNECT: a tunnel */
	CK_SOCKS, /* SOCKS5 CONNECT: a tunnel */
	CK_FORWARD, /* an absolute-form HTTP request */
};

struct proxy_conn {
	enum conn_state state;
	uint32_t gen; /* bumped on every reuse: stale callbacks tell */
	unsigned job; /* the job's slot */
	int cfd, ufd; /* client and upstream sockets (-1: none) */
	enum conn_kind kind;
	bool http, socks; /* the protocol the client speaks */
	bool socks_greeted; /* SOCKS5: the method reply is queued */
	uint8_t socks_rep; /* the reply to a refused request (0: not
			    * allowed) */
	bool connected; /* upstream connected: reported at close */
	bool host_is_addr; /* the request named an address */
	bool counted; /* counts in the job's made and open */
	char host[EGRESS_HOST_BUF]; /* canonical */
	uint16_t port;
	char addr_text[INET6_ADDRSTRLEN]; /* the address dialled */
	struct sockaddr_storage addr;
	socklen_t addrlen;
	uint64_t body_left; /* CK_FORWARD: request body still to relay */
	uint64_t bytes_out, bytes_in;
	int64_t deadline; /* ms, CLOCK_MONOTONIC */
	bool cli_eof, up_eof; /* a side read its end */
	bool up_shut, cli_shut; /* shutdown(SHUT_WR) done to that side */
	uint8_t *toup; /* client to upstream bytes */
	size_t toup_len;
	uint8_t *tocli; /* upstream (or the proxy) to client bytes */
	size_t tocli_len;
	int pipe[2]; /* CS_RELAY: upstream to client by splice (-1: none) */
	size_t piped; /* bytes in pipe, counted in bytes_in already */
	bool pipe_full; /* the pipe took no more: wait for the client */
	bool no_pipe; /* pipe2 failed: read and send, as before */
	bool big_pipe; /* pipe is one of the PROXY_BIG_PIPES */
	size_t pipe_cap; /* pipe's size, bytes */
	uint32_t ev_c, ev_u; /* the epoll events registered */
};

struct proxy {
	int ctl; /* the control socket */
	int ep; /* epoll */
	ares_channel ares;
	struct egress_addrs local; /* the host's own addresses */
	struct proxy_job job[PROXY_MAX_JOBS];
	struct proxy_conn conn[PROXY_MAX_CONNS];
	bool done; /* the control socket reached its end */
	unsigned pipes; /* connections with a pipe now */
	unsigned big_pipes; /* of them, with a big pipe */
};

/* The one proxy of this process (c-ares callbacks find it here). */
struct proxy *proxy_self(void);
/* The time now, ms, CLOCK_MONOTONIC. */
int64_t proxy_now(void);
/* epoll data for (KIND, SLOT) and back. */
uint64_t proxy_ev(enum proxy_ev kind, uint32_t slot);

/* Most ports --connect-ports may name (a longer list is a usage error:
 * the broker then passes none, and connect is not confined by port). */
#define PROXY_MAX_CONNECT_PORTS 4096u

/* proxy_confine.c: no_new_privs, no capability, Landlock (no file, no
 * TCP bind; with PORTS not NULL, from ABI 4, TCP connect to the NPORTS
 * PORTS alone), the seccomp allow-list. Returns the Landlock ABI (> 0)
 * or a negative errno with ERR set. */
int proxy_confine(const uint16_t *ports, size_t nports, char *err,
    size_t errlen);

/* proxy_ctl.c: one message on the control socket (EPOLLIN). */
void proxy_ctl_read(struct proxy *px);

/* proxy_conn_fail for an allowed connection that could not be made (the
 * name did not resolve, the host refused or did not answer): recorded
 * as an unreachable refusal with DETAIL ("no_such_name",
 * "ECONNREFUSED", "connect_timeout", ...) first, so that the job's
 * result says why its allowed host failed. */
void proxy_conn_unreachable(struct proxy *px, unsigned slot, const char *status,
    enum egress_socks5_rep rep, const char *text, const char *detail);

/* proxy_conn.c */
void proxy_accept(struct proxy *px, unsigned job);
void proxy_conn_event(struct proxy *px, unsigned slot, bool upstream,
    uint32_t events);
/* Closes connection SLOT; a relayed one is added to its job's report. */
void proxy_conn_close(struct proxy *px, unsigned slot);
/* Refuses connection SLOT: records REASON for its host and answers the
 * client (403 or a SOCKS reply), then closes it after the answer. */
void proxy_conn_refuse(struct proxy *px, unsigned slot, const char *host,
    size_t hostlen, enum egress_reason reason, const char *detail);
/* Answers SLOT's client STATUS (HTTP, with TEXT as the body) or REP
 * (SOCKS5) unless the tunnel was answered already, and closes it after
 * the answer. No refusal is recorded. */
void proxy_conn_fail(struct proxy *px, unsigned slot, const char *status,
    enum egress_socks5_rep rep, const char *text);
/* Decides SLOT's request for HOST[0..LEN) at PORT: refused, or dialled. */
void proxy_decide(struct proxy *px, unsigned slot, const char *host, size_t len,
    unsigned port);
/* The detail of a refusal by D: the host's error (bad_request), the
 * address's class or "local" (private_address), else NULL. */
const char *proxy_decision_detail(const struct egress_decision *d);
/* proxy_head.c: SLOT's client is readable while its request is read. */
void proxy_head_read(struct proxy *px, unsigned slot);
/* Sets the epoll events of SLOT's sockets from its state. */
void proxy_conn_arm(struct proxy *px, unsigned slot);
void proxy_conn_timeouts(struct proxy *px, int64_t now);

/* proxy_dial.c */
/* c-ares's channel: /etc/resolv.conf's servers, or SERVER (NULL: none)
 * only, "ADDR:PORT" (ares_set_servers_ports_csv). Returns 0 or -ARES_E*. */
int proxy_dns_init(struct proxy *px, const char *server);
void proxy_dns_event(struct proxy *px, int fd, uint32_t events);
void proxy_dns_timeouts(struct proxy *px);
/* Ms until c-ares needs a call, or -1. */
int proxy_dns_timeout_ms(struct proxy *px);
/* Starts connection SLOT toward its host and port (resolving a name). */
void proxy_dial(struct proxy *px, unsigned slot);
/* The upstream connect of SLOT finished (EPOLLOUT). */
void proxy_dial_done(struct proxy *px, unsigned slot);

/* proxy_relay.c */
void proxy_relay(struct proxy *px, unsigned slot, bool upstream,
    uint32_t events);
/* Queues LEN bytes for the client of C; false when they do not fit. */
bool proxy_to_client(struct proxy_conn *c, const void *data, size_t len);
/* Writes what C holds for the client (its buffer, then its pipe);
 * false on an error. */
bool proxy_flush_client(struct proxy_conn *c);
/* The bytes C holds for its client: its buffer's and its pipe's. */
size_t proxy_tocli_pending(const struct proxy_conn *c);
/* True when C holds all it may for its client (PROXY_BUF bytes in its
 * buffer, PROXY_PIPE in its pipe, or a pipe that took no more): the
 * upstream is not read until the client took some. */
bool proxy_tocli_full(const struct proxy_conn *c);
/* Connection SLOT's job passed cap NAME: a budget refusal, closed. */
void proxy_budget(struct proxy *px, unsigned slot, const char *cap);

/* proxy_packet.c: reads up to 64 frames queued on job JOB's packet
 * socket, reporting each direct connect. Returns how many it read. */
int proxy_packet_read(struct proxy *px, unsigned job);

/* proxy_ctl.c: the job of SLOT ends: report it to the broker. */
void proxy_job_end(struct proxy *px, unsigned slot);

#endif
