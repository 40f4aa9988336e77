/* result_json.h: a job's result as the JSON object every front returns. */
#ifndef STOCKADE_RESULT_JSON_H
#define STOCKADE_RESULT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "capture.h"
#include "egress_ctl.h"
#include "result.h"

/*
 * A job's network as its result reports it (issue 25; docs/results.md,
 * "network"): REPORT, the egress proxy's report of the job (its
 * connections and refusals; proxy_failed set by the broker when the proxy
 * ended during the job), and RULES, the [network] rules the job ran under
 * (may be NULL: none listed). Both borrowed. A job without a [network]
 * allow-list has no result_net (NULL, or REPORT NULL): its result has no
 * "network" key and its hints are those of a sandbox without a network.
 */
struct result_net {
	const struct egress_report *report;
	const struct egress_rules *rules;
};

/*
 * Builds the result object (README.md, "Result fields"): status,
 * exit_code, signal, wall_ms, cpu_ms, peak_memory_kb, peak_processes,
 * stdout, stderr, stdout_truncated, stderr_truncated, stdout_bytes,
 * stderr_bytes, limits, enforcement, landlock_abi, denials, layers_off
 * (the names of RES->layers_off, [] for the whole product), detail,
 * hint; docs/result.schema.json is its schema. OUT and ERR are the captures of the two streams
 * (borrowed): kept head and tail with RESULT_TRUNC_MARKER between them,
 * every invalid byte as U+FFFD and every terminal control character but
 * tab, newline and carriage return in caret notation (ESC as "^[",
 * utf8.h term_escape), so that the result is safe to print anywhere.
 * Every other string (the detail, the hint that may quote it) is made
 * safe the same way, whatever bytes RES's detail holds. Returns a new reference the caller releases with
 * json_decref, or NULL with errno ENOMEM when memory runs out (the only
 * failure).
 */
json_t *result_to_json(const struct job_result *res,
    const struct job_limits *lim, const struct capture *out,
    const struct capture *err);

/*
 * Adds to RESULT (an object result_to_json made from RES, LIM, OUT and
 * ERR, all borrowed, passed again here) the "network" object of NET
 * (result_network_json) and replaces its "hint" with the one of the job
 * with its network (result_hint_net, with what result_to_json adds for an
 * output lost to memory). The broker calls it after result_to_json and
 * before the result is printed or sent, for every job that ran with a
 * [network] allow-list. NET NULL or NET->report NULL: RESULT is left as it
 * is (a job without a network has no "network" key) and 0 is returned.
 * Returns 0, or -ENOMEM (RESULT may then lack "network"; the caller
 * treats it as result_to_json's NULL).
 */
int result_add_network(json_t *result, const struct job_result *res,
    const struct job_limits *lim, const struct capture *out,
    const struct capture *err, const struct result_net *net);

/*
 * The "network" object of NET->report (non-NULL) and NET->rules
 * (docs/result.schema.json, "network"): connections and refusals as the
 * report keeps them (at most EGRESS_REPORT_MAX each, in the order first
 * seen), the totals, whether a list was truncated, "proxy" "ok" or
 * "failed", and "rules": each rule as "KIND TEXT" (egress_rule_kind_name,
 * egress_rule_format; a hand-built rule the format refuses is left out).
 * Every string is made safe as result_to_json's (result_safe_json),
 * whatever bytes a hand-built report holds; a field that is not
 * NUL-terminated is read to its end. Counts past INT64_MAX are shown as
 * INT64_MAX. Returns a new reference, or NULL (ENOMEM).
 */
json_t *result_network_json(const struct result_net *net);

/*
 * DATA[0..LEN) of any bytes as a JSON string safe to print anywhere:
 * valid UTF-8 (U+FFFD for what is not) with every terminal control but
 * tab, newline and carriage return in caret notation (utf8.h
 * term_escape). Returns a new reference, or NULL when memory runs out.
 */
json_t *result_safe_json(const void *data, size_t len);

/* The limits as a JSON object keyed by the policy's key names. */
json_t *limits_to_json(const struct job_limits *lim);

/*
 * The hint of a result (job_hint, result.h) into BUF (SIZE bytes), except
 * that a program that ended exit_nonzero after a network failure gets
 * one that says the sandbox has no network and what to do instead: its
 * stderr ERR (borrowed; NULL: not looked at), head and tail as kept,
 * names a failed name lookup or an unreachable network (glibc's, curl's,
 * Node's and Python's messages for EAI_AGAIN, EAI_NONAME, ENETUNREACH,
 * EHOSTUNREACH). Returns BUF.
 */
char *result_hint(const struct job_result *res, const struct job_limits *lim,
    const struct capture *err, char *buf, size_t size);

/*
 * result_hint for a job that ran with a network (NET, as for
 * result_add_network; NULL or NET->report NULL: exactly result_hint).
 * In this order (docs/results.md, "The network hint"):
 *  1. A job that did not end by its own exit (timeout, a limit, crash,
 *     policy_violation, cancelled, sandbox_error), or ended exit_nonzero
 *     with 126 or 127, keeps job_hint's hint, the more important; when
 *     the proxy refused connections or ended, one sentence is added that
 *     names them.
 *  2. The proxy ended during the job (NET->report->proxy_failed): "The
 *     sandbox itself failed, not the program", tell the user.
 *  3. Refusals (ok or exit_nonzero): the refused host:port entries (at
 *     most 3, with reason and detail) and, for each reason among the
 *     entries, what to do: not_allowed, what the policy allows and "ask
 *     the user to add" the host to its [network] allow list, never work
 *     around it; private_address, that only an allow_address rule permits
 *     it; direct_connect, that the program ignored the proxy and "must use
 *     the proxy" (HTTP_PROXY, HTTPS_PROXY), or to port 53 that it looked a
 *     name up itself, which the jail does not answer; sni_mismatch, that the TLS
 *     server name differed from the host; budget, which cap, and "ask the
 *     user to raise" it; bad_request, that the request named no valid
 *     host and port. An ok job's hint says its output may be incomplete.
 *  4. No refusal, exit_nonzero and a network failure in ERR (result_hint's
 *     messages): the proxy resolves names, the program "must use the
 *     proxy", and what the policy allows.
 *  5. Otherwise job_hint's hint.
 * A job whose output was truncated gets job_hint_truncation's sentence
 * after 2 to 4 as after any hint. Hosts and details are quoted
 * printable (every byte outside 0x21..0x7e as \xHH), a host cut to 100
 * bytes and "...". Returns BUF.
 */
char *result_hint_net(const struct job_result *res,
    const struct job_limits *lim, const struct capture *err,
    const struct result_net *net, char *buf, size_t size);

/*
 * The message of a failed name lookup or an unreachable network that
 * ERR (the job's stderr capture, head and tail as kept; borrowed; NULL:
 * none) holds, as result_hint lists them (a static string), or NULL.
 */
const char *result_network_failure(const struct capture *err);

/*
 * The network line of `stockade run`'s summary for NET (result_print_summary)
 * into BUF (SIZE bytes, NUL-terminated, cut when full): "refused HOST:PORT
 * (REASON[, DETAIL][, N times]), ..." (at most 3 entries, then "and N
 * more"), or "the proxy ended during the job[; refused ...]". Not yet
 * made safe for a terminal. Returns false (BUF empty) when there is
 * nothing to say: no network, no refusal, the proxy ok.
 */
bool result_network_line(const struct result_net *net, char *buf, size_t size);

/* Room for a hint: its fixed words and a whole detail (JOB_MAX_DETAIL). */
#define RESULT_HINT_MAX 2048

/* What stands where the middle of a truncated stream was dropped. */
#define RESULT_TRUNC_MARKER "\n[... stockade: output truncated here ...]\n"

/*
 * Writes the compact text form of the result object RESULT (as made by
 * result_to_json; borrowed) to OUT: what a model reads (docs/tool.md):
 *
 *     status: NAME
 *     hint: HINT
 *     figures: exit_code=N|none signal=NAME|none wall_ms=N cpu_ms=N
 *              peak_memory_kb=N peak_processes=N enforcement=NAME
 *     detail: DETAIL                (only when not empty)
 *     layers off: NAME, NAME        (only in an evaluation)
 *     denied: ...                   (only when the filter refused)
 *     network: ...                  (only with a "network" object:
 *     connected: ...                 result_print_network)
 *     refused: ...
 *     rules: ...
 *     --- stdout (N bytes[, truncated: head and tail kept]) ---
 *     TEXT
 *     --- stderr (N bytes...) ---
 *     TEXT
 *
 * (figures on one line). Returns 0, or -1 when OUT fails (errno set).
 */
int result_print_text(const json_t *result, FILE *out);

/*
 * Writes the lines of the "network" object NETWORK (result_network_json;
 * borrowed) to OUT, for result_print_text (docs/tool.md):
 *
 *     network: connections N (B bytes out, B bytes in), refused N,
 *              proxy ok|failed[, lists truncated]
 *     connected: HOST:PORT xN (ADDRESS, B out, B in), ...   (when any)
 *     refused: HOST:PORT REASON[ (DETAIL)] xN, ...          (when any)
 *     rules: allow pypi.org, allow_address 10.0.0.0/8:8080, ...
 *
 * (the first on one line; "rules: none" when none). Nothing for a
 * NETWORK that is not an object.
 */
void result_print_network(const json_t *network, FILE *out);

/* Whether HOST (NUL-terminated) is IPv6 address text: a colon, and only
 * hex digits, colons and dots; such a host is written "[HOST]:PORT". */
bool result_is_ipv6_text(const char *host);

/*
 * Writes the summary of `stockade run` without --json to OUT: "stockade:
 * STATUS (exit N | SIGNAL), wall N ms, cpu N ms, peak N KiB"; with a
 * network (NET, as for result_add_network; NULL: none) that refused
 * connections or whose proxy ended, "stockade: network: refused
 * HOST:PORT (REASON) xN, ..." (at most 3 entries, "and N more") or
 * "stockade: network: the proxy ended during the job"; then, unless the
 * status is ok, the output whole (job_output_truncated) and that network
 * line absent, "stockade: hint: HINT" (result_hint_net, with ERR, the
 * job's stderr capture or NULL). Every line is made safe for a terminal
 * (result_safe_json). RES, LIM, ERR and NET are borrowed.
 */
void result_print_summary(const struct job_result *res,
    const struct job_limits *lim, const struct capture *err,
    const struct result_net *net, FILE *out);

#endif
