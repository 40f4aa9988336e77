/* policy_format.c: writing a policy back in canonical form, and with
 * where each line came from (policy_show) (policy.h). */
#include "policy_internal.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>

/* ---- Formatting -------------------------------------------------------- */

/*
 * True when "KEY = V" reads back as exactly V: inih strips blanks around a
 * value and cuts it at a ";" that follows a blank, and the reader refuses
 * control characters and lines over its limit (checked by put_kv).
 */
static bool
representable(const char *v)
{
	size_t len = strlen(v);
	const char *s;

	if (policy_has_control(v))
		return false;
	if (len && (policy_is_blank(v[0]) || policy_is_blank(v[len - 1])))
		return false;
	for (s = v; *s; s++)
		if (policy_is_blank(*s) && s[1] == ';')
			return false;
	return true;
}

/* Longest line our reader accepts: inih's buffer less the NUL. Debian's
 * inih sizes it by ini_max_line (default INI_MAX_LINE). */
#define LINE_MAX_BYTES ((size_t)INI_MAX_LINE - 1)

/* Writes "KEY = V", or "KEY=V" when the spaces would make the line too long
 * or V starts with ";" (which inih reads as a comment after a blank). With
 * OUT NULL, only checks that the line can be written. */
static int
put_kv(FILE *out, const char *key, const char *v)
{
	size_t klen = strlen(key), vlen = strlen(v);

	if (!representable(v) || klen + 1 + vlen > LINE_MAX_BYTES)
		return -EINVAL;
	if (!out)
		return 0;
	if (vlen == 0)
		return fprintf(out, "%s =\n", key) < 0 ? -EIO : 0;
	if (v[0] == ';' || klen + 3 + vlen > LINE_MAX_BYTES)
		return fprintf(out, "%s=%s\n", key, v) < 0 ? -EIO : 0;
	return fprintf(out, "%s = %s\n", key, v) < 0 ? -EIO : 0;
}

/* Points *V at text scalar K's value in FIELD (policy_kind_is_text),
 * checked as the loader would: 0, or -EINVAL for none or one the loader
 * refuses. */
static int
text_scalar_text(const struct scalar_key *k, const char *field, const char **v)
{
	char why[POLICY_ERR_MAX];
	bool ok;

	*v = *(char *const *)(const void *)field;
	if (!*v)
		return -EINVAL;
	if ((k->kind == K_CGROUP || k->kind == K_RESOLVER) && **v == '\0')
		return 0;
	if (k->kind == K_HOSTNAME)
		ok = policy_valid_hostname(k->name, *v, why, sizeof(why));
	else if (k->kind == K_USER)
		ok = policy_valid_user(k->name, *v, why, sizeof(why));
	else if (k->kind == K_PATH || k->kind == K_CGROUP)
		ok = policy_valid_path(k->name, *v, why, sizeof(why));
	else if (k->kind == K_PROFILE)
		ok = policy_valid_profile(k->name, *v, why, sizeof(why));
	else if (k->kind == K_RESOLVER)
		ok = policy_valid_resolver(k->name, *v, why, sizeof(why));
	else
		ok = policy_valid_client_env(k->name, *v, why, sizeof(why));
	return ok ? 0 : -EINVAL;
}

/* Formats scalar K of P as it is written in a file, into BUF. */
static int
scalar_text(const struct policy *p, const struct scalar_key *k, char *buf,
    size_t size, const char **v)
{
	const char *field = (const char *)p + k->offset;
	char why[POLICY_ERR_MAX];
	uint64_t n, check;
	uint32_t mode;
	bool ok;

	*v = buf;
	if (policy_kind_is_text(k->kind))
		return text_scalar_text(k, field, v);
	switch (k->kind) {
	case K_U64:
	case K_U32:
		n = k->kind == K_U64 ? *(const uint64_t *)(const void *)field
				     : *(const uint32_t *)(const void *)field;
		if (n % k->unit != 0)
			return -EINVAL;
		snprintf(buf, size, "%llu", (unsigned long long)(n / k->unit));
		ok = policy_parse_number(k->name, buf, k->min, k->max, &check,
		    why, sizeof(why));
		break;
	case K_BOOL:
		*v = *(const bool *)(const void *)field ? "true" : "false";
		return 0;
	case K_MODE:
		/* "0755": four digits, the first 0 for a value within 0777;
		 * checked by reading the text back as the loader would. */
		n = *(const uint32_t *)(const void *)field;
		if (n > 07777)
			return -EINVAL;
		snprintf(buf, size, "%04llo", (unsigned long long)n);
		ok = policy_parse_mode(k->name, buf, k->max, &mode, why,
		    sizeof(why));
		break;
	case K_ENFORCE:
	case K_OUTPUT:
	case K_COMMIT:
		*v = policy_word_text(k, field);
		return *v ? 0 : -EINVAL;
	case K_LAYERS:
		n = *(const uint32_t *)(const void *)field;
		if ((n & ~(uint64_t)JOB_LAYERS_ALL) != 0)
			return -EINVAL;
		job_layers_format((uint32_t)n, buf, size);
		return strlen(buf) + 1 < size ? 0 : -EINVAL;
	case K_LISTS:
		*v = policy_lists_format(*(const uint32_t *)(const void *)field,
		    buf, size);
		return *v ? 0 : -EINVAL;
	case K_HOSTNAME: /* text: text_scalar_text() */
	case K_USER:
	case K_PATH:
	case K_CGROUP:
	case K_PROFILE:
	case K_ENVNAMES:
	case K_RESOLVER:
	default:
		return -EINVAL;
	}
	return ok ? 0 : -EINVAL;
}

/* Writes the first comment line: "# ... NAME", made safe for one line. */
static int
put_header(FILE *out, const char *name)
{
	char buf[128];
	size_t i, n = strlen(name);

	/* A path may hold a newline, which would end the comment and start
	 * policy text: replace controls, and truncate to fit a line. */
	for (i = 0; i < n && i < sizeof(buf) - 1; i++)
		buf[i] = (unsigned char)name[i] < 0x20 || name[i] == 0x7f
		    ? '?'
		    : name[i];
	buf[i] = '\0';
	return fprintf(out, "# stockade policy (canonical form of %s%s)\n", buf,
		   n > i ? "..." : "") < 0
	    ? -EIO
	    : 0;
}

static const char *
mount_key(enum mount_kind kind)
{
	switch (kind) {
	case MOUNT_RO_BIND_TRY:
		return "ro_bind_try";
	case MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK:
		return "unsafe_ro_bind_no_landlock";
	case MOUNT_RO_BIND:
	default:
		return "ro_bind";
	}
}

/* Copies the NAME of "NAME=value" into NAME (LINE_MAX_BYTES + 1 bytes). */
static const char *
env_split(const char *entry, char *name)
{
	const char *eq = entry ? strchr(entry, '=') : NULL;

	if (!eq || (size_t)(eq - entry) > LINE_MAX_BYTES)
		return NULL;
	memcpy(name, entry, (size_t)(eq - entry));
	name[eq - entry] = '\0';
	return policy_valid_env_name(name) ? eq + 1 : NULL;
}

/* Writes [network] rule R as a value into BUF (EGRESS_RULE_BUF bytes):
 * 0, or -EINVAL for a rule that would not load back as itself. */
static int
net_rule_text(const struct egress_rule *r, char *buf, size_t size)
{
	struct egress_rule back;

	if (egress_rule_format(r, buf, size) < 0 ||
	    egress_rule_parse(r->kind, buf, &back) < 0 ||
	    !egress_rule_eq(r, &back))
		return -EINVAL;
	return put_kv(NULL, egress_rule_kind_name(r->kind), buf);
}

/* [network]'s rules: each writes and loads back as itself, at most
 * EGRESS_MAX_RULES, none twice. */
static int
check_net(const struct policy *p)
{
	char text[EGRESS_RULE_BUF];
	const struct egress_rules *rules = &p->net.rules;

	if (rules->n > EGRESS_MAX_RULES || (rules->n > 0 && !rules->v))
		return -EINVAL;
	for (size_t i = 0; i < rules->n; i++) {
		if (net_rule_text(&rules->v[i], text, sizeof(text)) < 0)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (egress_rule_eq(&rules->v[j], &rules->v[i]))
				return -EINVAL;
	}
	return 0;
}

/* Writes [writeback] rule R's value, "PATTERN" or "PATTERN drivers",
 * into BUF: 0, or -EINVAL for a rule that would not load back as itself. */
static int
wb_rule_text(const struct wb_rule *r, char *buf, size_t size)
{
	const char *key = policy_wb_action_name(r->action);
	int n;

	if (key == NULL || r->pattern == NULL ||
	    writeback_pattern_error(r->pattern) != NULL)
		return -EINVAL;
	n = snprintf(buf, size, "%s%s", r->pattern,
	    r->drivers ? " drivers" : "");
	if (n < 0 || (size_t)n >= size)
		return -EINVAL;
	return put_kv(NULL, key, buf);
}

/* [writeback]'s rules: each writes and loads back as itself, at most
 * POLICY_MAX_WB_RULES, no pattern and qualifier twice, and none at all
 * only when [policy] replace names the list (no section loads back as
 * the default's). */
static int
check_wb(const struct policy *p)
{
	const struct wb_policy *wb = &p->writeback;
	char text[LINE_MAX_BYTES + 1];

	if (wb->n > POLICY_MAX_WB_RULES || (wb->n > 0 && !wb->rules) ||
	    (wb->n == 0 && !(p->replace & POLICY_LIST_WRITEBACK)))
		return -EINVAL;
	for (size_t i = 0; i < wb->n; i++) {
		if (wb_rule_text(&wb->rules[i], text, sizeof(text)) < 0)
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (wb->rules[j].drivers == wb->rules[i].drivers &&
			    strcmp(wb->rules[j].pattern,
				wb->rules[i].pattern) == 0)
				return -EINVAL;
	}
	return 0;
}

/*
 * Everything P holds must come back from a load: in range, valid, each
 * line within the reader's limit, no empty list (end_section()), no
 * repeated variable or mount. A hand-built policy can break any of these.
 */
static int
check_format(const struct policy *p)
{
	char num[256], name[LINE_MAX_BYTES + 1], other[LINE_MAX_BYTES + 1];
	char why[POLICY_ERR_MAX];
	const char *v;
	size_t i, j;
	int r;

	for (i = 0; i < NSCALARS; i++) {
		r = scalar_text(p, &policy_scalar_keys[i], num, sizeof(num),
		    &v);
		if (r == 0)
			r = put_kv(NULL, policy_scalar_keys[i].name, v);
		if (r < 0)
			return r;
	}
	/* An empty list is written as no section, which loads back as
	 * empty only when [policy] replace names it. */
	if ((p->nenv == 0 && !(p->replace & POLICY_LIST_ENVIRONMENT)) ||
	    p->nenv > JOB_MAX_ENV ||
	    (p->nmounts == 0 && !(p->replace & POLICY_LIST_FILESYSTEM)) ||
	    p->nmounts > JOB_MAX_MOUNTS)
		return -EINVAL;
	for (i = 0; i < p->nenv; i++) {
		v = env_split(p->env[i], name);
		if (!v || put_kv(NULL, name, v) < 0)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (env_split(p->env[j], other) &&
			    strcmp(name, other) == 0)
				return -EINVAL;
	}
	for (i = 0; i < p->nmounts; i++) {
		const struct mount_entry *m = &p->mounts[i];

		if ((m->kind != MOUNT_RO_BIND && m->kind != MOUNT_RO_BIND_TRY &&
			m->kind != MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK) ||
		    !m->source || !m->target ||
		    strcmp(m->source, m->target) != 0 ||
		    !policy_valid_path("", m->source, why, sizeof(why)) ||
		    put_kv(NULL, mount_key(m->kind), m->source) < 0)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (strcmp(p->mounts[j].target, m->target) == 0)
				return -EINVAL;
	}
	r = check_net(p);
	return r < 0 ? r : check_wb(p);
}

/* Writes where a line came from: "default:N" or "file:N" into BUF. */
static const char *
origin_text(const struct policy_origin *o, char *buf, size_t size)
{
	if (o == NULL || o->line == 0)
		snprintf(buf, size, "unknown");
	else
		snprintf(buf, size, "%s:%u", o->in_file ? "file" : "default",
		    o->line);
	return buf;
}

/*
 * Writes "KEY = V", and with FROM (policy_show) where it came from: after
 * it as an inline comment (" ; default:12", which inih strips after a
 * blank) where the line stays within the reader's limit and V is neither
 * empty nor written "KEY=V" (either would read the comment as the value);
 * else as a comment line "; KEY: default:12" before it.
 */
static int
put_entry(FILE *out, const char *key, const char *v,
    const struct policy_origin *from)
{
	char where[64];
	size_t klen = strlen(key), vlen = strlen(v);
	int r;

	if (from == NULL)
		return put_kv(out, key, v);
	origin_text(from, where, sizeof(where));
	if (vlen > 0 && v[0] != ';' && representable(v) &&
	    klen + 3 + vlen + 3 + strlen(where) <= LINE_MAX_BYTES) {
		r = fprintf(out, "%s = %s ; %s\n", key, v, where);
		return r < 0 ? -EIO : 0;
	}
	if (klen + 4 + strlen(where) <= LINE_MAX_BYTES &&
	    fprintf(out, "; %s: %s\n", key, where) < 0)
		return -EIO;
	return put_kv(out, key, v);
}

/*
 * Writes the comment under list section SEC's header in policy_show: the
 * list is the file's alone ([policy] replace), or the default's with the
 * file's entries laid over it. Nothing for the default alone.
 */
static int
put_list_note(FILE *out, const struct policy *p, enum section sec, uint32_t bit,
    const struct policy_origin *from, size_t n)
{
	char where[64];
	bool any = false;
	size_t i;

	for (i = 0; from != NULL && i < n; i++)
		any = any || from[i].in_file;
	if (p->replace & bit) {
		for (i = 0; i < NSCALARS; i++)
			if (policy_scalar_keys[i].kind == K_LISTS)
				break;
		origin_text(i < NSCALARS ? &p->scalar_from[i] : NULL, where,
		    sizeof(where));
		return fprintf(out,
			   "; the file's list alone: [policy] replace "
			   "= %s (%s) leaves out the default's\n",
			   policy_section_names[sec], where) < 0
		    ? -EIO
		    : 0;
	}
	if (any)
		return fprintf(out,
			   "; the default's list, the file's entries "
			   "added or in place of the default's\n") < 0
		    ? -EIO
		    : 0;
	return 0;
}

/* Writes "[SEC]" and its scalar keys; SHOW adds where each came from. */
static int
put_scalars(FILE *out, const struct policy *p, enum section sec, bool show)
{
	char num[256];
	const char *v;
	int r = 0;

	if (fprintf(out, "\n[%s]\n", policy_section_names[sec]) < 0)
		return -EIO;
	for (size_t i = 0; r == 0 && i < NSCALARS; i++) {
		if (policy_scalar_keys[i].section != sec)
			continue;
		r = scalar_text(p, &policy_scalar_keys[i], num, sizeof(num),
		    &v);
		if (r == 0)
			r = put_entry(out, policy_scalar_keys[i].name, v,
			    show ? &p->scalar_from[i] : NULL);
	}
	return r;
}

/* Writes [environment] and [filesystem]. An empty list (replaced by
 * none) is no section: an empty one is refused on reading
 * (end_section). */
static int
put_lists(FILE *out, const struct policy *p, bool show)
{
	char name[LINE_MAX_BYTES + 1];
	const char *v;
	size_t i;
	int r = 0;

	if (p->nenv > 0 && fprintf(out, "\n[environment]\n") < 0)
		return -EIO;
	if (show && p->nenv > 0)
		r = put_list_note(out, p, SEC_ENVIRONMENT,
		    POLICY_LIST_ENVIRONMENT, p->env_from, p->nenv);
	for (i = 0; r == 0 && i < p->nenv; i++) {
		v = env_split(p->env[i], name);
		r = put_entry(out, name, v,
		    show && p->env_from ? &p->env_from[i] : NULL);
	}
	if (r == 0 && p->nmounts > 0 && fprintf(out, "\n[filesystem]\n") < 0)
		return -EIO;
	if (r == 0 && show && p->nmounts > 0)
		r = put_list_note(out, p, SEC_FILESYSTEM,
		    POLICY_LIST_FILESYSTEM, p->mounts_from, p->nmounts);
	for (i = 0; r == 0 && i < p->nmounts; i++)
		r = put_entry(out, mount_key(p->mounts[i].kind),
		    p->mounts[i].source,
		    show && p->mounts_from ? &p->mounts_from[i] : NULL);
	return r;
}

/* Writes [network]: its caps, then its rules in order. The section is
 * always written (its caps are scalars); no rule means no network. */
static int
put_network(FILE *out, const struct policy *p, bool show)
{
	const struct egress_rules *rules = &p->net.rules;
	char text[EGRESS_RULE_BUF];
	int r;

	r = put_scalars(out, p, SEC_NETWORK, show);
	if (r == 0 && show && rules->n > 0)
		r = put_list_note(out, p, SEC_NETWORK, POLICY_LIST_NETWORK,
		    p->net_from, rules->n);
	for (size_t i = 0; r == 0 && i < rules->n; i++) {
		r = net_rule_text(&rules->v[i], text, sizeof(text));
		if (r == 0)
			r = put_entry(out,
			    egress_rule_kind_name(rules->v[i].kind), text,
			    show && p->net_from ? &p->net_from[i] : NULL);
	}
	return r;
}

/* Writes [writeback], its rules in order; no section for none (the list
 * replaced by none: an empty section is refused on reading). */
static int
put_writeback(FILE *out, const struct policy *p, bool show)
{
	const struct wb_policy *wb = &p->writeback;
	char text[LINE_MAX_BYTES + 1];
	int r = 0;

	if (wb->n == 0)
		return 0;
	if (fprintf(out, "\n[writeback]\n") < 0)
		return -EIO;
	if (show)
		r = put_list_note(out, p, SEC_WRITEBACK, POLICY_LIST_WRITEBACK,
		    p->wb_from, wb->n);
	for (size_t i = 0; r == 0 && i < wb->n; i++) {
		r = wb_rule_text(&wb->rules[i], text, sizeof(text));
		if (r == 0)
			r = put_entry(out,
			    policy_wb_action_name(wb->rules[i].action), text,
			    show && p->wb_from ? &p->wb_from[i] : NULL);
	}
	return r;
}

/* policy_format and policy_show: SHOW adds where each line came from. */
static int
format_policy(const struct policy *p, FILE *out, bool show)
{
	static const enum section scalar_sections[] = {
	    SEC_POLICY,
	    SEC_LIMITS,
	    SEC_JAIL,
	    SEC_FILES,
	};
	size_t s;
	int r;

	/* Check everything first, so that a refusal writes nothing. */
	r = check_format(p);
	if (r < 0)
		return r;

	r = put_header(out, p->name ? p->name : DEFAULT_NAME);
	if (r == 0 && show &&
	    fprintf(out,
		"# Where each line comes from, in a comment: "
		"\"default:N\" is line N of\n# `stockade policy default`, "
		"\"file:N\" line N of the file named above.\n") < 0)
		return -EIO;
	for (s = 0;
	     r == 0 && s < sizeof(scalar_sections) / sizeof(scalar_sections[0]);
	     s++)
		r = put_scalars(out, p, scalar_sections[s], show);
	if (r == 0)
		r = put_lists(out, p, show);
	if (r == 0)
		r = put_network(out, p, show);
	if (r == 0)
		r = put_writeback(out, p, show);
	if (r == 0 && fflush(out) != 0)
		return -EIO;
	return r;
}

int
policy_format(const struct policy *p, FILE *out)
{
	return format_policy(p, out, false);
}

int
policy_show(const struct policy *p, FILE *out)
{
	return format_policy(p, out, true);
}
