/*
 * cmd_doctor.c: `stockade doctor [--json]` prints every check of
 * doctor.h for this host and the verdict; exit 0 for "full" and
 * "degraded", EXIT_REFUSED (69) for "refused".
 *
 * The text form is one line per check ("STATUS  LAYER: OBSERVED", then
 * "fix:" lines when it is not ok) and the verdict alone on the last line,
 * so that `stockade doctor | tail -n 1` is the verdict.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "doctor.h"
#include "egress_proxy.h"
#include "preflight.h"
#include "utf8.h"

/* TEXT as a JSON string, made valid UTF-8 first: what doctor observed
 * quotes the host (a cgroup path, the kernel's release), which need not
 * be UTF-8, and jansson refuses a string that is not (RFC 8259 section
 * 8.1). A new reference, or NULL when memory runs out. */
static json_t *
json_host_text(const char *text)
{
	size_t n;
	char *clean = utf8_sanitize(text, strlen(text), &n);
	json_t *j;

	if (clean == NULL)
		return NULL;
	j = json_stringn(clean, n);
	free(clean);
	return j;
}

/* The egress_proxy check: stockade-proxy started as a session starts it
 * (egress_proxy_start: found, run, confined, READY) and stopped. */
static void
probe_proxy(struct doctor_report *r)
{
	struct egress_proxy px;
	char err[512] = "";
	int e;

	egress_proxy_init(&px);
	e = egress_proxy_start(&px, NULL, NULL, NULL, err, sizeof(err));
	doctor_set_egress_proxy(r, e, px.landlock_abi, err);
	egress_proxy_stop(&px);
}

json_t *
doctor_to_json(const struct doctor_report *r)
{
	json_t *checks = json_array(), *o;

	if (checks == NULL)
		return NULL;
	for (size_t i = 0; i < DOCTOR_NCHECKS; i++) {
		const struct doctor_check *c = &r->checks[i];

		if (!c->ran)
			continue;
		/* json_pack copies the strings and takes the "o" references,
		 * even when it fails (a NULL one fails it); so does
		 * json_array_append_new with the object. */
		o = json_pack("{s:s,s:s,s:s,s:o,s:o}", "name", c->name, "layer",
		    c->layer, "status", doctor_status_name(c->status),
		    "observed", json_host_text(c->observed), "fix",
		    json_host_text(c->fix));
		if (o == NULL || json_array_append_new(checks, o) < 0) {
			json_decref(checks);
			return NULL;
		}
	}
	return json_pack("{s:o,s:o,s:o}", "verdict", json_host_text(r->verdict),
	    "checks", checks, "kernel", json_host_text(r->kernel));
}

/* Writes TEXT[0..LEN) to F with its control characters in caret
 * notation and anything not UTF-8 as U+FFFD (term_escape). */
static void
put_escaped(FILE *f, const char *text, size_t len)
{
	char buf[4 * 256];

	while (len > 0) {
		size_t n = len < 256 ? len : 256;

		/* Cut on a UTF-8 boundary, so that no sequence is split
		 * between two calls (each of which ends its stream). */
		while (
		    n < len && n > 1 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
		fwrite(buf, 1, term_escape(text, n, buf), f);
		text += n;
		len -= n;
	}
}

/* Prints TEXT after HEAD to F, its later lines indented under the
 * first, escaped (put_escaped): TEXT quotes the host. */
static void
print_indented(FILE *f, const char *head, const char *text)
{
	const char *nl;

	fputs(head, f);
	while ((nl = strchr(text, '\n')) != NULL) {
		put_escaped(f, text, (size_t)(nl - text));
		fprintf(f, "\n%*s", (int)strlen(head), "");
		text = nl + 1;
	}
	put_escaped(f, text, strlen(text));
	fputc('\n', f);
}

void
doctor_print_text(FILE *f, const struct doctor_report *r)
{
	char head[128];

	for (size_t i = 0; i < DOCTOR_NCHECKS; i++) {
		const struct doctor_check *c = &r->checks[i];

		if (!c->ran)
			continue;
		snprintf(head, sizeof(head),
		    "%-8s %s: ", doctor_status_name(c->status), c->layer);
		print_indented(f, head, c->observed);
		if (c->status != DOCTOR_OK && c->fix[0] != '\0')
			print_indented(f, "         fix: ", c->fix);
	}
	print_indented(f, "", r->verdict);
}

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: stockade doctor [--json]\n"
	    "Checks every layer of the jail on this host; the last "
	    "line is the verdict:\n"
	    "full, degraded: LAYERS (exit 0) or refused: LAYERS "
	    "(exit 69).\n");
}

int
cmd_doctor(int argc, char **argv)
{
	struct doctor_report *r;
	bool json = false;
	json_t *j;
	int rc;

	if (argc == 2 && strcmp(argv[1], "--json") == 0) {
		json = true;
	} else if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	} else if (argc != 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* The probes wait for their children: an ignored SIGCHLD inherited
	 * from our parent would have them reaped unseen (wait(2)). */
	signal(SIGCHLD, SIG_DFL);
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		fprintf(stderr, "stockade: out of memory\n");
		return EXIT_SANDBOX;
	}
	rc = doctor_run(r, 0) == 0 ? 0 : EXIT_REFUSED;
	probe_proxy(r);
	if (json) {
		j = doctor_to_json(r);
		if (j == NULL || json_dumpf(j, stdout, JSON_COMPACT) < 0 ||
		    putchar('\n') == EOF)
			rc = EXIT_SANDBOX;
		json_decref(j);
	} else {
		doctor_print_text(stdout, r);
	}
	free(r);
	if (fflush(stdout) != 0)
		rc = EXIT_SANDBOX;
	return rc;
}
