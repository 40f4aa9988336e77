/*
 * eval_table.c: the tables of `stockade eval`, Markdown and JSON
 * (eval_table.h; issue 6), and the configurations each evaluation runs.
 */
#include "eval_table.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "eval_honeypot.h"
#include "result.h"

#define YES "\u2713" /* ✓ stopped */
#define NO "\u2717" /* ✗ succeeded */

/* ---- the configurations of each evaluation ---------------------------- */

#define ALL JOB_LAYERS_ALL
#define OFF_FROM(n) (JOB_LAYERS_ALL & ~(JOB_LAYER_BIT(n) - 1u))

/* None, then each layer added in the order of shared/result.h: column N
 * has layers 1..N on. */
static const struct eval_config layer_configs[EVAL_NLAYERS + 1] = {
    {"none", "none", ALL},
    {"limits", "+limits", OFF_FROM(JOB_LAYER_PROCESS_GROUP)},
    {"process_group", "+process_group", OFF_FROM(JOB_LAYER_SCRUBBED_ENV)},
    {"scrubbed_env", "+scrubbed_env", OFF_FROM(JOB_LAYER_PRIVATE_CWD)},
    {"private_cwd", "+private_cwd", OFF_FROM(JOB_LAYER_USER_NS)},
    {"user_ns", "+user_ns", OFF_FROM(JOB_LAYER_PID_NS)},
    {"pid_ns", "+pid_ns", OFF_FROM(JOB_LAYER_MOUNT_NS)},
    {"mount_ns", "+mount_ns", OFF_FROM(JOB_LAYER_NETWORK_NS)},
    {"network_ns", "+network_ns", OFF_FROM(JOB_LAYER_IPC_UTS)},
    {"ipc_uts", "+ipc_uts", OFF_FROM(JOB_LAYER_NO_TERMINAL)},
    {"no_terminal", "+no_terminal", OFF_FROM(JOB_LAYER_CAPS_NNP)},
    {"caps_nnp", "+caps_nnp", OFF_FROM(JOB_LAYER_LANDLOCK)},
    {"landlock", "+landlock", OFF_FROM(JOB_LAYER_SECCOMP)},
    {"seccomp", "+seccomp", 0},
};

/* Filesystem isolation is the mount namespace and Landlock; network
 * isolation the network namespace (with Landlock's TCP rules and the
 * abstract unix scope, which go with it: docs/layers.md). */
#define FS_ISOLATION \
	(JOB_LAYER_BIT(JOB_LAYER_MOUNT_NS) | JOB_LAYER_BIT(JOB_LAYER_LANDLOCK))
#define NET_ISOLATION JOB_LAYER_BIT(JOB_LAYER_NETWORK_NS)
/* The fifth (issue 25): both, with a [network] allow-list of the eval's
 * own index and of names only the eval's own resolver answers (with
 * loopback and link-local addresses: cmd_eval.c allow_list_text),
 * reached through stockade-proxy. Before it, the same
 * allow-list with files not isolated: there the key is readable, so
 * that the network attacks are judged on the network alone. */
static const struct eval_config isolation_configs[6] = {
    {"neither", "neither", FS_ISOLATION | NET_ISOLATION, false},
    {"fs_only", "fs only", NET_ISOLATION, false},
    {"net_only", "net only", FS_ISOLATION, false},
    {"both", "both", 0, false},
    {"allow_list_only", "allow-list only", FS_ISOLATION, true},
    {"allow_list", "fs + allow-list", 0, true},
};

/* Root runs only the columns with every layer on (cmd_eval.c). */
static const struct eval_config isolation_root_configs[2] = {
    {"both", "both", 0, false},
    {"allow_list", "fs + allow-list", 0, true},
};

static const struct eval_config full_config[1] = {
    {"full", "full product", 0},
};

/* The hostile programs of the filter evaluation bare (to show the harm
 * the filter let through is real), then in the full product. */
static const struct eval_config filter_configs[2] = {
    {"none", "no sandbox", JOB_LAYERS_ALL},
    {"full", "full product", 0},
};

/* The evaluation named by SUB (eval_table.h). */
int
eval_select_matrix(const char *sub, struct eval_matrix *m)
{
	if (strcmp(sub, "layers") == 0) {
		m->kind = EVAL_KIND_LAYERS;
		m->cfg = layer_configs;
		m->ncfg = EVAL_NLAYERS + 1;
	} else if (strcmp(sub, "isolation") == 0) {
		m->kind = EVAL_KIND_ISOLATION;
		/* As root, only the product's columns: see cmd_eval.c. */
		m->cfg = geteuid() != 0 ? isolation_configs
					: isolation_root_configs;
		m->ncfg = geteuid() != 0 ? 6 : 2;
	} else if (strcmp(sub, "corpus") == 0) {
		m->kind = EVAL_KIND_CORPUS;
		m->cfg = full_config;
		m->ncfg = 1;
	} else if (strcmp(sub, "filter") == 0) {
		/* Bare too, but never as root: see cmd_eval.c, eval_args. */
		m->kind = EVAL_KIND_FILTER;
		m->cfg = geteuid() != 0 ? filter_configs : full_config;
		m->ncfg = geteuid() != 0 ? 2 : 1;
	} else {
		return -1;
	}
	return 0;
}

const char *
eval_kind_name(enum eval_kind k)
{
	switch (k) {
	case EVAL_KIND_LAYERS:
		return "layers";
	case EVAL_KIND_ISOLATION:
		return "isolation";
	case EVAL_KIND_CORPUS:
		return "corpus";
	case EVAL_KIND_FILTER:
		return "filter";
	}
	return "?";
}

static const struct eval_verdict *
at(const struct eval_matrix *m, size_t a, size_t c)
{
	return &m->v[a * m->ncfg + c];
}

int
eval_first_stop(const struct eval_matrix *m, size_t a)
{
	int first = -1;

	for (size_t c = m->ncfg; c-- > 0;) {
		if (at(m, a, c)->outcome != EVAL_STOPPED)
			break;
		first = (int)c;
	}
	/* Unknown when a column before it could not say (N or E): that
	 * column's layers might already have stopped the attack. */
	for (int c = 0; c < first; c++)
		if (at(m, a, (size_t)c)->outcome == EVAL_NOT_RUN ||
		    at(m, a, (size_t)c)->outcome == EVAL_ERROR)
			return -2;
	return first;
}

const char *
eval_channel(const struct eval_evidence *e)
{
	if (strncmp(e->where, "honeypot ", 9) == 0)
		return e->where + 9;
	if (strcmp(e->where, "stdout") == 0 || strcmp(e->where, "stderr") == 0)
		return strcmp(e->rule, "flood") == 0 ? "flood" : "output";
	if (strcmp(e->where, "workspace") == 0 ||
	    strncmp(e->where, "fileapi", 7) == 0)
		return "file";
	if (strcmp(e->rule, "outside") == 0 && e->where[0] == '/')
		return "host fs";
	if (strcmp(e->rule, "leftover") == 0)
		return "leftover";
	return e->where;
}

static const char *
cell(const struct eval_verdict *v)
{
	switch (v->outcome) {
	case EVAL_STOPPED:
		return YES;
	case EVAL_SUCCEEDED:
		return NO;
	case EVAL_ERROR:
		return "E";
	case EVAL_NOT_RUN:
		return "N";
	}
	return "?";
}

/* The first evidence of V as "rule: where: detail", for the tables. */
static void
evidence_text(const struct eval_verdict *v, char *buf, size_t len)
{
	if (v->outcome == EVAL_ERROR)
		snprintf(buf, len, "error: %s", v->error);
	else if (v->outcome == EVAL_NOT_RUN)
		snprintf(buf, len, "not run: %s", v->error);
	else if (v->nev == 0)
		snprintf(buf, len, "%s", v->status[0] ? v->status : "-");
	else
		snprintf(buf, len, "%s: %s: %s%s", v->ev[0].rule,
		    v->ev[0].where, v->ev[0].detail,
		    v->nev > 1 ? " (and more)" : "");
	/* One table cell: no '|' or newline from a path. */
	for (char *p = buf; *p != '\0'; p++)
		if (*p == '|' || *p == '\n' || *p == '\r')
			*p = ' ';
}

static void
print_header(FILE *f, const struct eval_matrix *m, bool family)
{
	fprintf(f, "| attack |%s", family ? " family |" : "");
	for (size_t c = 0; c < m->ncfg; c++)
		fprintf(f, " %s |", m->cfg[c].title);
	fprintf(f, "\n|---|%s", family ? "---|" : "");
	for (size_t c = 0; c < m->ncfg; c++)
		fprintf(f, ":-:|");
	fputc('\n', f);
}

static const char *
family_of(const struct eval_attack *a)
{
	const char *f = eval_attack_get(a, "family");

	return f != NULL ? f : "?";
}

static void
print_layers(FILE *f, const struct eval_matrix *m)
{
	const struct eval_corpus *cp = m->corpus;
	size_t firsts[EVAL_NLAYERS + 1] = {0}, never = 0, none = 0;
	size_t unjudged = 0, notrun = 0, unknown = 0;

	print_header(f, m, true);
	for (size_t a = 0; a < cp->n; a++) {
		int first = eval_first_stop(m, a);

		fprintf(f, "| %s | %s |", cp->v[a].name, family_of(&cp->v[a]));
		for (size_t c = 0; c < m->ncfg; c++)
			fprintf(f, (int)c == first ? " **%s** |" : " %s |",
			    cell(at(m, a, c)));
		fputc('\n', f);
		for (size_t c = 0; c < m->ncfg; c++)
			if (at(m, a, c)->outcome == EVAL_NOT_RUN) {
				notrun++;
				break;
			}
		if (first == -2)
			unknown++;
		else if (first < 0 &&
		    at(m, a, m->ncfg - 1)->outcome != EVAL_SUCCEEDED)
			unjudged++;
		else if (first < 0)
			never++;
		else if (first == 0)
			none++;
		else if ((size_t)first <= EVAL_NLAYERS)
			firsts[first]++;
	}
	fprintf(f,
	    "\n%s stopped (the attack showed its attempt and every "
	    "check it declares found nothing), %s succeeded, N not run "
	    "(the attack could not try: never counted as stopped), E the "
	    "run failed (see the JSON); in bold, the layer that stops the "
	    "attack first (and every layer after it stops it too).\n\n",
	    YES, NO);
	fprintf(f, "Attacks stopped first by each layer:\n\n");
	for (size_t c = 1; c < m->ncfg; c++)
		fprintf(f, "- %s: %zu\n", m->cfg[c].title + 1, firsts[c]);
	if (none > 0)
		fprintf(f,
		    "- (no layer: the attack failed even with every "
		    "layer off): %zu\n",
		    none);
	if (unknown > 0)
		fprintf(f,
		    "- (unknown: a column before its stops is N or E, "
		    "no cell in bold): %zu\n",
		    unknown);
	fprintf(f, "\nAttacks the full product does not stop: %zu\n", never);
	if (unjudged > 0)
		fprintf(f,
		    "\nAttacks the full product could not be judged "
		    "on (not run, or the run failed): %zu\n",
		    unjudged);
	fprintf(f, "\nAttacks not run in at least one column: %zu\n", notrun);
}

static void
print_isolation(FILE *f, const struct eval_matrix *m)
{
	const struct eval_corpus *cp = m->corpus;
	size_t leaks[8] = {0};

	print_header(f, m, false);
	for (size_t a = 0; a < cp->n; a++) {
		fprintf(f, "| %s |", cp->v[a].name);
		for (size_t c = 0; c < m->ncfg && c < 8; c++) {
			const struct eval_verdict *v = at(m, a, c);

			if (v->outcome == EVAL_SUCCEEDED) {
				fprintf(f, " %s %s |", NO,
				    eval_channel(&v->ev[0]));
				leaks[c]++;
			} else {
				fprintf(f, " %s |", cell(v));
			}
		}
		fputc('\n', f);
	}
	fprintf(f,
	    "\n%s stopped; %s the secret got out, by the channel "
	    "named (tcp, udp, unix: the honeypot on the host's loopback; "
	    "index: the one host the allow-list names, the eval's own "
	    "index on %s, reached through stockade-proxy: the allowed "
	    "host is an exit; dns: the hex of the names the proxy asked "
	    "the eval's resolver, the honeypot's UDP socket, for: a "
	    "wildcard allow is a DNS exit; output: the job's stdout or "
	    "stderr; file: a "
	    "workspace file the agent returns); N not run (the attack "
	    "could not try); E the run failed.\n\n",
	    YES, NO, EVAL_INDEX_ADDR);
	fprintf(f, "Secrets that got out, of %zu exfiltration attacks:\n\n",
	    cp->n);
	for (size_t c = 0; c < m->ncfg && c < 8; c++)
		fprintf(f, "- %s: %zu\n", m->cfg[c].title, leaks[c]);
}

static void
print_corpus(FILE *f, const struct eval_matrix *m)
{
	const struct eval_corpus *cp = m->corpus;
	size_t bad = 0, err = 0, notrun = 0;
	char ev[512];

	fprintf(f,
	    "| attack | family | %s | status or evidence |\n"
	    "|---|---|:-:|---|\n",
	    m->cfg[0].title);
	for (size_t a = 0; a < cp->n; a++) {
		const struct eval_verdict *v = at(m, a, 0);

		evidence_text(v, ev, sizeof(ev));
		fprintf(f, "| %s | %s | %s | %s |\n", cp->v[a].name,
		    family_of(&cp->v[a]), cell(v), ev);
		bad += v->outcome == EVAL_SUCCEEDED;
		err += v->outcome == EVAL_ERROR;
		notrun += v->outcome == EVAL_NOT_RUN;
	}
	fprintf(f,
	    "\n%zu attacks: %zu stopped, %zu succeeded, %zu not run, "
	    "%zu failed to run.\n",
	    cp->n, cp->n - bad - err - notrun, bad, notrun, err);
}

int
eval_print_markdown(FILE *f, const struct eval_matrix *m)
{
	fprintf(f,
	    "Generated by `%s` (stockade %s); regenerate it with "
	    "that command, do not edit it.\n\n",
	    m->command, STOCKADE_VERSION);
	switch (m->kind) {
	case EVAL_KIND_LAYERS:
		print_layers(f, m);
		break;
	case EVAL_KIND_ISOLATION:
		print_isolation(f, m);
		break;
	case EVAL_KIND_CORPUS:
	case EVAL_KIND_FILTER:
		print_corpus(f, m);
		break;
	}
	return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *
layers_json(uint32_t off)
{
	json_t *a = json_array();

	for (int i = 1; a != NULL && i <= JOB_LAYER_MAX; i++)
		if ((off & JOB_LAYER_BIT(i)) &&
		    json_array_append_new(a, json_string(job_layer_name(i))) <
			0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
verdict_json(const struct eval_verdict *v)
{
	json_t *ev = json_array();

	for (size_t i = 0; ev != NULL && i < v->nev; i++) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:b}", "rule",
		    v->ev[i].rule, "where", v->ev[i].where, "detail",
		    v->ev[i].detail, "declared", v->ev[i].declared);

		if (o == NULL || json_array_append_new(ev, o) < 0) {
			json_decref(ev);
			return NULL;
		}
	}
	if (ev == NULL)
		return NULL;
	return json_pack("{s:s, s:s?, s:i, s:o, s:o, s:s?, s:s, s:b}",
	    "outcome", eval_outcome_name(v->outcome), "status",
	    v->status[0] ? v->status : NULL, "exit_code", v->exit_code,
	    "wall_ms",
	    v->wall_ms >= 0 ? json_integer((json_int_t)v->wall_ms)
			    : json_null(),
	    "evidence", ev, "error",
	    v->outcome == EVAL_ERROR || v->outcome == EVAL_NOT_RUN ? v->error
								   : NULL,
	    "output", v->output, "attempted", v->attempted);
}

static json_t *
attack_json(const struct eval_matrix *m, size_t a)
{
	const struct eval_attack *at_ = &m->corpus->v[a];
	json_t *o = json_object(), *h = json_object(), *runs = json_object();
	bool ok = o != NULL && h != NULL && runs != NULL;

	for (size_t i = 0; ok && i < at_->nkv; i++)
		if (json_object_get(h, at_->kv[i].key) == NULL)
			ok = json_object_set_new(h, at_->kv[i].key,
				 json_string(at_->kv[i].value)) == 0;
	for (size_t c = 0; ok && c < m->ncfg; c++)
		ok = json_object_set_new(runs, m->cfg[c].name,
			 verdict_json(at(m, a, c))) == 0;
	ok = ok && json_object_set_new(o, "name", json_string(at_->name)) == 0;
	if (ok) {
		ok = json_object_set_new(o, "header", h) == 0;
		h = NULL; /* taken, even on failure */
	}
	ok = ok &&
	    json_object_set_new(o, "exfil", json_boolean(at_->exfil)) == 0;
	if (ok && m->kind == EVAL_KIND_LAYERS) {
		int first = eval_first_stop(m, a);

		ok = json_object_set_new(o, "first_stop",
			 first < 0 ? json_null()
				   : json_string(m->cfg[first].name)) == 0;
	}
	if (ok) {
		ok = json_object_set_new(o, "runs", runs) == 0;
		runs = NULL;
	}
	json_decref(h);
	json_decref(runs);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
eval_matrix_json(const struct eval_matrix *m)
{
	json_t *cfgs = json_array(), *atk = json_array(), *sum = json_object();
	json_t *o;
	bool ok = cfgs != NULL && atk != NULL && sum != NULL;

	for (size_t c = 0; ok && c < m->ncfg; c++) {
		size_t stopped = 0, succeeded = 0, failed = 0, not_run = 0;
		json_t *one;

		for (size_t a = 0; a < m->corpus->n; a++) {
			stopped += at(m, a, c)->outcome == EVAL_STOPPED;
			succeeded += at(m, a, c)->outcome == EVAL_SUCCEEDED;
			failed += at(m, a, c)->outcome == EVAL_ERROR;
			not_run += at(m, a, c)->outcome == EVAL_NOT_RUN;
		}
		one = json_pack("{s:s, s:s, s:o?, s:b}", "name", m->cfg[c].name,
		    "title", m->cfg[c].title, "layers_off",
		    layers_json(m->cfg[c].layers_off), "allow_list",
		    m->cfg[c].allow_list);
		ok = one != NULL && json_array_append_new(cfgs, one) == 0;
		ok = ok &&
		    json_object_set_new(sum, m->cfg[c].name,
			json_pack("{s:I, s:I, s:I, s:I}", "stopped",
			    (json_int_t)stopped, "succeeded",
			    (json_int_t)succeeded, "error", (json_int_t)failed,
			    "not_run", (json_int_t)not_run)) == 0;
	}
	for (size_t a = 0; ok && a < m->corpus->n; a++)
		ok = json_array_append_new(atk, attack_json(m, a)) == 0;
	if (!ok) {
		json_decref(cfgs);
		json_decref(atk);
		json_decref(sum);
		return NULL;
	}
	o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "eval",
	    eval_kind_name(m->kind), "command", m->command, "version",
	    STOCKADE_VERSION, "configurations", cfgs, "attacks", atk, "summary",
	    sum);
	return o;
}
