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

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_NAME "<default>"
#define KIB UINT64_C(1024)
#define MIB (UINT64_C(1024) * 1024)
/* Longest [jail] user: the passwd name limit of shadow's useradd. */
#define USER_MAX 32u
/* Longest hostname label we accept (RFC 1035). */
#define HOSTNAME_MAX 63u
/* Largest policy text we read, bytes: a bound on the work a file (or
 * /dev/zero given as one) can cause; real policies are a few KiB. */
#define TEXT_MAX (1024u * 1024u)

#define _cleanup_(f) __attribute__((cleanup(f)))

enum section {
	SEC_NONE, /* before the first [section] line */
	SEC_LIMITS,
	SEC_JAIL,
	SEC_ENVIRONMENT,
	SEC_FILESYSTEM,
};

static const char *const section_names[] = {
	[SEC_LIMITS] = "limits",
	[SEC_JAIL] = "jail",
	[SEC_ENVIRONMENT] = "environment",
	[SEC_FILESYSTEM] = "filesystem",
};

enum key_kind {
	K_U64,      /* uint64_t field = value * unit */
	K_U32,      /* uint32_t field = value */
	K_BOOL,     /* bool field, "true" or "false" */
	K_HOSTNAME, /* char * field */
	K_USER,     /* char * field */
	K_PATH,     /* char * field, absolute and normalised */
};

/* One scalar key. The order of this table is the order of default.ini,
 * which policy_format() follows. */
struct scalar_key {
	enum section section;
	const char *name;
	enum key_kind kind;
	size_t offset;     /* of the field in struct policy */
	uint64_t min, max; /* range of the value as written, in its unit */
	uint64_t unit;     /* field = written value * unit */
};

#define LIMIT(f) offsetof(struct policy, limits.f)
#define FIELD(f) offsetof(struct policy, f)

static const struct scalar_key scalar_keys[] = {
	{SEC_LIMITS, "wall_time_ms", K_U64, LIMIT(wall_ms), 1, 86400000, 1},
	{SEC_LIMITS, "cpu_time_ms", K_U64, LIMIT(cpu_ms), 1, 86400000, 1},
	{SEC_LIMITS, "memory_mb", K_U64, LIMIT(memory_bytes), 16, 1048576, MIB},
	{SEC_LIMITS, "processes", K_U32, LIMIT(nproc), 1, 65536, 1},
	{SEC_LIMITS, "file_size_mb", K_U64, LIMIT(fsize_bytes), 1, 1048576, MIB},
	{SEC_LIMITS, "open_files", K_U32, LIMIT(nofile), 16, 65536, 1},
	{SEC_LIMITS, "tmp_mb", K_U64, LIMIT(tmp_bytes), 1, 1048576, MIB},
	{SEC_LIMITS, "home_mb", K_U64, LIMIT(home_bytes), 1, 1048576, MIB},
	{SEC_LIMITS, "stdout_kb", K_U64, LIMIT(stdout_bytes), 1, 1048576, KIB},
	{SEC_LIMITS, "stderr_kb", K_U64, LIMIT(stderr_bytes), 1, 1048576, KIB},
	{SEC_JAIL, "hostname", K_HOSTNAME, FIELD(hostname), 0, 0, 0},
	{SEC_JAIL, "user", K_USER, FIELD(user), 0, 0, 0},
	/* Never 0: root inside the jail is what the layers exist to deny; 65534
	 * is the overflow id ("nobody") and 65535 is not a valid id. */
	{SEC_JAIL, "uid", K_U32, FIELD(uid), 1, 65533, 1},
	{SEC_JAIL, "gid", K_U32, FIELD(gid), 1, 65533, 1},
	{SEC_JAIL, "home", K_PATH, FIELD(home), 0, 0, 0},
	{SEC_JAIL, "unsafe_no_seccomp", K_BOOL, FIELD(unsafe_no_seccomp), 0, 0,
	 0},
};
#define NSCALARS (sizeof(scalar_keys) / sizeof(scalar_keys[0]))
_Static_assert(NSCALARS <= 32, "struct loader's seen is a uint32_t");

/* State of one layer (the default, or a file laid over it). */
struct loader {
	struct policy *p;
	const char *name; /* for messages */

	/* The text: a FILE or a NUL-terminated string. */
	FILE *file;
	const char *text;
	int read_errno; /* set when reading FILE failed */
	size_t nread;   /* bytes read so far */

	unsigned lineno;       /* line last handed to inih, from 1 */
	enum section section;  /* as the reader saw the last [section] */
	unsigned section_line; /* line of that [section] */
	bool section_keys;     /* a key came after it */

	uint32_t seen;       /* bit i: scalar_keys[i] given in this layer */
	bool env_replaced;   /* this layer has cleared the inherited lists */
	bool mounts_replaced;

	/* The first error: code < 0 once set, at err_line. */
	int code;
	unsigned err_line;
	char *err;
	size_t errlen;
};

static void
fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

/* ---- Messages ---------------------------------------------------------- */

/* Records the first error, at LINE; later ones are dropped (the parse stops
 * at the first). Returns 0, the handler's "failed". */
__attribute__((format(printf, 4, 5))) static int
fail_at(struct loader *l, int code, unsigned line, const char *fmt, ...)
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

#define fail(l, ...) fail_at((l), -EINVAL, (l)->lineno, __VA_ARGS__)

/* ---- Values -----------------------------------------------------------
 * Each check takes the key's name (for the message), the value, and WHY
 * (WHYLEN bytes) for the reason it is refused. They are shared by the
 * loader and by policy_format(), which refuses to write what would not load
 * back.
 */

static bool
has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* A plain decimal integer in [MIN, MAX]: digits only, no sign, no blank,
 * no leading zero (0777 must not look like octal that we read as decimal). */
static bool
parse_number(const char *key, const char *v, uint64_t min, uint64_t max,
	     uint64_t *out, char *why, size_t whylen)
{
	uint64_t n = 0;
	const char *s;

	*out = 0;
	if (*v == '\0' || (v[0] == '0' && v[1] != '\0'))
		goto not_a_number;
	for (s = v; *s; s++) {
		unsigned d;

		if (*s < '0' || *s > '9')
			goto not_a_number;
		d = (unsigned)(*s - '0');
		/* An overflowing number is out of range: say the range. */
		if (n > (UINT64_MAX - d) / 10)
			goto out_of_range;
		n = n * 10 + d;
	}
	if (n < min || n > max)
		goto out_of_range;
	*out = n;
	return true;

not_a_number:
	snprintf(why, whylen, "%s must be a decimal integer, not \"%.200s\"", key, v);
	return false;
out_of_range:
	snprintf(why, whylen, "%s must be between %llu and %llu", key,
		 (unsigned long long)min, (unsigned long long)max);
	return false;
}

static bool
parse_bool(const char *key, const char *v, bool *out, char *why,
	   size_t whylen)
{
	*out = false;
	if (strcmp(v, "true") == 0)
		*out = true;
	else if (strcmp(v, "false") != 0) {
		snprintf(why, whylen, "%s must be true or false, not \"%.200s\"", key,
			 v);
		return false;
	}
	return true;
}

static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
valid_hostname(const char *key, const char *v, char *why, size_t whylen)
{
	size_t i, len = strlen(v);
	bool ok = len >= 1 && len <= HOSTNAME_MAX && v[0] != '-';

	for (i = 0; ok && i < len; i++)
		ok = is_alpha(v[i]) || is_digit(v[i]) || v[i] == '-';
	if (!ok)
		snprintf(why, whylen,
			 "%s must be 1 to 63 characters of [A-Za-z0-9-] not "
			 "starting with \"-\", not \"%.200s\"",
			 key, v);
	return ok;
}

/* A name useradd accepts in its default configuration. */
static bool
valid_user(const char *key, const char *v, char *why, size_t whylen)
{
	size_t i, len = strlen(v);
	bool ok = len >= 1 && len <= USER_MAX &&
		  ((v[0] >= 'a' && v[0] <= 'z') || v[0] == '_');

	for (i = 1; ok && i < len; i++)
		ok = (v[i] >= 'a' && v[i] <= 'z') || is_digit(v[i]) ||
		     v[i] == '_' || v[i] == '-';
	if (!ok)
		snprintf(why, whylen,
			 "%s must be 1 to 32 characters matching "
			 "[a-z_][a-z0-9_-]*, not \"%.200s\"",
			 key, v);
	return ok;
}

/*
 * An absolute, normalised path other than "/": no empty, "." or ".."
 * component and no trailing slash. The launcher binds it at the same place
 * in the jail; refusing ".." and friends here means the path a policy
 * names is the path that gets bound, with no lexical surprises. "/" is
 * refused because binding the whole host defeats the jail. The length
 * bound is PATH_MAX with its NUL, what the kernel takes.
 */
static bool
valid_path(const char *key, const char *v, char *why, size_t whylen)
{
	const char *s, *slash;
	size_t len = strlen(v);

	if (v[0] != '/') {
		snprintf(why, whylen, "%s must be an absolute path, not \"%.200s\"",
			 key, v);
		return false;
	}
	if (len >= PATH_MAX) {
		snprintf(why, whylen, "%s path is longer than %d bytes", key,
			 PATH_MAX - 1);
		return false;
	}
	if (len == 1) {
		snprintf(why, whylen, "%s must not be \"/\"", key);
		return false;
	}
	for (s = v + 1;; s = slash + 1) {
		size_t n;

		slash = strchr(s, '/');
		n = slash ? (size_t)(slash - s) : strlen(s);
		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.')) {
			snprintf(why, whylen,
				 "%s path \"%.200s\" is not normalised (empty, \".\" "
				 "or \"..\" component, or trailing slash)",
				 key, v);
			return false;
		}
		if (!slash)
			return true;
	}
}

static bool
valid_env_name(const char *v)
{
	if (!is_alpha(*v) && *v != '_')
		return false;
	for (v++; *v; v++)
		if (!is_alpha(*v) && !is_digit(*v) && *v != '_')
			return false;
	return true;
}

/* ---- The handler ------------------------------------------------------- */

static void
free_env(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->nenv; i++)
		free(p->env[i]);
	free(p->env);
	p->env = NULL;
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
	p->mounts = NULL;
	p->nmounts = 0;
}

static int
set_scalar(struct loader *l, size_t i, const char *v)
{
	const struct scalar_key *k = &scalar_keys[i];
	char *field = (char *)l->p + k->offset;
	char why[POLICY_ERR_MAX];
	uint64_t n;
	bool b, ok;
	char *s;

	/* A layer gives a key once: a second value silently winning hides
	 * mistakes in exactly the file a reviewer reads. */
	if (l->seen & (UINT32_C(1) << i))
		return fail(l, "duplicate key \"%s\"", k->name);
	l->seen |= UINT32_C(1) << i;

	switch (k->kind) {
	case K_U64:
		if (!parse_number(k->name, v, k->min, k->max, &n, why,
				  sizeof(why)))
			return fail(l, "%s", why);
		*(uint64_t *)(void *)field = n * k->unit;
		return 1;
	case K_U32:
		if (!parse_number(k->name, v, k->min, k->max, &n, why,
				  sizeof(why)))
			return fail(l, "%s", why);
		*(uint32_t *)(void *)field = (uint32_t)n;
		return 1;
	case K_BOOL:
		if (!parse_bool(k->name, v, &b, why, sizeof(why)))
			return fail(l, "%s", why);
		*(bool *)(void *)field = b;
		return 1;
	case K_HOSTNAME:
		ok = valid_hostname(k->name, v, why, sizeof(why));
		break;
	case K_USER:
		ok = valid_user(k->name, v, why, sizeof(why));
		break;
	case K_PATH:
		ok = valid_path(k->name, v, why, sizeof(why));
		break;
	default:
		ok = false;
		snprintf(why, sizeof(why), "internal error: key kind");
		break;
	}
	if (!ok)
		return fail(l, "%s", why);
	s = strdup(v);
	if (!s)
		return fail_at(l, -ENOMEM, l->lineno, "out of memory");
	free(*(char **)(void *)field);
	*(char **)(void *)field = s;
	return 1;
}

static int
add_env(struct loader *l, const char *name, const char *v)
{
	struct policy *p = l->p;
	size_t i, nlen = strlen(name);
	char **env, *s;

	if (!valid_env_name(name))
		return fail(l,
			    "invalid variable name \"%s\" (expected "
			    "[A-Za-z_][A-Za-z0-9_]*)",
			    name);
	/* The list holds only this layer's variables (the first key cleared
	 * the inherited ones), so a match is a repeat within this file. */
	for (i = 0; i < p->nenv; i++)
		if (strncmp(p->env[i], name, nlen) == 0 &&
		    p->env[i][nlen] == '=')
			return fail(l, "duplicate key \"%s\"", name);
	if (p->nenv >= JOB_MAX_ENV)
		return fail(l, "too many environment variables (at most %u)",
			    JOB_MAX_ENV);
	if (asprintf(&s, "%s=%s", name, v) < 0)
		return fail_at(l, -ENOMEM, l->lineno, "out of memory");
	env = reallocarray(p->env, p->nenv + 1, sizeof(*env));
	if (!env) {
		free(s);
		return fail_at(l, -ENOMEM, l->lineno, "out of memory");
	}
	p->env = env;
	p->env[p->nenv++] = s;
	return 1;
}

static int
add_mount(struct loader *l, const char *key, const char *v)
{
	struct policy *p = l->p;
	struct mount_entry *m;
	enum mount_kind kind;
	char why[POLICY_ERR_MAX];
	size_t i;

	if (strcmp(key, "ro_bind") == 0)
		kind = MOUNT_RO_BIND;
	else if (strcmp(key, "ro_bind_try") == 0)
		kind = MOUNT_RO_BIND_TRY;
	else
		return fail(l, "unknown key \"%s\" in [filesystem]", key);
	if (!valid_path(key, v, why, sizeof(why)))
		return fail(l, "%s", why);
	for (i = 0; i < p->nmounts; i++)
		if (strcmp(p->mounts[i].target, v) == 0)
			return fail(l, "duplicate mount \"%s\"", v);
	if (p->nmounts >= JOB_MAX_MOUNTS)
		return fail(l, "too many mounts (at most %u)", JOB_MAX_MOUNTS);
	m = reallocarray(p->mounts, p->nmounts + 1, sizeof(*m));
	if (!m)
		return fail_at(l, -ENOMEM, l->lineno, "out of memory");
	p->mounts = m;
	m = &p->mounts[p->nmounts];
	/* The policy binds a host path at the same place in the jail. */
	m->kind = kind;
	m->source = strdup(v);
	m->target = strdup(v);
	if (!m->source || !m->target) {
		free(m->source);
		free(m->target);
		return fail_at(l, -ENOMEM, l->lineno, "out of memory");
	}
	p->nmounts++;
	return 1;
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
	if (has_control(v))
		return fail(l, "value of \"%s\" contains a control character",
			    key);

	switch (l->section) {
	case SEC_NONE:
		return fail(l, "key \"%s\" outside any section", key);
	case SEC_LIMITS:
	case SEC_JAIL:
		for (i = 0; i < NSCALARS; i++)
			if (scalar_keys[i].section == l->section &&
			    strcmp(scalar_keys[i].name, key) == 0)
				return set_scalar(l, i, v);
		return fail(l, "unknown key \"%s\" in [%s]", key,
			    section_names[l->section]);
	case SEC_ENVIRONMENT:
		/* The first key of a layer replaces the inherited list. */
		if (!l->env_replaced) {
			free_env(l->p);
			l->env_replaced = true;
		}
		return add_env(l, key, v);
	case SEC_FILESYSTEM:
		if (!l->mounts_replaced) {
			free_mounts(l->p);
			l->mounts_replaced = true;
		}
		return add_mount(l, key, v);
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

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * A list section with no key would mean "keep the default list" by the
 * header's rule (the first key replaces it) and "empty list" by the one in
 * default.ini ("a list section you give at all"); rather than pick one
 * silently, we refuse it.
 */
static void
end_section(struct loader *l)
{
	if ((l->section == SEC_ENVIRONMENT || l->section == SEC_FILESYSTEM) &&
	    !l->section_keys)
		fail_at(l, -EINVAL, l->section_line,
			"empty [%s] section (leave it out to keep the default "
			"list)",
			section_names[l->section]);
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
	for (t = s; is_blank(*t); t++)
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
		was_space = is_blank(*end);
	if (*end != ']')
		return true;
	/* inih ignores whatever follows "]"; we allow only a comment. */
	for (s = end + 1; is_blank(*s); s++)
		;
	if (*s != '\0' && *s != ';' && *s != '#') {
		fail(l, "syntax error (expected \"key = value\" or \"[section]\")");
		return false;
	}
	end_section(l);
	if (l->code)
		return false;
	n = (size_t)(end - (t + 1));
	for (i = SEC_LIMITS; i <= SEC_FILESYSTEM; i++)
		if (strlen(section_names[i]) == n &&
		    memcmp(section_names[i], t + 1, n) == 0)
			break;
	if (i > SEC_FILESYSTEM) {
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

/* Lays one layer (FILE or TEXT, named NAME) over P. */
static int
parse_layer(struct policy *p, const char *name, bool is_default, FILE *file,
	    const char *text, char *err, size_t errlen)
{
	struct loader l = {
		.p = p,
		.name = name,
		.file = file,
		.text = text,
		.err = err,
		.errlen = errlen,
	};
	size_t i;
	int r;

	errno = 0;
	r = ini_parse_stream(read_line, &l, handle_key, &l);
	if (l.read_errno) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", name,
				 strerror(l.read_errno));
		return -l.read_errno;
	}
	if (r < 0) { /* inih could not allocate its line buffer */
		fail_at(&l, -ENOMEM, l.lineno, "out of memory");
		return l.code;
	}
	if (!l.code) /* the reader reached the end */
		end_section(&l);
	/* inih returns the line of the first error, its own or a refusal of
	 * the handler's; the earlier of that and ours is the first error. */
	if (r > 0 && (!l.code || (unsigned)r < l.err_line)) {
		l.code = 0;
		fail_at(&l, -EINVAL, (unsigned)r,
			"syntax error (expected \"key = value\" or "
			"\"[section]\")");
		return l.code;
	}
	/* The default must set every scalar: the loaded policy's limits are
	 * all non-zero whatever a file leaves out. */
	for (i = 0; !l.code && is_default && i < NSCALARS; i++)
		if (!(l.seen & (UINT32_C(1) << i)))
			fail_at(&l, -EINVAL, l.lineno,
				"missing key \"%s\" in [%s]",
				scalar_keys[i].name,
				section_names[scalar_keys[i].section]);
	return l.code;
}

/*
 * Loads the default into a fresh policy and lays FILE or TEXT (NAME) over
 * it when NAME is not NULL. Fills P only on success.
 */
static int
load(struct policy *p, const char *name, FILE *file, const char *text,
     char *err, size_t errlen)
{
	_cleanup_(policy_clear) struct policy tmp = {0};
	int r;

	memset(p, 0, sizeof(*p));
	if (err && errlen)
		err[0] = '\0';
	r = parse_layer(&tmp, DEFAULT_NAME, true, NULL, policy_default_text,
			err, errlen);
	if (r < 0)
		return r;
	tmp.name = strdup(name ? name : DEFAULT_NAME);
	if (!tmp.name) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", name ? name : DEFAULT_NAME,
				 strerror(ENOMEM));
		return -ENOMEM;
	}
	if (name) {
		r = parse_layer(&tmp, name, false, file, text, err, errlen);
		if (r < 0)
			return r;
	}
	*p = tmp;
	memset(&tmp, 0, sizeof(tmp));
	return 0;
}

int
policy_load_default(struct policy *p, char *err, size_t errlen)
{
	return load(p, NULL, NULL, NULL, err, errlen);
}

int
policy_load_file(struct policy *p, const char *path, char *err,
		 size_t errlen)
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
	return load(p, path, f, NULL, err, errlen);
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
	return load(p, name, NULL, text, err, errlen);
}

void
policy_clear(struct policy *p)
{
	if (!p)
		return;
	free(p->name);
	free_env(p);
	free_mounts(p);
	free(p->hostname);
	free(p->user);
	free(p->home);
	memset(p, 0, sizeof(*p));
}

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

	if (has_control(v))
		return false;
	if (len && (is_blank(v[0]) || is_blank(v[len - 1])))
		return false;
	for (s = v; *s; s++)
		if (is_blank(*s) && s[1] == ';')
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
		ok = parse_number(k->name, buf, k->min, k->max, &check, why,
				  sizeof(why));
		break;
	case K_BOOL:
		*v = *(const bool *)(const void *)field ? "true" : "false";
		return 0;
	case K_HOSTNAME:
	case K_USER:
	case K_PATH:
		*v = *(char *const *)(const void *)field;
		if (!*v)
			return -EINVAL;
		ok = k->kind == K_HOSTNAME ? valid_hostname(k->name, *v, why,
							     sizeof(why))
		     : k->kind == K_USER
			 ? valid_user(k->name, *v, why, sizeof(why))
			 : valid_path(k->name, *v, why, sizeof(why));
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
	return kind == MOUNT_RO_BIND ? "ro_bind" : "ro_bind_try";
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
	return valid_env_name(name) ? eq + 1 : NULL;
}

/*
 * Everything P holds must come back from a load: in range, valid, each
 * line within the reader's limit, no empty list (end_section()), no
 * repeated variable or mount. A hand-built policy can break any of these.
 */
static int
check_format(const struct policy *p)
{
	char num[32], name[LINE_MAX_BYTES + 1], other[LINE_MAX_BYTES + 1];
	char why[POLICY_ERR_MAX];
	const char *v;
	size_t i, j;
	int r;

	for (i = 0; i < NSCALARS; i++) {
		r = scalar_text(p, &scalar_keys[i], num, sizeof(num), &v);
		if (r == 0)
			r = put_kv(NULL, scalar_keys[i].name, v);
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

		if ((m->kind != MOUNT_RO_BIND && m->kind != MOUNT_RO_BIND_TRY) ||
		    !m->source || !m->target ||
		    strcmp(m->source, m->target) != 0 ||
		    !valid_path("", m->source, why, sizeof(why)) ||
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
	char num[32], name[LINE_MAX_BYTES + 1];
	const char *v;
	size_t i;
	int r;

	/* Check everything first, so that a refusal writes nothing. */
	r = check_format(p);
	if (r < 0)
		return r;

	r = put_header(out, p->name ? p->name : DEFAULT_NAME);
	for (sec = SEC_LIMITS; r == 0 && sec <= SEC_JAIL; sec++) {
		if (fprintf(out, "\n[%s]\n", section_names[sec]) < 0)
			return -EIO;
		for (i = 0; r == 0 && i < NSCALARS; i++) {
			if (scalar_keys[i].section != sec)
				continue;
			r = scalar_text(p, &scalar_keys[i], num, sizeof(num),
					&v);
			if (r == 0)
				r = put_kv(out, scalar_keys[i].name, v);
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
