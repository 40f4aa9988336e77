/*
 * egress_proxy.h: the broker's side of its egress proxy (issue 25;
 * docs/egress.md): one `stockade-proxy` per session whose policy allows
 * hosts ([network] allow, allow_address), started before the broker
 * confines itself, handed each job's rules and the listener jail init
 * made in the job's network namespace, asked for the job's report when
 * the job ends. The messages are wire.h's proxy channel, their bodies
 * egress_ctl.h's.
 *
 * A proxy that ends during a session ends the network of every job from
 * then on, not the jobs: their listeners are closed (a connection to the
 * proxy's address is refused at once), and each job's report says
 * proxy_failed. The broker does not start another: a confined broker
 * cannot exec, and a proxy that died is a fault to report, not to hide.
 */
#ifndef STOCKADE_EGRESS_PROXY_H
#define STOCKADE_EGRESS_PROXY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress_ctl.h"

/* The proxy's program, found as the launcher is (install_path.h). */
#define EGRESS_PROXY_NAME "stockade-proxy"
/* How long the proxy may take to confine itself and say so, ms. */
#define EGRESS_PROXY_START_MS 5000u
/* How long it may take to answer a job's end with its report, ms. */
#define EGRESS_PROXY_REPORT_MS 3000u

struct egress_proxy {
	pid_t pid; /* 0 when none */
	int pidfd;
	int sock; /* our end of its SOCK_SEQPACKET socketpair */
	uint32_t landlock_abi; /* the ABI it confined itself with */
	bool dead; /* it ended, or broke the protocol: no more jobs */
	pthread_mutex_t lock; /* one job's send, or end and report, at a
			       * time (serve runs jobs at once) */
};

/* Sets PX to "no proxy" (pid 0, descriptors -1), its lock made. */
void egress_proxy_init(struct egress_proxy *px);

/* Most ports the proxy is given to confine TCP connect to
 * (PROXY_MAX_CONNECT_PORTS, broker/proxy/proxy.h). */
#define EGRESS_PROXY_MAX_PORTS 4096u

/*
 * The ports a proxy for RULES (borrowed) may dial, as stockade-proxy's
 * --connect-ports reads them, into OUT (SIZE bytes): 53 (its resolver,
 * over TCP when an answer is truncated), 80 and 443 (an allow rule
 * without ports), and the ports of every allow and allow_address rule,
 * "53,80,443,8080,9000-9010". A job's list only narrows the policy's,
 * so no job of the session needs another port. Returns 0; -E2BIG over
 * EGRESS_PROXY_MAX_PORTS ports (counted with repeats); -ENOSPC.
 */
int egress_proxy_ports(const struct egress_rules *rules, char *out,
    size_t size);

/*
 * Starts the proxy program: found as EGRESS_PROXY_NAME beside the
 * running binary or in libexec (install_open_helper), or at PATH when
 * PATH is not NULL (tests); run with its socket at descriptor 3
 * (spawner_exec_helper) as "stockade-proxy --fd 3 --connect-ports
 * LIST", LIST egress_proxy_ports(RULES) and the resolver's port (no such
 * option when RULES is NULL or holds too many ports: connect is then
 * not confined by port), our child with a pidfd; with "--dns DNS" when
 * DNS is neither NULL nor "" (one DNS server, "ADDR:PORT" as [network]
 * resolver writes it, policy_valid_resolver; otherwise the proxy reads
 * /etc/resolv.conf). Waits up to EGRESS_PROXY_START_MS for
 * WIRE_PROXY_READY. Call
 * it before the broker confines itself and before it makes threads.
 * Returns 0; or a negative errno with one sentence in ERR (ERRLEN
 * bytes): the places tried (-ENOENT), the proxy's own refusal
 * (WIRE_PROXY_FAILED: its errno, e.g. -EOPNOTSUPP for a kernel without
 * Landlock, and its words), -ETIMEDOUT, -EPROTO; PX is then stopped.
 */
int egress_proxy_start(struct egress_proxy *px,
    const struct egress_rules *rules, const char *path, const char *dns,
    char *err, size_t errlen);

/*
 * Hands JOB (borrowed; encoded here) to the proxy with the descriptors
 * LISTENER (required) and PACKET (-1 for none), both borrowed: the
 * caller closes its copies after the call, whatever it returns. Returns
 * 0; -EPIPE when the proxy is dead (PX->dead set; the caller's closing
 * of LISTENER then ends the job's network); -EINVAL or -ENOBUFS for a
 * job egress_job_encode refuses.
 */
int egress_proxy_job(struct egress_proxy *px, const struct egress_job *job,
    int listener, int packet);

/*
 * Tells the proxy that job JOB_ID ended and waits up to
 * EGRESS_PROXY_REPORT_MS for its report into REP (zeroed here). Returns
 * 0; or -EPIPE, -ETIMEDOUT, -EPROTO when the proxy is dead, silent or
 * broke the protocol: then PX->dead is set, REP holds only JOB_ID and
 * proxy_failed, and the proxy is killed.
 */
int egress_proxy_end(struct egress_proxy *px, uint64_t job_id,
    struct egress_report *rep);

/* Closes the proxy's socket (it exits on end of file), waits up to 2 s,
 * kills and reaps it. Safe on a PX with no proxy; PX can be started
 * again. */
void egress_proxy_stop(struct egress_proxy *px);

#endif
