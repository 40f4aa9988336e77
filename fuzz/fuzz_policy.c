/*
 * fuzz_policy.c: the policy parser (policy/policy.h), from a buffer.
 *
 * Input: the text of a policy file (a NUL within it ends the text, as a
 * C string would). Properties, each an abort when broken:
 *  - policy_load_string either succeeds or fails with -EINVAL (or
 *    -ENOMEM) and an error message of the form "NAME:LINE: message",
 *    owning nothing;
 *  - a policy it accepts has every limit set, non-zero ids and a
 *    pool size within PROTO_MAX_POOL;
 *  - policy_format of an accepted policy loads back, and formatting that
 *    again gives the very same text (policy.h: "a complete, canonical
 *    policy file that loads back to an equal policy");
 *  - so does policy_show's text, with where each line came from.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "log.h"
#include "policy.h"

/* P formatted as text (the caller frees it), by policy_show when SHOW;
 * aborts when it cannot be. */
static char *
format_as(const struct policy *p, size_t *len, bool show)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	int e;

	if (f == NULL)
		fuzz_fail("open_memstream: %s", strerror(errno));
	e = show ? policy_show(p, f) : policy_format(p, f);
	if (fclose(f) != 0 || e < 0)
		fuzz_fail("%s of a loaded policy: %s",
		    show ? "policy_show" : "policy_format",
		    strerror(e < 0 ? -e : errno));
	return text;
}

static char *
format(const struct policy *p, size_t *len)
{
	return format_as(p, len, false);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char name[] = "fuzz.ini";
	struct policy p, q;
	char err[POLICY_ERR_MAX], *text, *t1, *t2;
	size_t l1, l2;
	int e;

	log_set_level(LOG_LVL_ERROR);
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&p, 0, sizeof(p));
	err[0] = '\0';
	e = policy_load_string(&p, text, name, err, sizeof(err));
	free(text);
	if (e < 0) {
		FUZZ_ASSERT(e == -EINVAL || e == -ENOMEM);
		FUZZ_ASSERT(strncmp(err, name, strlen(name)) == 0 &&
		    err[strlen(name)] == ':');
		FUZZ_ASSERT(p.name == NULL && p.env == NULL &&
		    p.mounts == NULL && p.hostname == NULL);
		policy_clear(&p);
		return 0;
	}
	FUZZ_ASSERT(p.limits.wall_ms != 0 && p.limits.memory_bytes != 0 &&
	    p.limits.nproc != 0 && p.limits.nofile != 0);
	FUZZ_ASSERT(p.uid != 0 && p.gid != 0);
	FUZZ_ASSERT(p.pool_size <= PROTO_MAX_POOL);

	/* Canonical form: format, load back, format again: the same. */
	t1 = format(&p, &l1);
	memset(&q, 0, sizeof(q));
	if (policy_load_string(&q, t1, name, err, sizeof(err)) < 0)
		fuzz_fail("the formatted policy does not load back: %s\n%s",
		    err, t1);
	t2 = format(&q, &l2);
	if (l1 != l2 || memcmp(t1, t2, l1) != 0)
		fuzz_fail("formatting is not stable:\n%s\n---\n%s", t1, t2);
	free(t2);
	policy_clear(&q);

	/* policy_show's comments change nothing of what loads back. */
	t2 = format_as(&p, &l2, true);
	memset(&q, 0, sizeof(q));
	if (policy_load_string(&q, t2, name, err, sizeof(err)) < 0)
		fuzz_fail("the shown policy does not load back: %s\n%s", err,
		    t2);
	free(t2);
	t2 = format(&q, &l2);
	if (l1 != l2 || memcmp(t1, t2, l1) != 0)
		fuzz_fail("the shown policy loads back as another:\n%s\n---"
			  "\n%s",
		    t1, t2);
	free(t1);
	free(t2);
	policy_clear(&q);
	policy_clear(&p);
	return 0;
}
