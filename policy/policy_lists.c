/*
 * policy_lists.c: a policy layer's list entries, [environment] variables,
 * [filesystem] binds and [network] rules (policy_loader.h; [writeback]'s
 * are policy_writeback.c's): each checked and kept in the layer's own
 * list as it is read, then laid over the policy's once the
 * layer is read whole. Pure, as policy.c.
 */
#include "policy_loader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static void
free_env(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->nenv; i++)
		free(p->env[i]);
	free(p->env);
	free(p->env_from);
	p->env = NULL;
	p->env_from = NULL;
	p->nenv = 0;
}

static void
free_mounts(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->nmounts; i++) {
		free(p->mounts[i].source);
		free(p->mounts[i].target);
	}
	free(p->mounts);
	free(p->mounts_from);
	p->mounts = NULL;
	p->mounts_from = NULL;
	p->nmounts = 0;
}

static void
free_net(struct policy *p)
{
	egress_rules_clear(&p->net.rules);
	free(p->net_from);
	p->net_from = NULL;
}

/* Makes room for one more entry of P's environment (and its origin). */
static int
grow_env(struct policy *p)
{
	struct policy_origin *from;
	char **env;

	env = reallocarray(p->env, p->nenv + 1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	p->env = env;
	from = reallocarray(p->env_from, p->nenv + 1, sizeof(*from));
	if (!from)
		return -ENOMEM;
	p->env_from = from;
	return 0;
}

/* Makes room for one more bind of P (and its origin). */
static int
grow_mounts(struct policy *p)
{
	struct policy_origin *from;
	struct mount_entry *m;

	m = reallocarray(p->mounts, p->nmounts + 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->mounts = m;
	from = reallocarray(p->mounts_from, p->nmounts + 1, sizeof(*from));
	if (!from)
		return -ENOMEM;
	p->mounts_from = from;
	return 0;
}

/* The index of variable NAME (NLEN bytes) in P's environment, or -1. */
static ssize_t
find_env(const struct policy *p, const char *name, size_t nlen)
{
	for (size_t i = 0; i < p->nenv; i++)
		if (strncmp(p->env[i], name, nlen) == 0 &&
		    p->env[i][nlen] == '=')
			return (ssize_t)i;
	return -1;
}

/* The index of the bind of P at TARGET, or -1. */
static ssize_t
find_mount(const struct policy *p, const char *target)
{
	for (size_t i = 0; i < p->nmounts; i++)
		if (strcmp(p->mounts[i].target, target) == 0)
			return (ssize_t)i;
	return -1;
}

/* Makes room for one more [network] rule of P (and its origin). */
static int
grow_net(struct policy *p)
{
	struct policy_origin *from;
	struct egress_rule *v;

	v = reallocarray(p->net.rules.v, p->net.rules.n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->net.rules.v = v;
	from = reallocarray(p->net_from, p->net.rules.n + 1, sizeof(*from));
	if (!from)
		return -ENOMEM;
	p->net_from = from;
	return 0;
}

/* The index of the [network] rule of P equal to R, or -1. */
static ssize_t
find_net(const struct policy *p, const struct egress_rule *r)
{
	for (size_t i = 0; i < p->net.rules.n; i++)
		if (egress_rule_eq(&p->net.rules.v[i], r))
			return (ssize_t)i;
	return -1;
}

int
policy_add_env(struct loader *l, const char *name, const char *v)
{
	struct policy *s = &l->lists;
	char *entry;

	if (!policy_valid_env_name(name))
		return fail(l,
		    "invalid variable name \"%s\" (expected "
		    "[A-Za-z_][A-Za-z0-9_]*)",
		    name);
	/* Within one file: the default's variable of the same name is not a
	 * duplicate but the one this entry takes the place of. */
	if (find_env(s, name, strlen(name)) >= 0)
		return fail(l, "duplicate key \"%s\"", name);
	if (s->nenv >= JOB_MAX_ENV)
		return fail(l, "too many environment variables (at most %u)",
		    JOB_MAX_ENV);
	if (asprintf(&entry, "%s=%s", name, v) < 0)
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	if (grow_env(s) < 0) {
		free(entry);
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	}
	s->env_from[s->nenv] = (struct policy_origin){l->in_file, l->lineno};
	s->env[s->nenv++] = entry;
	return 1;
}

/* Directories the launcher builds in every jail (launcher/init/mounts.c). */
static const char *const jail_owned[] = {"/tmp", "/proc", "/dev", "/work"};

int
policy_add_mount(struct loader *l, const char *key, const char *v)
{
	struct policy *p = &l->lists;
	struct mount_entry *m;
	enum mount_kind kind;
	char why[POLICY_ERR_MAX];
	size_t i;

	if (strcmp(key, "ro_bind") == 0)
		kind = MOUNT_RO_BIND;
	else if (strcmp(key, "ro_bind_try") == 0)
		kind = MOUNT_RO_BIND_TRY;
	/* Test only: bound like ro_bind, with no Landlock rule, so that a
	 * test can show Landlock holding where the mount layer does not
	 * (launcher/payload/landlock_jail.h). */
	else if (strcmp(key, "unsafe_ro_bind_no_landlock") == 0)
		kind = MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK;
	else
		return fail(l, "unknown key \"%s\" in [filesystem]", key);
	if (!policy_valid_path(key, v, why, sizeof(why)))
		return fail(l, "%s", why);
	/* The jail mounts these itself, over whatever a bind put there; a
	 * bind of the host's /proc or /dev would also hand the job the
	 * host's. */
	for (i = 0; i < sizeof(jail_owned) / sizeof(jail_owned[0]); i++) {
		size_t n = strlen(jail_owned[i]);

		if (strncmp(v, jail_owned[i], n) == 0 &&
		    (v[n] == '\0' || v[n] == '/'))
			return fail(l,
			    "%s %s is inside %s, which the jail "
			    "mounts itself",
			    key, v, jail_owned[i]);
	}
	/* Within one file; the default's bind at the same target is the
	 * one this entry takes the place of (policy_merge_lists). */
	if (find_mount(p, v) >= 0)
		return fail(l, "duplicate mount \"%s\"", v);
	if (p->nmounts >= JOB_MAX_MOUNTS)
		return fail(l, "too many mounts (at most %u)", JOB_MAX_MOUNTS);
	if (grow_mounts(p) < 0)
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	m = &p->mounts[p->nmounts];
	/* The policy binds a host path at the same place in the jail. */
	m->kind = kind;
	m->source = strdup(v);
	m->target = strdup(v);
	if (!m->source || !m->target) {
		free(m->source);
		free(m->target);
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	}
	p->mounts_from[p->nmounts] = (struct policy_origin){l->in_file,
	    l->lineno};
	p->nmounts++;
	return 1;
}

/* Lays the layer's variables over P's (policy_merge_lists). */
static int
merge_env(struct loader *l)
{
	struct policy *p = l->p, *s = &l->lists;
	const size_t had_env = p->nenv;
	size_t i;

	if (p->replace & POLICY_LIST_ENVIRONMENT) {
		free_env(p);
		p->env = s->env;
		p->env_from = s->env_from;
		p->nenv = s->nenv;
		s->env = NULL;
		s->env_from = NULL;
		s->nenv = 0;
	}
	for (i = 0; i < s->nenv; i++) {
		size_t nlen = strcspn(s->env[i], "=");
		ssize_t j = find_env(p, s->env[i], nlen);

		if (j < 0) {
			if (p->nenv >= JOB_MAX_ENV)
				return policy_fail_at(l, -EINVAL,
				    s->env_from[i].line,
				    "too many environment variables (at most "
				    "%u, the default's %zu included; [policy] "
				    "replace = environment leaves them out)",
				    JOB_MAX_ENV, had_env);
			if (grow_env(p) < 0)
				return policy_fail_at(l, -ENOMEM,
				    s->env_from[i].line, "out of memory");
			j = (ssize_t)p->nenv++;
			p->env[j] = NULL;
		}
		free(p->env[j]);
		p->env[j] = s->env[i];
		p->env_from[j] = s->env_from[i];
		s->env[i] = NULL;
	}
	return 1;
}

/* Lays the layer's binds over P's (policy_merge_lists). */
static int
merge_mounts(struct loader *l)
{
	struct policy *p = l->p, *s = &l->lists;
	const size_t had_mounts = p->nmounts;
	size_t i;

	if (p->replace & POLICY_LIST_FILESYSTEM) {
		free_mounts(p);
		p->mounts = s->mounts;
		p->mounts_from = s->mounts_from;
		p->nmounts = s->nmounts;
		s->mounts = NULL;
		s->mounts_from = NULL;
		s->nmounts = 0;
	}
	for (i = 0; i < s->nmounts; i++) {
		ssize_t j = find_mount(p, s->mounts[i].target);

		if (j < 0) {
			if (p->nmounts >= JOB_MAX_MOUNTS)
				return policy_fail_at(l, -EINVAL,
				    s->mounts_from[i].line,
				    "too many mounts (at most %u, the "
				    "default's %zu included; [policy] replace "
				    "= filesystem leaves them out)",
				    JOB_MAX_MOUNTS, had_mounts);
			if (grow_mounts(p) < 0)
				return policy_fail_at(l, -ENOMEM,
				    s->mounts_from[i].line, "out of memory");
			j = (ssize_t)p->nmounts++;
		} else {
			free(p->mounts[j].source);
			free(p->mounts[j].target);
		}
		p->mounts[j] = s->mounts[i];
		p->mounts_from[j] = s->mounts_from[i];
		s->mounts[i].source = NULL;
		s->mounts[i].target = NULL;
	}
	return 1;
}

/* Lays the layer's [network] rules over P's (policy_merge_lists): a rule
 * P already has is the same rule, given again; it takes the new origin. */
static int
merge_net(struct loader *l)
{
	struct policy *p = l->p, *s = &l->lists;
	const size_t had = p->net.rules.n;
	size_t i;

	if (p->replace & POLICY_LIST_NETWORK) {
		free_net(p);
		p->net.rules = s->net.rules;
		p->net_from = s->net_from;
		s->net.rules = (struct egress_rules){NULL, 0};
		s->net_from = NULL;
	}
	for (i = 0; i < s->net.rules.n; i++) {
		ssize_t j = find_net(p, &s->net.rules.v[i]);

		if (j < 0) {
			if (p->net.rules.n >= EGRESS_MAX_RULES)
				return policy_fail_at(l, -EINVAL,
				    s->net_from[i].line,
				    "too many [network] rules (at most %u, "
				    "the default's %zu included; [policy] "
				    "replace = network leaves them out)",
				    EGRESS_MAX_RULES, had);
			if (grow_net(p) < 0)
				return policy_fail_at(l, -ENOMEM,
				    s->net_from[i].line, "out of memory");
			j = (ssize_t)p->net.rules.n++;
		}
		p->net.rules.v[j] = s->net.rules.v[i];
		p->net_from[j] = s->net_from[i];
	}
	return 1;
}

int
policy_merge_lists(struct loader *l)
{
	if (!merge_env(l) || !merge_mounts(l) || !merge_net(l) ||
	    !policy_merge_wb(l))
		return 0;
	return 1;
}

void
policy_free_lists(struct policy *p)
{
	free_env(p);
	free_mounts(p);
	free_net(p);
	policy_free_wb(p);
}

int
policy_add_net(struct loader *l, const char *key, const char *v)
{
	struct policy *s = &l->lists;
	enum egress_rule_kind kind;
	struct egress_rule r;
	int e;

	if (strcmp(key, "allow") == 0)
		kind = EGRESS_RULE_ALLOW;
	else if (strcmp(key, "allow_address") == 0)
		kind = EGRESS_RULE_ALLOW_ADDRESS;
	else if (strcmp(key, "deny") == 0)
		kind = EGRESS_RULE_DENY;
	else
		return fail(l, "unknown key \"%s\" in [network]", key);
	e = egress_rule_parse(kind, v, &r);
	if (e < 0)
		return policy_refuse_entry(l, "%s \"%.200s\" %s", key, v,
		    egress_name_strerror(e));
	/* Within one file; the default's same rule is the one this entry
	 * takes the place of (merge_net). */
	if (find_net(s, &r) >= 0)
		return policy_refuse_entry(l, "duplicate rule %s = %.200s", key,
		    v);
	if (s->net.rules.n >= EGRESS_MAX_RULES)
		return fail(l, "too many [network] rules (at most %u)",
		    EGRESS_MAX_RULES);
	if (grow_net(s) < 0)
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	s->net_from[s->net.rules.n] = (struct policy_origin){l->in_file,
	    l->lineno};
	s->net.rules.v[s->net.rules.n++] = r;
	return 1;
}

int
policy_refuse_entry(struct loader *l, const char *fmt, ...)
{
	char why[POLICY_ERR_MAX], *msg;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (l->rep == NULL || l->code)
		return fail(l, "%s", why);
	if (asprintf(&msg, "%s:%u: %s", l->name, l->lineno, why) < 0)
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	l->rep->fn(msg, l->rep->arg);
	free(msg);
	if (l->rep->refused++ == 0) {
		memcpy(l->refused, why, sizeof(why));
		l->refused_line = l->lineno;
	}
	return 1;
}

bool
policy_has_network(const struct policy *p)
{
	for (size_t i = 0; i < p->net.rules.n; i++)
		if (p->net.rules.v[i].kind != EGRESS_RULE_DENY)
			return true;
	return false;
}
