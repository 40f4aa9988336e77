/*
 * eval_corpus.h: the attack corpus of `stockade eval` (issue 6): the
 * programs in tests/attacks/ (built into build/tests/attacks/) and the
 * hostile programs of tests/eval/hostile/, with their headers.
 *
 * A program is a file "NN-short-name.py", "NN-short-name.sh" or a C
 * attack's executable "NN-short-name" (no extension; its header is read
 * from "NN-short-name.c", beside it or in a second source directory).
 * Its header is the first comment block (docs/evidence.md, "The attack
 * contract"): "# key: value" lines for Python and shell (after an
 * optional "#!" line), " * key: value" lines in the first C comment.
 * Keys: family, tries, source, exfil (yes|no), fileapi (get NAME | put
 * NAME, repeatable); other keys are kept as they are.
 */
#ifndef STOCKADE_EVAL_CORPUS_H
#define STOCKADE_EVAL_CORPUS_H

#include <stdbool.h>
#include <stddef.h>

enum eval_lang {
	EVAL_LANG_PYTHON,       /* python3 ./FILE */
	EVAL_LANG_SHELL,        /* sh ./FILE */
	EVAL_LANG_BINARY,       /* ./FILE */
};

/* One "key: value" line of a header, both owned. */
struct eval_kv {
	char *key;
	char *value;
};

struct eval_attack {
	char *name;             /* "NN-short-name": the file name without
				 * extension (owned) */
	char *file;             /* the file name in the directory (owned) */
	char *path;             /* DIR/FILE (owned) */
	enum eval_lang lang;
	struct eval_kv *kv;     /* every header line, in order (owned) */
	size_t nkv;
	bool exfil;             /* exfil: yes */
	char **gets;            /* fileapi: get NAME, in order (owned) */
	size_t ngets;
	char **puts;            /* fileapi: put NAME, in order (owned) */
	size_t nputs;
};

struct eval_corpus {
	struct eval_attack *v;  /* sorted by name (strcmp) */
	size_t n;
};

/* The interpreter of LANG as the job's PROGRAM ("python3", "sh"), or NULL
 * for a binary (run as "./FILE"). */
const char *eval_lang_interpreter(enum eval_lang lang);

/*
 * Parses the header of a program of language LANG from its first LEN
 * bytes TEXT (need not be NUL-terminated; only the first comment block is
 * read) into A's kv, exfil, gets and puts (A's other fields untouched).
 * Returns 0; -ENOMEM; -EINVAL for an "exfil" that is not yes/no or a
 * "fileapi" that is not "get NAME" or "put NAME" (NAME without
 * whitespace), or a header without "family".
 */
int eval_header_parse(struct eval_attack *a, enum eval_lang lang,
		      const char *text, size_t len);

/* The value of the first header line KEY of A, or NULL (borrowed). */
const char *eval_attack_get(const struct eval_attack *a, const char *key);

/*
 * Loads every program of the directory DIR into C (zeroed or freed by
 * the caller): the regular files whose names are two digits, '-', then
 * [a-z0-9_-], ending in ".py" or ".sh", or with no extension and
 * executable (a C attack: its header from DIR/NAME.c, else SRCDIR/NAME.c
 * when SRCDIR is not NULL). Other entries (meson's NAME.p directories,
 * the .c sources) are ignored. With ANY_NAME (the hostile programs of
 * tests/eval/, named freely), every "*.py" and "*.sh" file whose name is
 * made of [A-Za-z0-9._-] is a program, and no number is required. When
 * ONLY (NONLY strings) is not empty, a program is kept only if its name
 * or its two-digit number is one of them. Returns 0; -ENOMEM; another
 * negative errno with a sentence in ERR (ERRLEN bytes) naming the file at
 * fault (DIR unreadable, a header missing or invalid, two programs with
 * the same number).
 */
int eval_corpus_load(struct eval_corpus *c, const char *dir,
		     const char *srcdir, bool any_name, char *const *only,
		     size_t nonly, char *err, size_t errlen);

/* Keeps only the programs of C with "exfil: yes" (the isolation
 * table's), in order; frees the others. */
void eval_corpus_keep_exfil(struct eval_corpus *c);

/* Frees everything C owns and zeroes it; accepts a zeroed C. */
void eval_corpus_free(struct eval_corpus *c);

#endif
