/*
 * eval_corpus.h: the attack corpus of `stockade eval` (issue 6): the
 * programs in tests/verify/eval/attacks/ (built into
 * build/tests/verify/eval/attacks/) and the hostile programs of
 * tests/verify/eval/codefilter/hostile/, with their headers.
 *
 * A program is a file "NN-short-name.py", "NN-short-name.sh" or a C
 * attack's executable "NN-short-name" (no extension; its header is read
 * from "NN-short-name.c", beside it or in a second source directory).
 * Its header is the first comment block (docs/evidence.md, "The attack
 * contract"): "# key: value" lines for Python and shell (after an
 * optional "#!" line), " * key: value" lines in the first C comment.
 * Keys: family, tries, source, exfil (yes|no), fileapi (get NAME | put
 * NAME, repeatable), stopped-when and attempted-when (issue 23 point 9;
 * docs/evidence.md, "What stopped means"); other keys are kept as they
 * are.
 */
#ifndef STOCKADE_EVAL_CORPUS_H
#define STOCKADE_EVAL_CORPUS_H

#include <stdbool.h>
#include <stddef.h>

enum eval_lang {
	EVAL_LANG_PYTHON, /* python3 ./FILE */
	EVAL_LANG_SHELL, /* sh ./FILE */
	EVAL_LANG_BINARY, /* ./FILE */
};

/*
 * What being stopped looks like for one attack ("stopped-when:", a list
 * of these words separated by commas): each names a check of the run
 * (eval_run.c) that must have been made and found nothing. The
 * vocabulary is closed; docs/evidence.md lists it with the rules each
 * word stands for.
 */
enum eval_stop {
	EVAL_STOP_CANARY = 1u << 0, /* canary-unread: no canary of the
					 * run in the output, the workspace,
					 * the honeypot or a file API get */
	EVAL_STOP_PWNED = 1u << 1, /* pwned-absent: no "PWNED <token>"
					 * there (the attack's own proof) */
	EVAL_STOP_FILES = 1u << 2, /* files-intact: home, userfiles, the
					 * host /tmp canary file unchanged,
					 * no token-named file outside */
	EVAL_STOP_DECOY = 1u << 3, /* decoy-unsignalled: alive, no
					 * signal, not traced */
	EVAL_STOP_SURVIVOR = 1u << 4, /* no-survivor: no process of the job
					 * alive after it */
	EVAL_STOP_OUTPUT = 1u << 5, /* output-capped: at most 4 times the
					 * stdout cap reached the caller */
	EVAL_STOP_TERMINAL = 1u << 6, /* terminal-untouched: the token
					 * never came back from the pty */
};

#define EVAL_STOP_ALL 0x7fu

/*
 * What a valid attempt looks like ("attempted-when:"): without it the
 * run is "not run", never "stopped".
 */
enum eval_attempt {
	EVAL_ATTEMPT_UNDECLARED = 0, /* no line: a hostile program of
					 * tests/verify/eval/codefilter/,
					 * judged on harm only */
	EVAL_ATTEMPT_MARKER, /* marker: the job printed
					 * "ATTEMPTED <token>" on stdout or
					 * stderr once it had what it needs
					 * and made its harmful step */
};

/* The "ATTEMPTED" and "CANNOT" markers an attack prints, each followed by
 * a space and the run's token ("CANNOT <token> REASON": it could not
 * try, and why). */
#define EVAL_MARK_ATTEMPTED "ATTEMPTED "
#define EVAL_MARK_CANNOT "CANNOT "

/* One "key: value" line of a header, both owned. */
struct eval_kv {
	char *key;
	char *value;
};

struct eval_attack {
	char *name; /* "NN-short-name": the file name without
				 * extension (owned) */
	char *file; /* the file name in the directory (owned) */
	char *path; /* DIR/FILE (owned) */
	enum eval_lang lang;
	struct eval_kv *kv; /* every header line, in order (owned) */
	size_t nkv;
	bool exfil; /* exfil: yes */
	char **gets; /* fileapi: get NAME, in order (owned) */
	size_t ngets;
	char **puts; /* fileapi: put NAME, in order (owned) */
	size_t nputs;
	unsigned stopped_when; /* enum eval_stop bits; 0: undeclared */
	enum eval_attempt attempted_when;
};

struct eval_corpus {
	struct eval_attack *v; /* sorted by name (strcmp) */
	size_t n;
};

/* The interpreter of LANG as the job's PROGRAM ("python3", "sh"), or NULL
 * for a binary (run as "./FILE"). */
const char *eval_lang_interpreter(enum eval_lang lang);

/*
 * Parses the header of a program of language LANG from its first LEN
 * bytes TEXT (need not be NUL-terminated; only the first comment block is
 * read) into A's kv, exfil, gets, puts, stopped_when and attempted_when
 * (A's other fields untouched). Returns 0; -ENOMEM; -EINVAL for an
 * "exfil" that is not yes/no, a "fileapi" that is not "get NAME" or "put
 * NAME" (NAME without whitespace), a "stopped-when" with a word outside
 * enum eval_stop's vocabulary (or none), an "attempted-when" other than
 * "marker", either given twice, or a header without "family".
 */
int eval_header_parse(struct eval_attack *a, enum eval_lang lang,
    const char *text, size_t len);

/*
 * Whether A's header has what a corpus entry needs
 * (tests/verify/eval/attacks/,
 * issue 23 point 9): "stopped-when" and "attempted-when", and
 * "canary-unread" among the checks of an "exfil: yes" attack. Returns 0,
 * or -EINVAL with the missing part named in ERR (ERRLEN bytes).
 */
int eval_header_contract(const struct eval_attack *a, char *err, size_t errlen);

/* The word of the stopped-when vocabulary for the one bit BIT of enum
 * eval_stop ("canary-unread", ...), or NULL. */
const char *eval_stop_name(unsigned bit);

/* The value of the first header line KEY of A, or NULL (borrowed). */
const char *eval_attack_get(const struct eval_attack *a, const char *key);

/*
 * Loads every program of the directory DIR into C (zeroed or freed by
 * the caller): the regular files whose names are two digits, '-', then
 * [a-z0-9_-], ending in ".py" or ".sh", or with no extension and
 * executable (a C attack: its header from DIR/NAME.c, else SRCDIR/NAME.c
 * when SRCDIR is not NULL). Other entries (meson's NAME.p directories,
 * the .c sources) are ignored. With ANY_NAME (the hostile programs of
 * tests/verify/eval/codefilter/, named freely), every "*.py" and "*.sh"
 * file whose name is
 * made of [A-Za-z0-9._-] is a program, and no number is required. When
 * ONLY (NONLY strings) is not empty, a program is kept only if its name
 * or its two-digit number is one of them. Returns 0; -ENOMEM; another
 * negative errno with a sentence in ERR (ERRLEN bytes) naming the file at
 * fault (DIR unreadable, a header missing or invalid, two programs with
 * the same number). Outside ANY_NAME every program must meet
 * eval_header_contract (the error names the file and what is missing).
 */
int eval_corpus_load(struct eval_corpus *c, const char *dir, const char *srcdir,
    bool any_name, char *const *only, size_t nonly, char *err, size_t errlen);

/* Keeps only the programs of C with "exfil: yes" (the isolation
 * table's), in order; frees the others. */
void eval_corpus_keep_exfil(struct eval_corpus *c);

/* Frees everything C owns and zeroes it; accepts a zeroed C. */
void eval_corpus_free(struct eval_corpus *c);

#endif
