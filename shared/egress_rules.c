/* egress_rules.c: rules of controlled egress, the decision and the
 * narrowing of a policy's list for one job (egress_rules.h). Pure. */
#include "egress_rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
    [EGRESS_RULE_ALLOW] = "allow",
    [EGRESS_RULE_ALLOW_ADDRESS] = "allow_address",
    [EGRESS_RULE_DENY] = "deny",
};

const char *
egress_rule_kind_name(enum egress_rule_kind kind)
{
	if ((unsigned)kind > EGRESS_RULE_DENY)
		return "unknown";
	return kind_names[kind];
}

static const char *const reason_names[] = {
    [EGRESS_REASON_NONE] = "allowed",
    [EGRESS_REASON_NOT_ALLOWED] = "not_allowed",
    [EGRESS_REASON_PRIVATE_ADDRESS] = "private_address",
    [EGRESS_REASON_SNI_MISMATCH] = "sni_mismatch",
    [EGRESS_REASON_BUDGET] = "budget",
    [EGRESS_REASON_BAD_REQUEST] = "bad_request",
    [EGRESS_REASON_DIRECT_CONNECT] = "direct_connect",
    [EGRESS_REASON_UNREACHABLE] = "unreachable",
};

const char *
egress_reason_name(enum egress_reason r)
{
	if ((unsigned)r > EGRESS_REASON_LAST)
		return "unknown";
	return reason_names[r];
}

/* ---- Reading and writing rules ----------------------------------------- */

/* The host part of an allow or deny rule, S[0..LEN), into OUT. */
static int
parse_host(const char *s, size_t len, struct egress_rule *out)
{
	int r;

	if (len >= 2 && s[0] == '*' && s[1] == '.') {
		out->wildcard = true;
		s += 2;
		len -= 2;
	}
	if (memchr(s, '*', len) != NULL)
		return EGRESS_E_BAD_WILDCARD;
	r = egress_host_canon(s, len, out->host, sizeof(out->host));
	if (r < 0)
		return r;
	if (r != EGRESS_HOST_NAME)
		return EGRESS_E_ADDRESS;
	/* "*.com" would open a whole top-level domain. */
	if (out->wildcard && strchr(out->host, '.') == NULL)
		return EGRESS_E_BAD_WILDCARD;
	return 0;
}

/* An allow or deny rule: HOST[:PORTS] or *.HOST[:PORTS]. */
static int
parse_name_rule(const char *text, struct egress_rule *out)
{
	const char *colon = strchr(text, ':');
	size_t len = colon ? (size_t)(colon - text) : strlen(text);
	int r;

	/* "https://host", "user@host:443": refused as what they are, not
	 * as a bad port. */
	r = egress_host_hostile(text, strlen(text));
	if (r < 0)
		return r;
	/* A bracket or a second colon: an IPv6 address, which a name rule
	 * cannot hold. */
	if (text[0] == '[' || (colon != NULL && strchr(colon + 1, ':')))
		return EGRESS_E_ADDRESS;
	r = parse_host(text, len, out);
	if (r < 0)
		return r;
	if (colon != NULL)
		return egress_ports_parse(colon + 1, strlen(colon + 1),
		    &out->ports);
	return 0;
}

int
egress_rule_parse(enum egress_rule_kind kind, const char *text,
    struct egress_rule *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (kind == EGRESS_RULE_ALLOW_ADDRESS)
		r = egress_cidr_parse(text, &out->cidr, &out->ports);
	else if (kind == EGRESS_RULE_ALLOW || kind == EGRESS_RULE_DENY)
		r = parse_name_rule(text, out);
	else
		r = -EINVAL;
	if (r < 0)
		memset(out, 0, sizeof(*out));
	return r;
}

int
egress_rule_format(const struct egress_rule *r, char *out, size_t outlen)
{
	char port[16] = "";
	int n;

	if (outlen > 0)
		out[0] = '\0';
	if (r->kind == EGRESS_RULE_ALLOW_ADDRESS)
		return r->ports.lo == 0 || r->ports.lo > r->ports.hi
		    ? -EINVAL
		    : egress_cidr_format(&r->cidr, &r->ports, out, outlen);
	if (r->kind != EGRESS_RULE_ALLOW && r->kind != EGRESS_RULE_DENY)
		return -EINVAL;
	if (memchr(r->host, '\0', sizeof(r->host)) == NULL ||
	    (r->ports.lo == 0) != (r->ports.hi == 0) ||
	    r->ports.lo > r->ports.hi)
		return -EINVAL;
	if (r->ports.lo != 0 && r->ports.lo == r->ports.hi)
		snprintf(port, sizeof(port), ":%u", (unsigned)r->ports.lo);
	else if (r->ports.lo != 0)
		snprintf(port, sizeof(port), ":%u-%u", (unsigned)r->ports.lo,
		    (unsigned)r->ports.hi);
	n = snprintf(out, outlen, "%s%s%s", r->wildcard ? "*." : "", r->host,
	    port);
	if (n < 0 || (size_t)n >= outlen) {
		if (outlen > 0)
			out[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}

bool
egress_rule_eq(const struct egress_rule *a, const struct egress_rule *b)
{
	if (a->kind != b->kind || a->ports.lo != b->ports.lo ||
	    a->ports.hi != b->ports.hi)
		return false;
	if (a->kind == EGRESS_RULE_ALLOW_ADDRESS)
		return a->cidr.bits == b->cidr.bits &&
		    egress_addr_eq(&a->cidr.addr, &b->cidr.addr);
	return a->wildcard == b->wildcard &&
	    strncmp(a->host, b->host, sizeof(a->host)) == 0;
}

int
egress_rules_add(struct egress_rules *rules, const struct egress_rule *r)
{
	struct egress_rule *v;

	if (rules->n >= EGRESS_MAX_RULES)
		return -E2BIG;
	v = reallocarray(rules->v, rules->n + 1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	rules->v = v;
	rules->v[rules->n++] = *r;
	return 0;
}

void
egress_rules_clear(struct egress_rules *rules)
{
	if (rules == NULL)
		return;
	free(rules->v);
	rules->v = NULL;
	rules->n = 0;
}

/* ---- Matching ---------------------------------------------------------- */

/*
 * The port sets of R as up to two ranges into IV: its own, or with none
 * written 443 and 80 (allow) or every port (deny). Returns how many.
 */
static size_t
port_ranges(const struct egress_rule *r, struct egress_ports iv[2])
{
	if (r->ports.lo != 0) {
		iv[0] = r->ports;
		return 1;
	}
	if (r->kind == EGRESS_RULE_DENY) {
		iv[0] = (struct egress_ports){1, 65535};
		return 1;
	}
	iv[0] = (struct egress_ports){80, 80};
	iv[1] = (struct egress_ports){443, 443};
	return 2;
}

static bool
port_matches(const struct egress_rule *r, unsigned port)
{
	struct egress_ports iv[2];
	size_t n = port_ranges(r, iv);

	for (size_t i = 0; i < n; i++)
		if (port >= (unsigned)iv[i].lo && port <= (unsigned)iv[i].hi)
			return true;
	return false;
}

/* Whether NAME (canonical) is strictly under SUFFIX: ends in "." SUFFIX. */
static bool
under(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s + 1 && name[n - s - 1] == '.' &&
	    memcmp(name + n - s, suffix, s) == 0;
}

/* Whether the name rule R matches NAME (canonical). */
static bool
name_matches(const struct egress_rule *r, const char *name)
{
	if (r->wildcard)
		return under(name, r->host);
	return strcmp(name, r->host) == 0;
}

/* The first rule of RULES of KIND matching NAME (a name rule) or ADDR
 * (allow_address) and PORT, or -1. */
static int
find_match(const struct egress_rules *rules, enum egress_rule_kind kind,
    const char *name, const struct egress_addr *addr, unsigned port)
{
	for (size_t i = 0; rules != NULL && i < rules->n; i++) {
		const struct egress_rule *r = &rules->v[i];

		if (r->kind != kind || !port_matches(r, port))
			continue;
		if (kind == EGRESS_RULE_ALLOW_ADDRESS
			? egress_cidr_contains(&r->cidr, addr)
			: name_matches(r, name))
			return (int)i;
	}
	return -1;
}

/* ---- Deciding ---------------------------------------------------------- */

static bool
decide(struct egress_decision *out, enum egress_reason reason, int rule)
{
	out->allowed = reason == EGRESS_REASON_NONE;
	out->reason = reason;
	out->rule = rule;
	return out->allowed;
}

/* An address, ADDR, asked for by a client or resolved for an allowed
 * name (LOCAL: the host's own addresses, NULL for none). */
static bool
decide_address(const struct egress_rules *rules, const struct egress_addr *addr,
    unsigned port, const struct egress_addrs *local, bool named,
    struct egress_decision *out)
{
	int i = find_match(rules, EGRESS_RULE_ALLOW_ADDRESS, NULL, addr, port);

	if (i >= 0)
		return decide(out, EGRESS_REASON_NONE, i);
	out->cls = egress_addr_classify(addr);
	for (size_t j = 0; local != NULL && j < local->n; j++)
		out->local = out->local || egress_addr_eq(addr, &local->v[j]);
	if (egress_addr_class_private(out->cls) || out->local)
		return decide(out, EGRESS_REASON_PRIVATE_ADDRESS, -1);
	/* A public address is what an allowed name may reach; an address
	 * the client named itself needs an allow_address. */
	return decide(out,
	    named ? EGRESS_REASON_NONE : EGRESS_REASON_NOT_ALLOWED, -1);
}

bool
egress_decide(const struct egress_rules *rules, const char *host, size_t len,
    unsigned port, struct egress_decision *out)
{
	char canon[EGRESS_HOST_BUF];
	struct egress_addr addr;
	int kind, i;

	memset(out, 0, sizeof(*out));
	if (port == 0 || port > 65535)
		return decide(out, EGRESS_REASON_BAD_REQUEST, -1);
	kind = egress_host_canon(host, len, canon, sizeof(canon));
	if (kind < 0) {
		out->error = kind;
		return decide(out, EGRESS_REASON_BAD_REQUEST, -1);
	}
	if (kind != EGRESS_HOST_NAME) {
		if (egress_addr_parse(canon, &addr) < 0) {
			out->error = EGRESS_E_BAD_ADDRESS;
			return decide(out, EGRESS_REASON_BAD_REQUEST, -1);
		}
		return decide_address(rules, &addr, port, NULL, false, out);
	}
	/* A deny rule wins over every allow rule. */
	i = find_match(rules, EGRESS_RULE_DENY, canon, NULL, port);
	if (i >= 0)
		return decide(out, EGRESS_REASON_NOT_ALLOWED, i);
	i = find_match(rules, EGRESS_RULE_ALLOW, canon, NULL, port);
	return decide(out,
	    i >= 0 ? EGRESS_REASON_NONE : EGRESS_REASON_NOT_ALLOWED, i);
}

bool
egress_check_address(const struct egress_rules *rules,
    const struct sockaddr *sa, unsigned port, const struct egress_addrs *local,
    struct egress_decision *out)
{
	struct egress_addr addr;

	memset(out, 0, sizeof(*out));
	if (port == 0 || port > 65535)
		return decide(out, EGRESS_REASON_BAD_REQUEST, -1);
	if (egress_addr_from_sockaddr(sa, &addr) < 0) {
		out->cls = EGRESS_ADDR_RESERVED;
		return decide(out, EGRESS_REASON_PRIVATE_ADDRESS, -1);
	}
	return decide_address(rules, &addr, port, local, true, out);
}

/* ---- Narrowing --------------------------------------------------------- */

/* Whether policy rule P's names include all of job rule J's (both name
 * rules). */
static bool
names_cover(const struct egress_rule *p, const struct egress_rule *j)
{
	if (!p->wildcard)
		return !j->wildcard && strcmp(p->host, j->host) == 0;
	/* *.S covers a name under S, and *.T for T equal to S or under S. */
	return under(j->host, p->host) ||
	    (j->wildcard && strcmp(j->host, p->host) == 0);
}

/* Whether P (a policy rule of J's kind) covers J's addresses or names. */
static bool
targets_cover(const struct egress_rule *p, const struct egress_rule *j)
{
	if (p->kind != j->kind)
		return false;
	if (j->kind == EGRESS_RULE_ALLOW_ADDRESS)
		return egress_cidr_covers(&p->cidr, &j->cidr);
	return names_cover(p, j);
}

/* Whether the ports LO..HI are all in the union of the port sets of the
 * rules of POLICY that cover J's targets. */
static bool
ports_covered(const struct egress_rules *policy, const struct egress_rule *j,
    unsigned lo, unsigned hi)
{
	unsigned at = lo;
	bool moved = true;

	/* Walk up from LO: each pass takes a covering range that holds AT
	 * past its end; none left before HI is passed means a gap. */
	while (at <= hi && moved) {
		moved = false;
		for (size_t i = 0; i < policy->n && at <= hi; i++) {
			struct egress_ports iv[2];
			size_t n;

			if (!targets_cover(&policy->v[i], j))
				continue;
			n = port_ranges(&policy->v[i], iv);
			for (size_t k = 0; k < n; k++)
				if ((unsigned)iv[k].lo <= at &&
				    at <= (unsigned)iv[k].hi) {
					at = (unsigned)iv[k].hi + 1;
					moved = true;
				}
		}
	}
	return at > hi;
}

/* Whether job rule J asks for nothing POLICY does not allow. */
static bool
covered(const struct egress_rules *policy, const struct egress_rule *j)
{
	struct egress_ports iv[2];
	size_t n;

	if (j->kind == EGRESS_RULE_DENY)
		return true;
	n = port_ranges(j, iv);
	for (size_t k = 0; k < n; k++)
		if (!ports_covered(policy, j, (unsigned)iv[k].lo,
			(unsigned)iv[k].hi))
			return false;
	return true;
}

static bool
has_rule(const struct egress_rules *rules, const struct egress_rule *r)
{
	for (size_t i = 0; i < rules->n; i++)
		if (egress_rule_eq(&rules->v[i], r))
			return true;
	return false;
}

int
egress_rules_narrow(const struct egress_rules *policy,
    const struct egress_rules *job, struct egress_rules *out, size_t *bad)
{
	int r = 0;

	out->v = NULL;
	out->n = 0;
	for (size_t i = 0; i < job->n; i++)
		if (!covered(policy, &job->v[i])) {
			*bad = i;
			return -EPERM;
		}
	for (size_t i = 0; r == 0 && i < job->n; i++)
		r = egress_rules_add(out, &job->v[i]);
	for (size_t i = 0; r == 0 && i < policy->n; i++)
		if (policy->v[i].kind == EGRESS_RULE_DENY &&
		    !has_rule(out, &policy->v[i]))
			r = egress_rules_add(out, &policy->v[i]);
	if (r < 0)
		egress_rules_clear(out);
	return r;
}
