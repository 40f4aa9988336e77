/* policy_format.c: writing a policy back in canonical form (policy.h). */
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

/* Formats scalar K of P as it is written in a file, into BUF. */
static int
scalar_text(const struct policy *p, const struct scalar_key *k, char *buf,
	    size_t size, const char **v)
{
	const char *field = (const char *)p + k->offset;
	char why[POLICY_ERR_MAX];
	uint64_t n, check;
	uint32_t mode;
	enum output_action act;
	bool ok;

	*v = buf;
	switch (k->kind) {
	case K_U64:
	case K_U32:
		n = k->kind == K_U64 ? *(const uint64_t *)(const void *)field
				     : *(const uint32_t *)(const void *)field;
		if (n % k->unit != 0)
			return -EINVAL;
		snprintf(buf, size, "%llu", (unsigned long long)(n / k->unit));
		ok = policy_parse_number(k->name, buf, k->min, k->max, &check, why,
				  sizeof(why));
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
		*v = policy_enforcement_name(
			*(const enum job_enforcement *)(const void *)field);
		return 0;
	case K_OUTPUT:
		act = *(const enum output_action *)(const void *)field;
		if (act != OUTPUT_TRUNCATE && act != OUTPUT_KILL)
			return -EINVAL;
		*v = policy_output_action_name(act);
		return 0;
	case K_CGROUP:
		*v = *(char *const *)(const void *)field;
		if (!*v)
			return -EINVAL;
		if (**v == '\0')
			return 0;
		ok = policy_valid_path(k->name, *v, why, sizeof(why));
		break;
	case K_PROFILE:
		*v = *(char *const *)(const void *)field;
		if (!*v)
			return -EINVAL;
		ok = policy_valid_profile(k->name, *v, why, sizeof(why));
		break;
	case K_LAYERS:
		n = *(const uint32_t *)(const void *)field;
		if ((n & ~(uint64_t)JOB_LAYERS_ALL) != 0)
			return -EINVAL;
		job_layers_format((uint32_t)n, buf, size);
		return strlen(buf) + 1 < size ? 0 : -EINVAL;
	case K_HOSTNAME:
	case K_USER:
	case K_PATH:
		*v = *(char *const *)(const void *)field;
		if (!*v)
			return -EINVAL;
		ok = k->kind == K_HOSTNAME ? policy_valid_hostname(k->name, *v, why,
							     sizeof(why))
		     : k->kind == K_USER
			 ? policy_valid_user(k->name, *v, why, sizeof(why))
			 : policy_valid_path(k->name, *v, why, sizeof(why));
		break;
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
	return fprintf(out, "# stockade policy (canonical form of %s%s)\n",
		       buf, n > i ? "..." : "") < 0
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
		r = scalar_text(p, &policy_scalar_keys[i], num, sizeof(num), &v);
		if (r == 0)
			r = put_kv(NULL, policy_scalar_keys[i].name, v);
		if (r < 0)
			return r;
	}
	if (p->nenv == 0 || p->nenv > JOB_MAX_ENV || p->nmounts == 0 ||
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
	return 0;
}

int
policy_format(const struct policy *p, FILE *out)
{
	enum section sec;
	char num[256], name[LINE_MAX_BYTES + 1];
	const char *v;
	size_t i;
	int r;

	/* Check everything first, so that a refusal writes nothing. */
	r = check_format(p);
	if (r < 0)
		return r;

	r = put_header(out, p->name ? p->name : DEFAULT_NAME);
	for (sec = SEC_LIMITS; r == 0 && sec <= SEC_FILES; sec++) {
		if (fprintf(out, "\n[%s]\n", policy_section_names[sec]) < 0)
			return -EIO;
		for (i = 0; r == 0 && i < NSCALARS; i++) {
			if (policy_scalar_keys[i].section != sec)
				continue;
			r = scalar_text(p, &policy_scalar_keys[i], num, sizeof(num),
					&v);
			if (r == 0)
				r = put_kv(out, policy_scalar_keys[i].name, v);
		}
	}
	if (r == 0 && fprintf(out, "\n[environment]\n") < 0)
		return -EIO;
	for (i = 0; r == 0 && i < p->nenv; i++) {
		v = env_split(p->env[i], name);
		r = put_kv(out, name, v);
	}
	if (r == 0 && fprintf(out, "\n[filesystem]\n") < 0)
		return -EIO;
	for (i = 0; r == 0 && i < p->nmounts; i++)
		r = put_kv(out, mount_key(p->mounts[i].kind),
			   p->mounts[i].source);
	if (r == 0 && fflush(out) != 0)
		return -EIO;
	return r;
}
