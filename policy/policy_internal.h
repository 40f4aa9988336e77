/*
 * policy_internal.h: what the policy loader (policy.c) and formatter
 * (policy_format.c) share: the sections, the table of scalar keys and the
 * value checks (policy_values.c). Not part of the public interface.
 */
#ifndef STOCKADE_POLICY_INTERNAL_H
#define STOCKADE_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

#define DEFAULT_NAME "<default>"
#define KIB UINT64_C(1024)
#define MIB (UINT64_C(1024) * 1024)
/* Longest [jail] user: the passwd name limit of shadow's useradd. */
#define USER_MAX 32u
/* Longest hostname label we accept (RFC 1035). */
#define HOSTNAME_MAX 63u

enum section {
	SEC_NONE, /* before the first [section] line */
	SEC_LIMITS,
	SEC_JAIL,
	SEC_FILES,
	SEC_ENVIRONMENT,
	SEC_FILESYSTEM,
	SEC_POLICY, /* how the file is laid over the default */
	SEC_NETWORK, /* scalar caps and the list of egress rules */
	SEC_WRITEBACK, /* the list of write-back rules */
};
#define SEC_LAST SEC_WRITEBACK

extern const char *const policy_section_names[];

enum key_kind {
	K_U64, /* uint64_t field = value * unit */
	K_U32, /* uint32_t field = value */
	K_BOOL, /* bool field, "true" or "false" */
	K_HOSTNAME, /* char * field */
	K_USER, /* char * field */
	K_PATH, /* char * field, absolute and normalised */
	K_MODE, /* uint32_t field, octal permission bits ("0755") */
	K_ENFORCE, /* enum job_enforcement field: auto, monitor, cgroup2 */
	K_CGROUP, /* char * field: "" or absolute and normalised */
	K_PROFILE, /* char * field: a seccomp profile's name, "default" or
		     * "strict" (the ones the launcher has compiled in) */
	K_LAYERS, /* uint32_t field: a JOB_LAYER_BIT mask written as a
		     * comma or blank separated list of layer names */
	K_OUTPUT, /* enum output_action field: truncate, kill */
	K_LISTS, /* uint32_t field: a POLICY_LIST_* mask written as a
		     * comma or blank separated list of list sections */
	K_ENVNAMES, /* char * field: variable names and PREFIX* patterns,
		     * or "*" (policy_valid_client_env) */
	K_RESOLVER, /* char * field: "" or ADDR:PORT, a DNS server
		     * (policy_valid_resolver) */
	K_COMMIT, /* enum commit_mode field: always, on_ok, keep */
};

/* Whether a value of KIND is text, a char * field checked and kept as it
 * was written, rather than a number, a flag or an enum it is converted to
 * (the loader's set_text and the formatter's text_scalar_text). */
static inline bool
policy_kind_is_text(enum key_kind kind)
{
	return kind == K_HOSTNAME || kind == K_USER || kind == K_PATH ||
	    kind == K_CGROUP || kind == K_PROFILE || kind == K_ENVNAMES ||
	    kind == K_RESOLVER;
}

/* One scalar key. The order of this table is the order of default.ini,
 * which policy_format() follows. */
struct scalar_key {
	enum section section;
	const char *name;
	enum key_kind kind;
	size_t offset; /* of the field in struct policy */
	uint64_t min, max; /* range of the value as written, in its unit */
	uint64_t unit; /* field = written value * unit */
};

#define LIMIT(f) offsetof(struct policy, limits.f)
#define FIELD(f) offsetof(struct policy, f)
#define FILES(f) offsetof(struct policy, files.f)
#define NET(f) offsetof(struct policy, net.f)

extern const struct scalar_key policy_scalar_keys[];
extern const size_t policy_nscalars;
#define NSCALARS policy_nscalars

/*
 * Value checks shared by the loader and by policy_format(), which refuses
 * to write what would not load back. Each takes the key's name (for the
 * message), the value, and WHY (WHYLEN bytes) for the reason it is
 * refused; they return true when the value is acceptable.
 */
bool policy_has_control(const char *s);
/* "auto", "monitor", "cgroup2" -> ENFORCE_*; false for anything else. */
bool policy_parse_enforcement(const char *key, const char *v,
    enum job_enforcement *out, char *why, size_t whylen);
/* A seccomp profile the launcher has compiled in: "default" or "strict"
 * (policy/seccomp-*.ini; launcher/zygote/seccomp.c keeps the same table). */
bool policy_valid_profile(const char *key, const char *v, char *why,
    size_t whylen);
/*
 * A list of layer names (result.h job_layer_name), separated by commas
 * and/or blanks, possibly empty, each name at most once, into the mask
 * *OUT (JOB_LAYER_BIT of each). False, with WHY naming the offending word
 * and the valid names, for an unknown or repeated name.
 */
bool policy_parse_layers(const char *key, const char *v, uint32_t *out,
    char *why, size_t whylen);
/* "truncate", "kill" -> OUTPUT_*; false, with WHY naming both, for
 * anything else. */
bool policy_parse_output_action(const char *key, const char *v,
    enum output_action *out, char *why, size_t whylen);
/* The policy word of A ("truncate", "kill"). */
const char *policy_output_action_name(enum output_action a);
/* "always", "on_ok", "keep" -> COMMIT_*; false, with WHY naming the
 * three, for anything else. */
bool policy_parse_commit(const char *key, const char *v, enum commit_mode *out,
    char *why, size_t whylen);
/* The policy word of M ("always", "on_ok", "keep"); NULL for no mode. */
const char *policy_commit_name(enum commit_mode m);
/*
 * Reads V for scalar K of a kind named by a word (K_ENFORCE, K_OUTPUT,
 * K_COMMIT) into its enum FIELD: true, or false with WHY (WHYLEN bytes)
 * saying why, FIELD untouched (as for any other kind).
 */
bool policy_set_word(const struct scalar_key *k, const char *v, void *field,
    char *why, size_t whylen);
/* The word of such a scalar K's enum FIELD, static; NULL for a value no
 * word names (an enforcement out of range reads "auto", as before). */
const char *policy_word_text(const struct scalar_key *k, const void *field);
/*
 * A list of list sections ("environment", "filesystem", "network",
 * "writeback"), separated by commas and/or blanks, possibly empty, each
 * at most once, into the POLICY_LIST_* mask *OUT. False, with WHY naming
 * the offending word, for anything else.
 */
bool policy_parse_lists(const char *key, const char *v, uint32_t *out,
    char *why, size_t whylen);
/* MASK (POLICY_LIST_*) as policy_parse_lists reads it, the names in the
 * order above separated by ", ", into BUF (SIZE bytes; 64 hold any);
 * "" for 0. Returns BUF, or NULL for a bit that is no list. */
const char *policy_lists_format(uint32_t mask, char *buf, size_t size);
/* The policy word of A ("allow", "refuse", "quarantine"); NULL for none. */
const char *policy_wb_action_name(enum wb_action a);
/*
 * A [writeback] rule's value V, "PATTERN" or "PATTERN drivers" (split at
 * blanks), for the rule KEY ("refuse", "quarantine", "allow"): the
 * pattern's bytes into PAT (PATLEN bytes, at least the value's length
 * plus one) and the qualifier into *DRIVERS. False, with WHY naming the
 * rule and what is wrong (writeback_pattern_error), for anything else.
 */
bool policy_parse_wb_value(const char *key, const char *v, char *pat,
    size_t patlen, bool *drivers, char *why, size_t whylen);
/* The policy word of E ("auto", "monitor", "cgroup2"). */
const char *policy_enforcement_name(enum job_enforcement e);
bool policy_is_blank(char c);
bool policy_parse_number(const char *key, const char *v, uint64_t min,
    uint64_t max, uint64_t *out, char *why, size_t whylen);
bool policy_parse_bool(const char *key, const char *v, bool *out, char *why,
    size_t whylen);
bool policy_valid_hostname(const char *key, const char *v, char *why,
    size_t whylen);
bool policy_valid_user(const char *key, const char *v, char *why,
    size_t whylen);
bool policy_valid_path(const char *key, const char *v, char *why,
    size_t whylen);
bool policy_valid_env_name(const char *v);
/*
 * [jail] client_env: a list, separated by commas and/or blanks, possibly
 * empty, of variable names ([A-Za-z_][A-Za-z0-9_]*), of prefixes of such
 * a name followed by "*" ("PIP_*"), or of "*" alone (any name). False,
 * with WHY naming the offending word, for anything else.
 */
bool policy_valid_client_env(const char *key, const char *v, char *why,
    size_t whylen);
/*
 * [network] resolver: "" (the host's resolv.conf(5)) or one DNS server
 * as the proxy's --dns takes it: "A.B.C.D:PORT" (a dotted quad as
 * inet_pton(3) reads it) or "[IPV6]:PORT" (inet_pton(3), no zone), PORT
 * decimal 1..65535 without a leading zero. False, with WHY saying what
 * is wrong, for anything else.
 */
bool policy_valid_resolver(const char *key, const char *v, char *why,
    size_t whylen);
/* An octal mode: "0" and at most four octal digits ("0755"), at most MAX;
 * the value in *OUT. Leading "0" required, so that it never reads as
 * decimal. */
bool policy_parse_mode(const char *key, const char *v, uint64_t max,
    uint32_t *out, char *why, size_t whylen);

#endif
