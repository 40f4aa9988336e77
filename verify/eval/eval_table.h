/*
 * eval_table.h: the tables of `stockade eval` (issue 6; docs/evidence.md):
 * attacks by configurations, as Markdown for people and as JSON for
 * programs. Pure: they format what the runs found.
 */
#ifndef STOCKADE_EVAL_TABLE_H
#define STOCKADE_EVAL_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "eval_corpus.h"
#include "eval_run.h"

#include "result.h"

/* The layers of the jail, in the order the layer table adds them
 * (shared/result.h enum job_layer, docs/layers.md). */
#define EVAL_NLAYERS JOB_LAYER_MAX

/* One configuration: the layers it switches off. */
struct eval_config {
	const char *name; /* JSON key: "none", "limits", "fs_only" */
	const char *title; /* table column: "none", "+limits", "fs only" */
	uint32_t layers_off; /* a JOB_LAYER_BIT mask (result.h) */
	/* True: the policy also gets a [network] allow-list naming only the
	 * eval's own "package index", 127.0.0.2 at the honeypot's TCP port
	 * (eval_honeypot.h; issue 25). Jobs then reach it through
	 * stockade-proxy, and nothing else. */
	bool allow_list;
};

enum eval_kind {
	EVAL_KIND_LAYERS, /* cumulative columns, first stop in bold */
	EVAL_KIND_ISOLATION, /* six columns, the channel of each leak */
	EVAL_KIND_CORPUS, /* the full product: one column, evidence */
	EVAL_KIND_FILTER, /* the hostile programs in the full product */
};

/* The runs of one eval: V[a * NCFG + c] is attack A under configuration
 * C. Everything borrowed. */
struct eval_matrix {
	enum eval_kind kind;
	const char *command; /* how to regenerate it ("stockade eval ...") */
	const struct eval_corpus *corpus;
	const struct eval_config *cfg;
	size_t ncfg;
	const struct eval_verdict *v;
};

/* "layers", "isolation", "corpus", "filter". */
const char *eval_kind_name(enum eval_kind k);

/*
 * The column from which attack A is stopped in every later column too
 * (its first stop): 0 when even the first configuration stops it, -1
 * when the last does not (or a run in the tail failed), -2 when it is
 * unknown: a column before it is not run or failed (issue 23 point 9).
 */
int eval_first_stop(const struct eval_matrix *m, size_t a);

/* The short name of the channel of a rule that fired ("tcp", "udp",
 * "unix", "output", "file", "home", "decoy", ...; borrowed). */
const char *eval_channel(const struct eval_evidence *e);

/*
 * Prints M as Markdown to F: the generating command as a comment, the
 * table (✓ stopped, ✗ succeeded, N not run: the attack could not try,
 * E the run failed; for the layer table
 * the first stop of each attack in bold), then a few summary lines.
 * Returns 0, or -EIO when F failed.
 */
int eval_print_markdown(FILE *f, const struct eval_matrix *m);

/*
 * M as one JSON object: {"eval", "command", "version", "configurations":
 * [{"name", "title", "layers_off": [names]}], "attacks": [{"name",
 * "header": {key: value}, "exfil", "first_stop" (layers only; a column's
 * name, or null), "runs": {config name: {"outcome", "status",
 * "exit_code", "wall_ms", "evidence": [{"rule", "where", "detail",
 * "declared"}], "error" (also the reason of a not_run), "output",
 * "attempted"}}}], "summary": {config: {"stopped", "succeeded", "error",
 * "not_run"}}}. NULL on ENOMEM.
 */
json_t *eval_matrix_json(const struct eval_matrix *m);

/*
 * The evaluation named by SUB ("layers", "isolation", "corpus",
 * "filter") into M: its kind, and its configurations (static, in column
 * order; the filter's bare column, and isolation's columns with a layer
 * off, only when not run as root). Returns 0,
 * or -1 when SUB names none (M untouched).
 */
int eval_select_matrix(const char *sub, struct eval_matrix *m);

#endif
