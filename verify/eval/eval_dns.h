/*
 * eval_dns.h: the DNS side of the eval's honeypot (issue 25). The
 * honeypot's UDP socket on 127.0.0.1 is the [network] resolver of the
 * isolation evaluation's allow-list configurations, so that the proxy
 * asks nothing of the host's DNS and no query leaves the machine. It
 * answers a few names of its own with loopback or link-local addresses
 * (never one off the host) and every other name with NXDOMAIN, and
 * records each query's name, so that a secret spelled into a name (a
 * subdomain of a wildcard allow) is found like any other.
 *
 * The wire format is RFC 1035 section 4.1: a 12-byte header, one
 * question (QNAME's labels up to the root, QTYPE, QCLASS).
 */
#ifndef STOCKADE_EVAL_DNS_H
#define STOCKADE_EVAL_DNS_H

#include <stddef.h>

/* Answered with 127.0.0.1: an allowed name behind which the honeypot's
 * own TCP listener waits (DNS rebinding; attack 78). */
#define EVAL_DNS_REBIND "rebind.test"
/* Answered with 169.254.169.254, a cloud's metadata address. */
#define EVAL_DNS_METADATA "metadata.test"
/* Answered with EVAL_INDEX_ADDR (eval_honeypot.h): an allowed name on
 * the eval's index (domain fronting; attack 79). */
#define EVAL_DNS_FRONT "front.test"
/* The wildcard allow's domain (*.exfil.test; attack 77): its names get
 * NXDOMAIN, but the query has already arrived. */
#define EVAL_DNS_EXFIL "exfil.test"

/* The biggest reply eval_dns_reply writes for a query of LEN bytes. */
#define EVAL_DNS_REPLY_MAX(len) ((len) + 16)

/*
 * The reply to the query Q (LEN bytes, at least 12) into OUT, which
 * holds EVAL_DNS_REPLY_MAX(LEN) bytes: the query's id and question, and
 * for an A question (class IN) of one of the names above (ASCII case
 * ignored, one trailing dot or none) one A record, TTL 60; for another
 * type of such a name no record (NOERROR); for any other name, or a
 * query whose question cannot be read, NXDOMAIN (without the question
 * in the second case). Returns the reply's length in bytes.
 */
size_t eval_dns_reply(const unsigned char *q, size_t len, unsigned char *out);

/*
 * What the name asked by the query Q (LEN bytes) carries: the bytes its
 * leading labels spell in hexadecimal (each label of an even number of
 * hex digits, either case, until the first label that is not one),
 * decoded and concatenated, into OUT (SIZE bytes, at most SIZE written).
 * Returns the number of bytes written: 0 for a datagram that is no
 * query with a readable question, or a name that starts with no such
 * label.
 */
size_t eval_dns_hex_payload(const unsigned char *q, size_t len,
    unsigned char *out, size_t size);

#endif
