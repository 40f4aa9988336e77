/*
 * egress_ctl.h: what the broker and the egress proxy (stockade-proxy,
 * broker/proxy/; issue 25) tell each other, and the network report a job's
 * result carries. The messages travel on the proxy channel of wire.h
 * (WIRE_PROXY_*); this header gives their bodies and the codecs.
 *
 * A session with a [network] allow-list starts one proxy. Then:
 *   proxy -> broker  WIRE_PROXY_READY   once confined (or WIRE_PROXY_FAILED
 *                                        and exit: the broker refuses the
 *                                        session, fail closed)
 *   broker -> proxy  WIRE_PROXY_JOB     per job: its rules and caps, the
 *                                        listener jail init made in the
 *                                        jail's network namespace, and its
 *                                        packet socket on lo
 *   broker -> proxy  WIRE_PROXY_END     the job ended: close its listener
 *                                        and connections
 *   proxy -> broker  WIRE_PROXY_REPORT  the job's report, once, after END
 * The proxy ends when its socket to the broker closes (the session ends).
 * A JOB the proxy does not serve (a malformed body, an id it serves
 * already, PROXY_MAX_JOBS active) has its descriptors closed at once, so
 * that the jail's connections are refused, and its END is answered by a
 * report with proxy_failed set and nothing else.
 */
#ifndef STOCKADE_EGRESS_CTL_H
#define STOCKADE_EGRESS_CTL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress_rules.h"

/* The port of the proxy's listener on the jail's loopback (127.0.0.1).
 * Fixed, so that the jail's environment names one address. */
#define EGRESS_PROXY_PORT 3128u

/* One job as the broker hands it to the proxy (WIRE_PROXY_JOB's body). */
struct egress_job {
	uint64_t job_id;
	uint64_t max_bytes_out; /* bytes the job may send, in all */
	uint64_t max_bytes_in; /* bytes it may receive, in all */
	uint32_t max_connections; /* connections it may make, in all */
	uint32_t max_concurrent; /* open at once */
	uint16_t port; /* the listener's port in the jail */
	struct egress_rules rules; /* owned: egress_job_clear frees */
};

/* Frees JOB's rules and zeroes it; accepts NULL. */
void egress_job_clear(struct egress_job *job);

/*
 * WIRE_PROXY_JOB's body: u64 job_id, u64 max_bytes_out, u64
 * max_bytes_in, u32 max_connections, u32 max_concurrent, u16 port, u16
 * nrules, then per rule u8 kind (enum egress_rule_kind) and its
 * egress_rule_format text, NUL-terminated; little-endian.
 * egress_job_encode writes it into OUT (SIZE bytes) and returns its
 * length, or -ENOBUFS, -EINVAL (a rule egress_rule_format refuses).
 * egress_job_decode reads BODY (LEN bytes) into JOB (zeroed by the
 * caller), every rule through egress_rule_parse, and returns 0 or
 * -EBADMSG (malformed, trailing bytes), -EINVAL (a rule refused, a
 * port of 0), -E2BIG (over EGRESS_MAX_RULES), -ENOMEM; JOB owns nothing
 * on failure.
 */
long egress_job_encode(const struct egress_job *job, uint8_t *out,
    size_t size);
int egress_job_decode(const uint8_t *body, size_t len, struct egress_job *job);

/* Entries of each list a report keeps; past them only the counts grow. */
#define EGRESS_REPORT_MAX 32u
/* A refusal's detail: a parser's why (egress_why_name), a resolver's
 * error, or a cap's name ("max_bytes_out_mb"). */
#define EGRESS_DETAIL_MAX 48u

/* Connections to one (host, port), relayed. */
struct egress_conn_rec {
	char host[EGRESS_HOST_BUF]; /* canonical name, or address text */
	uint16_t port;
	char address[INET6_ADDRSTRLEN]; /* the address dialled (the last) */
	uint32_t count; /* connections made */
	uint64_t bytes_out; /* job to host, payload bytes, summed */
	uint64_t bytes_in; /* host to job */
};

/* Refusals of one (host, port, reason). For direct_connect HOST is the
 * destination address the job tried, and DETAIL "tcp" or "udp". */
struct egress_refusal_rec {
	char host[EGRESS_HOST_BUF]; /* as requested, made printable */
	uint16_t port;
	enum egress_reason reason;
	char detail[EGRESS_DETAIL_MAX];
	uint32_t count;
};

/* One job's network, as its result reports it. */
struct egress_report {
	uint64_t job_id;
	uint64_t connections; /* connections relayed, in all */
	uint64_t refusals; /* refusals, in all */
	uint64_t bytes_out, bytes_in; /* summed over every connection */
	uint32_t nconn, nrefusal; /* entries below, <= EGRESS_REPORT_MAX */
	struct egress_conn_rec conn[EGRESS_REPORT_MAX];
	struct egress_refusal_rec refusal[EGRESS_REPORT_MAX];
	bool truncated; /* an entry was not kept: a list was full */
	bool proxy_failed; /* the proxy ended during the job (the broker
			    * sets it; the job's network ended with it) */
};

/*
 * WIRE_PROXY_REPORT's body: REPORT in a fixed little-endian layout
 * (egress_ctl.c). egress_report_encode returns the length written into
 * OUT (SIZE bytes; EGRESS_REPORT_WIRE_MAX suffices) or -ENOBUFS.
 * egress_report_decode fills REPORT from BODY (LEN bytes) and returns 0
 * or -EBADMSG (malformed, counts over EGRESS_REPORT_MAX, a string not
 * NUL-terminated within its field, trailing bytes), -EINVAL (a reason
 * out of the enum).
 */
#define EGRESS_REPORT_WIRE_MAX 32768u
long egress_report_encode(const struct egress_report *report, uint8_t *out,
    size_t size);
int egress_report_decode(const uint8_t *body, size_t len,
    struct egress_report *report);

/*
 * Adds to REPORT one connection to HOST:PORT at ADDRESS that carried
 * BYTES_OUT and BYTES_IN, merged with an entry of the same host and port
 * (count + 1, bytes summed, the address replaced), or a new entry, or
 * only the totals and TRUNCATED when the list is full.
 */
void egress_report_conn(struct egress_report *report, const char *host,
    uint16_t port, const char *address, uint64_t bytes_out,
    uint64_t bytes_in);

/*
 * Adds one refusal of HOST (any bytes, LEN of them: it is made printable,
 * every byte outside 0x21..0x7e and the backslash written as \xHH, so
 * that the text reads back, and cut to fit before an escape that does
 * not) at PORT for REASON with DETAIL (may be NULL, "": none; the last
 * one is kept), merged with an entry of the same host, port and reason
 * like egress_report_conn.
 */
void egress_report_refusal(struct egress_report *report, const char *host,
    size_t len, uint16_t port, enum egress_reason reason, const char *detail);

#endif
