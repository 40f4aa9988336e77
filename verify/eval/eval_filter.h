/*
 * eval_filter.h: `stockade eval filter` (issue 6, item 5;
 * docs/evidence.md, "Code filters are not a sandbox"): the denylist code
 * filter of tests/verify/eval/codefilter/ measured on its own corpora (its
 * report, tests/verify/eval/codefilter/filter_report.py --json), next to
 * what the same hostile programs did when run in the full product.
 */
#ifndef STOCKADE_EVAL_FILTER_H
#define STOCKADE_EVAL_FILTER_H

#include <stdio.h>

#include <jansson.h>

#include "eval_table.h"

/*
 * Runs EVAL_DIR/filter_report.py --json (python3; its standard output one
 * JSON object), then prints to OUT the Markdown table per filter family
 * (the "filterfamily:" header of each hostile program): programs, how
 * many the filter let through and its bypass rate, how many did harm
 * with no sandbox (M's first column, when M has two: the eval runs them
 * bare only when not root) and how many in the full product (M's last
 * column); then the false-positive rate on the ordinary programs, and
 * the harm total in the full product, which must be 0. *JSON gets the same as one object
 * (NULL on ENOMEM). Returns 0, 1 (EXIT_FOUND) when a hostile program did
 * harm in the sandbox, or 70 when the report could not be had (said on
 * stderr).
 */
int eval_filter_report(const char *eval_dir, const struct eval_matrix *m,
    FILE *out, json_t **json);

#endif
