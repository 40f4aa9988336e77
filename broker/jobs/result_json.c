/* result_json.c: see result_json.h. */
#include "result_json.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

json_t *
limits_to_json(const struct job_limits *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
	    "wall_time_ms", (json_int_t)l->wall_ms, "cpu_time_ms",
	    (json_int_t)l->cpu_ms, "memory_mb",
	    (json_int_t)(l->memory_bytes >> 20), "processes",
	    (json_int_t)l->nproc, "file_size_mb",
	    (json_int_t)(l->fsize_bytes >> 20), "open_files",
	    (json_int_t)l->nofile, "tmp_mb", (json_int_t)(l->tmp_bytes >> 20),
	    "home_mb", (json_int_t)(l->home_bytes >> 20), "workspace_mb",
	    (json_int_t)(l->workspace_bytes >> 20), "cpu_percent",
	    (json_int_t)l->cpu_percent, "stdout_kb",
	    (json_int_t)(l->stdout_bytes >> 10), "stderr_kb",
	    (json_int_t)(l->stderr_bytes >> 10));
}

json_t *
result_safe_json(const void *data, size_t len)
{
	size_t n;
	char *text = utf8_sanitize(data, len, &len), *shown;
	json_t *j;

	if (text == NULL)
		return NULL;
	/* Sanitized first, so each C1 control is one whole sequence here;
	 * caret notation is ASCII, so the text stays valid UTF-8. */
	shown = len <= (SIZE_MAX - 1) / 4 ? malloc(4 * len + 1) : NULL;
	if (shown == NULL) {
		free(text);
		return NULL;
	}
	n = term_escape(text, len, shown);
	free(text);
	j = json_stringn_nocheck(shown, n);
	free(shown);
	return j;
}

/* A capture: head, RESULT_TRUNC_MARKER, tail, made safe (safe_json). */
static json_t *
stream_json(const struct capture *c)
{
	size_t raw_len;
	uint8_t *raw = capture_collect(c, RESULT_TRUNC_MARKER, &raw_len);
	json_t *j;

	if (raw == NULL)
		return NULL;
	j = result_safe_json(raw, raw_len);
	free(raw);
	return j;
}

/* A C string of any bytes (the detail, the hint that may quote it),
 * made safe the same way: the wire already refuses controls in a detail,
 * and this holds whatever the detail's source. */
static json_t *
text_json(const char *s)
{
	return result_safe_json(s, strlen(s));
}

/* Adds V (stolen, may be NULL) to O as KEY; false when V is NULL or the
 * object cannot grow. */
static bool
put(json_t *o, const char *key, json_t *v)
{
	return v != NULL && json_object_set_new(o, key, v) == 0;
}

/* The system calls the filter refused, in the order of their first
 * refusal: [{"syscall", "count", "first_ms"}]. */
static json_t *
denials_json(const struct job_result *res)
{
	json_t *a = json_array();

	for (uint32_t i = 0;
	     a != NULL && i < res->ndenials && i < JOB_MAX_DENIALS; i++) {
		const struct job_denial *d = &res->denials[i];
		json_t *o = json_object();

		if (o == NULL || !put(o, "syscall", text_json(d->syscall)) ||
		    !put(o, "count", json_integer((json_int_t)d->count)) ||
		    !put(o, "first_ms",
			json_integer((json_int_t)d->first_ms)) ||
		    json_array_append_new(a, o) < 0) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The limits the jail reached while the program went on (issue 23):
 * [{"limit": "processes", "times": N}], [] for none. */
static json_t *
reached_json(const struct job_result *res)
{
	json_t *a = json_array();

	for (uint32_t i = 0;
	     a != NULL && i < res->nreached && i < JOB_MAX_REACHED; i++) {
		const char *name = job_limit_kind_name(res->reached[i].limit);
		json_t *o = json_object();

		if (o == NULL || name == NULL ||
		    !put(o, "limit", text_json(name)) ||
		    !put(o, "times",
			json_integer((json_int_t)res->reached[i].times)) ||
		    json_array_append_new(a, o) < 0) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The names of the layers the job ran without, in layer order: [] for
 * the whole product. */
static json_t *
layers_json(uint32_t off)
{
	json_t *a = json_array();

	for (int i = 1; a != NULL && i <= JOB_LAYER_MAX; i++)
		if ((off & JOB_LAYER_BIT(i)) &&
		    json_array_append_new(a, json_string(job_layer_name(i))) <
			0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* What a program prints when a name lookup or a connection fails for want
 * of a network: glibc's gai_strerror(3) and strerror(3) texts (which
 * Python, pip, git and most C programs pass on), curl's and Node's. */
static const char *const network_failures[] = {
    "Temporary failure in name resolution", /* EAI_AGAIN */
    "Name or service not known", /* EAI_NONAME */
    "No address associated with hostname", /* EAI_NODATA */
    "Could not resolve host", /* curl */
    "getaddrinfo ENOTFOUND", /* Node */
    "getaddrinfo EAI_AGAIN", /* Node */
    "Network is unreachable", /* ENETUNREACH */
    "ENETUNREACH", "No route to host", /* EHOSTUNREACH */
};

const char *
result_network_failure(const struct capture *err)
{
	const char *found = NULL;
	uint8_t *text;
	size_t len = 0;

	if (err == NULL || err->total == 0)
		return NULL;
	text = capture_collect(err, "\n", &len);
	for (size_t i = 0; text != NULL && found == NULL &&
	     i < sizeof(network_failures) / sizeof(*network_failures);
	     i++)
		if (memmem(text, len, network_failures[i],
			strlen(network_failures[i])) != NULL)
			found = network_failures[i];
	free(text);
	return found;
}

char *
result_hint(const struct job_result *res, const struct job_limits *lim,
    const struct capture *err, char *buf, size_t size)
{
	const char *found;

	job_hint(res, lim, buf, size);
	if (res->status != JOB_EXIT_NONZERO || res->exit_code == 126 ||
	    res->exit_code == 127)
		return buf;
	found = result_network_failure(err);
	if (found != NULL)
		fmt_words(buf, size,
		    "The program exited with code %d after a "
		    "network failure (its stderr says \"%s\"): the "
		    "sandbox has no network. The job's only interface is "
		    "its own loopback (127.0.0.1 reaches the job itself), "
		    "and the policy allows no outside host, so retrying "
		    "will fail the same way. Do the task without the "
		    "network: use what is installed, or have the user put "
		    "the files it needs (packages, data) in /work before "
		    "the job.",
		    res->exit_code, found);
	if (found != NULL && job_output_truncated(res, lim))
		job_hint_truncation(res, lim, buf, size);
	return buf;
}

/* HINT (SIZE bytes, as result_hint made it) for a job whose output the
 * broker could not keep whole for want of memory: an ok job's no longer
 * says the output is complete (REPLACE: HINT is job_hint's, which would
 * say so), and every one says how to get it all. */
static void
lost_output_hint(const struct job_result *res, bool replace, char *hint,
    size_t size)
{
	size_t at;

	if (res->status == JOB_OK && replace)
		fmt_words(hint, size,
		    "The program exited with code 0 in %llu "
		    "ms.",
		    (unsigned long long)res->wall_ms);
	at = strlen(hint);
	if (at + 1 < size)
		fmt_words(hint + at, size - at,
		    " Its output was truncated "
		    "(stockade could not keep all of it: memory ran out "
		    "on the host): to see all of it, write it to a file "
		    "in /work (for example: program > /work/out.txt 2>&1) "
		    "and read the parts you need from that file.");
}

/* The hint of a result into HINT (SIZE bytes): result_hint_net, and for
 * a capture that dropped bytes when memory ran out (capture.h), truncated
 * though no cap was passed, a hint that says so too, never that the
 * output is complete. */
static void
compose_hint(const struct job_result *res, const struct job_limits *lim,
    const struct capture *out, const struct capture *err,
    const struct result_net *net, char *hint, size_t size)
{
	char plain[RESULT_HINT_MAX];

	result_hint_net(res, lim, err, net, hint, size);
	if (((out != NULL && out->lost) || (err != NULL && err->lost)) &&
	    !job_output_truncated(res, lim) &&
	    res->status != JOB_OUTPUT_LIMIT && res->status != JOB_SANDBOX_ERROR)
		lost_output_hint(res,
		    strcmp(hint,
			result_hint(res, lim, err, plain, sizeof(plain))) == 0,
		    hint, size);
}

json_t *
result_to_json(const struct job_result *res, const struct job_limits *lim,
    const struct capture *out, const struct capture *err)
{
	char hint[RESULT_HINT_MAX];
	const char *sig = res->signal ? signal_name(res->signal) : NULL;
	json_t *o;
	bool ok, out_cut;

	/* Field by field rather than json_pack: "s" refuses invalid UTF-8,
	 * and the detail (hence the hint that quotes it) is whatever bytes
	 * the launcher sent. Every string goes through text_json, so the
	 * only failure left is memory. */
	compose_hint(res, lim, out, err, NULL, hint, sizeof(hint));
	o = json_object();
	if (o == NULL)
		return NULL;
	ok = put(o, "status", text_json(job_status_name(res->status)));
	ok = ok &&
	    put(o, "exit_code",
		res->exit_code >= 0 ? json_integer(res->exit_code)
				    : json_null());
	ok = ok && put(o, "signal", sig ? text_json(sig) : json_null());
	ok = ok && put(o, "wall_ms", json_integer((json_int_t)res->wall_ms));
	ok = ok && put(o, "cpu_ms", json_integer((json_int_t)res->cpu_ms));
	ok = ok &&
	    put(o, "peak_memory_kb",
		json_integer((json_int_t)res->peak_memory_kb));
	ok = ok &&
	    put(o, "memory_measure",
		text_json(job_memory_measure_name(res->memory_measure)
			? job_memory_measure_name(res->memory_measure)
			: "none"));
	ok = ok &&
	    put(o, "peak_processes",
		json_integer((json_int_t)res->peak_processes));
	ok = ok && put(o, "limits_reached", reached_json(res));
	ok = ok && put(o, "stdout", stream_json(out));
	ok = ok && put(o, "stderr", stream_json(err));
	out_cut = capture_truncated(out);
	ok = ok && put(o, "stdout_truncated", json_boolean(out_cut));
	ok = ok &&
	    put(o, "stderr_truncated", json_boolean(capture_truncated(err)));
	ok = ok &&
	    put(o, "stdout_bytes", json_integer((json_int_t)res->stdout_bytes));
	ok = ok &&
	    put(o, "stderr_bytes", json_integer((json_int_t)res->stderr_bytes));
	ok = ok && put(o, "limits", limits_to_json(lim));
	ok = ok &&
	    put(o, "enforcement",
		text_json(res->enforcement == ENFORCE_CGROUP2 ? "cgroup2"
							      : "monitor"));
	ok = ok &&
	    put(o, "landlock_abi", json_integer((json_int_t)res->landlock_abi));
	ok = ok && put(o, "denials", denials_json(res));
	ok = ok && put(o, "layers_off", layers_json(res->layers_off));
	ok = ok && put(o, "detail", text_json(res->detail ? res->detail : ""));
	ok = ok && put(o, "hint", text_json(hint));
	if (!ok) {
		json_decref(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}

int
result_add_network(json_t *result, const struct job_result *res,
    const struct job_limits *lim, const struct capture *out,
    const struct capture *err, const struct result_net *net)
{
	char hint[RESULT_HINT_MAX];

	if (net == NULL || net->report == NULL)
		return 0;
	compose_hint(res, lim, out, err, net, hint, sizeof(hint));
	if (!put(result, "network", result_network_json(net)) ||
	    !put(result, "hint", text_json(hint)))
		return -ENOMEM;
	return 0;
}

/* FIELD of O as text for the figures line: its integer, its string, or
 * "none" for null. */
static void
put_figure(FILE *out, const json_t *o, const char *field)
{
	const json_t *v = json_object_get(o, field);

	if (json_is_integer(v))
		fprintf(out, " %s=%" JSON_INTEGER_FORMAT, field,
		    json_integer_value(v));
	else if (json_is_string(v))
		fprintf(out, " %s=%s", field, json_string_value(v));
	else
		fprintf(out, " %s=none", field);
}

static void
put_stream(FILE *out, const json_t *o, const char *name)
{
	char key[32];
	const json_t *text = json_object_get(o, name);
	json_int_t bytes;
	bool cut;

	snprintf(key, sizeof(key), "%s_bytes", name);
	bytes = json_integer_value(json_object_get(o, key));
	snprintf(key, sizeof(key), "%s_truncated", name);
	cut = json_is_true(json_object_get(o, key));
	fprintf(out, "--- %s (%" JSON_INTEGER_FORMAT " bytes%s) ---\n", name,
	    bytes, cut ? ", truncated: head and tail kept" : "");
	if (json_string_length(text) > 0) {
		const char *s = json_string_value(text);
		size_t n = json_string_length(text);

		fwrite(s, 1, n, out);
		if (s[n - 1] != '\n')
			fputc('\n', out);
	}
}

/* "layers off: seccomp, landlock" (an evaluation), when any. */
static void
put_layers(FILE *out, const json_t *layers)
{
	size_t i;
	json_t *l;

	if (json_array_size(layers) == 0)
		return;
	fputs("layers off:", out);
	json_array_foreach(layers, i, l)
	    fprintf(out, "%s %s", i ? "," : "", json_string_value(l));
	fputc('\n', out);
}

/* "denied: ptrace x2 (first at 12 ms), bpf x1 (...)", when any. */
static void
put_denials(FILE *out, const json_t *denials)
{
	size_t i;
	json_t *d;

	if (json_array_size(denials) == 0)
		return;
	fputs("denied:", out);
	json_array_foreach(denials, i, d) fprintf(out,
	    "%s %s x%" JSON_INTEGER_FORMAT " (first at %" JSON_INTEGER_FORMAT
	    " ms)",
	    i ? "," : "", json_string_value(json_object_get(d, "syscall")),
	    json_integer_value(json_object_get(d, "count")),
	    json_integer_value(json_object_get(d, "first_ms")));
	fputc('\n', out);
}

/* ---- the text form's network (issue 25) ----------------------------- */

static json_int_t
int_of(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static const char *
str_of(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* HOST:PORT of an entry of the network object. */
static void
put_endpoint(FILE *out, const json_t *e)
{
	const char *host = str_of(e, "host");
	bool v6 = result_is_ipv6_text(host);

	fprintf(out, "%s%s%s:%" JSON_INTEGER_FORMAT, v6 ? "[" : "", host,
	    v6 ? "]" : "", int_of(e, "port"));
}

/* "connected: pypi.org:443 x2 (151.101.0.223, 512 out, 90000 in), ..." */
static void
put_connections(FILE *out, const json_t *list)
{
	size_t i;
	json_t *e;

	if (json_array_size(list) == 0)
		return;
	fputs("connected:", out);
	json_array_foreach(list, i, e)
	{
		fputs(i ? ", " : " ", out);
		put_endpoint(out, e);
		fprintf(out,
		    " x%" JSON_INTEGER_FORMAT " (%s, %" JSON_INTEGER_FORMAT
		    " out, %" JSON_INTEGER_FORMAT " in)",
		    int_of(e, "count"), str_of(e, "address"),
		    int_of(e, "bytes_out"), int_of(e, "bytes_in"));
	}
	fputc('\n', out);
}

/* "refused: evil.example:443 not_allowed x1, 10.0.0.1:22 direct_connect
 * (tcp) x3" */
static void
put_refusals(FILE *out, const json_t *list)
{
	size_t i;
	json_t *e;

	if (json_array_size(list) == 0)
		return;
	fputs("refused:", out);
	json_array_foreach(list, i, e)
	{
		const char *detail = str_of(e, "detail");

		fputs(i ? ", " : " ", out);
		put_endpoint(out, e);
		fprintf(out, " %s%s%s%s x%" JSON_INTEGER_FORMAT,
		    str_of(e, "reason"), *detail ? " (" : "", detail,
		    *detail ? ")" : "", int_of(e, "count"));
	}
	fputc('\n', out);
}

void
result_print_network(const json_t *n, FILE *out)
{
	const json_t *rules = json_object_get(n, "rules");
	size_t i;
	json_t *r;

	if (!json_is_object(n))
		return;
	fprintf(out,
	    "network: connections %" JSON_INTEGER_FORMAT
	    " (%" JSON_INTEGER_FORMAT " bytes out, %" JSON_INTEGER_FORMAT
	    " bytes in), refused %" JSON_INTEGER_FORMAT ", proxy %s%s\n",
	    int_of(n, "connections_total"), int_of(n, "bytes_out"),
	    int_of(n, "bytes_in"), int_of(n, "refusals_total"),
	    str_of(n, "proxy"),
	    json_is_true(json_object_get(n, "truncated")) ? ", lists truncated"
							  : "");
	put_connections(out, json_object_get(n, "connections"));
	put_refusals(out, json_object_get(n, "refusals"));
	fputs("rules:", out);
	json_array_foreach(rules, i, r)
	    fprintf(out, "%s %s", i ? "," : "", json_string_value(r));
	fputs(json_array_size(rules) == 0 ? " none\n" : "\n", out);
}

int
result_print_text(const json_t *o, FILE *out)
{
	const char *detail = json_string_value(json_object_get(o, "detail"));

	fprintf(out, "status: %s\nhint: %s\nfigures:",
	    json_string_value(json_object_get(o, "status")),
	    json_string_value(json_object_get(o, "hint")));
	put_figure(out, o, "exit_code");
	put_figure(out, o, "signal");
	put_figure(out, o, "wall_ms");
	put_figure(out, o, "cpu_ms");
	put_figure(out, o, "peak_memory_kb");
	put_figure(out, o, "peak_processes");
	put_figure(out, o, "enforcement");
	fputc('\n', out);
	if (detail != NULL && *detail != '\0')
		fprintf(out, "detail: %s\n", detail);
	put_layers(out, json_object_get(o, "layers_off"));
	put_denials(out, json_object_get(o, "denials"));
	result_print_network(json_object_get(o, "network"), out);
	put_stream(out, o, "stdout");
	put_stream(out, o, "stderr");
	return ferror(out) ? -1 : 0;
}

/* LINE made safe for a terminal, after "stockade: WHAT: ". */
static void
put_safe_line(FILE *out, const char *what, const char *line)
{
	json_t *text = text_json(line);

	if (text != NULL)
		fprintf(out, "stockade: %s: %s\n", what,
		    json_string_value(text));
	json_decref(text);
}

void
result_print_summary(const struct job_result *r, const struct job_limits *lim,
    const struct capture *err, const struct result_net *net, FILE *out)
{
	char hint[RESULT_HINT_MAX], line[RESULT_HINT_MAX];
	const char *sig = r->signal ? signal_name(r->signal) : NULL;
	bool network;

	fprintf(out, "stockade: %s", job_status_name(r->status));
	if (r->exit_code >= 0)
		fprintf(out, " (exit %d)", r->exit_code);
	else if (sig != NULL)
		fprintf(out, " (%s)", sig);
	fprintf(out, ", wall %llu ms, cpu %llu ms, peak %llu KiB\n",
	    (unsigned long long)r->wall_ms, (unsigned long long)r->cpu_ms,
	    (unsigned long long)r->peak_memory_kb);
	network = result_network_line(net, line, sizeof(line));
	if (network)
		put_safe_line(out, "network", line);
	/* The hint quotes the launcher's detail and the refused hosts: made
	 * safe for a terminal like every string of the result. An ok job's
	 * tells how to get the output it truncated, or what to do about its
	 * refused connections. */
	if (r->status != JOB_OK || job_output_truncated(r, lim) || network)
		put_safe_line(out, "hint",
		    result_hint_net(r, lim, err, net, hint, sizeof(hint)));
}
