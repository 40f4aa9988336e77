/*
 * policy_words.c: words of the policy language that name a choice
 * (policy_internal.h): [files] commit's modes, the list sections that
 * [policy] replace names, and the scalar keys whose value is such a word
 * (enforcement, on_output_limit, commit), read and written. Pure.
 */
#include "policy_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const commit_names[] = {
    [COMMIT_ALWAYS] = "always",
    [COMMIT_ON_OK] = "on_ok",
    [COMMIT_KEEP] = "keep",
};

bool
policy_parse_commit(const char *key, const char *v, enum commit_mode *out,
    char *why, size_t whylen)
{
	for (int i = COMMIT_ALWAYS; i <= COMMIT_KEEP; i++)
		if (strcmp(v, commit_names[i]) == 0) {
			*out = (enum commit_mode)i;
			return true;
		}
	snprintf(why, whylen,
	    "%s: expected always, on_ok or keep, got \"%.200s\"", key, v);
	return false;
}

const char *
policy_commit_name(enum commit_mode m)
{
	return (unsigned)m <= COMMIT_KEEP ? commit_names[m] : NULL;
}

/* The list sections by their POLICY_LIST_* bit, in the order written. */
static const struct {
	uint32_t bit;
	const char *name;
} list_names[] = {
    {POLICY_LIST_ENVIRONMENT, "environment"},
    {POLICY_LIST_FILESYSTEM, "filesystem"},
    {POLICY_LIST_NETWORK, "network"},
    {POLICY_LIST_WRITEBACK, "writeback"},
};
#define NLISTS (sizeof(list_names) / sizeof(list_names[0]))

const char *
policy_lists_format(uint32_t mask, char *buf, size_t size)
{
	size_t len = 0;

	if ((mask & ~(uint32_t)POLICY_LISTS_ALL) != 0 || size == 0)
		return NULL;
	buf[0] = '\0';
	for (size_t i = 0; i < NLISTS; i++) {
		if (!(mask & list_names[i].bit))
			continue;
		int n = snprintf(buf + len, size - len, "%s%s",
		    len > 0 ? ", " : "", list_names[i].name);
		if (n < 0 || (size_t)n >= size - len)
			return NULL;
		len += (size_t)n;
	}
	return buf;
}

/* The bit of list section W (N bytes), or 0. */
static uint32_t
list_bit(const char *w, size_t n)
{
	for (size_t i = 0; i < NLISTS; i++)
		if (strlen(list_names[i].name) == n &&
		    strncmp(w, list_names[i].name, n) == 0)
			return list_names[i].bit;
	return 0;
}

bool
policy_parse_lists(const char *key, const char *v, uint32_t *out, char *why,
    size_t whylen)
{
	const char *p = v;

	*out = 0;
	while (*p != '\0') {
		uint32_t bit;
		size_t n;

		if (*p == ',' || policy_is_blank(*p)) {
			p++;
			continue;
		}
		n = strcspn(p, ", \t\r\v\f");
		bit = list_bit(p, n);
		if (bit == 0) {
			snprintf(why, whylen,
			    "%s names \"%.*s\", which is no "
			    "list (the lists: environment, filesystem, "
			    "network, writeback)",
			    key, (int)(n > 64 ? 64 : n), p);
			*out = 0;
			return false;
		}
		if (*out & bit) {
			snprintf(why, whylen, "%s names \"%.*s\" twice", key,
			    (int)n, p);
			*out = 0;
			return false;
		}
		*out |= bit;
		p += n;
	}
	return true;
}

bool
policy_set_word(const struct scalar_key *k, const char *v, void *field,
    char *why, size_t whylen)
{
	enum job_enforcement enf;
	enum output_action act;
	enum commit_mode cm;

	if (k->kind == K_ENFORCE &&
	    policy_parse_enforcement(k->name, v, &enf, why, whylen))
		*(enum job_enforcement *)field = enf;
	else if (k->kind == K_OUTPUT &&
	    policy_parse_output_action(k->name, v, &act, why, whylen))
		*(enum output_action *)field = act;
	else if (k->kind == K_COMMIT &&
	    policy_parse_commit(k->name, v, &cm, why, whylen))
		*(enum commit_mode *)field = cm;
	else
		return false;
	return true;
}

const char *
policy_word_text(const struct scalar_key *k, const void *field)
{
	enum output_action act;

	if (k->kind == K_ENFORCE)
		return policy_enforcement_name(
		    *(const enum job_enforcement *)field);
	if (k->kind == K_COMMIT)
		return policy_commit_name(*(const enum commit_mode *)field);
	if (k->kind != K_OUTPUT)
		return NULL;
	act = *(const enum output_action *)field;
	return act == OUTPUT_TRUNCATE || act == OUTPUT_KILL
	    ? policy_output_action_name(act)
	    : NULL;
}
