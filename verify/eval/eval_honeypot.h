/*
 * eval_honeypot.h: the server an attack sends its loot to (issue 6): TCP
 * and UDP on 127.0.0.1, ports chosen by the kernel, and a SOCK_STREAM
 * socket in the abstract unix namespace with a random name. It records
 * every byte it receives, per connection and per datagram, so that a
 * canary sent there is found however the bytes were cut.
 *
 * A thread of the `stockade eval` process serves it with one poll loop;
 * a run marks where its window begins (eval_honeypot_mark), and after its
 * job asks the thread to read everything the kernel holds
 * (eval_honeypot_sync) before searching what came since the mark. Runs
 * share the honeypot: each searches for its own canaries, which nothing
 * else sends, so a window that also holds another run's bytes is no
 * error.
 *
 * Answers keep clients from waiting on the 10 s wall clock: a UDP
 * datagram of at least 12 bytes gets a DNS reply (eval_dns.h: the
 * query's id and question, NXDOMAIN but for the few names the eval
 * answers with loopback or link-local addresses, RFC 1035 section
 * 4.1.1), so that the UDP socket is also the resolver of the allow-list
 * configurations, and what a query's name spells in hex is recorded
 * apart (where "dns"); a stream whose bytes start
 * like an HTTP request gets "HTTP/1.0 200 OK" once its header has ended
 * (a blank line), and the honeypot then shuts its side for writing. The
 * body of that answer holds the secrets the runs in progress registered
 * (eval_honeypot_serve): the honeypot also stands for a credential
 * service on the host's loopback, such as a cloud metadata service, that
 * only network isolation hides. It cannot tell which run asks, so it
 * gives every registered secret: each run then looks for its own.
 *
 * Bounds: the first EVAL_HONEYPOT_KEEP bytes of each connection are kept
 * (the rest are read and counted); at most 1024 connections are open at
 * once (more are accepted and closed); records a run no longer needs are
 * dropped by eval_honeypot_forget.
 */
#ifndef STOCKADE_EVAL_HONEYPOT_H
#define STOCKADE_EVAL_HONEYPOT_H

#include <stddef.h>
#include <stdint.h>

#include "eval_detect.h"

#define EVAL_HONEYPOT_KEEP (1u << 20) /* bytes kept per connection */

/*
 * The eval's own "package index" (issue 25): a TCP listener of the
 * honeypot on this address at the honeypot's TCP port, the one host the
 * allow-list configuration lets jobs reach through stockade-proxy
 * (eval_table.h). Its bytes are recorded like the others' (where
 * "index"): a secret found there went out through the allowed host. A
 * stream that starts like an HTTP request gets a harmless answer (a
 * package's metadata, no secret), then the honeypot shuts its side for
 * writing.
 */
#define EVAL_INDEX_ADDR "127.0.0.2"

struct eval_honeypot;

/*
 * Starts the honeypot: binds the four sockets (the index at the TCP
 * port too, the TCP port chosen again, at most 16 times, while the index
 * address has it taken) and starts its thread
 * (all signals blocked in it). *OUT is owned by the caller and freed with
 * eval_honeypot_stop. Returns 0, or a negative errno with a sentence in
 * ERR (ERRLEN bytes).
 */
int eval_honeypot_start(struct eval_honeypot **out, char *err, size_t errlen);

/* The TCP and UDP ports (host order) and the abstract socket's name
 * (without the leading NUL; borrowed while HP lives). */
uint16_t eval_honeypot_tcp_port(const struct eval_honeypot *hp);
uint16_t eval_honeypot_udp_port(const struct eval_honeypot *hp);
const char *eval_honeypot_unix_name(const struct eval_honeypot *hp);

/* The sequence number of the last byte recorded: what comes after has a
 * greater one. */
uint64_t eval_honeypot_mark(struct eval_honeypot *hp);

/*
 * Waits until the honeypot thread has read everything that had reached
 * the kernel's queues when this was called: connections waiting to be
 * accepted, stream bytes, datagrams (at most 256 rounds of reading, so
 * that a sender that never stops cannot hold it). Returns 0, or -EPIPE
 * when the thread has stopped.
 */
int eval_honeypot_sync(struct eval_honeypot *hp);

/*
 * Searches every record (connection or datagram) that received bytes
 * after the mark SINCE, each as one piece, for the N needles ND. Returns
 * 1 with the needle's index in *WHICH and where ("tcp", "udp", "unix",
 * "index", "dns": the hex of a DNS query's name, eval_dns.h)
 * in WHERE (WLEN bytes), or 0.
 */
int eval_honeypot_find(struct eval_honeypot *hp, uint64_t since,
    const struct eval_needle *nd, size_t n, int *which, char *where,
    size_t wlen);

/*
 * Registers SECRET (copied, at most 63 bytes) as one the service answers
 * with, until eval_honeypot_unserve(HP, SECRET). Returns 0 or -ENOMEM /
 * -E2BIG (more than 16 at once).
 */
int eval_honeypot_serve(struct eval_honeypot *hp, const char *secret);
void eval_honeypot_unserve(struct eval_honeypot *hp, const char *secret);

/* Drops the records of closed connections and datagrams whose last byte
 * came at or before the mark BEFORE. */
void eval_honeypot_forget(struct eval_honeypot *hp, uint64_t before);

/* Stops the thread, closes every socket and frees HP; accepts NULL. */
void eval_honeypot_stop(struct eval_honeypot *hp);

#endif
