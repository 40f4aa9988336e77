/*
 * eval_corpus.c: the programs `stockade eval` runs and their headers
 * (eval_corpus.h; issue 6).
 */
#include "eval_corpus.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

#define HEADER_MAX 16384 /* bytes of a program read for its header */

const char *
eval_lang_interpreter(enum eval_lang lang)
{
	switch (lang) {
	case EVAL_LANG_PYTHON:
		return "python3";
	case EVAL_LANG_SHELL:
		return "sh";
	case EVAL_LANG_BINARY:
		return NULL;
	}
	return NULL;
}

/* Appends S (LEN bytes, copied) to the string array *V of *N. */
static int
push_str(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = reallocarray(*v, *n + 1, sizeof(**v));

	if (nv == NULL)
		return -ENOMEM;
	*v = nv;
	if ((nv[*n] = strndup(s, len)) == NULL)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Trims blanks at both ends of [*S, *S + *LEN). */
static void
trim(const char **s, size_t *len)
{
	while (*len > 0 && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static const char *const stop_words[] = {
    "canary-unread",
    "pwned-absent",
    "files-intact",
    "decoy-unsignalled",
    "no-survivor",
    "output-capped",
    "terminal-untouched",
};

const char *
eval_stop_name(unsigned bit)
{
	for (size_t i = 0; i < sizeof(stop_words) / sizeof(stop_words[0]); i++)
		if (bit == 1u << i)
			return stop_words[i];
	return NULL;
}

/*
 * The "stopped-when" value V (VLEN bytes): words of stop_words separated
 * by commas and blanks, into *BITS. Returns 0, or -EINVAL for an unknown
 * word, a word twice or none at all (docs/evidence.md).
 */
static int
parse_stopped_when(const char *v, size_t vlen, unsigned *bits)
{
	const char *p = v, *end = v + vlen;

	*bits = 0;
	while (p < end) {
		const char *w;
		size_t wlen = 0;
		bool known = false;

		while (p < end && (*p == ',' || isspace((unsigned char)*p)))
			p++;
		w = p;
		while (p < end && *p != ',' && !isspace((unsigned char)*p))
			p++;
		wlen = (size_t)(p - w);
		if (wlen == 0)
			break;
		for (size_t i = 0;
		     i < sizeof(stop_words) / sizeof(stop_words[0]); i++)
			if (strlen(stop_words[i]) == wlen &&
			    memcmp(stop_words[i], w, wlen) == 0) {
				if (*bits & (1u << i))
					return -EINVAL;
				*bits |= 1u << i;
				known = true;
			}
		if (!known)
			return -EINVAL;
	}
	return *bits != 0 ? 0 : -EINVAL;
}

/* One "key: value" (LINE, LEN bytes, the comment marker removed) into A. */
static int
header_line(struct eval_attack *a, const char *line, size_t len)
{
	const char *colon = memchr(line, ':', len), *k = line, *v;
	size_t klen, vlen;
	struct eval_kv *nkv;

	if (colon == NULL)
		return 0;
	klen = (size_t)(colon - line);
	v = colon + 1;
	vlen = len - klen - 1;
	trim(&k, &klen);
	trim(&v, &vlen);
	if (klen == 0 || klen > 32)
		return 0;
	for (size_t i = 0; i < klen; i++)
		if (!islower((unsigned char)k[i]) && k[i] != '_' && k[i] != '-')
			return 0;
	nkv = reallocarray(a->kv, a->nkv + 1, sizeof(*a->kv));
	if (nkv == NULL)
		return -ENOMEM;
	a->kv = nkv;
	nkv[a->nkv].key = strndup(k, klen);
	nkv[a->nkv].value = strndup(v, vlen);
	if (nkv[a->nkv].key == NULL || nkv[a->nkv].value == NULL) {
		free(nkv[a->nkv].key);
		free(nkv[a->nkv].value);
		return -ENOMEM;
	}
	a->nkv++;
	if (klen == 5 && memcmp(k, "exfil", 5) == 0) {
		if (vlen == 3 && memcmp(v, "yes", 3) == 0)
			a->exfil = true;
		else if (vlen == 2 && memcmp(v, "no", 2) == 0)
			a->exfil = false;
		else
			return -EINVAL;
	} else if (klen == 12 && memcmp(k, "stopped-when", 12) == 0) {
		if (a->stopped_when != 0)
			return -EINVAL;
		return parse_stopped_when(v, vlen, &a->stopped_when);
	} else if (klen == 14 && memcmp(k, "attempted-when", 14) == 0) {
		if (a->attempted_when != EVAL_ATTEMPT_UNDECLARED || vlen != 6 ||
		    memcmp(v, "marker", 6) != 0)
			return -EINVAL;
		a->attempted_when = EVAL_ATTEMPT_MARKER;
	} else if (klen == 7 && memcmp(k, "fileapi", 7) == 0) {
		const char *name = v + 3;
		size_t nlen = vlen > 3 ? vlen - 3 : 0;

		trim(&name, &nlen);
		if (vlen < 5 ||
		    (memcmp(v, "get", 3) != 0 && memcmp(v, "put", 3) != 0) ||
		    !isspace((unsigned char)v[3]) || nlen == 0)
			return -EINVAL;
		for (size_t i = 0; i < nlen; i++)
			if (isspace((unsigned char)name[i]))
				return -EINVAL;
		return v[0] == 'g' ? push_str(&a->gets, &a->ngets, name, nlen)
				   : push_str(&a->puts, &a->nputs, name, nlen);
	}
	return 0;
}

int
eval_header_parse(struct eval_attack *a, enum eval_lang lang, const char *text,
    size_t len)
{
	const char *p = text, *end = text + len;
	bool c_style = lang == EVAL_LANG_BINARY, in_block = false;
	int e;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line = p, *lend = nl != NULL ? nl : end;
		size_t llen;

		p = nl != NULL ? nl + 1 : end;
		llen = (size_t)(lend - line);
		trim(&line, &llen);
		if (c_style) {
			if (!in_block) {
				if (llen >= 2 && memcmp(line, "/*", 2) == 0) {
					in_block = true;
					line += 2;
					llen -= 2;
				} else if (llen == 0 || line[0] == '#') {
					continue; /* before the comment */
				} else {
					break; /* code: no header */
				}
			}
			if (llen >= 2 &&
			    memcmp(line + llen - 2, "*/", 2) == 0) {
				if ((e = header_line(a, line, llen - 2)) < 0)
					return e;
				break;
			}
			while (llen > 0 && *line == '*') {
				line++;
				llen--;
			}
		} else {
			if (llen >= 2 && memcmp(line, "#!", 2) == 0 &&
			    line == text)
				continue;
			if (llen == 0 && !in_block)
				continue;
			if (llen == 0 || line[0] != '#')
				break;
			in_block = true;
			while (llen > 0 && *line == '#') {
				line++;
				llen--;
			}
		}
		if ((e = header_line(a, line, llen)) < 0)
			return e;
	}
	return eval_attack_get(a, "family") != NULL ? 0 : -EINVAL;
}

int
eval_header_contract(const struct eval_attack *a, char *err, size_t errlen)
{
	if (a->stopped_when == 0) {
		snprintf(err, errlen,
		    "no \"stopped-when:\" line (what being "
		    "stopped looks like: docs/evidence.md)");
		return -EINVAL;
	}
	if (a->attempted_when == EVAL_ATTEMPT_UNDECLARED) {
		snprintf(err, errlen,
		    "no \"attempted-when:\" line (what a "
		    "valid attempt looks like: docs/evidence.md)");
		return -EINVAL;
	}
	if (a->exfil && !(a->stopped_when & EVAL_STOP_CANARY)) {
		snprintf(err, errlen,
		    "\"exfil: yes\" without \"canary-unread\" "
		    "in \"stopped-when:\"");
		return -EINVAL;
	}
	return 0;
}

const char *
eval_attack_get(const struct eval_attack *a, const char *key)
{
	for (size_t i = 0; i < a->nkv; i++)
		if (strcmp(a->kv[i].key, key) == 0)
			return a->kv[i].value;
	return NULL;
}

static void
attack_free(struct eval_attack *a)
{
	free(a->name);
	free(a->file);
	free(a->path);
	for (size_t i = 0; i < a->nkv; i++) {
		free(a->kv[i].key);
		free(a->kv[i].value);
	}
	free(a->kv);
	for (size_t i = 0; i < a->ngets; i++)
		free(a->gets[i]);
	free(a->gets);
	for (size_t i = 0; i < a->nputs; i++)
		free(a->puts[i]);
	free(a->puts);
	memset(a, 0, sizeof(*a));
}

void
eval_corpus_free(struct eval_corpus *c)
{
	for (size_t i = 0; i < c->n; i++)
		attack_free(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void
eval_corpus_keep_exfil(struct eval_corpus *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].exfil)
			c->v[k++] = c->v[i];
		else
			attack_free(&c->v[i]);
	}
	c->n = k;
}

/*
 * What NAME (an entry of the corpus directory) is: 1 with *LANG and the
 * length of its stem in *STEM for a program, 0 for anything else.
 */
static int
classify(const char *name, bool any_name, enum eval_lang *lang, size_t *stem)
{
	size_t len = strlen(name);
	const char *dot = strrchr(name, '.');

	if (any_name) {
		if (dot == NULL || dot == name)
			return 0;
		for (size_t i = 0; i < len; i++)
			if (!isalnum((unsigned char)name[i]) &&
			    strchr("._-", name[i]) == NULL)
				return 0;
	} else {
		if (len < 4 || !isdigit((unsigned char)name[0]) ||
		    !isdigit((unsigned char)name[1]) || name[2] != '-')
			return 0;
		for (size_t i = 3; i < len; i++)
			if (!islower((unsigned char)name[i]) &&
			    !isdigit((unsigned char)name[i]) &&
			    strchr("_-", name[i]) == NULL && &name[i] != dot)
				return 0;
	}
	if (dot != NULL && strcmp(dot, ".py") == 0)
		*lang = EVAL_LANG_PYTHON;
	else if (dot != NULL && strcmp(dot, ".sh") == 0)
		*lang = EVAL_LANG_SHELL;
	else if (dot == NULL && !any_name)
		*lang = EVAL_LANG_BINARY;
	else
		return 0;
	*stem = dot != NULL ? (size_t)(dot - name) : len;
	return 1;
}

/* Reads at most HEADER_MAX bytes of DIR/NAME into BUF; -errno or length. */
static ssize_t
read_head(const char *dir, const char *name, char *buf)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	size_t got = 0;

	if (dir == NULL)
		return -ENOENT;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = openat(dfd, name,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < HEADER_MAX) {
		ssize_t r = read(fd, buf + got, HEADER_MAX - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static bool
wanted(const char *name, char *const *only, size_t nonly)
{
	if (nonly == 0)
		return true;
	for (size_t i = 0; i < nonly; i++) {
		size_t l = strlen(only[i]);

		if (strcmp(name, only[i]) == 0 ||
		    (l == 2 && strncmp(name, only[i], 2) == 0 &&
			name[2] == '-'))
			return true;
	}
	return false;
}

static int
cmp_attack(const void *a, const void *b)
{
	return strcmp(((const struct eval_attack *)a)->name,
	    ((const struct eval_attack *)b)->name);
}

/* Adds the program NAME (STEM bytes of name, language LANG) of DIR; a
 * corpus entry (not ANY_NAME) must meet eval_header_contract. */
static int
add_one(struct eval_corpus *c, const char *dir, const char *srcdir,
    const char *name, size_t stem, enum eval_lang lang, bool any_name,
    char *err, size_t errlen)
{
	_cleanup_free_ char *buf = malloc(HEADER_MAX), *src = NULL;
	struct eval_attack *a, *nv;
	ssize_t len;
	int e;

	if (buf == NULL)
		return -ENOMEM;
	nv = reallocarray(c->v, c->n + 1, sizeof(*c->v));
	if (nv == NULL)
		return -ENOMEM;
	c->v = nv;
	a = &c->v[c->n++];
	memset(a, 0, sizeof(*a));
	a->lang = lang;
	if ((a->name = strndup(name, stem)) == NULL ||
	    (a->file = strdup(name)) == NULL ||
	    asprintf(&a->path, "%s/%s", dir, name) < 0) {
		a->path = NULL;
		return -ENOMEM;
	}
	if (lang == EVAL_LANG_BINARY) {
		if (asprintf(&src, "%s.c", a->name) < 0) {
			src = NULL;
			return -ENOMEM;
		}
		len = read_head(dir, src, buf);
		if (len == -ENOENT)
			len = read_head(srcdir, src, buf);
	} else {
		len = read_head(dir, name, buf);
	}
	if (len < 0) {
		snprintf(err, errlen, "%s: cannot read its header%s%s: %s",
		    a->path, src != NULL ? " from " : "",
		    src != NULL ? src : "", strerror((int)-len));
		return (int)len;
	}
	e = eval_header_parse(a, lang, buf, (size_t)len);
	if (e == -EINVAL)
		snprintf(err, errlen,
		    "%s: invalid header (it needs \"family:\"; "
		    "\"exfil:\" is yes or no; \"fileapi:\" is get NAME or "
		    "put NAME; \"stopped-when:\" lists words of "
		    "docs/evidence.md's vocabulary; \"attempted-when:\" is "
		    "marker)",
		    a->path);
	if (e == 0 && !any_name) {
		char why[200];

		if ((e = eval_header_contract(a, why, sizeof(why))) < 0)
			snprintf(err, errlen, "%s: invalid header: %s", a->path,
			    why);
	}
	return e;
}

int
eval_corpus_load(struct eval_corpus *c, const char *dir, const char *srcdir,
    bool any_name, char *const *only, size_t nonly, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int e = 0;

	memset(c, 0, sizeof(*c));
	if (d == NULL) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-e));
		return e;
	}
	while (e == 0 && (errno = 0, de = readdir(d)) != NULL) {
		enum eval_lang lang;
		size_t stem;
		struct stat st;

		if (!classify(de->d_name, any_name, &lang, &stem) ||
		    fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (lang == EVAL_LANG_BINARY && !(st.st_mode & S_IXUSR))
			continue;
		{
			_cleanup_free_ char *nm = strndup(de->d_name, stem);

			if (nm == NULL) {
				e = -ENOMEM;
				break;
			}
			if (!wanted(nm, only, nonly))
				continue;
		}
		e = add_one(c, dir, srcdir, de->d_name, stem, lang, any_name,
		    err, errlen);
	}
	if (e == 0 && errno != 0) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-e));
	}
	closedir(d);
	if (e == 0) {
		/* Not with no attack: qsort's base may not be NULL (UBSan). */
		if (c->n > 1)
			qsort(c->v, c->n, sizeof(*c->v), cmp_attack);
		for (size_t i = 1; !any_name && i < c->n; i++)
			if (strncmp(c->v[i - 1].name, c->v[i].name, 2) == 0) {
				snprintf(err, errlen,
				    "%s and %s have the same "
				    "number",
				    c->v[i - 1].path, c->v[i].path);
				e = -EEXIST;
				break;
			}
	}
	if (e == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (e < 0)
		eval_corpus_free(c);
	return e;
}
