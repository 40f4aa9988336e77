/*
 * egress_rules.h: the rules of controlled egress (issue 25; the policy's
 * [network] section, stockade-policy(5)) and the decision the proxy
 * takes for each connection. Pure: what a connection may reach is
 * decided here, from text and addresses, so that the policy loader, the
 * proxy and the tests share one reading.
 *
 * Three kinds of rule:
 *   allow = HOST[:PORTS] or *.HOST[:PORTS]
 *   allow_address = ADDRESS[/BITS]:PORTS (egress_cidr_parse)
 *   deny = as allow
 * HOST is a name in egress_host_canon's canonical form once read (an
 * address is refused: addresses are allow_address's). "*.HOST" matches
 * every name under HOST, at any depth, and never HOST itself; HOST must
 * have two labels or more ("*.com" is refused). PORTS is a port or a
 * range "LO-HI". Without PORTS an allow rule means ports 443 and 80 and
 * a deny rule every port. A deny rule wins over every allow rule.
 */
#ifndef STOCKADE_EGRESS_RULES_H
#define STOCKADE_EGRESS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "egress_name.h"

/* Most rules of one list (a policy's [network], or one job's). */
#define EGRESS_MAX_RULES 256u
/* A buffer that holds any rule in text (egress_rule_format), with its
 * NUL: "*." and a name, ":" and a port range. */
#define EGRESS_RULE_BUF (2 + EGRESS_NAME_MAX + 1 + 11 + 1)

enum egress_rule_kind {
	EGRESS_RULE_ALLOW = 0,
	EGRESS_RULE_ALLOW_ADDRESS = 1,
	EGRESS_RULE_DENY = 2,
};

/*
 * One rule. HOST (allow, deny) is canonical; for a wildcard it is the
 * suffix ("*.example.org" holds "example.org"). CIDR is allow_address's.
 * PORTS {0, 0}: none written (allow: 443 and 80; deny: every port).
 */
struct egress_rule {
	enum egress_rule_kind kind;
	bool wildcard;
	char host[EGRESS_HOST_BUF];
	struct egress_cidr cidr;
	struct egress_ports ports;
};

/* A list of rules, V[0..N), malloc'd; egress_rules_clear frees it. */
struct egress_rules {
	struct egress_rule *v;
	size_t n;
};

/* The policy key of KIND: "allow", "allow_address", "deny" (a static
 * string; "unknown" for a value out of the enum). */
const char *egress_rule_kind_name(enum egress_rule_kind kind);

/*
 * Reads TEXT (NUL-terminated), a rule of KIND in the syntax above, into
 * OUT. Returns 0, or an EGRESS_E_* code (egress_name_strerror says what):
 * the host's (egress_host_canon), EGRESS_E_ADDRESS for an address in an
 * allow or deny rule, EGRESS_E_BAD_WILDCARD, the ports' or the CIDR's;
 * -EINVAL for a KIND out of the enum. OUT is zeroed on failure.
 */
int egress_rule_parse(enum egress_rule_kind kind, const char *text,
    struct egress_rule *out);

/*
 * Writes R in canonical text, the form egress_rule_parse reads back to an
 * equal rule ("*.example.org:8443", "[fd00::]/8:80-90"), into OUT
 * (OUTLEN bytes; EGRESS_RULE_BUF suffices). Returns 0; -ENOSPC; -EINVAL
 * for a rule egress_rule_parse would not give (a hand-built one).
 */
int egress_rule_format(const struct egress_rule *r, char *out, size_t outlen);

/* Whether A and B are the same rule (kind, host, range and ports). */
bool egress_rule_eq(const struct egress_rule *a, const struct egress_rule *b);

/*
 * Appends a copy of R to RULES. Returns 0; -E2BIG when RULES already has
 * EGRESS_MAX_RULES; -ENOMEM. RULES is unchanged on failure.
 */
int egress_rules_add(struct egress_rules *rules, const struct egress_rule *r);

/* Frees RULES's list and empties it; accepts NULL. */
void egress_rules_clear(struct egress_rules *rules);

/*
 * Why a connection was refused, as the result names it (issue 25):
 * EGRESS_REASON_NONE for an allowed one. The proxy gives
 * sni_mismatch, budget, direct_connect and unreachable; egress_decide and
 * egress_check_address give the others.
 */
enum egress_reason {
	EGRESS_REASON_NONE = 0, /* "allowed" */
	EGRESS_REASON_NOT_ALLOWED, /* "not_allowed": no allow, or a deny */
	EGRESS_REASON_PRIVATE_ADDRESS, /* "private_address" */
	EGRESS_REASON_SNI_MISMATCH, /* "sni_mismatch" */
	EGRESS_REASON_BUDGET, /* "budget": a [network] cap reached */
	EGRESS_REASON_BAD_REQUEST, /* "bad_request": a host or port that
				    * is not one */
	EGRESS_REASON_DIRECT_CONNECT, /* "direct_connect": around the proxy */
	EGRESS_REASON_UNREACHABLE, /* "unreachable": allowed, but the name
				    * did not resolve or the host did not
				    * answer (not the policy's doing) */
};
#define EGRESS_REASON_LAST EGRESS_REASON_UNREACHABLE

/* The result's name of R ("allowed", "not_allowed", ...); a static
 * string, "unknown" for a value out of the enum. */
const char *egress_reason_name(enum egress_reason r);

/*
 * A decision. RULE: the index in the rules of the rule that decided (the
 * allow or allow_address that let it through, the deny that refused
 * it), -1 when none did. ERROR: for bad_request, the EGRESS_E_* code of
 * the host (0 for a bad port). CLS: for private_address, the class of
 * the address (EGRESS_ADDR_PUBLIC with LOCAL true: one of the host's
 * own addresses).
 */
struct egress_decision {
	bool allowed;
	enum egress_reason reason;
	int rule;
	int error;
	enum egress_addr_class cls;
	bool local;
};

/*
 * Decides a request for HOST[0..LEN) (as the client sent it; it is put in
 * canonical form here, egress_host_canon) and PORT under RULES:
 *  - a host egress_host_canon refuses, or a port outside 1..65535:
 *    bad_request;
 *  - a name: not_allowed when a deny rule matches it and PORT, else
 *    allowed when an allow rule does, else not_allowed;
 *  - an address: allowed when an allow_address covers it and PORT; else
 *    private_address for a private class (egress_addr_class_private),
 *    not_allowed for a public one.
 * An allowed name is then dialled only at an address egress_check_address
 * allows. RULES may be NULL (no rule: nothing is allowed). Fills OUT and
 * returns OUT->allowed.
 */
bool egress_decide(const struct egress_rules *rules, const char *host,
    size_t len, unsigned port, struct egress_decision *out);

/*
 * Decides whether an address SA (AF_INET or AF_INET6) that an allowed
 * name resolved to may be dialled at PORT: allowed when an allow_address
 * of RULES covers it and PORT; otherwise private_address when its class
 * is private, or it is one of LOCAL's (the host's own addresses,
 * egress_local_addrs; NULL for none); otherwise allowed. This is what
 * defeats a name that resolves, or is rebound, to a private address.
 * Fills OUT and returns OUT->allowed.
 */
bool egress_check_address(const struct egress_rules *rules,
    const struct sockaddr *sa, unsigned port, const struct egress_addrs *local,
    struct egress_decision *out);

/*
 * The rules of one job that narrows the policy's list (serve's, mcp's
 * and exec's per-job list; a job narrows, never widens): every allow
 * rule of JOB must be covered by POLICY's allow rules (every name it
 * matches matched by one of them, on every port it allows, the ports
 * possibly of several), every allow_address by POLICY's allow_address
 * rules (its range inside one of theirs, its ports within theirs); JOB's
 * deny rules are kept. OUT gets JOB's rules, then POLICY's deny rules
 * JOB does not already have. Returns 0; -EPERM with *BAD the index in
 * JOB of the first rule that would widen POLICY; -E2BIG when OUT would
 * hold more than EGRESS_MAX_RULES; -ENOMEM. OUT (which the caller
 * zeroes) is empty on failure; the caller frees it on success.
 */
int egress_rules_narrow(const struct egress_rules *policy,
    const struct egress_rules *job, struct egress_rules *out, size_t *bad);

#endif
