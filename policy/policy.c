/*
 * policy.c: the policy language (policy.h), read with inih.
 *
 * inih parses lines; we feed it through our own reader so that we know the
 * line number of every key the handler sees, and so that the reader can
 * refuse what inih would silently misread (a line longer than its buffer,
 * which inih splits in two; control characters; indented lines, which inih
 * takes as continuations of the previous value; empty unknown sections,
 * which inih never reports to the handler). Everything here is pure: no
 * globals, no logging; errors are a negative errno and "NAME:LINE: what".
 */
#include "policy.h"
#include "policy_internal.h"
#include "policy_loader.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Largest policy text we read, bytes: a bound on the work a file (or
 * /dev/zero given as one) can cause; real policies are a few KiB. */
#define TEXT_MAX (1024u * 1024u)

#define _cleanup_(f) __attribute__((cleanup(f)))

static void
fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* ---- Messages ---------------------------------------------------------- */

/* Records the first error, at LINE; later ones are dropped (the parse stops
 * at the first). Returns 0, the handler's "failed". */
int
policy_fail_at(struct loader *l, int code, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->code)
		return 0;
	l->code = code;
	l->err_line = line;
	if (!l->err || l->errlen == 0)
		return 0;
	n = snprintf(l->err, l->errlen, "%s:%u: ", l->name, line);
	if (n >= 0 && (size_t)n < l->errlen) {
		va_start(ap, fmt);
		vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* ---- The handler ------------------------------------------------------- */

/* Converts V for scalar K, of a kind that is not text, into FIELD.
 * Returns 1, or 0 with the error recorded. */
static int
set_converted(struct loader *l, const struct scalar_key *k, char *field,
    const char *v)
{
	char why[POLICY_ERR_MAX];
	uint64_t n;
	uint32_t m;
	bool b;

	switch (k->kind) {
	case K_U64:
		if (!policy_parse_number(k->name, v, k->min, k->max, &n, why,
			sizeof(why)))
			return fail(l, "%s", why);
		*(uint64_t *)(void *)field = n * k->unit;
		return 1;
	case K_U32:
		if (!policy_parse_number(k->name, v, k->min, k->max, &n, why,
			sizeof(why)))
			return fail(l, "%s", why);
		*(uint32_t *)(void *)field = (uint32_t)n;
		return 1;
	case K_BOOL:
		if (!policy_parse_bool(k->name, v, &b, why, sizeof(why)))
			return fail(l, "%s", why);
		*(bool *)(void *)field = b;
		return 1;
	case K_MODE:
		if (!policy_parse_mode(k->name, v, k->max, &m, why,
			sizeof(why)))
			return fail(l, "%s", why);
		*(uint32_t *)(void *)field = m;
		return 1;
	case K_ENFORCE:
	case K_OUTPUT:
	case K_COMMIT:
		if (!policy_set_word(k, v, field, why, sizeof(why)))
			return fail(l, "%s", why);
		return 1;
	case K_LAYERS:
		if (!policy_parse_layers(k->name, v, &m, why, sizeof(why)))
			return fail(l, "%s", why);
		*(uint32_t *)(void *)field = m;
		return 1;
	case K_LISTS:
		if (!policy_parse_lists(k->name, v, &m, why, sizeof(why)))
			return fail(l, "%s", why);
		*(uint32_t *)(void *)field = m;
		return 1;
	case K_HOSTNAME: /* text: set_text() */
	case K_USER:
	case K_PATH:
	case K_CGROUP:
	case K_PROFILE:
	case K_ENVNAMES:
	case K_RESOLVER:
	default:
		return fail(l, "%s", "internal error: key kind");
	}
}

/* Checks V for text scalar K (policy_kind_is_text) and stores a copy of
 * it in FIELD, freeing the value it replaces. Returns 1, or 0 with the
 * error recorded. */
static int
set_text(struct loader *l, const struct scalar_key *k, char *field,
    const char *v)
{
	char why[POLICY_ERR_MAX];
	bool ok;
	char *s;

	if (k->kind == K_HOSTNAME)
		ok = policy_valid_hostname(k->name, v, why, sizeof(why));
	else if (k->kind == K_USER)
		ok = policy_valid_user(k->name, v, why, sizeof(why));
	else if (k->kind == K_PATH)
		ok = policy_valid_path(k->name, v, why, sizeof(why));
	else if (k->kind == K_CGROUP)
		ok = v[0] == '\0' ||
		    policy_valid_path(k->name, v, why, sizeof(why));
	else if (k->kind == K_PROFILE)
		ok = policy_valid_profile(k->name, v, why, sizeof(why));
	else if (k->kind == K_RESOLVER)
		ok = policy_valid_resolver(k->name, v, why, sizeof(why));
	else
		ok = policy_valid_client_env(k->name, v, why, sizeof(why));
	if (!ok)
		return fail(l, "%s", why);
	s = strdup(v);
	if (!s)
		return policy_fail_at(l, -ENOMEM, l->lineno, "out of memory");
	free(*(char **)(void *)field);
	*(char **)(void *)field = s;
	return 1;
}

/* Sets scalar policy_scalar_keys[I] of this layer from V, once per layer.
 * Returns 1, or 0 with the error recorded. */
static int
set_scalar(struct loader *l, size_t i, const char *v)
{
	const struct scalar_key *k = &policy_scalar_keys[i];
	char *field = (char *)l->p + k->offset;

	/* A layer gives a key once: a second value silently winning hides
	 * mistakes in exactly the file a reviewer reads. */
	if (l->seen & (UINT64_C(1) << i))
		return fail(l, "duplicate key \"%s\"", k->name);
	l->seen |= UINT64_C(1) << i;
	l->p->scalar_from[i] = (struct policy_origin){l->in_file, l->lineno};

	if (policy_kind_is_text(k->kind))
		return set_text(l, k, field, v);
	return set_converted(l, k, field, v);
}

/* inih's handler: one "key = value" of the line l->lineno. SECTION is
 * inih's copy (truncated to 50 bytes); we go by the reader's l->section,
 * which saw the same [section] line whole. Returns 1, or 0 on error. */
static int
handle_key(void *user, const char *section, const char *key, const char *v)
{
	struct loader *l = user;
	size_t i;

	(void)section;
	if (l->code)
		return 0;
	l->section_keys = true;
	/* The reader refused every control character but tab; a tab inside a
	 * value (around it inih strips) would reach a variable or a path. */
	if (policy_has_control(v))
		return fail(l, "value of \"%s\" contains a control character",
		    key);

	switch (l->section) {
	case SEC_NONE:
		return fail(l, "key \"%s\" outside any section", key);
	case SEC_LIMITS:
	case SEC_JAIL:
	case SEC_FILES:
	case SEC_POLICY:
		for (i = 0; i < NSCALARS; i++)
			if (policy_scalar_keys[i].section == l->section &&
			    strcmp(policy_scalar_keys[i].name, key) == 0)
				return set_scalar(l, i, v);
		return fail(l, "unknown key \"%s\" in [%s]", key,
		    policy_section_names[l->section]);
	case SEC_NETWORK:
		/* Its caps are scalars; allow, allow_address and deny are
		 * the entries of its list. */
		for (i = 0; i < NSCALARS; i++)
			if (policy_scalar_keys[i].section == SEC_NETWORK &&
			    strcmp(policy_scalar_keys[i].name, key) == 0)
				return set_scalar(l, i, v);
		return policy_add_net(l, key, v);
	case SEC_ENVIRONMENT:
		return policy_add_env(l, key, v);
	case SEC_FILESYSTEM:
		return policy_add_mount(l, key, v);
	case SEC_WRITEBACK:
		return policy_add_wb(l, key, v);
	default:
		return fail(l, "internal error: section");
	}
}

/* ---- The reader -------------------------------------------------------- */

static int
next_byte(struct loader *l)
{
	int c;

	if (!l->file)
		return *l->text ? (unsigned char)*l->text++ : EOF;
	c = getc(l->file);
	if (c == EOF && ferror(l->file))
		l->read_errno = errno ? errno : EIO;
	return c;
}

/*
 * A list section with no key adds nothing; whoever wrote it most likely
 * meant an empty list, which is [policy] replace without the section.
 * Rather than keep the default's list silently, we refuse it.
 */
static void
end_section(struct loader *l)
{
	if ((l->section == SEC_ENVIRONMENT || l->section == SEC_FILESYSTEM ||
		l->section == SEC_WRITEBACK) &&
	    !l->section_keys)
		policy_fail_at(l, -EINVAL, l->section_line,
		    "empty [%s] section (it adds nothing to the default's "
		    "list; [policy] replace = %s without the section "
		    "empties it)",
		    policy_section_names[l->section],
		    policy_section_names[l->section]);
}

/*
 * Looks at LINE (whole, without its newline) before inih does: follows
 * [section] lines, refuses indented lines and junk after "]". inih's own
 * syntax errors (a "[" without "]", a line without "=") are left to it.
 * Returns false once an error is recorded.
 */
static bool
scan_line(struct loader *l, const char *line)
{
	const char *s = line, *t, *end;
	bool was_space = false;
	size_t i, n;

	/* inih skips a UTF-8 byte order mark on line 1; so do we. */
	if (l->lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	for (t = s; policy_is_blank(*t); t++)
		;
	if (*t == '\0' || *t == ';' || *t == '#')
		return true;
	/* inih reads an indented line after a key as more of that key's
	 * value, and the same line after a [section] as a key: refuse both. */
	if (t != s) {
		fail(l, "indented line (continuation lines are not supported)");
		return false;
	}
	if (*t != '[') {
		/* A key, or a line inih refuses: either way the section is
		 * not empty, and inih's message is the better one. */
		l->section_keys = true;
		return true;
	}
	/* The name ends where inih ends it: at "]" or at an inline ";"
	 * comment after a blank. */
	for (end = t + 1; *end && *end != ']' && !(was_space && *end == ';');
	     end++)
		was_space = policy_is_blank(*end);
	if (*end != ']')
		return true;
	/* inih ignores whatever follows "]"; we allow only a comment. */
	for (s = end + 1; policy_is_blank(*s); s++)
		;
	if (*s != '\0' && *s != ';' && *s != '#') {
		fail(l,
		    "syntax error (expected \"key = value\" or \"[section]\")");
		return false;
	}
	end_section(l);
	if (l->code)
		return false;
	n = (size_t)(end - (t + 1));
	for (i = SEC_LIMITS; i <= SEC_LAST; i++)
		if (strlen(policy_section_names[i]) == n &&
		    memcmp(policy_section_names[i], t + 1, n) == 0)
			break;
	if (i > SEC_LAST) {
		fail(l, "unknown section [%.*s]", (int)n, t + 1);
		return false;
	}
	l->section = (enum section)i;
	l->section_line = l->lineno;
	l->section_keys = false;
	return true;
}

/*
 * inih's reader: an fgets that always consumes a whole line, so that inih's
 * line count is ours. A line that does not fit inih's buffer (NUM bytes
 * with the NUL) is an error here: fgets would hand inih its tail as another
 * line. Returning NULL ends the parse, which we do at the first error.
 */
static char *
read_line(char *str, int num, void *stream)
{
	struct loader *l = stream;
	size_t max = num > 1 ? (size_t)num - 1 : 0;
	size_t i, len = 0;
	bool got = false;
	int c;

	if (l->code || l->read_errno)
		return NULL;
	/* Stops one byte past MAX: the line is refused either way. */
	while (len <= max && (c = next_byte(l)) != EOF) {
		got = true;
		if (c == '\n')
			break;
		if (len < max)
			str[len] = (char)c;
		len++;
	}
	if (!got || l->read_errno)
		return NULL;
	l->lineno++;
	if (len > max) {
		fail(l, "line longer than %zu bytes", max);
		return NULL;
	}
	l->nread += len + 1;
	if (l->nread > TEXT_MAX) {
		fail(l, "policy longer than %u bytes", TEXT_MAX);
		return NULL;
	}
	str[len] = '\0';
	/* No NUL (inih would stop the line there) and no control character
	 * but tab, and carriage return at the end (CRLF files). */
	for (i = 0; i < len; i++) {
		unsigned char u = (unsigned char)str[i];

		if ((u < 0x20 && u != '\t' && !(u == '\r' && i + 1 == len)) ||
		    u == 0x7f) {
			fail(l, "line contains control character 0x%02x", u);
			return NULL;
		}
	}
	if (!scan_line(l, str))
		return NULL;
	return str;
}

/* ---- Loading ----------------------------------------------------------- */

/* The default must set every scalar: the loaded policy's limits are all
 * non-zero whatever a file leaves out. */
static void
check_default_complete(struct loader *l)
{
	for (size_t i = 0; !l->code && i < NSCALARS; i++)
		if (!(l->seen & (UINT64_C(1) << i)))
			policy_fail_at(l, -EINVAL, l->lineno,
			    "missing key \"%s\" in [%s]",
			    policy_scalar_keys[i].name,
			    policy_section_names[policy_scalar_keys[i]
						     .section]);
}

/* Lays one layer (FILE or TEXT, named NAME) over P; with REP, refused
 * [network] rules are reported as they come (policy_refuse_entry). */
static int
parse_layer(struct policy *p, const char *name, bool is_default, FILE *file,
    const char *text, struct policy_reporter *rep, char *err, size_t errlen)
{
	struct loader l = {
	    .p = p,
	    .name = name,
	    .in_file = !is_default,
	    .file = file,
	    .text = text,
	    .rep = rep,
	    .err = err,
	    .errlen = errlen,
	};
	int r;

	errno = 0;
	r = ini_parse_stream(read_line, &l, handle_key, &l);
	if (l.read_errno) {
		policy_clear(&l.lists);
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", name,
			    strerror(l.read_errno));
		return -l.read_errno;
	}
	if (r < 0) { /* inih could not allocate its line buffer */
		policy_clear(&l.lists);
		policy_fail_at(&l, -ENOMEM, l.lineno, "out of memory");
		return l.code;
	}
	if (!l.code) /* the reader reached the end */
		end_section(&l);
	/* inih returns the line of the first error, its own or a refusal of
	 * the handler's; the earlier of that and ours is the first error. */
	if (r > 0 && (!l.code || (unsigned)r < l.err_line)) {
		l.code = 0;
		policy_fail_at(&l, -EINVAL, (unsigned)r,
		    "syntax error (expected \"key = value\" or "
		    "\"[section]\")");
		policy_clear(&l.lists);
		return l.code;
	}
	if (is_default)
		check_default_complete(&l);
	/* Refused entries, each reported already: the first is the error. */
	if (!l.code && rep != NULL && rep->refused > 0) {
		policy_fail_at(&l, -EINVAL, l.refused_line, "%s", l.refused);
		rep->err_reported = true;
	}
	if (!l.code)
		policy_merge_lists(&l);
	policy_clear(&l.lists);
	return l.code;
}

/*
 * Loads the default into a fresh policy and lays FILE or TEXT (NAME) over
 * it when NAME is not NULL. Fills P only on success.
 */
static int
load(struct policy *p, const char *name, FILE *file, const char *text,
    struct policy_reporter *rep, char *err, size_t errlen)
{
	_cleanup_(policy_clear) struct policy tmp = {0};
	int r;

	memset(p, 0, sizeof(*p));
	if (err && errlen)
		err[0] = '\0';
	r = parse_layer(&tmp, DEFAULT_NAME, true, NULL, policy_default_text,
	    NULL, err, errlen);
	if (r < 0)
		return r;
	tmp.name = strdup(name ? name : DEFAULT_NAME);
	if (!tmp.name) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s",
			    name ? name : DEFAULT_NAME, strerror(ENOMEM));
		return -ENOMEM;
	}
	if (name) {
		r = parse_layer(&tmp, name, false, file, text, rep, err,
		    errlen);
		if (r < 0)
			return r;
	}
	/* One workspace quota for the file API and for jobs. */
	tmp.limits.workspace_bytes = tmp.files.workspace_bytes;
	*p = tmp;
	memset(&tmp, 0, sizeof(tmp));
	return 0;
}

int
policy_load_default(struct policy *p, char *err, size_t errlen)
{
	return load(p, NULL, NULL, NULL, NULL, err, errlen);
}

/* policy_load_file, reporting through REP when it is not NULL. */
static int
load_file(struct policy *p, const char *path, struct policy_reporter *rep,
    char *err, size_t errlen)
{
	_cleanup_(fclosep) FILE *f = NULL;
	int r;

	memset(p, 0, sizeof(*p));
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	return load(p, path, f, NULL, rep, err, errlen);
}

int
policy_load_file(struct policy *p, const char *path, char *err, size_t errlen)
{
	return load_file(p, path, NULL, err, errlen);
}

int
policy_load_file_report(struct policy *p, const char *path,
    void (*report)(const char *msg, void *arg), void *arg, char *err,
    size_t errlen)
{
	struct policy_reporter rep = {.fn = report, .arg = arg};
	char own[POLICY_ERR_MAX];
	int r;

	if (err == NULL || errlen == 0) {
		err = own;
		errlen = sizeof(own);
	}
	r = load_file(p, path, report != NULL ? &rep : NULL, err, errlen);
	/* Whatever ended the reading, unless it was a refused entry,
	 * which was reported when it was read. */
	if (r < 0 && report != NULL && !rep.err_reported)
		report(err, arg);
	return r;
}

int
policy_load_string(struct policy *p, const char *text, const char *name,
    char *err, size_t errlen)
{
	name = name ? name : "<string>";
	if (!text) {
		memset(p, 0, sizeof(*p));
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", name, strerror(EINVAL));
		return -EINVAL;
	}
	return load(p, name, NULL, text, NULL, err, errlen);
}

uint32_t
policy_layers_off(const struct policy *p)
{
	return p->layers_off |
	    (p->unsafe_no_seccomp ? JOB_LAYER_BIT(JOB_LAYER_SECCOMP) : 0);
}

const struct mount_entry *
policy_unsafe_mount(const struct policy *p)
{
	for (size_t i = 0; i < p->nmounts; i++)
		if (p->mounts[i].kind == MOUNT_RO_BIND_UNSAFE_NO_LANDLOCK)
			return &p->mounts[i];
	return NULL;
}

void
policy_clear(struct policy *p)
{
	if (!p)
		return;
	free(p->name);
	policy_free_lists(p);
	free(p->hostname);
	free(p->user);
	free(p->home);
	free(p->cgroup);
	free(p->net.resolver);
	free(p->seccomp_profile);
	free(p->client_env);
	memset(p, 0, sizeof(*p));
}
