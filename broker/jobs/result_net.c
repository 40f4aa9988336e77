/* result_net.c: a job's network in its result (issue 25): the "network"
 * object, its hint and its lines in the text form; see result_json.h. */
#include "result_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

/* Refused entries a hint or a summary names; the rest are counted. */
#define NET_NAMED 3u
/* Bytes of allow rules a hint quotes; the rest are counted. */
#define NET_RULES_QUOTED 480u

/* What a program must do to go out (docs/results.md, "The network
 * hint"); "must use the proxy" is a stable phrase (docs/tool.md). */
#define USE_THE_PROXY                                                        \
	"the program must use the proxy: HTTP_PROXY and HTTPS_PROXY (and "   \
	"their lowercase forms) are set in the jail; use a client that "     \
	"honours them (curl, pip, requests, git, npm) or pass the proxy to " \
	"it explicitly."

/* A text being built in BUF (SIZE bytes, NUL-terminated): LEN so far. */
struct words {
	char *buf;
	size_t size, len;
};

/* Appends to W as printf(3) would, cut (never overrun) when full. */
__attribute__((format(printf, 2, 3))) static void
add(struct words *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->len + 1 >= w->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(w->buf + w->len, w->size - w->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		w->len += (size_t)n < w->size - w->len ? (size_t)n
						       : w->size - w->len - 1;
}

static json_int_t
jint(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? (json_int_t)INT64_MAX : (json_int_t)v;
}

/* Room for printable() of a host field. */
#define PRINTABLE_HOST (4 * EGRESS_HOST_BUF + 1)

/*
 * FIELD (SIZE bytes, to its NUL or its end: a hand-built report may have
 * none) into OUT (4 * SIZE + 1 bytes) as printable ASCII, every byte
 * outside 0x21..0x7e as \xHH, the form egress_report_refusal gives a
 * host: a name, an address or a detail can then never hold a space, a
 * newline or a control, so none can pose as a line of the text form
 * or break the hint. Returns OUT.
 */
static char *
printable(const char *field, size_t size, char *out)
{
	size_t n = strnlen(field, size), o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)field[i];

		if (c >= 0x21 && c <= 0x7e)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, 5, "\\x%02X", c);
	}
	out[o] = '\0';
	return out;
}

/* Bytes of a host a hint quotes: past them "..." (the network object has
 * it whole), so that a long hostile name cannot push the advice out of
 * the hint. */
#define HINT_HOST_MAX 100u

/* S (printable()) cut to HINT_HOST_MAX bytes and "...". Returns S. */
static char *
clip(char *s)
{
	if (strlen(s) > HINT_HOST_MAX)
		memcpy(s + HINT_HOST_MAX, "...", 4);
	return s;
}

/* FIELD (SIZE bytes) as a JSON string, printable(). */
static json_t *
field_json(const char *field, size_t size)
{
	char *text = malloc(4 * size + 1);
	json_t *j;

	if (text == NULL)
		return NULL;
	j = json_string(printable(field, size, text));
	free(text);
	return j;
}

static bool
put(json_t *o, const char *key, json_t *v)
{
	return v != NULL && json_object_set_new(o, key, v) == 0;
}

static uint32_t
kept(uint32_t n)
{
	return n < EGRESS_REPORT_MAX ? n : EGRESS_REPORT_MAX;
}

/* {"host", "port", "address", "count", "bytes_out", "bytes_in"} */
static json_t *
conn_json(const struct egress_conn_rec *c)
{
	json_t *o = json_object();

	if (o != NULL && put(o, "host", field_json(c->host, sizeof(c->host))) &&
	    put(o, "port", json_integer(c->port)) &&
	    put(o, "address", field_json(c->address, sizeof(c->address))) &&
	    put(o, "count", json_integer(c->count)) &&
	    put(o, "bytes_out", json_integer(jint(c->bytes_out))) &&
	    put(o, "bytes_in", json_integer(jint(c->bytes_in))))
		return o;
	json_decref(o);
	return NULL;
}

/* {"host", "port", "reason", "detail", "count"} */
static json_t *
refusal_json(const struct egress_refusal_rec *r)
{
	const char *reason = egress_reason_name(r->reason);
	json_t *o = json_object();

	if (o != NULL && put(o, "host", field_json(r->host, sizeof(r->host))) &&
	    put(o, "port", json_integer(r->port)) &&
	    put(o, "reason", result_safe_json(reason, strlen(reason))) &&
	    put(o, "detail", field_json(r->detail, sizeof(r->detail))) &&
	    put(o, "count", json_integer(r->count)))
		return o;
	json_decref(o);
	return NULL;
}

static json_t *
entries_json(const struct egress_report *rep, bool refusals)
{
	uint32_t n = kept(refusals ? rep->nrefusal : rep->nconn);
	json_t *a = json_array();

	for (uint32_t i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a,
			refusals ? refusal_json(&rep->refusal[i])
				 : conn_json(&rep->conn[i])) < 0) {
			json_decref(a);
			a = NULL;
		}
	return a;
}

/* Room for rule_text(). */
#define RULE_TEXT (16 + 4 * EGRESS_RULE_BUF)

/* "KIND TEXT" of R into OUT (RULE_TEXT bytes), TEXT printable() (a
 * hand-built rule may hold any byte); false for a rule
 * egress_rule_format refuses. WITH_KIND false: TEXT alone. */
static bool
rule_text(const struct egress_rule *r, bool with_kind, char *out)
{
	char text[EGRESS_RULE_BUF];
	size_t n = 0;

	if (egress_rule_format(r, text, sizeof(text)) != 0)
		return false;
	if (with_kind)
		n = (size_t)snprintf(out, 16, "%s ",
		    egress_rule_kind_name(r->kind));
	printable(text, sizeof(text), out + n);
	return true;
}

static json_t *
rules_json(const struct egress_rules *rules)
{
	json_t *a = json_array();

	for (size_t i = 0; a != NULL && rules != NULL && i < rules->n; i++) {
		char text[RULE_TEXT];

		if (!rule_text(&rules->v[i], true, text))
			continue;
		if (json_array_append_new(a, json_string(text)) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	return a;
}

json_t *
result_network_json(const struct result_net *net)
{
	const struct egress_report *rep = net->report;
	json_t *o = json_object();
	bool ok;

	ok = o != NULL && put(o, "connections", entries_json(rep, false)) &&
	    put(o, "refusals", entries_json(rep, true)) &&
	    put(o, "connections_total", json_integer(jint(rep->connections))) &&
	    put(o, "refusals_total", json_integer(jint(rep->refusals))) &&
	    put(o, "bytes_out", json_integer(jint(rep->bytes_out))) &&
	    put(o, "bytes_in", json_integer(jint(rep->bytes_in))) &&
	    put(o, "truncated", json_boolean(rep->truncated)) &&
	    put(o, "proxy", json_string(rep->proxy_failed ? "failed" : "ok")) &&
	    put(o, "rules", rules_json(net->rules));
	if (!ok) {
		json_decref(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

/* ---- the hint ------------------------------------------------------- */

bool
result_is_ipv6_text(const char *host)
{
	return strchr(host, ':') != NULL &&
	    strspn(host, "0123456789abcdefABCDEF:.") == strlen(host);
}

/* "HOST:PORT" ("[HOST]:PORT" for an IPv6 address) of a report's entry. */
static void
add_endpoint(struct words *w, const char *host, size_t size, unsigned port)
{
	char shown[PRINTABLE_HOST];
	bool v6;

	clip(printable(host, size < EGRESS_HOST_BUF ? size : EGRESS_HOST_BUF,
	    shown));
	v6 = result_is_ipv6_text(shown);
	add(w, "%s%s%s:%u", v6 ? "[" : "", shown, v6 ? "]" : "", port);
}

/* "HOST:PORT (REASON[, DETAIL][, N times])" */
static void
add_refusal(struct words *w, const struct egress_refusal_rec *r)
{
	char detail[4 * EGRESS_DETAIL_MAX + 1];

	printable(r->detail, sizeof(r->detail), detail);
	add_endpoint(w, r->host, sizeof(r->host), r->port);
	add(w, " (%s%s%s", egress_reason_name(r->reason), *detail ? ", " : "",
	    detail);
	if (r->count > 1)
		add(w, ", %u times", r->count);
	add(w, ")");
}

/* The first NET_NAMED refused entries, and how many more there are. */
static void
add_refusals(struct words *w, const struct egress_report *rep)
{
	uint32_t n = kept(rep->nrefusal);

	for (uint32_t i = 0; i < n && i < NET_NAMED; i++) {
		add(w, "%s", i ? ", " : "");
		add_refusal(w, &rep->refusal[i]);
	}
	if (n > NET_NAMED)
		add(w, " and %u more (network.refusals)", n - NET_NAMED);
}

/* The allow and allow_address rules of RULES, as many as fit in
 * NET_RULES_QUOTED bytes; "no host" for none. */
static void
add_allowed(struct words *w, const struct egress_rules *rules)
{
	size_t start = w->len, shown = 0, more = 0;

	for (size_t i = 0; rules != NULL && i < rules->n; i++) {
		char text[RULE_TEXT];
		const struct egress_rule *r = &rules->v[i];

		if (r->kind == EGRESS_RULE_DENY || !rule_text(r, false, text))
			continue;
		if (w->len - start + strlen(text) + 2 > NET_RULES_QUOTED)
			more++;
		else
			add(w, "%s%s", shown++ ? ", " : "", text);
	}
	if (shown == 0 && more == 0)
		add(w, "no host");
	else if (shown == 0)
		add(w, "what its %zu rules say (network.rules)", more);
	else if (more > 0)
		add(w, " and %zu more rules (network.rules)", more);
}

/* The first kept refusal for REASON, or NULL. */
static const struct egress_refusal_rec *
first_for(const struct egress_report *rep, enum egress_reason reason)
{
	for (uint32_t i = 0; i < kept(rep->nrefusal); i++)
		if (rep->refusal[i].reason == reason)
			return &rep->refusal[i];
	return NULL;
}

/* HOST and DETAIL of R, printable(). */
struct shown_rec {
	char host[PRINTABLE_HOST];
	char detail[4 * EGRESS_DETAIL_MAX + 1];
};

static const struct egress_refusal_rec *
shown_for(const struct egress_report *rep, enum egress_reason reason,
    struct shown_rec *out)
{
	const struct egress_refusal_rec *r = first_for(rep, reason);

	if (r != NULL) {
		clip(printable(r->host, sizeof(r->host), out->host));
		printable(r->detail, sizeof(r->detail), out->detail);
	}
	return r;
}

/* What to do about refusals that are the policy's to change. */
static void
advise_policy(struct words *w, const struct result_net *net)
{
	struct shown_rec s;

	if (shown_for(net->report, EGRESS_REASON_NOT_ALLOWED, &s) != NULL) {
		add(w,
		    " %s is not in the policy's [network] allow list, "
		    "which allows ",
		    s.host);
		add_allowed(w, net->rules);
		add(w,
		    ": do not retry or work around it (another host, a "
		    "mirror, an address); ask the user to add the host "
		    "to the policy's [network] allow list.");
	}
	if (shown_for(net->report, EGRESS_REASON_PRIVATE_ADDRESS, &s) != NULL)
		add(w,
		    " %s resolved to a private or local address, which "
		    "only an allow_address rule of the policy permits: ask "
		    "the user to add one to the policy's [network] if the "
		    "job truly needs that address.",
		    s.host);
	if (shown_for(net->report, EGRESS_REASON_BUDGET, &s) != NULL)
		add(w,
		    " The job reached its [network] cap %s: fetch less per "
		    "job, or ask the user to raise that cap in the policy's "
		    "[network].",
		    *s.detail ? s.detail : "on its connections or bytes");
}

/* What to do about refusals that are the program's to fix. */
static void
advise_program(struct words *w, const struct egress_report *rep)
{
	struct shown_rec s;
	bool dns = false, other = false;

	/* Port 53 direct: the program's own resolver (glibc's getaddrinfo
	 * asks the nameserver of resolv.conf), not a client around the
	 * proxy. */
	for (uint32_t i = 0; i < kept(rep->nrefusal); i++)
		if (rep->refusal[i].reason == EGRESS_REASON_DIRECT_CONNECT) {
			dns = dns || rep->refusal[i].port == 53;
			other = other || rep->refusal[i].port != 53;
		}
	if (dns)
		add(w,
		    " The program looked a name up itself (DNS, port 53), "
		    "which the jail does not answer: it has no name "
		    "resolution of its own and the proxy resolves names%s",
		    other ? "." : ", so " USE_THE_PROXY);
	if (other)
		add(w,
		    " The program ignored the proxy and connected "
		    "directly, which the jail never lets "
		    "through: " USE_THE_PROXY);
	if (first_for(rep, EGRESS_REASON_SNI_MISMATCH) != NULL)
		add(w,
		    " The TLS server name the program sent differed from "
		    "the host it asked the proxy for: use the same name in "
		    "the request and in TLS (no server-name override).");
	if (shown_for(rep, EGRESS_REASON_BAD_REQUEST, &s) != NULL)
		add(w,
		    " The program asked the proxy for something that is not "
		    "a valid host and port%s%s%s: check the URL or the "
		    "address it uses.",
		    *s.detail ? " (" : "", s.detail, *s.detail ? ")" : "");
	if (shown_for(rep, EGRESS_REASON_UNREACHABLE, &s) != NULL)
		add(w,
		    " The policy allows %s, but the proxy could not reach "
		    "it (%s): the name did not resolve or the host did not "
		    "answer, which is not the policy's doing; check the URL "
		    "and its host name.",
		    s.host, *s.detail ? s.detail : "unreachable");
}

/* Rule 3 of result_hint_net: an ok or exit_nonzero job with refusals. */
static void
hint_refused(struct words *w, const struct job_result *res,
    const struct result_net *net)
{
	const struct egress_report *rep = net->report;
	unsigned long long n = rep->refusals ? rep->refusals : 1;

	const char *verb = first_for(rep, EGRESS_REASON_UNREACHABLE) != NULL
	    ? "refused or could not make"
	    : "refused";

	if (res->status == JOB_OK)
		add(w,
		    "The program exited with code 0 in %llu ms, but the "
		    "sandbox %s %llu network connection%s (",
		    (unsigned long long)res->wall_ms, verb, n,
		    n == 1 ? "" : "s");
	else
		add(w,
		    "The program exited with code %d after the sandbox "
		    "%s %llu network connection%s (",
		    res->exit_code, verb, n, n == 1 ? "" : "s");
	add_refusals(w, rep);
	add(w, "%s",
	    res->status == JOB_OK
		? "), so its output may be incomplete."
		: "); running it again unchanged will be refused again.");
	advise_program(w, rep);
	advise_policy(w, net);
}

/* Rule 2: the proxy ended during the job. */
static void
hint_proxy_failed(struct words *w, const struct job_result *res)
{
	add(w,
	    "The sandbox itself failed, not the program: its network "
	    "proxy ended during the job (the program exited with code %d), "
	    "so the program's connections were cut or refused from then on "
	    "and its output may be incomplete; tell the user, and run the "
	    "job again only once the user has restarted the session.",
	    res->exit_code);
}

/* Rule 4: a network failure in stderr and no refusal. */
static void
hint_resolve(struct words *w, const struct job_result *res, const char *failure,
    const struct result_net *net)
{
	add(w,
	    "The program exited with code %d after a network failure (its "
	    "stderr says \"%s\"), and the sandbox's proxy refused nothing: "
	    "the jail has no name resolution and no route of its own, and "
	    "reaches outside hosts only through the proxy, which resolves "
	    "names itself, so " USE_THE_PROXY " The policy's [network] "
	    "allows ",
	    res->exit_code, failure);
	add_allowed(w, net->rules);
	add(w, ".");
}

/* Rule 1: the more important hint in BUF keeps its place; one sentence
 * names the network's trouble after it. */
static void
add_note(const struct egress_report *rep, char *buf, size_t size)
{
	char text[RESULT_HINT_MAX];
	struct words w = {text, sizeof(text), 0};
	size_t at = strlen(buf);

	text[0] = '\0';
	if (rep->proxy_failed)
		add(&w,
		    " The sandbox's network proxy also ended during the "
		    "job.");
	else if (rep->refusals > 0 || rep->nrefusal > 0) {
		add(&w, " The sandbox also refused network connections: ");
		add_refusals(&w, rep);
		add(&w, ".");
	}
	if (w.len > 0 && at + 1 < size)
		fmt_words(buf + at, size - at, "%s", text);
}

/* Whether RES ended by its program's own exit, 126 and 127 aside: the
 * ends whose hint the network's may replace. */
static bool
own_exit(const struct job_result *res)
{
	return res->status == JOB_OK ||
	    (res->status == JOB_EXIT_NONZERO && res->exit_code != 126 &&
		res->exit_code != 127);
}

char *
result_hint_net(const struct job_result *res, const struct job_limits *lim,
    const struct capture *err, const struct result_net *net, char *buf,
    size_t size)
{
	const struct egress_report *rep = net != NULL ? net->report : NULL;
	char text[2 * RESULT_HINT_MAX];
	struct words w = {text, sizeof(text), 0};
	const char *failure = NULL;

	if (rep == NULL)
		return result_hint(res, lim, err, buf, size);
	job_hint(res, lim, buf, size);
	if (!own_exit(res)) {
		add_note(rep, buf, size);
		return buf;
	}
	text[0] = '\0';
	if (rep->proxy_failed)
		hint_proxy_failed(&w, res);
	else if (rep->refusals > 0 || rep->nrefusal > 0)
		hint_refused(&w, res, net);
	else if (res->status == JOB_EXIT_NONZERO &&
	    (failure = result_network_failure(err)) != NULL)
		hint_resolve(&w, res, failure, net);
	else
		return buf;
	fmt_words(buf, size, "%s", text);
	if (job_output_truncated(res, lim))
		job_hint_truncation(res, lim, buf, size);
	return buf;
}

bool
result_network_line(const struct result_net *net, char *buf, size_t size)
{
	const struct egress_report *rep = net != NULL ? net->report : NULL;
	struct words w = {buf, size, 0};

	if (size == 0)
		return false;
	buf[0] = '\0';
	if (rep == NULL)
		return false;
	if (rep->proxy_failed)
		add(&w, "the proxy ended during the job%s",
		    rep->refusals > 0 ? "; refused " : "");
	else if (rep->refusals > 0 || rep->nrefusal > 0)
		add(&w, "refused ");
	else
		return false;
	add_refusals(&w, rep);
	return true;
}
